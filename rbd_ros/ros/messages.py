"""Message conversions, one home each: time stamps (seconds <-> ``sec``/``nanosec``),
``geometry_msgs/Pose`` (4x4 <-> message), 4x4 -> ``TransformStamped`` and
``trajectory_msgs/JointTrajectory`` (arrays <-> message), for the nodes, the bringup and
``DynamicsClient`` users.  The readers (``to_seconds``, ``from_seconds``,
``from_joint_trajectory``) are the core's ``rbd_ros.control.references`` (ROS-free, duck-typed,
also read by ``ControlLoop``), re-exported here; the builders below import the messages."""
from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from rbd_ros.control.references import NS_PER_S, from_joint_trajectory, from_seconds, to_seconds

__all__ = ["NS_PER_S", "from_joint_trajectory", "from_seconds", "header_stamp_ns", "is_pose", "matrix_to_pose",
           "pose_to_matrix", "set_stamp", "set_transform", "to_joint_trajectory", "to_seconds",
           "transform_stamped"]


def header_stamp_ns(raw: bytes) -> int:
    """``header.stamp`` in ns of a serialized message that starts with a ``std_msgs/Header``
    (``sensor_msgs/JointState``...), read from the CDR bytes without deserialising: the 4-byte
    encapsulation (``00 01``: little endian, ``00 00``: big), then ``int32 sec``, ``uint32
    nanosec``."""
    if len(raw) < 12 or raw[0] != 0 or raw[1] not in (0, 1):
        raise ValueError("not a CDR-encapsulated message")
    sec, nanosec = struct.unpack_from("<iI" if raw[1] == 1 else ">iI", raw, 4)
    return sec * 1_000_000_000 + nanosec


def set_stamp(stamp: Any, t: float) -> None:
    """Set a Time or Duration message (``header.stamp``, ``clock``) to ``t`` seconds."""
    stamp.sec, stamp.nanosec = from_seconds(t)


def matrix_to_pose(T: np.ndarray):
    """A ``geometry_msgs/Pose`` of a 4x4 homogeneous transform (quaternion x y z w, w >= 0)."""
    from geometry_msgs.msg import Point, Pose, Quaternion

    from rbd_ros.lie.so3 import rotation_to_quaternion  # lazy: numba, not at the server's or bridge's import

    x, y, z, w = rotation_to_quaternion(T[:3, :3])
    p = T[:3, 3]
    return Pose(position=Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                orientation=Quaternion(x=float(x), y=float(y), z=float(z), w=float(w)))


def is_pose(value: Any) -> bool:
    """Whether ``value`` is shaped like a ``geometry_msgs/Pose`` (position and orientation)."""
    return hasattr(value, "position") and hasattr(value, "orientation")


def pose_to_matrix(pose: Any) -> np.ndarray:
    """The 4x4 homogeneous transform of a ``geometry_msgs/Pose`` (its quaternion normalised;
    a zero or non-finite one refused, ``rbd_ros.lie.so3.pose_matrix``)."""
    from rbd_ros.lie.so3 import pose_matrix  # lazy: numba, not at the server's or bridge's import

    p, o = pose.position, pose.orientation
    return pose_matrix([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])


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


def transform_stamped(parent: str, child: str, T: np.ndarray, stamp: Any = None):
    """A ``geometry_msgs/TransformStamped`` ``parent -> child`` of the 4x4 ``T`` (``stamp`` a
    ``builtin_interfaces/Time`` or None)."""
    from geometry_msgs.msg import TransformStamped

    msg = TransformStamped(child_frame_id=child)
    msg.header.frame_id = parent
    if stamp is not None:
        msg.header.stamp = stamp
    set_transform(msg.transform, T)
    return msg


def set_transform(transform: Any, T: np.ndarray) -> None:
    """Fill a ``geometry_msgs/Transform`` with the 4x4 ``T`` (quaternion x, y, z, w)."""
    from rbd_ros.lie.so3 import rotation_to_quaternion  # lazy: numba, not at the server's or bridge's import

    x, y, z, w = rotation_to_quaternion(T[:3, :3])
    t, r = transform.translation, transform.rotation
    t.x, t.y, t.z = (float(v) for v in T[:3, 3])
    r.x, r.y, r.z, r.w = float(x), float(y), float(z), float(w)
