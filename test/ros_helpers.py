"""Helpers for tests that run ROS 2 nodes as real processes and talk to them."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


class NodeProcess:
    """``rbd-ros ARGS`` in its own process group; output collected for ``wait_for``."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        cmd = [sys.executable, "-m", "rbd_ros.cli", *args]
        self.args = args
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, **(env or {})}, start_new_session=True,
        )
        self.lines: list[str] = []
        self._cv = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cv:
                self.lines.append(line.rstrip("\n"))
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    @property
    def output(self) -> str:
        with self._cv:
            return "\n".join(self.lines)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """Block until a line containing ``text`` is printed; fail if the process exits."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for line in self.lines:
                    if text in line:
                        return line
                if self.proc.poll() is not None and not self._reader.is_alive():
                    raise RuntimeError(
                        f"rbd-ros {' '.join(self.args)} exited ({self.proc.returncode}) before "
                        f"printing {text!r}:\n{self.output}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {text!r} from rbd-ros {' '.join(self.args)} in "
                                       f"{timeout} s:\n{self.output}")
                self._cv.wait(min(left, 0.2))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> int:
        """SIGINT the group, then SIGKILL; returns the exit code."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._reader.join(2)
        return self.proc.returncode


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
