"""``/gripper_controller/gripper_cmd`` (``control_msgs/action/GripperCommand``): the MuJoCo
bridge's gripper (``gripper`` setting; ``rbd_ros.sim.gripper``) as ros2_controllers'
``gripper_action_controller`` serves it (issue 43.2).

A goal's ``command.position`` becomes the servo's target (clipped into the actuated joint's
limits) and ``command.max_effort`` its force limit (<= 0: the URDF's effort; at most that);
the goal then runs on simulated time (``rbd_ros.sim.gripper.GripperGoal``): succeeded with
``reached_goal`` within ``goal_tolerance`` of the target; ``stalled`` when the joint stays
put short of it for ``stall_timeout`` s (a grasp: aborted, unless ``allow_stalling``), the
result and feedback carrying ``position``, ``effort`` (the servo's force), ``stalled`` and
``reached_goal``.  A new goal preempts the running one (aborted); a cancel holds the gripper
where it is.  The defaults are gripper_action_controller's (goal_tolerance 0.01,
stall_velocity_threshold 0.001, stall_timeout 1 s, allow_stalling false).

Like ``rbd_ros.ros.follow_action``: a hidden helper node with its own executor thread, so the
bridge's stepping thread is untouched; the state is read under the bridge's lock.
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

from rbd_ros.ros.follow_action import RESULT_TIMEOUT, spin_helper
from rbd_ros.ros.lean_executor import release_sigint_guard
from rbd_ros.sim.gripper import GripperGoal

ACTION = "/gripper_controller/gripper_cmd"
MONITOR_PERIOD = 0.02  # s (wall) between checks of a running goal


class GripperActionServer:
    """The action server of one bridge (module docstring)."""

    def __init__(self, bridge: Any) -> None:
        import rclpy
        from control_msgs.action import GripperCommand
        from rclpy.action import ActionServer, CancelResponse, GoalResponse
        from rclpy.callback_groups import ReentrantCallbackGroup
        from rclpy.executors import MultiThreadedExecutor

        node = bridge.node
        self.bridge, self.sim, self.log = bridge, bridge.sim, node.get_logger()
        self.Action = GripperCommand
        self.closing = threading.Event()
        self.latest = 0  # the newest goal's number: an older one still running is preempted
        self.node = rclpy.create_node(f"_{node.get_name()}_gripper_cmd", context=node.context,
                                      namespace=node.get_namespace(), use_global_arguments=False,
                                      start_parameter_services=False)
        self._CancelResponse = CancelResponse
        self.server = ActionServer(self.node, GripperCommand, ACTION, self._execute,
                                   goal_callback=lambda _goal: GoalResponse.ACCEPT,
                                   cancel_callback=lambda _handle: CancelResponse.ACCEPT,
                                   callback_group=ReentrantCallbackGroup(), result_timeout=RESULT_TIMEOUT)
        self.executor = MultiThreadedExecutor(num_threads=3, context=node.context)
        self.executor.add_node(self.node)
        release_sigint_guard(self.executor)  # (the SIGINT race of lean_executor; spin_helper polls the context)
        self.thread = threading.Thread(target=self._spin, name="rbd_ros-gripper-cmd", daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        spin_helper(self.executor, self.node, self.closing, lambda exc: self.log.warning(f"gripper_cmd: {exc!r}"))

    def _state(self) -> tuple[float, float, float, float]:
        """(simulated time, position, velocity, effort) of the actuated joint."""
        with self.bridge.lock:
            servo, d = self.sim.gripper_servo, self.sim.mj_data
            return float(d.time), servo.position(d), servo.velocity(d), servo.effort(d)

    def _execute(self, handle: Any) -> Any:
        self.latest += 1
        mine = self.latest
        cmd = handle.request.command
        with self.bridge.lock:
            target, limit = self.sim.gripper_command(float(cmd.position), float(cmd.max_effort))
        t, q, qd, effort = self._state()
        goal = GripperGoal(target, limit, t)
        self.log.info(f"gripper_cmd: to {target:.4g} (asked {cmd.position:.4g}), max effort {limit:.4g}")
        result = self.Action.Result()
        feedback = self.Action.Feedback()
        while True:
            t, q, qd, effort = self._state()
            outcome = goal.update(t, q, qd, effort)
            feedback.position, feedback.effort = q, effort
            if outcome is not None or self.closing.is_set() or mine != self.latest or handle.is_cancel_requested:
                break
            with contextlib.suppress(Exception):  # a client gone away
                handle.publish_feedback(feedback)
            time.sleep(MONITOR_PERIOD)
        result.position, result.effort = q, effort
        if outcome is None:  # preempted, canceled or shutting down: hold where it is
            if handle.is_cancel_requested:
                with self.bridge.lock:
                    self.sim.gripper_command(q, limit)
                handle.canceled()
            else:
                handle.abort()
            return result
        result.stalled, result.reached_goal = outcome["stalled"], outcome["reached_goal"]
        if outcome["succeeded"]:
            handle.succeed()
        else:
            handle.abort()
        self.log.info(f"gripper_cmd: {'reached' if result.reached_goal else 'stalled'} at {q:.4g}, "
                      f"effort {effort:.4g}")
        return result

    def close(self, timeout: float = 2.0) -> None:
        """Stop serving, join the thread, destroy the helper node."""
        self.closing.set()
        self.thread.join(timeout)
        self.executor.shutdown(timeout_sec=timeout)
        if not self.thread.is_alive():
            for close in (self.server.destroy, self.node.destroy_node):
                with contextlib.suppress(Exception):
                    close()
