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


@pytest.mark.slow
def test_a_goal_sent_by_the_spinning_thread_is_answered_where_rclpys_send_goal_async_loses_it():
    """``spin_in_background(...).send_goal``: rclpy 9.1.2's ``send_goal_async`` registers the
    future it returns after releasing its lock; a goal response taken by the spinning thread in
    that window completes another future.  The window is widened here to 1 s (a slow
    ``_feedback_callbacks`` store, the line between the two registrations): sent from the test's
    thread the goal's future never completes; sent by the spinning thread it does."""
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient, ActionServer

    class SlowStore(dict):
        def __setitem__(self, key, value):
            time.sleep(1.0)
            super().__setitem__(key, value)

    with ros_context() as ctx:
        server_node = rclpy.create_node("goal_race_server", context=ctx)
        client_node = rclpy.create_node("goal_race_client", context=ctx)
        ActionServer(server_node, FollowJointTrajectory, "/goal_race",
                     lambda handle: (handle.succeed(), FollowJointTrajectory.Result())[1])
        client = ActionClient(client_node, FollowJointTrajectory, "/goal_race")
        client._feedback_callbacks = SlowStore()
        spinners = [spin_in_background(server_node), spin_in_background(client_node)]
        try:
            assert client.wait_for_server(timeout_sec=30)

            def answered(future, seconds: float) -> bool:
                deadline = time.monotonic() + seconds
                while not future.done() and time.monotonic() < deadline:
                    time.sleep(0.01)
                return future.done()

            lost = client.send_goal_async(FollowJointTrajectory.Goal(), feedback_callback=print)
            assert not answered(lost, 2.0), "rclpy's send_goal_async answered: is the workaround still needed?"
            sent = spinners[1].send_goal(client, FollowJointTrajectory.Goal(), feedback_callback=print)
            assert answered(sent, 30.0) and sent.result().accepted
        finally:
            for spinner in spinners:
                spinner.shutdown()
