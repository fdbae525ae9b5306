"""``rbd-ros urdf2mdh``: table / yaml / json output, ``-o`` YAML read back identically, one-line
errors with a non-zero exit."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rbd_ros.model import MdhModel
from rbd_ros.urdf import load_model
from rbd_ros.urdf.cli import main
from robots_data import PANDA, REPO, UR5, example_robot_urdf

PANDA_ARGS = ["--tip", "panda_link8", "--lock", "panda_finger_joint1=0.02"]


def _same(a: MdhModel, b: MdhModel) -> None:
    assert a.to_dict() == b.to_dict()


def test_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(example_robot_urdf(UR5)), "--tip", "tool0"]) == 0
    out = capsys.readouterr().out
    assert "robot 'ur5': 6 joints" in out and "tip_link 'tool0'" in out
    assert "elbow_joint" in out and "0.425" in out and "parallel" in out and "intersecting" in out
    assert "tool (frame 6 -> tool0)" in out


def test_yaml_output_file_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "panda.yaml"
    assert main([str(example_robot_urdf(PANDA)), *PANDA_ARGS, "--format", "yaml", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    ref = load_model(example_robot_urdf(PANDA), tip_link="panda_link8",
                     locked_joints={"panda_finger_joint1": 0.02})
    _same(MdhModel.from_yaml(str(out)), ref)
    _same(MdhModel.from_yaml(printed), ref)
    from rbd_ros import Robot

    _same(Robot.from_yaml(str(out)).model, ref)


def test_json_is_strict_and_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON is strict (no NaN/Infinity constants) and is the converted model, as the
    YAML test checks: every field equal to the converter's ``to_dict()``."""
    assert main([str(example_robot_urdf(PANDA)), *PANDA_ARGS, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    ref = load_model(example_robot_urdf(PANDA), tip_link="panda_link8",
                     locked_joints={"panda_finger_joint1": 0.02})
    assert data == json.loads(json.dumps(ref.to_dict()))
    _same(MdhModel.from_dict(data), ref)


def test_xacro_args_and_gravity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "one.xacro"
    f.write_text('<robot name="one" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:arg name="h" default="1"/>'
                 '<link name="b"/><link name="l"/><joint name="j" type="continuous"><parent link="b"/>'
                 '<child link="l"/><origin xyz="0 0 $(arg h)"/><axis xyz="0 0 1"/></joint></robot>')
    out = tmp_path / "one.yaml"
    assert main([str(f), "--xacro-arg", "h:=0.25", "--gravity", "0", "0", "-1.62", "-o", str(out)]) == 0
    m = MdhModel.from_yaml(str(out))
    assert m.d[0] == 0.25 and np.array_equal(m.gravity, [0, 0, -1.62]) and m.upper[0] == np.inf
    assert "wrote" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["nope.urdf"], "nope.urdf: no such URDF/xacro file"),
    ([], "the following arguments are required: source"),
    (["PANDA", "--lock", "panda_finger_joint1"], "--lock 'panda_finger_joint1' is not of the form NAME=VALUE"),
    (["PANDA", "--lock", "panda_finger_joint1=open"], "'open' is not a number"),
    (["PANDA"], "give tip_link, one of: panda_hand_tcp, panda_leftfinger, panda_rightfinger"),
    (["PANDA", "--tip-link", "panda_link9"], "unknown tip_link 'panda_link9'; did you mean 'panda_link8'"),
    (["PANDA", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
    (["PANDA", "--xacro-arg", "novalue"], "--xacro-arg 'novalue' is not of the form NAME:=VALUE"),
])
def test_errors_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [str(example_robot_urdf(PANDA)) if a == "PANDA" else a for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("rbd-ros urdf2mdh: error: ") and message in err
    assert "\n" not in err and "Traceback" not in err and captured.out == ""


def test_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(example_robot_urdf(UR5)), "-o", str(tmp_path / "missing" / "x.yaml")]) == 2
    assert "rbd-ros urdf2mdh: error: cannot write" in capsys.readouterr().err


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--xacro-arg" in capsys.readouterr().out


def test_subprocess_dispatch(tmp_path: Path) -> None:
    out = tmp_path / "ur5.yaml"
    ok = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "urdf2mdh", str(example_robot_urdf(UR5)),
                         "--base", "base_link", "--tip", "ee_link", "-o", str(out)],
                        capture_output=True, text=True, timeout=120, cwd=REPO)
    assert ok.returncode == 0, ok.stderr
    assert "shoulder_pan_joint" in ok.stdout
    _same(MdhModel.from_yaml(str(out)), load_model(example_robot_urdf(UR5), "base_link", "ee_link"))
    bad = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "urdf2mdh", "missing.urdf"],
                         capture_output=True, text=True, timeout=120, cwd=REPO)
    assert bad.returncode != 0
    assert bad.stderr.strip() == "rbd-ros urdf2mdh: error: missing.urdf: no such URDF/xacro file"
