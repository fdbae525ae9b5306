"""``rbd-ros view DIR`` on a mobile manipulator's recording (its base's ``x, y, yaw`` ahead of
the arm): the window shows the arm (orange links on the virtual display), and a directory
without a recording is one line, exit status 1."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from virtual_display import clean_env, display, replay_shows_arm  # noqa: F401 - the fixture

from rbd_ros.robot import Robot
from rbd_ros.util.resources import bundled_urdf
from ros_helpers import REPO


@pytest.mark.slow
def test_view_replays_a_mobile_recording(display, tmp_path) -> None:  # noqa: F811
    model = Robot.from_urdf(str(bundled_urdf("mobile_arm7")), base_type="diff_drive").model
    t = np.linspace(0.0, 1.0, 11)
    q = np.zeros((t.size, 3 + model.dof))
    q[:, 0], q[:, 2] = 0.5 * t, 0.8 * t
    replay_shows_arm(display, tmp_path, model, t, q)


def test_view_of_a_directory_without_a_recording_is_one_line(display, tmp_path) -> None:  # noqa: F811
    out = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "view", str(tmp_path)], cwd=REPO,
                         env=clean_env(display), capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip().count("\n") == 0 and "has no recording.npz" in out.stderr, out.stderr
