"""A relative mesh path in URDF *text* (a ``robot_description`` string: no folder to resolve
it from) is not found, with a note saying so, rather than looked up in the process's working
directory, where an unrelated file of the same name would be used silently (before: it was).
The same URDF as a file still finds the mesh beside it."""
from __future__ import annotations

import shutil

import pytest

from robots_data import UR5, example_robot_urdf

MESHES = "robots/ur_description/meshes/ur5/collision"


def _ur5_text(relative: str) -> str:
    """The UR5 URDF with file:// meshes, wrist 3's collision mesh at the relative path."""
    path = example_robot_urdf(UR5)
    share = path.parents[[p.name for p in path.parents].index("example-robot-data")]
    text = path.read_text().replace("package://example-robot-data", f"file://{share}")
    old = f'<mesh filename="file://{share}/{MESHES}/wrist3.stl"/>'
    assert text.count(old) == 1
    return text.replace(old, f'<mesh filename="{relative}"/>')


def test_a_relative_mesh_in_urdf_text_is_not_taken_from_the_working_directory(tmp_path, monkeypatch) -> None:
    import rbd_ros.sim.urdf_visuals as uv
    from rbd_ros.urdf import load_model

    monkeypatch.setattr(uv, "_WARNED", set())
    (tmp_path / "meshes").mkdir()
    share = example_robot_urdf(UR5).parents[3]
    shutil.copy(share / MESHES / "forearm.stl", tmp_path / "meshes" / "wrist3.stl")  # a stranger
    monkeypatch.chdir(tmp_path)
    text = _ur5_text("meshes/wrist3.stl")
    model = load_model(text)
    with pytest.warns(UserWarning, match=r"'wrist_3_link' \('meshes/wrist3.stl' is a relative path "
                                         r"in URDF text \(no folder to find it in\)\)"):
        shapes, _ = uv.urdf_collisions(text, model.base_link, model.tip_link, model)
    assert {s.body for s in shapes} == set(range(model.dof - 1))  # wrist 3 (the last body): none
    # the same URDF as a file finds the mesh beside it (its folder, not the CWD)
    urdf = tmp_path / "ur5.urdf"
    urdf.write_text(text)
    shapes, notes = uv.urdf_collisions(str(urdf), model.base_link, model.tip_link, model)
    assert notes == [] and [s.file for s in shapes if s.body == model.dof - 1 and s.kind == "mesh"] == [
        str(tmp_path / "meshes" / "wrist3.stl")]
