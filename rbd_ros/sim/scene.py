"""Objects the simulated arm can touch: a scene file, its placement, and its MuJoCo geoms (ROS-free).

A scene file (YAML; bundled: ``config/scenes/table.yaml``, ``config/scenes/wall.yaml``)::

    name: table
    objects:
      - name: table
        type: box            # box | cylinder | sphere | plane
        size: [0.5, 0.6, 0.04]   # full sizes, m: box x y z; cylinder [diameter, height];
                             # sphere [diameter]; plane [x, y] (0: infinite)
        pose: auto           # or {xyz: [x, y, z], rpy: [r, p, y]} in the world (the base frame)
        friction: [0.5, 0.005, 0.0001]  # MuJoCo's sliding, torsional, rolling (default)
        anchor: top          # the face 'auto' puts at the contact point: top | front

``pose: auto`` (the bundled files) leaves the placement to :func:`place_scene`, which puts the
object's ``anchor`` face where the arm reaches it with the tool pointing into it and room to
slide (``rbd_ros.sim.contact_task``): a table top below the tool, a wall in front of it.

Contacts (:func:`add_scene`): every scene geom collides with the robot's collision geoms
and nothing else (MuJoCo's ``contype``/``conaffinity`` bits: scene ``01``/``10``, robot
``10``/``01``; so neither the robot's links with each other nor the static objects with each
other).  The robot's collision geoms (``mujoco_model.add_robot_collision``) are a URDF's
``<collision>`` shapes (``urdf_visuals.urdf_collisions``: the ``Simulator``'s ``urdf``;
meshes MuJoCo loads, boxes, cylinders, spheres), per body where MuJoCo loads all of them,
else (and for a model file) the link capsules it builds for ``contacts`` (radius
``ROBOT_RADIUS``), and on the last body a tool sphere (``TIP_RADIUS``, named ``tip``) at the
tool origin, instead of its capsule: the probe the contact tasks press with (its length
keeps it beyond the last body's shapes: ``contact_site.probe_lengths``).  A contact's
friction is the larger of the two geoms' (MuJoCo's rule): the robot's geoms carry
MuJoCo's smallest, so the object's friction decides.

**Contact stiffness in N/m** (``stiffness``, ``damping``; default ``DEFAULT_STIFFNESS``,
``DEFAULT_DAMPING``).  MuJoCo's soft contact is set in accelerations: ``solref`` and
``solimp`` (``d``) fix ``a1 + d (b v + k r) = (1 - d) a0`` at the contact, so at rest
``r = (1 - d) f / (d k m)``: the same ``solref`` is a pad 7x thinner under the UR5 (``m`` =
6.2 kg along the table normal at its contact site) than under the UR3 (0.9 kg).  Sliding with
friction ``mu``, MuJoCo's convex contact also lifts the probe (the friction rows' damping
``b`` couples into the normal one, at about ``mu b |v_t|``): a thin pad then lets go for
single steps, 64 per slide on the joint-limited UR5.  So a placed scene (``place_scene`` with
the arm's mass ``m`` along the normal at the contact site, ``contact_site.normal_mass``) turns
``stiffness`` ``K`` and ``damping`` ``B`` into MuJoCo's direct ``solref = (-k, -b)`` with a
constant impedance ``d`` (``contact_solref``): ``k = K (1 - d) / m``, ``b = B (1 - d) / m``,
so that every arm meets about the same pad.  Not exactly ``K``: MuJoCo sizes its
regulariser by its own approximate inertia (``efc_D``, from ``body_invweight0``), and the
pad measured at 10 N is 0.35-0.6 mm on the UR3, UR5 and Z1 (``K`` = 1e4 says 1 mm) where
MuJoCo's own ``solref`` put them 7x apart (``test_force_acceptance``).  A given
``solref``/``solimp`` is used as it is (and objects placed without an arm's mass fall back
to ``DEFAULT_SOLREF``/``DEFAULT_SOLIMP``).  Without a scene nothing is added and
contacts stay off: the model, and so the dynamics, are the ones built before (bit-identical;
``test_scene_contact``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import yaml

from rbd_ros.sim.mujoco_model import SCENE_BITS, mj_quaternion, rotation_onto
from rbd_ros.urdf.transforms import origin_transform
from rbd_ros.util import yaml_io
from rbd_ros.util.resources import share_dir

KINDS = ("box", "cylinder", "sphere", "plane")
ANCHORS = ("top", "front")
DEFAULT_FRICTION = (0.5, 0.005, 0.0001)
DEFAULT_SOLREF = (0.05, 1.0)  # MuJoCo's contact time constant (s) and damping ratio
DEFAULT_SOLIMP = (0.5, 0.6, 0.001, 0.5, 2.0)  # and impedance: a pad ~1 mm deep at 10 N
DEFAULT_STIFFNESS = 1.0e4  # N/m, the pad an arm meets (module docstring): ~0.5 mm at 10 N
DEFAULT_DAMPING = 50.0  # N s/m
CONTACT_IMPEDANCE = 0.6  # MuJoCo's d, constant, with a stiffness in N/m
_SIZES = {"box": 3, "cylinder": 2, "sphere": 1, "plane": 2}


@dataclass(frozen=True)
class SceneObject:
    """One object (module docstring); ``pose`` a 4x4 in the world or ``None`` (auto)."""

    name: str
    kind: str
    size: tuple[float, ...]
    pose: np.ndarray | None = None
    friction: tuple[float, ...] = DEFAULT_FRICTION  # sliding, torsional, rolling
    anchor: str = "top"
    solref: tuple[float, ...] = DEFAULT_SOLREF  # 2 numbers (MuJoCo's)
    solimp: tuple[float, ...] = DEFAULT_SOLIMP  # 5 numbers (MuJoCo's)
    rgba: tuple[float, float, float, float] = (0.55, 0.42, 0.30, 1.0)
    stiffness: float | None = DEFAULT_STIFFNESS  # N/m; None: solref/solimp as given
    damping: float = DEFAULT_DAMPING  # N s/m

    def anchor_offset(self) -> np.ndarray:
        """The anchor face's centre in the object's frame (top: +z; front: -x)."""
        half = _half_sizes(self)
        if self.anchor == "top":
            return np.array([0.0, 0.0, half[2]])
        return np.array([-half[0], 0.0, 0.0])


@dataclass(frozen=True)
class Scene:
    name: str
    objects: tuple[SceneObject, ...] = field(default_factory=tuple)
    source: str = ""

    @property
    def placed(self) -> bool:
        return all(o.pose is not None for o in self.objects)

    def add_to(self, spec) -> None:
        """:func:`add_scene` (what ``mujoco_model.build_mujoco_model`` calls)."""
        add_scene(spec, self)


def _half_sizes(obj: SceneObject) -> np.ndarray:
    """Box-like half extents (x, y, z) of ``obj`` (a plane: 0 thick; infinite: 1e3)."""
    s = obj.size
    if obj.kind == "box":
        return 0.5 * np.array(s, dtype=float)
    if obj.kind == "cylinder":
        return np.array([0.5 * s[0], 0.5 * s[0], 0.5 * s[1]])
    if obj.kind == "sphere":
        return np.full(3, 0.5 * s[0])
    return np.array([0.5 * s[0] or 1e3, 0.5 * s[1] or 1e3, 0.0])


def scenes_dir() -> Path:
    return share_dir() / "config" / "scenes"


def resolve_scene(name_or_path: str | Path) -> Path:
    """A scene file: a path, or the name of a bundled one (``table``, ``wall``)."""
    p = Path(str(name_or_path))
    if p.is_file():
        return p
    bundled = scenes_dir() / f"{p.stem if p.suffix else p.name}.yaml"
    if bundled.is_file() and not p.parent.parts:
        return bundled
    known = sorted(f.stem for f in scenes_dir().glob("*.yaml"))
    raise FileNotFoundError(f"scene '{name_or_path}' not found: give a YAML file or one of the "
                            f"bundled scenes {known}")


def load_scene(source: str | Path | dict) -> Scene:
    """A :class:`Scene` from a file (or bundled name) or a mapping; ``ValueError`` naming the
    object and field that is wrong."""

    where = "scene"
    if isinstance(source, dict):
        data = source
    else:
        path = resolve_scene(source)
        where = str(path)
        try:
            data = yaml_io.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ValueError(f"{where}: not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict) or not isinstance(data.get("objects"), list) or not data["objects"]:
        raise ValueError(f"{where}: expected a mapping with a non-empty list 'objects'")
    objects = [_object(o, k, where) for k, o in enumerate(data["objects"])]
    names = [o.name for o in objects]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: object names must be unique, got {names}")
    return Scene(str(data.get("name") or Path(where).stem), tuple(objects), where)


def _object(raw: Any, k: int, where: str) -> SceneObject:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: object {k} must be a mapping, got {raw!r}")
    name = str(raw.get("name") or f"object{k}")
    label = f"{where}: object '{name}'"
    unknown = sorted(set(raw) - {"name", "type", "size", "pose", "friction", "anchor", "rgba",
                                 "solref", "solimp", "stiffness", "damping"})
    if unknown:
        raise ValueError(f"{label}: unknown field(s) {unknown}")
    kind = str(raw.get("type", ""))
    if kind not in KINDS:
        raise ValueError(f"{label}: type must be one of {', '.join(KINDS)}, got '{kind}'")
    size = _numbers(raw.get("size"), _SIZES[kind], f"{label}: size")
    if kind == "plane" and (size < 0).any() or kind != "plane" and not (size > 0).all():
        raise ValueError(f"{label}: size must be positive (m), got {size.tolist()}")
    friction = _numbers(raw.get("friction", DEFAULT_FRICTION), 3, f"{label}: friction")
    if (friction < 0).any():
        raise ValueError(f"{label}: friction must be >= 0, got {friction.tolist()}")
    anchor = str(raw.get("anchor", "top"))
    if anchor not in ANCHORS:
        raise ValueError(f"{label}: anchor must be one of {', '.join(ANCHORS)}, got '{anchor}'")
    pose = raw.get("pose", "auto")
    T = None
    if pose != "auto":
        if not isinstance(pose, dict) or set(pose) - {"xyz", "rpy"}:
            raise ValueError(f"{label}: pose must be 'auto' or {{xyz: [x, y, z], rpy: [r, p, y]}}, "
                             f"got {pose!r}")
        T = origin_transform(_numbers(pose.get("xyz", [0, 0, 0]), 3, f"{label}: pose xyz"),
                             _numbers(pose.get("rpy", [0, 0, 0]), 3, f"{label}: pose rpy"))
    rgba = tuple(_numbers(raw.get("rgba", SceneObject.rgba), 4, f"{label}: rgba"))
    solref = tuple(_numbers(raw.get("solref", DEFAULT_SOLREF), 2, f"{label}: solref"))
    solimp = tuple(_numbers(raw.get("solimp", DEFAULT_SOLIMP), 5, f"{label}: solimp"))
    if not (solref[0] > 0 and solref[1] > 0 and 0 < solimp[0] <= solimp[1] < 1):
        raise ValueError(f"{label}: solref must be [time constant > 0, damping ratio > 0] and "
                         f"solimp [d0, d1, width, ...] with 0 < d0 <= d1 < 1 (MuJoCo's contact "
                         f"softness), got {list(solref)}, {list(solimp)}")
    given = ("solref" in raw or "solimp" in raw, "stiffness" in raw or "damping" in raw)
    if all(given):
        raise ValueError(f"{label}: give either stiffness/damping (N/m, N s/m) or MuJoCo's "
                         "solref/solimp, not both")
    stiff = _numbers(raw.get("stiffness", DEFAULT_STIFFNESS), 1, f"{label}: stiffness")[0]
    damp = _numbers(raw.get("damping", DEFAULT_DAMPING), 1, f"{label}: damping")[0]
    if not (stiff > 0 and damp >= 0):
        raise ValueError(f"{label}: stiffness must be > 0 N/m and damping >= 0 N s/m, got "
                         f"{stiff}, {damp}")
    return SceneObject(name, kind, tuple(float(s) for s in size), T,
                       tuple(float(f) for f in friction), anchor, tuple(float(x) for x in solref),
                       tuple(float(x) for x in solimp), rgba,
                       None if given[0] else float(stiff), float(damp))


def contact_solref(stiffness: float, damping: float, mass: float) -> tuple[tuple, tuple]:
    """MuJoCo's ``(solref, solimp)`` for a contact of ``stiffness`` N/m and ``damping``
    N s/m met by an arm of effective ``mass`` kg along its normal (module docstring): with a
    constant ``d``, MuJoCo's direct ``solref = (-k, -b)`` gives ``aref = -(b v + k d r) / d``
    and ``a = (1 - d) a0 + d aref``, i.e. ``(m / (1 - d)) a = f - (m k / (1 - d)) r -
    (m b / (1 - d)) v`` for an applied force ``f = m a0``: so ``k = K (1 - d) / m`` and
    ``b = B (1 - d) / m``."""
    d = CONTACT_IMPEDANCE
    k = stiffness * (1.0 - d) / mass
    b = damping * (1.0 - d) / mass
    return (-k, -b), (d, d, 0.001, 0.5, 2.0)


def _numbers(value: Any, count: int, what: str) -> np.ndarray:
    try:
        arr = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be {count} numbers, got {value!r}") from None
    if arr.size != count or not np.isfinite(arr).all():
        raise ValueError(f"{what} must be {count} finite numbers, got {value!r}")
    return arr


def place_scene(scene: Scene, contact: np.ndarray, normal: np.ndarray,
                mass: float | None = None) -> Scene:
    """``scene`` with every ``pose: auto`` object placed so that its anchor face's centre is
    at ``contact`` (world) with its outward normal ``normal`` (unit; the face the tool
    touches).  Objects with a pose keep it.  ``mass`` (kg, the arm's along ``normal`` at the
    contact): objects with a ``stiffness`` get the ``solref``/``solimp`` of
    :func:`contact_solref`."""
    objs = []
    for o in scene.objects:
        if mass is not None and o.stiffness is not None:
            solref, solimp = contact_solref(o.stiffness, o.damping, float(mass))
            o = replace(o, solref=solref, solimp=solimp, stiffness=None)
        if o.pose is not None:
            objs.append(o)
            continue
        local = np.array([0.0, 0.0, 1.0]) if o.anchor == "top" else np.array([-1.0, 0.0, 0.0])
        R = rotation_onto(local, np.asarray(normal, float) / np.linalg.norm(normal))
        T = np.eye(4)
        T[:3, :3] = R
        T[:3, 3] = np.asarray(contact, float) - R @ o.anchor_offset()
        objs.append(replace(o, pose=T))
    return replace(scene, objects=tuple(objs))


def add_scene(spec, scene: Scene) -> None:
    """The objects of a placed ``scene`` as static world geoms that touch the robot only
    (module docstring), and contacts switched on."""
    import mujoco

    if not scene.placed:
        auto = [o.name for o in scene.objects if o.pose is None]
        raise ValueError(f"scene '{scene.name}': objects {auto} have pose 'auto': place them "
                         "first (place_scene)")
    spec.option.disableflags &= ~int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC  # friction and normal force uncoupled
    kinds = {"box": mujoco.mjtGeom.mjGEOM_BOX, "cylinder": mujoco.mjtGeom.mjGEOM_CYLINDER,
             "sphere": mujoco.mjtGeom.mjGEOM_SPHERE, "plane": mujoco.mjtGeom.mjGEOM_PLANE}
    for o in scene.objects:
        half = _half_sizes(o)
        pose = cast(np.ndarray, o.pose)  # placed: every object has its pose (checked above)
        size: Any = {"box": half, "cylinder": [half[0], half[2], 0.0], "sphere": [half[0], 0.0, 0.0],
                "plane": [0.5 * o.size[0], 0.5 * o.size[1], 0.1]}[o.kind]
        spec.worldbody.add_geom(name=f"scene_{o.name}", type=kinds[o.kind],
                                size=[float(s) for s in size], pos=pose[:3, 3].tolist(),
                                quat=mj_quaternion(pose[:3, :3]).tolist(), friction=list(o.friction),
                                contype=SCENE_BITS[0], conaffinity=SCENE_BITS[1], rgba=list(o.rgba),
                                mass=0.0, condim=3, solref=list(o.solref), solimp=list(o.solimp))
