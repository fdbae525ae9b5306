"""``~/follow_joint_trajectory``: the arm controller's ``control_msgs/action/FollowJointTrajectory``
server, as ros2_control's joint_trajectory_controller serves it to MoveIt (issue 29).

A thin adapter: the goal's validation, reference and tolerance checks are the ROS-free
``rbd_ros.control.follow_trajectory`` (semantics there), run by the controller's
``ControlLoop`` (``follow_goal``: the reference reaches the cycle through its one-slot handoff;
the cycle checks the tolerances and writes the outcome without waiting).  Here:

* every goal is accepted; one that fails validation is **aborted at once** with its
  ``error_code`` (INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP) and ``error_string``,
  and nothing else changes (a running goal goes on, the arm holds).  joint_trajectory_controller
  rejects such goals; a rejected ROS 2 goal carries no result, so the code would be lost
  (ROS 1's controller sent it with the rejection);
* a valid goal preempts the running one, which is aborted with joint_trajectory_controller's
  INVALID_GOAL "Current goal preempted by new incoming action."; a trajectory on
  ``~/joint_trajectory`` or a target pose replacing the goal's reference aborts it likewise;
* cancel: the goal ends canceled (error_code 0) and the arm holds the measured position; a
  managed controller's deactivation aborts the running goal (INVALID_GOAL);
* feedback (``desired``, ``actual``, ``error = desired - actual`` in the ``joints`` order, the
  index of the point being approached, stamped with the control time) and the goal's end are
  published every 1/``action_monitor_rate`` s; the result follows the last point once the goal
  tolerances hold (SUCCESSFUL) or the tolerances were violated (PATH_/GOAL_TOLERANCE_VIOLATED,
  naming the joint; the arm holds the measured position).

Executor: the server lives on a hidden helper node (``_<name>_follow_joint_trajectory``, same
context and namespace) with its own ``MultiThreadedExecutor`` thread, under the controller's
absolute name (``/controller/follow_joint_trajectory``).  So the controller node keeps the
lean executor (rbd_ros.ros.lean_executor serves no waitables), a goal's execute callback may
wait for its outcome without holding up the control cycle, and in composed mode the bridge's
stepping thread is untouched.
"""
from __future__ import annotations

import threading
from typing import Any

from rbd_ros.ros import topics


class FollowJointTrajectoryServer:
    """The action server of one arm ``Controller`` (module docstring)."""

    def __init__(self, controller: Any, monitor_rate: float, defaults: Any) -> None:
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionServer, CancelResponse, GoalResponse
        from rclpy.callback_groups import ReentrantCallbackGroup
        from rclpy.executors import MultiThreadedExecutor

        from rbd_ros.ros.lean_executor import spin_in_thread

        node = controller.node
        self.ctl, self.log, self.period, self.defaults = controller, node.get_logger(), 1.0 / monitor_rate, defaults
        self.Action = FollowJointTrajectory
        self.lock = threading.Lock()  # the active goal and its reference change together
        self.active: tuple[Any, Any, threading.Event] | None = None  # (handle, execution, wake)
        self.name = topics.node_topic(node.get_fully_qualified_name(), topics.FOLLOW_JOINT_TRAJECTORY)
        self.node = rclpy.create_node(f"_{node.get_name()}_follow_joint_trajectory", context=node.context,
                                      namespace=node.get_namespace(), use_global_arguments=False,
                                      start_parameter_services=False)
        self.server = ActionServer(
            self.node, FollowJointTrajectory, self.name, self._execute,
            goal_callback=lambda _goal: GoalResponse.ACCEPT,
            cancel_callback=self._on_cancel_request, callback_group=ReentrantCallbackGroup())
        self._CancelResponse = CancelResponse
        self.executor = MultiThreadedExecutor(num_threads=4, context=node.context)
        self.executor.add_node(self.node)
        self.thread = spin_in_thread(self.executor, "rbd_ros-follow-joint-trajectory")

    def close(self) -> None:
        """Stop serving (a managed node's cleanup; the process's end does it too)."""
        self.executor.shutdown(timeout_sec=1.0)
        self.server.destroy()
        self.node.destroy_node()

    # ---- callbacks (the helper node's executor threads) -----------------------------------------
    def _on_cancel_request(self, handle: Any) -> Any:
        """Cancel the active goal: it ends canceled, the arm holds the measured position."""
        from rbd_ros.control.follow_trajectory import CANCELED

        with self.lock:
            if self.active is not None and self.active[0] is handle:
                _, execution, wake = self.active
                if execution.finish(CANCELED, "canceled: holding the measured position"):
                    self.ctl.loop.hold_here()
                wake.set()  # (the monitor waits for rclpy's CANCELING state: _canceling)
        return self._CancelResponse.ACCEPT

    def _execute(self, handle: Any) -> Any:
        """Run one goal to its end (module docstring); returns its result."""
        from rbd_ros.control.follow_trajectory import INVALID_GOAL, PREEMPTED, GoalError

        wake = threading.Event()
        with self.lock:
            try:
                if not self.ctl.active:
                    raise GoalError(INVALID_GOAL, "the controller is not active (a managed node: activate it)")
                execution = self.ctl.loop.follow_goal(handle.request, self.defaults)
            except GoalError as exc:
                self.log.error(f"follow_joint_trajectory: goal refused ({self._code_name(exc.code)}): {exc}")
                handle.abort()
                return self.Action.Result(error_code=exc.code, error_string=str(exc))
            previous, self.active = self.active, (handle, execution, wake)
            if previous is not None and previous[1].finish(INVALID_GOAL, PREEMPTED):
                previous[2].set()
        spline = execution.spline
        self.log.info(f"follow_joint_trajectory: goal accepted, {len(execution.point_times)} points, "
                      f"{spline.kind}, t = {spline.start_time:.3f} .. {spline.end_time:.3f} s")
        return self._monitor(handle, execution, wake)

    def _monitor(self, handle: Any, execution: Any, wake: threading.Event) -> Any:
        """Feedback every period until the goal ends; then its terminal state and result."""
        from rbd_ros.control.follow_trajectory import INVALID_GOAL

        loop, context = self.ctl.loop, self.node.context
        feedback = self._feedback_message()
        while execution.code is None:
            if not context.ok():
                execution.finish(INVALID_GOAL, "the controller shut down")
                break
            if not self.ctl.active:  # a managed node deactivated (joint_trajectory_controller's words)
                execution.finish(INVALID_GOAL, "Current goal cancelled during deactivate transition.")
                break
            with self.lock:  # (a new goal replaces the reference and ends this one under it)
                if not loop.runs(execution):
                    execution.finish(INVALID_GOAL, "Current goal preempted by a reference on "
                                                   "~/joint_trajectory or ~/target_pose.")
                    break
            self._publish_feedback(handle, execution, feedback)
            wake.wait(self.period)
        with self.lock:
            if self.active is not None and self.active[1] is execution:
                self.active = None
        code, message = execution.code, execution.message
        try:
            code = self._end(handle, execution, feedback, code, message)
        except Exception:  # noqa: BLE001 - the process is shutting down (Ctrl-C) meanwhile
            if context.ok():
                raise
        return self.Action.Result(error_code=code, error_string=message)

    def _end(self, handle: Any, execution: Any, feedback: Any, code: int, message: str) -> int:
        """The goal's terminal state (succeeded, canceled, aborted); its result's error_code."""
        from rbd_ros.control.follow_trajectory import CANCELED, INVALID_GOAL, SUCCESSFUL

        if code == SUCCESSFUL:
            self._publish_feedback(handle, execution, feedback)
            handle.succeed()
            self.log.info(f"follow_joint_trajectory: {message}")
        elif code == CANCELED and self._canceling(handle):
            handle.canceled()
            self.log.info(f"follow_joint_trajectory: {message}")
            code = SUCCESSFUL
        else:
            code = INVALID_GOAL if code == CANCELED else code  # (rclpy never moved it to CANCELING)
            handle.abort()
            self.log.warning(f"follow_joint_trajectory: aborted ({self._code_name(code)}): {message}")
        return code

    @staticmethod
    def _canceling(handle: Any, timeout: float = 1.0) -> bool:
        """Wait until rclpy moved the goal to CANCELING (it does after the cancel callback)."""
        import time

        until = time.monotonic() + timeout
        while not handle.is_cancel_requested:
            if time.monotonic() > until:
                return False
            time.sleep(0.002)
        return True

    # ---- feedback ---------------------------------------------------------------------------
    def _feedback_message(self) -> Any:
        from trajectory_msgs.msg import JointTrajectoryPoint

        fb = self.Action.Feedback()
        fb.joint_names = list(self.ctl.joints)
        fb.desired, fb.actual, fb.error = JointTrajectoryPoint(), JointTrajectoryPoint(), JointTrajectoryPoint()
        return fb

    def _publish_feedback(self, handle: Any, execution: Any, fb: Any) -> None:
        """``desired``, ``actual``, ``error`` of the latest cycle in the ``joints`` order."""
        import math

        from rbd_ros.ros.messages import set_stamp

        t = execution.t
        if not math.isfinite(t) or not handle.is_active:
            return
        idx = self.ctl.cmd_index
        desired, actual = execution.desired[:, idx], execution.actual[:, idx]  # copies (a cycle may write)
        set_stamp(fb.header.stamp, t)
        for point, (q, qd) in ((fb.desired, desired), (fb.actual, actual), (fb.error, desired - actual)):
            point.positions, point.velocities = q.tolist(), qd.tolist()
            set_stamp(point.time_from_start, max(0.0, t - execution.start_time))
        fb.index = execution.point_index(t)
        handle.publish_feedback(fb)

    def _code_name(self, code: int) -> str:
        names = {v: k for k, v in vars(self.Action.Result).items() if k.isupper() and isinstance(v, int)}
        return names.get(code, str(code))


def make_server(controller: Any, prm: dict[str, Any]) -> FollowJointTrajectoryServer | None:
    """The server for an arm controller with the schema's ``prm``; None (one warning line)
    where ``control_msgs`` does not import."""
    from rbd_ros.control.follow_trajectory import ToleranceDefaults

    try:
        import control_msgs.action  # noqa: F401
    except ImportError as exc:
        controller.node.get_logger().warning(
            f"~/follow_joint_trajectory not served: control_msgs does not import ({exc}); "
            "scripts/setup.sh builds it from interfaces_compat/")
        return None
    defaults = ToleranceDefaults(path_position=prm["path_tolerance"], goal_position=prm["goal_tolerance"],
                                 stopped_velocity=prm["stopped_velocity_tolerance"], goal_time=prm["goal_time"])
    return FollowJointTrajectoryServer(controller, prm["action_monitor_rate"], defaults)
