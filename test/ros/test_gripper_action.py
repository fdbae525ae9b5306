"""The bridge's gripper through ROS (issue 43.2): the Panda of example-robot-data with its hand
(``panda_finger_joint2`` mimics ``panda_finger_joint1``), a position-interface arm holding
still (no command needed, ``command_timeout`` 0), the gripper as a mechanism (``gripper:=auto``,
starting open), a box between the fingers (a scene file made from ``config/scenes/box.yaml``)
and the state publisher.  A plain rclpy ``ActionClient`` on ``/gripper_controller/gripper_cmd``
closes the hand on the box and opens it again.  Oracles: the URDF's mimic relation, joint
origin and axis (urdf_parser_py), the box's width, the goal's max effort.

Not marked ``slow`` (about 7 s): the fast tier's only test of the gripper action server."""
from __future__ import annotations

import threading
import time

import numpy as np
import yaml

from robots_data import PANDA, REPO, example_robot_urdf
from ros_helpers import ros_context, spin_in_background

Q = [0.0, 0.2, 0.0, -2.0, 0.0, 2.2, 0.785]  # the hand pointing down, fingers along y
FINGERS = ("panda_finger_joint1", "panda_finger_joint2")


def _box_scene(tmp_path):
    """``config/scenes/box.yaml`` at the finger pads of the open hand at ``Q``."""
    import mujoco

    from rbd_ros.sim.gripper import find_gripper
    from rbd_ros.sim.mujoco_model import build_mujoco_model
    from rbd_ros.urdf import load_model

    urdf = str(example_robot_urdf(PANDA))
    gripper = find_gripper(urdf, tip_link="panda_hand")
    mj, _ = build_mujoco_model(load_model(urdf, tip_link="panda_hand"), gripper=gripper)
    data = mujoco.MjData(mj)
    data.qpos[:7] = Q
    mujoco.mj_forward(mj, data)
    ids = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, b) for b in ("panda_leftfinger", "panda_rightfinger")]
    centre = data.xpos[ids].mean(axis=0) + 0.045 * data.xmat[ids[0]].reshape(3, 3)[:, 2]
    raw = yaml.safe_load((REPO / "config/scenes/box.yaml").read_text())
    raw["objects"][0]["pose"] = {"xyz": centre.tolist(), "rpy": [0.0, 0.0, 0.0]}
    path = tmp_path / "box.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path, raw["objects"][0]["size"][1]


def test_the_gripper_action_closes_on_a_box_and_opens(tmp_path, node_process) -> None:
    import rclpy
    from action_msgs.msg import GoalStatus
    from control_msgs.action import GripperCommand
    from rclpy.action import ActionClient
    from sensor_msgs.msg import JointState
    from test_follow_joint_trajectory_action import MoveItLikeClient
    from tf2_msgs.msg import TFMessage
    from urdf_parser_py.urdf import URDF

    from rbd_ros.ros.common import recordable_qos

    _wait = MoveItLikeClient._wait  # a future's result within a time-out
    urdf = str(example_robot_urdf(PANDA))
    joint1 = URDF.from_xml_file(urdf).joint_map["panda_finger_joint1"]
    scene, width = _box_scene(tmp_path)
    robot = ["-p", f"urdf_path:={urdf}", "-p", "tip_link:=panda_hand"]
    node_process(["mujoco-bridge", "--ros-args", *robot, "-p", "mode:=realtime", "-p", "command_timeout:=0.0",
                  "-p", "command_interface:=[position]", "-p", f"initial_positions:={Q}",
                  "-p", "gripper:=auto", "-p", "gripper_initial:=0.04", "-p", f"scene:={scene}",
                  "-p", "publish_every:=10"], ready="mujoco_bridge: ready", timeout=180)
    node_process(["state-publisher", "--ros-args", *robot], ready="state_publisher: ready", timeout=180)
    states: list = []
    tf: dict = {}
    cv = threading.Condition()
    with ros_context() as ctx:
        node = rclpy.create_node("gripper_test_client", context=ctx)

        def on_state(msg) -> None:
            with cv:
                states.append((list(msg.name), np.array(msg.position), np.array(msg.effort)))

        def on_tf(msg) -> None:
            for tr in msg.transforms:
                if tr.child_frame_id == "panda_leftfinger":
                    tf[tr.header.frame_id] = (tr.transform.translation.x, tr.transform.translation.y,
                                              tr.transform.translation.z)

        node.create_subscription(JointState, "/joint_states", on_state, recordable_qos())
        node.create_subscription(TFMessage, "/tf", on_tf, 100)
        client = ActionClient(node, GripperCommand, "/gripper_controller/gripper_cmd")
        spinner = spin_in_background(node)
        try:
            assert client.wait_for_server(timeout_sec=30), "no /gripper_controller/gripper_cmd"

            def run(position: float, max_effort: float):
                goal = GripperCommand.Goal()
                goal.command.position, goal.command.max_effort = position, max_effort
                handle = spinner.send_goal_answered(client, goal)  # (again while unanswered: discovery)
                assert handle.accepted
                return _wait(handle.get_result_async(), 60, "the result")

            def fingers_now():
                with cv:
                    names, q, effort = states[-1]
                return np.array([q[names.index(j)] for j in FINGERS]), names

            deadline = time.monotonic() + 30
            while not states or not tf:
                assert time.monotonic() < deadline, "no /joint_states or no finger /tf"
                time.sleep(0.05)
            q, names = fingers_now()
            assert names[:7] == [f"panda_joint{i}" for i in range(1, 8)] and tuple(names[7:]) == FINGERS
            np.testing.assert_allclose(q, [0.04, 0.04], atol=1e-4)  # gripper_initial, open
            with cv:
                start = len(states)
            res = run(0.0, 10.0)  # close on the box
            assert res.status == GoalStatus.STATUS_ABORTED, res.status
            assert res.result.stalled and not res.result.reached_goal, res.result
            assert abs(res.result.effort) <= 10.0 + 1e-9 and abs(res.result.effort) > 0.5, res.result
            # on the box's faces; sunk in by the scene's contact, sized for the arm's mass at its
            # contact site, not a finger's (rbd_ros.sim.scene): 2.1 mm at ~3 N here
            assert width / 2 - 4e-3 < res.result.position < width / 2 + 1e-3, res.result
            q, _ = fingers_now()
            assert (np.abs(q - res.result.position) < 1e-3).all(), q
            res = run(0.04, 10.0)  # open again
            assert res.status == GoalStatus.STATUS_SUCCEEDED and res.result.reached_goal, res.result
            assert abs(res.result.position - 0.04) < 0.01
            with cv:
                seen = states[start:]
            g = np.array([[s[1][s[0].index(j)] for j in FINGERS] for s in seen])
            mult = 1.0  # <mimic joint="panda_finger_joint1"/>: multiplier 1, offset 0
            # the relation held by MuJoCo's (soft) equality: 1.1e-5 here at most, under
            # implicitfast (a scene's integrator) and the grasp; 5e-7 under RK4 without contact
            # (test/sim/test_gripper_mechanism.py)
            assert len(g) > 50 and np.abs(g[:, 1] - mult * g[:, 0]).max() < 3e-5
            assert (g >= joint1.limit.lower - 1e-6).all() and (g <= joint1.limit.upper + 1e-6).all()
            # /tf: the finger at origin @ motion(q) in the hand, as the URDF places it
            time.sleep(0.3)
            q, _ = fingers_now()
            x, y, z = tf["panda_hand"]
            np.testing.assert_allclose([x, y, z], np.array(joint1.origin.xyz) + q[0] * np.array(joint1.axis),
                                       atol=1e-3)
        finally:
            spinner.shutdown(timeout_sec=1.0)
            client.destroy()
            node.destroy_node()
