"""A lean single-threaded executor for rbd_ros's nodes (dynamics server, controller, bringup).

Why it exists: rclpy's ``SingleThreadedExecutor`` rebuilds its wait set in Python on every
wake-up: it walks every entity of every node, enters each handle, allocates an ``rcl`` wait
set, then wraps the ready callback in a ``Task`` coroutine and schedules it.  For a service
answered in a few microseconds, or a control law computed in tens, that bookkeeping is most of
the node's share of a round trip (measured: 0.1-0.15 ms per call or cycle; a
``MultiThreadedExecutor`` adds another 0.2-0.3 ms).  On two cores shared by the bridge, the
controller and the bringup's recorder in a lockstep loop, that CPU is what the loop lacks
(CHANGELOG.rst, "Benchmark history", "Services").

Why not rclpy's ``EventsExecutor``: it lives in ``rclpy.experimental`` (no stable API, only
in recent distributions), and in the rclpy 9.1 wheels this project uses it never answered a
service call (CHANGELOG.rst, "Benchmark history"; rechecked: the process hung and took SIGKILL to end), so it
could not serve the dynamics server; a loop of our own over rclpy's wait set is small,
measured, and falls back to rclpy's executor (below).

``LeanExecutor`` keeps one wait set for its lifetime, with the nodes' timers, subscriptions
and services, a wake-up guard condition and rclpy's SIGINT guard condition, and calls each
ready callback directly, in rclpy's order (timers, subscriptions, services): a timer is
called (``call_timer_with_info``) then its callback; a subscription's message is taken then
passed (``msg`` or ``(msg, info)``, as rclpy decides); a service's request is taken,
``callback(request, Response())`` is sent back.  The same rcl calls as rclpy's executor, with
no coroutine, task or per-wake allocation.

Contract: these are rclpy internals (``RCLPY_INTERNALS``), not its public API.  When ``spin``
starts it checks them; on an rclpy where one is missing it logs one line naming it and spins
rclpy's ``SingleThreadedExecutor`` instead (slower, same behaviour).  ``wait_for_response``
users check ``missing_internals()`` and take rclpy's ``call_async`` path likewise.

Scope, checked when ``spin`` starts: synchronous callbacks of timers, subscriptions and
services, the node's built-in parameter services and the ``/clock`` subscription of
``use_sim_time:=true`` included.  A node that also has clients, guard conditions or waitables
other than its QoS event handlers (which only log QoS incompatibilities and are not waited on)
is handed to a ``SingleThreadedExecutor`` instead, with a log line saying so; so is every
node when the environment has ``RBD_ROS_EXECUTOR=rclpy`` (for comparison, or if in doubt).
Entities created after ``spin`` started are not served, and a timer callback's signature is
read once.

SIGINT: rclpy's signal thread (its ``signal_handler.cpp``) triggers every registered SIGINT guard
condition, walking a lock-free list, and shuts the contexts down after that walk; unregistering
and destroying a guard condition frees that list at once.  The walk wakes this loop and
``KeyboardInterrupt`` is raised here at once, so ``spin`` waits for the context's end (the
walk's end, at most ``SIGNAL_WALK_LIMIT`` s) before it destroys its own guard condition: done
sooner, the signal thread read the freed list and the process died of SIGSEGV (issue 37: 1 in
~185 SIGINTs in the suite, 2 in 18 SIGINTs at "ready" with the planner warming up).

``wait_for_response`` is the matching client side: a service call waited for on the client's
handle, without an executor.
``spin`` and ``shutdown`` follow rclpy's executor contract, so
``run_node(..., executor_factory=LeanExecutor)`` works unchanged.
"""
from __future__ import annotations

import importlib
import inspect
import os
import threading
import time
from contextlib import ExitStack
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # rclpy is imported where it is used (module docstring)
    from rclpy.context import Context

WAKE_PERIOD_NS = 200_000_000  # re-check shutdown at least this often (a signal also wakes it)
SHUTDOWN_GRACE = 0.5  # s: a failure this soon before the context's end is the shutdown's
SIGNAL_WALK_LIMIT = 2.0  # s: at most this long for rclpy's signal thread to end its walk (below)
SWITCH_ENV = "RBD_ROS_EXECUTOR"  # "rclpy": every node on rclpy's SingleThreadedExecutor
_C = "rclpy.impl.implementation_singleton"  # its rclpy_implementation: the C extension
#: the rclpy internals used here, as (module, attribute path)
RCLPY_INTERNALS = (
    (_C, "rclpy_implementation.WaitSet.clear_entities"),
    (_C, "rclpy_implementation.WaitSet.add_timer"),
    (_C, "rclpy_implementation.WaitSet.add_subscription"),
    (_C, "rclpy_implementation.WaitSet.add_service"),
    (_C, "rclpy_implementation.WaitSet.add_client"),
    (_C, "rclpy_implementation.WaitSet.add_guard_condition"),
    (_C, "rclpy_implementation.WaitSet.wait"),
    (_C, "rclpy_implementation.WaitSet.get_ready_entities"),
    (_C, "rclpy_implementation.Timer.call_timer_with_info"),
    (_C, "rclpy_implementation.Timer.is_timer_ready"),
    (_C, "rclpy_implementation.Subscription.take_message"),
    (_C, "rclpy_implementation.Service.service_take_request"),
    (_C, "rclpy_implementation.Client.send_request"),
    (_C, "rclpy_implementation.Client.take_response"),
    ("rclpy.signals", "SignalHandlerGuardCondition"),
    ("rclpy.subscription", "Subscription.CallbackType.MessageOnly"),
    ("rclpy.timer", "TimerInfo"),
    ("rclpy.event_handler", "EventHandler"),
)


def missing_internals() -> list[str]:
    """The entries of ``RCLPY_INTERNALS`` this rclpy lacks (empty: the lean paths work)."""
    out = []
    for module, path in RCLPY_INTERNALS:
        try:
            obj = importlib.import_module(module)
            for part in path.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError):
            out.append(f"{module}.{path}")
    return out


class LeanExecutor:
    """Run the callbacks of the added nodes from the calling thread (see the module)."""

    def __init__(self, *, context: Context | None = None) -> None:
        from rclpy.guard_condition import GuardCondition
        from rclpy.utilities import get_default_context

        self._context = context or get_default_context()
        self._nodes: list = []
        self._wake = GuardCondition(None, None, context=self._context)
        self._stopped = threading.Event()
        self._done = threading.Event()
        self._done.set()

    def add_node(self, node) -> bool:
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

    def unsupported(self) -> list[str]:
        """What makes ``spin`` hand the nodes to rclpy's executor (empty: served here): the
        environment switch, a missing rclpy internal, entities this loop does not serve."""
        out = []
        if os.environ.get(SWITCH_ENV, "").strip().lower() == "rclpy":
            out.append(f"{SWITCH_ENV}=rclpy")
        missing = missing_internals()
        if missing:
            return [*out, "rclpy lacks " + ", ".join(missing)]
        from rclpy.event_handler import EventHandler

        for node in self._nodes:
            if not all(hasattr(sub, "_callback_type") for sub in node.subscriptions):
                out.append("rclpy lacks rclpy.subscription.Subscription._callback_type")
            for kind in ("clients", "guards"):
                entities = list(getattr(node, kind))
                if entities:
                    out.append(f"{node.get_name()}: {len(entities)} {kind}")
            others = [w for w in node.waitables if not isinstance(w, EventHandler)]
            if others:
                out.append(f"{node.get_name()}: {len(others)} waitables")
        return out

    def spin(self) -> None:
        """Serve until ``shutdown``; raises ``ExternalShutdownException`` when the context is
        shut down (Ctrl-C, ``rclpy.shutdown``), as rclpy's executors do."""
        from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

        unsupported = self.unsupported()
        if unsupported:
            message = ("LeanExecutor serves timers, subscriptions and services with rclpy "
                       "internals it checks; spinning rclpy's SingleThreadedExecutor instead ("
                       + "; ".join(unsupported) + ")")
            logger = self._nodes[0].get_logger()
            if any(reason.startswith("rclpy lacks") for reason in unsupported):
                logger.warning(message)
            else:
                logger.info(message)
            executor = SingleThreadedExecutor(context=self._context)
            for node in self._nodes:
                executor.add_node(node)
            threading.Thread(target=lambda: (self._stopped.wait(), executor.shutdown()),
                             daemon=True).start()
            executor.spin()
            return
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        from rclpy.signals import SignalHandlerGuardCondition
        from rclpy.subscription import Subscription
        from rclpy.timer import TimerInfo

        self._done.clear()
        sigint = SignalHandlerGuardCondition(self._context)
        try:
            timers = [tmr for node in self._nodes for tmr in node.timers]
            services = [srv for node in self._nodes for srv in node.services]
            subscriptions = [sub for node in self._nodes for sub in node.subscriptions]
            by_pointer = {e.handle.pointer: e for e in [*timers, *services, *subscriptions]}
            # rclpy's executor reads the same attribute to pass (msg) or (msg, info)
            message_only = {sub.handle.pointer: sub._callback_type is
                            Subscription.CallbackType.MessageOnly for sub in subscriptions}
            info_arg = {tmr.handle.pointer: _timer_info_parameter(tmr.callback, TimerInfo)
                        for tmr in timers}
            with ExitStack() as stack:
                tmr_handles = [tmr.handle for tmr in timers]
                srv_handles = [srv.handle for srv in services]
                sub_handles = [sub.handle for sub in subscriptions]
                guards = [self._wake.handle, sigint.handle]
                for handle in (*tmr_handles, *srv_handles, *sub_handles, *guards):
                    stack.enter_context(handle)  # held: not destroyed while in the wait set
                # rclpy types the handle Optional (None once the context is destroyed); the
                # context is not destroyed before its executor's loop ends
                ctx_handle = cast("_rclpy.Context", self._context.handle)
                stack.enter_context(ctx_handle)
                wait_set = _rclpy.WaitSet(len(sub_handles), len(guards), len(tmr_handles), 0,
                                          len(srv_handles), 0, ctx_handle)
                try:  # (one wait set for the lifetime: see the module)
                    while not self._stopped.is_set():
                        wait_set.clear_entities()
                        for handle in tmr_handles:
                            wait_set.add_timer(handle)
                        for handle in sub_handles:
                            wait_set.add_subscription(handle)
                        for handle in srv_handles:
                            wait_set.add_service(handle)
                        for gc in guards:
                            wait_set.add_guard_condition(gc)
                        wait_set.wait(WAKE_PERIOD_NS)
                        if not self._context.ok():
                            raise ExternalShutdownException()
                        for pointer in wait_set.get_ready_entities("timer"):
                            tmr = by_pointer[pointer]
                            if not tmr.handle.is_timer_ready():  # cancelled (rclpy checks it too)
                                continue
                            info = tmr.handle.call_timer_with_info()
                            name = info_arg[pointer]
                            if name is None:
                                tmr.callback()
                            else:
                                tmr.callback(**{name: TimerInfo(
                                    expected_call_time=info["expected_call_time"],
                                    actual_call_time=info["actual_call_time"],
                                    clock_type=tmr.clock.clock_type)})
                        for pointer in wait_set.get_ready_entities("subscription"):
                            sub = by_pointer[pointer]
                            taken = sub.handle.take_message(sub.msg_type, sub.raw)
                            if taken is None:
                                continue
                            if message_only[pointer]:
                                sub.callback(taken[0])
                            else:
                                sub.callback(*taken)
                        for pointer in wait_set.get_ready_entities("service"):
                            srv = by_pointer[pointer]
                            request, header = srv.handle.service_take_request(srv.srv_type.Request)
                            if header is None:  # ready, yet rmw had nothing to take
                                continue
                            srv.send_response(srv.callback(request, srv.srv_type.Response()), header)
                except ExternalShutdownException:
                    raise
                except Exception as exc:  # a signal's KeyboardInterrupt turned into another error
                    if shutting_down(self._context):
                        raise ExternalShutdownException() from exc
                    raise
        except KeyboardInterrupt:  # SIGINT: not before rclpy's signal thread is done (below)
            shutting_down(self._context, SIGNAL_WALK_LIMIT)
            raise
        finally:
            sigint.destroy()
            self._done.set()


def shutting_down(context, grace: float = SHUTDOWN_GRACE) -> bool:
    """Whether ``context`` ends within ``grace`` s (polled): an exception out of the loop then
    belongs to the shutdown.  SIGINT's Python handler raises ``KeyboardInterrupt`` at the main
    thread's next bytecode, which may be inside an rclpy call converting a message
    (``take_message``): pybind11 turns it into ``RuntimeError: Unable to convert call argument
    '0' to Python object`` and the interrupt is lost, while rclpy's signal thread shuts the
    context down a moment later (seen: a controller's SIGINT ending it with status 1, issue 37)."""

    deadline = time.monotonic() + grace
    while context.ok():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def release_sigint_guard(executor) -> None:
    """Destroy the SIGINT guard condition an rclpy executor registers (``_sigint_gc``) now, at
    start, not in its ``shutdown``: rclpy's signal thread walks the registered ones without a
    lock (module docstring), and one unregistered during that walk (a shutdown right after
    Ctrl-C, as a managed controller's cleanup does) frees the list under it: SIGSEGV.  For an
    executor whose loop needs no wake-up on SIGINT (it polls the context: follow_action's
    helper executor).  rclpy's executor accepts None there (it checks)."""
    gc = getattr(executor, "_sigint_gc", None)
    if gc is not None:
        gc.destroy()
        executor._sigint_gc = None


def take_waiting(sub) -> list:  # an rclpy Subscription
    """Every message waiting in subscription ``sub``, oldest first (never blocks), through its
    handle (``RCLPY_INTERNALS``): what an executor would deliver to its callback next."""
    out = []
    with sub.handle:
        while (taken := sub.handle.take_message(sub.msg_type, False)) is not None:
            out.append(taken[0])
    return out


def spin_in_thread(executor, name: str) -> threading.Thread:
    """Start ``executor.spin()`` in a daemon thread that ends quietly when the context shuts
    down (Ctrl-C: the main thread reports and cleans up); stop it with
    ``executor.shutdown()``."""
    def run() -> None:
        from rclpy.executors import ExternalShutdownException

        try:
            executor.spin()
        except (ExternalShutdownException, KeyboardInterrupt):
            pass

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def _timer_info_parameter(callback, timer_info_type) -> str | None:
    """The name of the callback's parameter annotated ``TimerInfo`` (rclpy passes it the
    timer's call times), or None."""

    if callback is None:
        return None
    for param in inspect.signature(callback).parameters.values():
        if param.annotation is timer_info_type or param.annotation == "TimerInfo":
            return param.name
    return None


def wait_for_response(client, sent: set[int], until: float, context):
    """The response to one of the requests ``sent`` (sequence numbers returned by
    ``client.handle.send_request``), waited for on the client's handle itself until
    ``time.monotonic()`` reaches ``until`` (then None); answers to other requests are dropped.
    Only for clients that no executor spins, which could take the response first.  ~0.1-0.2
    ms less per call than ``call_async`` with an executor.  Raises
    ``ExternalShutdownException`` if ``context`` shuts down meanwhile."""

    from rclpy.executors import ExternalShutdownException
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

    handle, response_type = client.handle, client.srv_type.Response
    with handle, context.handle:
        wait_set = _rclpy.WaitSet(0, 0, 0, 1, 0, 0, context.handle)
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return None
            wait_set.clear_entities()
            wait_set.add_client(handle)
            wait_set.wait(int(1e9 * min(0.05, left)))
            if not context.ok():
                raise ExternalShutdownException()
            header, response = handle.take_response(response_type)
            # with Fast DDS every response of the service wakes all its clients: not ours
            if header is not None and header.request_id.sequence_number in sent:
                return response



def call_once(node, client, request, timeout: float):
    """Send ``request`` on ``client`` of ``node`` (a helper node that no executor spins) and
    return the response, or None after ``timeout`` s: waited for on the client's handle
    (``wait_for_response``), or through ``call_async`` and a ``SingleThreadedExecutor`` on an
    rclpy that lacks an internal of ``RCLPY_INTERNALS``."""

    if missing_internals():
        from rclpy.executors import SingleThreadedExecutor

        executor = SingleThreadedExecutor(context=node.context)
        executor.add_node(node)
        try:
            future = client.call_async(request)
            executor.spin_until_future_complete(future, timeout_sec=timeout)
            return future.result() if future.done() else None
        finally:
            executor.shutdown()
    until = time.monotonic() + timeout
    with client.handle:
        sent = {client.handle.send_request(request)}
    return wait_for_response(client, sent, until, node.context)
