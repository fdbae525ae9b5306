"""Adversarial pass over the mobile bases (issue 19's style): what a new user meets with bad
input and unkind timing on the MuJoCo mobile bridge and the dynamics services.  Each test
failed before its fix; the oracles are physical facts (a tipped base is no ground robot,
slipping wheels make wheel odometry drift) or the requests' own numbers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_ros.model import MdhModel
from rbd_ros.sim.mobile_sim import MobileConfig, MobileSimulator
from rbd_ros.sim.simulator import BridgeConfig
from rbd_ros.util.resources import config_file


@pytest.fixture(scope="module")
def diff_model() -> MdhModel:
    return MdhModel.from_yaml(str(config_file("mobile_arm7")))


def _drive(sim: MobileSimulator, wheel_torque: float, steps: int) -> None:
    """Both wheels at ``wheel_torque``, the arm held by a PD on its start."""
    u = np.zeros(len(sim.joint_names))
    u[:2] = wheel_torque
    for _ in range(steps):
        q, qd, _ = sim.measure()
        u[2:] = 200.0 * (sim.q0[2:] - q[2:]) - 20.0 * qd[2:]
        assert sim.command(u, None)
        sim.step(None)


def _tilt(quat: np.ndarray) -> float:
    return math.degrees(2.0 * math.asin(min(1.0, math.hypot(quat[0], quat[1]))))


def test_wheeled_base_tipping_over_is_said(diff_model):
    """50 N m per wheel (with the wheels' limit lifted: the URDF's is 30 N m) wheelies mobile_arm7
    over: the base ends upside down with no unstable step, so nothing said it; /odom and the joint
    states are no ground robot's any more.  The simulator now warns naming the tilt and
    wheel_effort_limit."""
    logs: list[tuple[str, str]] = []
    sim = MobileSimulator(diff_model, BridgeConfig(), MobileConfig(wheel_effort_limit=1e6),
                          log=lambda level, msg: logs.append((level, msg)))
    _drive(sim, 50.0, 2000)
    assert _tilt(sim.base_state()[1]) > 45.0  # the physics: it did tip over
    said = [msg for level, msg in logs if level == "warn" and "tipped" in msg]
    assert said and "wheel_effort_limit" in said[0]
    assert sim.upset_steps > 0


def test_slipping_wheels_are_said_with_wheel_odometry(diff_model):
    """On ice (floor_friction 0.02) 5 N m spins the wheels: wheel odometry then drifts from the
    truth; the simulator says the wheels slip and by how much."""
    logs: list[tuple[str, str]] = []
    mobile = MobileConfig(floor_friction=0.02, odom_source="wheel_odometry")
    sim = MobileSimulator(diff_model, BridgeConfig(), mobile, log=lambda level, msg: logs.append((level, msg)))
    _drive(sim, 5.0, 600)
    assert sim.slip_max > 1.0
    said = [msg for level, msg in logs if level == "warn" and "slip" in msg]
    assert said and "odometry" in said[0]


def test_gentle_driving_says_nothing(diff_model):
    """The warnings are not noise: 2 N m on a normal floor rolls (slip < 2 mm/s), level."""
    logs: list[tuple[str, str]] = []
    sim = MobileSimulator(diff_model, BridgeConfig(), log=lambda level, msg: logs.append((level, msg)))
    _drive(sim, 2.0, 1500)
    assert not [msg for level, msg in logs if level == "warn"]
    assert sim.upset_steps == 0


# ---- the dynamics services ------------------------------------------------------------------
def test_forward_simulate_divergence_time_is_the_runs(diff_model):
    """Torques 0 for 2 s, then 1e12 N m: the run diverges after t = 2 s.  The service ran the
    core once per torque row and passed on its message, so it said 't = 0.02 s (step 2 of
    100)': a wrong time in a 300-step run."""
    from rbd_ros.robot import Robot
    from rbd_ros.services import DynamicsService, RequestError

    robot = Robot(diff_model)  # a MobileBaseRobot (the model has a diff_drive base)
    service = DynamicsService(robot)
    n = robot.dof
    names = ["base_x", "base_y", "base_yaw", "base_vx", "base_vy", "base_wz",
             *service.names.wheels, *robot.joint_names]
    tau = np.zeros((3, 2 + n))
    tau[2, :2] = 1e12
    with pytest.raises(RequestError, match="diverged") as err:
        service.forward_simulate(names, np.zeros(3 + n), np.zeros(3 + n), tau.ravel(), 1.0, 0.01)
    t = float(str(err.value).split("t = ")[1].split(" ")[0])
    assert 2.0 <= t <= 3.0, str(err.value)
    assert "of 300" in str(err.value)


# ---- the MuJoCo bridge node -----------------------------------------------------------------
@pytest.mark.ros
def test_mobile_parameters_on_a_fixed_arm_are_refused(node_process):
    """A user who forgot ``base:=diff_drive`` (or picked a fixed arm) and set ``base_model``,
    ``initial_base_pose`` got a fixed arm with those parameters silently ignored; the bridge
    now refuses naming them and the robot's fixed base."""
    from test_bridge_node import bridge_args, finished

    proc = node_process(bridge_args(str(config_file("arm7")), base_model="ideal",
                                    initial_base_pose=[1.0, 0.0, 0.0]))
    assert finished(proc, 120.0) == 2
    assert "base_model" in proc.output and "initial_base_pose" in proc.output
    assert "fixed base" in proc.output and "Traceback" not in proc.output


@pytest.mark.ros
def test_namespace_locks_of_different_namespaces_do_not_collide():
    """'/left_arm/' and '/left/arm/' are two namespaces; their lock files were one
    ('domain0_left_arm_lock'), so the second server was refused as 'already offered'."""
    from rbd_ros.ros.nodes.dynamics_server import namespace_lock

    first = namespace_lock("/adv2_left_arm/", shared=False, wait=0.0)
    try:
        second = namespace_lock("/adv2_left/arm/", shared=False, wait=0.0)
        second.close()
    finally:
        first.close()


def test_base_effort_limit_of_wrong_length_names_the_parameter():
    """``base_effort_limit:=[1.0, 2.0]`` said 'operands could not be broadcast together ...'."""
    with pytest.raises(ValueError, match=r"base_effort_limit must be one number or 3"):
        MobileConfig(base_effort_limit=(1.0, 2.0))
    with pytest.raises(ValueError, match=r"base_effort_limit"):
        MobileConfig(base_effort_limit="abc")
    assert MobileConfig(base_effort_limit=5.0).base_effort_limit == (5.0, 5.0, 5.0)


def test_initial_base_pose_places_a_planar_base_too():
    """``initial_base_pose:=[1, 2, 0.5]`` on omni_arm7 left the base at the origin, saying
    nothing (only a diff drive read it); now it places a planar base as well, and a clash with
    the base entries of ``initial_positions`` is refused naming both."""
    m = MdhModel.from_yaml(str(config_file("omni_arm7")))
    sim = MobileSimulator(m, BridgeConfig(), MobileConfig(initial_base_pose=(1.0, 2.0, 0.5)),
                          log=lambda *a: None)
    assert sim.measure()[0][:3] == pytest.approx([1.0, 2.0, 0.5])
    assert sim.base_state()[0][:2] == pytest.approx([1.0, 2.0])
    sim.reset()
    assert sim.measure()[0][:3] == pytest.approx([1.0, 2.0, 0.5])
    clash = BridgeConfig(initial_positions=(3.0, 0.0, 0.0, *np.zeros(m.dof)))
    with pytest.raises(ValueError, match="initial_base_pose.*initial_positions"):
        MobileSimulator(m, clash, MobileConfig(initial_base_pose=(1.0, 2.0, 0.5)), log=lambda *a: None)


@pytest.mark.parametrize("name", ["arm7", "mobile_arm7"])
def test_forward_simulate_tiny_torque_period_is_refused_naming_both(name):
    """``torque_period`` 1e-300 s (and 1e-12 s): the row index overflowed the integer cast and
    crashed the service with IndexError (index -9223372036854775808); then the first row was
    held over the whole first step and the last after it.  Each row is now held for exactly its
    period (issue 38), which no integration grid within 1000 sub-steps of dt = 1 ms meets:
    refused, naming dt and the period; a single row (held throughout) still runs."""
    from rbd_ros.robot import Robot
    from rbd_ros.services import DynamicsService, RequestError

    service = DynamicsService(Robot(MdhModel.from_yaml(str(config_file(name)))))
    names = list(service._every) if service.moving else list(service.robot.joint_names)
    nq, nv = service.widths(names)
    nu = len(service.efforts(names)[0]) if service.moving else nv
    tau = np.outer([0.0, 1.0, 2.0], np.ones(nu))
    for period in (1e-300, 1e-12):
        with pytest.raises(RequestError, match=f"dt 0.001 s and effort_period {period:g} s have no common step"):
            service.forward_simulate(names, np.zeros(nq), np.zeros(nv), tau.ravel(), period, 1e-3, duration=0.01)
    runs = [service.forward_simulate(names, np.zeros(nq), np.zeros(nv), tau[2], period, 1e-3, duration=0.01)
            for period in (1e-300, 1e-12)]
    np.testing.assert_array_equal(runs[0].positions, runs[1].positions)
    assert np.abs(runs[0].velocities[-1]).max() > 0  # the torques did act


def test_wheel_effort_limit_comes_from_the_urdf(diff_model):
    """The drive wheels' <limit effort> (30 N m in mobile_arm7.urdf) is the model's and the
    simulator's default saturation (it was none: 50 N m tipped the robot over, above)."""
    from rbd_ros.robot import Robot
    from rbd_ros.util.resources import bundled_urdf

    urdf = Robot.from_urdf(str(bundled_urdf("mobile_arm7")), base_type="diff_drive").model
    assert urdf.wheel_effort_limit == 30.0 == diff_model.wheel_effort_limit
    assert MdhModel.from_yaml(urdf.to_yaml()).wheel_effort_limit == 30.0  # the YAML keeps it
    sim = MobileSimulator(diff_model, BridgeConfig())
    np.testing.assert_array_equal(sim.model.effort_limit[:2], [30.0, 30.0])
    sim = MobileSimulator(diff_model, BridgeConfig(), MobileConfig(wheel_effort_limit=12.0))
    np.testing.assert_array_equal(sim.model.effort_limit[:2], [12.0, 12.0])  # a parameter wins
    with pytest.raises(ValueError, match="wheel_effort_limit"):
        MobileConfig(wheel_effort_limit=0.0)


def test_a_yaw_with_no_digits_left_is_refused_by_name(diff_model) -> None:
    """|base yaw| beyond 1e6 rad (a double's spacing 1.2e-10 rad there; at 1e20, 1.6e4 rad):
    the pose would be any heading at all, so fk, jacobian and simulate refuse it naming q[2];
    1e6 itself and its wrapped value give the same pose."""
    from rbd_ros.robot import Robot

    robot = Robot(diff_model)
    q = np.zeros(robot.nq)
    for yaw in (1e7, -1e20, 1e300):
        q[2] = yaw
        for call in (lambda: robot.fk(q), lambda: robot.jacobian(q),
                     lambda: robot.simulate(q, np.zeros(robot.nv), np.zeros(robot.nu), 1e-3, 2)):
            with pytest.raises(ValueError, match=r"q\[2\] \(base yaw\).*wrap it"):
                call()
    q[2] = 1e6
    wrapped = q.copy()
    wrapped[2] = math.remainder(1e6, 2 * math.pi)
    np.testing.assert_allclose(robot.fk(q), robot.fk(wrapped), atol=1e-9)
