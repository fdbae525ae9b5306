"""``LeanExecutor`` on SIGINT (issue 37): SIGINT's Python handler raises ``KeyboardInterrupt``
at the main thread's next bytecode, which may be inside an rclpy call converting a message;
pybind11 then turns it into ``RuntimeError: Unable to convert call argument '0' to Python
object`` (the interrupt lost), while rclpy's signal thread shuts the context down a moment
later.  Seen: a controller ending with status 1 and that traceback out of ``take_message``.
So an exception out of ``spin`` just before the context ends is the shutdown
(``ExternalShutdownException``, the error its cause); one with the context going on is raised
as it is.  Simulated here by a timer callback that raises and has another thread shut the
context down 50 ms later (rclpy's signal thread), on a context of the test's own."""
from __future__ import annotations

import threading
import time

import pytest

from ros_helpers import ros_context

CONVERT = "Unable to convert call argument '0' to Python object"


def _spin_with_failing_timer(error: Exception, shut_down_after: float | None):
    """What ``spin`` raised (or "returned") with a timer whose first call raises ``error``,
    the context shut down ``shut_down_after`` s later from another thread (None: never);
    the seconds ``spin`` took after the failure."""
    import rclpy

    from rbd_ros.ros.lean_executor import LeanExecutor

    with ros_context() as ctx:
        node = rclpy.create_node("signal_loop", context=ctx)
        failed: list[float] = []

        def tick() -> None:
            failed.append(time.monotonic())
            if shut_down_after is not None:
                threading.Timer(shut_down_after, lambda: rclpy.shutdown(context=ctx)).start()
            raise error

        node.create_timer(0.01, tick)
        loop = LeanExecutor(context=ctx)
        loop.add_node(node)
        try:
            loop.spin()
            outcome: object = "returned"
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            outcome = exc
        took = time.monotonic() - failed[0]
        node.destroy_node()
    return outcome, took


def test_an_error_just_before_the_context_ends_is_the_shutdown() -> None:
    from rclpy.executors import ExternalShutdownException

    outcome, took = _spin_with_failing_timer(RuntimeError(CONVERT), 0.05)
    assert isinstance(outcome, ExternalShutdownException), outcome
    assert isinstance(outcome.__cause__, RuntimeError) and CONVERT in str(outcome.__cause__)
    assert took < 0.5, took  # ended by the shutdown, not by the grace time


def test_an_error_with_the_context_going_on_is_raised_as_it_is() -> None:
    from rbd_ros.ros.lean_executor import SHUTDOWN_GRACE

    error = ValueError("a callback's own bug")
    outcome, took = _spin_with_failing_timer(error, None)
    assert outcome is error
    assert took == pytest.approx(SHUTDOWN_GRACE, abs=0.3)


def test_sigint_destroys_the_guard_condition_only_after_the_context_ended(monkeypatch) -> None:
    """SIGINT (issue 37): rclpy's signal thread triggers the registered SIGINT guard conditions
    (a lock-free list it walks) and only then shuts the contexts down; ``KeyboardInterrupt``
    out of ``spin`` must not unregister and destroy its guard condition before that end (a
    SIGSEGV in 1 of ~185 SIGINTs).  Simulated: a timer raises ``KeyboardInterrupt``, another
    thread shuts the context down 0.2 s later; every SIGINT guard condition destroyed is
    destroyed with the context already ended (before the fix: at once, the context alive)."""
    import rclpy
    from rclpy.signals import SignalHandlerGuardCondition

    from rbd_ros.ros.lean_executor import SIGNAL_WALK_LIMIT, LeanExecutor

    alive_at_destroy: list[bool] = []
    original = SignalHandlerGuardCondition.destroy

    with ros_context() as ctx:
        def destroy(self) -> None:
            # this context's only: an earlier test's guard condition, already destroyed, that
            # the garbage collector finalizes meanwhile calls destroy too (``__del__``; a CI
            # run's rerun: [True, True, False, False], the two alive ones from elsewhere)
            if getattr(self, "_context", None) is ctx:
                alive_at_destroy.append(ctx.ok())
            original(self)

        monkeypatch.setattr(SignalHandlerGuardCondition, "destroy", destroy)
        node = rclpy.create_node("sigint_loop", context=ctx)
        raised: list[float] = []

        def tick() -> None:
            raised.append(time.monotonic())
            threading.Timer(0.2, lambda: rclpy.shutdown(context=ctx)).start()
            raise KeyboardInterrupt

        node.create_timer(0.01, tick)
        loop = LeanExecutor(context=ctx)
        loop.add_node(node)
        with pytest.raises(KeyboardInterrupt):
            loop.spin()
        took = time.monotonic() - raised[0]
        node.destroy_node()
    assert alive_at_destroy and not any(alive_at_destroy), alive_at_destroy
    assert 0.15 < took < SIGNAL_WALK_LIMIT, took  # waited for the end, not for the limit


def test_a_released_executor_unregisters_nothing_at_its_shutdown(monkeypatch) -> None:
    """``release_sigint_guard``: the SIGINT guard condition of an rclpy executor is destroyed
    at once, so its ``shutdown`` (a managed controller's cleanup right after Ctrl-C) unregisters
    none during rclpy's signal walk; the executor still spins (a timer's callbacks run) and
    shuts down.  Without the release, its shutdown destroys one (the count checks both)."""
    import rclpy
    from rclpy.executors import MultiThreadedExecutor
    from rclpy.signals import SignalHandlerGuardCondition

    from rbd_ros.ros.lean_executor import release_sigint_guard

    destroyed: list[int] = []
    original = SignalHandlerGuardCondition.destroy

    def destroy(self) -> None:
        destroyed.append(1)
        original(self)

    monkeypatch.setattr(SignalHandlerGuardCondition, "destroy", destroy)
    at_shutdown = {}
    with ros_context() as ctx:
        for release in (False, True):
            node = rclpy.create_node(f"released_loop_{int(release)}", context=ctx)
            ticks: list[float] = []
            node.create_timer(0.01, lambda ticks=ticks: ticks.append(time.monotonic()))
            executor = MultiThreadedExecutor(num_threads=2, context=ctx)
            if release:
                release_sigint_guard(executor)
            executor.add_node(node)
            before = len(ticks)
            for _ in range(20):
                executor.spin_once(timeout_sec=0.05)
            assert len(ticks) > before, "the executor ran no timer callback"
            executor.remove_node(node)
            count = len(destroyed)
            assert executor.shutdown(timeout_sec=2.0)
            at_shutdown[release] = len(destroyed) - count
            node.destroy_node()
    assert at_shutdown[False] >= 1 and at_shutdown[True] == 0, at_shutdown
