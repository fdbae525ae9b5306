"""The bringup description: the nodes, their names and parameters, from a few arguments.

Both ``launch/bringup.launch.py`` / ``launch/dynamics.launch.py`` and ``rbd-ros bringup`` call
``describe``; neither adds nodes or parameters of its own.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rbd_ros.control.gains import LAWS
from rbd_ros.control.mobile_laws import MOBILE_LAWS
from rbd_ros.sim.realtime import check_priority
from rbd_ros.util.resources import DEFAULT_ROBOT, bundled_robots, bundled_urdf, config_file

CONTROLLER_TYPES = (*LAWS, *MOBILE_LAWS, "none")  # the laws of rbd_ros.control, or no controller node
MODES = ("lockstep", "realtime", "max")

#: launch arguments with their defaults ('' = not set); shared by both launch files and the CLI
ARGUMENTS: dict[str, tuple[str, str]] = {
    "robot": (DEFAULT_ROBOT, "bundled robot name (ignored when urdf is given)"),
    "urdf": ("", "path to a .urdf/.xacro file instead of a bundled robot"),
    "base_link": ("", "first link of the chain ('' = inferred)"),
    "tip_link": ("", "last link of the chain ('' = inferred)"),
    "controller": ("computed_torque", "controller type: " + ", ".join(CONTROLLER_TYPES)),
    "mode": ("realtime", "MuJoCo bridge mode: " + ", ".join(MODES)),
    "use_sim_time": ("true", "nodes follow the bridge's /clock"),
    "composed": ("false", "true: the control law runs inside the MuJoCo bridge's loop (no "
                          "controller process; references on the same topics)"),
    "rt_priority": ("0", "SCHED_FIFO priority 1..99 of the MuJoCo bridge's stepping thread and "
                         "of a separate controller's executor thread (0 = off; reported when the "
                         "platform refuses)"),
}


@dataclass(frozen=True)
class NodeSpec:
    """One node: ``rbd-ros SUBCOMMAND`` / ament executable ``executable``, named ``name``."""

    executable: str
    subcommand: str
    name: str
    parameters: dict[str, Any] = field(default_factory=dict)

    def ros_args(self) -> list[str]:
        """``--ros-args -r __node:=NAME -p k:=v ...`` for a process started by hand."""
        args = ["--ros-args", "-r", f"__node:={self.name}"]
        for key, value in self.parameters.items():
            args += ["-p", f"{key}:={format_parameter(value)}"]
        return args


def format_parameter(value: Any) -> str:
    """A parameter value as ``-p k:=v`` wants it (YAML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_parameter(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _truthy(value: str | bool, name: str = "use_sim_time") -> bool:
    if isinstance(value, bool):
        return value
    v = str(value).strip().lower()
    if v in ("true", "1", "yes", "on"):
        return True
    if v in ("false", "0", "no", "off", ""):
        return False
    raise ValueError(f"{name} must be true or false, got '{value}'")


def _priority(value: str | int) -> int:
    """``rt_priority`` as an int in 0..99 (a launch argument arrives as text)."""
    try:
        number = float(str(value).strip() or "0")
        if number != int(number):
            raise ValueError
    except ValueError:
        raise ValueError(f"rt_priority must be a whole number 0..99, got '{value}'") from None
    return check_priority(int(number))


def robot_parameters(robot: str = DEFAULT_ROBOT, urdf: str = "", base_link: str = "",
                     tip_link: str = "", base: str = "") -> dict[str, Any]:
    """The robot for every node: ``urdf_path`` (+ chain ends) of a given file; for a bundled
    robot also ``model_yaml`` = ``config/NAME.yaml``, its complete model with the actuators
    (gear ratios, rotor inertias) that URDF cannot hold. The nodes prefer ``model_yaml``."""
    if urdf:
        path = Path(urdf).expanduser()
        if not path.is_file():
            raise ValueError(f"urdf '{urdf}' does not exist")
        path = path.resolve()
    else:
        if robot not in bundled_robots():
            raise ValueError(f"unknown robot '{robot}'; bundled robots: {', '.join(bundled_robots())}")
        path = bundled_urdf(robot)
    params: dict[str, Any] = {"urdf_path": str(path)}
    if not urdf:
        params["model_yaml"] = str(config_file(robot))
    if base_link:
        params["base_link"] = base_link
    if tip_link:
        params["tip_link"] = tip_link
    if base:
        params["base_type"] = base  # a URDF's robot on a mobile base (robot_params)
    return params


def srdf_beside(urdf_path: str | Path) -> Path | None:
    """The SRDF that goes with a URDF file: ``NAME.srdf`` beside it, or in ``../srdf/`` (the
    layout of ``*_description`` packages), by the file's stem or its robot name; None if none."""

    path = Path(urdf_path)
    stems = [path.stem]
    try:
        stems.append(ET.parse(path).getroot().get("name") or "")
    except (ET.ParseError, OSError):
        pass
    for folder in (path.parent, path.parent.parent / "srdf"):
        for stem in filter(None, stems):
            candidate = folder / f"{stem}.srdf"
            if candidate.is_file():
                return candidate
    return None


def named_poses(urdf_path: str | Path) -> dict[str, dict[str, float]]:
    """The robot's named poses (SRDF ``<group_state name=...><joint name= value=/>``) from the
    SRDF beside its URDF (``srdf_beside``): ``{pose: {joint: value}}``; {} without one."""

    srdf = srdf_beside(urdf_path)
    if srdf is None:
        return {}
    try:
        root = ET.parse(srdf).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"SRDF {srdf}: not valid XML ({exc})") from None
    poses: dict[str, dict[str, float]] = {}
    for state in root.iter("group_state"):
        joints = poses.setdefault(state.get("name", ""), {})
        for joint in state.iter("joint"):
            try:
                joints[joint.get("name", "")] = float(joint.get("value", "nan").split()[0])
            except (ValueError, IndexError):
                raise ValueError(f"SRDF {srdf}: pose '{state.get('name')}' joint "
                                 f"'{joint.get('name')}' has no numeric value") from None
    return poses


def describe(robot: str = DEFAULT_ROBOT, urdf: str = "", base_link: str = "", tip_link: str = "",
             base: str = "", controller: str = "computed_torque", mode: str = "realtime",
             use_sim_time: str | bool = True, services: bool = True,
             simulate: bool = True, bridge: dict[str, Any] | None = None,
             controller_parameters: dict[str, Any] | None = None,
             composed: str | bool = False, rt_priority: str | int = 0) -> list[NodeSpec]:
    """The nodes of a bringup: ``mujoco_bridge`` and ``state_publisher`` (if ``simulate``),
    ``dynamics_server`` (if ``services``) and ``controller`` (unless ``controller == 'none'``).  ``bridge`` and
    ``controller_parameters``: extra parameters of those two nodes (e.g. the bridge's
    ``integrator``, ``timestep`` and ``initial_positions``, the controller's ``rate``).
    ``composed``: the controller runs inside the bridge (its parameter ``controller_type``,
    the controller's parameters given to the bridge), not as a node process of its own.
    ``rt_priority`` (0..99, 0 = off): the bridge's ``rt_priority`` (SCHED_FIFO of its
    stepping thread) and, with a separate controller, the controller's (its executor thread)."""
    if controller not in CONTROLLER_TYPES:
        raise ValueError(f"unknown controller '{controller}'; use one of {', '.join(CONTROLLER_TYPES)}")
    if mode not in MODES:
        raise ValueError(f"unknown mode '{mode}'; use one of {', '.join(MODES)}")
    common = robot_parameters(robot, urdf, base_link, tip_link, base)
    sim_time = _truthy(use_sim_time) and simulate
    composed = _truthy(composed, "composed") and controller != "none"
    priority = _priority(rt_priority)
    if composed and not simulate:
        raise ValueError("composed needs the simulation (the law runs in the MuJoCo bridge)")
    nodes = []
    if simulate:
        nodes.append(NodeSpec("mujoco_bridge", "mujoco-bridge", "mujoco_bridge",
                              {**common, "mode": mode, **(bridge or {})}
                              | ({"rt_priority": priority} if priority else {})
                              | ({"controller_type": controller, **(controller_parameters or {})}
                                 if composed else {})))
    if simulate:  # /robot_description, /tf_static, /tf of every URDF link from /joint_states
        nodes.append(NodeSpec("state_publisher", "state-publisher", "state_publisher",
                              {**common, "use_sim_time": sim_time}))
    if services:
        nodes.append(NodeSpec("dynamics_server", "dynamics-server", "dynamics_server",
                              {**common, "use_sim_time": sim_time}))
    if controller != "none" and not composed:
        nodes.append(NodeSpec("controller", "controller", "controller",
                              {**common, "type": controller, "use_sim_time": sim_time,
                               **(controller_parameters or {})}
                              | ({"rt_priority": priority} if priority else {})))
    return nodes
