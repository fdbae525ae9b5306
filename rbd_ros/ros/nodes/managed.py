"""The controller as a managed (lifecycle) node, for a real arm (issue 28)::

    rbd-ros controller --ros-args -p managed:=true -p type:=computed_torque -p model_yaml:=FILE
    ros2 lifecycle set /controller configure   # model, gains, IK warmed, subscriptions: no commands
    ros2 lifecycle set /controller activate    # holds where the arm is, then commands every cycle
    ros2 lifecycle set /controller deactivate  # one zero-torque command, then silence
    ros2 lifecycle set /controller cleanup     # back to unconfigured (configure again re-reads)

The stages of ros2_control's controllers (``on_configure`` reads the parameters, ``on_activate``
starts writing commands, ``on_deactivate`` stops; its joint_trajectory_controller writes zero
to effort interfaces on deactivation, as this node's stale-state rule does).  While configured
but inactive the node receives ``/joint_states`` (the first one derives the model's gains) but
runs no cycle and publishes nothing; activation holds the latest measured position (the
arm does not jump back to where it was at configure) and restarts the law's memory.  A bad
parameter fails ``configure`` with the one-line reason in the log (the node stays
unconfigured).  The plain start (``managed:=false``, the default; bringup) commands at once.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rbd_ros.ros.common import NodeConfigError, run_node
from rbd_ros.ros.nodes.controller_common import harden_node
from rbd_ros.ros.parameters import schema


def managed_node_class(make_controller: Callable[[Any], Any]) -> type:
    """The lifecycle node class whose configure calls ``make_controller(node)`` (the
    registry's factory, ``rbd_ros.ros.nodes.controller.make_controller``)."""
    from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn

    class ManagedController(LifecycleNode):
        """A ``LifecycleNode`` whose configure makes the registry's controller."""

        controller: Any = None

        def _entities(self) -> tuple[set, set, set]:
            return set(self.subscriptions), set(self.publishers), set(self.timers)

        def on_configure(self, state: Any) -> TransitionCallbackReturn:
            before = self._entities()
            try:
                ctl = make_controller(self)
            except Exception as exc:  # noqa: BLE001 - any reason: one line, stay unconfigured
                text = str(exc) if isinstance(exc, (NodeConfigError, ValueError, FileNotFoundError)) else repr(exc)
                self.get_logger().error(f"configure failed: {text}")
                self._destroy_since(before)
                return TransitionCallbackReturn.FAILURE
            ctl.active = False
            self.controller, self._before = ctl, before
            self.get_logger().info(f"configured ({ctl.law_type}); inactive: no commands until activate")
            return TransitionCallbackReturn.SUCCESS

        def on_activate(self, state: Any) -> TransitionCallbackReturn:
            ctl = self.controller
            result = super().on_activate(state)  # enables the lifecycle publishers
            ctl.law.reset()  # the law's memory restarts; hold where the robot is now
            ctl.loop.hold_here()
            ctl.active = True
            self.get_logger().info("active: commanding")
            return result

        def on_deactivate(self, state: Any) -> TransitionCallbackReturn:
            ctl = self.controller
            if getattr(ctl, "command_interface", "effort") == "effort":  # a position drive holds
                ctl.tau_out[:] = 0.0  # one zero-torque command, then silence
                ctl._publish_command()
            ctl.active = False
            self.get_logger().info("inactive: sent zero torque, no commands until activate")
            return super().on_deactivate(state)

        def on_cleanup(self, state: Any) -> TransitionCallbackReturn:
            self._release()
            self.get_logger().info("cleaned up: unconfigured")
            return TransitionCallbackReturn.SUCCESS

        def on_shutdown(self, state: Any) -> TransitionCallbackReturn:
            if self.controller is not None:
                if self.controller.active:
                    self.on_deactivate(state)
                self._release()
            return TransitionCallbackReturn.SUCCESS

        def release(self) -> None:
            """Join the controller's threads (the process's end: before rclpy shuts down)."""
            ctl = self.controller
            if ctl is None:
                return
            if hasattr(ctl, "close"):  # ~/follow_joint_trajectory, the IK worker
                ctl.close()
            elif hasattr(ctl.loop, "close"):
                ctl.loop.close()

        def _release(self) -> None:
            ctl = self.controller
            if ctl is None:
                return
            self.release()
            self.controller = None
            if hasattr(ctl, "_on_set_parameters"):
                self.remove_on_set_parameters_callback(ctl._on_set_parameters)
            self._destroy_since(self._before)

        def _destroy_since(self, before: tuple[set, set, set]) -> None:
            subs, pubs, timers = before
            for sub in [s for s in self.subscriptions if s not in subs]:
                self.destroy_subscription(sub)
            for pub in [p for p in self.publishers if p not in pubs]:
                self.destroy_publisher(pub)
            for timer in [t for t in self.timers if t not in timers]:
                self.destroy_timer(timer)

    return ManagedController


def main(argv: list[str] | None, make_controller: Callable[[Any], Any]) -> int:
    """The managed controller: created unconfigured, spun by rclpy's executor (entities come
    and go with the transitions, which the lean executor does not follow)."""
    nodes: list[Any] = []

    def body(node: Any) -> None:
        nodes.append(node)
        prm = schema("controller").declare(node, ["type", "rt_priority", "managed"])
        node.get_logger().info(f"managed controller ({prm['type']}): unconfigured; "
                               "configure, then activate to command")
        print("controller: unconfigured (managed)", flush=True)
        if prm["rt_priority"]:
            harden_node(node, prm["rt_priority"])

    def cleanup() -> None:  # SIGINT, SIGTERM: the controller's threads joined before rclpy shuts down
        for node in nodes:
            node.release()

    return run_node("controller", body, argv, node_factory=managed_node_class(make_controller),
                    cleanup=cleanup)
