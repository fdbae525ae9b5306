"""Meshes found where the user's package is, through the interfaces a user sets (issue 43.3):
the nodes' ``package_paths`` parameter (``robot_params.robot_model``) and the bringup's
``--package-path`` (``ROS_PACKAGE_PATH`` for the run's processes).  The lookup order itself:
``test/sim/test_mesh_lookup.py``."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from robots_data import UR5, example_robot_urdf


@pytest.fixture
def arm(tmp_path: Path, monkeypatch):
    """The UR5 with its meshes as package://my_arm_description/, the package elsewhere."""
    import rbd_ros.sim.urdf_visuals as uv

    monkeypatch.setattr(uv, "_WARNED", set())
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    src = example_robot_urdf(UR5)
    share = src.parents[[p.name for p in src.parents].index("example-robot-data")]
    urdf = tmp_path / "urdf" / "ur5.urdf"
    urdf.parent.mkdir()
    urdf.write_text(src.read_text().replace("package://example-robot-data/robots/ur_description/",
                                            "package://my_arm_description/"))
    pkg = tmp_path / "elsewhere" / "my_arm_description"
    pkg.mkdir(parents=True)
    (pkg / "meshes").symlink_to(share / "robots" / "ur_description" / "meshes")
    yield uv, urdf, pkg
    uv.set_package_paths([])


def test_the_package_paths_parameter_finds_the_meshes(arm) -> None:
    from rbd_ros.ros.robot_params import robot_model

    uv, urdf, pkg = arm
    with pytest.warns(UserWarning, match="package 'my_arm_description' not found"):
        before, _ = uv.urdf_visuals(str(urdf), "world", "tool0")
    assert [s for s in before if s.kind == "mesh"] == []
    robot_model({"urdf_path": str(urdf), "tip_link": "tool0", "package_paths": [str(pkg.parent)]})
    shapes, notes = uv.urdf_visuals(str(urdf), "world", "tool0")
    assert notes == [] and all(s.file.startswith(str(pkg)) for s in shapes if s.kind == "mesh")
    assert len([s for s in shapes if s.kind == "mesh"]) >= 6


def test_bringup_package_path_goes_first_on_ros_package_path(arm, monkeypatch) -> None:
    from rbd_ros.ros.bringup.cli import parse_args

    uv, urdf, pkg = arm
    monkeypatch.setenv("ROS_PACKAGE_PATH", "/opt/other")
    parse_args(["--urdf", str(urdf), "--tip-link", "tool0", "--package-path", str(pkg.parent)])
    assert os.environ["ROS_PACKAGE_PATH"].split(os.pathsep) == [str(pkg.parent.resolve()), "/opt/other"]
    assert uv.package_dir("my_arm_description", None) == pkg.resolve()
    with pytest.raises(SystemExit, match="--package-path /nowhere: no such folder"):
        parse_args(["--urdf", str(urdf), "--package-path", "/nowhere"])
