"""Rotations and poses: quaternion <-> rotation matrix, and orientation error.

Quaternions are scalar-last ``(x, y, z, w)`` as in ``geometry_msgs/Quaternion``. ROS-free.
"""
from __future__ import annotations

import numpy as np


def rotation_to_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w), w >= 0, of a rotation matrix (Shepperd's method: the
    largest of the four squared components is computed first, so it is accurate everywhere)."""
    R = np.asarray(R, dtype=float)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    cands = np.array([tr, R[0, 0], R[1, 1], R[2, 2]])
    k = int(np.argmax(cands))
    if k == 0:
        w = 0.5 * np.sqrt(1.0 + tr)
        x, y, z = (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)
    elif k == 1:
        x = 0.5 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        w, y, z = (R[2, 1] - R[1, 2]) / (4 * x), (R[0, 1] + R[1, 0]) / (4 * x), (R[0, 2] + R[2, 0]) / (4 * x)
    elif k == 2:
        y = 0.5 * np.sqrt(1.0 - R[0, 0] + R[1, 1] - R[2, 2])
        w, x, z = (R[0, 2] - R[2, 0]) / (4 * y), (R[0, 1] + R[1, 0]) / (4 * y), (R[1, 2] + R[2, 1]) / (4 * y)
    else:
        z = 0.5 * np.sqrt(1.0 - R[0, 0] - R[1, 1] + R[2, 2])
        w, x, y = (R[1, 0] - R[0, 1]) / (4 * z), (R[0, 2] + R[2, 0]) / (4 * z), (R[1, 2] + R[2, 1]) / (4 * z)
    q = np.array([x, y, z, w])
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def quaternion_to_rotation(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a quaternion (x, y, z, w); normalised first, zero norm refused."""
    x, y, z, w = np.asarray(q, dtype=float)
    s = x * x + y * y + z * z + w * w
    if not np.isfinite(s) or s < 1e-12:
        raise ValueError(f"quaternion {tuple(q)} has zero or non-finite norm")
    x, y, z, w = np.array([x, y, z, w]) / np.sqrt(s)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def pose_matrix(position: np.ndarray, quaternion: np.ndarray) -> np.ndarray:
    """4x4 homogeneous transform from a position and a quaternion (x, y, z, w)."""
    T = np.eye(4)
    T[:3, :3] = quaternion_to_rotation(quaternion)
    T[:3, 3] = position
    return T


def orientation_error(R_desired: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rotation vector (axis * angle, world frame) taking ``R`` to ``R_desired``: the
    orientation part of a task-space error, exact for any angle below pi."""
    Re = np.asarray(R_desired) @ np.asarray(R).T
    c = np.clip((np.trace(Re) - 1.0) / 2.0, -1.0, 1.0)
    v = 0.5 * np.array([Re[2, 1] - Re[1, 2], Re[0, 2] - Re[2, 0], Re[1, 0] - Re[0, 1]])
    s = np.linalg.norm(v)
    angle = np.arctan2(s, c)
    if s < 1e-12:
        if c > 0:
            return v  # tiny angle: v is already angle * axis to first order
        # angle = pi: axis from the symmetric part
        axis = np.sqrt(np.maximum((np.diag(Re) + 1.0) / 2.0, 0.0))
        k = int(np.argmax(axis))
        axis[k] = axis[k]
        for j in range(3):
            if j != k:
                axis[j] = np.copysign(axis[j], Re[k, j] + Re[j, k])
        return np.pi * axis / np.linalg.norm(axis)
    return angle * v / s
