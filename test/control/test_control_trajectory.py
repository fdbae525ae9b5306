"""Trajectory interpolation: boundary conditions and continuity of every segment kind."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.control.trajectory import (
    CartesianMove,
    HoldPosition,
    JointSpline,
    clamped_spline_velocities,
    cubic_coefficients,
    quintic_coefficients,
    quintic_point_to_point,
    quintic_time_scaling,
)
from rbd_ros.lie.so3 import orientation_error, pose_matrix

RNG = np.random.default_rng(7)


def _poly(c: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = np.arange(6)
    p = sum(c[i] * s**i for i in k)
    v = sum(i * c[i] * s ** max(i - 1, 0) for i in k[1:])
    a = sum(i * (i - 1) * c[i] * s ** max(i - 2, 0) for i in k[2:])
    return p, v, a


def test_quintic_segment_matches_both_ends() -> None:
    p0, v0, a0, p1, v1, a1 = RNG.normal(size=(6, 4))
    T = 1.7
    c = quintic_coefficients(p0, v0, a0, p1, v1, a1, T)
    for s, want in ((0.0, (p0, v0, a0)), (T, (p1, v1, a1))):
        for got, w in zip(_poly(c, s), want):
            np.testing.assert_allclose(got, w, atol=1e-12)


def test_cubic_segment_matches_both_ends() -> None:
    p0, v0, p1, v1 = RNG.normal(size=(4, 3))
    c = cubic_coefficients(p0, v0, p1, v1, 0.8)
    np.testing.assert_allclose(c[4:], 0.0)
    for s, (p, v) in ((0.0, (p0, v0)), (0.8, (p1, v1))):
        got = _poly(c, s)
        np.testing.assert_allclose(got[0], p, atol=1e-12)
        np.testing.assert_allclose(got[1], v, atol=1e-12)


def _check_continuity(traj: JointSpline, order: int, eps: float = 1e-7) -> None:
    for tk in traj.knots[1:-1]:
        before = traj.sample([tk - eps])
        after = traj.sample([tk + eps])
        for d in range(order + 1):
            np.testing.assert_allclose(before[d], after[d], atol=1e-4 * (1 + np.abs(before[d]).max()))


def test_positions_only_is_a_c2_clamped_spline_through_the_points_then_holds() -> None:
    P = RNG.normal(size=(4, 3))
    tfs = [0.5, 1.0, 2.2, 3.0]
    start = (np.zeros(3), np.array([0.1, -0.2, 0.3]), np.zeros(3))
    traj = JointSpline.from_points(10.0, tfs, P, start=start)
    assert traj.kind == "cubic spline"
    q, qd, _ = traj.sample(10.0 + np.array(tfs))
    np.testing.assert_allclose(q, P, atol=1e-12)
    np.testing.assert_allclose(qd[-1], 0.0, atol=1e-12)
    q0, qd0, _ = traj.sample([10.0])
    np.testing.assert_allclose(q0[0], start[0], atol=1e-12)
    np.testing.assert_allclose(qd0[0], start[1], atol=1e-12)
    _check_continuity(traj, order=2)
    q, qd, qdd = traj.sample([13.0 + 5.0])  # holds the last point at rest
    np.testing.assert_allclose(q[0], P[-1])
    assert not qd.any() and not qdd.any()


def test_velocities_give_cubic_hermite_and_accelerations_give_quintic() -> None:
    P, V, A = RNG.normal(size=(3, 3, 2))
    start = (np.zeros(2), np.zeros(2), np.ones(2))
    cub = JointSpline.from_points(0.0, [1, 2, 3], P, V, start=start)
    assert cub.kind == "cubic"
    q, qd, _ = cub.sample([1.0, 2.0, 3.0 - 1e-12])
    np.testing.assert_allclose(q, P, atol=1e-9)
    np.testing.assert_allclose(qd, V, atol=1e-9)
    _check_continuity(cub, order=1)
    qui = JointSpline.from_points(0.0, [1, 2, 3], P, V, A, start=start)
    assert qui.kind == "quintic"
    q, qd, qdd = qui.sample([0.0, 1.0, 2.0, 3.0 - 1e-12])
    np.testing.assert_allclose(q[1:], P, atol=1e-9)
    np.testing.assert_allclose(qd[1:], V, atol=1e-8)
    np.testing.assert_allclose(qdd[1:], A, atol=1e-6)
    np.testing.assert_allclose(qdd[0], start[2], atol=1e-12)  # starts from the reference acceleration
    _check_continuity(qui, order=2)


def test_forced_quintic_from_positions_is_c2_and_matches_start_acceleration() -> None:
    P = RNG.normal(size=(3, 2))
    start = (np.zeros(2), np.ones(2), -np.ones(2))
    traj = JointSpline.from_points(0.0, [1, 2, 3], P, start=start, interpolation="quintic")
    q, _, qdd = traj.sample([0.0, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(qdd[0], start[2], atol=1e-12)
    np.testing.assert_allclose(q[1:], P, atol=1e-12)
    _check_continuity(traj, order=2)


def test_first_point_at_time_zero_replaces_start_state() -> None:
    P = np.array([[1.0, 2.0], [2.0, 3.0]])
    traj = JointSpline.from_points(5.0, [0.0, 1.0], P)
    np.testing.assert_allclose(traj.sample([5.0])[0][0], P[0])
    np.testing.assert_allclose(traj.sample([6.0])[0][0], P[1])


def test_future_start_keeps_previous_reference_running() -> None:
    hold = HoldPosition(np.array([0.3, 0.4]))
    traj = JointSpline.from_points(2.0, [1.0], [[1.0, 1.0]], start=(hold.q, np.zeros(2), np.zeros(2)),
                                   previous=hold)
    q, qd, qdd = np.empty(2), np.empty(2), np.empty(2)
    traj.evaluate(1.0, q, qd, qdd)
    np.testing.assert_allclose(q, hold.q)
    traj.evaluate(2.5, q, qd, qdd)
    assert traj.previous is None  # dropped once passed
    traj.evaluate(3.0, q, qd, qdd)
    np.testing.assert_allclose(q, [1.0, 1.0])


def test_clamped_spline_velocities_solve_the_c2_conditions() -> None:
    t = np.array([0.0, 0.3, 1.0, 1.4, 2.5])
    P = RNG.normal(size=(5, 3))
    v = clamped_spline_velocities(t, P, np.ones(3), -np.ones(3))
    traj = JointSpline(t, np.stack([cubic_coefficients(P[k], v[k], P[k + 1], v[k + 1], t[k + 1] - t[k])
                                    for k in range(4)]))
    _check_continuity(traj, order=2)


@pytest.mark.parametrize("kw, reason", [
    (dict(times=[1.0, 0.5], P=np.zeros((2, 2))), "strictly increasing"),
    (dict(times=[1.0], P=np.full((1, 2), np.nan)), "NaN"),
    (dict(times=[1.0], P=np.zeros((1, 2)), A=np.zeros((1, 2))), "without velocities"),
    (dict(times=[1.0, 2.0], P=np.zeros((2, 2)), V=np.zeros((1, 2))), "shape"),
    (dict(times=[0.0], P=np.zeros((1, 2))), "single point"),
])
def test_malformed_trajectories_are_refused_with_a_reason(kw: dict, reason: str) -> None:
    start = (np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match=reason):
        JointSpline.from_points(0.0, kw["times"], kw["P"], kw.get("V"), kw.get("A"), start=start)


def test_quintic_point_to_point_rest_to_rest() -> None:
    q0, q1 = np.array([0.0, 1.0]), np.array([1.0, -1.0])
    traj = quintic_point_to_point(q0, q1, 2.0, t0=1.0)
    q, qd, qdd = traj.sample([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(q[0], q0)
    np.testing.assert_allclose(q[1], (q0 + q1) / 2, atol=1e-12)  # symmetric about the midpoint
    np.testing.assert_allclose(q[2], q1, atol=1e-12)
    np.testing.assert_allclose(qd[[0, 2, 3]], 0.0, atol=1e-12)
    np.testing.assert_allclose(qdd[[0, 2, 3]], 0.0, atol=1e-12)
    np.testing.assert_allclose(qd[1], 15 / 8 * (q1 - q0) / 2.0)  # peak velocity 1.875 * mean
    s, ds, dds = quintic_time_scaling(0.5)
    assert s == 0.5 and ds == 1.875 and dds == 0.0


def test_cartesian_move_is_consistent_with_its_twist() -> None:
    T0 = pose_matrix([0.3, 0.1, 0.5], [0, 0, 0, 1])
    T1 = pose_matrix([0.1, -0.2, 0.7], np.array([0.3, -0.2, 0.5, 0.8]))
    mv = CartesianMove(T0, T1, t0=1.0, duration=2.0)
    T, v, a = np.empty((4, 4)), np.empty(6), np.empty(6)
    Tp, vp, ap = np.empty((4, 4)), np.empty(6), np.empty(6)
    h = 1e-6
    for t in (1.3, 2.0, 2.7):
        mv.evaluate(t, T, v, a)
        mv.evaluate(t + h, Tp, vp, ap)
        np.testing.assert_allclose((Tp[:3, 3] - T[:3, 3]) / h, v[:3], atol=1e-5)
        np.testing.assert_allclose(orientation_error(Tp[:3, :3], T[:3, :3]) / h, v[3:], atol=1e-5)
        np.testing.assert_allclose((vp - v) / h, a, atol=1e-4)
    mv.evaluate(1.0, T, v, a)
    np.testing.assert_allclose(T, T0, atol=1e-12)
    mv.evaluate(3.5, T, v, a)
    np.testing.assert_allclose(T, T1, atol=1e-12)
    assert not v.any() and not a.any()
