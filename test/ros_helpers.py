"""Helpers for tests that run ROS 2 nodes as real processes and talk to them."""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rbd_ros.ros.bringup.processes import REPO, NodeProcess  # noqa: F401  (re-exported for tests)


@contextlib.contextmanager
def ros_context() -> Iterator[object]:
    """An rclpy context of the test's own (init + shutdown), for in-process clients."""
    import rclpy
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(context=ctx)
    try:
        yield ctx
    finally:
        with contextlib.suppress(Exception):
            rclpy.shutdown(context=ctx)


def spin_in_background(node):
    """A single-threaded executor spinning ``node`` in a daemon thread (stop it with
    ``executor.shutdown()``; the end of the test's context also ends it).

    An exception in one of the node's callbacks (a test peer's bug) is not swallowed: it is
    kept in ``executor.errors`` and re-raised by ``raise_callback_errors(executor)`` (which
    the peers' wait loops call) and by ``executor.shutdown()``, so the test fails with it
    instead of timing out."""
    import threading

    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    executor.errors = []

    def spin() -> None:
        try:
            executor.spin()
        except Exception as exc:  # noqa: BLE001 - handed to the test thread
            if node.context.ok() and not getattr(executor, "_is_shutdown", False):
                executor.errors.append(exc)

    shutdown = executor.shutdown

    def shutdown_and_report(timeout_sec=None):  # noqa: ANN001, ANN202
        done = shutdown(timeout_sec=timeout_sec)
        raise_callback_errors(executor)
        return done

    executor.shutdown = shutdown_and_report
    threading.Thread(target=spin, daemon=True).start()
    return executor


def raise_callback_errors(executor) -> None:
    """Re-raise the first exception a callback of ``spin_in_background``'s executor raised."""
    errors = getattr(executor, "errors", None)
    if errors:
        raise RuntimeError("a test peer's ROS callback raised") from errors[0]


def wait_for_service(client, timeout: float = 30.0) -> None:
    if not client.wait_for_service(timeout_sec=timeout):
        raise TimeoutError(f"service {client.srv_name} not available within {timeout} s")


def call(node, client, request, timeout: float = 30.0):
    """Synchronous service call from a test, spinning ``node`` until the answer arrives."""
    from rclpy.executors import SingleThreadedExecutor

    future = client.call_async(request)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    try:
        executor.spin_until_future_complete(future, timeout_sec=timeout)
    finally:
        executor.remove_node(node)
        executor.shutdown()
    if not future.done():
        raise TimeoutError(f"no answer from {client.srv_name} within {timeout} s")
    return future.result()
