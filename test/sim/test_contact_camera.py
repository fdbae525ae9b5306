"""The press video frames the contact (issue 30): with a placed scene the free camera looks at
the slide's middle on the surface from ``CONTACT_VIEW`` scale, so the probe at its touching pose
is near the image centre and much closer than the whole-workspace framing had it.  Camera
position and axes by MuJoCo's own ``mjv_updateScene`` (the oracle), the probe by MuJoCo's FK."""
from __future__ import annotations

import numpy as np

from robots_data import example_robot_urdf


def _view(r, probe, q):
    import mujoco

    from rbd_ros.sim.render import coordinates

    r.d.qpos[r.adr] = coordinates(probe, q[None])[0]
    mujoco.mj_forward(r.m, r.d)
    mujoco.mjv_updateScene(r.m, r.d, r.option, r.perturb, r.camera, mujoco.mjtCatBit.mjCAT_ALL, r.scene)
    cam = r.scene.camera[0]
    eye, fwd = np.array(cam.pos), np.array(cam.forward)
    tip = r.d.geom_xpos[mujoco.mj_name2id(r.m, mujoco.mjtObj.mjOBJ_GEOM, "tip")]
    to = tip - eye
    angle = np.degrees(np.arccos(to @ fwd / np.linalg.norm(to)))
    return angle, float(np.linalg.norm(to))


def test_the_camera_frames_the_contact() -> None:
    from rbd_ros.sim.contact_site import contact_site
    from rbd_ros.sim.render import FrameRenderer, placed_scene
    from rbd_ros.urdf import load_conversion

    model = load_conversion(example_robot_urdf("ur_description/urdf/ur5_robot.urdf")).model
    site = contact_site(model)
    scene, probe = placed_scene(model, "table")
    near = FrameRenderer(probe, gl=False, scene=scene)
    wide = FrameRenderer(probe, gl=False)  # no scene: the whole workspace
    a_near, d_near = _view(near, probe, site.q_touch)
    a_wide, d_wide = _view(wide, probe, site.q_touch)
    fovy = float(near.m.vis.global_.fovy)
    assert a_near < 0.25 * fovy, (a_near, fovy)  # near the centre of the view
    assert d_near < 0.6 * d_wide, (d_near, d_wide)  # and closer than the workspace view had it
