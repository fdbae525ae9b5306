"""Rigid-body inertia bookkeeping: re-express, move and merge ``<inertial>`` elements.

A body is ``(mass m, centre of mass c, inertia I about c)``.  Rotating a frame by ``R``
maps ``I -> R I R^T``; merging bodies uses the parallel-axis theorem::

    I = sum_k [ I_k + m_k (|r_k|^2 E - r_k r_k^T) ],   r_k = c_k - c,   c = sum m_k c_k / m

(003 §1.6 gives the frames the result is expressed in).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from rbd_ros.urdf.parse import LinkInfo


@dataclass(frozen=True)
class Body:
    """Mass, centre of mass and inertia about the centre of mass, in one frame's coordinates."""

    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))

    def transformed(self, T: np.ndarray) -> "Body":
        """The same body in the coordinates of frame A, given ``T`` = A -> current frame."""
        R = T[:3, :3]
        return Body(self.mass, T[:3, :3] @ self.com + T[:3, 3], _sym(R @ self.inertia @ R.T))


def _sym(M: np.ndarray) -> np.ndarray:
    return 0.5 * (M + M.T)


def link_body(link: LinkInfo, pose: np.ndarray) -> Body:
    """A URDF link's inertial in the coordinates of the frame where the link sits at ``pose``.

    ``<inertial><origin xyz rpy>`` places the centre of mass and turns the tensor's axes.
    """
    local = Body(link.mass, np.zeros(3), _sym(np.asarray(link.inertia, dtype=float)))
    return local.transformed(pose @ link.frame)


def merge(bodies: Iterable[Body]) -> Body:
    """One body equivalent to rigidly joined ``bodies`` (parallel-axis theorem)."""
    parts = [b for b in bodies if b.mass > 0.0 or np.any(b.inertia)]
    mass = sum(b.mass for b in parts)
    if mass <= 0.0:
        return Body(0.0, np.zeros(3), _sym(sum((b.inertia for b in parts), np.zeros((3, 3)))))
    com = sum((b.mass * b.com for b in parts), np.zeros(3)) / mass
    inertia = np.zeros((3, 3))
    for b in parts:
        r = b.com - com
        inertia += b.inertia + b.mass * ((r @ r) * np.eye(3) - np.outer(r, r))
    return Body(float(mass), com, _sym(inertia))
