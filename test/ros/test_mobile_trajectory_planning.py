"""The mobile controller reads a large ``~/joint_trajectory`` off the executor that runs its
cycle (issue 37's leftover): the subscription is raw and the message is deserialized and
planned on the loop's planning worker, as in the fixed-base controller
(``test_joint_trajectory_node_planning``), and a large ``~/base_path`` is read on a reader
thread.  In one process: the node (composed, as in the
MuJoCo bridge) steps from a 1 ms wall timer on the same executor that delivers the 10 000-point
trajectory a peer publishes; cycles go on meanwhile.  Before, rclpy's deserialization of the
message (~0.7 s) ran on that executor: no cycle for that long."""
from __future__ import annotations

import time

import numpy as np
import pytest

from ros_helpers import REPO, ros_context

pytestmark = pytest.mark.slow  # rclpy in process, a 10 000-point plan

MOBILE = str(REPO / "config" / "mobile_arm7.yaml")
Q0 = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])


def _run(topic: str, msg_type, messages: list[bytes], done) -> tuple[list[str], np.ndarray]:
    """A composed mobile controller stepped by a 1 ms timer on the executor that delivers
    ``messages`` (serialized already: the peer's own work is not the controller's) published on
    ``topic``, until ``done(lines)``; the loop's log lines and the wall times of the steps since
    the publication.  The subscription must be raw (the executor would deserialize a typed one)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from rbd_ros.ros.nodes.controller_common import reliable_qos
    from rbd_ros.ros.nodes.mobile_controller import MobileController

    with ros_context() as ctx:
        node = rclpy.create_node("controller", context=ctx, cli_args=["--ros-args", "-p", f"model_yaml:={MOBILE}"])
        peer = rclpy.create_node("mobile_peer", context=ctx)
        ex = SingleThreadedExecutor(context=ctx)
        try:
            ctrl = MobileController(node, "whole_body_computed_torque", composed=True,
                                    base_state=lambda: (np.zeros(3), np.array([0.0, 0.0, 0.0, 1.0]),
                                                        np.zeros(3), np.zeros(3)))
            loop = ctrl.loop
            arm = [j for j in ctrl.joints if j.startswith("joint")]
            lines: list[str] = []
            log = loop.log
            loop.log = lambda level, text: (lines.append(text), log(level, text))
            steps: list[float] = []

            def step() -> None:  # the bridge's step, one simulated ms per wall ms
                steps.append(time.monotonic())
                ctrl.step(1e-3 * len(steps), arm, Q0, np.zeros(7))

            for _ in range(5):
                step()
            assert next(x for x in node.subscriptions if x.topic_name == topic).raw
            pub = peer.create_publisher(msg_type, topic, reliable_qos())
            deadline = time.monotonic() + 10
            while pub.get_subscription_count() == 0:
                assert time.monotonic() < deadline, "the controller never subscribed"
                time.sleep(0.01)
            ex.add_node(node)
            node.create_timer(0.001, step)
            while len(steps) < 100:  # cycling
                ex.spin_once(timeout_sec=0.01)
            first = len(steps)
            for raw in messages:
                pub.publish(raw)
            deadline = time.monotonic() + 120
            while not done(lines):
                assert time.monotonic() < deadline, lines[-5:]
                ex.spin_once(timeout_sec=0.01)
            return lines, np.array(steps[first:])
        finally:
            ex.shutdown()
            peer.destroy_node()
            node.destroy_node()


def test_a_10000_point_trajectory_to_the_mobile_controller_does_not_stall_its_cycle(monkeypatch) -> None:
    import threading

    import rclpy.serialization
    from rclpy.serialization import serialize_message
    from trajectory_msgs.msg import JointTrajectory

    from rbd_ros.ros.messages import to_joint_trajectory

    arm = [f"joint{i}" for i in range(1, 8)]
    m = 10_000
    times = np.linspace(30.0 / m, 30.0, m)  # a slow 30 s ramp from where the arm is
    raw = serialize_message(to_joint_trajectory(arm, times, Q0 + np.outer(times / 30.0, np.full(7, 0.2))))
    readers: list[str] = []  # the threads that deserialized a JointTrajectory
    deserialize = rclpy.serialization.deserialize_message

    def recorded(data, message_type):
        if message_type is JointTrajectory:
            readers.append(threading.current_thread().name)
        return deserialize(data, message_type)

    monkeypatch.setattr(rclpy.serialization, "deserialize_message", recorded)
    lines, t = _run("/controller/joint_trajectory", JointTrajectory, [raw],
                    lambda lines: any("trajectory accepted" in x or "trajectory refused" in x for x in lines))
    line = next(x for x in lines if "trajectory accepted" in x or "trajectory refused" in x)
    assert "trajectory accepted: 10000 points" in line and "off the control cycle" in line, line
    gaps = np.diff(t)
    planned = t[-1] - t[0]
    # before: the executor deserialized the message itself, one pause as long as that (65-150 ms
    # here at load 2.5, ~0.7 s at load 10); now the longest pause is one of the worker's
    # GIL-holding stretches (rclpy's deserialization in C among them), a part of the reading and
    # planning, not all of it. Relative, not absolute: the full suite at load paused 0.53 s of 0.82
    assert readers == ["rbd_ros-plan-trajectory"], readers  # on the planning worker, not the executor
    assert gaps.max() < 0.8 * planned, (gaps.max(), planned)
    # how many cycles run meanwhile is the GIL's to decide (rclpy's deserialization in C holds
    # it): 60 in 0.77 s on an idle machine in CI's setting, so no share of 1 kHz is asserted
    assert len(t) >= 10, (len(t), planned)
    print(f"10 000 points read and planned in {planned:.2f} s; {len(t)} cycles meanwhile, "
          f"the longest pause {gaps.max() * 1e3:.0f} ms")


def test_a_10000_pose_base_path_is_read_off_the_cycle_and_a_malformed_one_still_refused() -> None:
    """``~/base_path`` (10 000 poses: rclpy's deserialization ~0.4 s, reading ~0.2 s, both on
    this executor before) is read on the node's reader thread; the cycle goes on meanwhile and
    the path is taken in arrival order (a NaN pose sent after it is refused after it, naming
    the pose, as before)."""
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Path
    from rclpy.serialization import serialize_message

    def path(m: int, bad: int = -1) -> bytes:
        p = Path()
        p.header.frame_id = "odom"
        for k in range(m):
            ps = PoseStamped()
            ps.pose.position.x = 1e-3 * (k + 1)
            ps.pose.orientation.w = float("nan") if k == bad else 1.0
            p.poses.append(ps)
        return serialize_message(p)

    lines, t = _run("/controller/base_path", Path, [path(10_000), path(3, bad=1)],
                    lambda lines: any("pose 1 contains NaN" in x for x in lines))
    took = [x for x in lines if x.startswith("base path")]
    assert took[0].startswith("base path accepted: 10000 poses"), took
    assert took[1].startswith("base path refused: pose 1 contains NaN or Inf"), took
    gaps = np.diff(t)
    # before: 0.57 s here (0.4 s deserializing, 0.2 s reading on the executor: the whole time one
    # pause); now 0.11-0.27 s: rclpy's deserialization, on the reader thread, still holds the GIL
    # in stretches (relative, as above: a loaded machine stretches both)
    assert gaps.max() < 0.8 * (t[-1] - t[0]), (gaps.max(), t[-1] - t[0])
    print(f"10 000 poses read and taken in {t[-1] - t[0]:.2f} s; {len(t)} cycles meanwhile, "
          f"the longest pause {gaps.max() * 1e3:.0f} ms")
