"""Nodes as child processes: ``rbd-ros SUBCOMMAND ...`` with their output collected.

Used by ``rbd-ros bringup`` and by the tests (which start every node as a real process).
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

from rbd_ros.ros.bringup import fork_server

REPO = fork_server.REPO


STOP_WITH_PARENT = fork_server.STOP_WITH_PARENT  # its home: the fork server points it at itself
# s: a simulated time the bridge paused at (its pause_at: summed timesteps, ns stamps) counts as reached
REACHED = 1e-6
STALL_SECONDS = 60.0  # s of wall time without simulated progress: a run has stalled (a loaded
# machine slows the simulation down, it does not stop it)


def within(t: float, t0: float, t1: float) -> bool:
    """A stamp ``t`` (s) in the window ``[t0, t1]``, each end counted as reached ``REACHED``
    short of it: stamps are whole nanoseconds of the bridge's summed timesteps, the ends sums
    of floats (a tour from 0.198...06 s paused at its horizon 1.698 s, stamped
    1.6980000000000002 s: a plain ``t <= t1`` left that last state out of the report)."""
    return t0 - REACHED <= t <= t1 + REACHED


class StallWatch:
    """``stalled(t_now, now)``: no simulated progress (``t_now``, s) for ``STALL_SECONDS`` of
    wall time (``now``, ``time.monotonic()``) since the last progress or the watch's start."""

    def __init__(self) -> None:
        self.t_seen, self.wall = -float("inf"), time.monotonic()

    def stalled(self, t_now: float, now: float) -> bool:
        if t_now > self.t_seen:
            self.t_seen, self.wall = t_now, now
            return False
        return now - self.wall > STALL_SECONDS


def stop_with_parent() -> None:
    """In a node started with ``STOP_WITH_PARENT`` set: get SIGINT when the parent dies, even
    by SIGKILL (Linux ``prctl(PR_SET_PDEATHSIG)``), so no node outlives ``rbd-ros bringup``.
    Called first thing by ``rbd_ros.cli``; a no-op elsewhere."""
    parent = os.environ.pop(STOP_WITH_PARENT, "")
    if not parent or not sys.platform.startswith("linux"):
        return

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGINT))  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != int(parent):  # the parent died before prctl
        os.kill(os.getpid(), signal.SIGINT)


class NodeProcess:
    """``rbd-ros ARGS`` (``python -m MODULE ARGS``) in its own process group; output lines kept
    for ``wait_for``.

    ``echo`` (a callable) also receives every output line as it arrives."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None,
                 echo: Callable[[str], None] | None = None, module: str = "rbd_ros.cli") -> None:
        cmd = [sys.executable, "-m", module, *args]
        self.args = args
        self.echo = echo
        full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.proc: subprocess.Popen[str] | fork_server.ForkedChild = (
            fork_server.start(module, args, full_env, REPO)  # the imports done once (issue 39)
            or subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=full_env, start_new_session=True))
        self.lines: list[str] = []
        self._cv = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            with self._cv:
                self.lines.append(line)
                self._cv.notify_all()
            if self.echo is not None:
                self.echo(line)
        with self._cv:
            self._cv.notify_all()

    @property
    def output(self) -> str:
        with self._cv:
            return "\n".join(self.lines)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """Block until a line containing ``text`` is printed; raise if the process exits."""
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

    def wait(self, timeout: float | None = None, drain: float = 5.0) -> int:
        """The exit code once the process ended (``subprocess.TimeoutExpired`` after
        ``timeout``) and its output read to the end (up to ``drain`` s more: a child that
        inherited the pipe may keep it open).  ``proc.wait`` alone returns on the exit, before
        this reader has the last lines: a CI run read an exit status 2 with its error line not
        yet in ``output``."""
        code = self.proc.wait(timeout)
        self._reader.join(drain)
        return code

    def stop(self, timeout: float = 10.0) -> int:
        """SIGINT the group, then SIGKILL after ``timeout``; returns the exit code."""
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
        code = self.proc.returncode
        assert code is not None  # waited for above
        return code
