"""Moved: the rotation helpers live in :mod:`rbd_ros.lie.so3` (the one home of rotations).
This module only re-exports them for existing imports."""
from rbd_ros.lie.so3 import orientation_error, pose_matrix, quaternion_to_rotation, rotation_to_quaternion  # noqa: F401
