"""Derivatives of the dynamics on a moving base (``algorithm.root_derivatives``, issue 42)
against independent oracles:

* Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives`` with a
  ``JointModelFreeFlyer`` root (the Unitree Go2 body and its front-left leg, the xArm 7 on a
  free base) and a ``JointModelPlanar`` root (the SO-101 arm on a planar base), on the same URDF, to 1e-8
  relative.  Both sides use the same tangent space: ``dq`` is the right perturbation
  ``T exp(dq^)`` of the base pose (``pin.integrate``), the base twist held in the base frame;
  Pinocchio's planar ``q`` is ``(x, y, cos yaw, sin yaw)``, its tangent ``(x, y, yaw)``'s;
* central differences along that tangent (``Robot.integrate``) of our own dynamics (checked
  against Pinocchio elsewhere) for what Pinocchio's calls lack: a tool wrench and the actuator
  model (armature, viscous friction) on the floating base, and a tool wrench on the planar one;
* the refusals: actuators on a planar base (``NotImplementedError``), bad states (``ValueError``);
  a diff_drive base's derivatives: ``test_diff_drive_derivatives``.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from test_floating_base import with_base_inertial

from core_oracles import REPO, rel_err
from rbd_ros import Robot
from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")

CASES = {  # name: (URDF, tip link, root link without an inertial or None, Pinocchio root joint)
    "go2_fl_leg": ("go2_description/urdf/go2.urdf", "FL_foot", None, "free"),
    "xarm7_floating": ("xarm_description/urdf/xarm7.urdf", None, "link_base", "free"),
    "so101_planar": ("so_arm_description/urdf/so101.urdf", None, "base_link", "planar"),
}


def _xml(rel: str, massless_root: str | None) -> str:
    xml = example_robot_urdf(rel).read_text()
    if massless_root is not None and not re.search(rf'<link name="{massless_root}">\s*<inertial>', xml):
        xml = with_base_inertial(xml, massless_root)
    return xml


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    rel, tip, root, kind = CASES[request.param]
    xml = _xml(rel, root)
    base_type = "floating" if kind == "free" else "planar"
    robot = Robot.from_urdf(xml, tip_link=tip, base_type=base_type)
    full = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer() if kind == "free" else pin.JointModelPlanar())
    lock = [k for k, nm in enumerate(full.names) if k >= 2 and nm not in robot.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    pm.gravity.linear[:] = robot.model.gravity
    names = list(pm.names[2:])
    assert sorted(names) == sorted(robot.joint_names)
    order = np.array([names.index(nm) for nm in robot.joint_names])
    return robot, pm, pm.createData(), order


def _pin_state(robot: Robot, pm, order: np.ndarray, q: np.ndarray, *rates: np.ndarray) -> list[np.ndarray]:
    """Our ``q`` and rates in Pinocchio's layout and joint order (every arm joint has nq = 1
    in these files: checked)."""
    nb = robot.nv - robot.dof
    assert all(j.nq == 1 for j in pm.joints[2:])
    if robot.base_type == "floating":
        qb = q[:7]
    else:
        qb = np.array([q[0], q[1], np.cos(q[2]), np.sin(q[2])])
    qj = np.empty(robot.dof)
    qj[order] = q[robot.nq - robot.dof:]
    out = [np.concatenate([qb, qj])]
    for x in rates:
        xj = np.empty(robot.dof)
        xj[order] = x[nb:]
        out.append(np.concatenate([x[:nb], xj]))
    return out


def _random_q(robot: Robot, rng: np.random.Generator) -> np.ndarray:
    qj = rng.uniform(-1.2, 1.2, robot.dof)
    if robot.base_type == "floating":
        quat = pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs()
        return np.concatenate([rng.normal(size=3), quat, qj])
    return np.concatenate([rng.normal(size=2), [rng.uniform(-3, 3)], qj])


def _full(M: np.ndarray) -> np.ndarray:
    return np.triu(M) + np.triu(M, 1).T


def test_moving_bases_equal_pinocchio(case) -> None:
    robot, pm, pd, order = case
    nb = robot.nv - robot.dof
    vi = np.concatenate([np.arange(nb), nb + order])  # our velocity index -> Pinocchio's
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = _random_q(robot, rng)
        v, a, tau = rng.normal(size=(3, robot.nv))
        pq, pv, pa, ptau = _pin_state(robot, pm, order, q, v, a, tau)
        dq, dv, M = robot.inverse_dynamics_derivatives(q, v, a)
        assert dq.shape == dv.shape == M.shape == (robot.nv, robot.nv)
        p = [np.array(x) for x in pin.computeRNEADerivatives(pm, pd, pq, pv, pa)]
        assert rel_err(dq, p[0][np.ix_(vi, vi)]) < 1e-8
        assert rel_err(dv, p[1][np.ix_(vi, vi)]) < 1e-8
        assert rel_err(M, _full(p[2])[np.ix_(vi, vi)]) < 1e-8
        assert np.abs(p[0][:nb]).max() > 1e-3  # the base rows are not trivially zero
        fq, fv, Minv = robot.forward_dynamics_derivatives(q, v, tau)
        p = [np.array(x) for x in pin.computeABADerivatives(pm, pd, pq, pv, ptau)]
        scale = max(1.0, np.abs(p[0]).max())
        assert rel_err(fq, p[0][np.ix_(vi, vi)]) < 1e-8 * scale
        assert rel_err(fv, p[1][np.ix_(vi, vi)]) < 1e-8 * scale
        assert rel_err(Minv, _full(p[2])[np.ix_(vi, vi)]) < 1e-8 * scale
    # a batch: state by state (the validated path), the single calls' numbers (a floating base's
    # single call is its compiled entry: to rounding)
    Q = np.stack([_random_q(robot, rng) for _ in range(3)])
    V, A = rng.normal(size=(2, 3, robot.nv))
    for fn, X in ((robot.inverse_dynamics_derivatives, A), (robot.forward_dynamics_derivatives, A)):
        batch = fn(Q, V, X)
        for k in range(3):
            assert all(rel_err(b[k], o) < 1e-12 for b, o in zip(batch, fn(Q[k], V[k], X[k])))


def _central(f, x0: np.ndarray, step, h: float = 1e-6) -> np.ndarray:
    """Columns ``(f(x0 (+) h e_j) - f(x0 (-) h e_j)) / 2h`` for a step rule ``step(x0, dx)``."""
    cols = []
    for j in range(step.size):
        e = np.zeros(step.size)
        e[j] = h
        cols.append((f(step.fn(x0, e)) - f(step.fn(x0, -e))) / (2 * h))
    return np.array(cols).T


class _Step:
    def __init__(self, size: int, fn) -> None:
        self.size, self.fn = size, fn


def test_wrench_and_actuators_against_central_differences(case) -> None:
    robot, *_ = case
    rng = np.random.default_rng(5)
    q = _random_q(robot, rng)
    v, a, tau = rng.normal(size=(3, robot.nv))
    w = rng.normal(size=6) * 5.0
    floating = robot.base_type == "floating"
    model = robot.model
    if floating:  # an actuator model the Pinocchio oracle lacks
        n = robot.dof
        model = model.replace(gear_ratio=rng.uniform(5.0, 20.0, n), rotor_inertia=rng.uniform(1e-4, 1e-3, n),
                              viscous=rng.uniform(0.1, 1.0, n))
    r = Robot(model)
    kw = {"include_actuators": True} if floating else {}
    on_q = _Step(r.nv, lambda x, dx: r.integrate(x, dx, 1.0))
    on_v = _Step(r.nv, lambda x, dx: x + dx)
    dq, dv, M = r.inverse_dynamics_derivatives(q, v, a, tool_wrench=w, **kw)
    assert rel_err(dq, _central(lambda x: r.inverse_dynamics(x, v, a, tool_wrench=w, **kw), q, on_q)) < 1e-6
    assert rel_err(dv, _central(lambda x: r.inverse_dynamics(q, x, a, tool_wrench=w, **kw), v, on_v)) < 1e-6
    assert rel_err(M, _central(lambda x: r.inverse_dynamics(q, v, x, tool_wrench=w, **kw), a, on_v)) < 1e-6
    if floating:
        assert np.abs(np.diag(M)[6:] - np.diag(robot.mass_matrix(q))[6:]).min() > 1e-3  # the armature is in
    if floating:
        fq, fv, Minv = r.forward_dynamics_derivatives(q, v, tau, include_actuators=True)
        assert rel_err(fq, _central(lambda x: r.forward_dynamics(x, v, tau, include_actuators=True), q, on_q)) < 1e-6
        assert rel_err(fv, _central(lambda x: r.forward_dynamics(q, x, tau, include_actuators=True), v, on_v)) < 1e-6
        assert rel_err(Minv, np.linalg.inv(M)) < 1e-9
    else:
        with pytest.raises(NotImplementedError, match="planar base has no actuator model"):
            r.inverse_dynamics_derivatives(q, v, a, include_actuators=True)


def test_bad_states_named() -> None:
    """(A diff_drive base's derivatives: test_diff_drive_derivatives.)"""
    planar = Robot.from_urdf(str(REPO / "urdf/mobile_arm7.urdf"), base_type="planar", tip_link="tool0")
    with pytest.raises(ValueError, match="v must have shape"):
        planar.inverse_dynamics_derivatives(np.zeros(planar.nq), np.zeros(3), np.zeros(planar.nv))
    bad = np.zeros(planar.nv)
    bad[4] = np.nan
    with pytest.raises(ValueError, match="a"):
        planar.forward_dynamics_derivatives(np.zeros(planar.nq), np.zeros(planar.nv), bad)


def _tangent_difference(robot: Robot, qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
    """``log(q_a^{-1} q_b)`` on the base (``se3.log`` of the two base poses: the inverse of
    ``Robot.integrate``'s ``T exp(dq^)``), ``q_b - q_a`` on the joints."""
    from rbd_ros.lie import se3

    Ta, Tb = robot.base_pose(qa), robot.base_pose(qb)
    e = se3.log(np.linalg.inv(Ta) @ Tb)
    nb = robot.nv - robot.dof
    base = e if nb == 6 else e[[0, 1, 5]]
    return np.concatenate([base, qb[robot.nq - robot.dof:] - qa[robot.nq - robot.dof:]])


def test_linearize_against_the_flow_and_the_derivatives(case) -> None:
    """``A``'s top rows against central differences (in time and in the perturbation) of the
    tangent error between two motions at constant twists, ``Robot.integrate`` (exact for a
    constant twist) and ``se3.log``; its bottom rows and ``B`` are the forward dynamics'
    derivatives (checked above against Pinocchio)."""
    robot, *_ = case
    rng = np.random.default_rng(9)
    q = _random_q(robot, rng)
    v, tau = rng.normal(size=(2, robot.nv))
    A, B = robot.linearize(q, v, tau)
    nv = robot.nv
    assert A.shape == (2 * nv, 2 * nv) and B.shape == (2 * nv, nv)
    fq, fv, Minv = robot.forward_dynamics_derivatives(q, v, tau)
    assert np.array_equal(A[nv:, :nv], fq) and np.array_equal(A[nv:, nv:], fv) and np.array_equal(B[nv:], Minv)
    assert not B[:nv].any()
    h, t = 1e-5, 1e-4

    def err(dx: np.ndarray, s: float) -> np.ndarray:
        q1, v1 = robot.integrate(q, dx[:nv], 1.0), v + dx[nv:]
        return _tangent_difference(robot, robot.integrate(q, v, s), robot.integrate(q1, v1, s))

    top = np.empty((nv, 2 * nv))
    for j in range(2 * nv):
        e = np.zeros(2 * nv)
        e[j] = h
        top[:, j] = (err(e, t) - err(e, -t) - err(-e, t) + err(-e, -t)) / (4 * t * h)
    assert rel_err(A[:nv], top) < 1e-6
    assert np.abs(A[:nv - robot.dof, :nv - robot.dof]).max() > 0.1  # -ad(v_b): not the fixed base's 0


def test_linearize_fixed_base_equals_pinocchio() -> None:
    """A fixed base (the SO-101 bolted down): ``A = [[0, I], [ddq_dq, ddq_dv]]``,
    ``B = [[0], [M^{-1}]]`` with Pinocchio's ``computeABADerivatives``; a batch state by state."""
    rel, _, root, _ = CASES["so101_planar"]
    xml = _xml(rel, root)
    robot = Robot.from_urdf(xml)
    pm = pin.buildModelFromXML(xml)
    assert list(pm.names[1:]) == list(robot.joint_names)
    pm.gravity.linear[:] = robot.model.gravity
    pd = pm.createData()
    rng = np.random.default_rng(2)
    q, v, tau = rng.uniform(-1.0, 1.0, (3, 4, robot.dof))
    A, B = robot.linearize(q, v, tau)
    n = robot.dof
    for k in range(4):
        dq, dv, Minv = (np.array(x) for x in pin.computeABADerivatives(pm, pd, q[k], v[k], tau[k]))
        ref_A = np.block([[np.zeros((n, n)), np.eye(n)], [dq, dv]])
        ref_B = np.vstack([np.zeros((n, n)), _full(Minv)])
        assert rel_err(A[k], ref_A) < 1e-8 and rel_err(B[k], ref_B) < 1e-8


def test_entry_refusals_fall_to_the_named_errors(case) -> None:
    """The compiled entries (floating, planar) refuse what they cannot take; the full path then
    names it (a non-unit quaternion or a yaw beyond ``MAX_YAW``, a short v, a NaN) or answers
    (lists: the same numbers)."""
    robot, *_ = case
    rng = np.random.default_rng(3)
    q = _random_q(robot, rng)
    v, a = rng.normal(size=(2, robot.nv))
    ref = robot.inverse_dynamics_derivatives(q, v, a)
    lists = robot.inverse_dynamics_derivatives(list(q), list(v), list(a))
    assert all(rel_err(x, y) < 1e-12 for x, y in zip(lists, ref))
    bad = q.copy()
    if robot.base_type == "floating":
        bad[3:7] *= 1.01
    else:
        bad[2] = 2e6
    with pytest.raises(ValueError, match="unit quaternion" if robot.base_type == "floating" else "yaw"):
        robot.forward_dynamics_derivatives(bad, v, a)
    with pytest.raises(ValueError, match="v must have shape"):
        robot.inverse_dynamics_derivatives(q, v[:-1], a)
    nan = a.copy()
    nan[-1] = np.nan
    with pytest.raises(ValueError, match="tau"):
        robot.forward_dynamics_derivatives(q, v, nan)


def test_linearize_service_refusals_without_ros() -> None:
    """``DynamicsService.linearize`` (the ``/rbd/linearize`` answer): a planar base's
    ``include_actuators`` refused by name; a planar state in the caller's order equals
    ``Robot.linearize`` reordered, its ``state_names`` ``[dq; dv]`` and ``input_names`` the
    efforts."""
    from rbd_ros.services import DynamicsService, RequestError

    path = str(REPO / "urdf/mobile_arm7.urdf")
    planar = Robot.from_urdf(path, base_type="planar", tip_link="tool0")
    svc = DynamicsService(planar)
    names = ["base_x", "base_y", "base_yaw", "base_vx", "base_vy", "base_wz", *planar.joint_names][::-1]
    rng = np.random.default_rng(1)
    q, v, u = rng.normal(size=(3, planar.nv))
    qi = {nm: i for i, nm in enumerate(["base_x", "base_y", "base_yaw", *planar.joint_names])}
    vi = {nm: i for i, nm in enumerate(["base_vx", "base_vy", "base_wz", *planar.joint_names])}
    pq = [qi[nm] for nm in names if nm in qi]
    pv = np.array([vi[nm] for nm in names if nm in vi])
    with pytest.raises(RequestError, match="include_actuators is not available for a planar-base robot"):
        svc.linearize(names, q[pq], v[pv], u[pv], include_actuators=True)
    lin = svc.linearize(names, q[pq], v[pv], u[pv])
    A0, B0 = planar.linearize(q, v, u)
    two = np.r_[pv, planar.nv + pv]
    vnames = [nm for nm in names if nm in vi]
    assert lin.coordinate_names == lin.input_names == vnames and lin.state_names == vnames * 2
    assert np.array_equal(lin.a, A0[two][:, two]) and np.array_equal(lin.b, B0[two][:, pv])


def test_linearize_service_on_a_diff_drive_names_its_speeds_and_wheel_inputs() -> None:
    """A diff_drive base through ``DynamicsService.linearize`` (issue 42): the state ``[dq;
    ds]`` (``ds`` the velocities but ``base_vy``) and the wheel and joint inputs, in the
    caller's shuffled order, equal ``Robot.linearize`` (checked against central differences in
    ``test_diff_drive_derivatives``) reordered by name here, continuous and over one ``rk4``
    step; a sliding base, nv efforts instead of the wheels', ``include_actuators`` and an
    integrator the base has not are refused by name."""
    from rbd_ros.services import DynamicsService, RequestError

    robot = Robot.from_urdf(str(REPO / "urdf/mobile_arm7.urdf"), base_type="diff_drive", tip_link="tool0")
    svc = DynamicsService(robot)
    bq, bv, wheels, joints = ["base_x", "base_y", "base_yaw"], ["base_vx", "base_vy", "base_wz"], \
        list(svc.names.wheels), list(robot.joint_names)
    rng = np.random.default_rng(3)
    names = list(rng.permutation(bq + bv + wheels + joints))
    q = np.r_[rng.normal(size=2), 0.7, rng.uniform(-1, 1, robot.dof)]
    v, u = rng.normal(size=robot.nv), rng.normal(size=robot.nu)
    v[1] = 0.0
    vn, sn, un = bv + joints, [bv[0], bv[2], *joints], wheels + joints  # model orders
    cq, cv = [nm for nm in names if nm in bq + joints], [nm for nm in names if nm in vn]
    cs, cu = [nm for nm in cv if nm != "base_vy"], [nm for nm in names if nm in un]
    qn = bq + joints
    args = (names, q[[qn.index(nm) for nm in cq]], v[[vn.index(nm) for nm in cv]], u[[un.index(nm) for nm in cu]])
    rows = np.r_[[vn.index(nm) for nm in cv], robot.nv + np.array([sn.index(nm) for nm in cs])]
    cols = [un.index(nm) for nm in cu]
    for step in ({}, {"dt": 2e-3, "integrator": "rk4"}):
        lin = svc.linearize(*args, **step)
        A0, B0 = robot.linearize(q, v, u, **step)
        assert A0.shape == (2 * robot.nv - 1,) * 2 and B0.shape == (2 * robot.nv - 1, robot.nu)
        assert lin.coordinate_names == cv and lin.state_names == cv + cs and lin.input_names == cu
        assert np.array_equal(lin.a, A0[rows][:, rows]) and np.array_equal(lin.b, B0[rows][:, cols])
    sliding = args[2].copy()
    sliding[cv.index("base_vy")] = 0.3
    with pytest.raises(RequestError, match="base_vy = 0.3, but a diff_drive base cannot slide"):
        svc.linearize(names, args[1], sliding, args[3])
    with pytest.raises(RequestError, match="left_wheel"):
        svc.linearize(names, args[1], args[2], np.zeros(robot.nv))
    with pytest.raises(RequestError, match="include_actuators is not available for a diff_drive-base robot"):
        svc.linearize(*args, include_actuators=True)
    with pytest.raises(RequestError, match="integrator 'rkmk4' unknown for a diff_drive base"):
        svc.linearize(*args, dt=1e-3, integrator="rkmk4")
