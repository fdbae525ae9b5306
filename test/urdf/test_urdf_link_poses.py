"""Every URDF link's pose (``Robot.urdf_link_poses``, ``rbd_ros.model.link_frames``) and the
parent -> child transforms robot_state_publisher would broadcast, against Pinocchio's frame
placements (``buildModelFromUrdf`` + ``framesForwardKinematics``, off-chain joints locked at the
converter's positions) over random configurations, to 1e-9 (measured: ~1e-12).

Robots: TIAGo without hand (example-robot-data, named by no other test: a prismatic torso lift
on the chain, 29 fixed joints, rpy origins, wheel / head branches locked) and a synthetic URDF
with a tilted prismatic axis, rpy origins everywhere, fixed links after the tip, a locked
branch and a link above base_link (the fixed world)."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros import Robot
from rbd_ros.urdf import load_conversion
from robots_data import example_robot_urdf
from urdf_oracles import pin_reference

pin = pytest.importorskip("pinocchio")

TOL = 1e-9
TIAGO = "tiago_description/robots/tiago_no_hand.urdf"


def _inertial(m: float = 1.0) -> str:
    return (f'<inertial><mass value="{m}"/><origin xyz="0.01 0.02 0.03"/>'
            '<inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0.001" ixz="0" iyz="0"/></inertial>')


def _joint(name, kind, parent, child, xyz, rpy, axis=None, limit=True) -> str:
    ax = f'<axis xyz="{axis}"/>' if axis else ""
    lim = '<limit lower="-1.5" upper="1.5" effort="10" velocity="2"/>' if limit and kind != "fixed" else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{lim}</joint>')


SYNTHETIC = "<robot name='synthetic'>" + "".join(
    f'<link name="{ln}">{_inertial()}</link>'
    for ln in ("world", "base_link", "l1", "l2", "l3", "sensor", "tool", "finger", "tcp")) + "".join((
        _joint("world_joint", "fixed", "world", "base_link", "0.3 -0.2 0.5", "0.1 -0.2 0.3"),
        _joint("j1", "revolute", "base_link", "l1", "0 0 0.2", "0.4 0.1 -0.3", "0 0 1"),
        _joint("j2", "prismatic", "l1", "l2", "0.1 0.05 0.3", "-0.2 0.5 0.1", "0 0.6 0.8"),
        _joint("sensor_joint", "fixed", "l2", "sensor", "0.02 0.03 0.04", "1.0 0.2 -0.7"),
        _joint("j3", "continuous", "l2", "l3", "0.2 0 0.1", "0 1.2 0", "1 0 0", limit=False),
        _joint("tool_joint", "fixed", "l3", "tool", "0 0.1 0.15", "0.3 0.3 0.3"),
        _joint("tcp_joint", "fixed", "tool", "tcp", "0 0 0.05", "0 0 1.5707963"),
        _joint("finger_joint", "revolute", "l1", "finger", "0.05 0 0.1", "0.2 0 0", "0 1 0"),
    )) + "</robot>"


def _random_q(model, rng, k):
    lo = np.maximum(np.where(np.isfinite(model.lower), model.lower, -np.pi), -np.pi)
    hi = np.minimum(np.where(np.isfinite(model.upper), model.upper, np.pi), np.pi)
    return rng.uniform(lo, hi, (k, model.dof))


def _check(xml_or_path, samples=40, **kw) -> float:
    conv = load_conversion(xml_or_path, **kw)
    robot = Robot.from_urdf(xml_or_path, **kw)
    xml = conv.urdf_xml
    ref = pin_reference(xml, conv.model, conv.positions)
    lf = robot.link_frames
    full = pin.buildModelFromXML(xml)
    urdf_links = {f.name for f in full.frames if f.type == pin.BODY} - {"universe"}
    assert set(lf.links) == urdf_links  # every link of the URDF, fixed ones included
    worst = 0.0
    for q in _random_q(conv.model, np.random.default_rng(7), samples):
        mine = robot.urdf_link_poses(q)
        theirs = ref.link_poses(q, lf.links)
        worst = max(worst, max(float(np.abs(P - theirs[ln]).max()) for ln, P in zip(lf.links, mine)))
        for joint, T in lf.joint_transforms(mine):  # robot_state_publisher's parent -> child
            expect = np.linalg.inv(theirs[joint.parent]) @ theirs[joint.child]
            worst = max(worst, float(np.abs(T - expect).max()))
    assert worst < TOL, worst
    return worst


def test_tiago_every_link_equals_pinocchio():
    _check(str(example_robot_urdf(TIAGO)), tip_link="arm_tool_link")


@pytest.mark.parametrize("base_link", [None, "base_link"])
def test_synthetic_prismatic_fixed_links_equal_pinocchio(base_link):
    _check(SYNTHETIC, base_link=base_link, tip_link="tcp", locked_joints={"finger_joint": 0.3})


def test_static_joints_are_the_fixed_and_locked_ones():
    lf = Robot.from_urdf(SYNTHETIC, tip_link="tcp", locked_joints={"finger_joint": 0.3}).link_frames
    static = {j.name for j in lf.joints if j.static}
    assert static == {"world_joint", "sensor_joint", "tool_joint", "tcp_joint", "finger_joint"}
    assert lf.root == "world"


def test_prismatic_link_moves_along_its_axis():
    """Hand-computed: moving j2 by s moves l2 by s * (its axis in base_link) and leaves l1."""
    robot = Robot.from_urdf(SYNTHETIC, tip_link="tcp", locked_joints={"finger_joint": 0.0})
    q = np.array([0.3, 0.0, -0.4])
    (l1a, l2a), (l1b, l2b) = (robot.urdf_link_poses(x, ["l1", "l2"]) for x in (q, q + [0, 0.25, 0]))
    assert np.allclose(l1a, l1b, atol=1e-12)
    axis = l2a[:3, :3] @ np.array([0.0, 0.6, 0.8])  # the joint axis, in the child frame = origin @ motion
    assert np.allclose(l2b[:3, 3] - l2a[:3, 3], 0.25 * axis, atol=1e-12)
    assert np.allclose(l2b[:3, :3], l2a[:3, :3], atol=1e-12)


def test_unknown_link_names_are_refused_by_name():
    robot = Robot.from_urdf(SYNTHETIC, tip_link="tcp", locked_joints={"finger_joint": 0.0})
    with pytest.raises(ValueError, match=r"unknown links 'sensr' \(did you mean 'sensor'\?\), 'nope'"):
        robot.urdf_link_poses(np.zeros(3), ["tool", "sensr", "nope"])


def test_model_without_urdf_knows_base_and_tip():
    robot = Robot.from_yaml(Robot.from_urdf(SYNTHETIC, tip_link="tcp",
                                            locked_joints={"finger_joint": 0.0}).model.to_yaml())
    q = np.array([0.2, 0.1, -0.3])
    assert robot.link_frames.links == ("world", "tcp")  # the root (the default base_link), the tip
    base, tip = robot.urdf_link_poses(q, ["world", "tcp"])
    assert np.allclose(base, np.eye(4), atol=1e-12)
    assert np.allclose(tip, robot.fk(q), atol=1e-12)
