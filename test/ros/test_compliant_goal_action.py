"""Issue 41.3 through ROS: a FollowJointTrajectory goal sent with a plain rclpy ``ActionClient``
to the MuJoCo bridge composed with the impedance law and the bundled table, its path 2 cm into
the table, succeeds, and its result says the goal ended in contact with the F/T sensor's force
(the bridge hands the law ``/ft_sensor/wrench``), which is the spring's ``K_n d``: 500 N/m x
2 cm = 10 N less the contact's penetration (0.48 mm ROS-free, ``test/control/
test_compliant_goal.py``, whose arm and goal this is: the Jaco 2 on ANYmal); measured 9.88 N, the
test asks for 5 % of 10 N."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from robots_data import example_robot_urdf
from ros_helpers import NodeProcess, ros_context, spin_in_background

pytestmark = pytest.mark.slow  # end to end: a bridge process and a closed loop

JACO = ("anymal_b_simple_description/robots/anymal-kinova.urdf", "j2s6s200_link_base", "j2s6s200_link_6")
DEPTH, K_N, T_GOAL = 0.02, 500.0, 2.0


def test_a_goal_into_the_table_through_an_action_client_reports_the_contact() -> None:
    from rbd_ros.control.laws import make_law
    from rbd_ros.robot import Robot
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.sim.simulator import BridgeConfig, Simulator
    from rbd_ros.urdf import load_model

    urdf = str(example_robot_urdf(JACO[0]))
    arm = load_model(urdf, base_link=JACO[1], tip_link=JACO[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = Simulator(arm, BridgeConfig(mode="lockstep", command_timeout=0.0), scene=load_scene("table"),
                        urdf=urdf, log=lambda level, msg: None)  # the bridge's placement, here
    site = sim.site
    q_deep = Robot(sim.model).ik(site.tool_pose(0.0, -DEPTH), seeds=site.q_touch).positions
    law = make_law("impedance", sim.model, None, q0=site.q_above, rate=1.0 / sim.config.timestep)
    K, D = law.gains["stiffness"].copy(), law.gains["damping"].copy()
    axis = int(np.argmax(np.abs(site.normal)))
    D[axis] *= np.sqrt(K_N / K[axis])
    K[axis] = K_N
    args = ["mujoco-bridge", "--ros-args", "-p", f"urdf_path:={urdf}", "-p", f"base_link:={JACO[1]}",
            "-p", f"tip_link:={JACO[2]}", "-p", "mode:=lockstep", "-p", "scene:=table",
            "-p", f"initial_positions:={site.q_above.tolist()}", "-p", "controller_type:=impedance",
            "-p", f"stiffness:={K.tolist()}", "-p", f"damping:={D.tolist()}", "-p", "publish_every:=5"]
    bridge = NodeProcess(args)
    try:
        bridge.wait_for("mujoco_bridge: ready", 240)
        with ros_context() as ctx:
            import rclpy
            from builtin_interfaces.msg import Duration
            from control_msgs.action import FollowJointTrajectory
            from rclpy.action import ActionClient
            from test_follow_joint_trajectory_action import MoveItLikeClient
            from trajectory_msgs.msg import JointTrajectoryPoint

            node = rclpy.create_node("compliant_goal_client", context=ctx)
            client = ActionClient(node, FollowJointTrajectory, "/controller/follow_joint_trajectory")
            spinner = spin_in_background(node)
            try:
                assert client.wait_for_server(timeout_sec=60)
                goal = FollowJointTrajectory.Goal()
                goal.trajectory.joint_names = list(arm.joint_names)
                goal.trajectory.points = [JointTrajectoryPoint(
                    positions=q_deep.tolist(), time_from_start=Duration(sec=int(T_GOAL)))]
                # by the spinning thread, and sent again while unanswered (``send_goal_answered``:
                # rclpy 9.1.2's send_goal_async from another thread can lose the response, and a
                # first goal to a server that has not matched this client yet is lost; one CI run
                # lost it twice in a row, no result in 120 s)
                handle = spinner.send_goal_answered(client, goal)
                assert handle.accepted
                result = MoveItLikeClient._wait(spinner.call(handle.get_result_async), 120, "result").result
            finally:
                spinner.shutdown()
                client.destroy()
                node.destroy_node()
    except BaseException:
        print(bridge.output[-6000:])
        raise
    finally:
        bridge.stop()
    print(result.error_string)
    assert result.error_code == FollowJointTrajectory.Result.SUCCESSFUL, result.error_string
    found = re.search(r"in contact \(([0-9.]+) N, measured\)", result.error_string)
    assert found, result.error_string
    assert abs(float(found.group(1)) - K_N * DEPTH) < 0.05 * K_N * DEPTH, result.error_string
