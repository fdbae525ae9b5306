"""Contact through ROS (issue 30): the bridge with a scene publishes the F/T sensor, takes
``~/apply_wrench`` pushes, and the composed force law takes ``~/target_wrench`` (refusing
one the effort limits cannot produce, naming the joints).  UR3 (named by no other test).
Oracles: the known pushed wrench, the last link's weight from the URDF."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from robots_data import example_robot_urdf
from ros_helpers import ros_context, spin_in_background

pytestmark = pytest.mark.slow  # end to end: a bridge process in realtime


def test_bridge_scene_sensor_push_and_target_wrench(node_process) -> None:
    from geometry_msgs.msg import WrenchStamped
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from rbd_ros.urdf import load_model

    urdf = str(example_robot_urdf("ur_description/urdf/ur3_robot.urdf"))
    weight = float(load_model(urdf).mass[-1]) * 9.81
    bridge = node_process(["mujoco-bridge", "--ros-args", "-p", f"urdf_path:={urdf}", "-p", "scene:=table",
                           "-p", "controller_type:=hybrid_force_position", "-p", "publish_every:=5",
                           "-p", "initial_positions:=[0.0, -1.2, 1.5, -1.9, -1.57, 0.0]"],
                          ready="mujoco_bridge: ready", timeout=240)
    assert "integrator=implicitfast" in bridge.output
    with ros_context() as ctx:
        import rclpy

        node = rclpy.create_node("contact_probe", context=ctx)
        got: dict[str, list] = {"raw": [], "wrench": []}
        cv = threading.Condition()

        def keep(key):
            def cb(msg) -> None:
                f, t = msg.wrench.force, msg.wrench.torque
                with cv:
                    got[key].append((time.monotonic(), np.array([f.x, f.y, f.z, t.x, t.y, t.z]),
                                     msg.header.frame_id))
            return cb

        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(WrenchStamped, "/ft_sensor/wrench_raw", keep("raw"), qos)
        node.create_subscription(WrenchStamped, "/ft_sensor/wrench", keep("wrench"), qos)
        push_pub = node.create_publisher(WrenchStamped, "/mujoco_bridge/apply_wrench", qos)
        target_pub = node.create_publisher(WrenchStamped, "/controller/target_wrench", qos)
        spinner = spin_in_background(node)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(got["wrench"]) < 200:
                time.sleep(0.05)
            time.sleep(1.0)
            with cv:
                raw = got["raw"][-1]
                still = np.array([w for _, w, _ in got["wrench"][-20:]])
            assert raw[2] == "ft_sensor"
            assert abs(np.linalg.norm(raw[1][:3]) - weight) < 0.05 * weight  # the payload
            assert np.abs(still[:, :3]).max() < 0.3  # compensated: ~0 in free space
            msg = WrenchStamped()
            msg.wrench.force.x, msg.wrench.force.y = 3.0, -4.0  # 5 N, world axes, at the tool
            t_push = time.monotonic()
            push_pub.publish(msg)
            bridge.wait_for("apply_wrench: [3.0, -4.0", 30)
            time.sleep(0.3)  # inside the 0.5 s push (sim time runs at most at wall speed)
            with cv:
                during = [w for t, w, _ in got["wrench"] if t > t_push + 0.1]
            seen = max(np.linalg.norm(w[:3]) for w in during)
            assert abs(seen - 5.0) < 0.25, seen  # the sensor sees minus the push
            msg.header.frame_id = "no_such_link"
            push_pub.publish(msg)
            bridge.wait_for("apply_wrench refused: F/T sensor link 'no_such_link'", 30)
            big = WrenchStamped()
            big.wrench.force.z = -5000.0
            target_pub.publish(big)
            bridge.wait_for("target wrench refused", 30)
            assert "needs more than the effort limits" in bridge.output
        finally:
            spinner.shutdown()
            node.destroy_node()
