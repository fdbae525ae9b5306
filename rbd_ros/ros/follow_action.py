"""``~/follow_joint_trajectory``: the arm controller's ``control_msgs/action/FollowJointTrajectory``
server, as ros2_control's joint_trajectory_controller serves it to MoveIt (issues 29, 37).

A thin adapter: the goal's validation, plan (whole-path limits, retiming) and tolerance checks
are the ROS-free ``rbd_ros.control.follow_trajectory`` (semantics there), run by the
controller's ``ControlLoop`` (``plan_goal`` then ``start_goal``: the reference reaches the cycle
through its one-slot handoff; the cycle checks the tolerances and writes the outcome without
waiting).  Here:

* every goal is accepted, then **planned in its execute callback** (a thread of this server's
  executor: never the control cycle's, under no lock the cycle takes; the cycle holds its
  reference meanwhile).  A goal stamped 0 starts when its plan is ready (``start_goal``; a plan
  whose start passed while it was made is made again), so no part of it is skipped.  Goals
  start in the order they came (numbered in the goal callback, in the order rclpy took their
  requests; not when their execute callbacks start, which rclpy's thread pool may reorder): one
  whose plan is ready after a newer goal started ends preempted; one canceled while planned ends
  canceled, never started (the cancel recorded by this server's cancel callback, not read from
  rclpy's CANCELING, which rclpy sets only after that callback returned: a goal started in
  between ran on to SUCCEEDED, its cancel lost);
* a goal that fails validation is **aborted at once** with its ``error_code`` (INVALID_GOAL,
  INVALID_JOINTS, OLD_HEADER_TIMESTAMP) and ``error_string``, and nothing else changes (a
  running goal goes on, the arm holds).  joint_trajectory_controller rejects such goals; a
  rejected ROS 2 goal carries no result, so the code would be lost (ROS 1's controller sent it
  with the rejection);
* a valid goal preempts the running one, which is aborted with joint_trajectory_controller's
  INVALID_GOAL "Current goal preempted by new incoming action."; a trajectory on
  ``~/joint_trajectory`` or a target pose replacing the goal's reference aborts it likewise;
* cancel: the goal ends canceled (error_code 0) and the arm holds the measured position; a
  managed controller's deactivation aborts the running goal (INVALID_GOAL);
* feedback (``desired``, ``actual``, ``error = desired - actual`` in the ``joints`` order, the
  index of the point being approached, stamped with the control time; ``time_from_start`` on the
  clock of the plan that runs, the retimed one when retimed) and the goal's end are published
  every 1/``action_monitor_rate`` s; the result follows the last point once the goal
  tolerances hold (SUCCESSFUL) or the tolerances were violated (PATH_/GOAL_TOLERANCE_VIOLATED,
  naming the joint; the arm holds the measured position); its ``error_string`` says what the
  planner changed (``Plan.summary``: joined, retimed to a new duration);
* **no client can take it down**: every feedback publish, terminal transition and goal-handle
  read is guarded (a client gone away: rclpy's ``RCLError: Failed to publish: cannot publish
  data``; a goal already ended; the process shutting down), one log line per kind of failure;
  an exception out of rclpy's own callbacks (its status publish) is logged and the executor
  spins on (``_spin``); ``close`` ends the running goal and joins every thread (the process's
  end: before rclpy shuts down, so SIGINT and SIGTERM exit 0).

Executor: the server lives on a hidden helper node (``_<name>_follow_joint_trajectory``, same
context and namespace) with its own ``MultiThreadedExecutor`` thread, under the controller's
absolute name (``/controller/follow_joint_trajectory``).  So the controller node keeps the
lean executor (rbd_ros.ros.lean_executor serves no waitables), a goal's execute callback may
plan and wait for its outcome without holding up the control cycle, and in composed mode the
bridge's stepping thread is untouched.
"""
from __future__ import annotations

import contextlib
import math
import threading
import time
from typing import Any, cast

from rbd_ros.control.follow_trajectory import (
    CANCELED,
    INVALID_GOAL,
    PREEMPTED,
    SUCCESSFUL,
    GoalError,
    ToleranceDefaults,
)
from rbd_ros.ros import topics
from rbd_ros.ros.lean_executor import release_sigint_guard
from rbd_ros.ros.messages import set_stamp

#: s: how long a goal's result stays readable after the goal ended (rclpy's ``result_timeout``,
#: counted from the terminal state).  rclpy Kilted's default is 10 s (Humble's was 900): a client
#: that asks for the result later -- a script that sends, waits on something else, then reads;
#: MoveIt or a test client lagging on a loaded machine -- got STATUS_UNKNOWN and an empty result
#: ("Sending result response for unknown or expired goal ID"), measured with a goal whose result
#: was asked 2.5 s after its end under a 2 s timeout.  A finished goal's handle is a few hundred
#: bytes; also ``rbd_ros.ros.gripper_action``.
RESULT_TIMEOUT = 900


def spin_helper(executor: Any, node: Any, closing: threading.Event, note: Any) -> None:
    """An action server's helper node's ``executor`` until ``closing`` or the context's end;
    an exception out of a callback (rclpy's own status publish to a client gone away) goes to
    ``note(exc)`` and the server goes on serving (also ``rbd_ros.ros.gripper_action``)."""
    from rclpy.executors import ExternalShutdownException, ShutdownException

    while not closing.is_set() and node.context.ok():
        try:
            executor.spin_once(timeout_sec=0.1)
        except (ExternalShutdownException, ShutdownException, KeyboardInterrupt):
            return
        except Exception as exc:  # noqa: BLE001 - a client gone: keep serving the next
            if closing.is_set() or not node.context.ok():
                return
            note(exc)


class FollowJointTrajectoryServer:
    """The action server of one arm ``Controller`` (module docstring)."""

    def __init__(self, controller: Any, monitor_rate: float, defaults: Any) -> None:
        import rclpy
        from control_msgs.action import FollowJointTrajectory
        from rclpy.action import ActionServer, CancelResponse, GoalResponse
        from rclpy.callback_groups import ReentrantCallbackGroup
        from rclpy.executors import MultiThreadedExecutor

        node = controller.node
        self.ctl, self.log, self.period, self.defaults = controller, node.get_logger(), 1.0 / monitor_rate, defaults
        self.Action = FollowJointTrajectory
        self.lock = threading.Lock()  # the active goal and its reference change together
        self.active: tuple[Any, Any, threading.Event] | None = None  # (handle, execution, wake)
        self.received = 0  # goals received so far (each one's number: the newest started wins)
        self.started = 0  # the number of the goal started last
        self._numbers: dict[int, tuple[Any, int]] = {}  # id(goal message) -> (it, its number)
        self._cancels: dict[int, Any] = {}  # id(handle) -> handle: a cancel this server accepted
        self.closing = threading.Event()
        self._noted: set[str] = set()  # publish failures already logged (one line each)
        self.name = topics.node_topic(node.get_fully_qualified_name(), topics.FOLLOW_JOINT_TRAJECTORY)
        self.node = rclpy.create_node(f"_{node.get_name()}_follow_joint_trajectory", context=node.context,
                                      namespace=node.get_namespace(), use_global_arguments=False,
                                      start_parameter_services=False)
        self.server = ActionServer(
            self.node, FollowJointTrajectory, self.name, self._execute,
            goal_callback=self._on_goal_request, cancel_callback=self._on_cancel_request,
            callback_group=ReentrantCallbackGroup(), result_timeout=RESULT_TIMEOUT)
        self._CancelResponse, self._GoalResponse = CancelResponse, GoalResponse
        self.executor = MultiThreadedExecutor(num_threads=6, context=node.context)
        release_sigint_guard(self.executor)  # (the signal's race: lean_executor); _spin polls
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, name="rbd_ros-follow-joint-trajectory", daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        spin_helper(self.executor, self.node, self.closing, lambda exc: self._note("a callback", exc))

    def close(self, timeout: float = 2.0) -> None:
        """Stop serving and join every thread (a managed node's cleanup; the process's end,
        before rclpy shuts down): the running goal ends aborted, its monitor returns, the
        executor's threads are joined."""
        if self.closing.is_set():
            return
        self.closing.set()
        with self.lock:
            active = self.active
        if active is not None and active[1].finish(INVALID_GOAL, "the controller shut down"):
            active[2].set()
        self.thread.join(timeout)
        self.executor.shutdown(timeout_sec=timeout)  # joins its worker threads
        if self.thread.is_alive():  # still inside rclpy (a loaded machine): an action server
            with contextlib.suppress(Exception):  # destroyed under its wait crashes (rclcpp#2163)
                self.log.warning(f"follow_joint_trajectory: its executor thread did not end within "
                                 f"{timeout} s; the server is left to the process's end")
            return
        for close in (self.server.destroy, self.node.destroy_node):
            try:
                close()
            except Exception as exc:  # noqa: BLE001 - the context went first (Ctrl-C)
                self._note("close", exc)

    # ---- guarded calls: a client gone, a goal canceled or ended, the process shutting down ----
    def _note(self, what: str, exc: BaseException) -> None:
        """One log line per kind of failure (a vanished client fails every publish)."""
        key = f"{what}: {type(exc).__name__}"
        if key in self._noted:
            return
        self._noted.add(key)
        try:
            self.log.warning(f"follow_joint_trajectory: {what} failed ({exc}); the client may have "
                             "gone away: serving on")
        except Exception:  # noqa: BLE001 - no logging left (shutting down)
            pass

    def _call(self, handle: Any, what: str, *args: Any) -> bool:
        """``handle.<what>(*args)`` (``publish_feedback``, ``succeed``, ``abort``, ``canceled``);
        False instead of an exception."""
        try:
            getattr(handle, what)(*args)
            return True
        except Exception as exc:  # noqa: BLE001 - RCLError ("cannot publish data"), invalid transition
            self._note(what, exc)
            return False

    @staticmethod
    def _flag(handle: Any, what: str) -> bool:
        """``handle.is_active`` / ``is_cancel_requested``; False when it cannot be read."""
        try:
            return bool(getattr(handle, what))
        except Exception:  # noqa: BLE001 - a destroyed goal handle
            return False

    # ---- callbacks (the helper node's executor threads) -----------------------------------------
    def _on_goal_request(self, goal: Any) -> Any:
        """Accept every goal, numbered here: in the order rclpy took the requests (module
        docstring; the goal handle's ``request`` is this message)."""
        with self.lock:
            self.received += 1
            self._numbers[id(goal)] = (goal, self.received)
            if len(self._numbers) > 64:  # (one rclpy failed to make a handle for: never executed)
                del self._numbers[min(self._numbers, key=lambda k: self._numbers[k][1])]
        return self._GoalResponse.ACCEPT

    def _on_cancel_request(self, handle: Any) -> Any:
        """Cancel the active goal: it ends canceled, the arm holds the measured position; a goal
        still being planned ends canceled once planned, never started (recorded here: rclpy
        moves it to CANCELING only after this returns)."""
        with self.lock:
            for key in [k for k, h in self._cancels.items() if not self._flag(h, "is_active")]:
                del self._cancels[key]  # (a cancel that came after its goal's end was executed)
            self._cancels[id(handle)] = handle
            active = self.active
            running = active is not None and active[0] is handle
            if active is not None and running:
                _, execution, wake = active
                if execution.finish(CANCELED, "canceled: holding the measured position"):
                    self.ctl.loop.hold_here()
                wake.set()  # (the monitor waits for rclpy's CANCELING state: _canceling)
        t = getattr(self.ctl.loop, "t", float("nan"))  # the control time it came at
        self.log.info(f"follow_joint_trajectory: cancel requested at t = {t:.3f} s "
                      f"({'running' if running else 'not started yet'})")
        return self._CancelResponse.ACCEPT

    def _execute(self, handle: Any) -> Any:
        """Plan one goal (this thread: under no lock, the cycle goes on meanwhile), start it,
        run it to its end (module docstring); returns its result."""
        with self.lock:
            arrived = self._numbers.pop(id(handle.request), None)
            if arrived is None or arrived[0] is not handle.request:  # (no goal callback: a stand-in)
                self.received += 1
                arrived = (handle.request, self.received)
        points = len(getattr(getattr(handle.request, "trajectory", None), "points", ()) or ())
        # as ros2_controllers' JTC ("Received new action goal"): a goal that reached the server
        # and never ended is told apart from one lost on its way (the planning below may take long)
        self.log.info(f"follow_joint_trajectory: goal {arrived[1]} received ({points} points): planning")
        try:
            return self._plan_and_run(handle, arrived[1])
        except GoalError as exc:
            self.log.error(f"follow_joint_trajectory: goal refused ({self._code_name(exc.code)}): {exc}")
            self._call(handle, "abort")
            return self.Action.Result(error_code=exc.code, error_string=str(exc))
        except Exception as exc:  # noqa: BLE001 - a bug must not leave the goal hanging
            self.log.error(f"follow_joint_trajectory: goal failed: {exc!r}")
            self._call(handle, "abort")
            return self.Action.Result(error_code=INVALID_GOAL, error_string=f"internal error: {exc!r}")
        finally:
            with self.lock:
                self._cancels.pop(id(handle), None)

    def _plan_and_run(self, handle: Any, number: int) -> Any:
        from rbd_ros.control.loop import PLAN_ATTEMPTS  # lazy: the control loop (21 ms of import)

        loop = self.ctl.loop
        wake = threading.Event()
        wall = time.monotonic()
        for _ in range(PLAN_ATTEMPTS):
            if not self.ctl.active:
                raise GoalError(INVALID_GOAL, "the controller is not active (a managed node: activate it)")
            execution = loop.plan_goal(handle.request, self.defaults)  # under no lock
            with self.lock:
                canceled = id(handle) in self._cancels or self._flag(handle, "is_cancel_requested")
                if canceled:
                    pass
                elif number < self.started:  # a newer goal started while this one was planned
                    raise GoalError(INVALID_GOAL, PREEMPTED)
                elif not loop.start_goal(execution):
                    continue  # its start passed while planning: plan again with the lead learnt
                else:
                    self.started = number
                    previous, self.active = self.active, (handle, execution, wake)
                    if previous is not None and previous[1].finish(INVALID_GOAL, PREEMPTED):
                        previous[2].set()
            if canceled:  # canceled while planned: never started (CANCELING follows the callback)
                text = "canceled before it started (while it was planned)"
                ended = self._canceling(handle) and self._call(handle, "canceled")
                self.log.info(f"follow_joint_trajectory: {text}")
                return self.Action.Result(error_code=SUCCESSFUL if ended else INVALID_GOAL, error_string=text)
            break
        else:
            raise GoalError(INVALID_GOAL, loop.late_reason())
        self.log.info(f"follow_joint_trajectory: goal accepted, {len(execution.point_times)} points, "
                      f"{self._timing(execution)}, planned in {time.monotonic() - wall:.3f} s")
        return self._monitor(handle, execution, wake)

    @staticmethod
    def _timing(execution: Any) -> str:
        """The plan's kind, times and (when retimed) its new duration."""
        spline = getattr(execution, "spline", None)
        kind = getattr(spline, "kind", "reference")
        text = f"{kind}, t = {execution.start_time:.3f} .. {execution.end_time:.3f} s"
        note = execution.plan.summary()
        return f"{text}; {note}" if note else text

    def _monitor(self, handle: Any, execution: Any, wake: threading.Event) -> Any:
        """Feedback every period until the goal ends; then its terminal state and result."""
        loop, context = self.ctl.loop, self.node.context
        feedback = self._feedback_message()
        while execution.code is None:
            if not context.ok() or self.closing.is_set():
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
        code, message = cast(int, execution.code), execution.message  # set: the loop above ended
        note = execution.plan.summary()
        if note and note not in message:
            message = f"{message} ({note})"
        code = self._end(handle, execution, feedback, code, message)
        return self.Action.Result(error_code=code, error_string=message)

    def _end(self, handle: Any, execution: Any, feedback: Any, code: int, message: str) -> int:
        """The goal's terminal state (succeeded, canceled, aborted); its result's error_code.
        Every call guarded: the client may be gone, the process shutting down."""
        if code == SUCCESSFUL:
            self._publish_feedback(handle, execution, feedback)
            self._call(handle, "succeed")
            self.log.info(f"follow_joint_trajectory: {message}")
        elif code == CANCELED and self._canceling(handle):
            self._call(handle, "canceled")
            self.log.info(f"follow_joint_trajectory: {message}")
            code = SUCCESSFUL
        else:
            code = INVALID_GOAL if code == CANCELED else code  # (rclpy never moved it to CANCELING)
            self._call(handle, "abort")
            self.log.warning(f"follow_joint_trajectory: aborted ({self._code_name(code)}): {message}")
        return code

    def _canceling(self, handle: Any, timeout: float = 1.0) -> bool:
        """Wait until rclpy moved the goal to CANCELING (it does after the cancel callback)."""
        until = time.monotonic() + timeout
        while not self._flag(handle, "is_cancel_requested"):
            if time.monotonic() > until or self.closing.is_set():
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
        """``desired``, ``actual``, ``error`` of the latest cycle in the ``joints`` order;
        ``time_from_start`` on the plan's clock (the retimed one when retimed)."""

        t = execution.t
        if not math.isfinite(t) or not self._flag(handle, "is_active"):
            return
        idx = self.ctl.cmd_index
        desired, actual = execution.desired[:, idx], execution.actual[:, idx]  # copies (a cycle may write)
        set_stamp(fb.header.stamp, t)
        for point, (q, qd) in ((fb.desired, desired), (fb.actual, actual), (fb.error, desired - actual)):
            point.positions, point.velocities = q.tolist(), qd.tolist()
            set_stamp(point.time_from_start, max(0.0, t - execution.start_time))
        fb.index = execution.point_index(t)
        self._call(handle, "publish_feedback", fb)

    def _code_name(self, code: int) -> str:
        names = {v: k for k, v in vars(self.Action.Result).items() if k.isupper() and isinstance(v, int)}
        return names.get(code, str(code))


def make_server(controller: Any, prm: dict[str, Any]) -> FollowJointTrajectoryServer | None:
    """The server for an arm controller with the schema's ``prm``; None (one warning line)
    where ``control_msgs`` does not import."""
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
