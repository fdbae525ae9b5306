"""The ROS-free half of ``test/ros/test_ik_poses.py`` (its docstring says what both halves check):
``rbd_ros.services.DynamicsService`` called directly, in the ROS-free run."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")
from rbd_ros.robot import Robot  # noqa: E402
from rbd_ros.services import DynamicsService, RequestError  # noqa: E402

KINOVA = "kinova_description/robots/kinova.urdf"
TIP = "j2s6s200_link_6"


@pytest.fixture(scope="module")
def urdf() -> str:
    return str(example_robot_urdf(KINOVA))


@pytest.fixture(scope="module")
def robot(urdf: str) -> Robot:
    return Robot.from_urdf(urdf, tip_link=TIP)


def targets(robot: Robot, N: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lo, hi = np.clip(robot.model.lower, -3.0, 3.0), np.clip(robot.model.upper, -3.0, 3.0)
    q = rng.uniform(lo, hi, (N, robot.dof))
    seeds = np.clip(q + rng.normal(0.0, 0.2, q.shape), lo, hi)
    return robot.fk(q), seeds


# ---- without ROS: the request's poses ------------------------------------------------------
def test_service_poses_equal_4x4_targets(robot: Robot) -> None:
    service = DynamicsService(Robot(robot.model), max_points=10)
    T, _ = targets(robot, 4, seed=1)
    poses = []
    for Tk in T:
        quat = pin.Quaternion(np.ascontiguousarray(Tk[:3, :3]))
        poses.append([*Tk[:3, 3], quat.x, quat.y, quat.z, quat.w])
    np.testing.assert_allclose(service.ik_targets((), poses, False), T, atol=1e-15)
    scaled = np.array(poses)
    scaled[:, 3:] *= 1.0 + 5e-4  # a rounded quaternion: normalised
    np.testing.assert_allclose(service.ik_targets((), scaled, False), T, atol=1e-14)
    only = service.ik_targets((), poses, True)  # position_only: the positions
    np.testing.assert_array_equal(only, T[:, :3, 3])
    with pytest.raises(RequestError, match="either as poses .* or as targets .* not both"):
        service.ik_targets(T.reshape(-1), poses, False)
    with pytest.raises(RequestError, match="no targets: give poses"):
        service.ik_targets((), (), False)
    scaled[2, 3:] = [0.0, 0.0, 0.0, 0.5]
    with pytest.raises(RequestError, match=r"poses\[2\].orientation is not a unit quaternion \(norm 0.5\)"):
        service.ik_targets((), scaled, False)
    scaled[2, 3:] = [0.0, 0.0, 0.0, np.nan]
    with pytest.raises(RequestError, match="poses contains NaN or Inf .first in pose 2"):
        service.ik_targets((), scaled, False)
