"""``model_to_urdf`` of a model whose tip is the last joint's own link (issue 32: the URDF had
that link twice, and urdfdom refused it).  Oracle: Pinocchio on the exported URDF against the
source URDF's tip pose (its own parse, not our kernels)."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")


def test_tip_on_the_last_joints_link_exports_once_and_keeps_its_pose() -> None:
    from rbd_ros.model.urdf_export import model_to_urdf
    from rbd_ros.urdf import load_conversion

    path = str(example_robot_urdf("ur_description/urdf/ur5_robot.urdf"))
    model = load_conversion(path, tip_link="wrist_3_link").model
    assert model.link_names[-1] == model.tip_link == "wrist_3_link"
    text = model_to_urdf(model)
    assert text.count('<link name="wrist_3_link"') == 1 and '<link name="wrist_3_link_mdh"' in text
    ours, theirs = pin.buildModelFromXML(text), pin.buildModelFromUrdf(path)
    d_ours, d_theirs = ours.createData(), theirs.createData()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-np.pi, np.pi, model.dof)
        q_theirs = np.zeros(theirs.nq)
        for name, value in zip(model.joint_names, q, strict=True):
            q_theirs[theirs.joints[theirs.getJointId(name)].idx_q] = value
        pin.framesForwardKinematics(ours, d_ours, q)
        pin.framesForwardKinematics(theirs, d_theirs, q_theirs)
        a = d_ours.oMf[ours.getFrameId("wrist_3_link")]
        b = d_theirs.oMf[theirs.getFrameId("wrist_3_link")]
        b = d_theirs.oMf[theirs.getFrameId("base_link")].inverse() * b  # from the model's base
        assert np.abs(a.homogeneous - b.homogeneous).max() < 1e-9
