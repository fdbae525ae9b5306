"""The action adapter's own timing and bookkeeping (``rbd_ros.ros.follow_action``), in process
with a stand-in controller (the closed loop: test_follow_joint_trajectory_action):

* feedback goes out every 1/``action_monitor_rate`` s of wall time while a goal runs (counted
  on the server side: a client's delivery comes in bursts under load), then the result;
* a preempted goal ends aborted with joint_trajectory_controller's INVALID_GOAL text, a
  deactivated controller aborts its goal, a cancel ends it canceled after rclpy's CANCELING.
"""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace as NS

import numpy as np
from test_follow_trajectory import _goal, _plan

from rbd_ros.control import follow_trajectory as ft
from ros_helpers import ros_context


class FakeHandle:
    """A ServerGoalHandle's surface the adapter uses, recording the calls."""

    def __init__(self) -> None:
        self.feedback_times: list[float] = []
        self.is_active, self.is_cancel_requested, self.state = True, False, "executing"

    def publish_feedback(self, fb) -> None:  # noqa: ANN001
        self.feedback_times.append(time.monotonic())

    def succeed(self) -> None:
        self.state, self.is_active = "succeeded", False

    def abort(self) -> None:
        self.state, self.is_active = "aborted", False

    def canceled(self) -> None:
        assert self.is_cancel_requested, "canceled() before rclpy's CANCELING (an invalid transition)"
        self.state, self.is_active = "canceled", False


def _server(ctx, rate: float):  # noqa: ANN001, ANN202
    import rclpy

    from rbd_ros.ros.follow_action import FollowJointTrajectoryServer

    node = rclpy.create_node("controller", context=ctx)
    loop = NS(runs=lambda execution: True, hold_here=lambda: None)
    ctl = NS(node=node, loop=loop, joints=["a", "b", "c"], cmd_index=np.array([0, 1, 2]), active=True)
    return FollowJointTrajectoryServer(ctl, rate, ft.ToleranceDefaults()), ctl


def _running() -> ft.GoalExecution:
    ex = _plan(_goal("abc", [(100.0, [0.1, 0.1, 0.1])]))
    ex.t = 10.5  # a sample from the cycle
    return ex


def test_feedback_at_the_monitor_rate_then_the_result() -> None:
    with ros_context() as ctx:
        server, ctl = _server(ctx, 40.0)
        try:
            ex, handle = _running(), FakeHandle()
            threading.Timer(1.0, lambda: ex.finish(ft.SUCCESSFUL, "done")).start()
            result = server._monitor(handle, ex, threading.Event())
            assert handle.state == "succeeded" and result.error_code == 0 and result.error_string == "done"
            n = len(handle.feedback_times) - 1  # (one more with the success)
            # 1 s at 40 Hz: 40 (a loaded machine's late wake-ups give fewer, never more)
            assert 25 <= n <= 42, n
            assert np.median(np.diff(handle.feedback_times[:-1])) >= 0.025 * 0.95
        finally:
            server.close()
            ctl.node.destroy_node()


def test_preempted_deactivated_and_canceled_goals_end_as_jtc_ends_them() -> None:
    with ros_context() as ctx:
        server, ctl = _server(ctx, 100.0)
        try:
            ex, handle = _running(), FakeHandle()
            threading.Timer(0.1, lambda: ex.finish(ft.INVALID_GOAL, ft.PREEMPTED)).start()
            result = server._monitor(handle, ex, threading.Event())
            assert (handle.state, result.error_code) == ("aborted", ft.INVALID_GOAL)
            assert result.error_string == "Current goal preempted by new incoming action."

            ex, handle = _running(), FakeHandle()
            threading.Timer(0.1, lambda: setattr(ctl, "active", False)).start()
            result = server._monitor(handle, ex, threading.Event())
            assert (handle.state, result.error_code) == ("aborted", ft.INVALID_GOAL)
            assert "deactivate" in result.error_string
            ctl.active = True

            ex, handle = _running(), FakeHandle()
            server.active = (handle, ex, threading.Event())
            server._on_cancel_request(handle)  # rclpy then moves the goal to CANCELING:
            threading.Timer(0.05, lambda: setattr(handle, "is_cancel_requested", True)).start()
            result = server._monitor(handle, ex, threading.Event())
            assert (handle.state, result.error_code) == ("canceled", ft.SUCCESSFUL)
            assert server.active is None
        finally:
            server.close()
            ctl.node.destroy_node()
