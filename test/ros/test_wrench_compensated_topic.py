"""``/ft_sensor/wrench_compensated`` through ROS (issue 41.1): the bridge with ``ft_payload``
publishes the raw F/T reading minus the payload file's wrench, beside the raw topic, in the
same frame.  UR3 with a 0.8 kg tool welded at the sensor in MuJoCo only (``ft_tool``), the
payload file the last body and the tool combined by hand.  Oracle: MuJoCo's sensor (the raw
topic: the tool's weight is in it) and the URDF's last link; the model-compensated
``/ft_sensor/wrench`` keeps the tool's weight.  The same from ``rbd-ros ft-compensator`` (a
real arm's way: the raw topic and ``/joint_states`` only, accelerations differentiated) on
``/ft_sensor/wrench_node``.

Not marked ``slow`` (about 5 s): the fast tier's only test of the ft-compensator node."""
from __future__ import annotations

import threading
import time

import numpy as np
from payload_data import below_sensor

from robots_data import example_robot_urdf
from ros_helpers import ros_context, spin_in_background

TOOL = 0.8  # kg


def test_the_bridge_publishes_the_payload_compensated_wrench(node_process, tmp_path) -> None:
    from geometry_msgs.msg import WrenchStamped
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from rbd_ros.identification.payload import Payload, save_payload
    from rbd_ros.urdf import load_model

    urdf = str(example_robot_urdf("ur_description/urdf/ur3_robot.urdf"))
    model = load_model(urdf)
    tool = Payload(TOOL, np.array([0.01, 0.0, 0.04]), np.diag([2e-3, 2e-3, 1e-3]), np.zeros(6))
    m, c, inertia = below_sensor(model, tool.mass, tool.com, tool.inertia)
    save_payload(tool, str(tmp_path / "tool.yaml"))
    save_payload(Payload(m, c, inertia, np.zeros(6)), str(tmp_path / "payload.yaml"))
    node_process(["mujoco-bridge", "--ros-args", "-p", f"urdf_path:={urdf}", "-p", "ft_sensor:=true",
                  "-p", f"ft_tool:={tmp_path / 'tool.yaml'}", "-p", f"ft_payload:={tmp_path / 'payload.yaml'}",
                  "-p", "publish_every:=5", "-p", "initial_positions:=[0.0, -1.2, 1.5, -1.9, -1.57, 0.0]"],
                 ready="mujoco_bridge: ready", timeout=240)
    node_process(["ft-compensator", "--ros-args", "-p", f"urdf_path:={urdf}", "-p",
                  f"payload_file:={tmp_path / 'payload.yaml'}", "-p", "compensated_topic:=/ft_sensor/wrench_node"],
                 ready="ft_compensator: ready", timeout=120)
    with ros_context() as ctx:
        import rclpy

        node = rclpy.create_node("compensated_probe", context=ctx)
        got: dict[str, list] = {"raw": [], "wrench": [], "compensated": [], "node": []}
        cv = threading.Condition()

        def keep(key):
            def cb(msg) -> None:
                f, t = msg.wrench.force, msg.wrench.torque
                with cv:
                    got[key].append((np.array([f.x, f.y, f.z, t.x, t.y, t.z]), msg.header.frame_id))
            return cb

        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        for key in got:
            node.create_subscription(WrenchStamped, "/ft_sensor/" + ("wrench_" + key if key != "wrench" else key),
                                     keep(key), qos)
        spinner = spin_in_background(node)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and min(len(v) for v in got.values()) < 100:
                time.sleep(0.05)
            with cv:
                raw, wrench, comp, by_node = (np.array([w for w, _ in got[k][-50:]])
                                              for k in ("raw", "wrench", "compensated", "node"))
                frames = {f for k in got for _, f in got[k]}
            assert frames == {"ft_sensor"}
            # no controller: the braked arm sags, so the readings carry inertia besides the weights
            assert np.linalg.norm(raw[:, :3], axis=1).min() > 0.8 * m * 9.81  # last body + tool
            assert np.abs(np.linalg.norm(wrench[:, :3], axis=1) - TOOL * 9.81).max() < 0.2 * TOOL * 9.81
            assert np.abs(comp[:, :3]).max() < 0.01 and np.abs(comp[:, 3:]).max() < 1e-3, np.abs(comp).max(axis=0)
            assert np.abs(by_node[:, :3]).max() < 0.1 and np.abs(by_node[:, 3:]).max() < 0.01, \
                np.abs(by_node).max(axis=0)
        finally:
            spinner.shutdown()
            node.destroy_node()
