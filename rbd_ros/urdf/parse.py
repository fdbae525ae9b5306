"""Read a URDF (file, ``robot_description`` string or xacro) into a checked kinematic tree.

Parsing itself is done by the maintained parsers: ``xacro`` expands macros/arguments and
``urdf_parser_py`` reads the URDF.  This module only turns their output (and their
exceptions) into a small immutable :class:`UrdfTree` with numpy transforms, and checks what
they do not: duplicate names, joints naming unknown links, several roots or cycles, zero
joint axes.  Every failure is a :class:`~rbd_ros.urdf.errors.UrdfError` naming the culprit.

The converter on top of it follows 003 §1.6 (Craig's modified DH).
"""
from __future__ import annotations

import os
import re
import threading
import xml.dom.minidom
import xml.etree.ElementTree as ET
import xml.parsers.expat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import urdf_parser_py.xml_reflection as xmlr
import urdf_parser_py.xml_reflection.core as core
from urdf_parser_py.urdf import URDF

from rbd_ros.urdf.errors import UrdfError
from rbd_ros.urdf.transforms import origin_transform

MOVABLE = ("revolute", "continuous", "prismatic")
JOINT_TYPES = MOVABLE + ("fixed", "floating", "planar")

_PARSER_LOCK = threading.Lock()  # urdf_parser_py and xacro keep state in module globals


@dataclass(frozen=True)
class Mimic:
    """``<mimic joint multiplier offset>``: this joint = multiplier * joint + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class JointInfo:
    """One URDF ``<joint>``; ``origin`` is parent link -> joint frame (= child link at q=0)."""

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray | None  # unit vector in the joint frame; None for fixed/floating/planar
    lower: float = -np.inf
    upper: float = np.inf
    velocity: float = np.inf
    effort: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    mimic: Mimic | None = None

    @property
    def movable(self) -> bool:
        return self.type in MOVABLE


@dataclass(frozen=True)
class LinkInfo:
    """One URDF ``<link>``'s inertial: ``frame`` is link -> inertial frame (``<origin>``),
    ``inertia`` the 3x3 tensor about the centre of mass in that frame's axes."""

    name: str
    mass: float = 0.0
    frame: np.ndarray = field(default_factory=lambda: np.eye(4))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))


@dataclass(frozen=True)
class UrdfTree:
    """A parsed, checked URDF: links, joints and the tree structure between them."""

    name: str
    links: dict[str, LinkInfo]
    joints: dict[str, JointInfo]
    root: str
    parent_joint: dict[str, str]  # child link -> joint
    child_joints: dict[str, tuple[str, ...]]  # link -> joints leaving it (document order)
    xml: str  # the URDF text actually parsed (after xacro)
    source: str  # label for messages: the path or "robot_description string"
    warnings: tuple[str, ...] = ()

    def ancestors(self, link: str) -> list[str]:
        """Joints from the root down to ``link`` (root first)."""
        out: list[str] = []
        while link in self.parent_joint:
            jn = self.parent_joint[link]
            out.append(jn)
            link = self.joints[jn].parent
        return out[::-1]

    def subtree(self, link: str) -> list[str]:
        """Links below ``link`` (itself first, depth first in document order)."""
        out, stack = [], [link]
        while stack:
            cur = stack.pop()
            out.append(cur)
            stack.extend(self.joints[j].child for j in reversed(self.child_joints.get(cur, ())))
        return out


# ---- reading the text ------------------------------------------------------------------------
def looks_like_xml(text: str) -> bool:
    return text.lstrip().startswith("<")


def read_description(source: str | os.PathLike, xacro_args: Mapping[str, str] | None = None
                     ) -> tuple[str, str]:
    """The URDF text of ``source`` and a label for messages.

    ``source`` is a path to a ``.urdf``/``.xacro`` file or the XML text itself (e.g. a
    ``robot_description`` parameter).  Xacro runs when the file ends in ``.xacro``, the text
    declares the xacro namespace, or ``xacro_args`` are given.
    """
    args = {str(k): str(v) for k, v in (xacro_args or {}).items()}
    if isinstance(source, (str, os.PathLike)) and not (isinstance(source, str) and looks_like_xml(source)):
        path = Path(source)
        label = str(path)
        if not path.is_file():
            raise UrdfError(f"{label}: no such URDF/xacro file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UrdfError(f"{label}: cannot read: {exc}") from None
        if path.suffix == ".xacro" or args or _declares_xacro(text):
            text = _run_xacro(path.resolve(), None, args, label)
        return text, label
    if not isinstance(source, str):
        raise UrdfError(f"source must be a path or URDF XML text, got {type(source).__name__}")
    label = "robot_description string"
    if args or _declares_xacro(source):
        return _run_xacro(None, source, args, label), label
    return source, label


def _declares_xacro(text: str) -> bool:
    return re.search(r"xmlns:xacro\s*=", text) is not None


def _run_xacro(path: Path | None, text: str | None, args: dict[str, str], label: str) -> str:
    try:
        import xacro
    except ImportError:  # pragma: no cover - xacro is a dependency
        raise UrdfError(f"{label}: is a xacro file but the 'xacro' package is not installed") from None

    try:
        with _PARSER_LOCK:  # xacro keeps its file stack and arguments in module globals
            if path is not None:
                doc = xacro.process_file(str(path), mappings=args)
            else:
                xacro.init_stacks(None)
                doc = xacro.parse(text)
                xacro.process_doc(doc, mappings=args)
        return doc.toxml()
    except xml.parsers.expat.ExpatError as exc:
        raise UrdfError(f"{label}: not well-formed XML: {_one_line(str(exc))}") from None
    except xacro.XacroException as exc:
        raise UrdfError(f"{label}: xacro failed: {_one_line(str(exc))}") from None
    except Exception as exc:  # noqa: BLE001 - xacro raises bare NameError/KeyError/... for bad expressions
        raise UrdfError(f"{label}: xacro failed: {type(exc).__name__}: {_one_line(str(exc))}") from None


def _one_line(text: str) -> str:
    return " ".join(text.split())


# ---- parsing ---------------------------------------------------------------------------------
def parse_urdf(text: str, label: str = "robot_description string") -> UrdfTree:
    """Parse URDF text with ``urdf_parser_py`` and check the tree (see module docstring)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UrdfError(f"{label}: not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise UrdfError(f"{label}: the root element is <{root.tag}>, expected <robot>")
    _check_names(root, label)
    robot, warnings = parse_with_urdf_parser_py(text, label)

    links: dict[str, LinkInfo] = {}
    for link in robot.links:
        links[link.name] = _link_info(link, label)
    joints: dict[str, JointInfo] = {}
    for joint in robot.joints:
        joints[joint.name] = _joint_info(joint, label)
    if not links:
        raise UrdfError(f"{label}: the robot has no links")

    parent_joint: dict[str, str] = {}
    child_joints: dict[str, list[str]] = {name: [] for name in links}
    for j in joints.values():
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                raise UrdfError(f"{label}: joint '{j.name}' names unknown {role} link '{link}'")
        if j.child in parent_joint:
            raise UrdfError(f"{label}: link '{j.child}' is the child of two joints, "
                            f"'{parent_joint[j.child]}' and '{j.name}'")
        parent_joint[j.child] = j.name
        child_joints[j.parent].append(j.name)
    for j in joints.values():
        if j.mimic is not None and j.mimic.joint not in joints:
            raise UrdfError(f"{label}: joint '{j.name}' mimics unknown joint '{j.mimic.joint}'")
    roots = [name for name in links if name not in parent_joint]
    if len(roots) != 1:
        what = "no root link (the joints form a cycle)" if not roots else f"several root links {roots}"
        raise UrdfError(f"{label}: {what}; a URDF must be a single tree")
    tree = UrdfTree(name=robot.name or "robot", links=links, joints=joints, root=roots[0],
                    parent_joint=parent_joint, child_joints={k: tuple(v) for k, v in child_joints.items()},
                    xml=text, source=label, warnings=tuple(warnings))
    reached = set(tree.subtree(tree.root))
    if len(reached) != len(links):  # a cycle not touching the root
        raise UrdfError(f"{label}: links {sorted(set(links) - reached)} are in a joint cycle")
    return tree


def _check_names(root: ET.Element, label: str) -> None:
    for tag in ("link", "joint"):
        seen: set[str] = set()
        for el in root.findall(tag):
            name = el.get("name")
            if not name:
                raise UrdfError(f"{label}: a <{tag}> has no name")
            if name in seen:
                raise UrdfError(f"{label}: duplicate {tag} name '{name}'")
            seen.add(name)


def _for_parser(text: str) -> str:
    """The URDF text for ``urdf_parser_py`` minus what the converter does not read and the
    parser refuses although urdfdom (Pinocchio, robot_state_publisher) accepts it:
    ``<transmission>`` elements (the old pre-ros_control form some robots still ship, e.g.
    PR2's ``<transmission type=...>``) and a material's ``<texture/>`` without a
    ``filename`` (no texture; iCub's URDF has 40)."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return text  # the parser names the error
    found = [(root, el) for el in root.findall("transmission")]
    for material in root.iter("material"):
        found += [(material, el) for el in material.findall("texture") if not el.get("filename")]
    if not found:
        return text
    for parent, el in found:
        parent.remove(el)
    return ET.tostring(root, encoding="unicode")


def parse_with_urdf_parser_py(text: str, label: str):
    """Run ``urdf_parser_py`` on ``_for_parser(text)`` collecting its warnings instead of
    printing them."""

    text = _for_parser(text)
    warnings: list[str] = []
    with _PARSER_LOCK:
        saved = core.on_error, xmlr.on_error
        core.on_error = xmlr.on_error = warnings.append
        try:
            robot = URDF.from_xml_string(text)
        except Exception as exc:  # noqa: BLE001 - ParseError / AssertionError / ValueError from the parser
            msg = _one_line(str(exc)) or type(exc).__name__
            raise UrdfError(f"{label}: invalid URDF: {msg}") from None
        finally:
            core.on_error, xmlr.on_error = saved
    return robot, warnings


def _floats(values, what: str, label: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if not np.isfinite(arr).all():
        raise UrdfError(f"{label}: {what} is not finite: {arr.reshape(-1).tolist()}")
    return arr


def _origin(el, what: str, label: str) -> np.ndarray:
    if el is None:
        return np.eye(4)
    xyz = _floats(el.xyz if el.xyz is not None else [0, 0, 0], f"{what} origin xyz", label)
    rpy = _floats(el.rpy if el.rpy is not None else [0, 0, 0], f"{what} origin rpy", label)
    return origin_transform(xyz, rpy)


def _link_info(link, label: str) -> LinkInfo:
    inertial = link.inertial
    if inertial is None:
        return LinkInfo(link.name)
    what = f"link '{link.name}' inertial"
    mass = float(_floats(inertial.mass if inertial.mass is not None else 0.0, f"{what} mass", label))
    if mass < 0:
        raise UrdfError(f"{label}: {what} has negative mass {mass}")
    inertia = np.zeros((3, 3))
    if inertial.inertia is not None:
        inertia = _floats(inertial.inertia.to_matrix(), f"{what} inertia", label)
    return LinkInfo(link.name, mass, _origin(inertial.origin, what, label), inertia)


def _joint_info(joint, label: str) -> JointInfo:
    what = f"joint '{joint.name}'"
    kind = joint.type
    if kind not in JOINT_TYPES:
        raise UrdfError(f"{label}: {what} has unknown type '{kind}'")
    axis = None
    if kind in MOVABLE:
        raw = _floats(joint.axis if joint.axis is not None else [1.0, 0.0, 0.0], f"{what} axis", label)
        norm = float(np.linalg.norm(raw))
        if norm < 1e-12:
            raise UrdfError(f"{label}: {what} has a zero axis {list(raw)}")
        axis = raw / norm
    kw: dict[str, float] = {}
    lim = joint.limit
    if lim is not None:
        if kind in ("revolute", "prismatic"):
            kw["lower"] = float(lim.lower if lim.lower is not None else 0.0)
            kw["upper"] = float(lim.upper if lim.upper is not None else 0.0)
            for side in ("lower", "upper"):
                if np.isnan(kw[side]):
                    raise UrdfError(f"{label}: {what} has a NaN {side} limit; give it a number in "
                                    f"<limit {side}=\"...\"/>")
            if kw["lower"] > kw["upper"]:
                raise UrdfError(f"{label}: {what} has lower limit {kw['lower']} above upper {kw['upper']}")
        for key in ("velocity", "effort"):
            value = getattr(lim, key)
            if value is not None:
                if np.isnan(float(value)):
                    raise UrdfError(f"{label}: {what} has a NaN {key} limit; give it a number in "
                                    f"<limit {key}=\"...\"/>")
                kw[key] = abs(float(value))
    dyn = joint.dynamics
    if dyn is not None:
        kw["damping"] = float(dyn.damping or 0.0)
        kw["friction"] = float(dyn.friction or 0.0)
    mimic = None
    if joint.mimic is not None:
        m = joint.mimic
        mimic = Mimic(str(m.joint), float(1.0 if m.multiplier is None else m.multiplier),
                      float(0.0 if m.offset is None else m.offset))
    return JointInfo(name=joint.name, type=kind, parent=joint.parent, child=joint.child,
                     origin=_origin(joint.origin, what, label), axis=axis, mimic=mimic, **kw)


def load_tree(source: str | os.PathLike, xacro_args: Mapping[str, str] | None = None) -> UrdfTree:
    """Read and parse ``source`` (path or XML text, xacro expanded) into a :class:`UrdfTree`."""
    text, label = read_description(source, xacro_args)
    return parse_urdf(text, label)


__all__ = ["JointInfo", "LinkInfo", "Mimic", "UrdfTree", "load_tree", "parse_urdf", "read_description",
           "MOVABLE", "JOINT_TYPES"]
