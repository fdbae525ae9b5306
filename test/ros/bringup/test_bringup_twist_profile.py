"""``rbd-ros bringup --controller diff_drive_velocity`` (issue 29: listed, then refused
before): the documented twist profile (``rbd_ros.control.twist_profile``) on the base's
``~/cmd_vel`` while the arm runs its tour, and the base path in the report.

On the bundled ``omni_arm7`` (a planar base, so the profile's sideways component is driven
too).  PR2 on a planar base (its right arm from the torso) passes the same checks (2.5e-4 m rms)
but its lockstep run (12.5 s at 4 s segments) took ~4 min of CI's 15: ``RBD_ROS_TEST_PR2=1`` runs it there
instead.  Oracles: the profile's end pose
in closed form (circular arcs, ``test_twist_profile.arc_end``) against the last ``/odom`` pose
of the bag (the simulated base), and the recorded twists against the documented profile.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from test_twist_profile import arc_end

from rbd_ros.control.twist_profile import PEAKS
from robots_data import example_robot_urdf
from ros_helpers import REPO

pytestmark = pytest.mark.slow  # end to end: ROS processes and a 6.5 s closed loop
# (2 s segments again since the twist player sends each twist 0.25 s ahead of its stamp and the
# controller holds it until then: at 2 s without that, a loaded machine's late twists put the
# reference 0.143 m (one CI run) and 0.269 m (three busy loops beside it) off the profile's path)

PR2 = "pr2_description/urdf/pr2.urdf"
#: s: the profile's (and the arm tour's) segments, half the mobile default of 4 s: the peak
#: accelerations (pi v / T: 0.79 m/s^2, 1.26 rad/s^2) stay under the law's limits (1 m/s^2,
#: 3 rad/s^2), so nothing is clipped, and the closed loop is 6.5 s instead of 12.5 (alone on the
#: 2-core machine: 44.3 -> 26.8 s of CPU, 27.4 -> 17.2 s wall)
SEGMENT = 2.0


_RUNS: dict[str, tuple] = {}  # the run, once per worker process


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    # once per worker even if the module fixture is set up again: CI showed two ~85 s setups
    # of this fixture in one run (its two tests each paid for a bringup)
    if "run" not in _RUNS:
        _RUNS["run"] = _bringup(tmp_path_factory)
    return _RUNS["run"]


def _bringup(tmp_path_factory):
    out = tmp_path_factory.mktemp("bringup_twist") / "demo"
    robot = ["--robot", "omni_arm7"]
    if os.environ.get("RBD_ROS_TEST_PR2") == "1":
        robot = ["--urdf", str(example_robot_urdf(PR2)), "--base-type", "planar", "--base-link",
                 "base_link", "--tip-link", "r_wrist_roll_link", "--start", "r_shoulder_lift_joint=1.3",
                 "r_elbow_flex_joint=-0.3"]
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", *robot,
         "--controller", "diff_drive_velocity", "--segment-time", f"{SEGMENT:g}", "--record", str(out),
         "--no-video", "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=1200)
    return proc, out


def test_twist_profile_run_reports_the_base_path(run) -> None:
    proc, out = run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "had not all arrived" not in proc.stdout  # drained at once, not after the 8 s wait
    assert f"base: twist profile on ~/cmd_vel, 3 segments of {SEGMENT:g} s" in proc.stdout
    assert "twist profile: the base drove" in proc.stdout
    assert "figure eight" not in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert "twist profile on ~/cmd_vel" in report["mode"] and report["missed_cycles"] == 0
    # the law against its reference (the twists it received, integrated): measured 2.5e-4 m
    # rms, 4.7e-4 m max, 4e-5 rad heading rms
    assert 0 < report["base_path_rms"] < 5e-3 and report["base_path_max"] < 1e-2
    assert report["base_heading_rms"] < 5e-3
    # that reference against the documented profile's path (the twists' delivery on the
    # simulated clock, each held until its stamp): 0.011 m measured alone, 0.018 m beside three
    # busy loops (0.269 m there when twists acted on receipt); a wrong profile is off by metres
    # (it drives > 1 m); the law's own tracking above is the tight check
    assert 0 < report["profile_path_max"] < 0.05
    assert 1.0 < report["base_path_length"] < 1.75  # about the profile's 1.3 m (2.6 m at 4 s segments)
    assert max(report["rms_error"]) < 1e-3  # the arm tracks its tour meanwhile


def test_the_base_drove_the_documented_profile(run) -> None:
    _, out = run
    from rbd_ros.ros.bringup.recorder import read_bag

    bag = read_bag(out / "bag")
    assert {"/odom", "/controller/cmd_vel", "/joint_states"} <= set(bag)
    twists = bag["/controller/cmd_vel"]
    # every 10 ms of simulated time over 6.5 s is 650; the player rides /clock and a loaded
    # process drops clocks (941 of 1250, gaps up to 0.37 s, in one suite run of the 12.5 s
    # profile, its paths still within 3.3 mm): the profile and the paths below are the checks,
    # the count only that it ran
    assert len(twists) >= 300
    # the twists sent are the documented profile's (closed form here, not the module's)
    tour = bag["/controller/joint_trajectory"][0][1]
    T, t0 = SEGMENT, tour.header.stamp.sec + 1e-9 * tour.header.stamp.nanosec  # the profile starts with the tour
    worst = 0.0
    for stamp, msg in twists:
        tau = stamp * 1e-9 - t0
        seg = int(tau // T)
        bump = math.sin(math.pi * (tau - seg * T) / T) ** 2 if 0 <= tau < 3 * T else 0.0
        want = PEAKS[min(max(seg, 0), 2)] * bump
        got = [msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z]
        worst = max(worst, float(np.abs(np.subtract(got, want)).max()))
    assert worst < 1e-9
    # the base ends where the profile's closed form says, from where it started
    def pose(msg) -> np.ndarray:
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        return np.array([p.x, p.y, 2 * math.atan2(o.z, o.w)])

    odom = bag["/odom"]
    start = pose(next(m for s, m in odom if s * 1e-9 >= t0))
    end = pose(odom[-1][1])
    p1 = start + [PEAKS[0, 0] * T / 2 * math.cos(start[2]), PEAKS[0, 0] * T / 2 * math.sin(start[2]), 0]
    expected = arc_end(arc_end(p1, PEAKS[1], T), PEAKS[2], T)
    travelled = np.hypot(*(expected[:2] - start[:2]))
    assert travelled > 0.4  # it went somewhere (0.59 m at 2 s segments)
    assert np.hypot(*(end[:2] - expected[:2])) < 0.1  # (0.076 m in the run above; within 5 cm usually)
    assert abs(math.remainder(end[2] - expected[2], 2 * math.pi)) < 0.05
