"""Homogeneous transforms for URDF elements: ``<origin xyz rpy>`` and joint motions.

URDF's ``rpy`` is roll-pitch-yaw about fixed axes, ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (the
same convention as urdfdom and Pinocchio; the rotation helpers live in :mod:`rbd_ros.lie.so3`).
Pure numpy; the modified-DH link transform itself lives in :func:`rbd_ros.algorithm.mdh.mdh_transform` (003 §1.6).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rbd_ros.lie.so3 import axis_rotation, rpy_matrix


def origin_transform(xyz: Sequence[float] | np.ndarray | None, rpy: Sequence[float] | np.ndarray | None) -> np.ndarray:
    """4x4 transform of a URDF ``<origin>`` (missing parts are zero)."""
    T = np.eye(4)
    if rpy is not None:
        T[:3, :3] = rpy_matrix(rpy)
    if xyz is not None:
        T[:3, 3] = np.asarray(xyz, dtype=float)
    return T


def joint_motion(kind: str, axis: np.ndarray | None, q: float) -> np.ndarray:
    """4x4 motion of a URDF joint at position ``q`` (identity for fixed/floating/planar)."""
    T = np.eye(4)
    if q == 0.0 or axis is None:
        return T
    if kind in ("revolute", "continuous"):
        T[:3, :3] = axis_rotation(axis, q)
    elif kind == "prismatic":
        T[:3, 3] = q * axis
    return T


def inverse(T: np.ndarray) -> np.ndarray:
    """Inverse of a rigid 4x4 transform."""
    out = np.eye(4)
    out[:3, :3] = T[:3, :3].T
    out[:3, 3] = -T[:3, :3].T @ T[:3, 3]
    return out
