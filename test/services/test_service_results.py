"""The ROS-free half of ``test/ros/test_service_results.py`` (its docstring says what both halves check):
``rbd_ros.services.DynamicsService`` called directly, in the ROS-free run."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import BUNDLED_URDF

pin = pytest.importorskip("pinocchio")
from rbd_ros.robot import Robot  # noqa: E402
from rbd_ros.services import DynamicsService, RequestError  # noqa: E402

URDF = BUNDLED_URDF / "puma560.urdf"
PERM = [3, 0, 5, 2, 4, 1]  # the caller's order: model joint PERM[i] at place i


@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot.from_urdf(str(URDF))


@pytest.fixture(scope="module")
def service(robot: Robot) -> DynamicsService:
    return DynamicsService(Robot(robot.model), max_points=100)


@pytest.fixture(scope="module")
def pinocchio_fk(robot: Robot):
    pm = pin.buildModelFromUrdf(str(URDF))
    pd = pm.createData()
    frame = pm.getFrameId(robot.model.tip_link)

    def fk(q: np.ndarray) -> np.ndarray:
        pin.framesForwardKinematics(pm, pd, np.asarray(q, dtype=float))
        return pd.oMf[frame].homogeneous.copy()

    return fk


def _pose_error(T: np.ndarray, target: np.ndarray) -> float:
    """|dp| + |rotation angle| between two poses (Pinocchio's log3)."""
    return float(np.linalg.norm(T[:3, 3] - target[:3, 3])
                 + np.linalg.norm(pin.log3(T[:3, :3].T @ target[:3, :3])))


# ---- non-finite results ------------------------------------------------------------------------
def test_overflowing_rates_are_refused_naming_the_cause(service: DynamicsService, robot: Robot) -> None:
    names = [robot.joint_names[i] for i in PERM]
    z = np.zeros(6)
    with pytest.raises(RequestError) as info:
        service.inverse_dynamics(names, z, np.full(6, 1e200), z)
    msg = str(info.value)
    assert msg.startswith(f"efforts came out NaN or Inf (first at state 0, '{names[0]}')")
    assert "|velocities| = 1e+200" in msg and "overflow float64" in msg
    # the general path too (two states), and a finite big request still answers
    with pytest.raises(RequestError, match=r"\|velocities\| = 1e\+200"):
        service.inverse_dynamics(names, np.zeros(12), np.full(12, 1e200), np.zeros(12))
    tau = service.inverse_dynamics(names, z, z, np.full(6, 1e3))
    assert np.isfinite(tau).all()
    with pytest.raises(RequestError, match=r"\|wrench\| = 1\.7e\+308"):
        service.static_torques(names, np.ones(6), [1.7e308] * 6)
    with pytest.raises(RequestError, match="diverged at t = 0 s"):
        service.forward_simulate(names, z, np.full(6, 1e200), z, effort_period=0.01, dt=1e-3)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("field, calls", [
    ("mass", ("gravity", "mass_matrix", "inverse_dynamics", "static_torques")),
    ("d", ("forward_kinematics", "jacobian")),
])
def test_every_service_checks_its_result(robot: Robot, field: str, calls: tuple) -> None:
    """A model whose numbers overflow (1e308 kg links, 1e308 m offsets): every service that
    computes with them answers an error naming the model's parameter, never NaN or Inf."""
    m = robot.model
    s = DynamicsService(Robot(m.replace(**{field: np.full(m.dof, 1e308)})))
    names, z = list(m.joint_names), np.zeros(6)
    args = {"gravity": (names, z), "mass_matrix": (names, z),
            "inverse_dynamics": (names, z, z, z), "static_torques": (names, z, z, "", True),
            "forward_kinematics": (names, z), "jacobian": (names, np.ones(6))}
    for call in calls:
        with pytest.raises(RequestError) as info:
            getattr(s, call)(*args[call])
        assert "came out NaN or Inf (first at state 0, " in str(info.value)
        assert f"the model's numbers overflow float64 (largest: {field} of joint" in str(info.value)


# ---- edge cases ----------------------------------------------------------------------------------
def test_output_period_longer_than_the_horizon_gives_the_final_state(service: DynamicsService,
                                                                     robot: Robot) -> None:
    rng = np.random.default_rng(1)
    q0, tau = rng.uniform(-1, 1, 6), rng.uniform(-2, 2, 6)
    names = list(robot.joint_names)
    out = service.forward_simulate(names, q0, np.zeros(6), tau, effort_period=0.01, dt=1e-3,
                                   output_period=1.0)
    q, qd, _ = robot.simulate(q0, np.zeros(6), np.tile(tau, (10, 1)), 1e-3)
    np.testing.assert_allclose(out.times, [0.0, 0.01], atol=1e-15)
    np.testing.assert_array_equal(out.positions, q[[0, -1]])
    np.testing.assert_array_equal(out.velocities, qd[[0, -1]])
    assert np.abs(out.positions[1] - q0).max() > 1e-6  # it moved: the last row is not t = 0 again
    # a period that does not divide the horizon: every period, then the final state
    out = service.forward_simulate(names, q0, np.zeros(6), tau, effort_period=0.01, dt=1e-3,
                                   output_period=0.004)
    np.testing.assert_allclose(out.times, [0.0, 0.004, 0.008, 0.01], atol=1e-15)


def test_a_joint_has_one_name_in_every_message(service: DynamicsService, robot: Robot) -> None:
    """NaN at the caller's third place: every service names the joint there by its URDF name."""
    names = [robot.joint_names[i] for i in PERM]
    bad = np.zeros(6)
    bad[2] = np.nan
    z = np.zeros(6)
    want = f"(first at state 0, '{names[2]}')"
    calls = [
        lambda: service.gravity(names, bad),
        lambda: service.mass_matrix(names, bad),
        lambda: service.forward_kinematics(names, bad),
        lambda: service.jacobian(names, bad),
        lambda: service.static_torques(names, bad, z),
        lambda: service.inverse_dynamics(names, bad, z, z),
        lambda: service.inverse_dynamics(names, z, bad, z),
        lambda: service.inverse_dynamics(names, z, z, bad),
        lambda: service.forward_simulate(names, bad, z, z, 0.01, 1e-3),
        lambda: service.forward_simulate(names, z, bad, z, 0.01, 1e-3),
        lambda: service.forward_simulate(names, z, z, bad, 0.01, 1e-3),
        lambda: service.inverse_kinematics(names, np.eye(4).ravel(), seeds=bad),
    ]
    for call in calls:
        with pytest.raises(RequestError) as info:
            call()
        assert want in str(info.value), str(info.value)


@pytest.mark.parametrize("kw, message", [
    ({"dt": True}, "dt must be a positive number, got True"),
    ({"dt": 5e-324}, "infinitely many integration steps requested"),
    ({"effort_period": -1.0}, "effort_period must be a positive number"),
    ({"output_period": float("nan")}, "output_period must be 0 or positive"),
])
def test_forward_simulate_refuses(service: DynamicsService, robot: Robot, kw: dict, message: str) -> None:
    args = {"effort_period": 0.01, "dt": 1e-3, **kw}
    with pytest.raises(RequestError) as info:
        service.forward_simulate(list(robot.joint_names), np.zeros(6), np.zeros(6), np.zeros(6), **args)
    assert message in str(info.value)


# ---- IK against Pinocchio ----------------------------------------------------------------------
def test_ik_keeps_the_best_pose_over_worse_restarts(service: DynamicsService, robot: Robot,
                                                    pinocchio_fk) -> None:
    """The seed already sits on the target; the tolerance cannot be met, so every restart
    runs, each one LM step from a random pose (far off).  The answer must be the seed's pose,
    not the last (or any later, worse) restart's: its Pinocchio FK error is the seed's."""
    rng = np.random.default_rng(7)
    q_star = rng.uniform(robot.model.lower, robot.model.upper)  # inside the limits
    T = pinocchio_fk(q_star)
    seed_error = _pose_error(pinocchio_fk(q_star), T)
    opts = {"position_tolerance": 1e-30, "orientation_tolerance": 1e-30, "max_iterations": 1,
            "max_restarts": 20}
    res = robot.ik(T, seeds=q_star, **opts)  # one kernel call
    assert res.success is False and res.attempts == 21
    assert _pose_error(pinocchio_fk(res.q), T) <= seed_error + 1e-12
    names = [robot.joint_names[i] for i in PERM]
    out = service.inverse_kinematics(names, T.ravel(), q_star[PERM], **opts)  # rounds of attempts
    q = np.empty(6)
    q[PERM] = out.positions[0]
    assert _pose_error(pinocchio_fk(q), T) <= seed_error + 1e-12
    # the restarts alone (no seed) land far off: keeping a later one would be seen
    alone = robot.ik(T, **{**opts, "max_restarts": 0}, seed=3)
    assert _pose_error(pinocchio_fk(alone.q), T) > 1e-3


def test_ik_seeds_in_the_callers_order_are_honoured(service: DynamicsService, robot: Robot,
                                                    pinocchio_fk) -> None:
    """A seed that already solves its target, given in a permuted joint order, comes back
    unchanged (0 iterations), in the same order; Pinocchio's FK of it is the target."""
    rng = np.random.default_rng(11)
    Q = rng.uniform(robot.model.lower, robot.model.upper, (3, 6))
    T = np.stack([pinocchio_fk(q) for q in Q])
    names = [robot.joint_names[i] for i in PERM]
    out = service.inverse_kinematics(names, T.reshape(-1), Q[:, PERM].reshape(-1), max_restarts=0)
    assert out.solved.all() and (out.iterations == 0).all()
    np.testing.assert_array_equal(out.positions, Q[:, PERM])
    for k in range(3):
        q = np.empty(6)
        q[PERM] = out.positions[k]
        assert _pose_error(pinocchio_fk(q), T[k]) < 1e-9
    # a seed read in the model's order would start elsewhere: then it would iterate
    wrong = service.inverse_kinematics(list(robot.joint_names), T.reshape(-1),
                                       Q[:, PERM].reshape(-1), max_restarts=0)
    assert (wrong.iterations > 0).all()
