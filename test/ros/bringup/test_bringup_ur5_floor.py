"""End to end (issue 26 items 4-5, issue 27): ``rbd-ros bringup`` on a table-mounted UR5
(example-robot-data) with a partial ``--start``: the arm starts exactly there, the recorded
reference keeps every URDF link and the tool above the table (Pinocchio), and the report,
JSON and page carry saturation and chatter, the tool error, the gains and effective
parameters; ``--no-video`` still leaves what a later render needs."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robots_data import REPO, UR5, example_robot_urdf

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

pytest.importorskip("rclpy")
pin = pytest.importorskip("pinocchio")


def test_ur5_bringup_keeps_the_start_and_the_table(tmp_path: Path) -> None:
    from rbd_ros.ros.bringup.recorder import read_bag
    from rbd_ros.urdf import load_model

    urdf = str(example_robot_urdf(UR5))
    model = load_model(urdf)
    out = tmp_path / "rec"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", "--urdf", urdf, "--controller",
         "resolved_acceleration", "--mode", "lockstep", "--duration", "1.0", "--segment-time", "1.0",
         "--start", "shoulder_pan_joint=0.25", "wrist_3_joint=0.5", "--record", str(out), "--no-video",
         "--json", str(tmp_path / "r.json"), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "at limit" in proc.stdout and "chatter" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report == json.loads((tmp_path / "r.json").read_text())
    for key in ("saturation", "chatter"):
        assert len(report[key]) == 6 and all(0.0 <= x <= 100.0 for x in report[key]), key
    bag = read_bag(out / "bag")
    (_, traj), = bag["/controller/joint_trajectory"]
    stamp = traj.header.stamp.sec + 1e-9 * traj.header.stamp.nanosec
    states = [(1e-9 * s, np.array(cs.position)) for s, cs in bag["/controller/controller_state"]]
    held = [q for t, q in states if t < stamp][-1]  # the reference held until the tour starts
    assert held[0] == pytest.approx(0.25, abs=1e-9) and held[5] == pytest.approx(0.5, abs=1e-9)
    # the whole recorded reference, through Pinocchio: every moving link and the tool above z = 0
    pm = pin.buildModelFromUrdf(urdf)
    data = pm.createData()
    idx = [pm.joints[pm.getJointId(n)].idx_q for n in model.joint_names]
    frames = [pm.getFrameId(f.name) for f in pm.frames
              if f.type == pin.FrameType.BODY and f.parentJoint > 0]
    low = np.inf
    for _, q in states:
        qp = pin.neutral(pm)
        qp[idx] = q
        pin.framesForwardKinematics(pm, data, qp)
        low = min(low, min(data.oMf[f].translation[2] for f in frames))
    assert low >= 0.0
    page = (out / "index.html").read_text()
    assert "tool position error rms" in page and "id='gains'" in page and "(model)" in page
    assert "no video (--no-video)" in page
    assert "<td>duration</td><td>null</td>" not in page and "<td>segment_time</td><td>1.0</td>" in page
    assert (out / "recording.npz").is_file() and (out / "model.yaml").is_file()
    # ... and a later render of the --no-video run works from what it left (where OSMesa is)
    import ctypes.util
    import os

    if ctypes.util.find_library("OSMesa"):
        env = {**os.environ, "MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}
        render = subprocess.run([sys.executable, "-m", "rbd_ros.sim.render", str(out)], cwd=REPO,
                                capture_output=True, text=True, timeout=600, env=env)
        assert render.returncode == 0, render.stdout[-2000:] + render.stderr[-2000:]
        import imageio_ffmpeg

        frames, _ = imageio_ffmpeg.count_frames_and_secs(str(out / "video.mp4"))
        assert frames == int(report["duration"] * 30 + 1e-9) + 1
