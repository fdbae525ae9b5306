"""The ROS-free half of ``test/ros/test_floating_services.py`` (its docstring says what both halves check):
``rbd_ros.services.DynamicsService`` called directly, in the ROS-free run."""
from __future__ import annotations

import numpy as np
import pytest
from test_floating_base import pin_pair, pin_rk4_chart, random_state, with_base_inertial

from robots_data import BUNDLED_URDF

pin = pytest.importorskip("pinocchio")
from rbd_ros.robot import Robot  # noqa: E402
from rbd_ros.services import DynamicsService, RequestError  # noqa: E402

TOL = 1e-9
BQ = ["base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw"]
BV = ["base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz"]


@pytest.fixture(scope="module")
def xml() -> str:
    return with_base_inertial((BUNDLED_URDF / "arm7.urdf").read_text(), "base_link")


@pytest.fixture(scope="module")
def setup(xml: str):
    robot = Robot.from_urdf(xml, base_type="floating")
    pm, pd, order = pin_pair(xml, robot)
    return robot, DynamicsService(robot, max_points=500), pm, pd, order


def caller_names(robot: Robot, seed: int = 0) -> list[str]:
    """Base and joint names shuffled together (a fixed seed)."""
    names = BQ + BV + list(robot.joint_names)
    return [names[i] for i in np.random.default_rng(seed).permutation(len(names))]


def pack(names: list[str], robot: Robot, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ...]:
    """Model-order q (nq) and v (nv) as the caller's position and velocity rows."""
    qi = {nm: i for i, nm in enumerate(BQ + list(robot.joint_names))}
    vi = {nm: i for i, nm in enumerate(BV + list(robot.joint_names))}
    pc = [qi[nm] for nm in names if nm in qi]
    vc = [vi[nm] for nm in names if nm in vi]
    return q[..., pc], v[..., vc], np.array(vc)


def to_pin(x: np.ndarray, order: list[int], off: int) -> np.ndarray:
    out = x.copy()
    out[off + np.array(order)] = x[off:]
    return out


def test_model_reports_base_names(setup) -> None:
    robot, service, *_ = setup
    assert robot.base_position_names == tuple(BQ) and robot.base_velocity_names == tuple(BV)
    assert service.floating and service.widths(caller_names(robot)) == (7 + robot.dof, 6 + robot.dof)
    fixed = DynamicsService(Robot.from_urdf(str(BUNDLED_URDF / "arm7.urdf")))
    assert not fixed.floating and fixed.robot.base_position_names == ()
    with pytest.raises(RequestError, match="this robot's base is fixed"):
        fixed.gravity(BQ + list(robot.joint_names), robot.neutral())
    with pytest.raises(RequestError, match="base_qw"):  # a ground base's names are others
        service.gravity(BQ[:3] + ["base_yaw"] + BV + list(robot.joint_names), robot.neutral())


def test_dynamics_services_match_pinocchio_free_flyer(setup) -> None:
    robot, service, pm, pd, order = setup
    names = caller_names(robot, 1)
    rng = np.random.default_rng(2)
    N = 3
    states = [random_state(rng, robot.dof) for _ in range(N)]
    Q = np.array([s[0] for s in states])
    V, A = np.array([s[1] for s in states]), np.array([s[2] for s in states])
    qc, vc, vcols = pack(names, robot, Q, V)
    ac = pack(names, robot, Q, A)[1]
    tau = service.inverse_dynamics(names, qc.ravel(), vc.ravel(), ac.ravel())
    M = service.mass_matrix(names, qc.ravel())
    g = service.gravity(names, qc.ravel())
    assert tau.shape == (N, robot.nv) and M.shape == (N, robot.nv, robot.nv)
    w = np.array([3.0, -2.0, 5.0, 0.4, -0.3, 0.2])
    tw = service.inverse_dynamics(names, qc.ravel(), vc.ravel(), ac.ravel(), tool_wrench=w)
    Jb, Tb = robot.jacobian(Q), robot.fk(Q)  # the core's batch calls
    st = service.static_torques(names, qc.ravel(), w, "world", include_gravity=True)
    st_tool = service.static_torques(names, qc.ravel(), w, "tool")
    assert Jb.shape == (N, 6, robot.nv) and Tb.shape == (N, 4, 4)
    for k in range(N):
        qp, vp, ap = to_pin(Q[k], order, 7), to_pin(V[k], order, 6), to_pin(A[k], order, 6)
        back = to_pin(np.arange(robot.nv), order, 6)  # our v index -> pinocchio's
        ref_tau = pin.rnea(pm, pd, qp, vp, ap)[back]
        ref_M = pin.crba(pm, pd, qp)
        ref_M = (np.triu(ref_M) + np.triu(ref_M, 1).T)[np.ix_(back, back)]
        ref_g = pin.computeGeneralizedGravity(pm, pd, qp)[back]
        scale = max(1.0, np.abs(ref_tau).max())
        assert np.abs(tau[k] - ref_tau[vcols]).max() / scale < TOL
        assert np.abs(M[k] - ref_M[np.ix_(vcols, vcols)]).max() < TOL * max(1.0, np.abs(ref_M).max())
        assert np.abs(g[k] - ref_g[vcols]).max() < TOL * max(1.0, np.abs(ref_g).max())
        # geometric Jacobian of the tool (world axes) and the tool wrench
        fid = pm.getFrameId(robot.model.tip_link)
        pin.framesForwardKinematics(pm, pd, qp)
        J_ref = pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL_WORLD_ALIGNED)[:, back]
        J = service.jacobian(names, qc[k])
        assert np.abs(J - J_ref[:, vcols]).max() < TOL and np.abs(Jb[k] - J_ref).max() < TOL
        assert np.abs(Tb[k] - pd.oMf[fid].homogeneous).max() < TOL
        T, links = service.forward_kinematics(names, qc[k])
        assert np.abs(T - pd.oMf[fid].homogeneous).max() < TOL and links.shape == (robot.dof + 1, 4, 4)
        assert np.abs(tw[k] - (ref_tau - J_ref.T @ w)[vcols]).max() / scale < TOL
        assert np.abs(st[k] - (J_ref.T @ w + ref_g)[vcols]).max() < TOL * max(1.0, np.abs(ref_g).max())
        R = pd.oMf[fid].rotation
        assert np.abs(st_tool[k] - (J_ref.T @ np.r_[R @ w[:3], R @ w[3:]])[vcols]).max() < TOL * 10


def test_forward_simulate_base_pose_and_twist(setup) -> None:
    """RKMK4 from the service against an RK4 in the chart with Pinocchio's aba and integrate
    (test_floating_base has the same oracle for the core); a constant base wrench and joint
    torques, so the base pose and twist both move."""
    robot, service, pm, pd, order = setup
    names = caller_names(robot, 3)
    rng = np.random.default_rng(4)
    q, v, _, _ = random_state(rng, robot.dof)
    v *= 0.3
    tau = rng.normal(size=robot.nv)
    qc, vc, vcols = pack(names, robot, q, v)
    tc = pack(names, robot, q, tau)[1]
    dt, steps = 1e-3, 200
    out = service.forward_simulate(names, qc, vc, tc, effort_period=steps * dt, dt=dt,
                                   output_period=0.05)
    assert out.positions.shape == (5, robot.nq) and out.velocities.shape == (5, robot.nv)
    assert np.allclose(out.times, [0, 0.05, 0.1, 0.15, 0.2])
    qp, vp, tp = to_pin(q, order, 7), to_pin(v, order, 6), to_pin(tau, order, 6)
    qp, vp = pin_rk4_chart(pm, pd, qp, vp, tp, dt, steps)
    back_q, back_v = to_pin(np.arange(robot.nq), order, 7), to_pin(np.arange(robot.nv), order, 6)
    qi = {nm: i for i, nm in enumerate(BQ + list(robot.joint_names))}
    pcols = [qi[nm] for nm in names if nm in qi]
    ref_q, ref_v = qp[back_q][pcols], vp[back_v][vcols]
    assert np.abs(out.positions[-1] - ref_q).max() < 1e-6
    assert np.abs(out.velocities[-1] - ref_v).max() < 1e-5
    # the base moved: its pose changed by more than the tolerance
    assert np.abs(out.positions[-1] - out.positions[0]).max() > 1e-3
    lie = service.forward_simulate(names, qc, vc, tc, effort_period=0.01, dt=dt, integrator="lie_euler")
    rk = service.forward_simulate(names, qc, vc, tc, effort_period=0.01, dt=dt)
    assert np.abs(lie.positions[-1] - rk.positions[-1]).max() < 1e-3  # first order, 10 steps


@pytest.mark.parametrize("case, message", [
    ("joints_only", "floating base: joint_names must also list its base coordinates"),
    ("unknown", "unknown joint names ['base_yaw']"),
    ("missing", "joint_names lacks ['base_wz']"),
    ("width", "not a multiple of 13 velocity coordinates"),
    ("quaternion", "must be a unit quaternion"),
    ("integrator", "integrator 'rk4' unknown; use one of ['rkmk4', 'lie_euler'] (a floating-base robot)"),
    ("ik", "inverse_kinematics is not available for a floating-base robot"),
])
def test_bad_requests_refused(setup, case: str, message: str) -> None:
    robot, service, *_ = setup
    n, names = robot.dof, BQ + BV + list(robot.joint_names)
    q, v = robot.neutral(), np.zeros(robot.nv)
    with pytest.raises(RequestError) as err:
        if case == "joints_only":
            service.gravity(list(robot.joint_names), np.zeros(n))
        elif case == "unknown":
            service.gravity(names[:-1] + ["base_yaw"], q)
        elif case == "missing":
            service.gravity([nm for nm in names if nm != "base_wz"], q)
        elif case == "width":
            service.inverse_dynamics(names, q, np.zeros(robot.nq), v)
        elif case == "quaternion":
            bad = q.copy()
            bad[6] = 2.0
            service.mass_matrix(names, bad)
        elif case == "integrator":
            service.forward_simulate(names, q, v, v, 0.01, 0.001, integrator="rk4")
        else:
            service.inverse_kinematics(names, np.eye(4).ravel())
    assert message in str(err.value)


def test_core_batch_forward_dynamics(setup) -> None:
    """The core's batch form (the services use it) against ``pin.aba`` state by state; rows of
    different counts are refused."""
    robot, _, pm, pd, order = setup
    rng = np.random.default_rng(8)
    states = [random_state(rng, robot.dof) for _ in range(4)]
    Q, V, T = (np.array([s[i] for s in states]) for i in (0, 1, 3))
    A = robot.forward_dynamics(Q, V, T)
    back = to_pin(np.arange(robot.nv), order, 6)
    for k in range(4):
        ref = pin.aba(pm, pd, to_pin(Q[k], order, 7), to_pin(V[k], order, 6), to_pin(T[k], order, 6))
        assert np.abs(A[k] - ref[back]).max() < TOL * max(1.0, np.abs(ref).max())
    with pytest.raises(ValueError, match="same N"):
        robot.forward_dynamics(Q, V[:3], T)
