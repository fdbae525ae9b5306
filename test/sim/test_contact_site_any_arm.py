"""Issue 41.1: any arm finds its contact site (``contact_site``), on arms no other test names.

* Alex's left arm, its base link the torso: the arm hangs from the shoulder (checked by
  Pinocchio below), and the grid about the base alone refused a table ("no contact site on a
  'top' surface ... 160 candidates tried"); the arm's own workspace has one (so has the
  human model's right arm from its clavicle, refused the same way before);
* TIAGo Pro's left arm, mounted on the side of its torso, rotated: the grid's wall normal
  came out along (-0.54, -0.84), which the press cannot force-control (its gains are per world
  axis: ``press_gains`` raised); now a world axis;
* the Unitree G1's left arm (hanging) and the Centauro's (6-DoF) get a table and a wall;
* a site that cannot be pressed names the constraint that failed for the best candidate.

The oracle for a site is Pinocchio's forward kinematics of the URDF itself (not our model):
at ``q_touch`` the probe's tip sits on the surface point, its axis along the normal, every
joint inside the URDF's limits."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

ARMS = {  # URDF, base link, tip link: arms no other test names
    "human": ("human_description/robots/human.urdf", "right_clavicle", "right_hand"),
    "tiago_pro": ("tiago_pro_description/robots/tiago_pro.urdf", "torso_lift_link", "arm_left_7_link"),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", "torso_link", "left_wrist_yaw_link"),
    "alex": ("alex_description/urdf/alex_nub_hands.urdf", "Torso", "LeftWristRollLink"),
    "centauro": ("centauro_description/urdf/centauro.urdf", "torso_2", "arm1_8"),
}


def _model(name: str):
    from rbd_ros.urdf import load_model

    path, base, tip = ARMS[name]
    return load_model(str(example_robot_urdf(path)), base_link=base, tip_link=tip)


def _pin_pose(name: str, model, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pinocchio: the tip link's pose in the base link's frame at the arm's ``q`` (the other
    joints at 0), and the arm's URDF limits."""
    import pinocchio as pin

    path, base, tip = ARMS[name]
    pm = pin.buildModelFromUrdf(str(example_robot_urdf(path)))
    data = pm.createData()
    qq = pin.neutral(pm)
    lo, hi = np.zeros(model.dof), np.zeros(model.dof)
    for i, jn in enumerate(model.joint_names):
        j = pm.getJointId(jn)
        qq[pm.idx_qs[j]] = q[i]
        lo[i], hi[i] = pm.lowerPositionLimit[pm.idx_qs[j]], pm.upperPositionLimit[pm.idx_qs[j]]
    pin.framesForwardKinematics(pm, data, qq)
    T = lambda link: data.oMf[pm.getFrameId(link)].homogeneous  # noqa: E731
    return np.linalg.inv(T(base)) @ T(tip), lo, hi


def _check_site(name: str, model, site) -> None:
    from rbd_ros.control.press_gains import press_gains
    from rbd_ros.sim.contact_site import LIMIT_MARGIN
    from rbd_ros.sim.mujoco_model import TIP_RADIUS

    T_tip, lo, hi = _pin_pose(name, model, site.q_touch)
    T_probe = T_tip @ np.linalg.inv(model.tool) @ site.tool  # frame n, then the probe
    np.testing.assert_allclose(T_probe[:3, 3], site.point + TIP_RADIUS * site.normal, atol=1e-4)
    z_n = (T_tip @ np.linalg.inv(model.tool))[:3, 2]
    assert abs(z_n @ site.normal) > 1.0 - 1e-6  # the last joint axis along the normal
    assert (site.q_touch > lo + LIMIT_MARGIN - 1e-9).all() and (site.q_touch < hi - LIMIT_MARGIN + 1e-9).all()
    assert np.isclose(np.abs(site.normal).max(), 1.0)  # a world axis: the press can force it
    press_gains("hybrid_force_position", {"selection": np.ones(6)}, site.normal, 10.0)


def test_the_hanging_arm_finds_a_table_below_its_shoulder() -> None:
    from rbd_ros.sim.contact_site import contact_site

    model = _model("alex")
    T0, _, _ = _pin_pose("alex", model, np.zeros(model.dof))
    assert T0[2, 3] < model.base[2, 3] - 0.25  # Pinocchio: at q = 0 the hand hangs below the shoulder
    site = contact_site(model, "top")
    assert site.normal[2] == 1.0 and site.point[2] < model.base[2, 3]  # a table, below the shoulder
    _check_site("alex", model, site)


@pytest.mark.parametrize("name", ["tiago_pro", "g1", "human", "centauro"])
def test_side_mounted_and_hanging_arms_find_a_table_and_a_wall(name: str) -> None:
    from rbd_ros.sim.contact_site import contact_site

    model = _model(name)
    for surface in ("top", "front"):
        site = contact_site(model, surface)
        assert (site.normal[2] == 1.0) == (surface == "top")
        _check_site(name, model, site)


def test_no_site_names_the_constraint_that_failed() -> None:
    from rbd_ros.sim.contact_site import contact_site

    model = _model("centauro")
    with pytest.raises(ValueError, match=r"failed on effort limit: 'j_arm1_\d' needs") as exc:
        contact_site(model, "top", force=5e4)  # no arm presses 50 kN
    assert "joint positions of the arm's workspace" in str(exc.value)
    with pytest.raises(ValueError, match="surface must be one of top, front"):
        contact_site(model, "side")
    with pytest.raises(ValueError, match="force must be"):
        contact_site(model, "top", force=float("nan"))


def test_the_site_keeps_the_arms_collision_meshes_off_the_table() -> None:
    """TIAGo Pro's wrist meshes reach past its frame origins: a site whose origins cleared the
    table had links 5 and 6 lying on it (every slide cycle of the press lost).  Oracle:
    MuJoCo's own contact list with the table placed, at the site's touching pose: only the
    probe touches it."""
    import mujoco

    from rbd_ros.sim.scene import load_scene
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    model = _model("tiago_pro")
    urdf = str(example_robot_urdf(ARMS["tiago_pro"][0]))
    sim = Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0),
                    scene=load_scene("table"), urdf=urdf, log=lambda lv, s: None)
    m, d = sim.mj_model, sim.mj_data
    table, tip = m.geom("scene_table").id, m.geom("tip").id
    for q in (sim.site.q_above, sim.site.q_touch):
        d.qpos[sim.qpos_adr] = q
        mujoco.mj_forward(m, d)
        others = {m.body(int(m.geom_bodyid[g])).name for i in range(d.ncon)
                  for g in (d.contact[i].geom1, d.contact[i].geom2)
                  if table in (d.contact[i].geom1, d.contact[i].geom2) and g not in (table, tip)}
        assert not others, others


@pytest.mark.parametrize("normal", [(1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0)])
def test_a_wall_facing_any_world_axis_is_placed_behind_its_face(normal) -> None:
    """The workspace search gives walls facing +x too (Alex's left arm): ``place_scene`` turned
    the wall's front face (local -x) onto +x by a half turn about x, which leaves x as it is:
    the wall stood 4 cm (its thickness) in front of the site and impedance pressed 20 N.
    Oracle: the box's own geometry, by hand: its centre half a thickness behind the contact
    point, its front face's outward normal the normal."""
    from rbd_ros.sim.scene import load_scene, place_scene

    n = np.array(normal)
    contact = np.array([0.3, -0.2, 0.1])
    wall = next(o for o in place_scene(load_scene("wall"), contact, n).objects if o.name == "wall")
    R, centre = wall.pose[:3, :3], wall.pose[:3, 3]
    np.testing.assert_allclose(R @ [-1.0, 0.0, 0.0], n, atol=1e-12)  # the front face's normal
    np.testing.assert_allclose(centre, contact - 0.5 * wall.size[0] * n, atol=1e-12)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.isclose(np.linalg.det(R), 1.0)
