"""A URDF's own looks (``<visual>``, else ``<collision>``) placed on the MDH bodies (ROS-free).

The converter places every URDF link riding on MDH frame ``i`` at ``F_i(q) @ offset``
(``UrdfConversion.link_offsets``; ``rbd_ros.urdf.convert``), so a ``<visual>`` with origin
``O`` sits at ``offset @ O`` in MuJoCo body ``i - 1`` (that body is frame ``i``; see
``mujoco_model``).  Links fixed to ``base_link`` sit at their fixed-joint chain in the world.

A link uses its ``<visual>`` elements when MuJoCo can load all of them, else its
``<collision>`` elements (ROS descriptions often have COLLADA ``.dae`` visuals, which MuJoCo
does not read, and ``.stl`` collision meshes), else nothing (the model's link capsules stay).
Meshes are ``.stl``, ``.obj`` or ``.msh`` files found by ``package://NAME/...``
(:func:`package_dir`: the ``package_paths`` given, ``ROS_PACKAGE_PATH``, the ament index, then
folders above and beside the URDF named NAME or whose ``package.xml`` names NAME), ``file://``
or a path relative to the URDF's folder (URDF text has none: such a mesh is not found, never
looked up in the working directory), at their ``scale`` (3 finite non-zero numbers, mirroring
allowed; else not loadable).  A package found nowhere is one note (and a ``UserWarning``, once
per package and process) naming it, its first mesh and where it was looked for: its links
fall back as above (one note names them all).
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rbd_ros.urdf.convert import load_conversion
from rbd_ros.urdf.parse import looks_like_xml, parse_with_urdf_parser_py  # the parser: its remarks collected
from rbd_ros.urdf.transforms import origin_transform

LOADABLE = (".stl", ".obj", ".msh")
GREY = (0.72, 0.74, 0.78, 1.0)
_WARNED: set[str] = set()  # packages already warned about in this process


@dataclass(frozen=True)
class Visual:
    """One shape on MuJoCo body ``body`` (-1: the world): ``kind`` mesh | box | cylinder |
    sphere, MuJoCo ``size`` (half sizes; radius, half length), ``file`` and ``scale`` for a
    mesh, its ``pose`` (4x4) in the body frame, and ``rgba``."""

    body: int
    kind: str
    pose: np.ndarray
    size: tuple[float, ...] = ()
    file: str = ""
    scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    rgba: tuple[float, float, float, float] = GREY


def urdf_visuals(source: str | os.PathLike, base_link: str | None = None,
                 tip_link: str | None = None) -> tuple[list[Visual], list[str]]:
    """The shapes of the module docstring for the chain ``base_link`` -> ``tip_link`` of
    ``source`` (a file; its folder resolves relative mesh paths), and one note per link
    whose shapes could not be used."""
    chain = _Chain(source, base_link, tip_link)
    out: list[Visual] = []
    notes = chain.lost_packages(("visuals", "collisions"), stacklevel=3)
    bare: list[str] = []  # links with shapes, none of them loadable
    for link in chain.placed:
        elements = chain.robot.link_map[link]
        for kind in ("visuals", "collisions"):
            shapes = chain.shapes(link, kind)
            if shapes and all(s is not None for s in shapes):
                out += [s for s in shapes if s is not None]  # all of them (just checked)
                break
        else:
            if elements.visuals or elements.collisions:
                bare.append(f"'{link}'")
    if bare:  # one note for all of them: a lost package leaves every link bare
        named = ", ".join(bare[:6]) + (f" and {len(bare) - 6} more" if len(bare) > 6 else "")
        notes.append(f"link{'s' if len(bare) > 1 else ''} {named}: no shape MuJoCo can load "
                     f"(meshes must be {', '.join(LOADABLE)} files that exist); capsules instead")
    return out, notes


def urdf_collisions(source: str | os.PathLike, base_link: str | None = None,
                    tip_link: str | None = None, model=None,
                    conversion=None, skip: tuple[str, ...] = ()) -> tuple[list[Visual], list[str]]:
    """The ``<collision>`` shapes of the chain's moving bodies (module docstring: what a
    scene's objects touch, ``mujoco_model.add_robot_collision``) and the notes on the rest.

    A body (all the URDF links riding on one MDH frame) gets its links' collision shapes when
    it has some and MuJoCo loads every one of them; otherwise none (it keeps the capsule), and
    when some could not be loaded a note (and one ``UserWarning`` per URDF and process) names
    the links and why.  Links fixed to ``base_link`` (the world body) are left out: they cannot
    move into a static object.  Every returned shape's ``body`` is >= 0.  ``model``: the
    ``MdhModel`` the shapes are for; a chain of other links or other MDH parameters is a
    ValueError naming the difference.  ``conversion``: the chain's ``UrdfConversion`` when the
    caller has it (``LoadedRobot.conversion``), so the URDF is not converted again.  ``skip``:
    links left out (a gripper's moving links: ``rbd_ros.sim.gripper`` gives them their own)."""
    chain = _Chain(source, base_link, tip_link, conversion)
    if model is not None:
        chain.check(model)
    notes = chain.lost_packages(("collisions",), stacklevel=3)
    by_body: dict[int, list[str]] = {}
    for link, (body, _) in chain.placed.items():
        if body >= 0 and link not in skip:
            by_body.setdefault(body, []).append(link)
    out: list[Visual] = []
    failed: list[str] = []
    for _, links in sorted(by_body.items()):
        shapes = {link: chain.shapes(link, "collisions") for link in links}
        bad = [f"'{link}' ({chain.why(link)})" for link, s in shapes.items()
               if any(x is None for x in s)]
        if bad:
            failed += bad
        else:
            out += [x for s in shapes.values() for x in s if x is not None]  # all (none bad)
    if failed:
        note = (f"collision shapes MuJoCo cannot load on link(s) {', '.join(failed)}: their "
                f"bodies keep the capsule (meshes must be {', '.join(LOADABLE)} files that exist)")
        notes.append(note)
        key = f"collisions:{chain.where}:{note}"
        if key not in _WARNED:
            _WARNED.add(key)
            warnings.warn(note, stacklevel=2)
    return out, notes


class _Chain:
    """The URDF links of ``base_link`` -> ``tip_link`` of ``source`` placed on the MDH bodies
    (``placed``: link -> (body, offset); body -1: the world, for links fixed to base_link)."""

    def __init__(self, source: str | os.PathLike, base_link: str | None,
                 tip_link: str | None, conversion=None) -> None:
        conv = conversion if conversion is not None else load_conversion(source, base_link, tip_link)
        self.model = conv.model
        self.folder = Path(source).resolve().parent if names_a_file(source) else None
        self.where = str(source) if self.folder else conv.model.name
        self.robot = robot = parse_with_urdf_parser_py(conv.urdf_xml, str(source))[0]
        self.colours = {m.name: tuple(m.color.rgba) for m in (robot.materials or []) if m.color}
        self.placed = placed = {link: (i - 1, offset)
                                for link, (i, offset) in conv.link_offsets.items()}
        stack = [(conv.model.base_link, np.eye(4))]
        while stack:  # links fixed to base_link: the world body
            link, pose = stack.pop()
            placed.setdefault(link, (-1, pose))
            for joint, child in robot.child_map.get(link, []):
                j = robot.joint_map[joint]
                if j.type == "fixed" and child not in placed:
                    o = j.origin
                    stack.append((child, pose @ origin_transform(o and o.xyz, o and o.rpy)))

    def check(self, model) -> None:
        """ValueError unless ``model`` has this chain's links and MDH geometry (its bodies)."""
        mine = self.model
        if tuple(mine.link_names) != tuple(model.link_names):
            raise ValueError(f"the URDF's chain {list(mine.link_names)} is not the model's "
                             f"{list(model.link_names)}")
        key = mine.mdh_difference(model)
        if key is not None:
            raise ValueError(f"the URDF's MDH '{key}' {np.round(getattr(mine, key), 6).tolist()} "
                             f"is not the model's {np.round(getattr(model, key), 6).tolist()}")

    def shapes(self, link: str, kind: str) -> list[Visual | None]:
        """``link``'s ``kind`` (visuals | collisions) elements, ``None`` where not loadable."""
        body, offset = self.placed[link]
        return [shape_of(e, body, offset, self.folder, self.colours)
                for e in getattr(self.robot.link_map[link], kind)]

    def why(self, link: str) -> str:
        """Why ``link``'s collision shapes cannot all be loaded: its first bad mesh."""
        for e in self.robot.link_map[link].collisions:
            uri = getattr(e.geometry, "filename", None)
            if uri is None:
                if type(e.geometry).__name__.lower() not in ("box", "cylinder", "sphere"):
                    return f"a {type(e.geometry).__name__} geometry"
                continue
            path = resolve(uri, self.folder)
            if path is None and self.folder is None and _relative(uri):
                return f"'{uri}' is a relative path in URDF text (no folder to find it in)"
            if path is None:
                return f"'{uri}' not found"
            scale = _scale(e.geometry)
            if scale is None:
                return f"'{path.name}' has scale {e.geometry.scale}: not 3 finite non-zero numbers"
            if not loadable(path, scale):
                return f"MuJoCo cannot read '{path.name}'" + ("" if scale == (1.0, 1.0, 1.0)
                                                              else f" at scale {list(scale)}")
        return "no shape"

    def lost_packages(self, kinds: tuple[str, ...], stacklevel: int) -> list[str]:
        """One note (and a ``UserWarning`` once per package and process) per ``package://``
        package of the chain's ``kinds`` meshes that is found nowhere."""
        lost: dict[str, str] = {}  # package not found -> its first mesh
        for link in self.placed:
            for kind in kinds:
                for element in getattr(self.robot.link_map[link], kind):
                    uri = getattr(element.geometry, "filename", None) or ""
                    package = uri[len("package://"):].partition("/")[0]
                    if uri.startswith("package://") and package_dir(package, self.folder) is None:
                        lost.setdefault(package, uri)
        notes = []
        for package, uri in lost.items():
            note = (f"package '{package}' not found for mesh '{uri}' (looked in: "
                    f"{looked_in(self.folder)}): its links keep their capsules or collision "
                    "shapes; give the folder with --package-path or the package_paths parameter")
            notes.append(note)
            if package not in _WARNED:
                _WARNED.add(package)
                warnings.warn(note, stacklevel=stacklevel)
        return notes


def names_a_file(source: str | os.PathLike) -> bool:
    """Whether ``source`` names a file (not URDF text, which may be too long for a path)."""
    text = str(source)
    if looks_like_xml(text):
        return False
    try:
        return Path(text).is_file()
    except OSError:  # a name too long for the file system
        return False


def shape_of(element, body: int, offset: np.ndarray, folder: Path | None,
           colours: dict) -> Visual | None:
    o, g = element.origin, element.geometry
    pose = offset @ origin_transform(o and o.xyz, o and o.rpy)
    material = getattr(element, "material", None)
    rgba = GREY
    if material is not None:
        if material.color is not None:
            rgba = tuple(material.color.rgba)
        elif material.name in colours:
            rgba = colours[material.name]
    name = type(g).__name__.lower()
    if name == "box":
        return Visual(body, "box", pose, tuple(0.5 * float(s) for s in g.size), rgba=rgba)
    if name == "cylinder":
        return Visual(body, "cylinder", pose, (float(g.radius), 0.5 * float(g.length)), rgba=rgba)
    if name == "sphere":
        return Visual(body, "sphere", pose, (float(g.radius),), rgba=rgba)
    if name == "mesh":
        path, scale = resolve(g.filename, folder), _scale(g)
        if path is None or scale is None or not loadable(path, scale):
            return None
        return Visual(body, "mesh", pose, file=str(path), scale=scale, rgba=rgba)
    return None


def _scale(mesh) -> tuple[float, float, float] | None:
    """A URDF ``<mesh>``'s ``scale`` (one number or three; none: 1), or ``None`` unless its
    entries are finite and non-zero (NaN would reach MuJoCo's vertices silently; 0 is a
    mesh with no surface)."""
    raw: Any = mesh.scale if mesh.scale is not None else (1.0,)  # the URDF's, unchecked
    try:
        values = [float(v) for v in (raw if hasattr(raw, "__len__") else (raw,))]
    except (TypeError, ValueError):
        return None
    if len(values) == 1:
        values *= 3
    if len(values) != 3 or not all(np.isfinite(v) and v != 0.0 for v in values):
        return None
    return values[0], values[1], values[2]


def resolve(uri: str, folder: Path | None) -> Path | None:
    """The file of a URDF mesh ``uri`` (module docstring), or ``None``."""
    if uri.startswith("file://"):
        path = Path(uri[len("file://"):])
    elif uri.startswith("package://"):
        package, _, rest = uri[len("package://"):].partition("/")
        root = package_dir(package, folder)
        if root is None:
            return None
        path = root / rest
    else:
        path = Path(uri)
    if not path.is_absolute():  # relative to the URDF's folder; URDF text has none (not the CWD)
        if folder is None:
            return None
        path = folder / path
    return path if path.is_file() else None


def _relative(uri: str) -> bool:
    """Whether a mesh ``uri`` is a relative path (not ``package://``, not absolute)."""
    return not uri.startswith("package://") and not Path(uri.removeprefix("file://")).is_absolute()


_PACKAGE_PATHS: list[Path] = []  # set_package_paths: the package_paths parameter, --package-path
_FOUND: dict[tuple[str, str, str], Path | None] = {}  # (package, URDF folder, search path) -> dir
_NEAR_LEVELS = 4  # how many folders up from the URDF's the siblings are looked at (names: all)


def set_package_paths(paths: list[str | os.PathLike] | tuple[str | os.PathLike, ...]) -> None:
    """The folders looked in first for ``package://NAME/`` (a node's ``package_paths``
    parameter, the bringup's ``--package-path``): each is the package itself (named NAME, or
    its ``package.xml`` names NAME) or holds it below (as ``ROS_PACKAGE_PATH``'s entries)."""
    _PACKAGE_PATHS[:] = [Path(p).expanduser().resolve() for p in paths]
    _FOUND.clear()


def _package_name(folder: Path) -> str | None:
    """The ``<name>`` of ``folder/package.xml``, or None."""
    try:
        text = (folder / "package.xml").read_text(errors="replace")
    except OSError:
        return None
    start = text.find("<name>")
    end = text.find("</name>", start)
    return text[start + 6:end].strip() if start >= 0 and end > start else None


def _is_package(folder: Path, package: str) -> bool:
    return folder.name == package or _package_name(folder) == package


def _below(root: Path, package: str, depth: int = 3) -> Path | None:
    """``root`` or a folder below it (``depth`` levels at most, hidden ones skipped) that is
    ``package``: named so, or its package.xml names it (ROS_PACKAGE_PATH's crawl, bounded)."""
    level = [root]
    for _ in range(depth + 1):
        nxt: list[Path] = []
        for folder in level:
            if folder.is_dir() and _is_package(folder, package):
                return folder
            try:
                nxt += sorted(c for c in folder.iterdir() if c.is_dir() and not c.name.startswith("."))
            except OSError:
                continue
        level = nxt
    return None


def _near(folder: Path, package: str) -> Path | None:
    """A folder above ``folder`` (or itself) that is ``package``, or one beside it (a child of
    it or of the next folders up) that is."""
    for up, parent in enumerate([folder, *folder.parents]):
        if _is_package(parent, package):
            return parent
        if up < _NEAR_LEVELS:
            if (parent / package).is_dir():
                return parent / package
            try:
                children = sorted(c for c in parent.iterdir() if c.is_dir())
            except OSError:
                continue
            for child in children:
                if _package_name(child) == package:
                    return child
    return None


def _ament(package: str) -> Path | None:
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(package))
    except Exception:  # noqa: BLE001 - no ament index, or no such package
        return None


def _ros_package_path() -> list[Path]:
    return [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]


def package_dir(package: str, folder: Path | None) -> Path | None:
    """The folder of ``package://package/``, looked up in this order: the folders of
    :func:`set_package_paths`, ``ROS_PACKAGE_PATH``'s, the ament index, then folders above the
    URDF's ``folder`` (named ``package``, or whose package.xml names it) and beside it (a
    folder ``package``, or one whose package.xml names it, in the URDF's folder or up to
    three folders up); else ``None`` (:func:`looked_in` says where it looked)."""
    key = (package, str(folder), os.pathsep.join(map(str, _PACKAGE_PATHS + _ros_package_path())))
    if key not in _FOUND:
        found = None
        for root in _PACKAGE_PATHS + _ros_package_path():
            found = _below(root, package)
            if found is not None:
                break
        if found is None:
            found = _ament(package)
        if found is None and folder is not None:
            found = _near(folder, package)
        _FOUND[key] = found
    return _FOUND[key]


def looked_in(folder: Path | None) -> str:
    """Where :func:`package_dir` looked, in one short clause."""
    where = [f"package_paths {[str(p) for p in _PACKAGE_PATHS]}" if _PACKAGE_PATHS
             else "no package_paths (--package-path)"]
    ros = _ros_package_path()
    where.append(f"ROS_PACKAGE_PATH {[str(p) for p in ros]}" if ros else "ROS_PACKAGE_PATH unset")
    where.append("the ament index")
    if folder is not None:
        where.append(f"folders above and beside {folder}")
    return ", ".join(where)


_LOADABLE: dict[tuple[str, tuple[float, ...]], bool] = {}


def loadable(path: Path, scale: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> bool:
    """Whether MuJoCo reads the mesh ``path`` at ``scale`` (checked once per file and scale:
    a tiny scale leaves MuJoCo a mesh with too small a surface)."""
    key = (str(path), tuple(scale))
    if key not in _LOADABLE:
        ok = path.suffix.lower() in LOADABLE
        if ok:
            import mujoco

            spec = mujoco.MjSpec()
            spec.add_mesh(name="m", file=key[0], scale=list(scale))
            spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_MESH, meshname="m",
                                    contype=0, conaffinity=0)
            try:
                spec.compile()
            except Exception:  # noqa: BLE001 - MuJoCo's ValueError on an unreadable mesh
                ok = False
        _LOADABLE[key] = ok
    return _LOADABLE[key]
