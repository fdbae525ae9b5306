"""Issues 26 and 27 through processes: the controller's cycle is never stalled by a slow IK
(separate node against the stand-in arm, and composed in the MuJoCo bridge), a timer-triggered
controller plans and evaluates on the states' clock, and the saturation numbers it publishes
on ``~/diagnostics`` are those of the commands it sent.

A 2 s IK comes from the test hook ``RBD_ROS_TEST_IK_DELAY=2.0`` (``rbd_ros.control.loop``).  A
cycle that waited for the IK would leave a gap of 2 s; the tests allow gaps up to 3/4 of it
(``MAX_GAP``), because the machine running the suite also runs another worker's test and can
deschedule a process for a few hundred milliseconds (CI measured a 0.50 s gap with the cycle
free, at 0.5 s of simulated time per wall second; a loaded local run 1.02 s).
"""
from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from test_control_node import Peer, arm_process  # noqa: F401 - the stand-in arm fixture

from ros_helpers import REPO, NodeProcess, ros_context

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

ARM7 = str(REPO / "config" / "arm7.yaml")
READY = "controller: ready"
Q0 = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])
IK_DELAY = 2.0  # s
SLOW_IK = {"RBD_ROS_TEST_IK_DELAY": str(IK_DELAY)}
MAX_GAP = 0.75 * IK_DELAY  # s: a cycle blocked by the IK leaves a gap of IK_DELAY; a loaded
# suite run (a cold compile beside it) saw a 1.02 s gap in a composed loop that was not blocked


class TimedPeer(Peer):
    """``Peer`` that also keeps the wall time each command and controller state arrived, and
    the controller's diagnostics."""

    def __init__(self, ctx) -> None:
        from std_msgs.msg import String

        self.command_wall: list[float] = []
        self.state_wall: list[float] = []
        self.diagnostics: list[dict] = []
        super().__init__(ctx)
        self.node.create_subscription(String, "/controller/diagnostics",
                                      lambda m: self._append(self.diagnostics, json.loads(m.data)), 10)

    def _on_command(self, msg) -> None:
        with self.cv:
            self.command_wall.append(time.monotonic())
        super()._on_command(msg)

    def _on_state(self, msg) -> None:
        with self.cv:
            self.state_wall.append(time.monotonic())
        super()._on_state(msg)


def _pose(T: np.ndarray):
    from geometry_msgs.msg import PoseStamped

    from rbd_ros.lie.so3 import rotation_to_quaternion

    msg = PoseStamped()
    p, o = T[:3, 3], rotation_to_quaternion(T[:3, :3])
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = map(float, p)
    msg.pose.orientation.x, msg.pose.orientation.y, msg.pose.orientation.z, msg.pose.orientation.w = map(float, o)
    return msg


def _gaps_while(walls: list[float], t0: float, t1: float) -> tuple[int, float]:
    """How many arrivals in ``[t0, t1]`` and the longest gap between arrivals there (s)."""
    w = np.array([x for x in walls if t0 <= x <= t1])
    edges = np.r_[t0, w, t1]
    return len(w), float(np.diff(edges).max())


def test_slow_ik_does_not_stall_the_node(node_process, arm_process) -> None:  # noqa: F811
    """computed_torque node, lockstep stand-in arm, a target pose whose IK takes 2 s: the
    commands keep coming during those 2 s (no gap > MAX_GAP), none is the zero torque of the
    watchdog, no stale-state line; then the arm reaches the pose (fk of the measured q)."""
    from rbd_ros.robot import Robot

    robot = Robot.from_yaml(ARM7)
    T1 = robot.fk(Q0 + 0.08)
    with ros_context() as ctx:
        peer = TimedPeer(ctx)
        try:
            arm_process(["--model-yaml", ARM7, "--q0", ",".join(map(str, Q0)), "--actuators"])
            proc = node_process(["controller", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p",
                                 "type:=computed_torque", "-p", "pose_duration:=0.3"], ready=READY, env=SLOW_IK)
            peer.wait(lambda: len(peer.states) > 50, 60, "controller_state")
            peer.wait_subscribed(peer.pose_pub)
            sent, start_lines = time.monotonic(), len(proc.lines)
            peer.pose_pub.publish(_pose(T1))
            line = proc.wait_for("target pose accepted: IK q", 30)
            done = time.monotonic()
            t_move = float(line.split("from t = ")[1].split()[0])
            assert done - sent > IK_DELAY - 0.1  # the solver did take its time
            assert "off the control cycle" in line
            with peer.cv:
                count, gap = _gaps_while(peer.command_wall, sent + 0.05, done - 0.05)
                k0 = len(peer.commands)
            print(f"during the {IK_DELAY:g} s IK: {count} commands, longest gap {gap * 1e3:.1f} ms")
            assert count > 50 and gap < MAX_GAP, (count, gap)
            peer.wait(lambda: peer.states[-1][0] > t_move + 0.8, 60, "0.8 s of simulated time")
            with peer.cv:
                _, q_ref, q_meas, _ = peer.states[-1]
                commands = np.array(peer.commands[:k0])
            assert not any(not c.any() for c in commands)  # no zero torque
            # no stale-state line at all; from the pose on, no "busy" line longer than the gaps
            # the commands may have (MAX_GAP): a cycle blocked by the IK would be busy IK_DELAY.
            # A "busy" line itself is no failure: the watchdog says so at 0.2 s, and a process
            # not running for 0.2 s beside another suite worker is the machine's (CI's runs saw
            # it at start-up, and 0.7 s after the IK, in a run whose commands had a 0.22 s gap
            # during the IK too)
            assert "older than" not in proc.output, proc.output[-2000:]
            busy = [float(x.split("busy for ")[1].split(" s")[0])
                    for x in proc.lines[start_lines:] if "busy for " in x]
            assert all(b < MAX_GAP for b in busy), (busy, proc.output[-2000:])
            np.testing.assert_allclose(robot.fk(q_meas), T1, atol=2e-3)
            np.testing.assert_allclose(robot.fk(q_ref), T1, atol=1e-5)
        finally:
            peer.close()


def _latest_state(peer: TimedPeer) -> list:
    """A one-element list that holds the newest ``(t, q_ref, q_meas)`` of the controller states
    (a keep-last-1 subscription on the peer's node, beside its every-sample one)."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    latest: list = []

    def on_state(msg) -> None:
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        peer._append(latest, (t, np.array(msg.position), np.array(msg.velocity)))
        with peer.cv:
            del latest[:-1]

    peer.node.create_subscription(JointState, "/controller/controller_state", on_state,
                                  QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
    return latest


def test_slow_ik_does_not_stall_the_composed_bridge() -> None:
    """Composed lockstep (the law in the bridge's stepping loop), a target pose whose IK takes
    2 s: the controller states keep coming and the simulated time keeps going during it, then
    the arm is at the pose; the controller's diagnostics come from the bridge's process."""
    from rbd_ros.robot import Robot

    robot = Robot.from_yaml(ARM7)
    T1 = robot.fk(Q0 + 0.08)
    bridge = NodeProcess(["mujoco-bridge", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p", "mode:=lockstep",
                          "-p", f"initial_positions:={Q0.tolist()}", "-p", "controller_type:=computed_torque",
                          "-p", "pose_duration:=0.3", "-p", "publish_every:=10"], env=SLOW_IK)
    try:
        with ros_context() as ctx:
            peer = TimedPeer(ctx)
            latest = _latest_state(peer)
            try:
                bridge.wait_for("mujoco_bridge: ready", 120)
                peer.wait(lambda: len(peer.states) > 50, 60, "controller_state")
                peer.wait_subscribed(peer.pose_pub)
                with peer.cv:
                    t_sent = peer.states[-1][0]
                sent = time.monotonic()
                peer.pose_pub.publish(_pose(T1))
                line = bridge.wait_for("target pose accepted: IK q", 30)
                done = time.monotonic()
                t_move = float(line.split("from t = ")[1].split()[0])  # the bridge's time then
                with peer.cv:
                    count, gap = _gaps_while(peer.state_wall, sent + 0.05, done - 0.05)
                    t_done = peer.states[-1][0]
                print(f"composed, during the {IK_DELAY:g} s IK: {count} controller states, longest gap "
                      f"{gap * 1e3:.1f} ms, {t_done - t_sent:.3f} s simulated")
                assert done - sent > IK_DELAY - 0.1 and count > 50 and gap < MAX_GAP, (done - sent, count, gap)
                assert t_done - t_sent > 0.1  # the simulation went on meanwhile
                # the peer's every-sample states lag the bridge's time by seconds (the loop steps
                # back to back): the state past the move's end from a keep-last-1 subscription
                peer.wait(lambda: latest and latest[0][0] > t_move + 0.8, 60, "0.8 s of simulated time")
                with peer.cv:
                    _, q_ref, q_meas = latest[0]
                np.testing.assert_allclose(robot.fk(q_ref), T1, atol=1e-5)
                np.testing.assert_allclose(robot.fk(q_meas), T1, atol=2e-3)
                peer.wait(lambda: len(peer.diagnostics) > 0, 10, "the controller's diagnostics")
                diag = peer.diagnostics[-1]
                assert diag["joints"] == [f"joint{i}" for i in range(1, 8)] and diag["cycles"] > 0
            finally:
                peer.close()
    finally:
        bridge.stop()


@pytest.mark.parametrize("use_sim_time", [False, True])
def test_timer_trigger_plans_on_the_states_clock(node_process, use_sim_time) -> None:
    """A timer-triggered controller (500 Hz of wall time) against the bridge in lockstep (one
    2 ms step per command: the simulation runs at the pace of the commands, slower than real
    time on a loaded machine): a 2 s target-pose move takes 2 s of the states' time, its
    reference on the quintic at every state's stamp, whatever the wall time it took.  With
    ``use_sim_time`` (the node clock is the bridge's /clock) the same: the timer paces by the
    wall clock, it does not wait for a simulated time that waits for its commands."""
    from rbd_ros.robot import Robot

    robot = Robot.from_yaml(ARM7)
    T1 = robot.fk(Q0 + 0.05)
    with ros_context() as ctx:
        peer = TimedPeer(ctx)
        try:
            node_process(["mujoco-bridge", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p", "mode:=lockstep",
                          "-p", "timestep:=0.002", "-p", f"initial_positions:={Q0.tolist()}"],
                         ready="mujoco_bridge: ready")
            proc = node_process(["controller", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p",
                                 "type:=computed_torque", "-p", "trigger:=timer", "-p", "rate:=500.0",
                                 "-p", "pose_duration:=2.0", "-p", f"use_sim_time:={str(use_sim_time).lower()}"],
                                ready=READY)
            # the loop is closed once the bridge steps on the controller's commands (50 steps
            # here), not after 50 controller states: the timer publishes those within 0.1 s on
            # the idle bridge's states (stamped 0, timed by the node clock) while discovery of
            # the bridge's command subscription may take seconds on a loaded machine; a pose sent
            # then is planned on the node clock and dropped at the change to the simulation's
            # clock (ControlLoop._clock_jumped): CI waited 120 s for its end, a local run saw
            # only wall-stamped states
            peer.wait(lambda: bool(peer.states) and 0.1 < peer.states[-1][0] < 1e6, 120,
                      "the bridge stepping on the controller's commands")
            peer.wait_subscribed(peer.pose_pub)
            wall0 = time.monotonic()
            peer.pose_pub.publish(_pose(T1))
            line = proc.wait_for("target pose accepted: IK q", 30)
            t_start = float(line.split("from t = ")[1].split()[0])  # the move's start, states' clock
            peer.wait(lambda: peer.states[-1][0] > t_start + 2.1, 120, "2.1 s of the states' time")
            wall = time.monotonic() - wall0
            with peer.cv:
                states = list(peer.states)
        finally:
            peer.close()
    # before the bridge's first step its idle states are stamped 0, which the controller takes
    # for unstamped: without use_sim_time it plans those first cycles on its wall clock (1.8e9 s);
    # the states' clock is what follows (the move's start t_start is on it)
    states = [s for s in states if s[0] < 1e6]
    t = np.array([s[0] for s in states])
    assert np.all(np.diff(t) >= 0)
    ref = np.array([s[1] for s in states])
    q1 = ref[-1]
    np.testing.assert_allclose(robot.fk(q1), T1, atol=1e-5)  # the move ends at the pose
    q_start = ref[np.searchsorted(t, t_start) - 1]  # the hold before the move
    moved = np.flatnonzero(np.abs(ref - q_start).max(axis=1) > 1e-9)
    print(f"first state off the start at t = {t[moved[0]]:.3f} (move from {t_start:.3f})")
    assert t_start <= t[moved[0]] < t_start + 0.2
    # every controller state's reference is the rest-to-rest quintic at the state's own stamp
    # (minimum jerk: s = 10 u^3 - 15 u^4 + 6 u^5, u = (t - t_start) / 2 s); a plan on a
    # clock lagging the states by L would be off by up to 0.94 L / s of the move.  t_start
    # has the log's 3 decimals: 0.5 ms at that slope
    u = np.clip((t - t_start) / 2.0, 0.0, 1.0)
    quintic = q_start + (u**3 * (10.0 - 15.0 * u + 6.0 * u**2))[:, None] * (q1 - q_start)
    off = np.abs(ref - quintic).max(axis=1) / np.abs(q1 - q_start).max()
    assert off.max() < 1e-3, (t[off.argmax()] - t_start, off.max())
    # the move ends at 2 s of the states' time: the last state short of the pose before it,
    # the first at the pose after it.  Not "the first state at the pose within 20 ms of it":
    # the controller's states are a sample of the states' time, and under load the lockstep
    # bridge steps several times between two of its cycles (the timer's commands wait in its
    # queue while it is descheduled): CI saw that sample 40 ms past the end, a loaded local run
    # 100 ms, with the reference on the quintic at every stamp
    at_end = np.abs(ref - q1).max(axis=1) < 1e-12
    t_end, t_before = t[at_end][0], t[~at_end][-1]
    assert np.array_equal(at_end, t >= t_end)  # once at the pose, it stays
    print(f"timer trigger: the 2 s move ended between {t_before - t_start:.3f} and {t_end - t_start:.3f} s "
          f"of the states' time, {wall:.2f} s of wall time; cycles on a state already answered: "
          f"{np.mean(np.diff(t) == 0):.0%}, longest step between cycles {np.diff(t).max() * 1e3:.0f} ms")
    assert t_before < t_start + 2.0 + 1e-3 and t_end >= t_start + 2.0 - 1e-3, (t_start, t_before, t_end)
    # (the old "halfway at 1 s" check, to 1 % of the move, read the first state at or after
    # t_start + 1 s: a loaded run's was 126 ms past it; the check at every stamp above holds it)


def test_saturation_diagnostics_match_the_commands(node_process) -> None:
    """PD with a 2 N m effort limit, this test posing as the arm with states that swing
    +-0.05 rad about the held position (bang-bang chatter): ``~/diagnostics`` counts, per
    joint, the cycles at the limit and at the limit with a sign flip exactly as recounted from
    the commands received, its window percentages and peak follow, and each joint gets one
    warning line (it stays above 1 %)."""
    from rbd_ros.model import MdhModel

    limit = 2.0
    names = list(MdhModel.from_yaml(ARM7).joint_names)
    with ros_context() as ctx:
        peer = TimedPeer(ctx)
        try:
            proc = node_process(["controller", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p", "type:=pd",
                                 "-p", f"effort_limit:={limit}", "-p", "diagnostics_period:=0.3"], ready=READY)
            peer.wait_subscribed(peer.joint_pub)
            n = 300
            for k in range(n):
                swing = 0.0 if k % 5 == 0 else (0.05 if k % 2 else -0.05)
                peer.send_command_and_wait(names, Q0 + swing, np.zeros(7), t=1.0 + 1e-3 * k)
            peer.wait(lambda: peer.diagnostics and peer.diagnostics[-1]["total_cycles"] == n, 30,
                      "the diagnostics of every cycle")
            with peer.cv:
                diag = peer.diagnostics[-1]
                tau = np.array(peer.commands)
        finally:
            peer.close()
    assert tau.shape == (n, 7)
    assert diag["joints"] == names and diag["law"] == "pd" and diag["cycles"] == n
    assert diag["effort_limit"] == [limit] * 7
    at = np.abs(tau) == limit
    prev = np.vstack([np.zeros(7), tau[:-1]])
    flips = at & (tau * prev < 0)
    assert flips.sum(axis=0).min() > 50  # the states make chatter
    assert diag["saturated_cycles"] == at.sum(axis=0).tolist()
    assert diag["saturated_flip_cycles"] == flips.sum(axis=0).tolist()
    np.testing.assert_allclose(diag["peak_effort_total"], np.abs(tau).max(axis=0), rtol=1e-12)
    k = diag["window_cycles"]
    if k:
        np.testing.assert_allclose(diag["saturated_percent"], 100 * at[n - k:].mean(axis=0), rtol=1e-12)
        np.testing.assert_allclose(diag["saturated_flip_percent"], 100 * flips[n - k:].mean(axis=0),
                                   rtol=1e-12)
    for name in names:
        assert proc.output.count(f"saturation: {name} at its effort limit") == 1, proc.output[-3000:]


def test_mobile_drain_timer_never_holds_the_composed_step() -> None:
    """The mobile controller's 20 ms drain timer (references while no state comes) leaves the
    buffer to the cycles while they run, and never waits for the lock a composed step holds:
    it returns at once and the next drain (or cycle) takes the reference."""
    import rclpy

    from rbd_ros.ros.messages import to_joint_trajectory
    from rbd_ros.ros.nodes.mobile_controller import MobileController

    mobile = str(REPO / "config" / "mobile_arm7.yaml")
    with ros_context() as ctx:
        node = rclpy.create_node("controller", context=ctx,
                                 cli_args=["--ros-args", "-p", f"model_yaml:={mobile}"])
        try:
            ctrl = MobileController(node, "whole_body_computed_torque", composed=True,
                                    base_state=lambda: (np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]),
                                                        np.zeros(3), np.zeros(3)))
            arm = [j for j in ctrl.joints if j.startswith("joint")]
            ctrl.step(0.001, arm, Q0, np.zeros(7))
            assert ctrl.cycles == 1
            ctrl.inbox.append((ctrl.loop.trajectory, to_joint_trajectory(arm, [0.5], (Q0 + 0.05)[None])))
            ctrl._drain_idle()
            assert len(ctrl.inbox) == 1  # a cycle ran just now: the cycles drain
            ctrl._last_cycle = -np.inf  # no cycle for a while (a paused bridge) ...
            held, release = threading.Event(), threading.Event()

            def step_in_progress() -> None:  # ... but a step holds the lock right now
                with ctrl.lock:
                    held.set()
                    release.wait(5.0)

            thread = threading.Thread(target=step_in_progress)
            thread.start()
            held.wait(5.0)
            t0 = time.perf_counter()
            ctrl._drain_idle()
            waited = time.perf_counter() - t0
            release.set()
            thread.join()
            assert waited < 0.05 and len(ctrl.inbox) == 1, waited
            ctrl._drain_idle()  # the lock free: drained
            assert not ctrl.inbox
            deadline = time.monotonic() + 30  # planned on the loop's worker (issue 37), off this thread
            while not ctrl.loop.idle():
                assert time.monotonic() < deadline, "the trajectory was never planned"
                time.sleep(0.01)
            ctrl.step(0.002, arm, Q0, np.zeros(7))
            ctrl.step(0.3, arm, Q0, np.zeros(7))
            assert 0.01 < np.abs(ctrl.loop.mref.q - Q0).max() < 0.05  # the trajectory is followed
        finally:
            node.destroy_node()
