"""The force laws of issue 30 (impedance, hybrid force/position, admittance) in closed loop on
the simulated UR3 (named by no other test), lockstep, ROS-free.  Oracles: MuJoCo's contact
forces, a known applied wrench (``Simulator.push``), the core's gravity and Jacobian."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

UR3 = "ur_description/urdf/ur3_robot.urdf"
Q0 = np.array([0.3, -1.2, 1.5, -1.9, -1.57, 0.0])


@pytest.fixture(scope="module")
def ur3():
    from rbd_ros.urdf import load_model

    return load_model(str(example_robot_urdf(UR3)))


def _quiet(level, msg):
    return None


def _sim(model, **cfg):
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    return Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0, initial_positions=tuple(Q0),
                                         integrator="implicitfast", **cfg), log=_quiet)


def test_the_laws_are_registered_with_their_gains(ur3) -> None:
    from rbd_ros.control.gains import LAWS
    from rbd_ros.control.laws import make_law

    for name in ("impedance", "hybrid_force_position", "admittance"):
        assert name in LAWS
        law = make_law(name, ur3, q0=Q0)
        assert law.task_space and all(np.isfinite(v).all() for v in law.gains.values())
    with pytest.raises(ValueError, match="impedance does not take"):
        make_law("impedance", ur3, {"kp": 1.0}, q0=Q0)


@pytest.mark.parametrize("axis, stiffness", [(0, None), (1, None), (2, None), (0, 400.0), (2, 400.0)])
def test_impedance_stiffness_measured_by_a_push(ur3, axis, stiffness) -> None:
    """Pushed with f along a world axis at the tool, the impedance gives way f / K there
    (within 5 %; K the model's, or 400 N/m given), and nothing along the others."""
    from rbd_ros.control.laws import Reference, make_law
    from rbd_ros.robot import Robot

    sim = _sim(ur3)
    robot = Robot(ur3)
    law = make_law("impedance", ur3, q0=Q0)
    if stiffness is not None:  # translational spring given, its damper critical for it
        K, D = law.gains["stiffness"].copy(), law.gains["damping"].copy()
        lam = K[:3] * (D[:3] / (2.0 * K[:3])) ** 2  # D = 2 sqrt(K Lambda)
        K[:3] = stiffness
        D[:3] = 2.0 * np.sqrt(stiffness * lam)
        law.set_gains(stiffness=K, damping=D)
    K = law.gains["stiffness"][axis]
    T0 = robot.fk(Q0)
    ref = Reference(6).set_task(T0)
    push = np.zeros(6)
    push[axis] = 6.0
    sim.push("", push, 10.0)
    for _ in range(2000):
        q, qd, _ = sim.measure()
        sim.command(law.compute(sim.time, q, qd, ref))
        sim.step()
    d = robot.fk(sim.q)[:3, 3] - T0[:3, 3]
    k_measured = push[axis] / d[axis]
    assert abs(k_measured / K - 1.0) < 0.05, (k_measured, K, d)
    others = np.delete(d, axis)
    assert np.abs(others).max() < 0.05 * abs(d[axis])


def test_a_wrench_beyond_the_effort_limits_is_refused_naming_the_joint(ur3) -> None:
    from rbd_ros.control.laws import make_law
    from rbd_ros.robot import Robot

    law = make_law("hybrid_force_position", ur3, q0=Q0)
    w = np.array([0.0, 0.0, -5000.0, 0.0, 0.0, 0.0])
    need = Robot(ur3).gravity(Q0) + Robot(ur3).jacobian(Q0).T @ w
    over = [ur3.joint_names[i] for i in np.flatnonzero(np.abs(need) > ur3.effort_limit)]
    with pytest.raises(ValueError, match="needs more than the effort limits") as info:
        law.set_target_wrench(w, Q0)
    assert all(f"'{j}'" in str(info.value) for j in over) and over
    law.set_target_wrench([0.0, 0.0, -10.0, 0.0, 0.0, 0.0], Q0)  # a feasible one is taken
    with pytest.raises(ValueError, match="6 finite numbers"):
        law.set_target_wrench([0.0, np.inf, 0.0, 0.0, 0.0, 0.0], Q0)


@pytest.mark.parametrize("law_name", ["hybrid_force_position", "admittance"])
def test_no_contact_does_not_run_away(ur3, law_name) -> None:
    """Asked to press 10 N down with nothing below: the tool comes down no faster than the
    velocity bound (plus 20 %), and keeps the other axes."""
    from rbd_ros.control.laws import Reference, make_law
    from rbd_ros.robot import Robot

    sim = _sim(ur3)
    robot = Robot(ur3)
    law = make_law(law_name, ur3, q0=Q0)
    T0 = robot.fk(Q0)
    ref = Reference(6).set_task(T0)
    law.set_target_wrench([0.0, 0.0, -10.0, 0.0, 0.0, 0.0], Q0)
    vmax = 0.0
    for _ in range(1500):
        q, qd, _ = sim.measure()
        law.set_measured_wrench(np.zeros(6), sensor_frame=False)
        sim.command(law.compute(sim.time, q, qd, ref))
        sim.step()
        vmax = max(vmax, abs((robot.jacobian(sim.q) @ sim.qd)[2]))
    T = robot.fk(sim.q)
    assert T[2, 3] < T0[2, 3] - 0.01  # it does come down
    assert vmax < 1.2 * law.gains["velocity_limit"][2], vmax
    assert np.abs(T[:2, 3] - T0[:2, 3]).max() < 2e-3
