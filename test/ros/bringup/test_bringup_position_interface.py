"""``rbd-ros bringup --command-interface position`` (issue 43.1) on the SO-ARM100 of
example-robot-data (5 joints to ``gripper``): the bridge's position drives, the controller a
position-interface joint trajectory controller.  The plan (ROS-free): the bridge's
``command_interface`` and the controller's; refused where it cannot run (composed).  End to
end: the report says which interface ran, the bag holds position commands and no torque
command, and the drives' torques it reports are the arm's: after the tour, held still, the
efforts on ``/joint_states`` equal Pinocchio's gravity torques at the measured pose."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robots_data import REPO, example_robot_urdf

SO100 = "so_arm_description/urdf/so100.urdf"


def _args(*extra: str) -> list[str]:
    return ["--urdf", str(example_robot_urdf(SO100)), "--tip-link", "gripper", "--quiet", *extra]


def test_the_plan_gives_both_nodes_the_position_interface() -> None:
    from rbd_ros.ros.bringup.cli import make_plan, parse_args

    plan = make_plan(parse_args(_args("--command-interface", "position")))
    specs = {s.name: s.parameters for s in plan.specs}
    assert specs["mujoco_bridge"]["command_interface"] == ["position"]
    assert specs["controller"]["command_interface"] == "position"
    effort = {s.name: s.parameters for s in make_plan(parse_args(_args())).specs}
    assert "command_interface" not in effort["mujoco_bridge"] and "command_interface" not in effort["controller"]
    with pytest.raises(ValueError, match="--command-interface position runs .* separate controller"):
        make_plan(parse_args(_args("--command-interface", "position", "--composed")))


@pytest.mark.slow
def test_bringup_runs_a_position_arm_and_reports_its_interface(tmp_path: Path) -> None:
    pin = pytest.importorskip("pinocchio")
    from rbd_ros.ros.bringup.recorder import read_bag

    out = tmp_path / "rec"
    proc = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services",
                           *_args("--command-interface", "position", "--segment-time", "1.0",
                                  "--record", str(out), "--no-video")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "position interface: the controller sent the reference positions" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["law"].startswith("position") and "position interface" in report["mode"]
    assert max(report["rms_error"]) < 0.02, report["rms_error"]
    bag = read_bag(out / "bag")
    assert "/effort_controller/commands" not in bag or not bag["/effort_controller/commands"]
    commands = np.array([m.data for _, m in bag["/position_controller/commands"]])
    assert commands.shape[1] == 5 and len(commands) > 1000
    states = bag["/joint_states"]
    _, first = states[-1]  # the tour's end, held (the run goes on 0.5 s past it)
    assert np.abs(first.velocity).max() < 1e-3, first.velocity
    urdf = str(example_robot_urdf(SO100))
    pm = pin.buildModelFromUrdf(urdf)
    q = pin.neutral(pm)
    names = list(first.name)
    for j, value in zip(names, first.position):
        q[pm.joints[pm.getJointId(j)].idx_q] = value
    tau = pin.computeGeneralizedGravity(pm, pm.createData(), q)
    arm = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll"]
    g = np.array([tau[pm.joints[pm.getJointId(j)].idx_v] for j in arm])
    effort = np.array([first.effort[names.index(j)] for j in arm])
    np.testing.assert_allclose(effort, g, atol=0.01 + 0.02 * np.abs(g).max())
    peak = np.array(report["peak_torque"])
    assert np.isfinite(peak).all() and (peak <= 35.0).all() and peak.max() > 0.01
