"""Issue 38, item 6: refusals name their real cause.

* A URDF whose joints have ``effort="0"`` (example-robot-data's continuous double pendulum):
  the tour said "needs 0.0 N m, more than 70 % of its effort limit 0" after three numpy
  divide-by-zero warnings; now it says the URDF gives those joints no effort limit, and what
  to do, without a warning.  Oracle: the URDF's own ``<limit effort>`` values.
* ``Robot.simulate`` of Panda with stiff damping (30 N m s) on its light last joint said "use a
  smaller dt or smaller torques"; now it names the joint, its ``b dt / m`` against the
  integrator's limit and a stable step.  Oracles: ``m = 1 / (M^-1)_77`` from Pinocchio's CRBA
  on the same URDF, and the simulation itself (stable below the step it suggests, also with
  the same torques)."""
from __future__ import annotations

import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

from rbd_ros.control.tour import plan_tour
from rbd_ros.robot import Robot, SimulationError
from rbd_ros.urdf import load_model
from robots_data import PANDA, example_robot_urdf

PENDULUM = "double_pendulum_description/urdf/double_pendulum_continuous.urdf"


def test_a_joint_without_effort_is_named_as_the_urdf_giving_none() -> None:
    path = example_robot_urdf(PENDULUM)
    zero = [j.get("name") for j in ET.parse(path).getroot().iter("joint")
            if j.find("limit") is not None and float(j.find("limit").get("effort")) == 0.0
            and j.get("type") != "fixed"]
    assert zero == ["joint1", "joint2"]
    model = load_model(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero on the way
        with pytest.raises(ValueError) as err:
            plan_tour(model)
    msg = str(err.value)
    assert f"the URDF gives joint(s) {zero} no effort limit (effort=0" in msg
    assert "give the real limits in N m" in msg and "--lock joint1=0" in msg
    assert "70" not in msg and "needs 0.0" not in msg


@pytest.fixture(scope="module")
def stiff_wrist() -> tuple[str, float]:
    """Panda's URDF with damping 30 N m s on panda_joint7 (0.003 in the file)."""
    xml = example_robot_urdf(PANDA).read_text()
    stiff, n = re.subn(r'(<joint name="panda_joint7".*?damping=")0\.003', r"\g<1>30", xml, flags=re.S)
    assert n == 1
    return stiff, 30.0


@pytest.mark.parametrize("integrator, limit", [("rk4", 2.785), ("semi_implicit_euler", 2.0)])
def test_a_simulation_diverging_for_joint_damping_names_the_damping(stiff_wrist, integrator: str,
                                                                    limit: float) -> None:
    xml, b = stiff_wrist
    robot = Robot.from_urdf(xml, tip_link="panda_link8")
    assert robot.model.viscous[6] == b
    q = np.zeros(7)
    tau = np.tile(robot.gravity(q), (300, 1))
    dt = 1e-3
    with pytest.raises(SimulationError) as err:
        robot.simulate(q, np.full(7, 0.1), tau, dt, include_actuators=True, integrator=integrator)
    msg = str(err.value)
    assert "smaller torques" not in msg
    # Pinocchio's mass matrix of the same URDF (fingers locked): the inertia joint 7 sees
    full = pin.buildModelFromUrdf(str(example_robot_urdf(PANDA)))
    pm = pin.buildReducedModel(full, [full.getJointId(n) for n in full.names if "finger" in n], pin.neutral(full))
    M = pin.crba(pm, pm.createData(), q)
    M = np.triu(M) + np.triu(M, 1).T
    m7 = 1.0 / np.linalg.inv(M)[6, 6]
    found = re.search(r"joint 'panda_joint7' has damping 30 on an inertia of ([\d.e-]+): b dt / m = ([\d.]+) > "
                      + re.escape(str(limit)) + r" .*use a dt below ([\d.e-]+) s", msg)
    assert found, msg
    assert float(found.group(1)) == pytest.approx(m7, rel=1e-2)
    assert float(found.group(2)) == pytest.approx(b * dt / m7, rel=1e-2)
    stable = float(found.group(3)) * 0.9
    steps = int(0.3 / stable)
    res = robot.simulate(q, np.full(7, 0.1), np.tile(robot.gravity(q), (steps, 1)), stable,
                         include_actuators=True, integrator=integrator)
    assert np.isfinite(res.q).all()


def test_a_divergence_without_damping_keeps_the_general_advice() -> None:
    robot = Robot.from_urdf(str(example_robot_urdf(PANDA)), tip_link="panda_link8")
    with pytest.raises(SimulationError, match="use a smaller dt .* or smaller torques"):
        robot.simulate(np.zeros(7), np.zeros(7), np.full((200, 7), 1e6), 0.05, include_actuators=True)
