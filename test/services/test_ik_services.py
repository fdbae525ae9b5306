"""The ROS-free half of ``test/ros/test_ik_services.py`` (its docstring says what both halves check):
``rbd_ros.services.DynamicsService`` called directly, in the ROS-free run."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import BUNDLED_URDF

pytest.importorskip("rbd_ros.robot")
from rbd_ros.robot import Robot
from rbd_ros.services import DynamicsService, RequestError

URDF = BUNDLED_URDF / "puma560.urdf"


@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot.from_urdf(str(URDF))


@pytest.fixture(scope="module")
def service(robot: Robot) -> DynamicsService:
    return DynamicsService(Robot(robot.model), max_points=20)


def _targets(robot: Robot, N: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.uniform(robot.model.lower, robot.model.upper, (N, robot.dof))
    return robot.fk(q), rng.uniform(robot.model.lower, robot.model.upper, (N, robot.dof))


# ---- without ROS ---------------------------------------------------------------------------
def test_service_ik_in_caller_order(service: DynamicsService, robot: Robot) -> None:
    T, q0 = _targets(robot, 6)
    names = list(robot.joint_names)[::-1]
    out = service.inverse_kinematics(names, T.reshape(-1), q0[:, ::-1].reshape(-1))
    assert out.solved.all() and out.positions.shape == (6, robot.dof)
    q_model = out.positions[:, ::-1]
    np.testing.assert_allclose(robot.fk(q_model), T, atol=2e-6)
    assert np.all(out.position_errors <= 1e-6) and np.all(out.orientation_errors <= 1e-6)
    pos = service.inverse_kinematics([], T[:, :3, 3].reshape(-1), position_only=True)
    np.testing.assert_allclose(robot.fk(pos.positions)[:, :3, 3], T[:, :3, 3], atol=2e-6)


def test_service_ik_unreachable_is_an_answer(service: DynamicsService) -> None:
    T = np.eye(4)
    T[:3, 3] = [3.0, 0.0, 0.0]
    out = service.inverse_kinematics([], T.reshape(-1), max_restarts=2)
    assert out.solved.tolist() == [False] and np.isfinite(out.positions).all()
    assert out.position_errors[0] > 1.0


@pytest.mark.parametrize("kw, message", [
    ({"targets": np.zeros(15)}, "targets has 15 values; expected N x 16"),
    ({"targets": np.full(16, np.nan)}, "targets contains NaN or Inf (first in target 0)"),
    ({"targets": np.diag([2.0, 1, 1, 1]).reshape(-1)}, "not a rigid transform"),
    ({"targets": np.zeros(4), "position_only": True}, "expected N x 3 positions"),
    ({"seeds": np.zeros(5)}, "not a multiple of 6"),
    ({"seeds": np.zeros(12)}, "seeds has 2 states"),
    ({"position_tolerance": 0.0}, "position_tolerance must be a positive number"),
    ({"max_restarts": -1}, "max_restarts must be >= 0, got -1"),
    ({"max_iterations": 2.5}, "max_iterations must be an integer, got 2.5"),
    ({"max_iterations": True}, "max_iterations must be an integer, got True"),
    ({"position_tolerance": True}, "position_tolerance must be a positive number, got True"),
    ({"orientation_tolerance": -1e-6}, "orientation_tolerance must be a positive number"),
    ({"timeout": -1.0}, "timeout must be 0 (no limit) or a positive number of seconds, got -1.0"),
    ({"timeout": 5e-324}, "timeout must be 0 (no limit)"),
    ({"timeout": float("nan")}, "timeout must be 0"),
    ({"targets": np.tile(np.eye(4).reshape(-1), 21)}, "at most 20"),
])
def test_service_ik_refuses(service: DynamicsService, kw: dict, message: str) -> None:
    args = {"targets": np.eye(4).reshape(-1), **kw}
    with pytest.raises(RequestError, match=None) as info:
        service.inverse_kinematics([], **args)
    assert message in str(info.value)


def test_service_static_torques(service: DynamicsService, robot: Robot) -> None:
    rng = np.random.default_rng(1)
    q = rng.uniform(-1, 1, (3, robot.dof))
    w = rng.normal(size=6)
    names = list(robot.joint_names)[::-1]
    tau = service.static_torques(names, q[:, ::-1].reshape(-1), w, "tool", True)
    np.testing.assert_allclose(tau[:, ::-1], robot.static_torques(q, w, frame="tool",
                                                                  include_gravity=True), atol=1e-12)
    with pytest.raises(RequestError, match="frame must be 'world' or 'tool'"):
        service.static_torques(names, q[0], w, "base")
    with pytest.raises(RequestError, match="wrench must be 6 finite numbers"):
        service.static_torques(names, q[0], [np.nan] * 6)
