"""``/<ns>/linearize`` (issue 42): ``A``, ``B`` of the forward dynamics at one state through a
real ``dynamics_server`` process and a plain rclpy client.

Oracle: Pinocchio's ``computeABADerivatives`` on the same URDF, ``A = [[0, I], [ddq_dq,
ddq_dv]]``, ``B = [[0], [M^-1]]`` on a fixed base (the xArm 7, the request's joints reversed);
on a floating base (the same arm, base_link given an inertial) the free-flyer's, with the base
block of ``A_qq`` ``-ad(v_b)`` (``pin.SE3``'s ``Motion.action`` is independent of ours) and the
base and joint names shuffled.  With ``dt`` (issue 42 item 1): one semi-implicit Euler step
from Pinocchio's derivatives on the fixed base, one RKMK4 step equal to ``Robot.linearize``'s
on the floating one.  Bad requests are refused by name: a short array, a NaN, an unknown joint,
a non-unit quaternion, a bad dt, an unknown integrator, an integrator without dt."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow  # server processes

pin = pytest.importorskip("pinocchio")
XARM = "xarm_description/urdf/xarm7.urdf"
BQ = ["base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw"]
BV = ["base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz"]


def _client(node, ns: str):
    from rbd_ros_interfaces.srv import Linearize
    from ros_helpers import wait_for_service

    client = node.create_client(Linearize, f"/{ns}/linearize")
    wait_for_service(client, 60.0)
    return client


def _ask(node, client, names, q, v, u, include_actuators: bool = False, dt: float = 0.0, integrator: str = ""):
    from rbd_ros_interfaces.srv import Linearize
    from ros_helpers import call

    req = Linearize.Request(joint_names=list(names), positions=[float(x) for x in q],
                            velocities=[float(x) for x in v], efforts=[float(x) for x in u],
                            include_actuators=include_actuators, dt=float(dt), integrator=integrator)
    return call(node, client, req)


def _full(M: np.ndarray) -> np.ndarray:
    return np.triu(M) + np.triu(M, 1).T


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def test_linearize_fixed_base_against_pinocchio() -> None:
    import rclpy

    from ros_helpers import ros_context, served_client

    path = str(example_robot_urdf(XARM))
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    names = list(pm.names[1:])
    n = len(names)
    rng = np.random.default_rng(4)
    q, v, u = rng.uniform(-1.0, 1.0, (3, n))
    dq, dv, Minv = (np.array(x) for x in pin.computeABADerivatives(pm, pd, q, v, u))
    A_ref = np.block([[np.zeros((n, n)), np.eye(n)], [dq, dv]])
    B_ref = np.vstack([np.zeros((n, n)), _full(Minv)])
    rev = names[::-1]
    p = np.arange(n)[::-1]
    two = np.r_[p, n + p]
    with served_client("lin_fixed", f"urdf_path:={path}"), ros_context() as ctx:
        node = rclpy.create_node("linearize_test", context=ctx)
        client = _client(node, "lin_fixed")
        res = _ask(node, client, rev, q[p], v[p], u[p])
        assert res.success, res.message
        assert list(res.coordinate_names) == rev
        assert list(res.state_names) == rev * 2 and list(res.input_names) == rev
        assert list(res.a_shape) == [2 * n, 2 * n] and list(res.b_shape) == [2 * n, n]
        A = np.array(res.a).reshape(res.a_shape)
        B = np.array(res.b).reshape(res.b_shape)
        assert _rel(A, A_ref[two][:, two]) < 1e-8 and _rel(B, B_ref[two][:, p]) < 1e-8
        assert np.abs(dq).max() > 1e-2
        # one step of semi-implicit Euler from Pinocchio's derivatives: v+ = v + h f, q+ = q + h v+
        h = 1e-2
        dvp = np.hstack([h * dq, np.eye(n) + h * dv, h * _full(Minv)])
        step = np.vstack([np.hstack([np.eye(n), np.zeros((n, 2 * n))]) + h * dvp, dvp])
        res = _ask(node, client, rev, q[p], v[p], u[p], dt=h, integrator="semi_implicit_euler")
        assert res.success, res.message
        A = np.array(res.a).reshape(res.a_shape)
        B = np.array(res.b).reshape(res.b_shape)
        assert _rel(A, step[two][:, two]) < 1e-8 and _rel(B, step[two][:, 2 * n + p]) < 1e-8
        for dt, integ, words in ((-1e-3, "", "dt must be 0 (continuous time) or a positive number"),
                                 (np.nan, "rk4", "dt must be 0"), (0.0, "rk4", "integrator 'rk4' needs dt > 0"),
                                 (h, "rk5", "integrator 'rk5' unknown for a fixed base; use one of ['rk4'")):
            res = _ask(node, client, rev, q[p], v[p], u[p], dt=dt, integrator=integ)
            assert not res.success and words in res.message, res.message
        nan = f"velocities contains NaN or Inf (first at state 0, '{rev[-1]}'"
        for bad, words in ((dict(q=q[:-1]), "positions has 6 values"), (dict(v=np.r_[v[:-1], np.nan]), nan),
                           (dict(names=rev[:-1] + ["elbow"]), "unknown joint names ['elbow']")):
            args = {"names": rev, "q": q[p], "v": v[p], "u": u[p], **bad}
            res = _ask(node, client, args["names"], args["q"], args["v"], args["u"])
            assert not res.success and words in res.message, res.message
        node.destroy_node()


def test_linearize_floating_base_against_pinocchio(tmp_path) -> None:
    import rclpy
    from test_floating_base import with_base_inertial

    from ros_helpers import ros_context, served_client

    xml = with_base_inertial(example_robot_urdf(XARM).read_text(), "link_base")
    urdf = tmp_path / "xarm7_floating.urdf"
    urdf.write_text(xml)
    pm = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    pd = pm.createData()
    joints = list(pm.names[2:])
    n = len(joints)
    nv = 6 + n
    rng = np.random.default_rng(6)
    quat = pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs()
    q = np.concatenate([rng.normal(size=3), quat, rng.uniform(-1.0, 1.0, n)])
    v, u = rng.normal(size=(2, nv))
    dq, dv, Minv = (np.array(x) for x in pin.computeABADerivatives(pm, pd, q, v, u))
    Aqq = np.zeros((nv, nv))
    Aqq[:6, :6] = -pin.Motion(v[:6]).action  # ad(v_b) in [linear; angular] order
    A_ref = np.block([[Aqq, np.eye(nv)], [dq, dv]])
    B_ref = np.vstack([np.zeros((nv, nv)), _full(Minv)])
    names = BQ + BV + joints
    shuffled = [names[i] for i in np.random.default_rng(1).permutation(len(names))]
    qi = {nm: i for i, nm in enumerate(BQ + joints)}
    vi = {nm: i for i, nm in enumerate(BV + joints)}
    pq = [qi[nm] for nm in shuffled if nm in qi]
    pv = np.array([vi[nm] for nm in shuffled if nm in vi])
    two = np.r_[pv, nv + pv]
    with served_client("lin_float", f"urdf_path:={urdf}", "base_type:=floating"), ros_context() as ctx:
        node = rclpy.create_node("linearize_float_test", context=ctx)
        client = _client(node, "lin_float")
        res = _ask(node, client, shuffled, q[pq], v[pv], u[pv])
        assert res.success, res.message
        assert list(res.coordinate_names) == [nm for nm in shuffled if nm in vi]
        A = np.array(res.a).reshape(res.a_shape)
        B = np.array(res.b).reshape(res.b_shape)
        assert _rel(A, A_ref[two][:, two]) < 1e-8 and _rel(B, B_ref[two][:, pv]) < 1e-8
        assert np.abs(Aqq).max() > 0.1
        # one RKMK4 step (its default): Robot.linearize's (test_discrete_linearize: central differences)
        from rbd_ros import Robot

        Ad, Bd = Robot.from_urdf(xml, base_type="floating").linearize(q, v, u, dt=5e-3)
        res = _ask(node, client, shuffled, q[pq], v[pv], u[pv], dt=5e-3)
        assert res.success, res.message
        A = np.array(res.a).reshape(res.a_shape)
        B = np.array(res.b).reshape(res.b_shape)
        assert _rel(A, Ad[two][:, two]) < 1e-12 and _rel(B, Bd[two][:, pv]) < 1e-12
        assert _rel(A, np.eye(2 * nv) + 5e-3 * A_ref[two][:, two]) > 1e-6  # not a first-order Euler
        res = _ask(node, client, shuffled, q[pq], v[pv], u[pv], dt=5e-3, integrator="rk4")
        assert not res.success and "integrator 'rk4' unknown for a floating base" in res.message, res.message
        qbad = q.copy()
        qbad[3:7] *= 1.1
        res = _ask(node, client, shuffled, qbad[pq], v[pv], u[pv])
        assert not res.success and "must be a unit quaternion" in res.message, res.message
        node.destroy_node()
