"""Message conversions, one home each: time stamps (seconds <-> ``sec``/``nanosec``) and
``trajectory_msgs/JointTrajectory`` (arrays <-> message), for the nodes, the bringup and
``DynamicsClient`` users."""
from __future__ import annotations

from collections.abc import Sequence
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


def set_stamp(stamp: Any, t: float) -> None:
    """Set a Time or Duration message (``header.stamp``, ``clock``) to ``t`` seconds."""
    stamp.sec, stamp.nanosec = from_seconds(t)


def to_joint_trajectory(joint_names: Sequence[str], times: Sequence[float], positions: Any,
                        velocities: Any = None, accelerations: Any = None, effort: Any = None):
    """A ``JointTrajectory`` (header stamp 0 = "start on receipt"), one point per row of
    ``positions`` at ``time_from_start = times[k]`` s; the optional tables give each point its
    velocities, accelerations and efforts."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    msg = JointTrajectory(joint_names=[str(n) for n in joint_names])
    q = np.atleast_2d(np.asarray(positions, dtype=float))
    extra = {name: np.atleast_2d(np.asarray(table, dtype=float))
             for name, table in (("velocities", velocities), ("accelerations", accelerations),
                                 ("effort", effort)) if table is not None}
    for k, t in enumerate(np.asarray(times, dtype=float).reshape(-1)):
        point = JointTrajectoryPoint(positions=q[k].tolist())
        for name, table in extra.items():
            setattr(point, name, table[k].tolist())
        set_stamp(point.time_from_start, t)
        msg.points.append(point)
    return msg


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
