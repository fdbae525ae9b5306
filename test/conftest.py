"""Shared pytest setup.

ROS isolation: every test session picks its own ROS_DOMAIN_ID and restricts discovery to
this host before any rclpy import, so parallel or repeated runs never cross-talk.
"""
from __future__ import annotations

import os
import random

# Must happen before rclpy is imported anywhere (subprocesses inherit the environment).
if "RBD_ROS_TEST_DOMAIN" not in os.environ:
    _domain = str(random.SystemRandom().randint(1, 100))
    os.environ["RBD_ROS_TEST_DOMAIN"] = _domain
    os.environ["ROS_DOMAIN_ID"] = _domain
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_STATIC_PEERS", None)
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
os.environ.setdefault("PYTHONUNBUFFERED", "1")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# property tests draw the same examples in every run (a failure can be reproduced; CI does not
# flake on a new example), unless HYPOTHESIS_PROFILE=explore
settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

from ros_helpers import NodeProcess, ros_context  # noqa: E402,F401


@pytest.fixture
def node_process():
    """Start ROS nodes as real processes; every one is stopped when the test ends.

    ``proc = node_process(["dynamics-server", "--ros-args", "-p", "x:=1"], ready="serving")``
    runs ``rbd-ros ...`` and waits until ``ready`` appears in its output.
    """
    started: list[NodeProcess] = []

    def start(args: list[str], ready: str | None = None, timeout: float = 60.0,
              env: dict[str, str] | None = None) -> NodeProcess:
        proc = NodeProcess(args, env=env)
        started.append(proc)
        if ready is not None:
            proc.wait_for(ready, timeout)
        return proc

    yield start
    for proc in started:
        proc.stop()
