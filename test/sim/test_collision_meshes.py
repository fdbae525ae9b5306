"""A scene touches the URDF's collision shapes (issue 30, item 1): meshes where MuJoCo loads
them, the link capsules otherwise.  Oracles: the STL files read here with numpy, placed by
Pinocchio's forward kinematics of the URDF (not our converter) and the URDF's own
``<collision><origin>``; MuJoCo's own contact distances; the capsule model (urdf=None) as
the model built before; MuJoCo's binary model files (no scene: bit-identical)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from robots_data import UR5, example_robot_urdf
from urdf_oracles import pinocchio_link_poses, stl_vertices

XARM7 = "xarm_description/urdf/xarm7.urdf"
KINOVA = "kinova_description/robots/kinova.urdf"


def _quiet(level, msg):
    return None


def _rpy(rpy) -> np.ndarray:
    r, p, y = rpy
    Rx = np.array([[1, 0, 0], [0, np.cos(r), -np.sin(r)], [0, np.sin(r), np.cos(r)]])
    Ry = np.array([[np.cos(p), 0, np.sin(p)], [0, 1, 0], [-np.sin(p), 0, np.cos(p)]])
    Rz = np.array([[np.cos(y), -np.sin(y), 0], [np.sin(y), np.cos(y), 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _collision_meshes(path: Path) -> dict[str, list[np.ndarray]]:
    """Per URDF link, its collision meshes' vertices in the link frame (origin and scale
    applied), read from the XML and the STL files directly."""
    share = path.parents[[p.name for p in path.parents].index("example-robot-data") + 1]
    out: dict[str, list[np.ndarray]] = {}
    for link in ET.parse(path).getroot().iter("link"):
        for col in link.iter("collision"):
            mesh = col.find("geometry/mesh")
            if mesh is None:
                continue
            o = col.find("origin")
            xyz = [float(v) for v in (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()]
            rpy = [float(v) for v in (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()]
            scale = [float(v) for v in mesh.get("scale", "1 1 1").split()]
            v = stl_vertices(share / mesh.get("filename")[len("package://"):]) * scale
            out.setdefault(link.get("name"), []).append(v @ _rpy(rpy).T + xyz)
    return out


def _robot_geoms(m, kind=None):
    import mujoco

    from rbd_ros.sim.mujoco_model import ROBOT_BITS

    return [g for g in range(m.ngeom) if (m.geom_contype[g], m.geom_conaffinity[g]) == ROBOT_BITS
            and (kind is None or m.geom_type[g] == getattr(mujoco.mjtGeom, kind))]


def _plane(height: float):
    from rbd_ros.sim.scene import load_scene

    return load_scene({"name": "floor", "objects": [{
        "name": "floor", "type": "plane", "size": [0, 0],
        "pose": {"xyz": [0.0, 0.0, float(height)], "rpy": [0, 0, 0]}}]})


def _sim(model, scene, urdf):
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    return Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0), scene=scene,
                     urdf=None if urdf is None else str(urdf), log=_quiet)


def _saved(m) -> bytes:
    import mujoco

    buf = np.zeros(mujoco.mj_sizeModel(m), np.uint8)
    mujoco.mj_saveModel(m, None, buf)
    return buf.tobytes()


@pytest.mark.parametrize("relpath", [UR5, XARM7])
def test_meshes_sit_where_pinocchio_puts_the_urdf_links(relpath) -> None:
    """Every moving link's collision mesh is a massless robot-contact mesh geom on its body,
    and its vertices (MuJoCo's, world) span exactly the box of the STL's own vertices placed by
    Pinocchio's FK at a random pose (1e-6 m); the bodies' inertials are the capsule model's."""
    import mujoco

    from rbd_ros.sim.mujoco_model import COLLISION_GROUP, ROBOT_FRICTION
    from rbd_ros.urdf import load_model

    path = example_robot_urdf(relpath)
    model = load_model(str(path))
    sim = _sim(model, _plane(-5.0), path)
    m, d = sim.mj_model, sim.mj_data
    q = np.random.default_rng(3).uniform(np.maximum(model.lower, -2.5), np.minimum(model.upper, 2.5))
    d.qpos[sim.qpos_adr] = q
    mujoco.mj_forward(m, d)
    oracle = _collision_meshes(path)
    poses = pinocchio_link_poses(path, model, q)
    meshes = _robot_geoms(m, "mjGEOM_MESH")
    on = {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g]) for g in meshes}
    assert on == set(model.link_names)  # every moving body: no capsule left
    assert not _robot_geoms(m, "mjGEOM_CAPSULE")
    for g in meshes:
        assert m.geom_group[g] == COLLISION_GROUP and np.allclose(m.geom_friction[g], ROBOT_FRICTION)
        k = m.geom_dataid[g]
        local = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
        world = local @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]
        body = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g])
        boxes = [np.r_[w.min(0), w.max(0)] for v in oracle[body]  # that link's own meshes
                 for w in [v @ poses[body][:3, :3].T + poses[body][:3, 3]]]
        mine = np.r_[world.min(0), world.max(0)]
        err = min(np.abs(b - mine).max() for b in boxes)
        assert err < 1e-6, (body, err)
    assert len(meshes) == sum(len(oracle[link]) for link in model.link_names)
    capsules = _sim(model, _plane(-5.0), None).mj_model
    assert np.array_equal(capsules.body_mass, m.body_mass)
    assert np.array_equal(capsules.body_inertia, m.body_inertia)


@pytest.mark.parametrize("relpath", [UR5, XARM7])
def test_a_plane_touches_the_lowest_mesh_vertex_not_the_capsule(relpath) -> None:
    """At a pose with the arm folded down, a plane 3 mm above the lowest collision-mesh vertex
    (STL + Pinocchio) meets the arm 3 mm deep (MuJoCo's contact distance) on that link's body;
    3 mm below it, nothing touches.  The capsule model meets the same plane elsewhere
    (another depth): the meshes decide."""
    import mujoco

    from rbd_ros.sim.mujoco_model import TIP_RADIUS
    from rbd_ros.urdf import load_model

    path = example_robot_urdf(relpath)
    model = load_model(str(path))
    meshes = {k: v for k, v in _collision_meshes(path).items() if k in model.link_names}
    probe = _sim(model, _plane(-5.0), path)
    rng = np.random.default_rng(7)
    for _ in range(50):  # a pose whose lowest point is a link, not the probe's tip sphere
        q = rng.uniform(np.maximum(model.lower, -2.5), np.minimum(model.upper, 2.5))
        poses = pinocchio_link_poses(path, model, q)
        lowest, link = min((min(float((v @ poses[name][:3, :3].T + poses[name][:3, 3])[:, 2].min())
                                for v in vs), name) for name, vs in meshes.items())
        probe.mj_data.qpos[probe.qpos_adr] = q
        mujoco.mj_forward(probe.mj_model, probe.mj_data)
        if probe.mj_data.geom("tip").xpos[2] - TIP_RADIUS > lowest + 0.01:
            break
    depths = {}
    for urdf in (path, None):
        for delta in (0.003, -0.003):
            sim = _sim(model, _plane(lowest + delta), urdf)
            m, d = sim.mj_model, sim.mj_data
            d.qpos[sim.qpos_adr] = q
            mujoco.mj_forward(m, d)
            dist = [(d.contact[i].dist, d.contact[i].geom) for i in range(d.ncon)]
            depths[urdf is None, delta] = dist
    deepest, geoms = min(depths[False, 0.003])
    assert deepest == pytest.approx(-0.003, abs=1e-6), depths[False, 0.003]
    body_of = {c[1][0] for c in depths[False, 0.003]} | {c[1][1] for c in depths[False, 0.003]}
    sim = _sim(model, _plane(lowest + 0.003), path)
    bodies = {mujoco.mj_id2name(sim.mj_model, mujoco.mjtObj.mjOBJ_BODY, sim.mj_model.geom_bodyid[g])
              for g in body_of}
    assert link in bodies, (link, bodies)
    assert depths[False, -0.003] == []
    capsule = min(depths[True, 0.003], default=(np.inf, None))[0]
    assert abs(capsule - deepest) > 0.005, (capsule, deepest)  # the capsules are elsewhere


def test_no_scene_is_bit_identical_with_a_urdf() -> None:
    """Without a scene the URDF changes nothing: the same MuJoCo model, byte for byte (and
    with a scene but no URDF, a model file's case, the capsules of before)."""
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.urdf import load_model

    path = example_robot_urdf(UR5)
    model = load_model(str(path))
    with_urdf, without = _sim(model, None, path), _sim(model, None, None)
    assert with_urdf.collision == () and _saved(with_urdf.mj_model) == _saved(without.mj_model)
    table = _sim(model, load_scene("table"), None)
    geoms = _robot_geoms(table.mj_model)  # a capsule (a sphere where it has no length) per
    assert table.collision == () and len(geoms) == model.dof  # body, the tip on the last
    assert not _robot_geoms(table.mj_model, "mjGEOM_MESH")


def test_a_dae_link_keeps_its_capsule_with_a_warning_naming_it(monkeypatch) -> None:
    """The Kinova's collision meshes are COLLADA (.dae, MuJoCo reads none): every body keeps
    its capsule, the model is the capsule model's byte for byte, and one UserWarning names the
    links and the file MuJoCo cannot read."""
    import rbd_ros.sim.urdf_visuals as uv
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.urdf import load_model

    monkeypatch.setattr(uv, "_WARNED", set())
    path = example_robot_urdf(KINOVA)
    model = load_model(str(path))
    with pytest.warns(UserWarning, match=r"'j2s6s200_link_1' \(MuJoCo cannot read 'shoulder.dae'\)"):
        sim = _sim(model, load_scene("wall"), path)
    assert sim.collision == ()
    assert _saved(sim.mj_model) == _saved(_sim(model, load_scene("wall"), None).mj_model)


@pytest.mark.parametrize("mesh, why", [
    ("dae", "MuJoCo cannot read 'arm.dae'"),
    ("package://no_such_package/meshes/wrist2.stl",
     "'package://no_such_package/meshes/wrist2.stl' not found")])
def test_one_unloadable_link_falls_back_alone(tmp_path, monkeypatch, mesh, why) -> None:
    """A UR5 whose wrist 2 collision mesh is a .dae, or in a package found nowhere: that body
    gets the capsule, the note names it and why (and the missing package, in a UserWarning of
    its own), the other bodies keep their meshes."""
    import mujoco

    import rbd_ros.sim.urdf_visuals as uv
    from rbd_ros.urdf import load_model

    monkeypatch.setattr(uv, "_WARNED", set())
    path = example_robot_urdf(UR5)
    share = path.parents[[p.name for p in path.parents].index("example-robot-data")]
    if mesh == "dae":
        mesh = f"file://{example_robot_urdf('kinova_description/meshes/arm.dae')}"
    text = path.read_text().replace("package://example-robot-data", f"file://{share}")
    text = text.replace(f"file://{share}/robots/ur_description/meshes/ur5/collision/wrist2.stl", mesh)
    urdf = tmp_path / "ur5_dae_wrist.urdf"
    urdf.write_text(text)
    model = load_model(str(urdf))
    notes: list[str] = []
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    with pytest.warns(UserWarning) as caught:
        sim = Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0),
                        scene=_plane(-5.0), urdf=str(urdf), log=lambda level, msg: notes.append(msg))
    assert any("'wrist_2_link'" in str(w.message) for w in caught)
    if "no_such_package" in mesh:
        assert any("package 'no_such_package' not found" in str(w.message) for w in caught)
    m = sim.mj_model

    def body(g):
        return mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, m.geom_bodyid[g])

    tip = m.geom("tip").id
    round_ = (int(mujoco.mjtGeom.mjGEOM_CAPSULE), int(mujoco.mjtGeom.mjGEOM_SPHERE))  # not the box
    assert [body(g) for g in _robot_geoms(m) if g != tip and m.geom_type[g] in round_
            ] == ["wrist_2_link"]  # its capsule (a sphere: wrist 2's has no length)
    assert {body(g) for g in _robot_geoms(m, "mjGEOM_MESH")} == set(model.link_names) - {"wrist_2_link"}
    assert any(f"'wrist_2_link' ({why})" in n for n in notes), notes


def test_the_probe_reaches_past_the_last_links_mesh() -> None:
    """The joint-limited UR5's wrist 3 mesh reaches 8.2 cm past its origin (the tool) along
    the probe (the STL, read here): the 6 cm probe's tip (2.5 cm sphere) would end 3 mm
    beyond it, so the probe grows to put the tip's far side ``PROBE_MARGIN`` past the mesh,
    and in the press only the tip touches the table (MuJoCo's contacts, every cycle)."""
    import rbd_ros.sim.contact_task as ct
    from rbd_ros.sim.contact_site import PROBE_LENGTH, PROBE_MARGIN
    from rbd_ros.sim.mujoco_model import TIP_RADIUS
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.urdf import load_model

    path = example_robot_urdf("ur_description/urdf/ur5_joint_limited_robot.urdf")
    model = load_model(str(path))
    assert model.tip_link == "wrist_3_link"
    sim = _sim(model, load_scene("table"), path)
    shift = sim.model.tool[:3, 3] - model.tool[:3, 3]  # frame n: along the last joint axis
    along = model.tool[:3, :3].T @ shift / np.linalg.norm(shift)  # in the wrist 3 link frame
    reach = max(float((v @ along).max()) for v in _collision_meshes(path)["wrist_3_link"])
    assert reach + PROBE_MARGIN - TIP_RADIUS > PROBE_LENGTH + 0.01  # the old probe: too short
    assert np.linalg.norm(shift) == pytest.approx(reach + PROBE_MARGIN - TIP_RADIUS, abs=1e-6)
    other = []
    orig = ct.probe_contact

    def spy(sim, tip, out):
        d = sim.mj_data
        other.extend(i for i in range(d.ncon) if tip not in (d.contact[i].geom1, d.contact[i].geom2))
        return orig(sim, tip, out)

    ct.probe_contact = spy
    try:
        r = ct.run_press(model, "hybrid_force_position", force=10.0, urdf=str(path),
                         slide_time=1.0, retreat_time=0.2)
    finally:
        ct.probe_contact = orig
    assert other == [] and r.contact_lost == 0 and r.force_rms < 0.5, r.report()
