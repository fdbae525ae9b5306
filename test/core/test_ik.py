"""Inverse kinematics: 003 (1.24) goldens, the §1.9 Newton iteration, FK(IK(T)) = T inside the
limits (checked with Pinocchio's FK on a real arm), unreachable / boundary / singular targets.

Oracles: the pinned numbers of formulations §7 #13-#14, Pinocchio's forward kinematics, the
triangle geometry of the 2-link arm, and rotations built independently (Rodrigues)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_ros.algorithm import ik as ikmod
from rbd_ros.algorithm.ik import two_link_ik
from rbd_ros.robot import Robot
from rbd_ros.util.resources import bundled_urdf
from robots_data import PANDA, example_robot_urdf


def planar(l1: float = 1.0, l2: float = 1.0, limit: float | None = None) -> Robot:
    tool = np.eye(4)
    tool[0, 3] = l2
    kw = {} if limit is None else {"lower": [-limit] * 2, "upper": [limit] * 2}
    return Robot.from_mdh(a=[0.0, l1], alpha=[0.0, 0.0], d=[0.0, 0.0], theta=[0.0, 0.0],
                          mass=[1.0, 1.0], com=np.zeros((2, 3)), inertia=np.zeros((2, 3, 3)),
                          tool=tool, **kw)


def rodrigues(axis: np.ndarray, angle: float) -> np.ndarray:
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


@pytest.fixture(scope="module")
def puma() -> Robot:
    return Robot.from_urdf(str(bundled_urdf("puma560")))


@pytest.fixture(scope="module")
def arm7() -> Robot:
    return Robot.from_urdf(str(bundled_urdf("arm7")))


# ---- analytic 2-link, 003 (1.24) -----------------------------------------------------------
def test_two_link_goldens() -> None:
    """formulations §7 #13, #14."""
    up, down = two_link_ik(1.0, 1.0, 1.0, 1.0)
    np.testing.assert_allclose(up, [0.0, math.pi / 2], atol=1e-12)
    np.testing.assert_allclose(down, [math.pi / 2, -math.pi / 2], atol=1e-12)
    up, down = two_link_ik(1.2, 0.5, 1.0, 0.7)
    np.testing.assert_allclose(up, [-0.16727868, 1.42744876], atol=1e-8)
    np.testing.assert_allclose(down, [0.95686092, -1.42744876], atol=1e-8)


def test_two_link_round_trip_and_edges() -> None:
    rng = np.random.default_rng(1)
    l1, l2 = 0.8, 0.5
    for _ in range(200):
        x, y = rng.uniform(-1.3, 1.3, 2)
        r = math.hypot(x, y)
        if not abs(l1 - l2) < r < l1 + l2:
            with pytest.raises(ValueError, match="unreachable"):
                two_link_ik(x, y, l1, l2)
            continue
        for q1, q2 in two_link_ik(x, y, l1, l2):
            fx = l1 * math.cos(q1) + l2 * math.cos(q1 + q2)
            fy = l1 * math.sin(q1) + l2 * math.sin(q1 + q2)
            assert abs(fx - x) < 1e-12 and abs(fy - y) < 1e-12
    # boundary: stretched (k = 0), both branches equal
    up, down = two_link_ik(l1 + l2, 0.0, l1, l2)
    np.testing.assert_allclose(up, [0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(up, down, atol=1e-7)
    with pytest.raises(ValueError, match="unreachable"):
        two_link_ik(2.0, 0.0, 1.0, 0.7)
    with pytest.raises(ValueError, match="link lengths"):
        two_link_ik(0.5, 0.0, 0.0, 0.7)


# ---- Newton iteration, 003 §1.9 ------------------------------------------------------------
def test_newton_iteration_pinned() -> None:
    """formulations §6.2: l1 = 1, l2 = 0.7, target (1.2, 0.5), q0 = (0.3, 0.8), k = 0.5
    reaches 1e-10 in 32 steps on (-0.16727868, 1.42744876)."""
    r = planar(1.0, 0.7)
    res = r.ik([1.2, 0.5, 0.0], seeds=[0.3, 0.8], position_only=True, method="newton", gain=0.5,
               position_tolerance=1e-10, max_iterations=200)
    assert res.solved
    np.testing.assert_allclose(res.positions, [-0.16727868, 1.42744876], atol=1e-8)
    assert 30 <= res.iterations <= 34
    # k = 1: quadratic Newton, far fewer steps
    fast = r.ik([1.2, 0.5, 0.0], seeds=[0.3, 0.8], position_only=True, method="newton", gain=1.0,
                position_tolerance=1e-10)
    assert fast.solved and fast.iterations < 10


def test_newton_singular_start_fails_cleanly() -> None:
    """det J = l1 l2 sin q2 (§7 #15): from q2 = 0 the Newton step does not exist."""
    r = planar(1.0, 0.7)
    res = r.ik([1.2, 0.5, 0.0], seeds=[0.3, 0.0], position_only=True, method="newton")
    assert not res.solved and res.iterations == 0
    assert np.isfinite(res.positions).all() and np.isfinite(res.position_errors)
    with pytest.raises(ValueError, match="needs a start: seeds"):
        r.ik([1.2, 0.5, 0.0], position_only=True, method="newton")


# ---- damped least squares ------------------------------------------------------------------
def _check_solutions(r: Robot, T: np.ndarray, res, tol: float = 1e-6) -> None:
    assert np.all(res.solved)
    Tq = r.fk(res.positions)
    assert np.abs(Tq[..., :3, 3] - T[..., :3, 3]).max() <= 2 * tol
    assert np.abs(Tq[..., :3, :3] - T[..., :3, :3]).max() <= 2 * tol
    assert np.all(res.positions >= r.model.lower) and np.all(res.positions <= r.model.upper)


@pytest.mark.parametrize("name", ["puma", "arm7"])
def test_fk_of_ik_is_target(name: str, request: pytest.FixtureRequest) -> None:
    r = request.getfixturevalue(name)
    rng = np.random.default_rng(2)
    lo, hi = r.model.lower, r.model.upper
    T = r.fk(rng.uniform(lo, hi, (40, r.dof)))
    q0 = rng.uniform(lo, hi, (40, r.dof))
    for k in range(10):
        res = r.ik(T[k], seeds=q0[k])
        _check_solutions(r, T[k], res)
        assert isinstance(res.solved, bool) and res.positions.shape == (r.dof,)
    res = r.ik(T, seeds=q0)
    _check_solutions(r, T, res)
    assert res.positions.shape == (40, r.dof) and res.solved.shape == (40,)
    assert np.all(res.position_errors <= 1e-6) and np.all(res.orientation_errors <= 1e-6)
    # reproducible from the seed, and independent of q0's presence
    again = r.ik(T[:5], seed=3)
    np.testing.assert_array_equal(again.positions, r.ik(T[:5], seed=3).positions)
    _check_solutions(r, T[:5], again)


def test_panda_against_pinocchio() -> None:
    """A real 7-DoF arm: Pinocchio's FK of the solution is the target."""
    pin = pytest.importorskip("pinocchio")
    path = example_robot_urdf(PANDA)
    r = Robot.from_urdf(str(path), base_link="panda_link0", tip_link="panda_link8")
    full = pin.buildModelFromUrdf(str(path))
    lock = [full.getJointId(nm) for nm in full.names[1:] if nm not in r.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full))
    pd = pm.createData()
    fid = pm.getFrameId("panda_link8")
    order = [list(pm.names[1:]).index(nm) for nm in r.joint_names]
    rng = np.random.default_rng(8)
    qs = rng.uniform(r.model.lower, r.model.upper, (20, r.dof))
    T = r.fk(qs)
    res = r.ik(T, seeds=rng.uniform(r.model.lower, r.model.upper, (20, r.dof)))
    assert res.solved.all()
    for k in range(20):
        qp = np.empty(r.dof)
        qp[order] = res.positions[k]
        pin.framesForwardKinematics(pm, pd, qp)
        M = pd.oMf[fid]
        assert np.abs(M.translation - T[k, :3, 3]).max() < 2e-6
        assert np.abs(M.rotation - T[k, :3, :3]).max() < 2e-6


def test_position_only(arm7: Robot) -> None:
    rng = np.random.default_rng(4)
    p = arm7.fk(rng.uniform(arm7.model.lower, arm7.model.upper, (10, arm7.dof)))[:, :3, 3]
    res = arm7.ik(p, position_only=True)
    assert res.solved.all() and np.all(res.orientation_errors == 0.0)
    np.testing.assert_allclose(arm7.fk(res.positions)[:, :3, 3], p, atol=2e-6)


def test_prismatic_joints_and_newton_batch() -> None:
    """A 6-joint chain with two prismatic joints (limited and unbounded): DLS and, from a
    nearby start, the Newton iteration (square J) both land on the pose."""
    rng = np.random.default_rng(12)
    n = 6
    r = Robot.from_mdh(a=rng.uniform(-0.3, 0.3, n), alpha=rng.uniform(-2, 2, n),
                       d=rng.uniform(-0.2, 0.2, n), theta=rng.uniform(-1, 1, n), mass=np.ones(n),
                       com=np.zeros((n, 3)), inertia=np.array([np.eye(3) * 0.01] * n),
                       joint_type=["revolute", "prismatic", "revolute", "prismatic", "revolute",
                                   "revolute"],
                       lower=[-2.5, -0.5, -2.5, -np.inf, -np.inf, -2.5],
                       upper=[2.5, 0.5, 2.5, np.inf, np.inf, 2.5])
    qs = rng.uniform(-0.4, 0.4, (6, n))
    T = r.fk(qs)
    res = r.ik(T)
    assert res.solved.all()
    np.testing.assert_allclose(r.fk(res.positions), T, atol=2e-6)
    newton = r.ik(T, seeds=qs + 0.02, method="newton", gain=1.0)
    assert newton.solved.all()
    np.testing.assert_allclose(r.fk(newton.positions), T, atol=2e-6)


def test_unreachable_gives_best_pose(puma: Robot) -> None:
    """Far outside the workspace: no exception, no NaN, success False, q inside the limits,
    and the best pose points at the target (position error = distance - reach)."""
    T = np.eye(4)
    T[:3, 3] = [5.0, 0.0, 0.5]
    res = puma.ik(T, max_restarts=3)
    assert not res.solved
    assert np.isfinite(res.positions).all() and math.isfinite(res.position_errors)
    assert np.all(res.positions >= puma.model.lower) and np.all(res.positions <= puma.model.upper)
    assert 3.5 < res.position_errors < 5.0
    r = planar(1.0, 0.7)
    res = r.ik([3.0, 0.0, 0.0], position_only=True, max_restarts=2)
    assert not res.solved
    assert res.position_errors == pytest.approx(3.0 - 1.7, abs=1e-6)  # stretched towards it
    batch = r.ik(np.array([[3.0, 0.0, 0.0], [1.0, 0.5, 0.0]]), position_only=True, max_restarts=2)
    assert batch.solved.tolist() == [False, True] and np.isfinite(batch.positions).all()
    # with a time budget the restarts run in rounds of 8; the budget of attempts still holds
    timed = r.ik(np.array([[3.0, 0.0, 0.0], [1.0, 0.5, 0.0]]), position_only=True,
                 max_restarts=20, timeout=30.0)
    assert timed.solved.tolist() == [False, True] and timed.attempts[0] == 21
    assert timed.position_errors[0] == pytest.approx(1.3, abs=1e-6)


def test_boundary_and_singular_targets(puma: Robot) -> None:
    """Targets whose solution is singular: the stretched planar arm (k = 0) and the Puma's
    wrist singularity (q5 = 0).  LM still converges (slower), or reports its best pose."""
    r = planar(1.0, 0.7, limit=math.pi)
    res = r.ik([1.7, 0.0, 0.0], position_only=True, seeds=[0.4, 0.6], position_tolerance=1e-6)
    assert res.solved and abs(res.positions[1]) < 1e-2
    q = np.array([0.3, -0.8, 1.2, 0.5, 0.0, -0.4])  # q5 = 0: joints 4 and 6 aligned
    res = puma.ik(puma.fk(q), seeds=q + 0.2)
    assert np.isfinite(res.positions).all()
    assert res.solved
    # an orientation 180 degrees away (the log map's branch point) is reached too
    T = puma.fk(q)
    T[:3, :3] = T[:3, :3] @ rodrigues([0, 0, 1], math.pi)
    res = puma.ik(T, seeds=q)
    assert res.solved


def test_orientation_error_log_map(arm7: Robot) -> None:
    """e[3:] = theta a for R_t = Rot(a, theta) R, up to theta = pi (independent Rodrigues)."""
    q = np.array([0.2, -0.3, 0.1, -1.5, 0.4, 1.2, -0.3])
    T0 = arm7.fk(q)
    S = ikmod.ik_scratch(arm7.dof)
    e = np.empty(6)
    rng = np.random.default_rng(9)
    for theta in (1e-9, 0.3, 2.0, math.pi - 1e-9, math.pi):
        a = rng.normal(size=3)
        a /= np.linalg.norm(a)
        T = T0.copy()
        T[:3, :3] = rodrigues(a, theta) @ T0[:3, :3]
        T[:3, 3] += [0.1, -0.2, 0.3]
        ikmod.forward_kinematics(arm7._mp, arm7._ws, q)
        pe, oe = ikmod.pose_error(arm7._ws, arm7.dof, T, 6, e)
        assert pe == pytest.approx(math.sqrt(0.14), abs=1e-12)
        assert oe == pytest.approx(theta, abs=1e-9)
        sign = 1.0 if theta < math.pi else np.sign(e[3:] @ a)  # at pi, +-a are the same
        np.testing.assert_allclose(e[3:], sign * theta * a, atol=1e-7)
    del S


def test_bad_arguments(arm7: Robot) -> None:
    T = np.eye(4)
    with pytest.raises(ValueError, match="not a rigid transform"):
        arm7.ik(np.diag([2.0, 1, 1, 1]))
    with pytest.raises(ValueError, match="NaN"):
        arm7.ik(np.full((4, 4), np.nan))
    with pytest.raises(ValueError, match="target must be"):
        arm7.ik(np.zeros(3))
    with pytest.raises(ValueError, match="seeds must have shape"):
        arm7.ik(T, seeds=np.zeros(3))
    with pytest.raises(ValueError, match="method must be"):
        arm7.ik(T, method="ccd")
    with pytest.raises(ValueError, match="position_tolerance"):
        arm7.ik(T, position_tolerance=0)
    with pytest.raises(ValueError, match="target must be real numbers"):
        arm7.ik(np.eye(4) * (1 + 1j))
    with pytest.raises(ValueError, match="seeds has 2 rows"):
        arm7.ik(np.stack([T] * 3), seeds=np.zeros((2, arm7.dof)))


@pytest.mark.parametrize("far", [1e155, 1e300])
def test_a_target_too_far_for_float64_reports_its_error_not_zero(puma: Robot, far: float) -> None:
    """A target at 1e300 m: |e|^2 overflows inside the kernel.  The answer is a failure whose
    position error is at least the distance to the target minus the arm's reach (the triangle
    inequality), never the 0.0 the DLS kernel reported when no attempt beat an infinite best."""
    T = np.eye(4)
    T[:3, 3] = far
    res = puma.ik(T, max_restarts=2)
    reach = float(np.abs(puma.model.a).sum() + np.abs(puma.model.d).sum() + np.abs(puma.model.tool).sum())
    assert not res.solved
    assert res.position_errors >= far * math.sqrt(3) - reach - 1.0
