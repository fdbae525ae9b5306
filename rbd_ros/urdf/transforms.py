"""Homogeneous transforms for URDF elements: ``<origin xyz rpy>`` and joint motions.

URDF's ``rpy`` is roll-pitch-yaw about fixed axes, ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (the
same convention as urdfdom and Pinocchio).  Pure numpy; the modified-DH link transform
itself lives in :func:`rbd_ros.algorithm.mdh.mdh_transform` (003 §1.6).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def rpy_matrix(rpy: Sequence[float]) -> np.ndarray:
    """Rotation matrix of URDF roll-pitch-yaw angles, ``Rz(y) Ry(p) Rx(r)``."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def matrix_rpy(R: np.ndarray) -> np.ndarray:
    """Roll-pitch-yaw angles of a rotation matrix (inverse of :func:`rpy_matrix`)."""
    R = np.asarray(R, dtype=float)
    pitch = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if np.hypot(R[0, 0], R[1, 0]) < 1e-12:  # gimbal lock: put everything into roll
        return np.array([np.arctan2(-R[1, 2], R[1, 1]), pitch, 0.0])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def origin_transform(xyz: Sequence[float] | None, rpy: Sequence[float] | None) -> np.ndarray:
    """4x4 transform of a URDF ``<origin>`` (missing parts are zero)."""
    T = np.eye(4)
    if rpy is not None:
        T[:3, :3] = rpy_matrix(rpy)
    if xyz is not None:
        T[:3, 3] = np.asarray(xyz, dtype=float)
    return T


def axis_rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues)."""
    x, y, z = axis
    c, s = np.cos(angle), np.sin(angle)
    v = 1.0 - c
    return np.array([
        [c + x * x * v, x * y * v - z * s, x * z * v + y * s],
        [y * x * v + z * s, c + y * y * v, y * z * v - x * s],
        [z * x * v - y * s, z * y * v + x * s, c + z * z * v],
    ])


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
