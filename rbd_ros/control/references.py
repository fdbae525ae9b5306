"""Reference messages read without ROS: time stamps and joint trajectories as arrays.

The controller's references arrive as ``builtin_interfaces/Time`` stamps and
``trajectory_msgs/JointTrajectory`` messages; these functions read any object with those
fields (duck typing), so the ROS-free ``ControlLoop`` and the ROS adapters
(``rbd_ros.ros.messages``, which re-exports them and builds the messages) share one reader.

* ``to_seconds(stamp)``: ``sec + 1e-9 nanosec``; ``from_seconds(t)``: ``(sec, nanosec)``;
* ``from_joint_trajectory(msg)``: ``(joint_names, t, positions, velocities, accelerations)``
  with ros2_control's rule for the optional fields (empty in every point, or given in every
  point with one value per joint).
"""
from __future__ import annotations

from typing import Any

import numpy as np

NS_PER_S = 1_000_000_000


def to_seconds(stamp: Any) -> float:
    """``sec + 1e-9 nanosec`` of a ``builtin_interfaces`` Time or Duration."""
    return stamp.sec + 1e-9 * stamp.nanosec


def from_seconds(t: float) -> tuple[int, int]:
    """``(sec, nanosec)`` of ``t`` seconds, rounded to the nearest nanosecond, ``0 <= nanosec <
    1e9`` (1.9999999999 s -> (2, 0); -0.5 s -> (-1, 500000000))."""
    return divmod(int(round(float(t) * NS_PER_S)), NS_PER_S)


def from_joint_trajectory(msg: Any) -> tuple[list[str], np.ndarray, np.ndarray,
                                              np.ndarray | None, np.ndarray | None]:
    """``(joint_names, t, positions, velocities, accelerations)`` of a ``JointTrajectory``
    (tables: one row per point, columns in ``joint_names`` order). A field empty in every
    point is None; a field given in some points, or with a length other than the number of
    joints, raises ValueError (ros2_control's rule), as do points without positions."""
    names = list(msg.joint_names)

    def table(field: str) -> np.ndarray | None:
        rows = [getattr(point, field) for point in msg.points]
        lengths = {len(r) for r in rows}
        if not rows or lengths == {0}:
            return None
        if lengths != {len(names)}:
            raise ValueError(f"every point needs {len(names)} {field} (or none)")
        return np.array([list(r) for r in rows], dtype=float)

    positions = table("positions")
    if positions is None:
        raise ValueError("points carry no positions")
    times = np.array([to_seconds(point.time_from_start) for point in msg.points])
    return names, times, positions, table("velocities"), table("accelerations")
