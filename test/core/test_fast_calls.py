"""The single-state calls made faster by issue 32 against Pinocchio and against the full RNEA:
``gravity`` (subtree masses and first moments instead of RNEA at rest) on real arms no other
test names (UR3, Panda) and random chains with prismatic joints, the public call,
``robot.kernels`` and the batch agreeing bit for bit; and the batch calls, on one thread below
``base_batch.PARALLEL_MIN`` states and in parallel chunks from it on, row for row equal to
the single-state calls."""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import random_model
from rbd_ros import Robot
from rbd_ros.algorithm.base_batch import PARALLEL_MIN
from rbd_ros.model.urdf_export import model_to_urdf
from robots_data import PANDA, example_robot_urdf

pin = pytest.importorskip("pinocchio")


def _pin(robot: Robot):
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


@pytest.mark.parametrize("N", [1, 7, PARALLEL_MIN - 1, PARALLEL_MIN + 3])
def test_batches_on_either_side_of_the_thread_threshold_equal_single_calls(N: int) -> None:
    """Below ``PARALLEL_MIN`` states a batch runs on one thread (``*_rows`` kernels), from it on
    in parallel chunks: every row equals the single-state call bit for bit either way, and
    Pinocchio to 1e-10 (a sample)."""
    robot = Robot(random_model(6, 11, prismatic=(2,)))
    pm, pd = _pin(robot)
    rng = np.random.default_rng(N)
    Q, QD, QDD = rng.uniform(-1.5, 1.5, (3, N, robot.dof))
    tau, M = robot.inverse_dynamics(Q, QD, QDD), robot.mass_matrix(Q)
    qdd, g, h = robot.forward_dynamics(Q, QD, tau), robot.gravity(Q), robot.bias(Q, QD)
    for k in sorted({0, N // 2, N - 1}):
        q, qd = Q[k], QD[k]
        assert np.array_equal(tau[k], robot.inverse_dynamics(q, qd, QDD[k]))
        assert np.array_equal(M[k], robot.mass_matrix(q))
        assert np.array_equal(qdd[k], robot.forward_dynamics(q, qd, tau[k]))
        assert np.array_equal(g[k], robot.gravity(q))
        assert np.array_equal(h[k], robot.bias(q, qd))
        assert np.abs(tau[k] - pin.rnea(pm, pd, q, qd, QDD[k])).max() < 1e-10 * max(1.0, np.abs(tau[k]).max())
        assert np.abs(qdd[k] - QDD[k]).max() < 1e-8 * max(1.0, np.abs(QDD[k]).max())
