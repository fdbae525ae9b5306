"""The controller node on a mobile manipulator (issue 18) as real processes, through the MuJoCo
bridge in lockstep with the ideal base (the core's dynamics): ``diff_drive_velocity`` follows
``~/cmd_vel``, brakes after ``cmd_vel_timeout``, refuses malformed twists with one line and
stops the base; ``whole_body_computed_torque`` on the holonomic base refuses malformed paths
(empty, wrong frame, NaN) and drives a valid one to its end.  Velocities and poses are read off
the bridge's ``/odom`` (not the controller's own state)."""
from __future__ import annotations

import math
import re
import threading
import time

import numpy as np
import pytest

from ros_helpers import REPO, ros_context, spin_in_background, wait_on

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

MOBILE = str(REPO / "config" / "mobile_arm7.yaml")
OMNI = str(REPO / "config" / "omni_arm7.yaml")
READY = "controller: ready"
BRIDGE_READY = "mujoco_bridge: ready"


class BasePeer:
    """Records ``/odom``; publishes ``~/cmd_vel`` and ``~/base_path``."""

    def __init__(self, ctx) -> None:
        import rclpy
        from geometry_msgs.msg import TwistStamped
        from nav_msgs.msg import Odometry, Path

        from rbd_ros.ros.common import recordable_qos

        self.node = rclpy.create_node("mobile_test_peer", context=ctx)
        self.cv = threading.Condition()
        self.odom: list[tuple[float, float, float, float, float, float, float]] = []
        qos = recordable_qos()  # every sample of a fast lockstep stream, even when behind
        self.node.create_subscription(Odometry, "/odom", self._on_odom, qos)
        self.twist_pub = self.node.create_publisher(TwistStamped, "/controller/cmd_vel", qos)
        self.path_pub = self.node.create_publisher(Path, "/controller/base_path", qos)
        self.executor = spin_in_background(self.node)

    def _on_odom(self, m) -> None:
        o = m.pose.pose.orientation
        yaw = math.atan2(2 * (o.w * o.z + o.x * o.y), 1 - 2 * (o.y * o.y + o.z * o.z))
        row = (m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, m.pose.pose.position.x,
               m.pose.pose.position.y, yaw, m.twist.twist.linear.x, m.twist.twist.linear.y,
               m.twist.twist.angular.z)
        with self.cv:
            self.odom.append(row)
            self.cv.notify_all()

    def wait(self, predicate, timeout: float = 60.0, what: str = "condition") -> None:
        wait_on(self.cv, predicate, self.executor, timeout, what)

    def last(self) -> np.ndarray:
        with self.cv:
            return np.array(self.odom[-1])

    def wait_sim(self, dt: float, timeout: float = 120.0) -> np.ndarray:
        """Wait ``dt`` s of simulated time; the latest odometry row."""
        t0 = self.last()[0]
        self.wait(lambda: self.odom[-1][0] >= t0 + dt, timeout, f"{dt} s of simulated time")
        return self.last()

    def twist(self, vx: float, vy: float, wz: float, frame: str = "") -> None:
        from geometry_msgs.msg import TwistStamped

        m = TwistStamped()
        m.header.frame_id = frame
        m.twist.linear.x, m.twist.linear.y, m.twist.angular.z = vx, vy, wz
        self.twist_pub.publish(m)

    def stream(self, vx: float, vy: float, wz: float, until, timeout: float = 120.0) -> None:
        """Publish the twist every 20 ms of wall time until ``until(odom row)``."""
        deadline = time.monotonic() + timeout
        while not until(self.last()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the base never reached the commanded twist (last odom {self.last()})")
            self.twist(vx, vy, wz)
            time.sleep(0.02)

    def path(self, poses, frame: str = "odom", times=None) -> None:
        from geometry_msgs.msg import PoseStamped
        from nav_msgs.msg import Path

        msg = Path()
        msg.header.frame_id = frame
        for k, (x, y, yaw) in enumerate(poses):
            ps = PoseStamped()
            ps.pose.position.x, ps.pose.position.y = float(x), float(y)
            ps.pose.orientation.z, ps.pose.orientation.w = math.sin(0.5 * yaw), math.cos(0.5 * yaw)
            if times is not None:
                ps.header.stamp.sec, ps.header.stamp.nanosec = divmod(int(round(times[k] * 1e9)), 1_000_000_000)
            msg.poses.append(ps)
        self.path_pub.publish(msg)

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)


@pytest.fixture
def base_peer():
    with ros_context() as ctx:
        p = BasePeer(ctx)
        yield p
        p.close()


def _start(node_process, yaml: str, law: str, extra: list[str]):
    node_process(["mujoco-bridge", "--ros-args", "-p", f"model_yaml:={yaml}", "-p", "mode:=lockstep",
                  "-p", "base_model:=ideal"], ready=BRIDGE_READY, timeout=120)
    return node_process(["controller", "--ros-args", "-p", f"model_yaml:={yaml}", "-p", f"type:={law}",
                         "-p", "model_actuators:=false", *extra], ready=READY, timeout=120)


def _wait_line(proc, text: str, timeout: float = 60.0) -> str:
    return proc.wait_for(text, timeout)


def _times(line: str) -> list[float]:
    """The control times (``t = ... s``) a controller's line names, in order."""
    return [float(x) for x in re.findall(r"\bt = (-?[0-9.]+) s", line)]


def _wait_line_from(proc, text: str, t_min: float, timeout: float = 60.0) -> str:
    """The first line containing ``text`` whose (first) control time is at least ``t_min``."""
    deadline = time.monotonic() + timeout
    while True:
        for line in proc.output.splitlines():
            if text in line and _times(line)[0] >= t_min:
                return line
        if not proc.alive() or time.monotonic() > deadline:
            raise TimeoutError(f"no {text!r} from t = {t_min:.4f} s on:\n{proc.output}")
        time.sleep(0.05)


def _held_then_braked(rows: np.ndarray, t_moving: float, t_brake: float) -> None:
    """Odometry ``rows`` against the controller's own account: at the command (0.4 m/s,
    0.3 rad/s) from 0.1 s after ``t_moving`` (where the peer saw it arrive; the velocity loop's
    overshoot at the end of the ramp, 1e-3 m/s, settles meanwhile) through ``t_brake`` (the
    control time the controller logged for the refusal or the timeout), then braking from
    ``t_brake`` at the limits (1 m/s^2, 2 rad/s^2: v_x 0.2 m/s and omega 0 0.2 s later) to
    rest.  A refusal soon after ``t_moving`` leaves the first window empty; the braking from
    ``t_brake`` at the limit is from the command's speed all the same."""
    t = rows[:, 0]
    held = rows[(t >= t_moving + 0.1) & (t <= t_brake)]
    if held.size:
        dev = np.abs(held[:, 4] - 0.4)
        assert dev.max() < 2e-3 and np.abs(held[:, 6] - 0.3).max() < 2e-3, \
            f"stopped before t = {t_brake:.4f} s: {held[np.argmax(dev)]}"
    mid = rows[np.abs(t - (t_brake + 0.2)) < 5e-4]
    assert mid.size and np.abs(mid[:, 4] - 0.2).max() < 5e-3 and np.abs(mid[:, 6]).max() < 5e-3, \
        f"not braking at the limits from t = {t_brake:.4f} s: {mid}"
    stopped = rows[t > t_brake + 0.5]
    assert stopped.size and np.abs(stopped[:, 4]).max() < 1e-3 and np.abs(stopped[:, 6]).max() < 1e-3, \
        f"not at rest 0.5 s after t = {t_brake:.4f} s: {stopped[np.argmax(np.abs(stopped[:, 4]))]}"


def test_cmd_vel_refusals_stop_the_base_and_the_timeout_brakes(node_process, base_peer) -> None:
    """Reference times are the controller's (the control times its refusal and timeout lines
    name), not the newest odometry the peer had: in lockstep the simulation runs ahead of a
    loaded peer, so a twist it sent reaches the controller up to ~1 s of simulated time after
    the last odometry it had read (0.91 s seen with two busy processes on two cores)."""
    ctl = _start(node_process, MOBILE, "diff_drive_velocity",
                 ["-p", "cmd_vel_timeout:=1.0", "-p", "max_acceleration:=[1.0, 1.0, 2.0]"])
    peer = base_peer
    peer.wait(lambda: len(peer.odom) > 5, 120, "/odom")
    while peer.twist_pub.get_subscription_count() == 0:
        time.sleep(0.02)

    def moving(row: np.ndarray) -> bool:
        return abs(row[4] - 0.4) < 1e-3 and abs(row[6] - 0.3) < 1e-3

    def rows_until(t_end: float) -> np.ndarray:
        peer.wait(lambda: peer.odom[-1][0] >= t_end, 120, f"odometry up to t = {t_end:.4f} s")
        with peer.cv:
            return np.array(peer.odom)

    for bad, why in (((math.nan, 0.0, 0.3), ""), ((0.4, 0.0, 0.3), "map")):
        peer.stream(0.4, 0.0, 0.3, moving)
        t_moving = peer.last()[0]
        peer.twist(*bad, frame=why)
        line = _wait_line(ctl, "twist contains NaN" if not why else "frame 'map'")
        assert "cmd_vel refused" in line and "stopping the base" in line
        (t_bad,) = _times(line)
        # the refusal (not the 1 s timeout) stops it: braking from the refusal's control time,
        # and no timeout is reported after it
        _held_then_braked(rows_until(t_bad + 1.5), t_moving, t_bad)
        late = [x for x in ctl.output.splitlines() if "cmd_vel timed out" in x and _times(x)[0] > t_bad]
        assert not late, late
    # the timeout: moving at the command until cmd_vel_timeout (1 s of control time) after the
    # last twist the controller read, then braking to rest
    peer.stream(0.4, 0.0, 0.3, moving)
    t_moving = peer.last()[0]
    line = _wait_line_from(ctl, "cmd_vel timed out", t_moving)
    t_brake, t_cmd = _times(line)
    assert 1.0 - 1e-6 < t_brake - t_cmd < 1.0 + 2e-3, line  # the first cycle (1 ms steps) past the timeout
    assert t_brake > t_moving + 0.8, line  # held at the command for most of the timeout (checked below)
    rows = rows_until(t_brake + 1.5)
    _held_then_braked(rows, t_moving, t_brake)
    assert np.abs(rows[:, 5]).max() < 1e-9  # ideal diff drive: no side velocity
    acc = np.abs(np.diff(rows[:, 4]) / np.maximum(np.diff(rows[:, 0]), 1e-9))
    assert acc[np.diff(rows[:, 0]) > 0].max() < 1.2  # the acceleration limit (1 m/s^2) holds


def test_base_path_refusals_and_a_path_on_the_holonomic_base(node_process, base_peer) -> None:
    ctl = _start(node_process, OMNI, "whole_body_computed_torque", [])
    peer = base_peer
    peer.wait(lambda: len(peer.odom) > 5, 120, "/odom")
    while peer.path_pub.get_subscription_count() == 0:
        time.sleep(0.02)
    peer.path([])
    assert "the path is empty" in _wait_line(ctl, "base path refused")
    peer.path([(0.3, 0.2, 0.5)], frame="base_link")
    assert "frame 'base_link'" in _wait_line(ctl, "frame 'base_link'")
    peer.path([(0.3, math.nan, 0.5)])
    assert "NaN" in _wait_line(ctl, "NaN")
    row = peer.last()
    # refusals moved nothing: the base stays on its start (its speed carries the arm's start-up
    # transient through the whole-body inertia, 2.5e-4 m/s seen on a loaded machine)
    assert np.abs(row[1:4]).max() < 1e-5 and np.abs(row[4:7]).max() < 1e-3
    # a valid timed path: through (0.2, 0.1, 0.2) at 1 s to (0.3, 0.2, 0.5) at 2 s
    peer.path([(0.2, 0.1, 0.2), (0.3, 0.2, 0.5)], times=[1.0, 2.0])
    _wait_line(ctl, "base path accepted")
    t0 = peer.last()[0]
    peer.wait(lambda: peer.odom[-1][0] > t0 + 3.0, 180, "the path's end")
    row = peer.last()
    np.testing.assert_allclose(row[1:4], [0.3, 0.2, 0.5], atol=1e-4)
    assert np.abs(row[4:7]).max() < 1e-3
    # holonomic: cmd_vel with v_y drives it sideways (the path law integrates the twist)
    peer.stream(0.0, 0.2, 0.0, lambda r: abs(r[5] - 0.2) < 1e-3)
