"""/rbd/forward_kinematics answers any URDF link by name (request ``links``, response ``poses``):
the dynamics server in its own process on TIAGo without hand (example-robot-data: a prismatic
torso lift, 29 fixed joints, rpy origins), against Pinocchio's frame placements to 1e-9; the old
fields unchanged; unknown names refused with a message naming them."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf
from urdf_oracles import pin_reference

pytest.importorskip("pinocchio")
from rbd_ros.lie.so3 import pose_matrix
from rbd_ros.urdf import load_conversion

TIAGO = "tiago_description/robots/tiago_no_hand.urdf"
TIP = "arm_tool_link"
LINKS = ["base_footprint", "torso_lift_link", "xtion_rgb_optical_frame", "arm_4_link", TIP,
         "wrist_ft_tool_link", "base_imu_link"]


def _matrix(pose) -> np.ndarray:
    p, o = pose.position, pose.orientation
    return pose_matrix([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])


@pytest.fixture(scope="module")
def setup():
    from ros_helpers import served_client

    path = str(example_robot_urdf(TIAGO))
    conv = load_conversion(path, tip_link=TIP)
    with served_client("fkname", f"urdf_path:={path}", f"tip_link:={TIP}") as c:
        yield c, conv


def _request(client, names, q, links):
    req = client._srv.ForwardKinematics.Request(joint_names=list(names), positions=[float(v) for v in q],
                                                links=list(links))
    return client._send_until_answered(client._clients["forward_kinematics"], req, 5.0)


@pytest.mark.slow
def test_fk_by_link_name_equals_pinocchio(setup):
    client, conv = setup
    m = conv.model
    ref = pin_reference(conv.urdf_xml, m, conv.positions)
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(10):
        q = rng.uniform(np.maximum(m.lower, -np.pi), np.minimum(m.upper, np.pi))
        order = rng.permutation(m.dof)  # joints in any order
        res = _request(client, [m.joint_names[i] for i in order], q[order], LINKS)
        assert res.success, res.message
        assert len(res.poses) == len(LINKS) and len(res.link_poses) == m.dof + 1  # old fields kept
        theirs = ref.link_poses(q, LINKS)
        worst = max(worst, max(float(np.abs(_matrix(p) - theirs[ln]).max()) for p, ln in zip(res.poses, LINKS)))
        assert np.abs(_matrix(res.tool_pose) - theirs[TIP]).max() < 1e-9
    assert worst < 1e-9, worst


def test_fk_without_links_answers_no_poses(setup):
    client, conv = setup
    res = _request(client, conv.model.joint_names, np.zeros(conv.model.dof), [])
    assert res.success and len(res.poses) == 0 and len(res.link_poses) == conv.model.dof + 1


def test_fk_unknown_links_are_named(setup):
    client, conv = setup
    res = _request(client, conv.model.joint_names, np.zeros(conv.model.dof), ["arm_4_link", "arm_4_lnk", "gripper"])
    assert not res.success
    assert "'arm_4_lnk' (did you mean 'arm_4_link'?)" in res.message and "'gripper'" in res.message
    assert len(res.poses) == 0
