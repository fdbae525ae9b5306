"""``rbd-ros bringup`` on a mobile manipulator (issue 18): ``mobile_arm7`` (differential drive,
the wheels model: MuJoCo wheels on a floor) under ``whole_body_computed_torque`` for the first
seconds of the figure eight and the arm's tour; the report's base keys, the plot and ``/odom``
in the bag.  The full tours' numbers are in the README (a few minutes each on this machine)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ros_helpers import REPO

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop


@pytest.fixture
def run(mobile_run):
    return mobile_run  # test/conftest.py: shared with the page and /tf tests


def test_mobile_bringup_report(run) -> None:
    proc, out = run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "had not all arrived" not in proc.stdout  # drained at once, not after the 8 s wait
    assert "base path error rms" in proc.stdout and "figure eight" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["joint_names"] == [f"joint{i}" for i in range(1, 8)]
    assert report["duration"] >= 1.9 and report["missed_cycles"] == 0
    # the targets for the wheels model (measured: ~1e-5 m and ~1e-6 rad this early)
    assert report["base_path_rms"] < 2e-2 and max(report["rms_error"]) < 5e-3
    assert 0 <= report["base_heading_rms"] < 1e-2
    # the wheels roll on a floor: some slip and side velocity, small
    assert 0 < report["wheel_slip_max"] < 0.05
    assert 0 <= report["lateral_velocity_max"] < 0.05
    assert len(report["peak_wheel_torque"]) == 2 and 0 < max(report["peak_wheel_torque"]) < 50
    assert "base model wheels" in report["mode"]


def test_mobile_bringup_bag_and_plot(run) -> None:
    _, out = run
    from rbd_ros.ros.bringup.recorder import read_bag

    bag = read_bag(out / "bag")
    assert {"/odom", "/controller/base_path", "/joint_states"} <= set(bag)
    assert len(bag["/controller/base_path"]) == 1
    _, path = bag["/controller/base_path"][0]
    assert path.header.frame_id == "odom" and len(path.poses) == 120  # 12 s every 0.1 s
    n_odom, n_states = len(bag["/odom"]), len(bag["/joint_states"])
    assert n_odom >= 1900 and abs(n_odom - n_states) <= 100
    _, odom = bag["/odom"][-1]
    assert odom.child_frame_id == "base_link" and odom.pose.pose.position.x > 0.005  # it drove
    import matplotlib.image as mpimg

    img = mpimg.imread(out / "plot.png")
    assert img.shape[1] > 1.3 * img.shape[0]  # the x-y panel beside the joint panels
    assert img[..., :3].std() > 0.05


def test_mobile_bringup_refusals() -> None:
    # (diff_drive_velocity was refused here before issue 29; test_bringup_twist_profile.py runs it)
    for args, why in ((["--robot", "arm7", "--controller", "whole_body_computed_torque"], "drives a mobile base"),):
        proc = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "bringup", *args], cwd=REPO,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert why in proc.stderr
        assert "[bringup] t =" not in proc.stdout


def test_description_of_a_mobile_robot() -> None:
    """The launch files' description: bridge, state publisher, dynamics services and the mobile law."""
    from rbd_ros.ros.bringup.description import describe

    specs = describe(robot="mobile_arm7", controller="whole_body_computed_torque", mode="lockstep")
    assert [s.name for s in specs] == ["mujoco_bridge", "state_publisher", "dynamics_server", "controller"]
    assert specs[-1].parameters["type"] == "whole_body_computed_torque"
    assert all(s.parameters["model_yaml"].endswith("mobile_arm7.yaml") for s in specs)


def test_mobile_bringup_composed_ideal(tmp_path) -> None:
    """The mobile law inside the bridge's loop (composed mode) on the ideal base: the core's own
    dynamics, so the base tracks its path to micrometres (measured 4e-6 m over the whole tour)."""
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", "--robot", "mobile_arm7", "--controller",
         "whole_body_computed_torque", "--composed", "--base-model", "ideal", "--duration", "1.5",
         "--quiet", "--json", str(out)], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "had not all arrived" not in proc.stdout  # drained at once, not after the 8 s wait
    report = json.loads(out.read_text())
    assert report["mode"] == "composed, lockstep, base model ideal"
    assert report["base_path_rms"] < 1e-4 and max(report["rms_error"]) < 1e-4
    assert report["lateral_velocity_max"] < 1e-9 and "wheel_slip_max" not in report
