"""The one robot loader of every node (``rbd_ros.ros.robot_params``): its errors, the gravity
rule (parameter > model file > default), and a wall-mounted arm's gravity seen alike by the
dynamics server, the controller and the MuJoCo bridge running together."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from rbd_ros.ros.common import NodeConfigError
from rbd_ros.ros.robot_params import robot_model
from rbd_ros.sim.examples import three_link
from rbd_ros.util.resources import bundled_urdf, config_file
from ros_helpers import ros_context, spin_in_background

WALL = [0.0, -9.81, 0.0]  # an arm mounted on a wall: gravity along -y of its base
STATES, COMMANDS = "/wall_test/joint_states", "/wall_test/commands"
ONE_LINK = """<robot name="r"><link name="base"/>
<link name="l1"><inertial><mass value="{mass}"/><origin xyz="0 0 0"/>
<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""


def _error(params: dict) -> str:
    with pytest.raises(NodeConfigError) as info:
        robot_model(params)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_bad_robot_parameters_get_one_clear_line(tmp_path: Path) -> None:
    assert _error({"model_yaml": str(tmp_path / "nope.yaml")}) == \
        f"model_yaml '{tmp_path / 'nope.yaml'}': file not found"
    bad = tmp_path / "bad.yaml"
    bad.write_text("joints: [a, b\n")
    assert _error({"model_yaml": str(bad)}).startswith(f"model_yaml '{bad}': malformed YAML (line 2")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("name: x\n")
    assert "expected a mapping with a 'joints' list" in _error({"model_yaml": str(wrong)})
    xacro = tmp_path / "arm.xacro"
    xacro.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                     '<link name="$(arg prefix)base"/></robot>')
    assert _error({"urdf_path": str(xacro)}) == \
        f"urdf_path '{xacro}': xacro failed: Undefined substitution argument prefix"
    nan = tmp_path / "nan.urdf"
    nan.write_text(ONE_LINK.format(mass="nan"))
    assert _error({"urdf_path": str(nan)}) == \
        f"urdf_path '{nan}': link 'l1' inertial mass is not finite: [nan]"
    assert _error({"robot_description": ONE_LINK.format(mass="nan")}) == \
        "robot_description: link 'l1' inertial mass is not finite: [nan]"
    assert _error({"urdf_path": str(tmp_path / "x.urdf")}) == \
        f"urdf_path '{tmp_path / 'x.urdf'}': file not found"
    assert "tip" in _error({"urdf_path": str(bundled_urdf()), "tip_link": "no_such_link"})
    for g in ([0.0, 9.81], "abc", [0.0, float("nan"), 1.0]):
        assert _error({"gravity": g}).startswith("gravity must be 3 finite numbers")


def test_gravity_rule_parameter_then_model_file_then_default(tmp_path: Path) -> None:
    path = tmp_path / "wall.yaml"
    three_link(gravity=WALL).to_yaml(str(path))
    from_file = robot_model({"model_yaml": str(path)})
    assert from_file.model.gravity.tolist() == WALL and from_file.source == str(path)
    assert from_file.stem == "wall"
    given = robot_model({"model_yaml": str(path), "gravity": [1.0, 2.0, -3.0]})
    assert given.model.gravity.tolist() == [1.0, 2.0, -3.0]
    urdf = robot_model({"urdf_path": str(bundled_urdf("arm7"))})
    assert urdf.model.gravity.tolist() == [0.0, 0.0, -9.81] and urdf.stem == "arm7"
    assert robot_model({"urdf_path": str(bundled_urdf("arm7")), "gravity": WALL}).model.gravity.tolist() == WALL
    # model_yaml wins over a URDF; robot_description over urdf_path; nothing -> the default robot
    both = robot_model({"model_yaml": str(config_file("planar2")), "urdf_path": str(bundled_urdf("arm7"))})
    assert both.model.dof == 2
    text = robot_model({"robot_description": bundled_urdf("planar2").read_text(),
                        "urdf_path": str(bundled_urdf("arm7"))})
    assert text.model.dof == 2 and text.source == "robot_description parameter" and text.stem == ""
    assert robot_model({}).source == str(bundled_urdf())


class _Watch:
    """Records /joint_states and /effort_controller/commands."""

    def __init__(self, ctx) -> None:
        import rclpy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        from rbd_ros.ros.common import recordable_qos

        self.node = rclpy.create_node("gravity_watch", context=ctx)
        self.lock = threading.Lock()
        self.states: list[np.ndarray] = []
        self.commands: list[np.ndarray] = []
        self.node.create_subscription(JointState, STATES,
                                      lambda m: self._add(self.states, m.position), recordable_qos())
        self.node.create_subscription(Float64MultiArray, COMMANDS,
                                      lambda m: self._add(self.commands, m.data), recordable_qos())
        self.executor = spin_in_background(self.node)

    def _add(self, into: list, values) -> None:
        with self.lock:
            into.append(np.array(values, dtype=float))

    def wait(self, count: int, timeout: float = 60.0) -> None:
        """Until ``count`` commands and states have arrived (the lockstep loop runs on; this
        subscription may match the bridge's publisher only after many steps)."""
        deadline = time.monotonic() + timeout
        while min(len(self.commands), len(self.states)) < count:
            assert time.monotonic() < deadline, f"{len(self.commands)} commands, {len(self.states)} states"
            time.sleep(0.05)


@pytest.mark.slow
def test_wall_gravity_reaches_server_controller_and_bridge(tmp_path, node_process) -> None:
    """One wall-mounted arm, its gravity given two ways: in the model file of the server, and
    as the ``gravity`` parameter over an upright model file for the controller and the bridge.
    The server answers with the file's gravity; the controller (pd_gravity) commands exactly
    the server's g(q0); the bridge, fed those commands in lockstep, holds q0.  A node using
    [0, 0, -9.81] instead (the server's default replacing the file's, a controller without
    the parameter) would command other torques or let the arm move."""
    from rbd_ros.ros.client import DynamicsClient

    path = tmp_path / "wall_arm.yaml"
    three_link(gravity=WALL).to_yaml(str(path))
    upright = tmp_path / "upright_arm.yaml"
    three_link().to_yaml(str(upright))
    q0 = [0.3, -0.6, 0.9]
    # topics of this test's own: another session's nodes on the same ROS domain cannot interfere
    robot = ["-p", f"model_yaml:={upright}", "-p", f"gravity:={WALL}",
             "-r", f"/joint_states:={STATES}", "-r", f"/effort_controller/commands:={COMMANDS}"]
    node_process(["dynamics-server", "--ros-args", "-p", f"model_yaml:={path}"], ready="dynamics_server: ready")
    with DynamicsClient() as dyn:
        dyn.wait()
        g = dyn.get_model().gravity
        assert [g.x, g.y, g.z] == WALL
        g_q0 = dyn.gravity(q0)
    from rbd_ros.robot import Robot

    assert three_link().gravity.tolist() == [0.0, 0.0, -9.81]
    assert np.abs(Robot(three_link()).gravity(np.array(q0)) - g_q0).max() > 1.0  # it matters
    with ros_context() as ctx:
        watch = _Watch(ctx)
        node_process(["controller", "--ros-args", *robot, "-p", "type:=pd_gravity"],
                     ready="controller: ready", timeout=120)
        node_process(["mujoco-bridge", "--ros-args", *robot, "-p", "mode:=lockstep",
                      "-p", f"initial_positions:={q0}"], ready="mujoco_bridge: ready")
        watch.wait(200)
        with watch.lock:
            commands, states = np.array(watch.commands[:200]), np.array(watch.states[:200])
        watch.executor.shutdown(timeout_sec=1.0)
    np.testing.assert_allclose(commands, np.broadcast_to(g_q0, commands.shape), rtol=0, atol=1e-6)
    assert len(states) == 200
    np.testing.assert_allclose(states, np.broadcast_to(q0, states.shape), rtol=0, atol=1e-6)
