"""Issue 41.1 re-verified: four more arms no other test names, mounted as users mount them,
find a table and a wall (``contact_site``); one that nothing fits says which constraint failed.

* TALOS's left arm from its torso: a humanoid arm hanging from the shoulder;
* a UR5 (``ur5_gripper.urdf``) mounted upside down (its base rotated pi about x): the arm
  hangs from its base link, the table below it;
* PR2's left arm with its torso on a wall (the base's z horizontal, rotated -pi/2 about y);
* TIAGo++'s right arm (``tiago_dual.urdf``), mounted on the side of its torso;
* the iCub's right arm (a child's arm: 0.45 N m at the wrist) refuses a 10 N press and names
  the constraint; when nothing fits, the 8 cm approach is walked down in 1 cm steps
  (``contact_site._descend``:
  one IK step from above to the surface moved its elbow 0.45 rad, refused as a "jump").

The oracle: Pinocchio's forward kinematics of the URDF itself with the mount applied, and its
gravity (rotated into the base frame) and frame Jacobian for the press's torques: at
``q_touch`` the probe's tip sits on the surface point, its axis along the normal, every joint
inside the URDF's limits, ``|g + J^T (-f n)|`` within the effort limits."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from robots_data import example_robot_urdf


def _rot(axis: int, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    i, j = [k for k in range(3) if k != axis]
    T = np.eye(4)
    T[i, i], T[i, j], T[j, i], T[j, j] = c, -s, s, c
    return T


ARMS = {  # URDF, base link, tip link, the mount (world <- the base link)
    "talos_left": ("talos_data/robots/talos_reduced.urdf", "torso_2_link", "arm_left_7_link", np.eye(4)),
    "ur5_ceiling": ("ur_description/urdf/ur5_gripper.urdf", "", "", _rot(0, np.pi)),
    "pr2_left_wall": ("pr2_description/urdf/pr2.urdf", "torso_lift_link", "l_wrist_roll_link", _rot(1, -np.pi / 2)),
    "tiago_dual_right": ("tiago_description/robots/tiago_dual.urdf", "torso_lift_link", "arm_right_7_link",
                         np.eye(4)),
    "icub_right": ("icub_description/robots/icub_reduced.urdf", "chest", "r_hand", np.eye(4)),
}


def _model(name: str):
    from rbd_ros.urdf import load_model

    path, base, tip, mount = ARMS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_model(str(example_robot_urdf(path)), base_link=base or None, tip_link=tip or None)
    return model.replace(base=mount @ model.base)


def _pinocchio(name: str, model, q: np.ndarray, point: np.ndarray, force: np.ndarray):
    """Pinocchio at the arm's ``q`` (the other joints at 0): the tip link's pose in the world
    (the mount applied), the URDF limits, and the torques ``g + J^T f`` of a force ``f``
    (world) at the world ``point`` on the tip link."""
    import pinocchio as pin

    path, base, tip, mount = ARMS[name]
    pm = pin.buildModelFromUrdf(str(example_robot_urdf(path)))
    data = pm.createData()
    qq = pin.neutral(pm)
    idx = []
    lo, hi = np.zeros(model.dof), np.zeros(model.dof)
    for i, jn in enumerate(model.joint_names):
        j = pm.getJointId(jn)
        idx.append(pm.idx_vs[j])
        k = pm.idx_qs[j]
        if pm.nqs[j] == 2:  # a continuous joint: (cos, sin), no limits
            qq[k:k + 2] = np.cos(q[i]), np.sin(q[i])
            lo[i], hi[i] = -np.inf, np.inf
        else:
            qq[k] = q[i]
            lo[i], hi[i] = pm.lowerPositionLimit[k], pm.upperPositionLimit[k]
    pin.framesForwardKinematics(pm, data, qq)
    T = lambda link: data.oMf[pm.getFrameId(link)].homogeneous  # noqa: E731
    T_base = T(base) if base else np.eye(4)
    W = mount @ np.linalg.inv(T_base)  # world <- Pinocchio's world
    tip_link = tip or model.tip_link
    T_tip = W @ T(tip_link)
    pm.gravity.linear = W[:3, :3].T @ np.array([0.0, 0.0, -9.81])
    g = pin.computeGeneralizedGravity(pm, data, qq)[idx]
    pin.computeJointJacobians(pm, data, qq)
    J = pin.getFrameJacobian(pm, data, pm.getFrameId(tip_link), pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)[:, idx]
    Jv = W[:3, :3] @ (J[:3] - _skew(W[:3, :3].T @ (point - T_tip[:3, 3])) @ J[3:])  # at the point, world
    return T_tip, lo, hi, g + Jv.T @ force


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


@pytest.mark.parametrize("name", ["talos_left", "ur5_ceiling", "pr2_left_wall", "tiago_dual_right"])
def test_mounted_arms_find_a_table_and_a_wall(name: str) -> None:
    from rbd_ros.control.press_gains import press_gains
    from rbd_ros.sim.contact_site import LIMIT_MARGIN, contact_site
    from rbd_ros.sim.mujoco_model import TIP_RADIUS

    model = _model(name)
    base_z = model.base[2, 3]
    if name == "talos_left":  # Pinocchio: at q = 0 the arm hangs below its shoulder
        T0 = _pinocchio(name, model, np.zeros(model.dof), np.zeros(3), np.zeros(3))[0]
        assert T0[2, 3] < base_z - 0.25, T0[:3, 3]
    if name == "ur5_ceiling":  # upside down: the base link's z points down
        assert model.base[2, 2] == pytest.approx(-1.0)
    if name == "pr2_left_wall":  # on a wall: the torso's z horizontal
        assert abs(model.base[2, 2]) < 1e-9
    for surface in ("top", "front"):
        site = contact_site(model, surface, force=10.0)
        assert (site.normal[2] == 1.0) == (surface == "top")
        assert np.isclose(np.abs(site.normal).max(), 1.0)  # a world axis: the press can force it
        tip = site.point + TIP_RADIUS * site.normal  # the probe's tip centre at q_touch
        T_tip, lo, hi, tau = _pinocchio(name, model, site.q_touch, tip, -10.0 * site.normal)
        T_probe = T_tip @ np.linalg.inv(model.tool) @ site.tool
        np.testing.assert_allclose(T_probe[:3, 3], tip, atol=1e-4)
        assert abs((T_tip @ np.linalg.inv(model.tool))[:3, 2] @ site.normal) > 1.0 - 1e-6  # last axis along n
        assert (site.q_touch > lo + LIMIT_MARGIN - 1e-9).all() and (site.q_touch < hi - LIMIT_MARGIN + 1e-9).all()
        assert (np.abs(tau) <= model.effort_limit + 1e-9).all(), (tau, model.effort_limit)  # 10 N pressed
        if surface == "top" and name in ("talos_left", "ur5_ceiling"):
            assert site.point[2] < base_z  # the table under the hanging arm
        press_gains("hybrid_force_position", {"selection": np.ones(6)}, site.normal, 10.0)


def test_a_small_arm_that_cannot_press_names_the_constraint() -> None:
    from rbd_ros.sim.contact_site import contact_site

    model = _model("icub_right")
    for surface in ("top", "front"):
        with pytest.raises(ValueError, match=r"the best candidate: the probe at .* failed on "
                                             r"(joint limit|effort limit|orientation|reach|clearance): '?r_") as exc:
            contact_site(model, surface, force=10.0)
        # the approach is walked down: no longer refused as a joint jump between its two ends
        assert "failed on jump" not in str(exc.value)
