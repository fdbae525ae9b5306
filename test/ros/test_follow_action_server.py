"""The action adapter's own timing and bookkeeping (``rbd_ros.ros.follow_action``), in process
with a stand-in controller (the closed loop: test_follow_joint_trajectory_action):

* feedback goes out every 1/``action_monitor_rate`` s of wall time while a goal runs (counted
  on the server side: a client's delivery comes in bursts under load), then the result;
* a preempted goal ends aborted with joint_trajectory_controller's INVALID_GOAL text, a
  deactivated controller aborts its goal, a cancel ends it canceled after rclpy's CANCELING;
* a cancel accepted while the goal is planned ends it canceled, never started, though rclpy
  moves it to CANCELING only after the cancel callback (read from rclpy alone, a plan ready in
  between started it and it SUCCEEDED); goals start in the order the goal callback saw them,
  not the order their execute callbacks began (an older goal never supersedes a newer one);
* a client gone away (issue 37): every feedback publish and the terminal transition failing
  with rclpy's ``RCLError: Failed to publish: cannot publish data`` still end the goal with its
  result and free the server for the next; an exception out of a callback of the server's
  executor (rclpy's own status publish) leaves it serving, and ``close`` joins its thread.
"""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace as NS

import numpy as np
import pytest
from test_follow_trajectory import _goal, _plan

from rbd_ros.control import follow_trajectory as ft
from ros_helpers import ros_context, spin_in_background


class FakeHandle:
    """A ServerGoalHandle's surface the adapter uses, recording the calls."""

    def __init__(self) -> None:
        self.feedback_times: list[float] = []
        self.is_active, self.is_cancel_requested, self.state = True, False, "executing"

    def publish_feedback(self, fb) -> None:
        self.feedback_times.append(time.monotonic())

    def succeed(self) -> None:
        self.state, self.is_active = "succeeded", False

    def abort(self) -> None:
        self.state, self.is_active = "aborted", False

    def canceled(self) -> None:
        assert self.is_cancel_requested, "canceled() before rclpy's CANCELING (an invalid transition)"
        self.state, self.is_active = "canceled", False


class GoneClientHandle(FakeHandle):
    """A goal whose client vanished: every publish fails as rclpy's does then."""

    def publish_feedback(self, fb) -> None:
        super().publish_feedback(fb)
        raise RuntimeError("Failed to publish: cannot publish data")

    def succeed(self) -> None:
        super().succeed()  # (rclpy moves the state, then its status publish fails)
        raise RuntimeError("Failed to publish: cannot publish data")


def _server(ctx, rate: float):
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


def test_a_client_gone_away_fails_every_publish_and_the_goal_still_ends() -> None:
    with ros_context() as ctx:
        server, ctl = _server(ctx, 100.0)
        try:
            ex, handle = _running(), GoneClientHandle()
            server.active = (handle, ex, threading.Event())
            threading.Timer(0.2, lambda: ex.finish(ft.SUCCESSFUL, "done")).start()
            result = server._monitor(handle, ex, threading.Event())
            assert (handle.state, result.error_code, result.error_string) == ("succeeded", 0, "done")
            assert len(handle.feedback_times) >= 5 and server.active is None
        finally:
            server.close()
            ctl.node.destroy_node()


def test_an_exception_in_a_callback_leaves_the_server_serving_and_close_joins_it() -> None:
    with ros_context() as ctx:
        server, ctl = _server(ctx, 100.0)
        calls: list[float] = []

        def tick() -> None:
            calls.append(time.monotonic())
            if len(calls) == 1:
                raise RuntimeError("Failed to publish: cannot publish data")  # as rclpy's publish_status

        try:
            server.node.create_timer(0.02, tick)
            deadline = time.monotonic() + 10.0
            while len(calls) < 5 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert len(calls) >= 5 and server.thread.is_alive(), (len(calls), "the server stopped serving")
        finally:
            server.close()
            ctl.node.destroy_node()
        assert not server.thread.is_alive()


class PlanningLoop:
    """A stand-in ``ControlLoop`` whose ``plan_goal`` waits for ``release`` (a plan taking
    long); records the goals started."""

    def __init__(self) -> None:
        self.planning, self.release, self.started = threading.Event(), threading.Event(), []

    def plan_goal(self, goal, defaults) -> ft.GoalExecution:
        ex = _running()
        ex.goal = goal
        self.planning.set()
        assert self.release.wait(10.0)
        return ex

    def start_goal(self, execution) -> bool:
        self.started.append(execution.goal)
        return True

    runs = staticmethod(lambda execution: True)
    hold_here = staticmethod(lambda: None)


class ReadHandle(FakeHandle):
    """``is_cancel_requested`` (rclpy's CANCELING) with its first read signalled."""

    def __init__(self) -> None:
        self.read, self._canceling = threading.Event(), False
        super().__init__()

    @property
    def is_cancel_requested(self) -> bool:
        self.read.set()
        return self._canceling

    @is_cancel_requested.setter
    def is_cancel_requested(self, value: bool) -> None:
        self._canceling = value


def _execute_in_thread(server, handle) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(server._execute(handle)), daemon=True)
    thread.start()
    return thread, out


def test_a_cancel_accepted_while_the_goal_is_planned_ends_it_canceled_never_started() -> None:
    """rclpy moves a goal to CANCELING only after the cancel callback returned: a plan ready in
    between started the goal (is_cancel_requested still False), which then ran to SUCCEEDED, its
    cancel lost (the probe's "cancel with no effect").  The server's own record of the cancel
    keeps it from starting, and it ends canceled once rclpy's CANCELING came."""
    with ros_context() as ctx:
        server, ctl = _server(ctx, 100.0)
        ctl.loop = loop = PlanningLoop()
        try:
            handle = ReadHandle()
            handle.request = NS()
            thread, out = _execute_in_thread(server, handle)
            assert loop.planning.wait(10.0)
            server._on_cancel_request(handle)  # accepted; CANCELING not yet (rclpy sets it next)
            handle.read.clear()
            loop.release.set()  # the plan is ready before rclpy moved the goal to CANCELING:
            assert handle.read.wait(10.0)  # the server looked at the state (then still EXECUTING)
            time.sleep(0.05)
            handle.is_cancel_requested = True  # now rclpy's state
            guard = threading.Timer(1.0, lambda: [x[1].finish(ft.SUCCESSFUL, "reached") for x in [server.active] if x])
            guard.start()  # (before the fix: the goal ran; its end after 1 s: SUCCEEDED)
            thread.join(10.0)
            guard.cancel()
            assert not thread.is_alive()
            assert loop.started == [] and handle.state == "canceled", (loop.started, handle.state)
            assert out[0].error_code == ft.SUCCESSFUL and "canceled before it started" in out[0].error_string
            assert server.active is None and server._cancels == {}
        finally:
            server.close()
            ctl.node.destroy_node()


def test_goals_start_in_the_order_rclpy_took_them_not_the_order_their_execution_began() -> None:
    """Goal A's request came first, B's second (the goal callback numbers them); B's execute
    callback began first (rclpy's thread pool).  B, the newer, runs; A, planned after B started,
    ends preempted -- the older goal never supersedes the newer (numbered at the execute
    callback's start, A got the higher number and preempted B)."""
    with ros_context() as ctx:
        server, ctl = _server(ctx, 100.0)
        ctl.loop = loop = PlanningLoop()
        loop.release.set()
        try:
            a, b = FakeHandle(), FakeHandle()
            a.request, b.request = NS(name="A"), NS(name="B")
            server._on_goal_request(a.request)
            server._on_goal_request(b.request)
            thread_b, out_b = _execute_in_thread(server, b)
            deadline = time.monotonic() + 10.0
            while (server.active is None or server.active[0] is not b) and time.monotonic() < deadline:
                time.sleep(0.01)
            thread_a, out_a = _execute_in_thread(server, a)
            thread_a.join(10.0)
            assert server.active is not None and server.active[0] is b, "the older goal A superseded B"
            assert a.state == "aborted" and out_a[0].error_string == ft.PREEMPTED, (a.state, out_a)
            assert [g.name for g in loop.started] == ["B"]
            server.active[1].finish(ft.SUCCESSFUL, "reached")
            thread_b.join(10.0)
            assert b.state == "succeeded" and out_b[0].error_code == ft.SUCCESSFUL
        finally:
            server.close()
            ctl.node.destroy_node()


@pytest.mark.slow
def test_a_result_asked_for_11_s_after_the_goal_ended_is_still_served() -> None:
    """A plain rclpy ActionClient that reads the result late (a script that sends, then waits on
    something else; a client lagging on a loaded machine) gets the goal's real result: rclpy
    Kilted drops a finished goal 10 s after its end by default, and then answers STATUS_UNKNOWN
    with an empty result (two one-off failures of the closed-loop action tests)."""
    import rclpy
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient

    with ros_context() as ctx:
        server, ctl = _server(ctx, 40.0)
        ctl.active = False  # the goal is refused at once: "the controller is not active"
        peer = rclpy.create_node("peer", context=ctx)
        client = ActionClient(peer, FollowJointTrajectory, server.name)
        spinner = spin_in_background(peer)
        try:
            assert client.wait_for_server(timeout_sec=30)
            goal = FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = ["a", "b", "c"]
            sent = spinner.send_goal(client, goal)
            deadline = time.monotonic() + 30
            while not sent.done() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert sent.done() and sent.result().accepted
            time.sleep(11.0)  # the goal ended within milliseconds of its acceptance
            answer = sent.result().get_result_async()
            deadline = time.monotonic() + 30
            while not answer.done() and time.monotonic() < deadline:
                time.sleep(0.01)
            assert answer.done(), "no result response"
            response = answer.result()
            assert response.status == GoalStatus.STATUS_ABORTED, response.status
            assert response.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
            assert "not active" in response.result.error_string, response.result.error_string
        finally:
            spinner.shutdown(timeout_sec=2)
            server.close()
            peer.destroy_node()
            ctl.node.destroy_node()
