"""``rbd_ros.ros.common.fast_log_callers``: rclpy's logger names a log call's caller (function,
file, line: what ``RCUTILS_CONSOLE_OUTPUT_FORMAT`` prints, and the key of ``once``/``throttle``)
as it did, without reading source files (``inspect.getmodule`` walked every loaded module's
path on a node's first log line: 0.34 s of its start-up).  In a fresh interpreter each, so
rclpy's logger state and the patch stay out of the suite's process."""
from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import inspect, sys
import rclpy
from rclpy.context import Context
from rclpy.impl import rcutils_logger
patched = sys.argv[1] == "patched"
if patched:
    from rbd_ros.ros.common import fast_log_callers
    fast_log_callers()
    def refuse(*args, **kwargs):
        raise AssertionError("inspect.getmodule called by a log call")
    inspect.getmodule = refuse
ctx = Context(); rclpy.init(context=ctx)
node = rclpy.create_node("log_callers", context=ctx)

def the_caller():
    node.get_logger().info("first")
    caller = rcutils_logger.CallerId()
    print("caller", caller.function_name, caller.file_path, caller.line_number)

the_caller()
for _ in range(3):  # one call site: throttled to one line
    node.get_logger().info("again", throttle_duration_sec=60.0)
node.destroy_node(); rclpy.shutdown(context=ctx)
"""


def _run(mode: str) -> tuple[str, str]:
    env = {**os.environ, "RCUTILS_CONSOLE_OUTPUT_FORMAT": "{function_name}|{line_number}|{file_name}|{message}",
           "RCUTILS_COLORIZED_OUTPUT": "0"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=60,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, proc.stderr


def test_the_patched_logger_names_the_same_callers_without_reading_sources() -> None:
    plain_out, plain_err = _run("plain")
    fast_out, fast_err = _run("patched")  # inspect.getmodule raises there
    assert fast_out == plain_out and "caller the_caller" in fast_out, (plain_out, fast_out)
    assert fast_err == plain_err, (plain_err, fast_err)
    lines = fast_err.splitlines()
    assert lines[0].startswith("the_caller|") and lines[0].endswith("|first"), lines
    assert sum("again" in x for x in lines) == 1, lines  # throttled: the call site is one key
