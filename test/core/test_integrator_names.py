"""One integrator table (``rbd_ros.algorithm.integrators.INTEGRATORS``): every name the core
has is accepted by ``Robot.simulate``, the ``forward_simulate`` service logic and the MuJoCo
bridge alike, ``euler`` and ``semi_implicit_euler`` naming the same method; a wrong name gets
the same list of choices everywhere."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

from rbd_ros.algorithm.integrators import CORE_INTEGRATORS, INTEGRATORS
from rbd_ros.robot import Robot
from rbd_ros.services import DynamicsService, RequestError
from rbd_ros.sim.examples import three_link
from rbd_ros.sim.mujoco_model import build_mujoco_model
from rbd_ros.sim.simulator import BridgeConfig


@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot(three_link())


def test_core_names_work_in_the_core_and_the_service(robot) -> None:
    assert set(CORE_INTEGRATORS) == {"rk4", "semi_implicit_euler", "euler"}
    q0, qd0 = np.array([0.3, -0.5, 0.8]), np.zeros(3)
    tau = np.zeros((20, 3))
    service = DynamicsService(robot)
    names = list(robot.joint_names)
    ends = {}
    for name in CORE_INTEGRATORS:
        q = robot.simulate(q0, qd0, tau, 0.001, integrator=name)[0]
        out = service.forward_simulate(names, q0, qd0, tau, 0.001, 0.001, name.upper(), 0.0, 0.0,
                                       False)
        np.testing.assert_array_equal(out.positions[-1], q[-1])
        ends[name] = q[-1]
    assert np.array_equal(ends["euler"], ends["semi_implicit_euler"])
    assert not np.array_equal(ends["rk4"], ends["euler"])  # a different method: it matters
    assert np.abs(ends["rk4"] - q0).max() > 1e-4  # it fell under gravity


def test_names_in_the_bridge_and_one_refusal_everywhere(robot) -> None:
    for name, (_, enum) in INTEGRATORS.items():
        assert BridgeConfig(integrator=name).integrator == name
        m, _ = build_mujoco_model(three_link(), integrator=name)
        assert m.opt.integrator == getattr(mujoco.mjtIntegrator, enum)
    with pytest.raises(ValueError, match="integrator 'leapfrog' unknown; use one of"):
        robot.simulate(np.zeros(3), np.zeros(3), np.zeros((2, 3)), 0.001, integrator="leapfrog")
    with pytest.raises(RequestError, match="integrator 'leapfrog' unknown; use one of"):
        DynamicsService(robot).forward_simulate(list(robot.joint_names), np.zeros(3), np.zeros(3),
                                                np.zeros((2, 3)), 0.001, 0.001, "leapfrog", 0.0,
                                                0.0, False)
    with pytest.raises(ValueError, match="integrator must be one of auto, rk4, semi_implicit_euler"):
        BridgeConfig(integrator="leapfrog")
