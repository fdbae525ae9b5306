"""Statics, 003 ch.2: tau = J^T m (corrected (2.6)-(2.7)) and the static backward pass.

Oracles: central finite differences of the forward kinematics (virtual work (2.1)), the RNEA
with zero motion and a tool wrench (a different recursion), static equilibrium of the links
beyond each joint, and the pinned planar numbers (formulations §7 #12)."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.robot import Robot
from rbd_ros.util.resources import bundled_urdf


def planar(l1: float = 1.0, l2: float = 1.0) -> Robot:
    """Planar 2R in the x-y plane of the world, l1, l2, point masses at the link ends."""
    tool = np.eye(4)
    tool[0, 3] = l2
    return Robot.from_mdh(a=[0.0, l1], alpha=[0.0, 0.0], d=[0.0, 0.0], theta=[0.0, 0.0],
                          mass=[1.0, 1.0], com=[[l1, 0, 0], [l2, 0, 0]],
                          inertia=np.zeros((2, 3, 3)), tool=tool)


@pytest.fixture(scope="module")
def arm7() -> Robot:
    return Robot.from_urdf(str(bundled_urdf("arm7")))


@pytest.fixture(scope="module")
def mixed() -> Robot:
    """A 5-joint arm with two prismatic joints and a tool offset (random MDH numbers)."""
    rng = np.random.default_rng(11)
    n = 5
    tool = np.eye(4)
    tool[:3, 3] = [0.05, -0.02, 0.12]
    return Robot.from_mdh(a=rng.uniform(-0.3, 0.3, n), alpha=rng.uniform(-2, 2, n),
                          d=rng.uniform(-0.2, 0.2, n), theta=rng.uniform(-1, 1, n),
                          mass=rng.uniform(0.5, 2, n), com=rng.uniform(-0.1, 0.1, (n, 3)),
                          inertia=np.array([np.eye(3) * 0.01] * n),
                          joint_type=["revolute", "prismatic", "revolute", "prismatic", "revolute"],
                          tool=tool)


def test_planar_pinned_numbers() -> None:
    """formulations §7 #12: q = 0, hand force (0, 1, 0): tau = (2, 1); the literal (2.7)
    (Gamma's moment about the base origin with J of the hand origin) gives (4, 3)."""
    r = planar()
    q = np.zeros(2)
    m = np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(r.static_torques(q, m), [2.0, 1.0], atol=1e-12)
    np.testing.assert_allclose(r.static_torques(q, m, frame="tool"), [2.0, 1.0], atol=1e-12)
    # the literal (2.7): moment n + p x f about the base origin, then J^T
    T = r.fk(q)
    literal = np.concatenate([m[:3], m[3:] + np.cross(T[:3, 3], m[:3])])
    np.testing.assert_allclose(r.jacobian(q).T @ literal, [4.0, 3.0], atol=1e-12)


def _fd_torques(r: Robot, q: np.ndarray, m: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Virtual work (2.1): tau_i = f . dp/dq_i + n . dtheta/dq_i, central differences of FK;
    dtheta = vee(dR R^T)."""
    tau = np.empty(r.dof)
    for i in range(r.dof):
        dq = np.zeros(r.dof)
        dq[i] = h
        Tp, Tm = r.fk(q + dq), r.fk(q - dq)
        dp = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
        W = (Tp[:3, :3] - Tm[:3, :3]) / (2 * h) @ r.fk(q)[:3, :3].T
        dth = np.array([W[2, 1], W[0, 2], W[1, 0]])
        tau[i] = m[:3] @ dp + m[3:] @ dth
    return tau


@pytest.mark.parametrize("name", ["arm7", "mixed"])
def test_virtual_work_finite_differences(name: str, request: pytest.FixtureRequest) -> None:
    r = request.getfixturevalue(name)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, r.dof)
        m = rng.normal(size=6)
        np.testing.assert_allclose(r.static_torques(q, m), _fd_torques(r, q, m), atol=1e-7)
        # the same wrench in tool axes: [R^T f; R^T n]
        R = r.fk(q)[:3, :3]
        mh = np.concatenate([R.T @ m[:3], R.T @ m[3:]])
        np.testing.assert_allclose(r.static_torques(q, mh, frame="tool"), _fd_torques(r, q, m),
                                   atol=1e-7)


@pytest.mark.parametrize("name", ["arm7", "mixed"])
def test_matches_rnea_at_rest(name: str, request: pytest.FixtureRequest) -> None:
    """J^T m (+ g) equals the RNEA with zero motion in which the environment pushes with -m;
    the static backward pass gives the same torques."""
    r = request.getfixturevalue(name)
    rng = np.random.default_rng(5)
    z = np.zeros(r.dof)
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, r.dof)
        m = rng.normal(size=6)
        with_g = r.static_torques(q, m, include_gravity=True)
        np.testing.assert_allclose(with_g, r.inverse_dynamics(q, z, z, tool_wrench=-m), atol=1e-10)
        np.testing.assert_allclose(with_g - r.static_torques(q, m), r.gravity(q), atol=1e-10)
        W = r.joint_wrenches(q, m, include_gravity=True)
        P = r.link_poses(q)
        tau = [P[i + 1, :3, 2] @ (W[i, 3:] if r.model.joint_type[i] == 0 else W[i, :3])
               for i in range(r.dof)]
        np.testing.assert_allclose(tau, with_g, atol=1e-10)
    Q = rng.uniform(-1, 1, (4, r.dof))
    np.testing.assert_allclose(r.static_torques(Q, m), [r.static_torques(x, m) for x in Q], atol=1e-14)


def test_joint_wrenches_equilibrium(arm7: Robot) -> None:
    """Links i..n hold still: f_i = f - (sum of their masses) g, and the moment about joint
    i's origin balances the tool wrench and the links' weights."""
    r = arm7
    rng = np.random.default_rng(7)
    q = rng.uniform(-1, 1, r.dof)
    m = rng.normal(size=6)
    P = r.link_poses(q)
    p_tool = r.fk(q)[:3, 3]
    g = r.model.gravity
    W0 = r.joint_wrenches(q, m)
    Wg = r.joint_wrenches(q, m, include_gravity=True)
    for i in range(r.dof):
        o = P[i + 1, :3, 3]
        np.testing.assert_allclose(W0[i, :3], m[:3], atol=1e-12)
        np.testing.assert_allclose(W0[i, 3:], m[3:] + np.cross(p_tool - o, m[:3]), atol=1e-12)
        weight_f = sum(r.model.mass[k] * g for k in range(i, r.dof))
        weight_n = sum(np.cross(P[k + 1, :3, :3] @ r.model.com[k] + P[k + 1, :3, 3] - o,
                                r.model.mass[k] * g) for k in range(i, r.dof))
        np.testing.assert_allclose(Wg[i, :3], m[:3] - weight_f, atol=1e-10)
        np.testing.assert_allclose(Wg[i, 3:], W0[i, 3:] - weight_n, atol=1e-10)


def test_bad_arguments(arm7: Robot) -> None:
    q = np.zeros(arm7.dof)
    with pytest.raises(ValueError, match="wrench must have shape"):
        arm7.static_torques(q, np.zeros(3))
    with pytest.raises(ValueError, match="wrench contains NaN"):
        arm7.static_torques(q, [np.nan, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="frame must be"):
        arm7.static_torques(q, np.zeros(6), frame="base")
    with pytest.raises(ValueError, match="q must have shape"):
        arm7.joint_wrenches(np.zeros((2, arm7.dof)), np.zeros(6))
