"""Poses where a pose is meant (issue 29): ``/rbd/inverse_kinematics`` takes
``geometry_msgs/Pose[] poses`` besides the flat 4x4 ``targets`` (one of the two), and
``DynamicsClient`` gives numpy 4x4s from forward kinematics and takes a 4x4, a list of them
or a Pose for IK; one result vocabulary (``rbd_ros.IKResult``) for the core, the service and
the client.

On Kinova's JACO (example-robot-data ``kinova.urdf``, 6 joints; no other test names it), the
dynamics server in its own process.  Oracles: Pinocchio's quaternions (an independent
conversion between the Pose and the 4x4), Pinocchio's placement of the URDF's tip link, the
core's ``Robot.fk`` of the returned joints.
"""
from __future__ import annotations

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")
from rbd_ros.robot import Robot  # noqa: E402

KINOVA = "kinova_description/robots/kinova.urdf"
TIP = "j2s6s200_link_6"
import services.test_ik_poses as shared  # noqa: E402
from services.test_ik_poses import targets  # noqa: E402

urdf = shared.urdf  # the fixture, shared with the ROS-free tests
robot = shared.robot  # the fixture, shared with the ROS-free tests


@pytest.fixture(scope="module")
def client(urdf: str):
    from ros_helpers import served_client

    with served_client("ikposes", f"urdf_path:={urdf}", f"tip_link:={TIP}", ready_timeout=180) as c:
        yield c


def pin_pose(T: np.ndarray):
    """A geometry_msgs/Pose of a 4x4 through Pinocchio's quaternion (not ours)."""
    from geometry_msgs.msg import Point, Pose, Quaternion

    quat = pin.Quaternion(np.ascontiguousarray(T[:3, :3]))
    p = T[:3, 3]
    return Pose(position=Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
                orientation=Quaternion(x=quat.x, y=quat.y, z=quat.z, w=quat.w))


# ---- through ROS -----------------------------------------------------------------------------
@pytest.mark.slow
def test_ik_by_pose_equals_ik_by_4x4(client, robot: Robot) -> None:
    T, seeds = targets(robot, 5, seed=7)
    by_matrix = client.inverse_kinematics(T, seeds=seeds)
    by_pose = client.inverse_kinematics([pin_pose(Tk) for Tk in T], seeds=seeds)
    assert by_matrix.solved.all() and by_pose.solved.all()
    assert by_pose.positions.shape == by_matrix.positions.shape == (5, robot.dof)
    np.testing.assert_allclose(by_pose.positions, by_matrix.positions, atol=1e-5)
    np.testing.assert_allclose(robot.fk(by_pose.positions), T, atol=2e-6)
    assert np.all(by_pose.position_errors <= 1e-6) and np.all(by_pose.orientation_errors <= 1e-6)
    assert (by_pose.attempts >= 1).all() and (by_pose.iterations >= 0).all()
    one = client.inverse_kinematics(pin_pose(T[0]), seeds=seeds[0])  # a single Pose
    assert one.solved is True and one.positions.shape == (robot.dof,)
    np.testing.assert_allclose(one.positions, by_matrix.positions[0], atol=1e-5)
    listed = client.inverse_kinematics(list(T[:2]), seeds=seeds[:2])  # a list of 4x4s
    np.testing.assert_allclose(robot.fk(listed.positions), T[:2], atol=2e-6)
    # position_only with a Pose: its orientation does not count
    pos = client.inverse_kinematics(pin_pose(T[1]), position_only=True)
    np.testing.assert_allclose(robot.fk(pos.positions)[:3, 3], T[1, :3, 3], atol=2e-6)


def test_service_refuses_both_or_neither(client, robot: Robot) -> None:
    from rbd_ros.ros.client import DynamicsError
    from rbd_ros_interfaces.srv import InverseKinematics

    T, _ = targets(robot, 1, seed=3)
    req = InverseKinematics.Request(poses=[pin_pose(T[0])], targets=T[0].reshape(-1).tolist())
    with pytest.raises(DynamicsError, match="either as poses .* not both"):
        client._call("inverse_kinematics", req)
    with pytest.raises(DynamicsError, match="no targets: give poses"):
        client._call("inverse_kinematics", InverseKinematics.Request())
    bad = pin_pose(T[0])
    bad.orientation.w, bad.orientation.x, bad.orientation.y, bad.orientation.z = 0.0, 0.0, 0.0, 0.0
    with pytest.raises(DynamicsError, match=r"poses\[0\].orientation is not a unit quaternion"):
        client.inverse_kinematics(bad)


def test_client_forward_kinematics_is_numpy(client, robot: Robot, urdf: str) -> None:
    rng = np.random.default_rng(11)
    Q = rng.uniform(-2.0, 2.0, (3, robot.dof))
    T = client.forward_kinematics(Q[0])
    assert isinstance(T, np.ndarray) and T.shape == (4, 4)
    np.testing.assert_allclose(T, robot.fk(Q[0]), atol=1e-12)
    # the same pose from Pinocchio's placement of the URDF's tip link
    pm = pin.buildModelFromUrdf(urdf)
    pd = pm.createData()
    qp = pin.neutral(pm)
    for k, name in enumerate(robot.joint_names):  # revolute (nq 1) or continuous (cos, sin)
        j = pm.joints[pm.getJointId(name)]
        qp[j.idx_q:j.idx_q + j.nq] = [Q[0, k]] if j.nq == 1 else [np.cos(Q[0, k]), np.sin(Q[0, k])]
    pin.framesForwardKinematics(pm, pd, qp)
    np.testing.assert_allclose(T, pd.oMf[pm.getFrameId(TIP)].homogeneous, atol=1e-9)
    batch = client.forward_kinematics(Q)
    assert batch.shape == (3, 4, 4)
    np.testing.assert_allclose(batch, robot.fk(Q), atol=1e-12)
    links = client.link_poses(Q[1])
    expected = robot.link_poses(Q[1])
    assert list(links) == ["frame0", *robot.model.link_names]
    for (name, Tl), Te in zip(links.items(), expected):
        np.testing.assert_allclose(Tl, Te, atol=1e-12, err_msg=name)
    # the response's fields, as forward_kinematics returned them before: one release, warned
    with pytest.warns(DeprecationWarning, match="forward_kinematics now returns the 4x4 tool pose"):
        p = T.tool_pose.position
    np.testing.assert_allclose([p.x, p.y, p.z], robot.fk(Q[0])[:3, 3], atol=1e-12)


def test_old_result_names_warn(client, robot: Robot) -> None:
    import rbd_ros.ros.client as client_module
    from rbd_ros.robot import IKResult

    T, seeds = targets(robot, 1, seed=9)
    res = client.inverse_kinematics(T[0], seeds=seeds[0])
    assert isinstance(res, IKResult)
    for old, new in (("q", "positions"), ("success", "solved"), ("position_error", "position_errors"),
                     ("orientation_error", "orientation_errors")):
        with pytest.warns(DeprecationWarning, match=f"IKResult.{old} is deprecated, use IKResult.{new}"):
            value = getattr(res, old)
        assert value is getattr(res, new)
    with pytest.warns(DeprecationWarning, match="IKSolution is deprecated, use rbd_ros.IKResult"):
        assert client_module.IKSolution is IKResult
