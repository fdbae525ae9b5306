"""``rbd_ros.ros.messages``: stamps and JointTrajectory, checked against hand-computed values and
the rule of ros2_control's joint_trajectory_controller (a field in all points or in none)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("trajectory_msgs")

from rbd_ros.ros.messages import from_joint_trajectory, from_seconds, set_stamp, to_joint_trajectory, to_seconds


@pytest.mark.parametrize("t,expected", [(0.0, (0, 0)), (0.5, (0, 500_000_000)),
                                        (1.9999999999, (2, 0)), (3.000000001, (3, 1)),
                                        (-0.5, (-1, 500_000_000)), (1234.25, (1234, 250_000_000))])
def test_seconds_to_sec_nanosec_and_back(t, expected) -> None:
    from builtin_interfaces.msg import Time

    assert from_seconds(t) == expected
    stamp = Time()
    set_stamp(stamp, t)
    assert (stamp.sec, stamp.nanosec) == expected
    assert to_seconds(stamp) == pytest.approx(t, abs=5e-10)


def test_joint_trajectory_built_and_parsed() -> None:
    q = np.array([[0.1, 0.2], [0.3, 0.4]])
    msg = to_joint_trajectory(["a", "b"], [0.5, 1.9999999999], q, effort=[[1.0, 2.0], [3.0, 4.0]])
    assert msg.joint_names == ["a", "b"] and (msg.header.stamp.sec, msg.header.stamp.nanosec) == (0, 0)
    assert [(p.time_from_start.sec, p.time_from_start.nanosec) for p in msg.points] == \
        [(0, 500_000_000), (2, 0)]
    assert list(msg.points[1].effort) == [3.0, 4.0] and len(msg.points[0].velocities) == 0
    names, t, P, V, A = from_joint_trajectory(msg)
    assert names == ["a", "b"] and t.tolist() == [0.5, 2.0] and V is None and A is None
    np.testing.assert_array_equal(P, q)
    msg.points[0].velocities = [1.0, 1.0]  # in one point only: refused
    with pytest.raises(ValueError, match="every point needs 2 velocities"):
        from_joint_trajectory(msg)
    msg.points[0].velocities = []
    msg.points[1].positions = [0.0]
    with pytest.raises(ValueError, match="every point needs 2 positions"):
        from_joint_trajectory(msg)
