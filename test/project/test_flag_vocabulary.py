"""One flag vocabulary across the subcommands (issue 29): ``--base-link`` / ``--tip-link`` in
urdf2mdh, formulations and bringup (``--base-type`` for bringup's base kind); the old
spellings still work for one release and print one deprecation line.

On Unitree's Z1 (example-robot-data ``z1.urdf``): the chain ends asked for decide the joints,
checked against the joints on the path read from the URDF's XML here (not by our parser).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import yaml

from rbd_ros.formulations.cli import main as formulations
from rbd_ros.ros.bringup.cli import parse_args as bringup_args
from rbd_ros.urdf.cli import main as urdf2mdh
from robots_data import example_robot_urdf

Z1 = "z1_description/urdf/z1.urdf"


def moving_joints_between(urdf: str, base: str, tip: str) -> list[str]:
    """The non-fixed joints from ``base`` to ``tip``, walking the XML's parent links."""
    joints = {j.find("child").get("link"): j for j in ET.parse(urdf).getroot().findall("joint")
              if j.find("child") is not None}
    path, link = [], tip
    while link != base:
        j = joints[link]
        if j.get("type") != "fixed":
            path.append(j.get("name"))
        link = j.find("parent").get("link")
    return path[::-1]


def test_urdf2mdh_new_and_old_spellings_give_the_asked_chain(tmp_path, capsys) -> None:
    urdf = str(example_robot_urdf(Z1))
    new, old = tmp_path / "new.yaml", tmp_path / "old.yaml"
    assert urdf2mdh([urdf, "--base-link", "link01", "--tip-link", "link05", "-o", str(new)]) == 0
    err_new = capsys.readouterr().err
    assert "deprecated" not in err_new
    assert urdf2mdh([urdf, "--base", "link01", "--tip", "link05", "-o", str(old)]) == 0
    err_old = capsys.readouterr().err
    assert "--base is deprecated, use --base-link" in err_old
    assert "--tip is deprecated, use --tip-link" in err_old
    assert new.read_text() == old.read_text()
    model = yaml.safe_load(new.read_text())
    names = [j["name"] for j in model["joints"]]
    assert names == moving_joints_between(urdf, "link01", "link05") == ["joint2", "joint3", "joint4", "joint5"]


def test_formulations_takes_tip_link_and_the_old_tip(capsys) -> None:
    urdf = str(example_robot_urdf(Z1))
    assert formulations([urdf, "--tip-link", "link06", "--states", "1"]) == 0
    out = capsys.readouterr()
    assert "6 joints" in out.out and "deprecated" not in out.err
    assert formulations([urdf, "--tip", "link06", "--states", "1"]) == 0
    out = capsys.readouterr()
    assert "6 joints" in out.out and "--tip is deprecated, use --tip-link" in out.err
    assert len(moving_joints_between(urdf, "world", "link06")) == 6


def test_bringup_takes_base_type_and_the_old_base_and_tip(capsys) -> None:
    a = bringup_args(["--urdf", "x.urdf", "--base-type", "diff_drive", "--tip-link", "t"])
    assert (a.base, a.tip_link) == ("diff_drive", "t")
    assert "deprecated" not in capsys.readouterr().err
    b = bringup_args(["--urdf", "x.urdf", "--base", "diff_drive", "--tip", "t"])
    assert (b.base, b.tip_link) == ("diff_drive", "t")
    err = capsys.readouterr().err
    assert "--base is deprecated, use --base-type" in err and "--tip is deprecated, use --tip-link" in err
