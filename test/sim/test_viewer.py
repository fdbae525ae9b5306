"""MuJoCo's interactive viewer on a virtual display (Xvfb): the bridge's ``viewer:=true``, and
``rbd-ros view`` live on /joint_states and on a recording.  Each test screenshots the display
and finds the arm's orange links in it (``test/support/virtual_display.py``)."""
from __future__ import annotations

import time

import numpy as np
import pytest
from virtual_display import clean_env, display, orange_pixels, replay_shows_arm, wait_for_arm  # noqa: F401

from rbd_ros.robot import Robot
from rbd_ros.util.resources import bundled_urdf


@pytest.mark.ros
@pytest.mark.slow
def test_bridge_viewer_true_shows_the_arm(display, node_process) -> None:  # noqa: F811
    assert orange_pixels(display) == 0
    bridge = node_process(["mujoco-bridge", "--ros-args", "-p", "viewer:=true",
                           "-p", "mode:=lockstep"], ready="mujoco_bridge: ready", env=clean_env(display))
    assert wait_for_arm(display) > 500, bridge.output[-2000:]
    assert "viewer:=true" not in bridge.output  # no warning: the viewer opened
    bridge.stop()


@pytest.mark.ros
@pytest.mark.slow
def test_view_live_and_replay_show_the_arm(display, node_process, tmp_path) -> None:  # noqa: F811
    bridge = node_process(["mujoco-bridge", "--ros-args", "-p", "mode:=lockstep"],
                          ready="mujoco_bridge: ready")
    time.sleep(1.0)
    assert orange_pixels(display) == 0, "the bridge alone opens no window"
    view = node_process(["view"], ready="rbd_viewer: ready", env=clean_env(display))
    assert wait_for_arm(display) > 500, view.output[-2000:]
    view.stop()
    bridge.stop()
    time.sleep(1.0)
    model = Robot.from_urdf(str(bundled_urdf("puma560"))).model
    t = np.linspace(0.0, 1.0, 11)
    replay_shows_arm(display, tmp_path, model, t, np.outer(t, np.ones(model.dof)))
