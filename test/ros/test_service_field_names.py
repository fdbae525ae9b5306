"""Renamed service fields (issue 33: one spelling per concept), on a real robot no other test
serves (example-robot-data's UR3 with its fixed ``ee_link``/``tool0``):

* ``ForwardSimulate``: ``efforts``/``effort_period`` (as every other service), the old
  ``torques``/``torque_period`` still read for one release; old and new given with different
  values is refused naming both.  Oracle: the core's ``Robot.simulate`` of a fresh robot.
* ``ForwardKinematics``: ``urdf_link_poses`` of the ``links`` asked for (the old ``poses``
  filled alike), against Pinocchio's frame placements of the same URDF.
* ``DynamicsClient.forward_simulate(efforts=, effort_period=)``, its old keywords warning;
  ``DynamicsClient.urdf_link_poses``.

The server runs in this process (its handlers called directly, the client over DDS)."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf
from ros_helpers import ros_context, spin_in_background

UR3 = str(example_robot_urdf("ur_description/urdf/ur3_gripper.urdf"))
NAMESPACE = "names33_fields"
DT, HOLD = 1e-3, 8  # each effort row held 8 steps


@pytest.fixture(scope="module")
def served():
    """(DynamicsServer, its node) for the UR3, spun in the background."""
    from rclpy.node import Node

    from rbd_ros.ros.nodes.dynamics_server import DynamicsServer

    with ros_context() as ctx:
        node = Node("dynamics_server", context=ctx, cli_args=[
            "--ros-args", "-p", f"urdf_path:={UR3}", "-p", f"service_namespace:={NAMESPACE}",
            "-p", "allow_shared_namespace:=true"])
        server = DynamicsServer(node)
        spinner = spin_in_background(node)
        try:
            yield server
        finally:
            spinner.shutdown()
            server.close()
            node.destroy_node()


@pytest.fixture(scope="module")
def robot():
    from rbd_ros import Robot

    return Robot.from_urdf(UR3)


def _simulate(server, **fields):
    from rbd_ros_interfaces.srv import ForwardSimulate

    return server._guard(server._forward_simulate)(ForwardSimulate.Request(**fields), ForwardSimulate.Response())


def _inputs(robot, seed: int = 3):
    rng = np.random.default_rng(seed)
    lo, hi = robot.model.lower, robot.model.upper
    q0 = rng.uniform(np.maximum(lo, -2.0), np.minimum(hi, 2.0))
    E = rng.uniform(-2, 2, (5, robot.dof)) * [8.0, 8.0, 4.0, 0.5, 0.5, 0.2]  # small wrist inertias
    return q0, rng.uniform(-0.5, 0.5, robot.dof), E


def test_old_and_new_forward_simulate_fields_agree_with_the_core(served, robot) -> None:
    q0, qd0, E = _inputs(robot)
    base = dict(joint_names=list(robot.joint_names), initial_positions=q0.tolist(),
                initial_velocities=qd0.tolist(), dt=DT)
    new = _simulate(served, efforts=E.ravel().tolist(), effort_period=HOLD * DT, **base)
    old = _simulate(served, torques=E.ravel().tolist(), torque_period=HOLD * DT, **base)
    mixed = _simulate(served, efforts=E.ravel().tolist(), torque_period=HOLD * DT, **base)
    assert new.success and old.success and mixed.success, (new.message, old.message, mixed.message)
    for field in ("times", "positions", "velocities", "accelerations"):
        assert np.array_equal(getattr(new, field), getattr(old, field)), field
        assert np.array_equal(getattr(new, field), getattr(mixed, field)), field
    n, steps = robot.dof, len(E) * HOLD
    q, qd, qdd = robot.simulate(q0, qd0, np.repeat(E, HOLD, axis=0), DT)  # the core, a fresh robot
    assert len(new.times) == steps + 1
    np.testing.assert_allclose(np.reshape(new.positions, (-1, n)), q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.reshape(new.velocities, (-1, n)), qd, rtol=0, atol=1e-12)
    assert np.ptp(q[:, 0]) > 1e-3  # it moved: the efforts were read


@pytest.mark.parametrize("fields, names", [
    ({"efforts": [1.0] * 6, "torques": [2.0] * 6, "effort_period": 0.01}, ("efforts", "torques")),
    ({"efforts": [1.0] * 6, "torques": [1.0] * 12, "effort_period": 0.01}, ("efforts", "torques")),
    ({"efforts": [1.0] * 6, "effort_period": 0.01, "torque_period": 0.02}, ("effort_period", "torque_period")),
])
def test_old_and_new_fields_that_disagree_are_refused(served, robot, fields, names) -> None:
    res = _simulate(served, joint_names=list(robot.joint_names), initial_positions=[0.0] * 6,
                    initial_velocities=[0.0] * 6, dt=DT, **fields)
    assert not res.success and "\n" not in res.message
    assert all(name in res.message for name in names), res.message
    same = _simulate(served, joint_names=list(robot.joint_names), initial_positions=[0.0] * 6,
                     initial_velocities=[0.0] * 6, dt=DT, efforts=[1.0] * 6, torques=[1.0] * 6,
                     effort_period=0.01, torque_period=0.01)
    assert same.success, same.message


def test_forward_kinematics_urdf_link_poses_against_pinocchio(served, robot) -> None:
    import pinocchio as pin

    from rbd_ros.ros.messages import pose_to_matrix
    from rbd_ros_interfaces.srv import ForwardKinematics

    q = _inputs(robot, seed=4)[0]
    links = ["tool0", "ee_link", "forearm_link", "base"]
    req = ForwardKinematics.Request(joint_names=list(robot.joint_names), positions=q.tolist(), links=links)
    res = served._guard(served._forward_kinematics)(req, ForwardKinematics.Response())
    assert res.success, res.message
    got = np.array([pose_to_matrix(p) for p in res.urdf_link_poses])
    assert np.array_equal(got, np.array([pose_to_matrix(p) for p in res.poses]))  # the old field alike
    pm = pin.buildModelFromUrdf(UR3)
    pd = pm.createData()
    order = [pm.joints[pm.getJointId(j)].idx_q for j in robot.joint_names]
    qp = np.zeros(pm.nq)
    qp[order] = q
    pin.framesForwardKinematics(pm, pd, qp)
    root = pd.oMf[pm.getFrameId(robot.model.base_link)].homogeneous  # frame_id: base_link
    for k, link in enumerate(links):
        want = np.linalg.solve(root, pd.oMf[pm.getFrameId(link)].homogeneous)
        np.testing.assert_allclose(got[k], want, atol=1e-9, err_msg=link)
    assert res.frame_id == robot.model.base_link
    assert list(res.link_names) == ["frame0", *robot.model.link_names]  # the MDH frames' labels
    bad = served._guard(served._forward_kinematics)(ForwardKinematics.Request(
        joint_names=list(robot.joint_names), positions=q.tolist(), links=["no_such_link"]),
        ForwardKinematics.Response())
    assert not bad.success and "no_such_link" in bad.message


def test_client_new_keywords_and_old_ones_warn(served, robot) -> None:
    from rbd_ros.ros.client import DynamicsClient

    q0, qd0, E = _inputs(robot, seed=5)
    with DynamicsClient(namespace=NAMESPACE, timeout=30) as c:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            new = c.forward_simulate(q0, qd0, efforts=E, effort_period=HOLD * DT, dt=DT)
        with pytest.warns(DeprecationWarning, match=r"torques= is deprecated, use efforts="):
            old = c.forward_simulate(q0, qd0, torques=E, effort_period=HOLD * DT, dt=DT)
        with pytest.warns(DeprecationWarning, match=r"torque_period= is deprecated, use effort_period="):
            positional = c.forward_simulate(q0, qd0, E, torque_period=HOLD * DT, dt=DT)
        assert np.array_equal(new.positions, old.positions) and np.array_equal(new.positions, positional.positions)
        q, _, _ = robot.simulate(q0, qd0, np.repeat(E, HOLD, axis=0), DT)
        np.testing.assert_allclose(new.positions, q, rtol=0, atol=1e-12)
        with pytest.raises(ValueError, match="give efforts= only"):
            c.forward_simulate(q0, qd0, E, HOLD * DT, DT, torques=E)
        T = c.urdf_link_poses(q0, ["tool0", "ee_link"])
        np.testing.assert_allclose(T, robot.urdf_link_poses(q0, ["tool0", "ee_link"]), atol=1e-12)
