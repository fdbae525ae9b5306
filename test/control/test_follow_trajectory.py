"""FollowJointTrajectory goals without ROS (issue 29): ``rbd_ros.control.follow_trajectory``.

Hand-computed oracles: a rest-to-rest quintic is at half its move, at 15/8 of the mean speed,
half-way through; knot times are the stamp plus ``time_from_start``; joint_trajectory_controller's
tolerance rules (``tolerances.hpp``: > 0 used, 0 default, -1 none) written out as a table; each
refused goal carries its result code and a reason naming what is wrong.  Then through
``ControlLoop`` on the bundled 7-joint arm: a goal's tolerance checks run in the cycle.
"""
from __future__ import annotations

import time
from types import SimpleNamespace as NS

import numpy as np
import pytest

from rbd_ros.control import follow_trajectory as ft
from rbd_ros.control.trajectory import HoldPosition

MODEL = NS(joint_names=("a", "b", "c"), lower=np.array([-1.0, -2.0, -3.0]),
           upper=np.array([1.0, 2.0, 3.0]), velocity_limit=np.array([10.0, 10.0, 10.0]))
Q0 = np.array([0.0, 0.5, 0.0])


def _dur(t: float) -> NS:
    sec, nsec = divmod(int(round(t * 1e9)), 10**9)
    return NS(sec=sec, nanosec=nsec)


def _goal(names, points, stamp=0.0, path=(), goal=(), goal_time=0.0, multi=(), comp=()) -> NS:
    """A FollowJointTrajectory goal: points = [(t, positions[, velocities[, accelerations]])]."""
    pts = [NS(time_from_start=_dur(p[0]), positions=list(p[1]),
              velocities=list(p[2]) if len(p) > 2 else [],
              accelerations=list(p[3]) if len(p) > 3 else [], effort=[]) for p in points]
    return NS(trajectory=NS(header=NS(stamp=_dur(stamp)), joint_names=list(names), points=pts),
              multi_dof_trajectory=NS(joint_names=list(multi), points=[]),
              path_tolerance=[NS(name=n, position=p, velocity=v, acceleration=0.0) for n, p, v in path],
              goal_tolerance=[NS(name=n, position=p, velocity=v, acceleration=0.0) for n, p, v in goal],
              component_path_tolerance=list(comp), component_goal_tolerance=[],
              goal_time_tolerance=_dur(goal_time))


def _plan(goal: NS, now: float = 10.0, running=None, **kw) -> ft.GoalExecution:
    hold = HoldPosition(Q0)

    def reference_at(t: float):
        q, qd, qdd = np.zeros(3), np.zeros(3), np.zeros(3)
        hold.evaluate(t, q, qd, qdd)
        return q, qd, qdd

    return ft.plan_goal(goal, MODEL, now, reference_at, running=running or hold, **kw)


def _at(ex: ft.GoalExecution, t: float) -> tuple[np.ndarray, np.ndarray]:
    q, qd, qdd = np.zeros(3), np.zeros(3), np.zeros(3)
    ex.evaluate(t, q, qd, qdd)
    return q, qd


def test_joints_in_any_order_unnamed_joints_hold_and_the_quintic_is_at_half_way() -> None:
    ex = _plan(_goal(["c", "a"], [(2.0, [0.3, -0.2], [0, 0], [0, 0])]))
    assert ex.spline.knots.tolist() == [10.0, 12.0]  # stamp 0 = now
    q, qd = _at(ex, 11.0)
    # rest-to-rest quintic: half the move at half the time, velocity 15/8 of the mean
    np.testing.assert_allclose(q, [-0.1, 0.5, 0.15], atol=1e-12)
    np.testing.assert_allclose(qd, [1.875 * -0.2 / 2, 0.0, 1.875 * 0.3 / 2], atol=1e-12)
    q, qd = _at(ex, 13.0)  # after the end: holds the last point
    np.testing.assert_allclose(q, [-0.2, 0.5, 0.3], atol=1e-12)
    assert not qd.any()


def test_stamps_future_waits_past_keeps_absolute_times_and_drops_passed_points() -> None:
    running = HoldPosition(np.array([0.1, 0.2, 0.3]))
    ex = _plan(_goal("abc", [(1.0, [0.0, 0.0, 0.0])], stamp=15.0), running=running)
    assert ex.spline.knots.tolist() == [15.0, 16.0]
    np.testing.assert_allclose(_at(ex, 12.0)[0], [0.1, 0.2, 0.3])  # the running reference until then
    ex = _plan(_goal("abc", [(0.25, [0.1, 0.1, 0.1]), (1.0, [0.0, 0.0, 0.0]), (2.0, [0.2, 0.2, 0.2])],
                     stamp=9.5))
    # now = 10: the point at 9.75 is passed (dropped); the others keep 10.5 and 11.5
    np.testing.assert_allclose(ex.spline.knots, [10.0, 10.5, 11.5], atol=1e-9)
    np.testing.assert_allclose(ex.point_times, [9.75, 10.5, 11.5], atol=1e-9)
    assert ex.point_index(10.2) == 1 and ex.point_index(12.0) == 2


@pytest.mark.parametrize("goal, code, words", [
    (_goal(["a", "x"], [(1.0, [0, 0])]), ft.INVALID_JOINTS, ["unknown joints ['x']"]),
    (_goal(["a", "a"], [(1.0, [0, 0])]), ft.INVALID_JOINTS, ["more than once", "'a'"]),
    (_goal([], [(1.0, [])]), ft.INVALID_JOINTS, ["no joints"]),
    (_goal(["a"], [(1.0, [0])], multi=["base"]), ft.INVALID_JOINTS, ["multi-DOF"]),
    (_goal(["a"], [(1.0, [0])], comp=[NS()]), ft.INVALID_JOINTS, ["component"]),
    (_goal(["a"], []), ft.INVALID_GOAL, ["no points"]),
    (_goal(["a", "b"], [(1.0, [0.0, float("nan")])]), ft.INVALID_GOAL, ["point 0", "positions of b", "NaN"]),
    (_goal(["a", "b"], [(1.0, [0.0, 0.0], [0.0, float("inf")])]), ft.INVALID_GOAL, ["velocities of b"]),
    (_goal(["a"], [(1.0, [0.0]), (1.0, [0.1])]), ft.INVALID_GOAL, ["points 0 and 1", "strictly increasing"]),
    (_goal(["a"], [(2.0, [0.0]), (1.0, [0.1])]), ft.INVALID_GOAL, ["points 0 and 1"]),
    (_goal(["a"], [(1.0, [0.0, 0.1])]), ft.INVALID_GOAL, ["malformed points"]),
    (_goal(["c", "b"], [(1.0, [0.0, 2.5])]), ft.INVALID_GOAL, ["position 2.5 of b", "[-2, 2]"]),
    (_goal(["a"], [(1.0, [0.5], [0.2])]), ft.INVALID_GOAL, ["last point's velocity of a", "at rest"]),
    (_goal(["a"], [(1.0, [0.5])], stamp=8.0), ft.OLD_HEADER_TIMESTAMP, ["ends at 9.000000 s"]),
    (_goal(["a"], [(1.0, [0.5])], stamp=9.0), ft.OLD_HEADER_TIMESTAMP, ["not after now"]),
    (_goal(["a"], [(1.0, [0.5])], stamp=1e5), ft.INVALID_GOAL, ["another clock"]),
    (_goal(["a"], [(1.0, [0.5])], path=[("x", 0.1, 0.0)]), ft.INVALID_GOAL, ["path_tolerance", "'x'"]),
    (_goal(["a"], [(1.0, [0.5])], goal=[("a", -2.0, 0.0)]), ft.INVALID_GOAL, ["goal_tolerance position of a", "-2"]),
    (_goal(["a"], [(1.0, [0.5])], goal_time=-0.5), ft.INVALID_GOAL, ["goal_time_tolerance"]),
    # inside the limits at the points, past them between (the positions-only spline overshoots)
    (_goal(["a"], [(1.0, [0.99]), (2.0, [-0.99])]), ft.INVALID_GOAL,
     ["the position of a reaches 1.02", "into the trajectory", "beyond its limit 1"]),
])
def test_refused_goals_carry_their_code_and_reason(goal: NS, code: int, words: list[str]) -> None:
    with pytest.raises(ft.GoalError) as info:
        _plan(goal)
    assert info.value.code == code
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize("default, value, expected", [
    (0.1, 0.2, 0.2), (0.1, 0.0, 0.1), (0.1, -1.0, 0.0), (0.0, 0.0, 0.0), (0.3, -1.0 + 1e-9, 0.0)])
def test_tolerance_rule_of_joint_trajectory_controller(default: float, value: float, expected: float) -> None:
    assert ft.resolve_tolerance(default, value, "x") == expected


@pytest.mark.parametrize("value", [-2.0, -0.5, float("nan"), float("inf")])
def test_illegal_tolerances_are_refused(value: float) -> None:
    with pytest.raises(ft.GoalError):
        ft.resolve_tolerance(0.1, value, "x")


def test_goal_tolerances_over_the_defaults() -> None:
    defaults = ft.ToleranceDefaults(path_position=0.05, goal_position=0.02, stopped_velocity=0.01, goal_time=0.5)
    tol = ft.goal_tolerances(_goal("abc", [(1.0, [0, 0, 0])], path=[("b", 0.2, 0.3), ("c", -1.0, 0.0)],
                                   goal=[("a", 0.0, 0.05)], goal_time=0.0), MODEL.joint_names, defaults)
    np.testing.assert_array_equal(tol.path_position, [0.05, 0.2, 0.0])
    np.testing.assert_array_equal(tol.path_velocity, [0.0, 0.3, 0.0])
    np.testing.assert_array_equal(tol.goal_position, [0.02, 0.02, 0.02])
    np.testing.assert_array_equal(tol.goal_velocity, [0.05, 0.01, 0.01])
    assert tol.goal_time == 0.5


def test_path_tolerance_violation_names_the_joint_and_holds_the_measured_position() -> None:
    ex = _plan(_goal("abc", [(2.0, [0.4, 0.5, 0.0], [0, 0, 0], [0, 0, 0])], path=[("a", 0.05, 0.0)]))
    q_d, qd_d = _at(ex, 11.0)
    ex.watch(11.0, q_d + 0.04, qd_d, q_d, qd_d)  # inside (0.04 < 0.05)
    assert ex.code is None
    ex.watch(9.0, q_d + 1.0, qd_d, q_d, qd_d)  # before the start: not checked
    assert ex.code is None
    actual = q_d + np.array([-0.06, 0.0, 0.3])  # c is off too, but has no path tolerance
    ex.watch(11.0, actual, qd_d, q_d, qd_d)
    assert ex.code == ft.PATH_TOLERANCE_VIOLATED
    assert ex.message.startswith("a: position error 0.06 (desired - actual) exceeds its path tolerance 0.05")
    np.testing.assert_array_equal(_at(ex, 11.5)[0], actual)  # holds where the arm was
    assert not ex.finish(ft.INVALID_GOAL, ft.PREEMPTED)  # already ended: stays a path violation
    assert ex.code == ft.PATH_TOLERANCE_VIOLATED


def test_goal_succeeds_inside_tolerance_or_fails_after_goal_time_naming_the_joint() -> None:
    goal = _goal("abc", [(1.0, [0.4, 0.5, 0.0])], goal=[("b", 0.01, 0.0)], goal_time=0.5)
    ex = _plan(goal)
    q_end = np.array([0.4, 0.5, 0.0])
    zero = np.zeros(3)
    ex.watch(11.2, q_end, np.array([0.0, 0.0, 0.02]), q_end, zero)  # c still moving (stopped: 0.01)
    assert ex.code is None
    ex.watch(11.6, q_end, np.array([0.0, 0.0, 0.02]), q_end, zero)  # 0.6 s > 0.5 s after the end
    assert ex.code == ft.GOAL_TOLERANCE_VIOLATED
    assert ex.message.startswith("c: velocity error -0.02") and "goal tolerance 0.01" in ex.message
    ex = _plan(goal)
    ex.watch(11.3, q_end + [0.0, 0.009, 0.0], zero, q_end, zero)
    assert ex.code == ft.SUCCESSFUL
    ex = _plan(_goal("abc", [(1.0, [0.4, 0.5, 0.0])], goal=[("b", 0.01, 0.0)]))  # goal_time 0: waits
    ex.watch(500.0, q_end + [0.0, 0.02, 0.0], zero, q_end, zero)
    assert ex.code is None
    assert ex.finish(ft.CANCELED, "canceled") and ex.code == ft.CANCELED


def test_a_goal_runs_in_the_control_loop_and_succeeds_on_perfect_tracking() -> None:
    """``ControlLoop.follow_goal`` hands the goal to the cycle, whose ``watch`` ends it: states
    equal to the reference succeed at the end; a trajectory on the topic replaces it."""
    from rbd_ros.control.laws import make_law
    from rbd_ros.control.loop import ControlLoop
    from rbd_ros.model import MdhModel
    from ros_helpers import REPO

    model = MdhModel.from_yaml(str(REPO / "config" / "arm7.yaml"))
    loop = ControlLoop(model, make_law("computed_torque", model), log=lambda lvl, msg: None)
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(7), model.lower, model.upper)
    loop.joint_state(names, q0, np.zeros(7), 1.0)
    with pytest.raises(ft.GoalError) as info:
        loop.follow_goal(_goal([names[2], "elbow"], [(0.5, [0.1, 0.1])]), ft.ToleranceDefaults())
    assert info.value.code == ft.INVALID_JOINTS
    target = q0.copy()
    target[2] += 0.1
    ex = loop.follow_goal(_goal([names[2]], [(0.5, [target[2]])], path=[(names[2], 1e-6, 0.0)]),
                          ft.ToleranceDefaults())
    assert loop.runs(ex)
    q, qd, qdd = np.zeros(7), np.zeros(7), np.zeros(7)
    for k in range(1, 700):
        t = 1.0 + k * 1e-3
        ex.spline.evaluate(t, q, qd, qdd)
        loop.joint_state(names, q, qd, t)
        loop.cycle(t)
        if ex.code is not None:
            break
    assert ex.code == ft.SUCCESSFUL and abs(t - 1.5) < 2e-3, (ex.code, ex.message, t)
    np.testing.assert_allclose(ex.desired[0], target, atol=1e-12)
    loop.trajectory(NS(header=NS(stamp=_dur(0.0)), joint_names=names,
                       points=[NS(time_from_start=_dur(1.0), positions=list(q0), velocities=[],
                                  accelerations=[])]))
    while not loop.idle():  # (the trajectory is planned off this thread)
        time.sleep(0.002)
    assert not loop.runs(ex)  # replaced: the action adapter ends the goal


def test_a_running_goal_adds_no_allocation_that_stays() -> None:
    """The cycle's goal checks (``watch``: sample copies and a jitted scan) keep nothing per
    cycle: over 2000 cycles with a goal running (path tolerances on every joint), the traced
    memory does not grow (a kept object per cycle would add 2000 x >= 16 B)."""
    import gc
    import tracemalloc

    from rbd_ros.control.laws import make_law
    from rbd_ros.control.loop import ControlLoop
    from rbd_ros.model import MdhModel
    from ros_helpers import REPO

    model = MdhModel.from_yaml(str(REPO / "config" / "arm7.yaml"))
    loop = ControlLoop(model, make_law("computed_torque", model), log=lambda lvl, msg: None)
    names = list(model.joint_names)
    q0 = np.clip(np.zeros(7), model.lower, model.upper)
    loop.joint_state(names, q0, np.zeros(7), 0.0)
    target = q0 + np.where(q0 < model.upper - 0.01, 0.01, -0.01)
    ex = loop.follow_goal(_goal(names, [(100.0, target)], path=[(j, 1.0, 10.0) for j in names]),
                          ft.ToleranceDefaults())
    q, qd = q0.copy(), np.zeros(7)
    ts = [1e-3 * k for k in range(1, 2601)]
    for t in ts[:500]:
        loop.joint_state(names, q, qd, t)
        loop.cycle(t)
    gc.collect()
    tracemalloc.start(1)
    try:
        marks = []
        for window in (ts[500:600], ts[600:1600], ts[1600:2600]):
            for t in window:
                loop.joint_state(names, q, qd, t)
                loop.cycle(t)
            marks.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    assert ex.code is None and ex.t == ts[-1]  # the goal ran, watched every cycle
    # (the first window settles tracemalloc's own bookkeeping; then 1000 cycles each)
    assert marks[2] - marks[1] < 256, f"{marks[2] - marks[1]} B kept over 1000 cycles"
