"""``rbd-ros bringup`` on a robot description we did not tune for: PAL's TIAGo
(example-robot-data ``tiago_no_hand.urdf``) on its differential drive (``--base diff_drive``,
wheels found in the URDF), the arm chain to ``arm_tool_link`` (the head is a branch), under
``whole_body_computed_torque`` with the model-derived gains, lockstep, the wheels model
(MuJoCo wheels on a floor, the URDF's joint friction in the plant), 3 s of the tour.

What it reaches (measured, README "TIAGo"): base path RMS ~2e-4 m, heading ~1e-3 rad, torso
and arm_1..arm_6 below 1.3e-3 rad RMS: the issue's wheels-model targets (2 cm, 5e-3 rad).
arm_7 does NOT reach them: the URDF puts 1 N m of Coulomb friction on a link of 4e-6 kg m^2
(no gear armature); the law compensates it in full (``gains.coulomb_compensation``, with a note
that this is harsh on a plant with less friction) and arm_7 ends ~1.2e-2 rad RMS (asserted as
what it is; capped to what its inertia allows in one period it stuck at 0.31 rad).
The law's unit behaviour (note, smooth sign) against the URDF numbers is checked too."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ros_helpers import REPO

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

pytest.importorskip("pinocchio")
from test_mobile_real_robot import TIAGO  # noqa: E402  (example-robot-data's path, one home)

TIAGO = Path(TIAGO)
ARGS = ["--base", "diff_drive", "--base-link", "base_link", "--tip-link", "arm_tool_link"]


def test_tiago_law_compensates_friction_and_names_the_light_joint() -> None:
    from rbd_ros import Robot
    from rbd_ros.control.mobile_laws import MobileReference, make_mobile_law
    from rbd_ros.robot.mobile import MobileBaseRobot

    r = Robot.from_urdf(str(TIAGO), base_type="diff_drive", base_link="base_link", tip_link="arm_tool_link")
    law = make_mobile_law("whole_body_computed_torque", MobileBaseRobot(r.model))
    notes = [n for n in law.gain_notes if "is large for its inertia" in n]
    assert len(notes) == 1 and "arm_7_joint" in notes[0], law.gain_notes
    assert np.allclose(law._coulomb[1:], 1.0)  # URDF: 1 N m each, in full
    # the compensation changes sign smoothly: a reversal of q_d' by 2e-6 rad/s moves no torque
    q = np.zeros(3 + r.model.dof)
    q[3:] = np.clip(0.0, r.model.lower, r.model.upper)
    ref = MobileReference(r.model.dof)
    ref.q[:] = q[3:]
    taus = []
    for s in (1e-6, -1e-6):
        ref.qd[:] = s
        taus.append(law.compute(0.0, q, np.zeros_like(q), ref).copy())
    assert np.abs(taus[0] - taus[1]).max() < 0.01


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bringup_tiago") / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", "--urdf", str(TIAGO), *ARGS, "--controller",
         "whole_body_computed_torque", "--duration", "3.0", "--json", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    return proc, out


def test_tiago_bringup_report(run) -> None:
    proc, out = run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    names = report["joint_names"]
    assert names == ["torso_lift_joint", *(f"arm_{i}_joint" for i in range(1, 8))]
    assert report["duration"] >= 2.9 and report["missed_cycles"] == 0
    rms = dict(zip(names, report["rms_error"]))
    # the wheels-model targets: base and every joint but arm_7 (module docstring)
    assert report["base_path_rms"] < 2e-2 and report["base_heading_rms"] < 1e-2
    assert max(v for k, v in rms.items() if k != "arm_7_joint") < 5e-3, rms
    assert rms["arm_7_joint"] < 3e-2, rms  # its friction on 4e-6 kg m^2: what it honestly reaches
    assert 0 < report["wheel_slip_max"] < 0.05 and 0 <= report["lateral_velocity_max"] < 0.05
    assert "base model wheels" in report["mode"]
