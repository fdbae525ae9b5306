"""A node's start-up time-out says so (issue 45): ``ros_helpers.NodeProcess.wait_for`` of a
start-up line (``"...: ready"``) that does not come in time raises ``StartupTimeout`` with
"start-up took N s: kernels compiling?", distinct from a failure of the behaviour under test;
a wait for any other line times out as before (a plain ``TimeoutError``), and a process that
exits before its line still says it exited.  The "node": ``python -m timeit`` of a sleep
(prints nothing until it ends), no ROS."""
from __future__ import annotations

import re

import pytest

from ros_helpers import NodeProcess, StartupTimeout


def _silent(seconds: float) -> NodeProcess:
    return NodeProcess(["-n", "1", "-r", "1", f"import time; time.sleep({seconds})"], module="timeit")


def test_a_startup_line_that_does_not_come_is_a_startup_timeout() -> None:
    proc = _silent(30)
    try:
        with pytest.raises(StartupTimeout) as info:
            proc.wait_for("mujoco_bridge: ready", 1.0)
    finally:
        proc.stop()
    text = str(info.value)
    assert re.match(r"start-up took [12] s: kernels compiling\?", text), text
    assert "'mujoco_bridge: ready'" in text and "not a failure of the behaviour under test" in text
    assert isinstance(info.value, TimeoutError)  # callers catching TimeoutError still do


def test_other_waits_time_out_as_before() -> None:
    proc = _silent(30)
    try:
        with pytest.raises(TimeoutError) as info:
            proc.wait_for("step 100", 0.5)
    finally:
        proc.stop()
    assert not isinstance(info.value, StartupTimeout)
    assert "start-up took" not in str(info.value)


def test_an_exit_before_the_line_still_says_exited() -> None:
    proc = _silent(0)
    try:
        with pytest.raises(RuntimeError, match="exited"):
            proc.wait_for("dynamics_server: ready", 30.0)
    finally:
        proc.stop()
