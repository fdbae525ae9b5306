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


@contextlib.contextmanager
def served_client(namespace: str, *params: str, ready_timeout: float = 120) -> Iterator[object]:
    """A ``dynamics-server`` process serving under ``namespace`` with the node parameters
    ``params`` (``"urdf_path:=..."``, ``"tip_link:=..."``), and a ``DynamicsClient`` on it;
    the process is stopped afterwards however the block ends."""
    from rbd_ros.ros.client import DynamicsClient

    args = ["dynamics-server", "--ros-args"]
    for p in (*params, f"service_namespace:={namespace}"):
        args += ["-p", p]
    proc = NodeProcess(args)
    try:
        proc.wait_for("dynamics_server: ready", ready_timeout)
        with DynamicsClient(namespace=namespace, timeout=60) as c:
            yield c
    finally:
        proc.stop()


class _BackgroundSpinner:
    """A single-threaded executor spinning a node in a daemon thread.

    ``shutdown()`` stops the loop and joins the thread *before* it shuts the executor down:
    rclpy's ``Executor.shutdown`` called while another thread is inside ``spin()`` can leave
    that thread looping hot in ``_wait_for_ready_callbacks`` (no nodes, no guard left), holding
    the GIL so the test's main thread starves (seen here: a teardown stuck for 10 min on a loaded
    machine, out of reach of pytest-timeout, whose handler needs the GIL too).

    An exception in one of the node's callbacks (a test peer's bug) is not swallowed: it is
    kept in ``errors`` and re-raised by ``raise_callback_errors(spinner)`` (which the peers'
    wait loops call) and by ``shutdown()``, so the test fails with it instead of timing out."""

    def __init__(self, node) -> None:
        import threading

        from rclpy.executors import SingleThreadedExecutor

        self._context = node.context
        self._executor = SingleThreadedExecutor(context=node.context)
        self._executor.add_node(node)
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            while not self._stop.is_set() and self._context.ok():
                self._executor.spin_once(timeout_sec=0.05)
        except Exception as exc:  # noqa: BLE001 - handed to the test thread
            if self._context.ok() and not self._stop.is_set():  # not the test's shutdown
                self.errors.append(exc)

    def shutdown(self, timeout_sec: float = 5.0) -> bool:
        self._stop.set()
        self._thread.join(timeout_sec)
        done = self._executor.shutdown(timeout_sec=timeout_sec)
        raise_callback_errors(self)
        return done


def spin_in_background(node) -> _BackgroundSpinner:
    """Spin ``node`` in a daemon thread; stop it with ``.shutdown()`` (the end of the test's
    context also ends it)."""
    return _BackgroundSpinner(node)


@contextlib.contextmanager
def probe_node(name: str, setup=None) -> Iterator[object]:  # noqa: ANN001
    """An in-process test node in a context of its own, spun in the background for the block:
    ``setup(node)`` creates its subscriptions and publishers before the spinning starts and
    its return value is what the block gets (the node itself without ``setup``)."""
    import rclpy

    with ros_context() as ctx:
        node = rclpy.create_node(name, context=ctx)
        made = setup(node) if setup is not None else node
        spinner = spin_in_background(node)
        try:
            yield made
        finally:
            spinner.shutdown()
            node.destroy_node()


def publish_until(pub, msg, heard, timeout: float = 30.0, period: float = 0.2) -> bool:  # noqa: ANN001
    """Publish ``msg`` every ``period`` s until ``heard()`` (discovery may still be under way
    when the first one goes out); whether it was heard within ``timeout`` s."""
    import time

    deadline = time.monotonic() + timeout
    while not heard() and time.monotonic() < deadline:
        pub.publish(msg)
        time.sleep(period)
    return bool(heard())


def raise_callback_errors(spinner) -> None:
    """Re-raise the first exception a callback spun by ``spin_in_background`` raised."""
    errors = getattr(spinner, "errors", None)
    if errors:
        raise RuntimeError("a test peer's ROS callback raised") from errors[0]


def wait_on(cv, predicate, spinner, timeout: float = 30.0, what: str = "condition") -> None:
    """Wait under the condition variable ``cv`` (which the peer's callbacks notify) until
    ``predicate()``; a callback's exception in ``spinner`` is raised, a timeout names ``what``."""
    import time

    deadline = time.monotonic() + timeout
    with cv:
        while not predicate():
            raise_callback_errors(spinner)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"timed out waiting for {what}")
            cv.wait(min(left, 0.1))


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
