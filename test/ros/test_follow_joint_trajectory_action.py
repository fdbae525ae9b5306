"""``/controller/follow_joint_trajectory`` driven the way MoveIt drives it (issue 29).

A test action client written after MoveIt's ``moveit_simple_controller_manager``
(``FollowJointTrajectoryControllerHandle``: ``async_send_goal`` with the group's joints in its
own order, a goal-response check, then wait for the result and read ``error_code`` /
``error_string``; cancel through ``async_cancel_goal``) on a robot no other test names: the Unitree
Z1 of example-robot-data (6 joints to ``link06``; joint 2 and 3 limits touch 0), simulated by the
MuJoCo bridge in lockstep, separate controller node and composed.  The oracles are the goals
themselves (their target positions and the joint limits of the URDF) and ``/joint_states``:

* a goal with the joints in another order reaches its last point (goal tolerance 0.01 rad on
  every joint, checked against ``/joint_states``) and succeeds; its feedback's error is
  desired - actual;
* a second goal preempts the first (aborted, INVALID_GOAL "preempted"), and succeeds;
* then, the arm settled, goals with an unknown joint, a NaN, non-increasing times, a position
  outside the limits, or an old stamp end at once with their error code (INVALID_JOINTS,
  INVALID_GOAL, OLD_HEADER_TIMESTAMP) and a reason; meanwhile the reference
  (``~/controller_state``) does not move by a single bit and the arm holds still: nothing is
  partially executed;
* a cancel ends the goal canceled; the arm then holds still short of the goal's target;
* an unreachable timing for joint 1 (a 1 N m drive, ``effort_limit``, against the URDF's 1 N m of
  dry friction, asked for 1 rad in 0.7 s: ~1 N m of inertia torque alone) is refused before it
  moves (INVALID_GOAL naming the effort of joint1: the planner's torque check, issue 37); a path
  tolerance of 1e-8 rad, tighter than computed torque tracks, aborts with
  PATH_TOLERANCE_VIOLATED naming joint2;
* the topic ``~/joint_trajectory`` still works, and a trajectory there ends a running goal
  (aborted, INVALID_GOAL, naming the topic).

Lockstep keeps the physics independent of the load; when the client's preempt or cancel arrives
is not (the composed loop runs 4-8x real time), hence long goals for those.  A run covers 15-30 s
of simulated time composed (~10 s of wall) and ~12 s separate (~15-25 s of wall).
"""
from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

from robots_data import example_robot_urdf
from ros_helpers import NodeProcess, ros_context, spin_in_background

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

Z1 = "z1_description/urdf/z1.urdf"
JOINTS = [f"joint{i}" for i in range(1, 7)]
Q0 = np.array([0.0, 0.8, -0.8, 0.0, 0.0, 0.0])
EFFORT = [1.0, 60.0, 30.0, 30.0, 30.0, 30.0]  # joint 1's drive: 1 N m (the unreachable timing)
ACTION = "/controller/follow_joint_trajectory"
PERIOD = 0.025  # s: action_monitor_rate 40 Hz (the rate itself: test_follow_action_server)


def _t(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


class MoveItLikeClient:
    """FollowJointTrajectory client used as moveit_simple_controller_manager uses it, plus
    recorders of ``/joint_states`` and ``/controller/controller_state``."""

    def __init__(self, ctx) -> None:
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionClient
        from sensor_msgs.msg import JointState

        from rbd_ros.ros.common import recordable_qos

        self.Action = FollowJointTrajectory
        self.node = rclpy.create_node("moveit_like_client", context=ctx)
        self.client = ActionClient(self.node, FollowJointTrajectory, ACTION)
        self.cv = threading.Condition()
        self.states: list[tuple[float, np.ndarray]] = []  # /joint_states (t, q) in JOINTS order
        self.refs: list[tuple[float, np.ndarray]] = []  # controller_state (t, q_d)
        self.feedback: list = []
        self.qos, self.JointState = recordable_qos(), JointState
        # the recorders on a node (and thread) of their own: a backlog of states never delays
        # the action's feedback and result callbacks
        self.recorder = rclpy.create_node("moveit_like_recorder", context=ctx)
        self.recorder.create_subscription(JointState, "/joint_states", self._on_state, self.qos)
        from trajectory_msgs.msg import JointTrajectory

        self.traj_pub = self.node.create_publisher(JointTrajectory, "/controller/joint_trajectory", self.qos)
        self.spinner = spin_in_background(self.node)
        self.recorder_spinner = spin_in_background(self.recorder)

    @staticmethod
    def _row(msg) -> tuple[float, np.ndarray]:
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        index = [list(msg.name).index(j) for j in JOINTS]
        return t, np.asarray(msg.position)[index]

    def _on_state(self, msg) -> None:
        with self.cv:
            self.states.append(self._row(msg))
            self.cv.notify_all()

    def _on_ref(self, msg) -> None:
        with self.cv:
            self.refs.append(self._row(msg))

    def record_references(self) -> None:
        """Sample ``/controller/controller_state`` from now on: the latest message whenever
        this process gets to it (best effort, depth 1; every one of the composed loop's ~5 kHz
        would leave a Python subscriber ever further behind)."""
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        latest = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.recorder.create_subscription(self.JointState, "/controller/controller_state", self._on_ref, latest)

    def publish_trajectory(self, names: list[str], q: np.ndarray, seconds: float) -> None:
        """One point on ``/controller/joint_trajectory`` (the controller's topic), stamp 0."""
        from rbd_ros.ros.messages import to_joint_trajectory

        deadline = time.monotonic() + 30
        while self.traj_pub.get_subscription_count() == 0:
            assert time.monotonic() < deadline, "nobody subscribes /controller/joint_trajectory"
            time.sleep(0.02)
        self.traj_pub.publish(to_joint_trajectory(names, [seconds], np.asarray(q)[None]))

    def wait_still(self, since: float, window: float = 0.3, tol: float = 1e-4, limit: float = 10.0) -> float:
        """The first simulated time after ``since`` ending a ``window`` s in which no joint
        moved more than ``tol`` (the arm settled), within ``limit`` s."""
        t = since + window
        while t < since + limit:
            self.wait_sim(t)
            with self.cv:
                q = np.array([q for s, q in self.states if t - window <= s <= t])
            if len(q) and np.ptp(q, axis=0).max() < tol:
                return t
            t += 0.1
        raise AssertionError(f"the arm did not settle within {limit} s after t = {since}")

    def now(self) -> float:
        with self.cv:
            return self.states[-1][0] if self.states else -math.inf

    def wait_sim(self, t: float, timeout: float = 120.0) -> None:
        """Until ``/joint_states`` reaches simulated time ``t``."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while not self.states or self.states[-1][0] < t:
                assert time.monotonic() < deadline, f"simulated time stuck at {self.now()} < {t}"
                self.cv.wait(0.1)

    def state_at(self, t: float) -> np.ndarray:
        """The measured positions at simulated time ``t`` (the first state stamped >= t; the
        recorder may lag the fast lockstep stream: waits for it)."""
        self.wait_sim(t)
        with self.cv:
            return next(q for s, q in self.states if s >= t - 1e-9)

    def goal_feedback(self, handle) -> list:
        """The feedback messages of the goal of ``handle`` (MoveIt keeps one per goal)."""
        uuid = bytes(handle.goal_id.uuid)
        return [fb for gid, fb, _ in list(self.feedback) if gid == uuid]

    def wait_into_goal(self, handle, seconds: float, timeout: float = 60.0) -> None:
        """Until the goal's feedback is ``seconds`` past its start."""
        deadline = time.monotonic() + timeout
        while True:
            fbs = self.goal_feedback(handle)
            if fbs and _t(fbs[-1].desired.time_from_start) >= seconds:
                return
            assert time.monotonic() < deadline, f"no feedback {seconds} s into the goal"
            time.sleep(0.002)

    def end_of(self, handle, duration: float) -> float:
        """Simulated time of the goal's last point: its start (any feedback's stamp minus its
        time into the goal) plus ``duration``; the recorder's time if no feedback came."""
        fbs = self.goal_feedback(handle)
        if not fbs:
            return self.now()
        return _t(fbs[0].header.stamp) - _t(fbs[0].desired.time_from_start) + duration

    def last_feedback(self, handle):
        """The goal's latest feedback (given 0.1 s to arrive)."""
        time.sleep(0.1)
        return self.goal_feedback(handle)[-1]

    def goal(self, names: list[str], points: list[tuple], stamp: float = 0.0, path=(), goal=(),
             goal_time: float = 0.0):
        """A goal: points = [(time_from_start, positions)] (positions only: a spline through
        them that ends at rest)."""
        from builtin_interfaces.msg import Duration
        from control_msgs.msg import JointTolerance
        from trajectory_msgs.msg import JointTrajectoryPoint

        from rbd_ros.ros.messages import set_stamp

        g = self.Action.Goal()
        g.trajectory.joint_names = list(names)
        set_stamp(g.trajectory.header.stamp, stamp)
        for tfs, q in points:
            p = JointTrajectoryPoint(positions=[float(x) for x in q])
            p.time_from_start = Duration()
            set_stamp(p.time_from_start, tfs)
            g.trajectory.points.append(p)
        g.path_tolerance = [JointTolerance(name=n, position=v) for n, v in path]
        g.goal_tolerance = [JointTolerance(name=n, position=v) for n, v in goal]
        set_stamp(g.goal_time_tolerance, goal_time)
        return g

    def send(self, goal, timeout: float = 30.0):
        """MoveIt's sendTrajectory: the goal, and its handle once the server answered."""
        assert self.client.wait_for_server(timeout_sec=timeout), f"no action server {ACTION}"
        # by the spinning thread, sent again while unanswered (``send_goal_answered``: a first
        # goal's response lost to discovery on a loaded machine; a full suite run waited 30 s)
        handle = self.spinner.send_goal_answered(
            self.client, goal, timeout / 3, feedback_callback=lambda m: self.feedback.append(
                (bytes(m.goal_id.uuid), m.feedback, time.monotonic())))
        assert handle.accepted, "goal rejected without a result"
        return handle

    def result(self, handle, timeout: float = 120.0):
        """MoveIt's controllerDoneCallback: (status, error_code, error_string)."""
        res = self._wait(handle.get_result_async(), timeout, "the result")
        return res.status, res.result.error_code, res.result.error_string

    @staticmethod
    def _wait(future, timeout: float, what: str):
        deadline = time.monotonic() + timeout
        while not future.done():
            assert time.monotonic() < deadline, f"no {what} in {timeout} s"
            time.sleep(0.005)
        return future.result()

    def close(self) -> None:
        self.spinner.shutdown(timeout_sec=1.0)
        self.recorder_spinner.shutdown(timeout_sec=1.0)
        self.recorder.destroy_node()
        self.client.destroy()
        self.node.destroy_node()


def _run_scenarios(client: MoveItLikeClient) -> None:
    from action_msgs.msg import GoalStatus

    R = client.Action.Result
    client.wait_sim(0.2)
    shuffled = ["joint3", "joint1", "joint2"]  # a partial goal, another order: the rest hold

    # ---- success: last point reached within the goal tolerance ------------------------------
    target = Q0 + [0.0, 0.3, -0.3, 0.2, 0.0, 0.0]
    full = [JOINTS[i] for i in (3, 1, 2, 0, 5, 4)]
    g = client.goal(full, [(0.4, (Q0 + (target - Q0) / 2)[[3, 1, 2, 0, 5, 4]]),
                           (0.8, target[[3, 1, 2, 0, 5, 4]])],
                    goal=[(j, 0.01) for j in JOINTS], goal_time=1.0)
    handle = client.send(g)
    status, code, text = client.result(handle)
    assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, R.SUCCESSFUL), text
    # the arm settles at the last point (after the result: the recorder may lag the arm)
    np.testing.assert_allclose(client.state_at(client.wait_still(client.end_of(handle, 0.8))), target, atol=0.01)
    fbs = client.goal_feedback(handle)  # (the last may be dropped: rclpy's client forgets a
    assert fbs  # goal's feedback callback once its result is in)
    for fb in fbs:
        assert list(fb.joint_names) == JOINTS
        np.testing.assert_allclose(np.array(fb.error.positions),
                                   np.array(fb.desired.positions) - np.array(fb.actual.positions), atol=1e-12)
        into = _t(fb.desired.time_from_start)
        if abs(into - 0.4) > 1e-6:
            assert fb.index == (0 if into < 0.4 else 1), (into, fb.index)
        if into >= 0.8 - 1e-6:
            np.testing.assert_allclose(fb.desired.positions, target, atol=1e-9)  # the last point, held

    # ---- preemption: the second goal replaces the first ----------------------------------------
    first = client.send(client.goal(shuffled, [(60.0, [-0.8, 0.0, 1.1])]))  # long: lockstep runs fast
    client.wait_into_goal(first, 0.3)
    second = client.send(client.goal(shuffled, [(0.6, [-0.6, 0.0, 0.9])], goal=[("joint2", 0.01)]))
    status, code, text = client.result(first)
    assert (status, code) == (GoalStatus.STATUS_ABORTED, R.INVALID_GOAL) and "preempted" in text, text
    status, code, text = client.result(second)
    assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, R.SUCCESSFUL), text
    t_done = client.wait_still(client.end_of(second, 0.6))
    start = client.state_at(t_done)
    assert abs(start[1] - 0.9) < 0.01, start  # the goal tolerance of joint 2

    # ---- refused goals: their code, a reason, and the arm untouched --------------------------------
    t_from = t_done  # settled on the last goal's target
    client.record_references()
    here = client.state_at(t_from)
    bad = {
        R.INVALID_JOINTS: client.goal(["joint2", "elbow"], [(1.0, [1.0, 0.0])]),
        R.INVALID_GOAL: client.goal(["joint2"], [(1.0, [float("nan")])]),
        -10: client.goal(["joint2"], [(1.0, [1.0]), (0.5, [1.1])]),  # non-increasing times
        -11: client.goal(["joint3"], [(1.0, [0.4])]),  # joint 3's upper limit is 0
        R.OLD_HEADER_TIMESTAMP: client.goal(["joint2"], [(0.1, [1.0])], stamp=max(1e-3, t_from - 1.0)),
    }
    words = {R.INVALID_JOINTS: "unknown joints ['elbow']", R.INVALID_GOAL: "NaN",
             -10: "not strictly increasing", -11: "outside its limits", R.OLD_HEADER_TIMESTAMP: "ends at"}
    for key, g in bad.items():
        status, code, text = client.result(client.send(g))
        assert status == GoalStatus.STATUS_ABORTED, (key, text)
        assert code == (R.INVALID_GOAL if key < -5 else key), (key, code, text)
        assert words[key] in text, (key, text)
    client.wait_sim(client.now() + 0.5)
    with client.cv:
        refs = np.array([q for t, q in client.refs if t >= t_from])
        moved = np.array([q for t, q in client.states if t >= t_from])
    # (the depth-1 best-effort sampler got 9 of the 0.5 s window at load 9: a few suffice)
    assert len(refs) >= 3 and np.ptp(refs, axis=0).max() == 0.0, "the reference moved"
    assert np.abs(moved - here).max() < 1e-3, "the arm moved during the refused goals"

    # ---- cancel: canceled, then holding still short of the target -------------------------------
    handle = client.send(client.goal(["joint2"], [(30.0, [1.6])]))
    client.wait_into_goal(handle, 6.0)
    client._wait(handle.cancel_goal_async(), 30, "the cancel response")
    status, code, _ = client.result(handle)
    assert status == GoalStatus.STATUS_CANCELED and code == R.SUCCESSFUL
    t_cancel = _t(client.last_feedback(handle).header.stamp)  # (at most a monitor period before it)
    client.wait_sim(t_cancel + 2.0)
    with client.cv:
        late = np.array([q for t, q in client.states if t_cancel + 1.5 <= t <= t_cancel + 2.0])
    assert np.ptp(late, axis=0).max() < 1e-3, "the arm does not hold still after the cancel"
    assert start[1] + 0.01 < late[-1][1] < 1.6 - 0.02, ("stopped where it was, short of 1.6", late[-1][1])

    # ---- an unreachable timing for joint 1's 1 N m drive: refused before it moves (issue 37) ------
    q_before = client.state_at(t_cancel + 2.0)
    g = client.goal(["joint1"], [(0.7, [q_before[0] + 1.0])], path=[("joint1", 0.05)])
    status, code, text = client.result(client.send(g))
    assert (status, code) == (GoalStatus.STATUS_ABORTED, R.INVALID_GOAL), text
    assert text.startswith("the effort of joint1 reaches") and "effort limit 1 N m" in text, text

    # ---- path tolerance: tighter than computed torque tracks (~1e-6 rad) ---------------------------
    g = client.goal(["joint2"], [(0.8, [q_before[1] - 0.2])], path=[("joint2", 1e-8)])
    status, code, text = client.result(client.send(g))
    assert (status, code) == (GoalStatus.STATUS_ABORTED, R.PATH_TOLERANCE_VIOLATED), text
    assert text.startswith("joint2: position error") and "path tolerance 1e-08" in text, text

    # ---- the topic ~/joint_trajectory stays, and a trajectory there replaces a running goal ---------
    now = client.state_at(client.now())
    handle = client.send(client.goal(["joint2"], [(60.0, [now[1] + 0.3])]))
    client.wait_into_goal(handle, 0.3)
    # to where the reference is (the goal's feedback): joint1 not moved at all (its drive's 1 N m
    # is all the URDF's dry friction: the planner refuses any motion of it, rightly, issue 37)
    fb = client.last_feedback(handle)
    here = dict(zip(fb.joint_names, fb.desired.positions))
    client.publish_trajectory(JOINTS, np.array([here[j] for j in JOINTS]), 2.0)
    status, code, text = client.result(handle)
    assert (status, code) == (GoalStatus.STATUS_ABORTED, R.INVALID_GOAL) and "~/joint_trajectory" in text, text


@pytest.mark.parametrize("composed", [True, False], ids=["composed", "separate"])
def test_follow_joint_trajectory_like_moveit(composed: bool) -> None:
    urdf = str(example_robot_urdf(Z1))
    robot = ["-p", f"urdf_path:={urdf}", "-p", "tip_link:=link06"]
    law = ["-p", f"effort_limit:={EFFORT}", "-p", f"action_monitor_rate:={1 / PERIOD}"]
    bridge = ["mujoco-bridge", "--ros-args", *robot, "-p", "mode:=lockstep",
              "-p", f"initial_positions:={Q0.tolist()}"]
    procs: list[NodeProcess] = []
    with ros_context() as ctx:
        client = MoveItLikeClient(ctx)
        try:
            if composed:
                procs.append(NodeProcess([*bridge, *law, "-p", "controller_type:=computed_torque",
                                          "-p", "publish_every:=5"]))  # /joint_states at 1/5 of the steps
                procs[0].wait_for("mujoco_bridge: ready", 180)
            else:
                procs.append(NodeProcess(bridge))
                procs[0].wait_for("mujoco_bridge: ready", 180)
                procs.append(NodeProcess(["controller", "--ros-args", *robot, *law,
                                          "-p", "type:=computed_torque", "-p", "rate:=1000.0"]))
                procs[1].wait_for("controller: ready", 180)
            _run_scenarios(client)
            if not composed:  # the action's own executor thread: the node keeps the lean one
                assert "SingleThreadedExecutor instead" not in procs[1].output
        except BaseException:
            for p in procs:
                print(p.output[-6000:])
            raise
        finally:
            client.close()
            codes = [p.stop() for p in procs]
            print(procs[0].output.splitlines()[-1])  # the bridge's stats: simulated time, rtf
    # SIGINT after the goal sequence: status 0, no abort (issue 37: the action's threads joined)
    assert codes == [0] * len(procs) and not any("terminate called" in p.output for p in procs), codes
