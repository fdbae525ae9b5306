"""``rbd-ros bringup`` end to end: three node processes, a demo trajectory, the report, the
plot and the rosbag2 recording (read back with rosbags, as rosbag2 tools would)."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

from ros_helpers import REPO

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bringup") / "demo"
    wall0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", "puma560", "--controller",
         "computed_torque", "--mode", "lockstep", "--duration", "1.2", "--segment-time", "1.0",
         "--record", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    return proc, out, time.monotonic() - wall0  # wall time of the whole command


def test_bringup_succeeds_and_prints_the_report(run):
    proc, _, _ = run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "had not all arrived" not in proc.stdout  # drained at once, not after the 8 s wait
    assert "rms error" in proc.stdout and "real-time factor" in proc.stdout
    assert "[bringup] t =" in proc.stdout  # the progress line


def test_report_numbers(run):
    proc, out, wall = run
    report = json.loads((out / "report.json").read_text())
    for key in ("rms_error", "max_error", "peak_torque"):
        assert len(report[key]) == 6, key
        assert all(np.isfinite(report[key]))
    # computed torque with the exact model in lockstep tracks the quintic tour to ~2e-5 rad
    # RMS, 4e-5 max (measured): a bound near that, not 100 times looser
    assert max(report["rms_error"]) < 1e-4
    assert max(report["max_error"]) < 5e-4
    assert all(0 <= r <= m for r, m in zip(report["rms_error"], report["max_error"]))
    # the arm is held against gravity: the shoulder needs tens of N m, within its limit
    assert 5.0 < report["peak_torque"][1] <= 186.4 + 1e-9
    # simulated over wall time of the reported window: that window took less wall time than
    # the whole command (start-up of three nodes included), and a lockstep loop at ~1 ms of
    # work per step cannot run 100 times faster than real time
    assert report["duration"] / wall < report["rtf"] < 100.0
    assert report["missed_cycles"] == 0  # lockstep: every step had its command
    assert report["duration"] >= 1.1


def test_plot_is_a_real_png(run):
    _, out, _ = run
    data = (out / "plot.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image as mpimg

    img = mpimg.imread(out / "plot.png")
    assert img.shape[0] > 300 and img.shape[1] > 300
    assert img[..., :3].std() > 0.05  # not a blank canvas


def test_bag_has_the_topics_and_counts(run):
    _, out, _ = run
    from rbd_ros.ros.bringup.recorder import read_bag

    bag = read_bag(out / "bag")
    assert set(bag) == {"/joint_states", "/effort_controller/commands",
                        "/controller/joint_trajectory", "/controller/controller_state",
                        "/tf", "/tf_static", "/robot_description"}
    assert len(bag["/controller/joint_trajectory"]) == 1
    n_states, n_cmd = len(bag["/joint_states"]), len(bag["/effort_controller/commands"])
    # 1.2 s at 1 kHz; lockstep: one command per state (give or take the ones in flight)
    assert n_cmd >= 1150 and abs(n_states - n_cmd) <= 100
    assert abs(len(bag["/controller/controller_state"]) - n_cmd) <= 5
    stamp, js = bag["/joint_states"][-1]
    assert list(js.name) == [f"joint{i}" for i in range(1, 7)]
    assert js.header.stamp.sec * 10**9 + js.header.stamp.nanosec == stamp
    assert (out / "bag" / "metadata.yaml").is_file()


def test_video_and_page(run):
    """The video of the run (real time, 30 fps) and the page; without OpenGL, one line."""
    import ctypes.util

    proc, out, _ = run
    page = (out / "index.html").read_text()
    assert "<table id='report'>" in page and "data:image/png;base64," in page
    if (out / "video.mp4").is_file():
        import imageio_ffmpeg

        frames, _ = imageio_ffmpeg.count_frames_and_secs(str(out / "video.mp4"))
        duration = json.loads((out / "report.json").read_text())["duration"]
        assert frames == int(duration * 30 + 1e-9) + 1
        assert "data:video/mp4;base64," in page and (out / "preview.gif").is_file()
    else:
        assert not ctypes.util.find_library("OSMesa"), proc.stdout[-2000:]  # it would work
        assert sum("no video" in line for line in proc.stdout.splitlines()) == 1


def test_report_and_page_say_what_ran_and_what_was_lost(run):
    """Issue 38: report.json carries the robot, the law, the gains and every effective
    parameter; the recording's sample counts agree with the bag; the page's title names the
    robot (not the URDF's file name)."""
    from rbd_ros.ros.bringup.recorder import read_bag

    proc, out, _ = run
    report = json.loads((out / "report.json").read_text())
    assert report["robot"] == "puma560" and report["law"] == "computed_torque"
    assert {"kp", "kd"} <= set(report["gains"]), report["gains"]
    params = report["parameters"]
    assert params["bringup"]["controller"] == "computed_torque" and params["bringup"]["duration"] == 1.2
    assert {"mujoco_bridge", "controller"} <= set(params) and params["controller"]["type"] == "computed_torque"
    bag = read_bag(out / "bag")
    rec = report["recording"]
    for topic in ("/joint_states", "/controller/controller_state"):
        assert rec[topic]["received"] == len({s for s, _ in bag[topic]}), topic  # the bag's, read back
        assert rec[topic]["expected"] == rec[topic]["received"] + rec[topic]["lost"]
    stamps = np.array(sorted({s for s, _ in bag["/joint_states"]}))
    assert rec["/joint_states"]["expected"] == round((stamps[-1] - stamps[0]) / 1e6) + 1  # 1 kHz, by hand
    assert report["samples_expected"] >= report["samples"]
    page = (out / "index.html").read_text()
    assert "<title>puma560: computed_torque, lockstep</title>" in page and ".urdf:" not in page
    lost = {t: v["lost"] for t, v in rec.items() if v["lost"]}
    assert ("recorded every sample of" in proc.stdout) == (not lost)  # else a warning per stream
    assert all(f"warning: the recording lost {k} of" in proc.stdout for k in lost.values())


def test_bad_arguments_exit_with_a_reason():
    proc = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", "r2d2"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "unknown robot 'r2d2'; bundled robots: " in proc.stderr
    listed = proc.stderr.split("bundled robots: ", 1)[1].split("\n")[0].split(", ")
    assert {"arm7", "planar2", "puma560"} <= set(listed)
    assert "Traceback" not in proc.stderr


def test_a_mobile_base_with_an_arm_law_is_refused_with_the_reason():
    """A mobile base needs a mobile law (test_bringup_mobile.py runs one)."""
    proc = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", "mobile_arm7"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "'mobile_arm7' has a diff_drive base: use --controller diff_drive_velocity or " \
           "whole_body_computed_torque" in proc.stderr
    assert "[bringup] t =" not in proc.stdout  # refused before any node started


def test_reference_moves_at_the_stamped_start(run):
    """The tour's first segment, a quintic from rest at the held start q0 to its first point,
    is followed from its header stamp on: the recorded reference equals the closed form
    q0 + (q1 - q0)(10 s^3 - 15 s^4 + 6 s^5), s = (t - t_start) / T, at every controller cycle,
    so a start late by one cycle fails."""
    _, out, _ = run
    from rbd_ros.ros.bringup.recorder import read_bag

    bag = read_bag(out / "bag")
    (_, traj), = bag["/controller/joint_trajectory"]
    t_start = traj.header.stamp.sec + 1e-9 * traj.header.stamp.nanosec
    p1 = traj.points[0]  # the tour has no point at 0: it starts from the held reference
    seg = p1.time_from_start.sec + 1e-9 * p1.time_from_start.nanosec
    order = [list(traj.joint_names).index(f"joint{i}") for i in range(1, 7)]
    q1 = np.array(p1.positions)[order]
    states = [(1e-9 * stamp, np.array(cs.position)) for stamp, cs in
              bag["/controller/controller_state"]]
    before = [ref for t, ref in states if t < t_start]
    assert before, "no controller state before the tour's stamp"
    q0 = before[-1]  # the position held until the stamp
    assert np.abs(q1 - q0).max() > 0.05
    checked = 0
    for t, ref in states:
        if not t_start - 0.05 <= t <= t_start + seg:
            continue
        s = min(max((t - t_start) / seg, 0.0), 1.0)
        expected = q0 + (q1 - q0) * (10 * s**3 - 15 * s**4 + 6 * s**5)
        np.testing.assert_allclose(ref, expected, atol=1e-9,
                                   err_msg=f"reference at t - t_start = {t - t_start:.4f} s")
        checked += 1
    assert checked >= 0.9 * seg / 0.001  # 1 ms cycles over the segment


@pytest.fixture(scope="module")
def realtime_urdf(tmp_path_factory):
    """A URDF given by path (no model file: no actuators), wall-clock paced."""
    out = tmp_path_factory.mktemp("bringup") / "rt"
    wall0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--urdf", str(REPO / "urdf" / "puma560.urdf"),
         "--controller", "computed_torque", "--mode", "realtime", "--duration", "1.0",
         "--segment-time", "0.5", "--record", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    return proc, out, time.monotonic() - wall0


def test_realtime_mode_from_a_urdf(realtime_urdf):
    proc, out, wall = realtime_urdf
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["joint_names"] == [f"joint{i}" for i in range(1, 7)]
    # wall-clock paced: at most real time (a little over from rounding of the window's ends),
    # and no slower than the whole command
    assert report["duration"] / wall < report["rtf"] < 1.05
    # the samples cover the window up to its end (1 s), less the cycles a controller that
    # lagged on a loaded CI machine had not answered when drained (0.83 s seen there)
    assert 0.5 <= report["duration"] <= 1.0 + 1e-9
    # tracking in realtime depends on the machine's load (on a loaded 2-core machine the
    # controller missed most cycles and the wrist lost the tour): only its sanity here; the
    # lockstep run above checks the accuracy
    for key in ("rms_error", "max_error", "peak_torque"):
        assert len(report[key]) == 6 and all(np.isfinite(report[key])), key
    assert 0 <= report["missed_cycles"] <= 1.0 / 0.001 + 1
    assert report["samples"] > 0
    from rbd_ros.ros.bringup.recorder import read_bag

    bag = read_bag(out / "bag")
    stamps = np.array([s for s, _ in bag["/joint_states"]]) * 1e-9
    assert np.all(np.diff(stamps) > 0)
    (_, traj), = bag["/controller/joint_trajectory"]
    t_start = traj.header.stamp.sec + 1e-9 * traj.header.stamp.nanosec
    # states recorded up to the end of the window only (realtime: cut at the horizon)
    assert stamps[-1] <= t_start + 1.0 + 1e-9
