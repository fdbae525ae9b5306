"""A fork server for node processes: the imports paid once, each node a fork (issue 39).

A node started as ``python -m rbd_ros.cli SUBCOMMAND`` spends ~0.5 s of CPU importing rclpy,
numba, mujoco and rbd_ros before it does anything (measured on the 2-core machine; the bringup
starts five or six at once, the test suite several hundred).  The server is one such
interpreter, started once per requesting process, that imports them all and then forks a
child per request (its loop: :mod:`~rbd_ros.ros.bringup.fork_server_loop`).  The child sets
itself up as a fresh ``python -m MODULE ARGS`` would be (its own process group, the request's
environment, working directory, ``sys.argv`` and output pipe, default signal handlers,
``PYTHONFAULTHANDLER``, numpy's global random state reseeded) and runs the module as
``__main__``.

What the requester holds is a :class:`ForkedChild`, the subset of ``subprocess.Popen`` that
:class:`~rbd_ros.ros.bringup.processes.NodeProcess` uses (``pid``, ``stdout``, ``poll``,
``wait``, ``returncode``, ``send_signal``).  The server reaps its
children and sends their exit status back over the socket; were the server itself killed, a
child's status is lost and reads :data:`LOST_STATUS` once the child has gone.

When a request is served by a fresh interpreter instead (``start`` returns ``None``):

* ``RBD_ROS_FORK_SERVER=0`` in the environment, or a coverage measurement of subprocesses
  (``COVERAGE_PROCESS_START``: it starts in a new interpreter);
* the request's environment differs from the server's in a variable read at import time
  (anything but :data:`RUNTIME_ENV`: ``NUMBA_*``, ``PYTHON*``, ``MUJOCO_GL``, ... ; an
  empty ``NUMBA_CACHE_DIR`` must give a cold start, not the server's warm imports);
* another working directory, or the server is not ready in :data:`READY_TIMEOUT`, has exited,
  or has a second Python thread (a fork copies only the calling thread).

Stopping with the parent: a child whose request carries :data:`STOP_WITH_PARENT` is
pointed at the server, its real parent (``stop_with_parent``'s ``PR_SET_PDEATHSIG``), and the
server, when its requester goes away (the socket's end of file, on any death of the requester,
SIGKILL included), sends those children SIGINT, then waits for all its children before it
exits.  A child without it outlives the requester as a ``Popen`` child would.
"""
from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

SWITCH_ENV = "RBD_ROS_FORK_SERVER"
#: environment variable: the pid of a parent whose death must stop this node
#: (``processes.stop_with_parent``); the server points it at itself in each child
STOP_WITH_PARENT = "RBD_ROS_STOP_WITH_PARENT"
#: environment variables a child may have other than the server's: read after the imports (by
#: rcl at ``rclpy.init``, Fast DDS at the participant's creation, our nodes at start-up)
RUNTIME_ENV = frozenset({
    "ROS_DOMAIN_ID", "ROS_LOCALHOST_ONLY", "ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS",
    "ROS_LOG_DIR", "ROS_HOME", "ROS_PACKAGE_PATH", "AMENT_PREFIX_PATH",
    "PYTHONUNBUFFERED", "PYTHONFAULTHANDLER",  # the two start-up switches the child applies
    STOP_WITH_PARENT, "RBD_ROS_EXECUTOR", "RBD_ROS_FASTDDS_PROFILE", "RBD_ROS_TEST_IK_DELAY",
    "RBD_ROS_TEST_DOMAIN", "RBD_ROS_TEST_DOMAIN_WORKER", "PYTEST_CURRENT_TEST", "COLUMNS", "LINES",
})
RUNTIME_PREFIXES = ("RCUTILS_", "FASTDDS_", "FASTRTPS_")
#: ``ForkedChild.returncode`` of a child whose server died first: its real status is unknown
LOST_STATUS = 255
REPO = Path(__file__).resolve().parents[3]
READY_TIMEOUT = 60.0  # s: the server's imports (~0.7 s idle; a loaded machine, a cold disk)
MAX_MESSAGE = 1 << 20
LOOP_MODULE = "rbd_ros.ros.bringup.fork_server_loop"  # the server's own code
START_IMPORTS_FLAG = "--start-imports"  # the server's argument: prestart's start_imports
#: bytes of the server's command line kept for its children's (``set_command_line``)
CMDLINE_ROOM = 8192


def enabled(environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return (env.get(SWITCH_ENV, "1").strip() not in ("0", "false", "no")
            and not env.get("COVERAGE_PROCESS_START"))


def env_differences(server: dict[str, str], request: dict[str, str]) -> list[str]:
    """The variables in which ``request`` differs from ``server`` that are read at import
    time (not in :data:`RUNTIME_ENV` nor under :data:`RUNTIME_PREFIXES`), sorted."""
    keys = set(server) | set(request)
    return sorted(k for k in keys if server.get(k) != request.get(k)
                  and k not in RUNTIME_ENV and not k.startswith(RUNTIME_PREFIXES))


class ForkedChild:
    """A child of the fork server, as ``subprocess.Popen`` shows one (the calls NodeProcess
    uses).  ``returncode`` as ``Popen``'s: the exit code, or ``-N`` for signal ``N``."""

    def __init__(self, client: _Client, pid: int, stdout: io.TextIOWrapper, args: list[str]):
        self._client, self.pid, self.stdout, self.args = client, pid, stdout, args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self._client.dead and _gone(self.pid):
            self.returncode = LOST_STATUS
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._client.cv:
            while self.poll() is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
                # the server's exit message wakes this; a dead server's orphan is polled
                self._client.cv.wait(0.1 if self._client.dead else left)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)


def _gone(pid: int) -> bool:
    """No process ``pid``, or a zombie nobody reaps (``/proc``'s state ``Z``)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


class _Client:
    """This process's end of the server: one request at a time, a reader thread for replies
    and exit statuses."""

    def __init__(self, cwd: str, start_imports: bool = False) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.cwd = cwd
        deep = [START_IMPORTS_FLAG] if start_imports else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", LOOP_MODULE, str(theirs.fileno()), *deep, " " * CMDLINE_ROOM],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=self.env, cwd=cwd, start_new_session=True)  # a terminal's ^C is the requester's to pass on
        theirs.close()
        self.sock = ours
        self.cv = threading.Condition()
        self.ready = self.dead = False
        self.replies: dict[int, dict] = {}
        self.children: dict[int, ForkedChild] = {}
        self.exits: dict[int, int] = {}  # statuses that came before their pid's reply was read
        self.next_id = 0
        self.abandoned: set[int] = set()
        self.request_lock = threading.Lock()
        threading.Thread(target=self._read, name="fork_server_reader", daemon=True).start()
        atexit.register(self.close)

    def close(self, timeout: float = 5.0) -> None:
        """The requester's end closed (at exit): the server stops once its children have;
        waited for here when none is left running, so no server outlives its requester."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with self.cv:
            running = any(c.returncode is None for c in self.children.values())
        if not running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)

    def _read(self) -> None:
        while True:
            try:
                data = self.sock.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            with self.cv:
                if not data:
                    self.dead = True
                    self.cv.notify_all()  # a running child's status is lost (LOST_STATUS)
                    return
                msg = json.loads(data)
                if "ready" in msg:
                    self.ready = bool(msg["ready"])
                    self.dead = not self.ready
                elif "exit" in msg:
                    child = self.children.pop(int(msg["exit"]), None)
                    if child is None:
                        self.exits[int(msg["exit"])] = int(msg["code"])
                    else:
                        child.returncode = int(msg["code"])
                elif int(msg["id"]) in self.abandoned:  # forked after its requester gave up
                    if "pid" in msg:
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(int(msg["pid"]), signal.SIGKILL)
                else:
                    self.replies[int(msg["id"])] = msg
                self.cv.notify_all()

    def start(self, module: str, args: list[str], env: dict[str, str],
              cwd: str) -> ForkedChild | str:
        """The forked child, or why a fresh interpreter must run it."""
        with self.cv:
            self.cv.wait_for(lambda: self.ready or self.dead, READY_TIMEOUT)
            if not self.ready or self.dead:
                return "the fork server is not running"
        if cwd != self.cwd:
            return f"the working directory {cwd} is not the server's {self.cwd}"
        differ = env_differences(self.env, env)
        if differ:
            return f"the environment differs in {', '.join(differ)} (read at import time)"
        read_end, write_end = os.pipe()
        with self.request_lock:
            with self.cv:
                self.next_id += 1
                rid = self.next_id
            request = {"id": rid, "module": module, "args": args, "env": env, "cwd": cwd}
            try:
                socket.send_fds(self.sock, [json.dumps(request).encode()], [write_end])
            except OSError as exc:
                os.close(read_end)
                return f"the fork server's socket: {exc}"
            finally:
                os.close(write_end)
            with self.cv:
                self.cv.wait_for(lambda: rid in self.replies or self.dead, READY_TIMEOUT)
                reply = self.replies.pop(rid, None)
                if reply is None or "pid" not in reply:
                    os.close(read_end)
                    self.abandoned.add(rid)  # a fork that still comes is killed (_read)
                    return f"the fork server did not fork: {(reply or {}).get('error', 'no reply')}"
                pid = int(reply["pid"])
                stdout = io.TextIOWrapper(io.FileIO(read_end, "r"), encoding="utf-8",
                                          errors="replace")
                child = ForkedChild(self, pid, stdout, [sys.executable, "-m", module, *args])
                if pid in self.exits:
                    child.returncode = self.exits.pop(pid)
                else:
                    self.children[pid] = child
                return child


_client: _Client | None = None
_client_lock = threading.Lock()
#: why the last request that :func:`start` refused needs a fresh interpreter
last_refusal = ""


def prestart(cwd: str | Path = REPO, start_imports: bool = False) -> None:
    """Start this process's server now, so its imports run while the caller does other work
    (``rbd-ros bringup`` calls it first thing).  A no-op when it runs or is switched off.
    ``start_imports``: the server also imports what the nodes import at start and loads those
    modules' cached kernels (``fork_server_loop.START_IMPORTS``), ~1 s of CPU more once, ~0.1-0.4 s
    less in each node: for a requester that starts many nodes over its life (the test suite's
    workers), not for a bringup's few (a 1.2 s bringup's tree: 6.99 -> 8.54 s of CPU with it)."""
    global _client
    if not enabled() or not sys.platform.startswith("linux"):
        return
    with _client_lock:
        if _client is None or _client.dead:
            _client = _Client(str(cwd), start_imports)


def start(module: str, args: list[str], env: dict[str, str],
          cwd: str | Path = REPO) -> ForkedChild | None:
    """``python -m module args`` as a fork of this process's server, with exactly ``env`` and
    ``cwd``; ``None`` when the request needs a fresh interpreter (the module docstring; the
    reason in :data:`last_refusal`)."""
    global last_refusal
    if not enabled(env):
        last_refusal = f"{SWITCH_ENV}=0 or COVERAGE_PROCESS_START in the environment"
        return None
    prestart(cwd)
    client = _client
    served = "the fork server is off on this platform" if client is None else client.start(
        module, args, env, str(cwd))
    if isinstance(served, str):
        last_refusal = served
        return None
    return served
