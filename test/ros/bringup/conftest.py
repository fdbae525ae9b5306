"""Bringup runs shared by several test files (each a few node processes and a recorded closed
loop: tens of seconds on CI).  Session-scoped: the files using one are in conftest's heavy
xdist group, so one worker runs it once for all of them."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ros_helpers import REPO


@pytest.fixture(scope="session")
def mobile_run(tmp_path_factory):  # noqa: ANN001, ANN201
    """``mobile_arm7`` under ``whole_body_computed_torque`` for 2 s, recorded with its video:
    ``(CompletedProcess, the record folder)`` (test_bringup_mobile, test_bringup_mobile_page,
    test_bringup_tf)."""
    out = tmp_path_factory.mktemp("bringup_mobile") / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", "mobile_arm7", "--controller",
         "whole_body_computed_torque", "--duration", "2.0", "--record", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    return proc, out
