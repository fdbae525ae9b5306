"""The payload on a wrist F/T sensor identified from its readings (issue 41.2,
``identification.payload``).

Oracle: MuJoCo's own ``force``/``torque`` sensors on the simulated arm (the bridge's
``Simulator`` with its F/T sensor at the tool frame), read along an excitation under computed
torque; the truth is the model's last body (everything below the sensor: 0.4 kg, its centre
10 cm out on the humanoid's wrist) and an offset the test adds to the readings.  The arm is the
simple humanoid's right arm from the torso (example-robot-data), which no other test names."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from rbd_ros.identification.payload import PARAMETERS, identify_payload, sensor_motion, wrench_regressor
from robots_data import example_robot_urdf

OFFSET = np.array([1.5, -0.7, 0.3, 0.05, -0.02, 0.01])  # a sensor's zero drift, N and N m


@pytest.fixture(scope="module")
def readings():
    """``(robot, model, q, qd, qdd, raw wrench)`` of 1.5 s at 1 kHz."""
    from rbd_ros import Robot
    from rbd_ros.control.tour import plan_tour
    from rbd_ros.identification.excitation import plan_excitation
    from rbd_ros.sim.simulator import BridgeConfig, Simulator
    from rbd_ros.urdf import load_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_model(str(example_robot_urdf("simple_humanoid_description/urdf/simple_humanoid.urdf")),
                           base_link="torso", tip_link="r_wrist")
        exc = plan_excitation(model, plan_tour(model, floor=None).start, floor=None, evaluations=10,
                              period=1.5, periods=1)
    robot = Robot(model)
    sim = Simulator(model, BridgeConfig(timestep=1e-3, mode="lockstep", initial_positions=tuple(exc.start),
                                        command_timeout=0.0, ft_sensor=True))
    n = int(round(exc.duration / 1e-3))
    q, qd, qdd, w = np.zeros((n, model.dof)), np.zeros((n, model.dof)), np.zeros((n, model.dof)), np.zeros((n, 6))
    for k in range(n):
        x, v, _ = (np.array(s, dtype=float) for s in sim.measure())
        qr, qdr, qddr = (s[0] for s in exc.sample([sim.time]))
        u = robot.inverse_dynamics(x, v, qddr + 400 * (qr - x) + 40 * (qdr - v), include_actuators=True)
        sim.command(u)
        sim.step()  # MuJoCo's sensors read at the state the step started from
        q[k], qd[k], qdd[k], w[k] = x, v, robot.forward_dynamics(x, v, u), sim.ft.raw
    return robot, model, q, qd, qdd, w


@pytest.mark.slow  # the module fixture: 1.5 s of closed loop, 4-10 s
def test_the_payload_and_the_offset_come_back_from_free_motion(readings) -> None:
    robot, model, q, qd, qdd, w = readings
    motion = sensor_motion(robot, q, qd, qdd)
    p = identify_payload(w + OFFSET, *motion)
    assert p.mass == pytest.approx(model.mass[-1], rel=1e-9)
    R = model.tool[:3, :3]  # the sensor frame (the tool frame) from the last body's
    com = R.T @ (model.com[-1] - model.tool[:3, 3])
    np.testing.assert_allclose(p.com, com, rtol=0, atol=1e-9)
    np.testing.assert_allclose(p.inertia, R.T @ model.inertia[-1] @ R, rtol=0, atol=1e-8)
    np.testing.assert_allclose(p.offset, OFFSET, rtol=0, atol=1e-9)
    assert np.abs(p.compensate(w + OFFSET, *motion)).max() < 1e-9  # MuJoCo's reading, explained


@pytest.mark.slow
def test_a_noisy_sensor_still_gives_the_payload_and_compensates_held_out_motion(readings) -> None:
    """Noise of 0.05 N / 0.005 N m (a good wrist sensor's): identified from the first 2/3,
    the compensated wrench of the last third (noise-free) stays within 0.1 N / 0.01 N m of zero
    (issue 41's target)."""
    robot, model, q, qd, qdd, w = readings
    motion = sensor_motion(robot, q, qd, qdd)
    noise = np.random.default_rng(0).normal(size=w.shape) * np.array([0.05] * 3 + [0.005] * 3)
    k = 2 * len(w) // 3
    p = identify_payload(w[:k] + OFFSET + noise[:k], *(m[:k] for m in motion))
    assert p.mass == pytest.approx(model.mass[-1], rel=0.02)
    held = p.compensate(w[k:] + OFFSET, *(m[k:] for m in motion))
    assert np.abs(held[:, :3]).max() < 0.1 and np.abs(held[:, 3:]).max() < 0.01, np.abs(held).max(axis=0)


def test_the_regressor_is_newton_euler_of_a_body() -> None:
    """By hand: a point mass 2 kg at c = (0, 0, 0.1) at rest under g = -9.81 z (sensor axes =
    world): f = m (a - g) = (0, 0, 19.62), n = c x f = 0; spinning about z at 3 rad/s, the
    centripetal force of a mass at c on the axis is 0 and a mass at (0.1, 0, 0) adds
    m omega x (omega x c) = (-1.8, 0, 0)."""
    phi = np.zeros(len(PARAMETERS))
    phi[0], phi[3] = 2.0, 0.2  # m, m c_z
    zero = np.zeros((1, 3))
    ag = np.array([[0.0, 0.0, 9.81]])
    np.testing.assert_allclose(wrench_regressor(ag, zero, zero)[0] @ phi, [0, 0, 19.62, 0, 0, 0], atol=1e-12)
    phi[1], phi[3] = 0.2, 0.0  # c = (0.1, 0, 0)
    w = np.array([[0.0, 0.0, 3.0]])
    f = wrench_regressor(np.zeros((1, 3)), w, zero)[0] @ phi
    np.testing.assert_allclose(f[:3], [-1.8, 0, 0], atol=1e-12)
    with pytest.raises(ValueError, match="wrench must be"):
        identify_payload(np.zeros((3, 5)), np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="not finite"):
        identify_payload(np.full((3, 6), np.nan), np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)))
