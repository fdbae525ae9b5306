"""Every URDF link's pose from the MDH frames: the one home of "where is link X".

A URDF link rides rigidly on one body of the model: body 0 (MDH frame 0, fixed to ``base_link``
and moving with a floating or ground base) or moving body ``i`` (MDH frame ``i``, moved by joint
``i``). Its pose is that frame's pose times a constant offset, ``P_link(q) = F_body(q) @ offset``
(003 §1.6: ``F_i = base @ prod_k T_k(q_k)``); the URDF converter computes the offsets from the
joint origins (``rbd_ros.urdf.link_tree``), fixed joints folded, off-chain movable joints at
their locked positions.

The transforms robot_state_publisher broadcasts are per URDF joint, parent link -> child link:
``inv(P_parent) @ P_child`` (= joint origin @ joint motion); joints whose two links ride on one
body never change (``/tf_static``: URDF fixed joints, and locked joints), the others are
``/tf``. A model without its URDF (an MDH YAML file) knows only ``base_link`` and ``tip_link``
(:meth:`LinkFrames.from_model`).
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np


@dataclass(frozen=True)
class TreeJoint:
    """One URDF joint as tf sees it: ``parent`` link -> ``child`` link; ``kind`` is the URDF
    joint type; ``static``: the transform never changes in the model (a fixed joint, or a
    locked one); ``origin`` (4x4, parent -> joint frame) and ``axis`` (joint frame) as in the
    URDF, so a locked joint can be placed at another position (origin @ motion(q))."""

    name: str
    parent: str
    child: str
    kind: str
    static: bool
    origin: np.ndarray | None = field(default=None, compare=False, repr=False)
    axis: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class LinkFrames:
    """Links (names), the body each rides on (``body[k]`` in 0..n) and its constant offset
    (``offset[k]``, 4x4, MDH frame ``body[k]`` -> link), plus the URDF joints between them."""

    links: tuple[str, ...]
    body: np.ndarray  # (L,) int
    offset: np.ndarray  # (L, 4, 4)
    joints: tuple[TreeJoint, ...] = ()
    root: str = ""  # the tree's top link (tf's root below odom / world)
    if TYPE_CHECKING:  # set by __post_init__, not a field (declared for the type checker only)
        _index: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        body = np.asarray(self.body, dtype=np.int64).reshape(-1)
        offset = np.asarray(self.offset, dtype=float).reshape(-1, 4, 4)
        if not (len(self.links) == body.shape[0] == offset.shape[0]):
            raise ValueError("LinkFrames: links, body and offset must have one entry per link")
        if len(set(self.links)) != len(self.links):
            raise ValueError("LinkFrames: link names must be unique")
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "_index", {name: k for k, name in enumerate(self.links)})
        if not self.root and self.links:
            object.__setattr__(self, "root", self.links[0])

    @classmethod
    def from_model(cls, model) -> "LinkFrames":
        """What an ``MdhModel`` alone knows: ``base_link`` (= the world of a fixed base) and
        ``tip_link`` (frame n @ tool); no URDF joints."""
        n = model.dof
        names, body, off = [model.base_link], [0], [np.linalg.inv(np.asarray(model.base, dtype=float))]
        if model.tip_link not in names:
            names.append(model.tip_link)
            body.append(n)
            off.append(np.asarray(model.tool, dtype=float))
        return cls(tuple(names), np.array(body), np.array(off), (), model.base_link)

    def indices(self, names: Sequence[str]) -> np.ndarray:
        """Row of each name in :attr:`links`; ``ValueError`` naming every unknown one."""
        unknown = [str(n) for n in names if n not in self._index]
        if unknown:
            hints = [f"'{u}'" + (f" (did you mean '{c[0]}'?)" if (c := difflib.get_close_matches(
                u, self.links, n=1)) else "") for u in unknown]
            raise ValueError(f"unknown link{'s' if len(unknown) > 1 else ''} {', '.join(hints)}; "
                             f"links are {list(self.links)}")
        return np.array([self._index[n] for n in names], dtype=np.int64)

    def poses(self, frames: np.ndarray, names: Sequence[str] | None = None) -> np.ndarray:
        """``(L, 4, 4)`` poses of the links (all, or ``names`` in that order) from the MDH
        frames 0..n ``frames`` (``(n + 1, 4, 4)``, e.g. ``Robot.link_poses(q)``; their frame
        is the result's): ``P = F[body] @ offset``."""
        rows = np.arange(len(self.links)) if names is None else self.indices(names)
        F = np.asarray(frames, dtype=float)
        if F.ndim != 3 or F.shape[1:] != (4, 4) or F.shape[0] <= int(self.body.max(initial=0)):
            raise ValueError(f"frames must be (n + 1, 4, 4) MDH frames, got shape {F.shape}")
        return np.matmul(F[self.body[rows]], self.offset[rows])  # P_link = F_body @ offset

    def joint_transforms(self, poses: np.ndarray, static: bool | None = None
                         ) -> list[tuple[TreeJoint, np.ndarray]]:
        """``(joint, parent -> child 4x4)`` for every URDF joint (or only the static / moving
        ones) from all link poses ``poses`` (:meth:`poses` without names):
        ``inv(P_parent) @ P_child`` (robot_state_publisher's origin @ motion)."""
        out = []
        for j in self.joints:
            if static is not None and j.static != static:
                continue
            Pp, Pc = poses[self._index[j.parent]], poses[self._index[j.child]]
            R = Pp[:3, :3].T  # inv(P_parent) = [R^T, -R^T p]
            T = np.eye(4)
            T[:3, :3] = R @ Pc[:3, :3]
            T[:3, 3] = R @ (Pc[:3, 3] - Pp[:3, 3])
            out.append((j, T))
        return out
