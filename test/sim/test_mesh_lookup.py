"""``package://NAME/`` meshes found where the user's package really is (issue 43): the
``package_paths`` given (``--package-path``), ``ROS_PACKAGE_PATH``, the ament index, and
folders above and beside the URDF named NAME or whose ``package.xml`` names NAME; a package
found nowhere is one short note naming where it looked (it was a line of over 1000 characters).

Oracle: the UR5 of example-robot-data with its meshes renamed into a package of another name,
laid out in a temporary folder: every mesh shape must come from that folder's files."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from robots_data import UR5, example_robot_urdf

PACKAGE = "my_arm_description"


@pytest.fixture
def uv(monkeypatch):
    import rbd_ros.sim.urdf_visuals as uv

    monkeypatch.setattr(uv, "_WARNED", set())
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    uv.set_package_paths([])
    yield uv
    uv.set_package_paths([])


def _layout(tmp: Path) -> tuple[Path, Path]:
    """(the URDF file, the real ur_description folder) with the UR5's meshes named
    ``package://my_arm_description/meshes/...``."""
    src = example_robot_urdf(UR5)
    share = src.parents[[p.name for p in src.parents].index("example-robot-data")]
    text = src.read_text().replace("package://example-robot-data/robots/ur_description/",
                                   f"package://{PACKAGE}/")
    assert text.count(f"package://{PACKAGE}/meshes/") >= 12
    urdf = tmp / "ws" / "robots" / "urdf" / "ur5.urdf"
    urdf.parent.mkdir(parents=True)
    urdf.write_text(text)
    return urdf, share / "robots" / "ur_description"


def _package(at: Path, real: Path, named: bool = True) -> Path:
    """A package folder at ``at`` (named PACKAGE, or any name with a package.xml naming it)."""
    at.mkdir(parents=True)
    (at / "meshes").symlink_to(real / "meshes")
    if not named:
        (at / "package.xml").write_text(f"<package format='3'><name>{PACKAGE}</name></package>")
    return at


def _mesh_files(uv, urdf: Path) -> list[str]:
    shapes, notes = uv.urdf_visuals(str(urdf), "world", "tool0")
    assert notes == [], notes
    files = [s.file for s in shapes if s.kind == "mesh"]
    assert len(files) >= 6  # every moving link of the UR5 has a mesh
    return files


@pytest.mark.parametrize("how", ["beside_named", "beside_package_xml", "above", "package_paths",
                                 "ros_package_path"])
def test_meshes_are_found_through_each_lookup_path(tmp_path: Path, uv, monkeypatch, how: str) -> None:
    urdf, real = _layout(tmp_path)
    if how == "beside_named":
        found = _package(tmp_path / "ws" / PACKAGE, real)
    elif how == "beside_package_xml":
        found = _package(tmp_path / "ws" / "arm_src", real, named=False)
    elif how == "above":  # the URDF inside the package: <pkg>/urdf/ur5.urdf
        found = tmp_path / "ws" / "robots"
        (found / "package.xml").write_text(f"<package><name>{PACKAGE}</name></package>")
        (found / "meshes").symlink_to(real / "meshes")
    elif how == "package_paths":
        found = _package(tmp_path / "elsewhere" / "src" / "arm_pkg", real, named=False)
        uv.set_package_paths([tmp_path / "elsewhere"])
    else:
        found = _package(tmp_path / "overlay" / PACKAGE, real)
        monkeypatch.setenv("ROS_PACKAGE_PATH", f"/nonexistent{os.pathsep}{tmp_path / 'overlay'}")
    files = _mesh_files(uv, urdf)
    assert all(f.startswith(str(found.resolve()) + os.sep) or f.startswith(str(found) + os.sep)
               for f in files), files[:3]


def test_package_paths_come_before_the_folders_beside_the_urdf(tmp_path: Path, uv) -> None:
    urdf, real = _layout(tmp_path)
    _package(tmp_path / "ws" / PACKAGE, real)
    given = _package(tmp_path / "given" / PACKAGE, real)
    uv.set_package_paths([tmp_path / "given"])
    assert all(f.startswith(str(given)) for f in _mesh_files(uv, urdf))


def test_a_package_found_nowhere_is_one_short_note_saying_where_it_looked(tmp_path: Path, uv) -> None:
    urdf, _ = _layout(tmp_path)
    with pytest.warns(UserWarning, match=f"package '{PACKAGE}' not found") as caught:
        shapes, notes = uv.urdf_visuals(str(urdf), "world", "tool0")
    assert [s for s in shapes if s.kind == "mesh"] == []
    assert len([w for w in caught if PACKAGE in str(w.message)]) == 1
    assert len(notes) == 2, notes  # the package, and one line naming the bare links
    assert "ROS_PACKAGE_PATH unset" in notes[0] and "--package-path" in notes[0]
    assert str(urdf.parent) in notes[0]
    assert all(len(n) < 600 for n in notes), [len(n) for n in notes]
