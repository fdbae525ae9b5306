"""A lean executor for nodes that only serve services (``dynamics_server``).

rclpy's ``SingleThreadedExecutor`` rebuilds its wait set in Python on every wake-up: it walks
every entity of every node, enters each handle, allocates an ``rcl`` wait set, then wraps the
ready callback in a ``Task`` coroutine and schedules it.  For a service whose answer takes a
few microseconds that bookkeeping is most of the server's share of a round trip.

``ServiceLoop`` keeps one wait set for the loop's lifetime, with the nodes' services, a wake-up
guard condition and rclpy's SIGINT guard condition, and calls each ready service's callback
directly: take the request, ``callback(request, Response())``, send the response.  The same
rcl calls as the executor (``service_take_request``, ``send_response``), in the same order, with
no coroutine, task or per-wake allocation.

Scope, checked when ``spin`` starts: services with synchronous callbacks, the node's built-in
parameter services included.  A node that also has subscriptions, timers, clients or guard
conditions (``use_sim_time:=true`` adds a ``/clock`` subscription) is handed to a
``SingleThreadedExecutor`` instead, with a log line saying so; the nodes' QoS event handlers
(which only log QoS incompatibilities) are not waited on.  Services created after ``spin``
started are not served.  ``spin`` and ``shutdown`` follow rclpy's executor contract, so
``run_node(..., executor_factory=ServiceLoop)`` works unchanged.
"""
from __future__ import annotations

import threading
from contextlib import ExitStack

WAKE_PERIOD_NS = 200_000_000  # re-check shutdown at least this often (a signal also wakes it)


class ServiceLoop:
    """Serve every service of the added nodes from the calling thread (see the module)."""

    def __init__(self, *, context=None) -> None:  # noqa: ANN001
        from rclpy.guard_condition import GuardCondition
        from rclpy.utilities import get_default_context

        self._context = context or get_default_context()
        self._nodes: list = []
        self._wake = GuardCondition(None, None, context=self._context)
        self._stopped = threading.Event()
        self._done = threading.Event()
        self._done.set()

    def add_node(self, node) -> bool:  # noqa: ANN001
        if node in self._nodes:
            return False
        self._nodes.append(node)
        return True

    def get_nodes(self) -> list:
        return list(self._nodes)

    def shutdown(self, timeout_sec: float | None = None) -> bool:
        """Stop ``spin`` (from any thread); True once it returned within ``timeout_sec``."""
        self._stopped.set()
        self._wake.trigger()
        return self._done.wait(timeout_sec)

    def _unsupported(self) -> list[str]:
        out = []
        for node in self._nodes:
            for kind in ("subscriptions", "timers", "clients", "guards"):
                entities = list(getattr(node, kind))
                if entities:
                    out.append(f"{node.get_name()}: {len(entities)} {kind}")
        return out

    def spin(self) -> None:
        """Serve until ``shutdown``; raises ``ExternalShutdownException`` when the context is
        shut down (Ctrl-C, ``rclpy.shutdown``), as rclpy's executors do."""
        from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        from rclpy.signals import SignalHandlerGuardCondition

        unsupported = self._unsupported()
        if unsupported:
            self._nodes[0].get_logger().info(
                "ServiceLoop serves services only; spinning a SingleThreadedExecutor instead ("
                + "; ".join(unsupported) + ")")
            executor = SingleThreadedExecutor(context=self._context)
            for node in self._nodes:
                executor.add_node(node)
            threading.Thread(target=lambda: (self._stopped.wait(), executor.shutdown()),
                             daemon=True).start()
            executor.spin()
            return
        self._done.clear()
        sigint = SignalHandlerGuardCondition(self._context)
        try:
            services = [srv for node in self._nodes for srv in node.services]
            by_pointer = {srv.handle.pointer: srv for srv in services}
            with ExitStack() as stack:
                handles = [srv.handle for srv in services]
                for handle in handles:  # held: not destroyed while in the wait set
                    stack.enter_context(handle)
                guards = [self._wake.handle, sigint.handle]
                for gc in guards:
                    stack.enter_context(gc)
                stack.enter_context(self._context.handle)
                wait_set = _rclpy.WaitSet(0, len(guards), 0, 0, len(handles), 0,
                                          self._context.handle)
                while not self._stopped.is_set():
                    wait_set.clear_entities()
                    for handle in handles:
                        wait_set.add_service(handle)
                    for gc in guards:
                        wait_set.add_guard_condition(gc)
                    wait_set.wait(WAKE_PERIOD_NS)
                    if not self._context.ok():
                        raise ExternalShutdownException()
                    for pointer in wait_set.get_ready_entities("service"):
                        srv = by_pointer[pointer]
                        request, header = srv.handle.service_take_request(srv.srv_type.Request)
                        if header is None:  # ready, yet rmw had nothing to take
                            continue
                        srv.send_response(srv.callback(request, srv.srv_type.Response()), header)
        finally:
            sigint.destroy()
            self._done.set()
