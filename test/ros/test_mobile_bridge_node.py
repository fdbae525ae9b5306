"""The ``mujoco_bridge`` node with a mobile base, in its own process, driven over ROS topics:
/joint_states names, wheel / base efforts in, /odom out, the ideal base against the core,
rolling wheels with wheel odometry, a planar base, bad input and no /tf of its own (the
state publisher's, test_state_publisher_node.py)."""
from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest
from test_bridge_node import Client, bridge_args, finished

from rbd_ros.model import MdhModel
from rbd_ros.robot.mobile import MobileBaseRobot
from rbd_ros.util.resources import config_file
from ros_helpers import raise_callback_errors, ros_context

DT = 0.001


class MobileClient(Client):
    """``Client`` plus the /odom messages."""

    def __init__(self, ctx) -> None:
        from nav_msgs.msg import Odometry

        from rbd_ros.ros.common import recordable_qos

        self.odoms: list = []
        self.odom_cv = threading.Condition()
        super().__init__(ctx)  # the spinning executor picks the new subscription up
        qos = recordable_qos()  # every sample of a fast lockstep stream, even when behind
        self.node.create_subscription(Odometry, "/odom", self._on_odom, qos)

    def _on_odom(self, msg) -> None:
        with self.odom_cv:
            self.odoms.append(msg)
            self.odom_cv.notify_all()

    def odom_at(self, t: float, timeout: float = 20.0):
        """The /odom stamped ``t`` (s)."""
        deadline = time.monotonic() + timeout
        with self.odom_cv:
            while True:
                for msg in reversed(self.odoms):
                    if abs(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec - t) < 1e-7:
                        return msg
                raise_callback_errors(self.executor)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no /odom at t={t}")
                self.odom_cv.wait(min(left, 0.1))


@pytest.fixture
def client():
    with ros_context() as ctx:
        c = MobileClient(ctx)
        yield c
        c.close()


def _yaw(o) -> float:
    return 2.0 * math.atan2(o.z, o.w)


def _hold(q0, q, qd, k: int, gain: float = 200.0) -> np.ndarray:
    """PD holding the arm at its start (joints after the ``k`` base entries)."""
    return gain * (q0[k:] - q[k:]) - 0.1 * gain * qd[k:]


@pytest.mark.slow
def test_ideal_diff_drive_equals_the_core_and_publishes_odom(node_process, client) -> None:
    model = MdhModel.from_yaml(str(config_file("mobile_arm7")))
    pose = (0.5, -1.0, 0.4)
    proc = node_process(bridge_args(str(config_file("mobile_arm7")), mode="lockstep",
                                    base_model="ideal", initial_base_pose=pose,
                                    armature=False, viscous_friction=False,
                                    coulomb_friction=False, stats_period=0.0),
                        ready="mujoco_bridge: ready (diff_drive base (ideal", timeout=120.0)
    client.wait_connected(timeout=60.0)
    t0, q0, _, _ = client.latest()
    assert client.names == ["left_wheel_joint", "right_wheel_joint", *model.joint_names]
    start = client.odom_at(t0)
    assert start.header.frame_id == "odom" and start.child_frame_id == "base_link"
    p = start.pose.pose.position
    assert (p.x, p.y, p.z) == pytest.approx((0.5, -1.0, model.wheel_radius), abs=1e-12)
    assert _yaw(start.pose.pose.orientation) == pytest.approx(0.4, abs=1e-12)
    u = np.concatenate([[2.0, 3.5], np.random.default_rng(1).normal(size=model.dof)])
    steps = 120
    for _ in range(steps):
        t, q, qd, effort = client.step(u)
    ref = MobileBaseRobot(model).simulate(np.concatenate([pose, q0[2:]]), np.zeros(3 + model.dof),
                                          u, DT, steps)
    np.testing.assert_allclose(q[2:], ref.q[-1][3:], rtol=0, atol=1e-9)
    np.testing.assert_allclose(qd[2:], ref.qd[-1][3:], rtol=0, atol=1e-9)
    np.testing.assert_array_equal(effort, u)
    odom = client.odom_at(t)
    p, tw = odom.pose.pose.position, odom.twist.twist
    np.testing.assert_allclose([p.x, p.y, _yaw(odom.pose.pose.orientation)], ref.q[-1][:3],
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose([tw.linear.x, tw.linear.y, tw.angular.z], ref.qd[-1][:3],
                               rtol=0, atol=1e-9)
    assert np.hypot(p.x - 0.5, p.y + 1.0) > 1e-3  # it moved
    # bad input: refused with a message, the last safe command kept, still one step each
    for bad in ([1.0, 2.0], [float("nan")] * len(u)):
        t, q, qd, effort = client.step(bad)
        np.testing.assert_array_equal(effort, u)
    proc.wait_for("rejected command")
    assert "/tf" not in proc.output  # the state publisher's, not the bridge's
    assert proc.stop() == 0
    assert "Traceback" not in proc.output


@pytest.mark.slow
def test_wheels_roll_and_wheel_odometry_follows(node_process, client) -> None:
    proc = node_process(bridge_args(str(config_file("mobile_arm7")), mode="lockstep",
                                    odom_source="wheel_odometry", stats_period=0.0),
                        ready="mujoco_bridge: ready (diff_drive base (wheels, odom wheel_odometry)",
                        timeout=120.0)
    client.wait_connected(timeout=60.0)
    _, q0, _, _ = client.latest()

    def drive(wheels, steps):
        _, q, qd, _ = client.latest()
        for _ in range(steps):
            t, q, qd, _ = client.step(np.concatenate([wheels, _hold(q0, q, qd, 2)]))
        return client.odom_at(t), q, qd

    odom, q, qd = drive([2.0, 2.0], 600)  # equal torques: straight ahead
    p = odom.pose.pose.position
    assert p.x > 0.1 and abs(p.y) < 0.01 and abs(_yaw(odom.pose.pose.orientation)) < 0.02
    assert odom.twist.twist.linear.x == pytest.approx(0.08 * qd[:2].mean(), rel=1e-6)
    odom, q, qd = drive([-3.0, 3.0], 600)  # opposite torques: turning left
    assert _yaw(odom.pose.pose.orientation) > 0.1 and odom.twist.twist.angular.z > 0.1
    deadline = time.monotonic() + 30.0  # ~/diagnostics: ground-truth slip (1 s period)
    while not any(d.get("steps", 0) >= 1200 for d in client.diagnostics):
        assert time.monotonic() < deadline, client.diagnostics[-1:]
        time.sleep(0.1)
    diag = next(d for d in client.diagnostics if d.get("steps", 0) >= 1200)
    assert 0.0 < diag["wheel_slip_max"] < 0.05 and diag["lateral_velocity_max"] < 0.05
    # ~/reset: the base back at its start, the wheel odometry with it
    from std_srvs.srv import Trigger

    assert client.call(Trigger, "/mujoco_bridge/reset", Trigger.Request()).success
    t, q, qd, _ = client.step(np.concatenate([[0.0, 0.0], _hold(q0, q0, 0 * q0, 2)]))
    odom = client.odom_at(t)
    assert np.hypot(odom.pose.pose.position.x, odom.pose.pose.position.y) < 1e-3
    assert abs(q[0]) < 1e-2 and abs(q[1]) < 1e-2  # wheel angles back near 0
    assert proc.stop() == 0
    assert "Traceback" not in proc.output


@pytest.mark.slow
def test_planar_base_joints_forces_and_odom(node_process, client) -> None:
    model = MdhModel.from_yaml(str(config_file("omni_arm7")))
    proc = node_process(bridge_args(str(config_file("omni_arm7")), mode="lockstep",
                                    stats_period=0.0),
                        ready="mujoco_bridge: ready (planar base (wheels", timeout=120.0)
    client.wait_connected(timeout=60.0)
    _, q0, _, _ = client.latest()
    assert client.names == ["base_x", "base_y", "base_yaw", *model.joint_names]
    q, qd = q0, np.zeros_like(q0)
    for _ in range(400):  # a base-frame push along -y and a yaw moment
        t, q, qd, effort = client.step(np.concatenate([[0.0, -60.0, 5.0], _hold(q0, q, qd, 3)]))
    assert q[1] < -0.01 and q[2] > 0.01  # base_y moved back, yaw turned
    odom = client.odom_at(t)
    p, tw = odom.pose.pose.position, odom.twist.twist
    assert [p.x, p.y, _yaw(odom.pose.pose.orientation)] == pytest.approx(q[:3], abs=1e-9)
    # base entries' velocities are the base-frame twist, as /odom's
    assert [tw.linear.x, tw.linear.y, tw.angular.z] == pytest.approx(qd[:3], abs=1e-9)
    assert tw.linear.y < 0 and abs(tw.linear.x) < abs(tw.linear.y)
    assert effort[:3] == pytest.approx([0.0, -60.0, 5.0])
    assert proc.stop() == 0


def test_wheel_odometry_on_a_planar_base_is_refused(node_process) -> None:
    proc = node_process(bridge_args(str(config_file("omni_arm7")), odom_source="wheel_odometry"))
    assert finished(proc, 120.0) == 2
    assert "odom_source wheel_odometry needs a diff_drive base" in proc.output
    assert "Traceback" not in proc.output
