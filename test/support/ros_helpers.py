"""Helpers for tests that run ROS 2 nodes as real processes and talk to them."""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from rbd_ros.ros.bringup import processes
from rbd_ros.ros.bringup.processes import REPO  # noqa: F401  (re-exported for tests)

#: what a start-up line says (``dynamics_server: ready (...)``, ``mujoco_bridge: ready``, ...)
STARTUP_LINE = "ready"


class StartupTimeout(TimeoutError):
    """A node that printed no start-up line in time: not a failure of the behaviour under test
    (on a cold numba cache the first process compiles the kernels it calls: minutes on a busy
    machine, issue 45)."""


class NodeProcess(processes.NodeProcess):
    """``rbd_ros.ros.bringup.processes.NodeProcess`` whose time-out while waiting for a start-up
    line (the text contains ``STARTUP_LINE``) is a ``StartupTimeout`` saying how long the
    start-up took, ``"start-up took N s: kernels compiling?"``; every other wait as before."""

    def __init__(self, *args, **kwargs) -> None:
        self.started = time.monotonic()
        super().__init__(*args, **kwargs)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        try:
            return super().wait_for(text, timeout)
        except TimeoutError as exc:
            if STARTUP_LINE not in text:
                raise
            took = time.monotonic() - self.started
            tail = "\n".join(self.output.splitlines()[-15:])
            raise StartupTimeout(
                f"start-up took {took:.0f} s: kernels compiling? rbd-ros {' '.join(self.args[:1])} printed "
                f"no {text!r} within the test's {timeout:g} s start-up time-out: a start-up time-out, "
                f"not a failure of the behaviour under test (a cold or stale numba cache compiles "
                f"first: `rbd-ros warm`). Its last lines:\n{tail}") from exc


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
        self._chores: list = []  # (callable, done event): run by the spinning thread (``destroy``)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        try:
            while not self._stop.is_set() and self._context.ok():
                self._executor.spin_once(timeout_sec=0.05)
                self._run_chores()
        except Exception as exc:  # noqa: BLE001 - handed to the test thread
            if self._context.ok() and not self._stop.is_set():  # not the test's shutdown
                self.errors.append(exc)

    def _run_chores(self) -> None:
        with self._lock:
            chores, self._chores = self._chores, []
        for chore, out, done in chores:
            try:
                out.append(chore())
            except Exception as exc:  # noqa: BLE001 - handed to the caller of ``call``
                out.append(exc)
            finally:
                done.set()

    def call(self, fn, timeout_sec: float = 10.0):
        """``fn()`` run by the spinning thread between two ``spin_once`` (directly once the
        spinner stopped), its value returned (its exception raised).  For creating and
        destroying an ``ActionClient`` of the spun node: rclpy's executor lists a node's
        waitables, then enters them, and a client made or destroyed by another thread meanwhile
        fails the spinner (``'ActionClient' object has no attribute '_lock'``, ``Failed to add
        'rcl_action_client_t' to wait set: action client pointer is invalid``)."""
        import threading

        out: list = []
        done = threading.Event()
        with self._lock:
            alive = self._thread.is_alive() and not self._stop.is_set()
            if alive:
                self._chores.append((fn, out, done))
        if not alive:
            return fn()
        if not done.wait(timeout_sec):
            raise TimeoutError(f"the spinner did not run {fn!r} within {timeout_sec} s")
        if isinstance(out[0], Exception):
            raise out[0]
        return out[0]

    def send_goal(self, client, goal, timeout_sec: float = 10.0, **kwargs):
        """``client.send_goal_async(goal, **kwargs)`` sent by the spinning thread (``call``), the
        future of the goal's response.  From any other thread rclpy 9.1.2's ``send_goal_async``
        can return a future that never completes: it registers the future under the request's
        sequence number inside its lock, then (a second copy of those lines, left by the backport
        of ros2/rclpy#1308) makes a new future and registers it again outside the lock; a goal
        response taken by the spinning thread in between completes the first future, and the one
        returned waits forever (a CI one-off: "no answer" in 60 s for a goal the server had).
        Sent by the spinning thread, no response is taken before the call returns."""
        return self.call(lambda: client.send_goal_async(goal, **kwargs), timeout_sec)

    def send_goal_answered(self, client, goal, response_timeout: float = 10.0, attempts: int = 3, **kwargs):
        """The goal handle of ``goal`` (``send_goal``), sent again when no response came within
        ``response_timeout`` s, ``attempts`` times in all (then ``TimeoutError``).
        ``wait_for_server`` sees the server's endpoints from this side only: on a loaded machine
        the server may not yet have matched this client's request writer, and a volatile reader
        never gets a request written before it matched (ROS 2's service discovery race; a CI
        run lost a first goal twice in a row, no response in 120 s).  A client that retries, as
        MoveIt's does, gets its answer; a goal whose response alone was lost is preempted by the
        next one."""
        import time

        for _ in range(attempts):
            future = self.send_goal(client, goal, **kwargs)
            deadline = time.monotonic() + response_timeout
            while not future.done() and time.monotonic() < deadline:
                raise_callback_errors(self)
                time.sleep(0.01)
            if future.done():
                return future.result()
        raise TimeoutError(f"no response to a goal sent {attempts} times, {response_timeout:g} s each")

    def destroy(self, entity, timeout_sec: float = 10.0) -> None:
        """``entity.destroy()`` by the spinning thread (``call``)."""
        self.call(entity.destroy, timeout_sec)

    def shutdown(self, timeout_sec: float = 5.0) -> bool:
        self._stop.set()
        self._thread.join(timeout_sec)
        self._run_chores()  # (any left: the thread has stopped)
        done = self._executor.shutdown(timeout_sec=timeout_sec)
        raise_callback_errors(self)
        return done


def spin_in_background(node) -> _BackgroundSpinner:
    """Spin ``node`` in a daemon thread; stop it with ``.shutdown()`` (the end of the test's
    context also ends it)."""
    return _BackgroundSpinner(node)


def published_type_hash(msg_type, name: str) -> str:
    """The type hash (RIHS01) a publisher of ``msg_type`` announces, read back from the graph
    by a node ``name`` publishing on ``/name``."""
    import rclpy

    with ros_context() as ctx:
        node = rclpy.create_node(name, context=ctx)
        try:
            node.create_publisher(msg_type, f"/{name}", 1)
            (info,) = node.get_publishers_info_by_topic(f"/{name}")
            return str(info.topic_type_hash)
        finally:
            node.destroy_node()


@contextlib.contextmanager
def probe_node(name: str, setup=None) -> Iterator[object]:
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


def publish_until(pub, msg, heard, timeout: float = 30.0, period: float = 0.2) -> bool:
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
