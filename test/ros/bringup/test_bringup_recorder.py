"""The bringup's cheap stamp reader against rclpy's own serializer (an independent oracle)."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("sec, nanosec", [(0, 0), (12, 345_678_901), (2_000_000_000, 999_999_999),
                                          (-3, 5)])
def test_header_stamp_from_cdr_bytes_matches_rclpy(sec, nanosec):
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from rbd_ros.ros.messages import header_stamp_ns

    msg = JointState(name=["a", "b"], position=[1.0, 2.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    msg.header.frame_id = "base_link"
    assert header_stamp_ns(serialize_message(msg)) == sec * 1_000_000_000 + nanosec


def test_header_stamp_refuses_non_cdr_bytes():
    from rbd_ros.ros.messages import header_stamp_ns

    with pytest.raises(ValueError, match="CDR"):
        header_stamp_ns(b"\x07\x07garbage-bytes")
    with pytest.raises(ValueError, match="CDR"):
        header_stamp_ns(b"\x00\x01\x00")
