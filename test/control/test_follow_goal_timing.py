"""A FollowJointTrajectory goal in ``ControlLoop`` while the cycle runs (issue 37), ROS-free, on
Centauro's 7-joint chain from ``pelvis`` to ``arm1_6`` (torso yaw and one arm; no other test
names it):

* planning runs in the caller's thread while a cycle thread goes on at ~1 kHz of control time
  holding its reference; a 10 000-point goal stamped 0 (a slow 30 s ramp from where the arm
  is) starts at its first point: the reference never steps by more than the ramp's own motion
  in a cycle (today's code started the spline when planning began, so the first cycles after
  the hand-over skipped the planning time: a step of speed x planning time);
* efforts in the points are a feed-forward torque: computed torque and PD + gravity add them
  (the torque with the goal's efforts minus the torque without them, same state and time,
  equals the efforts interpolated by hand: the first point's from the start, linear between
  the points, the last held), sizes and limits are checked, a law that cannot add them refuses
  the goal naming why, and a goal without efforts after one with them adds nothing;
* a ``~/target_pose`` joint move goes through the goals' planner: retimed when too fast, or
  refused under ``retime: never``.
"""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace as NS

import numpy as np
import pytest
from test_follow_trajectory import _goal

from rbd_ros.control import follow_trajectory as ft
from robots_data import example_robot_urdf

# a goal handed to the cycle within a wall-clock bound: never on the idle lane (test/support/xdist_lanes.py)
pytestmark = pytest.mark.realtime

CENTAURO = "centauro_description/urdf/centauro.urdf"


@pytest.fixture(scope="module")
def model():
    from rbd_ros.robot import Robot

    return Robot.from_urdf(str(example_robot_urdf(CENTAURO)), base_link="pelvis", tip_link="arm1_6").model


def _loop(model, law: str = "computed_torque"):
    from rbd_ros.control.laws import make_law
    from rbd_ros.control.loop import ControlLoop

    return ControlLoop(model, make_law(law, model), log=lambda lvl, msg: None)


def _start(model) -> np.ndarray:
    return np.clip(np.full(model.dof, 0.1), model.lower + 0.3, model.upper - 0.3)


def _cycling(loop, q0: np.ndarray, send, after: float = 0.3):
    """Run ``loop``'s cycle in a thread at ~1 kHz of control time (= wall time since the
    start), on perfect tracking (the state is the previous cycle's reference); ``send()`` from
    this thread (plans there) after 50 ms; ``after`` s more once it returned.  Returns
    ``(times, references, what send returned, control time when it returned, wall s it took)``."""
    names, n = list(loop.model.joint_names), loop.model.dof
    refs: list[tuple[float, np.ndarray]] = []
    stop = threading.Event()
    t_base = time.monotonic()

    def cycles() -> None:
        q, qd = q0.copy(), np.zeros(n)
        while not stop.is_set():
            t = time.monotonic() - t_base
            loop.joint_state(names, q, qd, t)
            loop.cycle(t)
            q, qd = loop.ref.q.copy(), loop.ref.qd.copy()
            refs.append((t, q))
            time.sleep(0.001)

    worker = threading.Thread(target=cycles, daemon=True)
    worker.start()
    try:
        time.sleep(0.05)
        wall = time.monotonic()
        out = send()
        took = time.monotonic() - wall
        handed = time.monotonic() - t_base
        while time.monotonic() - t_base < max(handed, out.start_time) + after:
            time.sleep(0.01)
    finally:
        stop.set()
        worker.join(2.0)
    return np.array([r[0] for r in refs]), np.array([r[1] for r in refs]), out, handed, took


def _no_jump(t: np.ndarray, q: np.ndarray, speed: float, what: str) -> None:
    """No step of the recorded reference beyond ``speed`` (rad/s, the trajectories' own peak)
    times the cycle's gap (x 1.5; a cycle up to 50 ms apart on a loaded machine)."""
    steps = np.abs(np.diff(q, axis=0)).max(axis=1)
    gaps = np.diff(t)
    limit = speed * np.maximum(gaps, 1e-3) * 1.5 + 1e-9
    worst = int(np.argmax(steps / limit))
    assert steps[worst] <= limit[worst], (f"the reference stepped {steps[worst]:.3g} rad in "
                                          f"{gaps[worst] * 1e3:.1f} ms at t = {t[worst + 1]:.3f} s ({what})")


def _ramp(names, q0: np.ndarray, m: int, duration: float, rise: float, delay: float = 0.0):
    """A goal of ``m`` points: a cosine ramp of ``rise`` rad on every joint over ``duration`` s
    (at rest at both ends), from ``q0``, its first point ``delay`` s after the start."""
    times = delay + np.linspace(duration / m, duration, m)
    s = 0.5 - 0.5 * np.cos(np.pi * (times - delay) / duration)
    return _goal(names, [(t, q0 + rise * x) for t, x in zip(times, s)])


def test_a_10000_point_goal_stamped_0_starts_at_its_first_point_while_the_cycle_runs(model) -> None:
    loop = _loop(model)
    names, n = list(model.joint_names), model.dof
    q0 = _start(model)
    loop.joint_state(names, q0, np.zeros(n), 0.0)
    rise, duration = 0.3, 30.0  # rad over 30 s: a peak speed of pi/2 x 0.01 rad/s
    t, q, ex, handed, planned = _cycling(loop, q0, lambda: loop.follow_goal(
        _ramp(names, q0, 10_000, duration, rise), ft.ToleranceDefaults()))
    assert ex.start_time >= handed - 0.05 and loop.runs(ex), (ex.start_time, handed, planned)
    after = t > ex.start_time
    assert after.sum() > 50, "the cycle did not run the goal"
    _no_jump(t, q, np.pi / 2 * rise / duration, f"goal from {ex.start_time:.3f} s, planned in {planned:.3f} s")
    np.testing.assert_allclose(q[np.argmax(after)], q0, atol=1e-4)  # its first reference: where the arm was


def test_a_goal_planned_while_another_moves_the_arm_joins_it_where_it_will_be(model) -> None:
    """The reference in use moves: the plan is made for a start ahead (the lead learnt from
    the plan that missed its start), the moving reference goes on until then, and the new goal
    starts from its state there: no step, no start in the past."""
    loop = _loop(model)
    names, n = list(model.joint_names), model.dof
    q0 = _start(model)
    loop.joint_state(names, q0, np.zeros(n), 0.0)
    first = loop.follow_goal(_ramp(names, q0, 2, 20.0, 0.2), ft.ToleranceDefaults())
    second = _ramp(names, q0 + 0.05, 4000, 10.0, -0.1, delay=1.0)
    t, q, ex, handed, planned = _cycling(loop, q0, lambda: loop.follow_goal(second, ft.ToleranceDefaults()))
    assert not loop.runs(first) and loop.runs(ex)
    assert ex.start_time >= handed - 0.05, (ex.start_time, handed, planned)
    speed = max(np.abs(s.sample(np.linspace(s.start_time, s.end_time, 4000))[1]).max()
                for s in (first.spline, ex.spline))
    _no_jump(t, q, speed, f"goal from {ex.start_time:.3f} s, planned in {planned:.3f} s")
    qa, qb = np.zeros(n), np.zeros(n)
    first.evaluate(ex.start_time, qa, np.zeros(n), np.zeros(n))
    ex.evaluate(ex.start_time, qb, np.zeros(n), np.zeros(n))
    np.testing.assert_allclose(qb, qa, atol=1e-12)  # the new goal starts where the old one is


def _effort_goal(names, q0, efforts):
    goal = _goal(names, [(0.5, q0), (1.0, q0)])
    for p, e in zip(goal.trajectory.points, efforts):
        p.effort = list(e)
    return goal


@pytest.mark.parametrize("law", ["computed_torque", "pd_gravity"])
def test_efforts_in_points_are_added_as_a_feed_forward_torque(model, law: str) -> None:
    names, n = list(model.joint_names), model.dof
    q0 = _start(model)
    e1 = np.linspace(-2.0, 3.0, n)  # N m, well inside the limits (55-147 N m)
    e2 = np.linspace(4.0, -1.0, n)
    torques = {}
    for with_efforts in (False, True):
        loop = _loop(model, law)
        loop.joint_state(names, q0, np.zeros(n), 1.0)
        goal = _effort_goal(names, q0, [e1, e2]) if with_efforts else _goal(names, [(0.5, q0), (1.0, q0)])
        loop.follow_goal(goal, ft.ToleranceDefaults())
        torques[with_efforts] = [loop.cycle(t).copy() for t in (1.25, 1.5, 1.75, 2.5)]
    # by hand: e1 from the start (t = 1) to the first point at 1.5, to e2 at 2.0, then e2 held
    expected = [e1, e1, 0.5 * (e1 + e2), e2]
    for with_ff, without, e in zip(torques[True], torques[False], expected):
        np.testing.assert_allclose(with_ff - without, e, atol=1e-9)


def test_efforts_are_size_and_limit_checked_and_refused_by_laws_that_cannot_add_them(model) -> None:
    names, n = list(model.joint_names), model.dof
    q0 = _start(model)
    cases = [("computed_torque", [np.zeros(n - 1), np.zeros(n - 1)], "6 efforts for 7 joints"),
             ("computed_torque", [np.zeros(n), np.full(n, 1e6)], "point 1: effort 1e+06 of torso_yaw is beyond"),
             ("pd", [np.zeros(n), np.ones(n)], "the pd law cannot add"),
             ("task_pd", [np.zeros(n), np.ones(n)], "the task_pd law cannot add")]
    for law, efforts, words in cases:
        loop = _loop(model, law)
        loop.joint_state(names, q0, np.zeros(n), 1.0)
        before = loop._latest()[0]
        with pytest.raises(ft.GoalError) as info:
            loop.follow_goal(_effort_goal(names, q0, efforts), ft.ToleranceDefaults())
        assert info.value.code == ft.INVALID_GOAL and words in str(info.value), (law, str(info.value))
        assert loop._latest()[0] is before  # nothing changed


def test_a_goal_after_an_effort_goal_adds_nothing(model) -> None:
    names, n = list(model.joint_names), model.dof
    q0 = _start(model)
    loop = _loop(model)
    loop.joint_state(names, q0, np.zeros(n), 1.0)
    loop.follow_goal(_effort_goal(names, q0, [np.ones(n), np.ones(n)]), ft.ToleranceDefaults())
    with_ff = loop.cycle(2.5).copy()
    loop.follow_goal(_goal(names, [(0.5, q0)]), ft.ToleranceDefaults())
    plain = loop.cycle(3.5).copy()
    np.testing.assert_allclose(with_ff - plain, np.ones(n), atol=1e-9)
    assert not loop.ref.feedforward and not loop.ref.effort.any()


@pytest.mark.parametrize("retime", ["when_infeasible", "never"])
def test_a_target_pose_move_goes_through_the_goals_planner(model, retime: str) -> None:
    """``~/target_pose`` for a joint-space law: its joint move (``pose_duration`` 0.05 s, far
    beyond the velocity limits) is retimed under ``when_infeasible`` (the move handed to the
    cycle lasts longer, the log says "retimed") and refused under ``never`` naming the limit."""
    from rbd_ros.robot import Robot

    lines: list[str] = []
    loop = _loop(model)
    loop.log = lambda level, msg: lines.append(msg)
    loop.retime, loop.pose_duration = retime, 0.05
    names, n = list(model.joint_names), model.dof
    q0 = _start(model)
    loop.joint_state(names, q0, np.zeros(n), 1.0)
    q1 = q0 + np.array([0.4, 0.2, 0.1, 0.0, 0.1, 0.0, 0.0])
    T1 = Robot(model).fk(q1)
    pose = NS(header=NS(frame_id=""), pose=NS(position=NS(x=T1[0, 3], y=T1[1, 3], z=T1[2, 3]),
                                              orientation=_quaternion(T1)))
    assert loop.target_pose(pose)
    deadline = time.monotonic() + 60
    while not loop.idle() or not any("target pose" in line for line in lines):
        assert time.monotonic() < deadline, lines
        time.sleep(0.01)
    move = loop._latest()[0]
    if retime == "never":
        assert any(line.startswith("target pose refused: the ") and "beyond" in line
                   and "when_infeasible would slow it down" in line for line in lines), lines
        assert not hasattr(move, "knots")  # still the hold
    else:
        text = next(line for line in lines if line.startswith("target pose accepted"))
        assert "retimed to" in text and move.end_time - move.start_time > 0.1, (text, move.end_time)


def _quaternion(T: np.ndarray) -> NS:
    from rbd_ros.lie.so3 import rotation_to_quaternion

    x, y, z, w = rotation_to_quaternion(T[:3, :3])
    return NS(x=x, y=y, z=z, w=w)
