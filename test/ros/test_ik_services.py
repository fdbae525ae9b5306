"""/rbd/inverse_kinematics and /rbd/static_torques: the node in its own process, called from this
one, and their request checking (``rbd_ros.services``) without ROS.

Oracles: the core's forward kinematics of the returned joints (FK(IK(T)) = T), the core's
``static_torques`` on the same model in this process, and the finite-difference-checked core
(test_statics.py).  Bad requests get success=false with a specific message."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import BUNDLED_URDF

pytest.importorskip("rbd_ros.robot")
from rbd_ros.robot import Robot

URDF = BUNDLED_URDF / "puma560.urdf"
import services.test_ik_services as shared  # noqa: E402
from services.test_ik_services import _targets  # noqa: E402

robot = shared.robot  # the fixture, shared with the ROS-free tests


@pytest.fixture(scope="module")
def client():
    from ros_helpers import served_client

    with served_client("ikdyn", f"urdf_path:={URDF}") as c:
        yield c


# ---- through ROS ---------------------------------------------------------------------------
@pytest.mark.slow
def test_ros_inverse_kinematics(client, robot: Robot) -> None:
    T, q0 = _targets(robot, 8, seed=5)
    out = client.inverse_kinematics(T, seeds=q0)
    assert out.solved.all() and out.positions.shape == (8, robot.dof)
    np.testing.assert_allclose(robot.fk(out.positions), T, atol=2e-6)
    one = client.inverse_kinematics(T[0], max_restarts=10, timeout=1.0)
    assert one.solved is True and one.positions.shape == (robot.dof,)
    np.testing.assert_allclose(robot.fk(one.positions), T[0], atol=2e-6)
    p = client.inverse_kinematics(T[1, :3, 3], position_only=True)
    np.testing.assert_allclose(robot.fk(p.positions)[:3, 3], T[1, :3, 3], atol=2e-6)
    far = np.eye(4)
    far[:3, 3] = [4.0, 0, 0]
    miss = client.inverse_kinematics(far, max_restarts=1)
    assert miss.solved is False and miss.position_errors > 1.0


def test_ros_static_torques(client, robot: Robot) -> None:
    rng = np.random.default_rng(2)
    q = rng.uniform(-1, 1, (4, robot.dof))
    w = rng.normal(size=6)
    np.testing.assert_allclose(client.static_torques(q, w), robot.static_torques(q, w), atol=1e-12)
    np.testing.assert_allclose(client.static_torques(q[0], w, frame="tool", include_gravity=True),
                               robot.static_torques(q[0], w, frame="tool", include_gravity=True),
                               atol=1e-12)


def test_ros_bad_requests_are_refused(client, robot: Robot) -> None:
    from rbd_ros.ros.client import DynamicsError

    with pytest.raises(DynamicsError, match="not a rigid transform"):
        client.inverse_kinematics(np.diag([1.0, 2.0, 1.0, 1.0]))
    with pytest.raises(DynamicsError, match="frame must be"):
        client.static_torques(np.zeros(robot.dof), np.zeros(6), frame="elbow")
    # the node still serves
    assert client.static_torques(np.zeros(robot.dof), np.zeros(6)).shape == (robot.dof,)
