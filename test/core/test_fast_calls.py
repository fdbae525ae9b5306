"""The single-state calls made faster by issue 32 against Pinocchio and against the full RNEA:
``gravity`` (subtree masses and first moments instead of RNEA at rest) on real arms no other
test names (UR3, Panda) and random chains with prismatic joints, the public call,
``robot.kernels`` and the batch agreeing bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import random_model
from rbd_ros import Robot
from rbd_ros.model.urdf_export import model_to_urdf
from robots_data import PANDA, example_robot_urdf

pin = pytest.importorskip("pinocchio")


def _pin(robot: Robot):  # noqa: ANN202
    pm = pin.buildModelFromXML(model_to_urdf(robot.model))
    pm.gravity.linear[:] = robot.model.gravity
    return pm, pm.createData()


def _robots() -> list[Robot]:
    ur3 = Robot.from_urdf(str(example_robot_urdf("ur_description/urdf/ur3_robot.urdf")), tip_link="tool0")
    panda = Robot.from_urdf(str(example_robot_urdf(PANDA)), base_link="panda_link0", tip_link="panda_link8")
    return [ur3, panda, Robot(random_model(7, 3, prismatic=(1, 4))), Robot(random_model(12, 5, prismatic=(11,)))]


@pytest.fixture(scope="module")
def robots() -> list[Robot]:
    return _robots()


def test_gravity_matches_pinocchio_and_the_full_rnea(robots: list[Robot]) -> None:
    for robot in robots:
        pm, pd = _pin(robot)
        rng = np.random.default_rng(robot.dof)
        Q = rng.uniform(-2.5, 2.5, (20, robot.dof))
        zero = np.zeros(robot.dof)
        for q in Q:
            g = robot.gravity(q)
            ref = pin.computeGeneralizedGravity(pm, pd, q)
            assert np.abs(g - ref).max() <= 1e-10 * max(1.0, np.abs(ref).max()), robot.model.name
            assert np.abs(g - robot.inverse_dynamics(q, zero, zero)).max() <= 1e-10 * max(1.0, np.abs(g).max())
            assert np.array_equal(g, robot.kernels.gravity(q))
        assert np.array_equal(robot.gravity(Q), np.array([robot.gravity(q) for q in Q]))


def test_gravity_still_refuses_bad_input(robots: list[Robot]) -> None:
    robot = robots[1]
    with pytest.raises(ValueError, match="q"):
        robot.gravity(np.full(robot.dof, np.nan))
    with pytest.raises(ValueError, match="shape"):
        robot.gravity(np.zeros(robot.dof + 1))
    assert np.array_equal(robot.gravity(np.ones(robot.dof, dtype=np.int64)), robot.gravity(np.ones(robot.dof)))
