"""A position-interface and a velocity-interface arm (issue 43.1), on arms no other test names.

* The SO-ARM100 of example-robot-data (5 joints to ``gripper``; the jaw off the chain) as a
  **position** arm: the bridge's drives take ``/position_controller/commands``, the controller
  node runs as a position-interface joint trajectory controller (``command_interface:=position``:
  the reference positions, not torques) and serves FollowJointTrajectory to a plain rclpy
  ``ActionClient`` (``MoveItLikeClient``).  Oracles: the goal itself (its target, its path
  tolerance, checked here against ``/joint_states`` and the commands this test records), the
  URDF's joint limits, and no torque command anywhere; a path tolerance tighter than a 25 Hz
  drive lags (1e-4 rad) aborts the goal PATH_TOLERANCE_VIOLATED.
* UR3 (joint-limited description) as a **velocity** arm: a constant velocity command on
  ``/velocity_controller/commands``, stepped in lockstep; the oracle is the command's integral:
  the joints' displacement over the last half equals ``v dt`` within 1 %, their velocity ``v``.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from robots_data import example_robot_urdf
from ros_helpers import NodeProcess, ros_context, spin_in_background

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

SO100 = "so_arm_description/urdf/so100.urdf"
SO_JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
SO_Q0 = np.array([0.0, 1.5, -1.5, 0.5, 0.0])
UR3 = "ur_description/urdf/ur3_joint_limited_robot.urdf"


def _load(relpath: str, tip: str):
    import rbd_ros

    return rbd_ros.Robot.from_urdf(str(example_robot_urdf(relpath)), tip_link=tip).model


def test_position_arm_follows_a_goal_within_its_path_tolerance() -> None:
    import test_follow_joint_trajectory_action as fjt
    from action_msgs.msg import GoalStatus
    from std_msgs.msg import Float64MultiArray
    from test_follow_joint_trajectory_action import MoveItLikeClient

    from rbd_ros.ros.common import recordable_qos

    model = _load(SO100, "gripper")
    assert list(model.joint_names) == SO_JOINTS
    urdf = str(example_robot_urdf(SO100))
    robot = ["-p", f"urdf_path:={urdf}", "-p", "tip_link:=gripper"]
    fjt_joints = fjt.JOINTS
    fjt.JOINTS = SO_JOINTS  # the client's recorders read this arm's joints
    procs: list[NodeProcess] = []
    commands: dict[str, list] = {"position": [], "effort": []}
    lock = threading.Lock()
    try:
        with ros_context() as ctx:
            client = MoveItLikeClient(ctx)
            import rclpy

            tap = rclpy.create_node("command_tap", context=ctx)
            for name in commands:
                tap.create_subscription(
                    Float64MultiArray, f"/{name}_controller/commands",
                    lambda m, n=name: (lock.acquire(), commands[n].append(np.array(m.data)), lock.release()),
                    recordable_qos())
            tap_spinner = spin_in_background(tap)
            try:
                procs.append(NodeProcess(["mujoco-bridge", "--ros-args", *robot, "-p", "mode:=lockstep",
                                          "-p", "command_interface:=[position]",
                                          "-p", f"initial_positions:={SO_Q0.tolist()}"]))
                procs[0].wait_for("mujoco_bridge: ready", 180)
                procs.append(NodeProcess(["controller", "--ros-args", *robot, "-p", "command_interface:=position",
                                          "-p", "action_monitor_rate:=40.0"]))
                procs[1].wait_for("controller: ready", 180)
                assert "position interface: reference positions on /position_controller/commands" \
                    in procs[1].output
                client.wait_sim(0.3)
                R = client.Action.Result
                here = client.state_at(client.now())
                target = SO_Q0 + np.array([0.5, -0.3, 0.4, -0.3, 0.6])
                path_tol = 0.05
                g = client.goal(SO_JOINTS, [(0.75, (here + target) / 2), (1.5, target)],
                                path=[(j, path_tol) for j in SO_JOINTS],
                                goal=[(j, 0.01) for j in SO_JOINTS], goal_time=1.0)
                handle = client.send(g)
                status, code, text = client.result(handle)
                assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, R.SUCCESSFUL), text
                t_end = client.end_of(handle, 1.5)
                t_start = t_end - 1.5
                settled = client.state_at(client.wait_still(t_end))
                np.testing.assert_allclose(settled, target, atol=0.01)  # the goal's own tolerance
                with lock:
                    sent = np.array(commands["position"])
                    efforts = len(commands["effort"])
                assert efforts == 0, "a torque command on a position arm"
                assert sent.shape[1] == len(SO_JOINTS) and len(sent) > 1000
                assert (sent >= model.lower - 1e-12).all() and (sent <= model.upper + 1e-12).all()
                # the commands went from the start to the target: the controller sent the plan
                moved = np.abs(sent - target).max(axis=1)
                assert moved[0] > 0.2 and moved[-1] < 1e-9, (moved[0], moved[-1])
                # independently of the server's path check: every state of the goal lies
                # between the start and the target (per joint) within the path tolerance
                with client.cv:
                    during = np.array([q for s, q in client.states if t_start <= s <= t_end])
                lo, hi = np.minimum(here, target) - path_tol, np.maximum(here, target) + path_tol
                assert len(during) > 1000 and ((during >= lo) & (during <= hi)).all()
                # a tolerance tighter than the drive's lag: aborted on the measured state
                now = client.state_at(client.now())
                g = client.goal(SO_JOINTS, [(0.8, now - np.array([0.3, 0, 0, 0, 0]))],
                                path=[(SO_JOINTS[0], 1e-4)])
                status, code, text = client.result(client.send(g))
                assert (status, code) == (GoalStatus.STATUS_ABORTED, R.PATH_TOLERANCE_VIOLATED), text
                assert text.startswith("shoulder_pan: position error"), text
            except BaseException:
                for p in procs:
                    print(p.output[-6000:])
                raise
            finally:
                client.close()
                tap_spinner.shutdown(timeout_sec=1.0)
                tap.destroy_node()
                codes = [p.stop() for p in procs]
        assert codes == [0, 0], codes
    finally:
        fjt.JOINTS = fjt_joints


def test_velocity_arm_follows_a_velocity_command(node_process) -> None:
    from test_bridge_command_interfaces import Commands

    model = _load(UR3, "tool0")
    n = model.dof
    q0 = np.clip(np.array([0.0, -1.2, 1.2, -1.5, -1.5, 0.0]), model.lower, model.upper)
    urdf = str(example_robot_urdf(UR3))
    node_process(["mujoco-bridge", "--ros-args", "-p", f"urdf_path:={urdf}", "-p", "tip_link:=tool0",
                  "-p", "mode:=lockstep", "-p", "command_interface:=velocity",
                  "-p", f"initial_positions:={q0.tolist()}"], ready="mujoco_bridge: ready", timeout=180)
    v = np.array([0.3, -0.2, 0.25, 0.0, -0.3, 0.4])[:n]
    with ros_context() as ctx:
        commands = Commands(ctx)
        try:
            commands.connected()
            states = []
            for _ in range(600):  # 0.6 s simulated at the bridge's 1 ms
                t = commands.latest()[0]
                commands.send_to("velocity", v)
                states.append(commands.wait_state(after=t))
        finally:
            commands.close()
    t = np.array([s[0] for s in states])
    q = np.array([s[1] for s in states])
    qd = np.array([s[2] for s in states])
    effort = np.array([s[3] for s in states])
    half = len(t) // 2
    np.testing.assert_allclose(q[-1] - q[half], v * (t[-1] - t[half]), rtol=0, atol=0.01 * 0.4 * (t[-1] - t[half]))
    np.testing.assert_allclose(qd[half:], np.broadcast_to(v, qd[half:].shape), rtol=0, atol=0.01)
    assert (np.abs(effort) <= np.abs(model.effort_limit) + 1e-9).all() and np.abs(effort).max() > 0.1
