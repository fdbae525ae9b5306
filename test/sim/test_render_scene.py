"""The video of a press run draws the scene where the bridge placed it (issue 30): a
recording that names its scene keeps it, and the frame renderer's MuJoCo model has the table
and the probe, touching at the contact site's pose and ``approach`` m apart above it --
distances by MuJoCo's own geometry (``mj_geomDistance``) against ``contact_site``'s IK."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf


def test_recording_scene_drawn_where_the_bridge_puts_it(tmp_path) -> None:
    import mujoco

    from rbd_ros.sim.contact_site import contact_site
    from rbd_ros.sim.mujoco_model import TIP_RADIUS
    from rbd_ros.sim.render import FrameRenderer, Recording, coordinates, placed_scene
    from rbd_ros.urdf import load_conversion

    model = load_conversion(example_robot_urdf("ur_description/urdf/ur10_joint_limited_robot.urdf")).model
    site = contact_site(model)
    rec = Recording(np.array([0.0, 1.0]), np.vstack([site.q_above, site.q_touch]), scene="table")
    rec.save(tmp_path / "recording.npz")
    assert Recording.load(tmp_path / "recording.npz").scene == "table"
    assert placed_scene(model, "") == (None, model)  # no scene: the model as it was
    scene, probe = placed_scene(model, "table")
    r = FrameRenderer(probe, gl=False, scene=scene)
    m, d = r.m, r.d
    tip = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "tip")
    table = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "scene_table")
    assert tip >= 0 and table >= 0
    fromto = np.zeros(6)
    for q, gap in ((site.q_touch, 0.0), (site.q_above, site.approach)):
        d.qpos[r.adr] = coordinates(probe, q[None])[0]
        mujoco.mj_forward(m, d)
        dist = mujoco.mj_geomDistance(m, d, tip, table, 1.0, fromto)
        assert dist == pytest.approx(gap, abs=1e-6), (gap, TIP_RADIUS)
