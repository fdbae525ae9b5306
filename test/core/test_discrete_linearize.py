"""``Robot.linearize(..., dt, integrator)``: the discrete-time ``(A_d, B_d)`` of one integrator step
(issue 42; ``robot.discrete``) against independent oracles:

* central differences of the core's own step (``Robot.simulate`` for one step: the kernels
  ``algorithm.integrators.step``, ``floating_integrators``, ``planar_base.ground_step``), the
  input perturbed along the tangent (``Robot.integrate``), the output compared by the tangent
  error (``se3.log`` of the two base poses; ``test_root_derivatives._tangent_difference``), on
  example-robot-data descriptions: the Panda and the xArm 7 (its viscous and Coulomb friction
  with ``include_actuators``) bolted down, the xArm 7 on a free base, the SO-101 on a planar base;
* the limit ``dt -> 0``: ``(A_d - I) / dt -> A`` and ``B_d / dt -> B`` (the continuous
  ``linearize``, checked against Pinocchio in test_root_derivatives);
* the refusals: a bad ``dt`` or an unknown integrator, by name.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from test_floating_base import with_base_inertial
from test_root_derivatives import _random_q, _tangent_difference, _xml

from core_oracles import rel_err
from rbd_ros import Robot
from robots_data import example_robot_urdf

XARM = "xarm_description/urdf/xarm7.urdf"


@pytest.fixture(scope="module")
def robots() -> dict[str, Robot]:
    xarm = example_robot_urdf(XARM).read_text()
    return {
        "panda": Robot.from_urdf(str(example_robot_urdf("panda_description/urdf/panda.urdf")), tip_link="panda_link8"),
        "xarm": Robot.from_urdf(xarm),
        "floating": Robot.from_urdf(with_base_inertial(xarm, "link_base"), base_type="floating"),
        "planar": Robot.from_urdf(_xml("so_arm_description/urdf/so101.urdf", "base_link"), base_type="planar"),
    }


def _step(robot: Robot, q, v, u, dt, integrator, act):
    kw = {} if robot.base_type == "planar" else {"integrator": integrator, "include_actuators": act}
    res = robot.simulate(q, v, np.asarray(u)[None], dt, **kw)
    return res.q[1], res.qd[1]


def _central(robot: Robot, q, v, u, dt, integrator, act=False, h=1e-5):
    """``(A_d, B_d)`` by central differences of one step of the core's integrator."""
    nv = robot.nv
    moving = robot.base_type != "fixed"
    q1, v1 = _step(robot, q, v, u, dt, integrator, act)

    def out(dx, du):
        qp = robot.integrate(q, dx[:nv], 1.0) if moving else q + dx[:nv]
        qq, vv = _step(robot, qp, v + dx[nv:], u + du, dt, integrator, act)
        return np.concatenate([_tangent_difference(robot, q1, qq) if moving else qq - q1, vv - v1])

    cols = []
    for j in range(3 * nv):
        e = np.zeros(3 * nv)
        e[j] = h
        cols.append((out(e[:2 * nv], e[2 * nv:]) - out(-e[:2 * nv], -e[2 * nv:])) / (2 * h))
    J = np.array(cols).T
    return J[:, :2 * nv], J[:, 2 * nv:]


def _state(robot: Robot, seed: int):
    rng = np.random.default_rng(seed)
    q = _random_q(robot, rng) if robot.base_type != "fixed" else rng.uniform(-1.0, 1.0, robot.dof)
    v, u = rng.normal(size=(2, robot.nv))
    return q, v, (0.2 if robot.base_type == "planar" else 5.0) * u  # the SO-101's light links


@pytest.mark.parametrize("name, integrator, act, dt", [
    ("panda", "rk4", False, 2e-2), ("panda", "semi_implicit_euler", False, 2e-2), ("xarm", "rk4", True, 1e-3),
    ("floating", "rkmk4", False, 2e-2), ("floating", "lie_euler", True, 1e-2), ("planar", "rk4", False, 2e-3)])
def test_one_step_equals_central_differences_of_the_core_step(robots, name, integrator, act, dt) -> None:
    """dt: a step the integrator is stable at (the xArm's damping 10 N m s on its light links)."""
    robot = robots[name]
    q, v, u = _state(robot, 3)
    A, B = robot.linearize(q, v, u, dt=dt, integrator=integrator, include_actuators=act)
    assert A.shape == (2 * robot.nv, 2 * robot.nv) and B.shape == (2 * robot.nv, robot.nv)
    A_fd, B_fd = _central(robot, q, v, u, dt, integrator, act)
    assert rel_err(A, A_fd) < 1e-6 and rel_err(B, B_fd) < 1e-6


@pytest.mark.parametrize("name", ["panda", "floating"])
def test_the_euler_alias_and_batches(robots, name) -> None:
    """A batch (on a fixed base one batch call per stage) equals its states one by one."""
    robot = robots[name]
    q, v, u = (np.stack(x) for x in zip(_state(robot, 1), _state(robot, 2), _state(robot, 4)))
    for integrator in ("rk4", "Euler") if name == "panda" else ("rkmk4", "lie_euler"):
        A, B = robot.linearize(q, v, u, dt=1e-2, integrator=integrator)
        assert A.shape == (3, 2 * robot.nv, 2 * robot.nv) and B.shape == (3, 2 * robot.nv, robot.nv)
        for k in range(3):
            Ak, Bk = robot.linearize(q[k], v[k], u[k], dt=1e-2, integrator=integrator)
            assert rel_err(A[k], Ak) < 1e-12 and rel_err(B[k], Bk) < 1e-12
    one = robot.linearize(q[0], v[0], u[0], dt=1e-2)  # the base's default
    if name == "panda":
        assert np.array_equal(one[0], robot.linearize(q[0], v[0], u[0], dt=1e-2, integrator="rk4")[0])
        euler = robot.linearize(q[0], v[0], u[0], dt=1e-2, integrator="euler")
        assert np.array_equal(euler[0], robot.linearize(q[0], v[0], u[0], dt=1e-2,
                                                        integrator="semi_implicit_euler")[0])
    with pytest.raises(ValueError, match="q"):
        robot.linearize(q, v[:2], u, dt=1e-2)


def test_a_parallel_batch_equals_its_states(robots) -> None:
    """``rnea.PARALLEL_MIN`` states: the fixed base's RK4 kernel over chunks of states
    (``discrete_step.rk4_step_jacobians_batch``) equals one state at a time."""
    from rbd_ros.algorithm.rnea import PARALLEL_MIN

    robot = robots["panda"]
    rng = np.random.default_rng(11)
    q, v, u = rng.uniform(-1.0, 1.0, (3, PARALLEL_MIN, robot.dof))
    A, B = robot.linearize(q, v, u, dt=1e-3)
    for k in (0, PARALLEL_MIN // 2 + 1, PARALLEL_MIN - 1):
        Ak, Bk = robot.linearize(q[k], v[k], u[k], dt=1e-3)
        assert rel_err(A[k], Ak) < 1e-12 and rel_err(B[k], Bk) < 1e-12


@pytest.mark.parametrize("name", ["panda", "floating", "planar"])
def test_small_dt_tends_to_the_continuous_linearization(robots, name) -> None:
    robot = robots[name]
    q, v, u = _state(robot, 5)
    A, B = robot.linearize(q, v, u)
    dt = 1e-7
    Ad, Bd = robot.linearize(q, v, u, dt=dt)
    I = np.eye(2 * robot.nv)
    assert rel_err((Ad - I) / dt, A) < 1e-5 and rel_err(Bd / dt, B) < 1e-5


def test_bad_dt_and_integrator_are_named(robots) -> None:
    robot, fl = robots["panda"], robots["floating"]
    q, v, u = _state(robot, 0)
    for bad in (0.0, -1e-3, float("nan"), float("inf"), True, "0.01"):
        with pytest.raises(ValueError, match="dt must be a positive finite number"):
            robot.linearize(q, v, u, dt=bad)
    with pytest.raises(ValueError, match=r"integrator 'rk5' unknown for a fixed base; use one of \['rk4'"):
        robot.linearize(q, v, u, dt=1e-3, integrator="rk5")
    with pytest.raises(ValueError, match="integrator='rk4' needs dt > 0"):
        robot.linearize(q, v, u, integrator="rk4")
    qf, vf, uf = _state(fl, 0)
    with pytest.raises(ValueError, match=r"integrator 'rk4' unknown for a floating base; use one of \['rkmk4', "
                                         r"'lie_euler'\]"):
        fl.linearize(qf, vf, uf, dt=1e-3, integrator="rk4")


def test_the_service_answers_one_step_in_the_callers_order(robots) -> None:
    """``DynamicsService.linearize`` (the ``/rbd/linearize`` answer) with ``dt``: a planar
    state in the caller's order equals ``Robot.linearize(dt=...)`` reordered; bad fields named."""
    from rbd_ros.services import DynamicsService, RequestError

    planar = robots["planar"]
    svc = DynamicsService(planar)
    names = ["base_x", "base_y", "base_yaw", "base_vx", "base_vy", "base_wz", *planar.joint_names][::-1]
    q, v, u = _state(planar, 7)
    vi = {nm: i for i, nm in enumerate(["base_vx", "base_vy", "base_wz", *planar.joint_names])}
    pv = np.array([vi[nm] for nm in names if nm in vi])
    pq = pv  # the planar q and v share the order (x, y, yaw, joints)
    lin = svc.linearize(names, q[pq], v[pv], u[pv], dt=1e-3, integrator="rk4")
    A, B = lin.a, lin.b
    A0, B0 = planar.linearize(q, v, u, dt=1e-3)
    two = np.r_[pv, planar.nv + pv]
    assert np.array_equal(A, A0[two][:, two]) and np.array_equal(B, B0[two][:, pv])
    for dt, integ, words in ((float("inf"), "", "dt must be 0"), (0.0, "rk4", "needs dt > 0"),
                             (1e-3, "rkmk4", "integrator 'rkmk4' unknown for a planar base; use one of ['rk4']")):
        with pytest.raises(RequestError, match=re.escape(words)):
            svc.linearize(names, q[pq], v[pv], u[pv], dt=dt, integrator=integ)
