"""MuJoCo's interactive viewer on a virtual display (Xvfb): the bridge's ``viewer:=true``, and
``rbd-ros view`` live on /joint_states and on a recording.  Each test screenshots the display
and finds the arm's orange links in it."""
from __future__ import annotations

import os
import shutil
import subprocess
import time

import numpy as np
import pytest

from rbd_ros.robot import Robot
from rbd_ros.sim.render import Recording
from rbd_ros.util.resources import bundled_urdf


@pytest.fixture
def display():
    """A fresh virtual display per test (no window left over from another)."""
    if shutil.which("Xvfb") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Xvfb is missing in CI (.ci/run installs xvfb)")
        pytest.skip("Xvfb is not installed here (Debian package xvfb; CI installs it)")
    # -displayfd: Xvfb picks a free display number and writes it to stdout once serving
    server = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "1024x768x24",
                               "-nolisten", "tcp"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline().strip()
    assert line.isdigit(), f"Xvfb did not start (said {line!r})"
    name = f":{line}"
    yield name
    server.terminate()
    server.wait(10)


def _orange_pixels(display: str) -> int:
    from PIL import ImageGrab

    img = np.asarray(ImageGrab.grab(xdisplay=display).convert("RGB")).astype(int)
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return int(((r > 120) & (r - b > 80) & (g > 0.3 * r) & (g < 0.85 * r)).sum())


def _wait_for_arm(display: str, proc=None, timeout: float = 60.0) -> int:
    """Orange pixels on the display once the window shows the arm (0 if it never does)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return 0
        n = _orange_pixels(display)
        if n > 500:
            return n
        time.sleep(0.5)
    return 0


def _clean_env(display: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    env["DISPLAY"] = display
    return env


@pytest.mark.ros
def test_bridge_viewer_true_shows_the_arm(display, node_process) -> None:
    assert _orange_pixels(display) == 0
    env = _clean_env(display)
    env.pop("MUJOCO_GL", None)
    bridge = node_process(["mujoco-bridge", "--ros-args", "-p", "viewer:=true",
                           "-p", "mode:=lockstep"], ready="mujoco_bridge: ready", env=env)
    assert _wait_for_arm(display) > 500, bridge.output[-2000:]
    assert "viewer:=true" not in bridge.output  # no warning: the viewer opened
    bridge.stop()


@pytest.mark.ros
@pytest.mark.slow
def test_view_live_and_replay_show_the_arm(display, node_process, tmp_path) -> None:
    import sys

    from ros_helpers import REPO

    env = _clean_env(display)
    bridge = node_process(["mujoco-bridge", "--ros-args", "-p", "mode:=lockstep"],
                          ready="mujoco_bridge: ready")
    time.sleep(1.0)
    assert _orange_pixels(display) == 0, "the bridge alone opens no window"
    view = node_process(["view"], ready="rbd_viewer: ready", env=env)
    assert _wait_for_arm(display) > 500, view.output[-2000:]
    view.stop()
    bridge.stop()
    time.sleep(1.0)
    model = Robot.from_urdf(str(bundled_urdf("puma560"))).model
    model.to_yaml(str(tmp_path / "model.yaml"))
    t = np.linspace(0.0, 1.0, 11)
    Recording(t, np.outer(t, np.ones(model.dof))).save(tmp_path / "recording.npz")
    proc = subprocess.Popen([sys.executable, "-m", "rbd_ros.cli", "view", str(tmp_path)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        shown = _wait_for_arm(display, proc)
        assert shown > 500, proc.stdout.read() if proc.poll() is not None else "no arm on screen"
    finally:
        proc.terminate()
        proc.wait(10)
