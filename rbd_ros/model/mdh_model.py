"""The robot description: a serial chain in Craig's modified Denavit-Hartenberg form.

``MdhModel`` is the immutable description every kernel reads (Pinocchio's ``Model``,
MuJoCo's ``mjModel``).  It is what the URDF converter produces, what ``Robot.from_mdh`` and
``Robot.from_yaml`` take, and what the YAML model files hold.

Frames (003 §1.6, misprint 003 (4.40); docs/references.md):

    ^{i-1}T_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)

with ``theta_i = theta[i] + q_i`` for a revolute joint and ``d_i = d[i] + q_i`` for a
prismatic one.  Arrays are indexed by joint ``i = 0..n-1`` (the book's joint ``i+1``):
``a[i], alpha[i]`` are the book's ``a_{i}, alpha_{i}`` of the *previous* link (Craig's
``a_{i-1}, alpha_{i-1}`` for joint ``i``).  World -> frame 0 is ``base`` (4x4), frame n ->
tool is ``tool`` (4x4); the world frame is the URDF ``base_link``.

Link ``i`` (moved by joint ``i``) has ``mass[i]``, centre of mass ``com[i]`` in frame ``i``
and inertia ``inertia[i]`` (3x3) about the centre of mass, in frame ``i`` axes.

Base (the root joint ahead of the MDH chain): ``base_type`` is ``"fixed"`` (the world frame
is ``base_link``; every existing API) or ``"floating"`` (``base_link`` is a free body on SE(3)
carrying the chain, with its own ``base_mass``, ``base_com`` and ``base_inertia`` about that
centre of mass, in ``base_link`` axes: the URDF root link and everything fixed to it).  With a
floating base ``base`` is still base_link -> MDH frame 0 and ``gravity`` is in the world frame.
``"planar"`` (x, y, yaw on the ground plane) and ``"diff_drive"`` (the same coordinates with
the no-side-slip constraint at the base_link origin, 001 (64)) use the same base body and
``base`` as the arm's mounting transform (:mod:`rbd_ros.robot.mobile`); ``diff_drive`` also has
``wheel_radius`` and ``wheel_separation`` (m, ros2_control ``diff_drive_controller`` meanings),
``wheel_joints`` (left, right URDF joint names; may be empty) and ``wheel_spin_inertia`` (kg m^2,
each wheel about its axle; the wheels' mass is in the base body) and ``wheel_axle_height`` (m:
the axle midpoint's z in ``base_link``, 0 when base_link's origin is on the axle, the wheel
radius for a ``base_footprint`` on the floor; only a simulator's geometry reads it, and only
for ``diff_drive``), ``casters`` (``(x, y, radius)`` in ``base_link``, m: the base's passive
ground contacts found in a URDF; empty = a simulator's default).

Actuators (003 §6.1, (6.15)-(6.17)): ``gear_ratio`` and ``rotor_inertia`` give the armature
``gear_ratio**2 * rotor_inertia`` reflected to the joint; ``viscous`` (N m s/rad) and
``coulomb`` (N m) friction act at the joint.  Motor electrical constants are optional
(``torque_constant``, ``back_emf_constant``, ``resistance``) and used only by the bridge's
voltage mode.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from rbd_ros.model.physical import physical_inertia, warn_once
from rbd_ros.util import validate, yaml_io  # validate: one rule per kind of argument

REVOLUTE = 0
PRISMATIC = 1
JOINT_TYPE_NAMES = {REVOLUTE: "revolute", PRISMATIC: "prismatic"}
JOINT_TYPE_CODES = {v: k for k, v in JOINT_TYPE_NAMES.items()}
#: root joints ahead of the chain (module docstring)
BASE_TYPES = ("fixed", "floating", "planar", "diff_drive")
MOBILE_BASES = ("planar", "diff_drive")
#: names of each base's coordinates in ``q`` and in ``v`` (also accelerations, efforts), in
#: layout order; the ROS services take them as named entries beside the joints
BASE_COORDINATES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "fixed": ((), ()),
    "floating": (("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw"),
                 ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")),
    "planar": (("base_x", "base_y", "base_yaw"), ("base_vx", "base_vy", "base_wz")),
    "diff_drive": (("base_x", "base_y", "base_yaw"), ("base_vx", "base_vy", "base_wz")),
}

#: the default of the optional per-joint fields: ``None`` (absent), which ``__post_init__`` fills
#: from ``_PER_JOINT_DEFAULTS``, so the field holds an ``np.ndarray`` on every model (typed
#: ``Any`` so the fields can be typed as what they hold)
_ABSENT: Any = None
#: per-joint float arrays, with their default value when absent
_PER_JOINT_DEFAULTS: dict[str, float] = {
    "a": 0.0,
    "alpha": 0.0,
    "d": 0.0,
    "theta": 0.0,
    "mass": 0.0,
    "lower": -np.inf,
    "upper": np.inf,
    "velocity_limit": np.inf,
    "effort_limit": np.inf,
    "gear_ratio": 1.0,
    "rotor_inertia": 0.0,
    "viscous": 0.0,
    "coulomb": 0.0,
    "torque_constant": 0.0,
    "back_emf_constant": 0.0,
    "resistance": 0.0,
}


@dataclass(frozen=True, eq=False)
class MdhModel:
    """Immutable modified-DH description of a serial arm (see the module docstring)."""

    joint_names: tuple[str, ...]
    joint_type: np.ndarray  # (n,) int64: REVOLUTE or PRISMATIC
    a: np.ndarray  # (n,) a_{i-1}
    alpha: np.ndarray  # (n,) alpha_{i-1}
    d: np.ndarray  # (n,) d_i (constant part; + q_i if prismatic)
    theta: np.ndarray  # (n,) theta_i (constant part; + q_i if revolute)
    mass: np.ndarray  # (n,)
    com: np.ndarray  # (n, 3) in frame i
    inertia: np.ndarray  # (n, 3, 3) about the centre of mass, frame i axes
    base: np.ndarray = field(default_factory=lambda: np.eye(4))  # world -> frame 0
    tool: np.ndarray = field(default_factory=lambda: np.eye(4))  # frame n -> tool
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    lower: np.ndarray = _ABSENT
    upper: np.ndarray = _ABSENT
    velocity_limit: np.ndarray = _ABSENT
    effort_limit: np.ndarray = _ABSENT
    gear_ratio: np.ndarray = _ABSENT
    rotor_inertia: np.ndarray = _ABSENT
    viscous: np.ndarray = _ABSENT
    coulomb: np.ndarray = _ABSENT
    torque_constant: np.ndarray = _ABSENT
    back_emf_constant: np.ndarray = _ABSENT
    resistance: np.ndarray = _ABSENT
    name: str = "robot"
    base_link: str = "base_link"
    tip_link: str = "tool"
    link_names: tuple[str, ...] = ()  # URDF link moved by each joint (n,)
    base_type: str = "fixed"  # root joint: BASE_TYPES
    base_mass: float = 0.0  # the floating base body (module docstring)
    base_com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    base_inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    wheel_radius: float = 0.0  # diff_drive only (module docstring)
    wheel_separation: float = 0.0
    wheel_joints: tuple[str, ...] = ()  # (left, right) or ()
    wheel_spin_inertia: float = 0.0
    wheel_axle_height: float = 0.0  # m, axle midpoint above base_link's origin (module docstring)
    wheel_effort_limit: float = np.inf  # N m, each drive wheel (URDF <limit effort>); inf = none
    casters: tuple[tuple[float, float, float], ...] = ()  # (x, y, radius) in base_link, m
    #: replace a physically impossible link inertia by the nearest physical one (``_physical_inertia``);
    #: False keeps the description's own (``keep_inertia``: a like-for-like comparison with it)
    inertia_fix: bool = True
    if TYPE_CHECKING:  # set by __post_init__, not a field (declared for the type checker only)
        inertia_notes: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        if n == 0:
            raise ValueError("MdhModel: a robot needs at least one joint")
        if len(set(self.joint_names)) != n:
            raise ValueError(f"MdhModel: joint names are not unique: {list(self.joint_names)}")
        put = object.__setattr__
        put(self, "joint_names", tuple(str(s) for s in self.joint_names))
        jt = self.joint_type
        if isinstance(jt, (list, tuple)) and jt and isinstance(jt[0], str):
            unknown = [t for t in jt if t not in JOINT_TYPE_CODES]
            if unknown:
                raise ValueError(f"MdhModel: unknown joint types {unknown}; use revolute or prismatic")
            jt = [JOINT_TYPE_CODES[t] for t in jt]
        jt = np.array(jt, dtype=np.int64).reshape(-1)
        if jt.shape != (n,) or not np.isin(jt, (REVOLUTE, PRISMATIC)).all():
            raise ValueError(f"MdhModel: joint_type must be {n} values of 0 (revolute) or 1 (prismatic)")
        put(self, "joint_type", jt)
        for name, default in _PER_JOINT_DEFAULTS.items():
            value = getattr(self, name)
            arr = np.full(n, default) if value is None else np.array(value, dtype=float).reshape(-1)
            if arr.shape != (n,):
                raise ValueError(f"MdhModel: {name} must have {n} entries, got shape {np.shape(value)}")
            put(self, name, arr)
        if self.base_type not in BASE_TYPES:
            raise ValueError(f"MdhModel: base_type '{self.base_type}' unknown; use one of {list(BASE_TYPES)}")
        put(self, "base_mass", validate.real("MdhModel: base_mass", self.base_mass))
        self._check_wheels()
        if not (np.isfinite(self.base_mass) and self.base_mass >= 0):
            raise ValueError(f"MdhModel: base_mass must be finite and >= 0, got {self.base_mass}")
        shapes = {"com": (n, 3), "inertia": (n, 3, 3), "base": (4, 4), "tool": (4, 4), "gravity": (3,),
                  "base_com": (3,), "base_inertia": (3, 3)}
        for name, shape in shapes.items():
            arr = np.array(getattr(self, name), dtype=float)
            if arr.shape != shape:
                raise ValueError(f"MdhModel: {name} must have shape {shape}, got {arr.shape}")
            put(self, name, arr)
        for name in ("a", "alpha", "d", "theta", "mass", "com", "inertia", "base", "tool", "gravity",
                     "gear_ratio", "rotor_inertia", "viscous", "coulomb", "base_com", "base_inertia"):
            if not np.isfinite(getattr(self, name)).all():
                raise ValueError(f"MdhModel: {name} contains NaN or Inf")
        for name in ("velocity_limit", "effort_limit", "torque_constant", "back_emf_constant", "resistance"):
            bad = np.flatnonzero(np.isnan(getattr(self, name)))
            if bad.size:
                raise ValueError(f"MdhModel: joint '{self.joint_names[bad[0]]}' has a NaN {name}")
        if (self.mass < 0).any():
            raise ValueError(f"MdhModel: negative mass for joints {list(np.flatnonzero(self.mass < 0))}")
        if not np.allclose(self.base_inertia, self.base_inertia.T, atol=1e-12):
            raise ValueError("MdhModel: base_inertia must be symmetric")
        if not np.allclose(self.inertia, self.inertia.transpose(0, 2, 1), atol=1e-12):
            raise ValueError("MdhModel: inertia tensors must be symmetric")
        validate.joint_limits(self.joint_names, self.lower, self.upper, "MdhModel")
        for name in ("base", "tool"):
            validate.rigid_pose(f"MdhModel: {name}", getattr(self, name))
        link_names = tuple(self.link_names) or tuple(f"link{i + 1}" for i in range(n))
        if len(link_names) != n:
            raise ValueError(f"MdhModel: link_names must have {n} entries")
        put(self, "link_names", link_names)
        put(self, "inertia_fix", validate.flag("MdhModel: inertia_fix", self.inertia_fix))
        inertia, notes = self._physical_inertia()
        put(self, "inertia", inertia)
        put(self, "inertia_notes", notes)  # what was (or, kept, would be) replaced: not a field
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, np.ndarray):
                v.setflags(write=False)

    def _check_wheels(self) -> None:
        """Wheel fields: required (positive) for ``diff_drive``, absent otherwise."""
        put = object.__setattr__
        for key in ("wheel_radius", "wheel_separation", "wheel_spin_inertia"):
            put(self, key, validate.real(f"MdhModel: {key}", getattr(self, key)))
            if not np.isfinite(getattr(self, key)) or getattr(self, key) < 0:
                raise ValueError(f"MdhModel: {key} must be finite and >= 0, got {getattr(self, key)}")
        put(self, "wheel_axle_height", validate.real("MdhModel: wheel_axle_height", self.wheel_axle_height))
        if not np.isfinite(self.wheel_axle_height):
            raise ValueError(f"MdhModel: wheel_axle_height must be finite, got {self.wheel_axle_height}")
        put(self, "wheel_effort_limit", float(self.wheel_effort_limit))
        if not self.wheel_effort_limit > 0:
            raise ValueError(f"MdhModel: wheel_effort_limit must be > 0 (N m; inf for none), "
                             f"got {self.wheel_effort_limit}")
        put(self, "wheel_joints", tuple(str(s) for s in self.wheel_joints))
        casters = np.asarray(self.casters, dtype=float).reshape(-1, 3) if len(self.casters) else np.zeros((0, 3))
        if not (np.isfinite(casters).all() and (casters[:, 2] > 0).all()):
            raise ValueError(f"MdhModel: casters must be (x, y, radius > 0) triples, got {casters.tolist()}")
        put(self, "casters", tuple(tuple(float(x) for x in c) for c in casters))
        if len(self.wheel_joints) not in (0, 2):
            raise ValueError(f"MdhModel: wheel_joints must be (left, right) or empty, got {list(self.wheel_joints)}")
        if self.base_type == "diff_drive":
            missing = [k for k in ("wheel_radius", "wheel_separation") if not getattr(self, k) > 0]
            if missing:
                raise ValueError(f"MdhModel: a diff_drive base needs positive {' and '.join(missing)} "
                                 f"(m, ros2_control diff_drive_controller meanings)")
        elif self.wheel_radius or self.wheel_separation or self.wheel_joints or self.wheel_spin_inertia:
            raise ValueError(f"MdhModel: wheel fields are for base_type 'diff_drive', not '{self.base_type}'")

    def _physical_inertia(self) -> tuple[np.ndarray, tuple[str, ...]]:
        """The link inertias, each physically impossible one replaced by the nearest physical
        tensor (``rbd_ros.model.physical``) unless ``inertia_fix`` is False, and the notes
        saying so.  Each note is an ``InertiaWarning`` once per model and note (``warn_once``:
        the copies of one model, ``replace`` and the perturbed models of a sweep, do not repeat
        it; another file's model of the same name with other inertias does)."""

        out = self.inertia  # a private copy (np.array above), still writable here
        notes = []
        for i in range(self.dof):
            fixed, msg = physical_inertia(out[i], f"link '{self.link_names[i]}' "
                                                  f"(joint '{self.joint_names[i]}')")
            if msg is None:
                continue
            if self.inertia_fix:
                out[i] = 0.5 * (fixed + fixed.T)
            else:
                msg = msg.split(". Using")[0] + "; kept as given (inertia_fix=False)"
            notes.append(msg)
            if self.inertia_fix:
                warn_once(self.name, msg, stacklevel=5)
        return out, tuple(notes)

    @property
    def dof(self) -> int:
        return len(self.joint_names)

    @property
    def armature(self) -> np.ndarray:
        """Rotor inertia reflected through the gear, ``Gamma^T J_M Gamma`` (003 (6.17))."""
        return self.gear_ratio**2 * self.rotor_inertia

    def mdh_difference(self, other: "MdhModel", atol: float = 1e-9) -> str | None:
        """The first MDH parameter (``a``, ``alpha``, ``d``, ``theta``) in which ``other``'s
        chain differs from this one's by more than ``atol``, or None: the same kinematics."""
        for key in ("a", "alpha", "d", "theta"):
            if not np.allclose(getattr(self, key), getattr(other, key), rtol=0.0, atol=atol):
                return key
        return None

    def replace(self, **changes: Any) -> "MdhModel":
        """A copy with some fields changed (the model itself is immutable)."""
        return replace(self, **changes)

    # ---- dictionary / YAML form ------------------------------------------------------------
    def with_base_type(self, base_type: str) -> "MdhModel":
        """The same robot on another root joint (``BASE_TYPES``): the wheel fields dropped
        unless it stays ``diff_drive``; ``diff_drive`` needs this model's own wheels."""
        if base_type == self.base_type:
            return self
        if base_type == "diff_drive":
            raise ValueError(f"base 'diff_drive' needs the wheels (radius, separation) of a diff_drive "
                             f"model file or URDF; this model's base is '{self.base_type}'")
        return self.replace(base_type=base_type, wheel_radius=0.0, wheel_separation=0.0, wheel_joints=(),
                            wheel_spin_inertia=0.0, wheel_axle_height=0.0, wheel_effort_limit=np.inf,
                            casters=())

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python form for YAML/JSON; ``from_dict(to_dict())`` is exact (floats via repr)."""
        out: dict[str, Any] = {
            "name": self.name,
            "base_link": self.base_link,
            "tip_link": self.tip_link,
            "gravity": self.gravity.tolist(),
            "base": self.base.tolist(),
            "tool": self.tool.tolist(),
            "joints": [],
        }
        if self.base_type != "fixed":  # fixed-base files stay as they were
            out["base_type"] = self.base_type
            out["base_body"] = {"mass": self.base_mass, "com": self.base_com.tolist(),
                                "inertia": self.base_inertia.tolist()}
        if self.base_type == "diff_drive":
            out["wheels"] = {"radius": self.wheel_radius, "separation": self.wheel_separation,
                             "joints": list(self.wheel_joints), "spin_inertia": self.wheel_spin_inertia}
            if self.wheel_axle_height:
                out["wheels"]["axle_height"] = self.wheel_axle_height
            if np.isfinite(self.wheel_effort_limit):
                out["wheels"]["effort_limit"] = self.wheel_effort_limit
            if self.casters:
                out["wheels"]["casters"] = [list(c) for c in self.casters]
        for i, jn in enumerate(self.joint_names):
            j: dict[str, Any] = {
                "name": jn,
                "link": self.link_names[i],
                "type": JOINT_TYPE_NAMES[int(self.joint_type[i])],
                "a": float(self.a[i]),
                "alpha": float(self.alpha[i]),
                "d": float(self.d[i]),
                "theta": float(self.theta[i]),
                "mass": float(self.mass[i]),
                "com": self.com[i].tolist(),
                "inertia": self.inertia[i].tolist(),
            }
            for key in list(_PER_JOINT_DEFAULTS)[5:]:
                j[key] = float(getattr(self, key)[i])  # YAML writes inf as .inf
            out["joints"].append(j)
        if not self.inertia_fix:  # files of the default stay as they were
            out["inertia_fix"] = False
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "MdhModel":
        if not isinstance(data, dict) or "joints" not in data:
            raise ValueError("MdhModel.from_dict: expected a mapping with a 'joints' list")
        joints = data["joints"]
        if not isinstance(joints, list) or not joints:
            raise ValueError("MdhModel.from_dict: 'joints' must be a non-empty list")
        for k, j in enumerate(joints):
            missing = [key for key in ("name", "type", "a", "alpha", "d", "theta") if key not in j]
            if missing:
                raise ValueError(f"MdhModel.from_dict: joint {k} lacks {missing}")
        kw: dict[str, Any] = {
            "joint_names": [j["name"] for j in joints],
            "joint_type": [j["type"] for j in joints],
            "link_names": [j.get("link", f"link{k + 1}") for k, j in enumerate(joints)],
            "com": [j.get("com", [0.0, 0.0, 0.0]) for j in joints],
            "inertia": [j.get("inertia", np.zeros((3, 3)).tolist()) for j in joints],
        }
        for key, default in _PER_JOINT_DEFAULTS.items():
            kw[key] = [float(j.get(key, default)) for j in joints]
        for key in ("name", "base_link", "tip_link", "gravity", "base", "tool", "base_type", "inertia_fix"):
            if key in data:
                kw[key] = data[key]
        body = data.get("base_body") or {}
        for key in ("mass", "com", "inertia"):
            if key in body:
                kw[f"base_{key}"] = body[key]
        wheels = data.get("wheels") or {}
        for key in ("radius", "separation", "joints", "spin_inertia", "axle_height", "effort_limit"):
            if key in wheels:
                kw[f"wheel_{key}"] = wheels[key]
        if "casters" in wheels:
            kw["casters"] = wheels["casters"]
        return cls(**kw)

    def to_yaml(self, path: str | None = None) -> str:

        text = yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None, width=120)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        return text

    @classmethod
    def from_yaml(cls, path_or_text: str) -> "MdhModel":
        """From a YAML file or text (``to_yaml`` form, optionally under ``model:``). A missing
        ``.yaml``/``.yml`` file raises FileNotFoundError, malformed YAML a ValueError naming
        the line."""


        text, label = path_or_text, "model YAML text"
        one_line = "\n" not in path_or_text
        if one_line and os.path.isfile(path_or_text):
            with open(path_or_text, encoding="utf-8") as fh:
                text, label = fh.read(), path_or_text
        elif one_line and path_or_text.strip().endswith((".yaml", ".yml")):
            raise FileNotFoundError(f"{path_or_text}: model file not found")  # not YAML text
        try:
            data = yaml_io.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            raise ValueError(f"{label}: malformed YAML{where}: {getattr(exc, 'problem', exc)}") from None
        if isinstance(data, dict) and "model" in data and "joints" not in data:
            data = data["model"]
        return cls.from_dict(data)

