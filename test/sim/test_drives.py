"""Position and velocity command interfaces of the simulated arm (issue 43.1,
``rbd_ros.sim.drives``), without ROS, on arms no other test drives: the Unitree G1's right arm
(torso to wrist, 7 joints, effort limits 25 and 5 N m) and ASR's two-joint arm.

Oracles: the reference itself (tracking), MuJoCo's own bias force at rest (what a holding drive
must supply) and its applied actuator force (what the drive put in), the URDF's effort limits,
a twin simulator that never saw the refused commands."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.sim.simulator import BridgeConfig, Simulator
from robots_data import example_robot_urdf

G1 = "g1_description/urdf/g1_29dof_rev_1_0.urdf"
TWO = "asr_twodof_description/urdf/TwoDofs.urdf"
DT = 1e-3
NO_FRICTION = {"viscous_friction": False, "coulomb_friction": False}


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def __call__(self, level: str, message: str) -> None:
        self.lines.append((level, message))

    def text(self) -> str:
        return "\n".join(m for _, m in self.lines)


def g1_arm():
    from rbd_ros.urdf import load_model

    return load_model(str(example_robot_urdf(G1)), base_link="torso_link",
                      tip_link="right_wrist_yaw_link")


def two_dof():
    """ASR's two-joint arm (vertical axes), mounted on a wall (x axis of the world: axes
    horizontal), so gravity loads both joints."""
    from rbd_ros.urdf import load_model

    model = load_model(str(example_robot_urdf(TWO)))
    wall = np.eye(4)
    wall[:3, :3] = [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]
    return model.replace(base=wall @ model.base)


def make(model, **cfg) -> tuple[Simulator, Log]:
    log = Log()
    cfg.setdefault("command_timeout", 0.0)
    return Simulator(model, BridgeConfig(**cfg), log=log), log


def g1_pose(model) -> np.ndarray:
    """A pose inside the limits, elbow bent, arm away from the body."""
    return np.clip(np.array([0.3, -0.4, 0.2, 0.9, 0.3, 0.2, -0.1]), model.lower, model.upper)


@pytest.fixture(scope="module")
def g1():
    return g1_arm()


def test_position_interface_tracks_a_moving_reference(g1) -> None:
    q0 = g1_pose(g1)
    sim, log = make(g1, command_interface="position", initial_positions=q0)
    assert "drives: right_shoulder_pitch_joint position kp" in log.text()
    amp, f = 0.15, 0.5  # rad, Hz: up to 0.47 rad/s
    worst = 0.0
    for k in range(1500):
        t = k * DT
        ref = q0 + amp * np.sin(2 * np.pi * f * t + np.arange(7))
        assert sim.command(ref, None, "position")
        sim.step()
        if k > 100:  # after the start-up transient (the reference starts moving at once)
            worst = max(worst, np.abs(sim.q[sim.order] - (q0 + amp * np.sin(
                2 * np.pi * f * (t + DT) + np.arange(7)))).max())
    assert worst < 0.02  # rad: lag (2 / w) qd plus the gravity sag g / kp
    assert sim.stats.commands_rejected == 0 and sim.stats.unstable_steps == 0


def test_a_holding_position_drive_supplies_mujocos_gravity_through_its_stiffness(g1) -> None:
    q0 = g1_pose(g1)
    sim, _ = make(g1, command_interface="position", initial_positions=q0, **NO_FRICTION)
    for _ in range(2500):
        sim.command(q0, None, "position")
        sim.step()
    q, qd, effort = sim.measure()
    assert np.abs(qd).max() < 1e-6  # at rest
    bias = sim.mj_data.qfrc_bias[sim.dof_adr][sim.order]  # MuJoCo's gravity (no velocity)
    assert np.abs(bias).max() > 0.5  # the arm is loaded
    np.testing.assert_allclose(effort, bias, rtol=0, atol=1e-4)  # the drive holds it
    kp = sim.drive.kp[sim.order]
    np.testing.assert_allclose(kp * (q0 - q), effort, rtol=0, atol=1e-4)  # sag = g / kp
    assert np.abs(q0 - q).max() < 5e-3
    np.testing.assert_array_equal(effort, sim.mj_data.actuator_force[sim.order])  # applied


def test_drive_torque_never_exceeds_the_urdf_effort_limit(g1) -> None:
    lo, hi = g1.lower, g1.upper
    sim, _ = make(g1, command_interface="position", initial_positions=lo + 0.05 * (hi - lo))
    target = hi - 0.05 * (hi - lo)  # a far step: every drive saturates at first
    peak = np.zeros(7)
    for _ in range(600):
        sim.command(target, None, "position")
        sim.step()
        _, _, effort = sim.measure()
        np.testing.assert_array_equal(effort, sim.mj_data.actuator_force[sim.order])
        peak = np.maximum(peak, np.abs(effort))
    limit = g1.effort_limit[sim.order]
    assert (peak <= limit).all(), (peak, limit)
    assert (peak == limit).sum() >= 4  # it did press against the limit
    assert sim.stats.saturated_steps > 0


def test_velocity_interface_follows_a_velocity_command_and_holds_at_zero() -> None:
    model = two_dof()
    q0 = np.array([0.4, -0.7])
    sim, _ = make(model, command_interface="velocity", initial_positions=q0, **NO_FRICTION)
    assert np.abs(sim.mj_data.qfrc_bias[sim.dof_adr]).max() > 1.0  # gravity loads it
    v = np.array([0.5, -0.3])
    for k in range(1000):
        sim.command(v, None, "velocity")
        sim.step()
        if k >= 200:
            np.testing.assert_allclose(sim.qd, v, rtol=0, atol=1e-2)
    # the integrated reference: the position is where the velocity took it
    np.testing.assert_allclose(sim.q, q0 + v * 1.0, rtol=0, atol=1e-2)
    for _ in range(500):  # zero velocity: the PI loop holds against gravity (a P loop sags)
        sim.command([0.0, 0.0], None, "velocity")
        sim.step()
    held = sim.q
    for _ in range(1000):
        sim.command([0.0, 0.0], None, "velocity")
        sim.step()
    assert np.abs(sim.q - held).max() < 1e-5
    assert np.abs(sim.qd).max() < 1e-5


def test_per_joint_interfaces_effort_joint_gets_its_torque_exactly() -> None:
    model = two_dof()
    sim, _ = make(model, command_interface=["effort", "position"],
                  initial_positions=[0.2, 0.3], **NO_FRICTION)
    assert sim.interfaces_summary() == "J1 effort, J2 position"
    for _ in range(600):  # J1 swings under gravity (0.5 N m < 1.3 N m), J2 holds its 0.5 rad
        assert sim.command([0.5], None, "effort")
        assert sim.command([0.5], None, "position")
        sim.step()
        _, _, effort = sim.measure()
        assert effort[0] == 0.5  # the torque itself
    assert abs(sim.q[0] - 0.2) > 1.0
    assert abs(sim.q[1] - 0.5) < 0.01


def test_foreign_wrong_length_and_nan_commands_are_refused_and_not_applied(g1) -> None:
    q0 = g1_pose(g1)
    cfg = {"command_interface": ["position"] * 4 + ["velocity"] * 3, "initial_positions": q0}
    sim, log = make(g1, **cfg)
    twin, _ = make(g1, **cfg)
    good_p, good_v = q0[:4] + 0.05, np.array([0.1, 0.0, -0.1])
    for s in (sim, twin):
        assert s.command(good_p, None, "position") and s.command(good_v, None, "velocity")
    assert not sim.command(np.zeros(7), None, "effort")  # no joint is in effort mode
    assert "effort command, but no joint uses the effort interface" in log.text()
    assert not sim.command(np.zeros(7), None, "position")  # 4 position joints
    assert not sim.command([0.0, np.nan, 0.0], None, "velocity")
    assert not sim.command(good_p, None, "torque")
    assert sim.stats.commands_rejected == 4
    said = log.text()  # four causes within a second: each said (the throttle is per cause)
    assert "position command has 7 values, expected 4" in said, said
    assert "velocity command has NaN/Inf" in said, said
    assert "torque command, but no joint uses the torque interface" in said, said
    for _ in range(200):
        sim.step()
        twin.step()
    np.testing.assert_array_equal(sim.q, twin.q)  # nothing of them was applied
    np.testing.assert_array_equal(sim.measure()[2], twin.measure()[2])


def test_a_repeated_refusal_is_said_once_a_second_with_the_count(g1, monkeypatch) -> None:
    import time as real_time

    from rbd_ros.sim import simulator

    clock = [100.0]

    class Clock:  # the module's ``time`` with a hand-moved monotonic clock
        def __getattr__(self, name):
            return getattr(real_time, name)

        @staticmethod
        def monotonic() -> float:
            return clock[0]

    monkeypatch.setattr(simulator, "time", Clock())
    sim, log = make(g1, command_interface=["position"] * 7, initial_positions=g1_pose(g1))
    for _ in range(50):  # one client repeating one mistake at 1 kHz
        assert not sim.command(np.zeros(3), None, "position")
        clock[0] += 0.001
    assert not sim.command(np.zeros(7), None, "effort")  # a second cause in that second
    errors = [m for level, m in log.lines if level == "error"]
    assert len(errors) == 2 and "has 3 values" in errors[0] and "effort" in errors[1], errors
    clock[0] += 1.0
    assert not sim.command(np.zeros(3), None, "position")
    assert "(+49 more rejected for the same cause since the last message)" in log.lines[-1][1]
    assert sim.stats.commands_rejected == 52


def test_stale_commands_brake_as_the_effort_path_and_resume_without_a_jump(g1) -> None:
    q0 = g1_pose(g1)
    sim, log = make(g1, command_interface="velocity", initial_positions=q0,
                    command_timeout=0.05)
    t = 0.0
    for _ in range(50):
        sim.command(np.zeros(7), t, "velocity")
        sim.step(t)
        t += DT
    for _ in range(200):  # no command: stale after 50 ms
        sim.step(t)
        t += DT
    assert sim.braking and sim.stats.stale_steps > 100
    assert not sim.measure()[2].any()  # zero torque
    assert "command timeout" in log.text()
    assert np.abs(sim.q - q0).max() > 0.01  # it sank while braking
    qd_before = sim.qd
    sim.command(np.zeros(7), t, "velocity")
    sim.step(t)
    assert not sim.braking
    # the velocity drives resume from where the joints are (p = q: tau = -kd qd), not from
    # where they were when the commands stopped (that would add kp (p_old - q))
    effort = sim.measure()[2]
    np.testing.assert_allclose(effort, -(sim.drive.kd * qd_before)[sim.order], rtol=1e-9,
                               atol=1e-9)


@pytest.mark.parametrize("cfg, message", [
    ({"command_interface": "torque"}, "command_interface must be effort, position, velocity"),
    ({"command_interface": ["position"] * 3}, "one per joint (7:"),
    ({"command_interface": "position", "command_mode": "voltage"}, "needs command_mode torque"),
    ({"command_interface": "position", "drive_kp": -1.0}, "drive_kp must be finite and >= 0"),
    ({"command_interface": "position", "drive_kd": [1.0, 2.0]}, "drive_kd must be one number"),
])
def test_bad_interface_settings_are_refused_naming_them(g1, cfg, message) -> None:
    with pytest.raises(ValueError, match=None) as err:
        make(g1, **cfg)
    assert message in str(err.value)


def test_given_gains_are_used_and_an_unstable_loop_is_warned_about(g1) -> None:
    sim, log = make(g1, command_interface="position", drive_kp=100.0, drive_kd=2.0,
                    initial_positions=g1_pose(g1))
    np.testing.assert_array_equal(sim.drive.kp, 100.0)
    np.testing.assert_array_equal(sim.drive.kd, 2.0)
    _, log = make(g1, command_interface="position", drive_kp=1e6, drive_kd=1e-3)
    assert "the drive loop is unstable at the timestep 0.001 s" in log.text()
