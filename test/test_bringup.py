"""``rbd-ros bringup`` end to end: three node processes, a demo trajectory, the report, the
plot and the rosbag2 recording (read back with rosbags, as rosbag2 tools would)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from ros_helpers import REPO


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bringup") / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", "puma560", "--controller",
         "computed_torque", "--mode", "lockstep", "--duration", "1.2", "--segment-time", "1.0",
         "--record", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    return proc, out


def test_bringup_succeeds_and_prints_the_report(run):
    proc, _ = run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "rms error" in proc.stdout and "real-time factor" in proc.stdout
    assert "[bringup] t =" in proc.stdout  # the progress line


def test_report_numbers(run):
    proc, out = run
    report = json.loads((out / "report.json").read_text())
    for key in ("rms_error", "max_error", "peak_torque"):
        assert len(report[key]) == 6, key
        assert all(np.isfinite(report[key]))
    # computed torque with the exact model in lockstep tracks the quintic tour closely
    assert max(report["rms_error"]) < 1e-3
    assert max(report["max_error"]) < 5e-3
    assert all(0 <= r <= m for r, m in zip(report["rms_error"], report["max_error"]))
    # the arm is held against gravity: the shoulder needs tens of N m, within its limit
    assert 5.0 < report["peak_torque"][1] <= 186.4 + 1e-9
    assert report["rtf"] > 0
    assert report["missed_cycles"] == 0  # lockstep: every step had its command
    assert report["duration"] >= 1.1


def test_plot_is_a_real_png(run):
    _, out = run
    data = (out / "plot.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image as mpimg

    img = mpimg.imread(out / "plot.png")
    assert img.shape[0] > 300 and img.shape[1] > 300
    assert img[..., :3].std() > 0.05  # not a blank canvas


def test_bag_has_the_topics_and_counts(run):
    _, out = run
    from rbd_ros.ros.bringup.recorder import read_bag

    bag = read_bag(out / "bag")
    assert set(bag) == {"/joint_states", "/effort_controller/commands",
                        "/controller/joint_trajectory", "/controller/controller_state"}
    assert len(bag["/controller/joint_trajectory"]) == 1
    n_states, n_cmd = len(bag["/joint_states"]), len(bag["/effort_controller/commands"])
    # 1.2 s at 1 kHz; lockstep: one command per state (give or take the ones in flight)
    assert n_cmd >= 1150 and abs(n_states - n_cmd) <= 100
    assert abs(len(bag["/controller/controller_state"]) - n_cmd) <= 5
    stamp, js = bag["/joint_states"][-1]
    assert list(js.name) == [f"joint{i}" for i in range(1, 7)]
    assert js.header.stamp.sec * 10**9 + js.header.stamp.nanosec == stamp
    assert (out / "bag" / "metadata.yaml").is_file()


def test_bad_arguments_exit_with_a_reason():
    proc = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", "r2d2"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "unknown robot 'r2d2'; bundled robots: arm7, planar2, puma560" in proc.stderr
    assert "Traceback" not in proc.stderr
