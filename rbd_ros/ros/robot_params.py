"""The robot a node works on, from its parameters: the one loader of the controller, the
MuJoCo bridge, the dynamics server and ``rbd-ros bringup``.

Parameters (read-only; ``model_yaml`` settable on the controller and the dynamics server:
``declare_swappable_model``): ``model_yaml`` (wins) | ``robot_description`` | ``urdf_path`` (none:
the bundled default robot), ``base_link``, ``tip_link``, ``base_type`` (its deprecated name
``base`` still accepted, with a warning), ``inertia_fix`` (false: a URDF's impossible link
inertias kept, ``keep_inertia`` of the converter), ``gravity`` (this parameter > the model
file's > [0, 0, -9.81]); each described once in ``config/schema/robot.yaml`` (the table:
``docs/parameters.md``), from which they are declared.

Bad input raises ``NodeConfigError`` with one line naming the parameter and the file: a
``model_yaml`` that does not exist or is not YAML, a xacro that fails (missing argument), a
URDF the converter refuses (non-finite mass ...).
"""
from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.ros.common import NodeConfigError
from rbd_ros.ros.parameters import schema
from rbd_ros.util.resources import bundled_urdf

#: name -> default ('' = not given; gravity None = not given): config/schema/robot.yaml
ROBOT_PARAMETERS: dict[str, Any] = schema("robot").defaults()


@dataclass(frozen=True)
class LoadedRobot:
    """The ``MdhModel``, where it came from (a path or 'robot_description parameter'), a
    name for look-ups by robot (the file stem; '' for XML text) and, from a URDF, every link
    on the model's bodies (``rbd_ros.model.link_frames.LinkFrames``; None for a model file)."""

    model: Any
    source: str
    stem: str
    link_frames: Any = None
    urdf_xml: str = ""  # the URDF text (after xacro), '' for a model file
    #: the URDF's conversion (``rbd_ros.urdf.UrdfConversion``: link offsets, frames) the model
    #: came from, kept so a process converts its URDF once; None for a model file
    conversion: Any = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def urdf(self) -> str | None:
        """The URDF the model came from, for its collision shapes (a file path, or the XML
        text of ``robot_description``); None for a model file."""
        if not self.urdf_xml:
            return None
        return self.source if self.stem else self.urdf_xml


def robot_model(params: Mapping[str, Any], base_type: str = "") -> LoadedRobot:
    """The model described by ``params`` (keys of ``ROBOT_PARAMETERS``, or a deprecated name of
    one: ``base``; missing = not given); ``base_type`` a ``MdhModel.base_type`` that wins over
    the parameter ('' = the parameter's, else the file's; URDF: fixed)."""
    from rbd_ros.urdf import load_conversion  # lazy: the URDF converter, not at the nodes' import

    given, _ = schema("robot").resolve({k: v for k, v in params.items() if v is not None})
    p = {**ROBOT_PARAMETERS, **given}
    base = base_type or str(p["base_type"])
    gravity = _gravity(p["gravity"])
    if p["model_yaml"]:
        path = str(p["model_yaml"])
        if not Path(path).is_file():
            raise NodeConfigError(f"model_yaml '{path}': file not found")
        try:
            model = MdhModel.from_yaml(path)
            model = model.with_base_type(base) if base else model
        except (ValueError, TypeError) as exc:
            raise NodeConfigError(f"model_yaml '{path}': {_after(str(exc), path)}") from None
        loaded = LoadedRobot(model, path, Path(path).stem)
    else:
        if p["package_paths"]:  # where this process finds the URDF's meshes (collisions, video)
            from rbd_ros.sim.urdf_visuals import set_package_paths  # lazy: the URDF visuals, for package_paths only

            set_package_paths([str(d) for d in p["package_paths"]])
        if not isinstance(p["inertia_fix"], bool):
            raise NodeConfigError(f"inertia_fix must be true or false, got {p['inertia_fix']!r}")
        source, where, stem = urdf_source(p["robot_description"], p["urdf_path"])
        with urdf_errors(where):
            conv = load_conversion(source, base_link=p["base_link"] or None, tip_link=p["tip_link"] or None,
                                   base_type=base or "fixed", keep_inertia=not p["inertia_fix"])
        loaded = LoadedRobot(conv.model, source if stem else "robot_description parameter", stem,
                             conv.link_frames, conv.urdf_xml, conv)
    if gravity is not None:
        loaded = dataclasses.replace(loaded, model=loaded.model.replace(gravity=gravity))
    return loaded


def urdf_source(robot_description: str, urdf_path: str) -> tuple[str, str, str]:
    """What to give the URDF converter (XML text or a file path), the parameter it came from
    as error messages name it, and the file stem ('' for XML text): ``robot_description``
    wins, then ``urdf_path``, then the bundled default robot."""
    if str(robot_description).strip():
        return robot_description, "robot_description", ""
    path = Path(urdf_path).expanduser() if urdf_path else bundled_urdf()
    if not path.is_file():
        raise NodeConfigError(f"urdf_path '{path}': file not found")
    return str(path), f"urdf_path '{path}'", path.stem


@contextmanager
def urdf_errors(where: str) -> Iterator[None]:
    """A ``UrdfError`` of the converter as ``NodeConfigError('<where>: <reason>')``."""
    from rbd_ros.urdf import UrdfError  # lazy: the URDF converter, not at the nodes' import

    try:
        yield
    except UrdfError as exc:  # its message starts with the file or 'robot_description string'
        path = where.partition("'")[2].rstrip("'")  # "urdf_path '<path>'" -> <path>
        label = path or "robot_description string"
        raise NodeConfigError(f"{where}: {_after(str(exc), label)}") from None


def _after(message: str, label: str) -> str:
    """``message`` without a leading ``label:`` (the caller names the parameter and file)."""
    return message[len(label) + 1:].strip() if message.startswith(label + ":") else message


def _gravity(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    try:
        g = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        g = np.full(1, np.nan)
    if g.shape != (3,) or not np.isfinite(g).all():
        raise NodeConfigError(f"gravity must be 3 finite numbers, got {value!r}")
    return g


def declare_robot_parameters(node: Any) -> None:
    """Declare the robot parameters (read-only) on ``node`` (those not declared yet: a managed
    node configured again)."""
    robot = schema("robot")
    for name, spec in robot.specs.items():
        if not node.has_parameter(name):  # any type for gravity: an unset one stays None
            robot.adopt_deprecated(node, spec)  # base:=... as base_type:=..., with a warning
            node.declare_parameter(name, spec.default, spec.descriptor())


def declare_swappable_model(node: Any, service: str) -> None:
    """``model_yaml`` declared settable on ``node`` (issue 44; the other robot parameters stay
    read-only), before ``declare_robot_parameters``: the controller and the dynamics server,
    whose ``on_set_parameters`` callback loads, checks and swaps the new model as their
    ``service`` (``~/load_model``, ``/rbd/load_model``) does, refused with the reason otherwise."""
    if node.has_parameter("model_yaml"):
        return
    spec = schema("robot")["model_yaml"]
    descriptor = spec.descriptor()
    descriptor.read_only = False
    descriptor.description += (f" Settable on the running node: the model is swapped in as by "
                               f"{service} (checked first; refused with the reason). After a swap "
                               f"by {service} it names the file swapped in, or is '' when that "
                               f"model came as URDF (robot_description text or urdf_path).")
    node.declare_parameter("model_yaml", spec.default, descriptor)


_following = threading.local()  # set while follow_swapped_model sets the parameter itself


def follow_swapped_model(node: Any, model_yaml: str) -> None:
    """After a swap through the ``load_model`` service: the ``model_yaml`` parameter names the
    model in use, the file given, or ``''`` when the model came as URDF (text or a path; the
    service's answer and the log name it): at runtime ``''`` then means "the URDF that
    ``load_model`` took", not "no model file".  The node's ``on_set_parameters`` callback lets
    this setting through without loading again (``following_swap``).  Nothing is set where
    ``model_yaml`` is not the node's to set (read-only: the composed controller's is the
    bridge's)."""
    from rclpy.parameter import Parameter

    if not node.has_parameter("model_yaml") or node.describe_parameter("model_yaml").read_only:
        return
    if node.get_parameter("model_yaml").value == model_yaml:
        return
    _following.active = True
    try:
        result = node.set_parameters([Parameter("model_yaml", value=model_yaml)])[0]
    finally:
        _following.active = False
    if not result.successful:  # another callback of the node refused: said, the swap stands
        node.get_logger().warning(f"model_yaml not updated after the swap: {result.reason}")


def following_swap() -> bool:
    """True inside ``follow_swapped_model``'s own setting of ``model_yaml`` (this thread):
    the model is in use already, the node's callback accepts without loading it again."""
    return getattr(_following, "active", False)


def robot_from_node(node: Any, base_type: str = "") -> LoadedRobot:
    """Declare the robot parameters on ``node`` and load the model they describe
    (``base_type``: ``robot_model``)."""
    declare_robot_parameters(node)
    return robot_model({name: node.get_parameter(name).value for name in ROBOT_PARAMETERS}, base_type)
