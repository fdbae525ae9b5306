"""What every rbd_ros node shares: start-up, clean failure, the recorder's QoS (the robot
parameters: ``rbd_ros.ros.robot_params``)."""
from __future__ import annotations

import faulthandler
import sys
import warnings
from collections.abc import Callable

import yaml

from rbd_ros.ros.dds import use_large_data_profile
from rbd_ros.util import yaml_io


def recordable_qos():
    """Reliable with a 10 000-sample history (10 s at 1 kHz, a few MB): for the streams a
    recorder must get whole (/joint_states, commands, controller state) even when it falls
    seconds behind on a busy machine (a lockstep loop runs as fast as the CPUs allow). Used on
    both sides; readers that only want the latest sample keep shallow queues of their own."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=10_000, reliability=ReliabilityPolicy.RELIABLE)


def level_logger(node) -> Callable[[str, str], None]:
    """``log(level, message)`` (level "info" | "warn" | "error", as the ROS-free core calls it)
    onto the node's rclpy logger."""
    logger = node.get_logger()

    def log(level: str, message: str) -> None:
        # one call site per severity: rclpy refuses a call site that changes severity
        if level == "error":
            logger.error(message)
        elif level == "warn":
            logger.warning(message)
        else:
            logger.info(message)

    return log


class NodeConfigError(ValueError):
    """A parameter or input a node cannot start with; reported in one line, exit code 2 (a
    ValueError, so ``rbd-ros bringup`` reports it in one line too)."""


def _log_warnings(node) -> None:
    """Python warnings (``InertiaWarning`` of a physically impossible model...) as one line
    in the node's log instead of two lines of ``file:line:`` on stderr."""

    def show(message, category, filename, lineno, file=None, line=None):
        node.get_logger().warning(f"{category.__name__}: {message}")

    warnings.showwarning = show


class _CallerFrames:
    """What rclpy's logger (``rclpy.impl.rcutils_logger``) takes from ``inspect``: the calling
    frame and its file name, without reading the file.  rclpy names a log call's caller by
    ``inspect.getframeinfo(frame).filename``, which also reads the caller's source lines through
    ``inspect.getmodule``: that walks every loaded module's path (``realpath`` of ~1300 modules)
    on the first call, 0.34 s of a node's 2.6 s start-up (cProfile, controller, warm cache), and
    all of ``sys.modules`` on each later one.  ``frame.f_code.co_filename`` is the same name
    (``getframeinfo``'s is ``getsourcefile(frame) or getfile(frame)``, the code's file when it
    exists; rclpy takes its ``realpath`` either way)."""

    currentframe = staticmethod(sys._getframe)

    class _Info:
        __slots__ = ("filename",)

        def __init__(self, filename: str) -> None:
            self.filename = filename

    @classmethod
    def getframeinfo(cls, frame) -> "_CallerFrames._Info":
        return cls._Info(frame.f_code.co_filename)


def fast_log_callers() -> None:
    """rclpy's logger names its callers without reading their source files (``_CallerFrames``;
    called by ``run_node``, before the first log line).  rclpy's own rules stay: the first frame
    outside rclpy's logging files is the caller, one call site keeps one severity."""
    from rclpy.impl import rcutils_logger

    if hasattr(rcutils_logger, "inspect"):
        rcutils_logger.inspect = _CallerFrames  # type: ignore[assignment]  # what it reads of inspect


def ros_args_problem(args: list[str], exc: Exception) -> str:
    """One line for arguments rcl refused (``rclpy.init``): rcl reads a ``-p NAME:=VALUE``
    value as YAML, so a URDF text with XML comments holding ``': '`` (or a path with one) is
    not a value; the line names the parameter and the fix."""

    for i, arg in enumerate(args[:-1]):
        if arg in ("-p", "--param") and ":=" in args[i + 1]:
            key, _, text = args[i + 1].partition(":=")
            try:
                yaml_io.safe_load(text)
            except yaml.YAMLError:
                return (f"-p {key}:=...: rcl reads the value as YAML and this one is not (an XML "
                        f"comment or a path with ': ' or ' #' in it?); give a file instead: "
                        f"-p urdf_path:=FILE (.urdf or .xacro), or {key} in a --params-file")
    first = " ".join(str(exc).split())[:200]
    return f"rcl refused the command line's --ros-args ({first})"


def run_node(name: str, body: Callable, argv: list[str] | None, spin: bool = True,
             executor_factory: Callable | None = None, cleanup: Callable | None = None,
             node_factory: Callable | None = None) -> int:
    """Initialise rclpy with ``argv`` (``--ros-args ...``), create node ``name``, call
    ``body(node)``, then spin until Ctrl-C (if ``spin``). Configuration errors print one line
    ``<name>: error: ...`` and return 2; Ctrl-C returns 0. ``cleanup()`` runs before the node
    is destroyed and rclpy shut down; ``node_factory(name)`` makes the node (default
    ``rclpy.create_node``; a lifecycle node: ``rbd_ros.ros.nodes.managed``)."""
    import rclpy
    from rclpy.executors import ExternalShutdownException

    args = list(sys.argv[1:] if argv is None else argv)
    fast_log_callers()

    use_large_data_profile()  # before the first participant; see rbd_ros.ros.dds
    try:
        rclpy.init(args=["rbd_ros", *args])
    except Exception as exc:  # noqa: BLE001 - rclpy's RCLError: rcl refused the arguments
        print(f"{name}: error: {ros_args_problem(args, exc)}", file=sys.stderr, flush=True)
        return 2
    node = None
    try:
        node = (node_factory or rclpy.create_node)(name)
        _log_warnings(node)
        body(node)
        if spin:
            executor = executor_factory() if executor_factory else rclpy.executors.SingleThreadedExecutor()
            executor.add_node(node)
            executor.spin()
        return 0
    except (NodeConfigError, ValueError, FileNotFoundError) as exc:
        print(f"{name}: error: {exc}", file=sys.stderr, flush=True)
        return 2
    except (KeyboardInterrupt, ExternalShutdownException):
        return 0
    finally:
        _exit_if_stuck()
        if cleanup is not None:
            cleanup()
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


#: seconds a node's shutdown (cleanup, node and context destruction) may take
SHUTDOWN_LIMIT = 10.0


def _exit_if_stuck(limit: float = SHUTDOWN_LIMIT) -> None:
    """End the process if its shutdown hangs: a node stopped by a signal, or by ``rbd-ros
    bringup`` ending, must not outlive it.  Seen: rclpy's signal-handler thread blocked on a
    Fast DDS guard-condition mutex while ``rclpy.shutdown()`` joined it, holding the GIL, for
    hours.  So no Python thread can be the watchdog (it would need the GIL): ``faulthandler``'s
    C thread dumps every thread's stack to stderr after ``limit`` s (the reason, for the log)
    and calls ``_exit(1)``; a normal exit never waits for it."""

    faulthandler.dump_traceback_later(limit, exit=True)
