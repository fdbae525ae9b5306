"""The fork server's own loop and its children's set-up (``python -m`` this module ``FD``,
started by :mod:`rbd_ros.ros.bringup.fork_server`, whose docstring says what it is for and
when a request gets a fresh interpreter instead).

``serve``: import :data:`PRELOAD`, load the kernels numba's cache already holds
(``jit_cache.load_cached``: ~0.2 s of CPU less per node, numba's CPU target set up once), say
ready, then over the socket ``FD`` receive requests
(a JSON object and the child's output pipe), fork one child each and send back its pid, reap
the children and send their exit statuses.  ``become``: in the child, the set-up a fresh
``python -m MODULE ARGS`` has, then the module run as ``__main__``.
"""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import faulthandler
import gc
import importlib.util
import io
import json
import os
import runpy
import select
import signal
import socket
import sys
import threading

from rbd_ros.algorithm import jit_cache
from rbd_ros.ros.bringup.fork_server import MAX_MESSAGE, START_IMPORTS_FLAG, STOP_WITH_PARENT

#: what the server imports before it forks: every node's module and what they import
PRELOAD = ("numpy", "rclpy", "mujoco", "rbd_ros.ros.nodes.controller",
           "rbd_ros.ros.nodes.mujoco_bridge", "rbd_ros.ros.nodes.state_publisher",
           "rbd_ros.ros.nodes.dynamics_server", "rbd_ros.ros.bringup.twist_player")
#: the message packages whose classes and type support (the C library rclpy loads at a
#: publisher's, subscription's or service's creation) the nodes load at start
MESSAGE_PACKAGES = ("action_msgs", "builtin_interfaces", "control_msgs", "geometry_msgs",
                    "rbd_ros_interfaces", "rcl_interfaces", "rosgraph_msgs", "sensor_msgs",
                    "service_msgs", "std_msgs", "std_srvs", "tf2_msgs", "trajectory_msgs",
                    "type_description_interfaces", "unique_identifier_msgs")
#: with ``start_imports`` (``fork_server.prestart``): what the nodes import lazily at start
#: (their modules defer it, so that ``rbd-ros --help`` and the CLI's checks stay light),
#: imported here too so that no fork imports it again: a forked node imports 230-750 modules at
#: start without it (the controller's retimer: toppra and scipy).  Each one best effort: one
#: that fails to import is left to the node
START_IMPORTS = (
    "rclpy.node", "rclpy.action", "rclpy.executors", "rclpy.serialization", "rclpy.time_source",
    "rclpy.parameter_service", "rclpy.logging_service", "rclpy.type_description_service",
    *(f"{p}.{sub}" for p in MESSAGE_PACKAGES for sub in ("msg", "srv", "action")),
    *(f"{p}.{p}_s__rosidl_typesupport_c" for p in MESSAGE_PACKAGES),
    "urdf_parser_py.urdf", "toppra", "concurrent.futures", "multiprocessing",
    "rbd_ros.robot", "rbd_ros.robot.derivatives", "rbd_ros.robot.discrete", "rbd_ros.urdf",
    "rbd_ros.services", "rbd_ros.bases", "rbd_ros.model.urdf_export", "rbd_ros.model.link_frames",
    "rbd_ros.sim.simulator", "rbd_ros.sim.mobile_sim", "rbd_ros.sim.closed_loop", "rbd_ros.sim.warm",
    "rbd_ros.control.retime", "rbd_ros.control.follow_trajectory", "rbd_ros.control.mobile_laws",
    "rbd_ros.ros.follow_action", "rbd_ros.util.schema")


def _send(sock: socket.socket, msg: dict) -> None:
    with contextlib.suppress(OSError):  # the requester is gone: its children are still reaped
        sock.send(json.dumps(msg).encode())


def serve(fd: int, start_imports: bool = False) -> tuple[dict, int] | None:
    """The server's loop; returns ``(request, output fd)`` only in a forked child, ``None``
    in the server when the requester has gone and every child has been reaped.
    ``start_imports``: :data:`START_IMPORTS` too (``fork_server.prestart``)."""
    filler = sys.orig_argv[-1].isspace()  # the room fork_server.CMDLINE_ROOM left: not shown
    set_command_line(sys.orig_argv[:-1] if filler else sys.orig_argv)
    sock = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the requester stops the nodes, in its order
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    try:
        for name in PRELOAD:
            __import__(name)
        for name in START_IMPORTS if start_imports else ():
            with contextlib.suppress(ImportError):  # (a package without srv, say)
                importlib.import_module(name)
        jit_cache.load_cached()  # the kernels already cached, and numba's CPU target set up
        ok = threading.active_count() == 1
    except Exception:  # noqa: BLE001 - any failure: every request gets a fresh interpreter
        ok = False
    _send(sock, {"ready": ok})
    if not ok:
        return None
    gc.freeze()  # the imports' objects never collected: fewer pages copied in the children
    children: dict[int, bool] = {}  # pid -> stops with the requester
    connected = True
    while connected or children:
        watched: list[int] = [sock.fileno(), wake_r] if connected else [wake_r]
        ready, _, _ = select.select(watched, [], [], 1.0)
        if wake_r in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 4096)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            children.pop(pid, None)
            if connected:
                _send(sock, {"exit": pid, "code": os.waitstatus_to_exitcode(status)})
        if not connected or sock.fileno() not in ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 1)
        except OSError:
            data, fds = b"", []
        if not data:  # the requester exited or died: its nodes stop as they would with it
            connected = False
            for pid, with_parent in children.items():
                if with_parent:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGINT)
            continue
        request = json.loads(data)
        if len(fds) != 1 or threading.active_count() != 1:
            for f in fds:
                os.close(f)
            _send(sock, {"id": request["id"], "error": "no output pipe or a second thread"})
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            os.close(wake_r)
            os.close(wake_w)
            sock.close()
            return request, fds[0]
        os.close(fds[0])
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # before the pid is sent, as a shell does: no killpg misses it
        children[pid] = STOP_WITH_PARENT in request["env"]
        _send(sock, {"id": request["id"], "pid": pid})
    return None


def set_command_line(argv: list[str]) -> bool:
    """Show ``argv`` as this process's command line (``/proc/self/cmdline``: ``ps``, ``top``,
    ``pgrep -f``), written over the server's own in place: the kernel's ``arg_start`` to
    ``arg_end`` (``/proc/self/stat`` fields 48-49), NUL-padded; cut to that room, which the
    server's filler argument (:data:`~rbd_ros.ros.bringup.fork_server.CMDLINE_ROOM`) makes.
    ``False`` where ``/proc/self/mem`` cannot be written (the line stays the server's)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])
        text = b"\0".join(a.encode(errors="replace") for a in argv)[:max(end - start - 1, 0)]
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            mem.write(text.ljust(end - start, b"\0"))
        return True
    except (OSError, ValueError, IndexError):
        return False


def become(request: dict, out: int) -> None:
    """In the forked child: set up as ``python -m MODULE ARGS`` would be, run it, and end with
    the status that process's would have (:func:`exit_status`, :func:`end`)."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # its own group (the server set it too: killpg works from the start)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as at any interpreter's start
    env = dict(request["env"])
    if STOP_WITH_PARENT in env:
        env[STOP_WITH_PARENT] = str(os.getppid())  # this server: the real parent
    os.environ.clear()
    os.environ.update(env)
    os.chdir(request["cwd"])
    unbuffered = env.get("PYTHONUNBUFFERED", "") not in ("", "0")
    for fd, name in ((1, "stdout"), (2, "stderr")):
        stream = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace" if fd == 2 else "strict",
                                  line_buffering=True, write_through=unbuffered or fd == 2)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    if env.get("PYTHONFAULTHANDLER"):  # as the interpreter does at start-up
        faulthandler.enable(all_threads=True)
    else:
        faulthandler.disable()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()  # the global state: fresh, as in a new process
    module = request["module"]
    sys.modules.pop(module, None)  # runpy runs it as __main__, as -m does
    spec = importlib.util.find_spec(module)
    sys.argv = [spec.origin if spec is not None and spec.origin else module, *request["args"]]
    set_command_line([sys.executable, "-m", module, *request["args"]])
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exit_status(exc.code)
    except BaseException:  # noqa: BLE001 - as the interpreter ends on any other: traceback, 1
        sys.excepthook(*sys.exc_info())
        code = 1
    end(code)


def exit_status(code: object) -> int:
    """The status the interpreter gives an uncaught ``SystemExit(code)``: 0 for None, an int as
    it is, anything else printed to stderr and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code if -(1 << 31) <= code < (1 << 31) else 1
    print(code, file=sys.stderr)
    return 1


def end(code: int) -> None:
    """End the child as the interpreter's exit would, but without tearing down the modules and
    objects it inherited from the server (measured: 0.11 s of CPU and 20 000 page faults in a
    child of a server with 730 modules, 0.21-0.25 s with 1 650; a fresh interpreter tears down
    only its own): its non-daemon threads joined, its ``atexit`` functions run (``logging``'s
    flush among them), Python's and C's standard streams flushed, then ``os._exit``, as
    ``multiprocessing``'s forked children end."""
    with contextlib.suppress(Exception):
        threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter's exit does first
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).fflush(None)  # C stdio (a library's printf into the pipe)
    os._exit(code)


def main() -> None:
    served = serve(int(sys.argv[1]), START_IMPORTS_FLAG in sys.argv[2:])
    if served is not None:
        become(*served)


if __name__ == "__main__":
    main()
