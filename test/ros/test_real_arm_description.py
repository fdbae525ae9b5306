"""The real-arm guide's command (docs/guides/real-arm.md) works with a URDF that has XML comments (issue 29).

``ros2 run rbd_ros controller --ros-args -p robot_description:="$(cat ur5.urdf)"`` died inside
rcl with a traceback: rcl reads a ``-p`` value as YAML, and a URDF whose comments hold ``': '``
is not YAML.  The README now gives the file (``-p urdf_path:=...``); a description held as
text goes through a parameter file; the old form is refused in one line naming the fix.

On UR3 (example-robot-data ``ur3_robot.urdf``: 12 XML comments, that break ``-p``; no other
test names it).  The command is the guide's own, read from it.  Oracle for the loaded
model: the joints of the URDF's chain read here from its XML, and their count in the ready line.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
import yaml

from robots_data import REPO, example_robot_urdf
from ros_helpers import NodeProcess

UR3 = "ur_description/urdf/ur3_robot.urdf"


def readme_real_arm_command() -> list[str]:
    """The ``ros2 run rbd_ros controller`` command of the real-arm guide
    (docs/guides/real-arm.md, README's "A real arm" section before issue 33), as arguments
    after ``controller``."""
    text = (REPO / "docs/guides/real-arm.md").read_text()
    section = text.split("# A real arm through ros2_control", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    line = next(x for x in block.splitlines() if x.strip().startswith("ros2 run rbd_ros controller"))
    return shlex.split(line)[4:]


def ur3_joints(urdf: str) -> list[str]:
    return [j.get("name") for j in ET.parse(urdf).getroot().iter("joint")
            if j.get("type") in ("revolute", "continuous", "prismatic")]


@pytest.mark.slow
def test_readme_real_arm_command_with_commented_urdf() -> None:
    urdf = str(example_robot_urdf(UR3))
    text = open(urdf).read()
    assert text.count("<!--") >= 12 and ": " in "".join(re.findall(r"<!--(.*?)-->", text, re.S))
    joints = ur3_joints(urdf)
    assert len(joints) == 6
    args = readme_real_arm_command()
    assert "-p" in args and not any("robot_description" in a for a in args)
    args = [a.replace("/path/to/arm.urdf.xacro", urdf) for a in args]
    args = [("joints:=[" + ", ".join(joints) + "]") if a.startswith("joints:=") else a for a in args]
    proc = NodeProcess(["controller", *args])
    try:
        line = proc.wait_for("controller: ready", 180)
        assert "pd_gravity, 6 joints" in line and urdf in line
    finally:
        proc.stop()


@pytest.mark.slow
def test_description_text_through_a_parameter_file(tmp_path) -> None:
    from rbd_ros.ros.bringup.description import NodeSpec
    from rbd_ros.ros.bringup.params import node_arguments

    urdf = str(example_robot_urdf(UR3))
    text = open(urdf).read()
    spec = NodeSpec("controller", "controller", "controller",
                    {"type": "pd_gravity", "robot_description": text, "trigger": "timer"})
    args = node_arguments(spec, tmp_path)
    written = yaml.safe_load((tmp_path / "controller.yaml").read_text())
    assert written["controller"]["ros__parameters"]["robot_description"] == text  # byte for byte
    proc = NodeProcess(args)
    try:
        line = proc.wait_for("controller: ready", 180)
        assert "pd_gravity, 6 joints" in line and "robot_description parameter" in line
    finally:
        proc.stop()


def test_description_text_on_the_command_line_is_one_line() -> None:
    urdf = str(example_robot_urdf(UR3))
    out = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "controller", "--ros-args", "-p",
                          "type:=pd_gravity", "-p", f"robot_description:={open(urdf).read()}"],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr + out.stdout
    errors = [x for x in out.stderr.splitlines() if x.startswith("controller: error:")]
    assert len(errors) == 1
    assert "-p robot_description:=...: rcl reads the value as YAML" in errors[0]
    assert "-p urdf_path:=FILE" in errors[0] and "--params-file" in errors[0]
