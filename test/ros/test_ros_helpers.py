"""The tests' own ROS helpers: a test peer's callback that raises fails the test at once."""
from __future__ import annotations

import time

import pytest

from ros_helpers import raise_callback_errors, ros_context, spin_in_background


def test_a_peers_callback_exception_reaches_the_test():
    import rclpy
    from std_msgs.msg import String

    with ros_context() as ctx:
        node = rclpy.create_node("faulty_peer", context=ctx)

        def broken(msg):
            raise KeyError(f"bug in the peer: {msg.data}")

        node.create_subscription(String, "/faulty", broken, 10)
        pub = node.create_publisher(String, "/faulty", 10)
        executor = spin_in_background(node)
        deadline = time.monotonic() + 30
        while not executor.errors:
            assert time.monotonic() < deadline, "the callback never ran"
            pub.publish(String(data="x"))
            time.sleep(0.05)
        with pytest.raises(RuntimeError, match="callback raised") as info:
            raise_callback_errors(executor)
        assert isinstance(info.value.__cause__, KeyError)
        with pytest.raises(RuntimeError, match="callback raised"):
            executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
