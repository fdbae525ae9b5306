"""URDF/xacro -> :class:`~rbd_ros.model.MdhModel` (Craig's modified DH, 003 §1.6).

Pipeline: :mod:`.parse` (file / string / xacro -> checked tree), :mod:`~rbd_ros.urdf.chain` (base/tip,
fold fixed joints, lock off-chain joints), :mod:`.geometry` (axis lines -> MDH frames and
parameters), :mod:`.inertia` (merge links, re-express in MDH frames).

Frames of the result:

* world = the ``base_link`` frame; ``model.base`` = base_link -> MDH frame 0;
* ``model.tool`` = MDH frame n -> ``tip_link`` (exact, including fixed links after joint n);
* every URDF link riding on moving body ``i`` sits at ``F_i(q) @ offset`` where ``F_i(q)`` is
  base @ prod mdh_transform and ``offset`` is :attr:`UrdfConversion.link_offsets` ``[link]``.
  The converter checks this against a direct URDF forward kinematics at a few
  configurations and records the largest difference in :attr:`UrdfConversion.max_error`.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from rbd_ros.algorithm.mdh import mdh_transform
from rbd_ros.model import MOBILE_BASES, PRISMATIC, REVOLUTE, MdhModel
from rbd_ros.model.link_frames import LinkFrames
from rbd_ros.urdf.chain import Chain, select_chain
from rbd_ros.urdf.errors import UrdfError
from rbd_ros.urdf.geometry import AxisLine, MdhGeometry, mdh_geometry
from rbd_ros.urdf.inertia import Body, link_body, merge
from rbd_ros.urdf.link_tree import link_frames as tree_link_frames
from rbd_ros.urdf.parse import UrdfTree, load_tree
from rbd_ros.urdf.transforms import inverse, joint_motion
from rbd_ros.urdf.wheels import find_wheels, wheel_like
from rbd_ros.util import validate

#: above this (metres / radians) the self-check warns that the MDH model deviates from the URDF
FIDELITY_WARN = 1e-9


@dataclass(frozen=True)
class UrdfConversion:
    """A converted model plus what is needed to map it back onto the URDF."""

    model: MdhModel
    cases: tuple[str, ...]  # relation of axes (i, i+1), i = 1..n-1 (see geometry.py)
    link_offsets: dict[str, tuple[int, np.ndarray]]  # URDF link -> (body i >= 1, frame i -> link)
    positions: dict[str, float]  # reference positions used for locked / off-chain movable joints
    chain_path: tuple[str, ...]  # every URDF joint from base_link to tip_link
    max_error: float  # largest pose difference MDH vs URDF kinematics in the self-check
    warnings: tuple[str, ...]  # the converter's own warnings (fidelity)
    parser_notes: tuple[str, ...]  # urdf_parser_py's remarks (unknown tags/attributes, ...)
    urdf_xml: str  # the URDF text that was converted (after xacro)
    link_frames: LinkFrames  # every URDF link on the model's bodies (urdf.link_tree)

    def frames(self, q: npt.ArrayLike) -> np.ndarray:
        """MDH frames 0..n in the base_link frame at joint positions ``q`` ((n+1, 4, 4))."""
        m = self.model
        q = np.asarray(q, dtype=float).reshape(m.dof)
        out = np.empty((m.dof + 1, 4, 4))
        out[0] = m.base
        for i in range(m.dof):
            rev = m.joint_type[i] == REVOLUTE
            out[i + 1] = out[i] @ mdh_transform(m.a[i], m.alpha[i], m.d[i] + (0.0 if rev else q[i]),
                                                m.theta[i] + (q[i] if rev else 0.0))
        return out

    def link_poses(self, q: Sequence[float]) -> dict[str, np.ndarray]:
        """Pose in the base_link frame of every URDF link on the moving chain at ``q``."""
        F = self.frames(q)
        return {name: F[i] @ off for name, (i, off) in self.link_offsets.items()}

    def all_link_poses(self, q: Sequence[float]) -> dict[str, np.ndarray]:
        """Pose in the base_link frame of every link of the URDF at ``q`` (:attr:`link_frames`)."""
        lf = self.link_frames
        return dict(zip(lf.links, lf.poses(self.frames(q)), strict=True))

    def tool_pose(self, q: Sequence[float]) -> np.ndarray:
        """Pose of ``tip_link`` in the base_link frame at ``q``."""
        return self.frames(q)[-1] @ self.model.tool


def _limits(tree: UrdfTree, names: Sequence[str]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in ("lower", "upper", "velocity_limit", "effort_limit",
                                                     "viscous", "coulomb")}
    for jn in names:
        j = tree.joints[jn]
        continuous = j.type == "continuous"
        out["lower"].append(-np.inf if continuous else j.lower)
        out["upper"].append(np.inf if continuous else j.upper)
        out["velocity_limit"].append(j.velocity)
        out["effort_limit"].append(j.effort)
        out["viscous"].append(j.damping)
        out["coulomb"].append(j.friction)
    return out


def _bodies(tree: UrdfTree, chain: Chain, frames: np.ndarray) -> list[Body]:
    """Merged inertia of each moving body, in its MDH frame's coordinates."""
    out = []
    for i in range(1, len(chain.joints) + 1):
        parts = [link_body(tree.links[ln], chain.reference[ln]) for ln in chain.links_of(i)]
        out.append(merge(parts).transformed(inverse(frames[i])))
    return out


def _base_body(tree: UrdfTree, chain: Chain, base_type: str, wheels: Mapping | None) -> dict:
    """``base_type`` and, for a moving base, the merged inertia of body 0 (``base_link`` and
    every link fixed to it) in base_link coordinates (``MdhModel`` base fields); for
    ``diff_drive`` the wheel fields (``urdf.wheels.find_wheels`` with ``wheels`` as keywords).
    A ground base also carries the links fixed to ``base_link`` from above (``chain.select_chain``
    ``carry_above``: e.g. ``base_footprint`` and its covers when ``base_link`` is its child)."""
    if wheels and base_type != "diff_drive":
        raise UrdfError(f"wheel options {sorted(wheels)} are for base 'diff_drive', not '{base_type}'")
    if base_type == "fixed":
        return {}
    b = merge(link_body(tree.links[ln], chain.reference[ln]) for ln, k in chain.body.items() if k == 0)
    if base_type == "floating":  # refused here, not by Robot later: urdf2mdh would write a file from_yaml refuses
        try:
            validate.floating_base_body(chain.base, b.mass, b.inertia)
        except ValueError as exc:
            raise UrdfError(f"{tree.source}: {exc} (urdf2mdh: --base-link LINK)") from None
    out = {"base_type": base_type, "base_mass": b.mass, "base_com": b.com, "base_inertia": b.inertia}
    if base_type == "diff_drive":
        out.update(find_wheels(tree, chain, **(wheels or {})))
    return out


def _self_check(tree: UrdfTree, chain: Chain, conv: UrdfConversion, samples: int = 6) -> float:
    """Largest difference between MDH and URDF poses of the chain links at a few q."""
    n = len(chain.joints)
    steps = []
    prev = np.eye(4)
    for child in chain.children:
        ref = chain.reference[child]
        steps.append(inverse(prev) @ ref)
        prev = ref
    rng = np.random.default_rng(0)
    err = 0.0
    for k in range(samples):
        q = np.zeros(n) if k == 0 else rng.uniform(-np.pi, np.pi, n)
        F = conv.frames(q)
        T = np.eye(4)
        for i, jn in enumerate(chain.joints):
            j = tree.joints[jn]
            T = T @ steps[i] @ joint_motion(j.type, j.axis, q[i])
            err = max(err, float(np.abs(F[i + 1] @ conv.link_offsets[chain.children[i]][1] - T).max()))
    return err


def convert_tree(tree: UrdfTree, base_link: str | None = None, tip_link: str | None = None,
                 locked_joints: Mapping[str, float] | None = None,
                 gravity: Sequence[float] = (0.0, 0.0, -9.81), base_type: str = "fixed",
                 wheels: Mapping | None = None, keep_inertia: bool = False) -> UrdfConversion:
    """Convert a parsed :class:`UrdfTree` (see :func:`load_conversion`)."""
    keep_inertia = validate.flag("keep_inertia", keep_inertia)
    named = tuple(w for w in ((wheels or {}).get("left"), (wheels or {}).get("right")) if w is not None)
    if base_type == "diff_drive" and not named and tip_link is None:
        named = wheel_like(tree, base_link if base_link is not None else tree.root)
    chain = select_chain(tree, base_link, tip_link, locked_joints, carry_above=base_type in MOBILE_BASES,
                         ignore=named)
    lines, link_frames = [], []
    for jn, child in zip(chain.joints, chain.children):
        ref = chain.reference[child]  # = the joint frame: chain joints sit at q = 0
        lines.append(AxisLine(ref[:3, 3].copy(), ref[:3, :3] @ tree.joints[jn].axis))
        link_frames.append(ref)
    geo: MdhGeometry = mdh_geometry(lines, link_frames)
    F = geo.frames
    n = len(chain.joints)
    bodies = _bodies(tree, chain, F)
    offsets = {ln: (i, inverse(F[i]) @ chain.reference[ln])
               for i in range(1, n + 1) for ln in chain.links_of(i)}
    base_fields = _base_body(tree, chain, base_type, wheels)  # UrdfError naming the base link
    try:
        # lists: MdhModel converts each to its field's array (``MdhModel.__post_init__``)
        tables: dict[str, Any] = dict(
            joint_type=[PRISMATIC if tree.joints[jn].type == "prismatic" else REVOLUTE for jn in chain.joints],
            mass=[b.mass for b in bodies], com=[b.com for b in bodies], inertia=[b.inertia for b in bodies],
            **_limits(tree, chain.joints))
        model = MdhModel(
            joint_names=chain.joints, a=geo.a, alpha=geo.alpha, d=geo.d, theta=geo.theta, **tables,
            base=F[0], tool=inverse(F[n]) @ chain.reference[chain.tip],
            gravity=validate.gravity("gravity", gravity),
            name=tree.name, base_link=chain.base, tip_link=chain.tip, link_names=chain.children,
            inertia_fix=not keep_inertia, **base_fields,
        )
    except ValueError as exc:  # the model refusing a value (a NaN gravity, lower == upper ...)
        raise UrdfError(f"{tree.source}: {exc}") from None
    conv = UrdfConversion(model=model, cases=geo.cases, link_offsets=offsets, positions=dict(chain.positions),
                          chain_path=chain.path, max_error=0.0, warnings=(), parser_notes=tree.warnings,
                          urdf_xml=tree.xml, link_frames=tree_link_frames(tree, chain, F))
    err = _self_check(tree, chain, conv)
    notes = []
    if err > FIDELITY_WARN:
        msg = (f"{tree.source}: the MDH model deviates from the URDF by up to {err:.3g} (m or rad); "
               f"nearly parallel joint axes ({', '.join(geo.cases)}) are treated as parallel, so check "
               f"rounded angles in the URDF")
        notes.append(msg)
        warnings.warn(msg, stacklevel=3)
    object.__setattr__(conv, "max_error", err)
    object.__setattr__(conv, "warnings", tuple(notes))
    return conv


def load_conversion(source: str | os.PathLike, base_link: str | None = None, tip_link: str | None = None,
                    locked_joints: Mapping[str, float] | None = None,
                    xacro_args: Mapping[str, str] | None = None,
                    gravity: Sequence[float] = (0.0, 0.0, -9.81), base_type: str = "fixed",
                    wheels: Mapping | None = None, keep_inertia: bool = False) -> UrdfConversion:
    """Like :func:`load_model`, also returning link offsets, axis cases and diagnostics."""
    return convert_tree(load_tree(source, xacro_args), base_link, tip_link, locked_joints, gravity, base_type,
                        wheels, keep_inertia)


def load_model(source: str | os.PathLike, base_link: str | None = None, tip_link: str | None = None,
               locked_joints: Mapping[str, float] | None = None,
               xacro_args: Mapping[str, str] | None = None,
               gravity: Sequence[float] = (0.0, 0.0, -9.81), base_type: str = "fixed",
               wheels: Mapping | None = None, keep_inertia: bool = False) -> MdhModel:
    """Convert a URDF/xacro robot to a modified-DH :class:`MdhModel` (003 §1.6).

    Args:
        source: path to a ``.urdf`` / ``.xacro`` file, or the URDF XML text itself (e.g. a
            ``robot_description`` parameter).
        base_link: the world frame of the model; default the URDF root link.
        tip_link: the end-effector link; inferred when the movable joints below
            ``base_link`` form a single chain.
        locked_joints: joint -> position for joints to freeze (off-chain movable joints not
            listed are frozen at 0 or at their ``<mimic>`` relation; chain joints listed here
            are folded like fixed joints).
        xacro_args: ``name -> value`` xacro arguments (``name:=value`` on the xacro command line).
        gravity: gravity in the base_link frame (with a floating base: in the world frame).
        base_type: ``"fixed"`` (base_link is the world) or ``"floating"`` (base_link is a free
            body carrying the chain; its inertia is base_link's plus every link fixed to it),
            ``"planar"`` or ``"diff_drive"`` (a ground base: x, y, yaw; ``rbd_ros.mobile_base``).
        wheels: ``diff_drive`` only: ``left``, ``right`` (wheel joint names), ``radius``,
            ``separation`` overriding what ``urdf.wheels.find_wheels`` reads from the URDF.
        keep_inertia: keep a physically impossible link inertia as the URDF gives it
            (``MdhModel.inertia_fix = False``; ``model.inertia_notes`` say which) instead of
            the nearest physical one with an ``InertiaWarning`` (the default): the raw URDF,
            for a like-for-like comparison with other tools; MuJoCo refuses such a model.

    Raises:
        UrdfError: bad XML/URDF/xacro, unknown link or joint names, zero axes, mimic,
            floating or planar joints on the chain, a branching robot without ``tip_link``,
            no movable joint between base and tip.
    """
    return load_conversion(source, base_link, tip_link, locked_joints, xacro_args, gravity, base_type,
                           wheels, keep_inertia).model
