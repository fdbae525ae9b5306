"""A URDF ``<mesh scale>`` on a collision mesh (issue 30, item 1, reviewed): a scale MuJoCo
cannot use (0, NaN, Inf, so small the mesh has no surface) leaves that body its capsule with
a note naming the link and the scale, instead of crashing the simulator (0, tiny) or
putting NaN vertices into MuJoCo silently (NaN, Inf); a usable one, mirrored and anisotropic,
puts MuJoCo's vertices where the STL's own vertices times the scale sit, placed by
Pinocchio's forward kinematics of the URDF (oracle: numpy and Pinocchio, not our converter)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robots_data import UR5, example_robot_urdf
from urdf_oracles import pinocchio_link_poses, stl_vertices

MESHES = "robots/ur_description/meshes/ur5/collision"


def _ur5_with(tmp_path: Path, link_mesh: str, scale: str) -> Path:
    """The UR5 URDF with file:// meshes and ``scale`` on ``link_mesh``'s collision mesh."""
    path = example_robot_urdf(UR5)
    share = path.parents[[p.name for p in path.parents].index("example-robot-data")]
    text = path.read_text().replace("package://example-robot-data", f"file://{share}")
    uri = f"file://{share}/{MESHES}/{link_mesh}"
    old = f'<mesh filename="{uri}"/>'
    assert text.count(old) == 1
    urdf = tmp_path / "ur5_scaled.urdf"
    urdf.write_text(text.replace(old, f'<mesh filename="{uri}" scale="{scale}"/>'))
    return urdf


def _sim(urdf: Path, log):
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.sim.simulator import BridgeConfig, Simulator
    from rbd_ros.urdf import load_model

    model = load_model(str(urdf))
    return model, Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0),
                            scene=load_scene("table"), urdf=str(urdf), log=log)


@pytest.mark.parametrize("scale, why", [
    ("0 0 0", "'wrist3.stl' has scale [0.0, 0.0, 0.0]: not 3 finite non-zero numbers"),
    ("nan 1 1", "'wrist3.stl' has scale [nan, 1.0, 1.0]: not 3 finite non-zero numbers"),
    ("1 inf 1", "'wrist3.stl' has scale [1.0, inf, 1.0]: not 3 finite non-zero numbers"),
    ("1e-9 1e-9 1e-9", "MuJoCo cannot read 'wrist3.stl' at scale [1e-09, 1e-09, 1e-09]")])
def test_an_unusable_scale_keeps_the_capsule_and_says_why(tmp_path, monkeypatch, scale, why) -> None:
    """Before: 0 and 1e-9 raised MuJoCo's 'mesh surface area is too small' out of the
    Simulator (a scene could not be built at all); NaN and Inf were accepted silently."""
    import mujoco

    import rbd_ros.sim.urdf_visuals as uv

    monkeypatch.setattr(uv, "_WARNED", set())
    notes: list[str] = []
    with pytest.warns(UserWarning, match="'wrist_3_link'"):
        model, sim = _sim(_ur5_with(tmp_path, "wrist3.stl", scale), lambda lv, s: notes.append(s))
    assert any(f"'wrist_3_link' ({why})" in n for n in notes), notes
    m = sim.mj_model
    meshes = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g])
              for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH
              and m.geom_contype[g] != 0}
    assert meshes == set(model.link_names) - {"wrist_3_link"}
    assert np.isfinite(m.mesh_vert).all()


def test_a_mirrored_anisotropic_scale_puts_the_vertices_where_the_urdf_says(tmp_path) -> None:
    """forearm.stl at scale (0.5, -0.5, 2): MuJoCo's world vertex box equals the box of the
    STL's vertices times the scale, placed by Pinocchio's FK at a random pose, to 1e-6 m."""
    import mujoco

    urdf = _ur5_with(tmp_path, "forearm.stl", "0.5 -0.5 2")
    model, sim = _sim(urdf, lambda lv, s: None)
    q = np.random.default_rng(3).uniform(-1.0, 1.0, model.dof)
    m, d = sim.mj_model, sim.mj_data
    d.qpos[sim.qpos_adr] = q
    mujoco.mj_kinematics(m, d)
    body = m.body("forearm_link").id
    (g,) = [g for g in range(m.ngeom) if m.geom_bodyid[g] == body
            and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH and m.geom_contype[g] != 0]
    k = m.geom_dataid[g]
    local = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
    world = local @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]

    T = pinocchio_link_poses(urdf, model, q)["forearm_link"]
    share = example_robot_urdf(UR5).parents[3]
    v = stl_vertices(share / MESHES / "forearm.stl") * np.array([0.5, -0.5, 2.0])
    oracle = v @ T[:3, :3].T + T[:3, 3]
    np.testing.assert_allclose(world.min(0), oracle.min(0), atol=1e-6)
    np.testing.assert_allclose(world.max(0), oracle.max(0), atol=1e-6)
