"""A virtual display (Xvfb) for the viewer tests, and how they see the arm on it: the orange
links in a screenshot.  ``display`` is a pytest fixture: import it into the test module."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ros_helpers import REPO


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


def orange_pixels(display: str) -> int:
    from PIL import ImageGrab

    img = np.asarray(ImageGrab.grab(xdisplay=display).convert("RGB")).astype(int)
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return int(((r > 120) & (r - b > 80) & (g > 0.3 * r) & (g < 0.85 * r)).sum())


def wait_for_arm(display: str, proc=None, timeout: float = 60.0) -> int:
    """Orange pixels on the display once the window shows the arm (0 if it never does, or if
    ``proc`` ends first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return 0
        n = orange_pixels(display)
        if n > 500:
            return n
        time.sleep(0.5)
    return 0


def clean_env(display: str) -> dict[str, str]:
    """This process's environment for a window on ``display`` (no offscreen GL backend)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    env["DISPLAY"] = display
    return env


def replay_shows_arm(display: str, folder: Path, model, t: np.ndarray, q: np.ndarray) -> None:
    """Write ``model`` and the recording ``(t, q)`` to ``folder``, run ``rbd-ros view folder``
    on ``display`` and assert the window shows the arm."""
    from rbd_ros.sim.render import Recording

    model.to_yaml(str(folder / "model.yaml"))
    Recording(t, q).save(folder / "recording.npz")
    proc = subprocess.Popen([sys.executable, "-m", "rbd_ros.cli", "view", str(folder)],
                            cwd=REPO, env=clean_env(display), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        shown = wait_for_arm(display, proc)
        assert shown > 500, proc.stdout.read() if proc.poll() is not None else "no arm on screen"
    finally:
        proc.terminate()
        proc.wait(10)
