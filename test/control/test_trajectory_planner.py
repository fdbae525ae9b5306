"""The FollowJointTrajectory planner without ROS (issue 37): ``follow_trajectory.plan_goal`` with
``path_limits`` (limits along the whole interpolated trajectory) and ``retime`` (TOPP-RA).

Arms no other test drove: Romeo's left arm from its torso (7 DoF, example-robot-data
``romeo.urdf``) and Centauro's arm (6 DoF, 147 N m shoulders, 55 N m wrists).  Oracles:
Pinocchio's RNEA on the same URDF (``urdf_oracles.pin_reference``), the URDF's own limits, the
rest-to-rest quintic's and the cubic Hermite's hand-computed peak speeds, and the given path
sampled densely (the retimed one must stay on it).
"""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest
from scipy.spatial import cKDTree

from rbd_ros.control import follow_trajectory as ft
from rbd_ros.control.path_limits import EFFORT_MARGIN, PathLimits
from rbd_ros.control.trajectory import HoldPosition, JointSpline
from robots_data import example_robot_urdf
from urdf_oracles import pin_reference

ROMEO = ("romeo_description/urdf/romeo.urdf", "torso", "l_wrist")
CENTAURO = ("centauro_description/urdf/centauro.urdf", "torso_2", "ball1_tip")


def _arm(spec):
    from rbd_ros.urdf import load_model

    path = str(example_robot_urdf(spec[0]))
    return path, load_model(path, base_link=spec[1], tip_link=spec[2])


@pytest.fixture(scope="module")
def romeo():
    return _arm(ROMEO)


@pytest.fixture(scope="module")
def centauro():
    return _arm(CENTAURO)


def _dur(t: float) -> NS:
    sec, nsec = divmod(int(round(t * 1e9)), 10**9)
    return NS(sec=sec, nanosec=nsec)


def _goal(names, times, P, V=None, E=None, stamp=0.0) -> NS:
    pts = [NS(time_from_start=_dur(t), positions=list(p), velocities=[] if V is None else list(V[k]),
              accelerations=[], effort=[] if E is None else list(E[k])) for k, (t, p) in enumerate(zip(times, P))]
    return NS(trajectory=NS(header=NS(stamp=_dur(stamp)), joint_names=list(names), points=pts),
              multi_dof_trajectory=NS(joint_names=[], points=[]), path_tolerance=[], goal_tolerance=[],
              component_path_tolerance=[], component_goal_tolerance=[], goal_time_tolerance=_dur(0.0))


def _plan(goal: NS, model, q0: np.ndarray, now: float = 2.0, **kw) -> ft.GoalExecution:
    hold = HoldPosition(q0)

    def reference_at(t: float):
        q, qd, qdd = np.zeros(len(q0)), np.zeros(len(q0)), np.zeros(len(q0))
        hold.evaluate(t, q, qd, qdd)
        return q, qd, qdd

    return ft.plan_goal(goal, model, now, reference_at, running=hold, **kw)


def _moveit_path(model, q0: np.ndarray, amp: np.ndarray) -> np.ndarray:
    """8 waypoints of a smooth joint-space curve (positions only, as a planner's path)."""
    s = np.linspace(0, 1, 9)[1:]
    return np.clip(q0 + amp * (np.sin(np.pi * s / 2) ** 2)[:, None], model.lower + 0.01, model.upper - 0.01)


def test_a_goal_three_times_too_fast_for_the_shoulder_is_refused_or_retimed_under_its_torques(romeo) -> None:
    path, model = romeo
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(7), model.lower, model.upper)
    P = _moveit_path(model, q0, 0.15 * np.array([1.2, 0.3, 0.2, -0.2, 0.1, 0.05, 0.05]))  # mostly the shoulder
    frac = np.linspace(0, 1, 9)[1:]
    oracle = pin_reference(open(path).read(), model, {})
    limit = np.asarray(model.effort_limit, float)
    cap = EFFORT_MARGIN * limit

    def peak(spline: JointSpline, samples: int = 3000) -> np.ndarray:
        t = np.linspace(spline.start_time, spline.end_time, samples)
        q, qd, qdd = spline.sample(t)
        return np.max([np.abs(oracle.rnea(*x)) for x in zip(q, qd, qdd)], axis=0)

    fits = _plan(_goal(names, 0.15 * frac, P), model, q0, retime="never")  # 0.15 s: inside every limit
    assert np.all(peak(fits.spline, 600) <= cap * 1.001)
    # three times faster: Pinocchio says the shoulder needs more than 2x what a plan may use
    fast = JointSpline.from_points(2.0, 0.05 * frac, P, start=(q0, np.zeros(7), np.zeros(7)))
    need = peak(fast, 600)
    assert need[0] > 2.0 * cap[0], need / cap
    goal = _goal(names, 0.05 * frac, P)
    with pytest.raises(ft.GoalError) as info:
        _plan(goal, model, q0, retime="never")
    msg = str(info.value)
    for word in ("effort of LShoulderPitch", "N m", "into the trajectory", f"{cap[0]:.6g} N m a plan may use",
                 "70% of its effort limit 19.095"):
        assert word in msg, (word, msg)
    ex = _plan(goal, model, q0)  # retime: when_infeasible (the default)
    plan = ex.plan
    assert plan.retimed and plan.given_duration == pytest.approx(0.05)
    assert plan.duration == pytest.approx(ex.spline.end_time - ex.spline.start_time) and plan.duration > 0.1
    assert f"retimed to {plan.duration:.3f} s (given 0.050 s)" in plan.summary()
    assert ex.end_time == ex.spline.end_time  # (goal_time_tolerance counts from the retimed end)
    # Pinocchio along the retimed reference: under the effort limits everywhere, at the cap
    got = peak(ex.spline)
    assert np.all(got <= limit), got / limit
    assert np.all(got <= cap * 1.02), got / cap
    # the same path: every waypoint at its new time, and every sample on the given curve
    for k, p in enumerate(P):
        q, _, _ = ex.spline.sample([ex.point_times[k]])
        np.testing.assert_allclose(q[0], p, atol=1e-9)
    dense = fast.sample(np.linspace(2.0, 2.05, 40001))[0]
    q = ex.spline.sample(np.linspace(ex.start_time, ex.end_time, 2000))[0]
    gap = cKDTree(dense).query(q)[0]  # the distance of each sample to the given curve
    assert gap.max() < 1e-3, gap.max()
    # never faster than given: a feasible goal keeps its timing exactly
    assert fits.plan.duration == pytest.approx(0.15) and not fits.plan.retimed
    same = _plan(_goal(names, 0.15 * frac, P), model, q0)
    assert not same.plan.retimed and np.array_equal(same.spline.coeffs, fits.spline.coeffs)


def test_a_first_point_at_time_zero_far_from_the_arm_is_refused_or_joined_under_the_urdf_speed(centauro) -> None:
    import pinocchio as pin

    path, model = centauro
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(6), model.lower, model.upper) + 0.05
    target = q0.copy()
    target[0] += 1.0  # 1 rad from the arm at time_from_start 0
    goal = _goal(names, [0.0, 1.0], [target, target], V=np.zeros((2, 6)))
    with pytest.raises(ft.GoalError) as info:
        _plan(goal, model, q0, retime="never")
    msg = str(info.value)
    assert "point 0 is at time_from_start 0" in msg and "1 from the current reference of j_arm1_1" in msg, msg
    ex = _plan(goal, model, q0, now=2.0)
    assert "joined from the current state" in ex.plan.summary()
    t = np.arange(ex.start_time, ex.end_time + 0.5, 1e-3)
    q, qd, _ = ex.spline.sample(t)
    np.testing.assert_allclose(q[0], q0, atol=1e-12)  # no jump: it starts where the arm is
    np.testing.assert_allclose(q[-1], target, atol=1e-9)
    pm = pin.buildModelFromUrdf(path)  # the oracle: the URDF's velocity limits, read by Pinocchio
    vmax = np.array([pm.velocityLimit[pm.joints[pm.getJointId(j)].idx_v] for j in names])
    assert np.all(np.abs(qd).max(axis=0) <= vmax * (1 + 1e-6)), np.abs(qd).max(axis=0) / vmax
    # within the start tolerance the first point replaces the start (joint_trajectory_controller)
    near = _plan(_goal(names, [0.0, 1.0], [q0 + 1e-4, target], V=np.zeros((2, 6))), model, q0, retime="never")
    assert near.spline.knots.tolist() == [2.0, 3.0] and not near.plan.joined


def test_a_velocity_beyond_the_limit_between_points_is_caught_and_named(centauro) -> None:
    """Points at rest, inside every limit; the cubic Hermite between two of them peaks at 3/2
    of the mean speed (hand-computed) half-way, where no point is."""
    _, model = centauro
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(6), model.lower, model.upper) + 0.05
    vmax = float(model.velocity_limit[2])
    d = 0.8 * vmax * 0.5  # mean speed 0.8 vmax over 0.5 s: the peak 1.2 vmax
    P = np.array([q0, q0, q0])
    P[1:, 2] += d
    goal = _goal(names, [0.5, 1.0, 1.5], P, V=np.zeros((3, 6)))
    with pytest.raises(ft.GoalError) as info:
        _plan(goal, model, q0, retime="never")
    msg = str(info.value)
    assert f"velocity of j_arm1_3 reaches {1.5 * d / 0.5:.6g} rad/s at t = 0.7500 s" in msg, msg
    assert "retime: when_infeasible would slow it down" in msg
    ex = _plan(goal, model, q0)
    assert ex.plan.retimed and ex.plan.duration > 1.5
    qd = ex.spline.sample(np.linspace(ex.start_time, ex.end_time, 4001))[1]
    assert np.abs(qd[:, 2]).max() <= vmax * (1 + 1e-6)


@pytest.mark.parametrize("efforts, words", [
    (lambda e: [e[:3], e[:3]], ["point 0: 3 efforts for 6 joints"]),
    (lambda e: [e, e[:5]], ["point 1: 5 efforts for 6 joints"]),
    (lambda e: [e, np.r_[e[:4], np.nan, e[5]]], ["point 1: effort of j_arm1_5 is nan"]),
    (lambda e: [e, np.r_[e[:1], 1e6, e[2:]]], ["point 1: effort 1e+06 of j_arm1_2", "effort limit 147"]),
])
def test_efforts_of_the_wrong_size_not_finite_or_over_the_limit_are_refused(centauro, efforts, words) -> None:
    _, model = centauro
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(6), model.lower, model.upper) + 0.05
    e = np.full(6, 1.0)
    with pytest.raises(ft.GoalError) as info:
        _plan(_goal(names, [1.0, 2.0], [q0, q0], E=efforts(e)), model, q0)
    assert info.value.code == ft.INVALID_GOAL
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_efforts_in_points_are_carried_as_a_feed_forward_for_the_laws_that_take_one(centauro) -> None:
    _, model = centauro
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(6), model.lower, model.upper) + 0.05
    E = np.array([np.full(6, 2.0), np.full(6, 4.0)])
    ex = _plan(_goal(names[::-1], [1.0, 2.0], [q0[::-1], q0[::-1]], E=E * np.arange(1, 7)), model, q0)
    eff = ex.plan.efforts
    out = [np.zeros(6) for _ in range(3)]
    eff.evaluate(3.5, *out)  # half-way between the points (2 s + 1.5 s): linear
    np.testing.assert_allclose(out[0], 3.0 * np.arange(6, 0, -1), atol=1e-12)  # model order
    assert ft.takes_efforts("computed_torque") and ft.takes_efforts("pd_gravity")
    assert not ft.takes_efforts("pd") and not ft.takes_efforts("task_pd")


def test_a_ten_thousand_point_goal_starts_at_its_first_point_when_its_plan_is_ready(romeo) -> None:
    _, model = romeo
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(7), model.lower, model.upper)
    m = 10000
    t = np.linspace(0.0, 30.0, m)
    ramp = 0.3 * (1 - np.cos(np.pi * t / 30.0))[:, None] / 2  # slow, from the arm, ends at rest
    P = np.clip(q0 + ramp * np.array([1, 1, 1, -1, -1, 1, 1]), model.lower, model.upper)
    ex = _plan(_goal(names, t, P), model, q0, now=5.0)
    assert not ex.plan.retimed and not ex.plan.joined
    ex.start_at(7.25)  # the plan was ready 2.25 s after the goal came
    assert ex.start_time == 7.25 and ex.end_time == pytest.approx(37.25)
    q, qd, _ = ex.spline.sample([7.25, 7.25 + t[1], 37.25])
    np.testing.assert_allclose(q[0], P[0], atol=1e-12)  # its first point, nothing skipped
    np.testing.assert_allclose(q[1], P[1], atol=1e-9)
    assert ex.point_index(7.25 + 0.5 * t[1]) == 1


def test_path_limits_name_a_bad_acceleration_limit_and_effort_margin(romeo) -> None:
    _, model = romeo
    with pytest.raises(ValueError, match="acceleration_limits must be one value or one per joint"):
        PathLimits.from_model(model, acceleration_limits=[1.0, 2.0])
    with pytest.raises(ValueError, match="effort_margin must be in"):
        PathLimits.from_model(model, effort_margin=1.5)
    with pytest.raises(ValueError, match="retime must be one of"):
        _plan(_goal(model.joint_names, [1.0], [np.zeros(7)]), model, np.zeros(7), retime="sometimes")


def test_drive_friction_counts_in_the_torque_check_and_the_retiming(centauro) -> None:
    """Viscous and dry friction at every joint (``MdhModel.replace``): the retimed reference
    keeps Pinocchio's rigid-body torque plus ``B qd + T_c sign(qd)`` (added by hand) under the
    cap; the same goal without friction in the model would come back faster."""
    path, model = centauro
    names = list(model.joint_names)
    B, Tc = np.array([20.0, 20.0, 10.0, 10.0, 2.0, 2.0]), np.array([5.0, 5.0, 3.0, 3.0, 1.0, 1.0])
    rough = model.replace(viscous=B, coulomb=Tc)
    q0 = np.clip(np.zeros(6), model.lower, model.upper) + 0.05
    target = q0 + np.array([0.8, 0.5, -0.6, -0.4, 0.5, 0.5])
    target = np.clip(target, model.lower + 0.01, model.upper - 0.01)
    goal = _goal(names, [0.3], [target], V=np.zeros((1, 6)))
    ex = _plan(goal, rough, q0)
    smooth = _plan(goal, model, q0)
    assert ex.plan.retimed and smooth.plan.retimed and ex.plan.duration > smooth.plan.duration
    oracle = pin_reference(open(path).read(), model, {})
    t = np.linspace(ex.start_time, ex.end_time, 1500)
    q, qd, qdd = ex.spline.sample(t)
    tau = np.array([oracle.rnea(*x) for x in zip(q, qd, qdd)]) + B * qd + Tc * np.sign(qd)
    cap = EFFORT_MARGIN * np.asarray(model.effort_limit, float)
    assert np.all(np.abs(tau).max(axis=0) <= cap * 1.02), np.abs(tau).max(axis=0) / cap


def test_retime_always_runs_a_slow_goal_faster_within_the_urdf_limits(centauro) -> None:
    import pinocchio as pin

    path, model = centauro
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(6), model.lower, model.upper) + 0.05
    target = np.clip(q0 + 0.3, model.lower + 0.01, model.upper - 0.01)
    goal = _goal(names, [5.0], [target], V=np.zeros((1, 6)))
    assert not _plan(goal, model, q0).plan.retimed  # feasible: when_infeasible keeps 5 s
    ex = _plan(goal, model, q0, retime="always")
    assert ex.plan.retimed and 0.5 <= ex.plan.duration < 2.0, ex.plan.duration  # at most 10x faster
    pm = pin.buildModelFromUrdf(path)
    vmax = np.array([pm.velocityLimit[pm.joints[pm.getJointId(j)].idx_v] for j in names])
    q, qd, qdd = ex.spline.sample(np.linspace(ex.start_time, ex.end_time, 1500))
    assert np.all(np.abs(qd).max(axis=0) <= vmax * (1 + 1e-6))
    oracle = pin_reference(open(path).read(), model, {})
    tau = np.array([oracle.rnea(*x) for x in zip(q, qd, qdd)])
    assert np.all(np.abs(tau).max(axis=0) <= np.asarray(model.effort_limit, float))
    np.testing.assert_allclose(q[-1], target, atol=1e-9)


@pytest.mark.parametrize("retime", ["when_infeasible", "always"])
def test_a_retimed_goal_from_a_moving_reference_keeps_its_velocity(romeo, retime) -> None:
    """The current reference moves (a running goal replaced): the retimed plan starts with its
    position and velocity, whatever the new timing does afterwards."""
    from rbd_ros.control.retime import retime as retime_path

    _, model = romeo
    lim = PathLimits.from_model(model)
    q0 = np.clip(np.zeros(7), model.lower, model.upper) + np.r_[0.0, 0.0, 0.0, -0.2, 0.0, 0.0, 0.0]
    v0 = np.r_[0.3, -0.2, 0.1, 0.0, 0.1, 0.0, 0.2]
    q1 = np.clip(q0 + 0.2, model.lower + 0.01, model.upper - 0.01)
    spline = JointSpline.from_points(1.0, [0.1 if retime == "when_infeasible" else 3.0], q1[None],
                                     np.zeros((1, 7)), np.zeros((1, 7)), start=(q0, v0, np.zeros(7)))
    r = retime_path(spline, lim, slower_only=retime == "when_infeasible")
    q, qd, _ = r.spline.sample([1.0, r.spline.end_time])
    np.testing.assert_allclose(q[0], q0, atol=1e-12)
    np.testing.assert_allclose(qd[0], v0, atol=1e-9)
    np.testing.assert_allclose(q[1], q1, atol=1e-9)
    assert r.check.violation is None
