"""The bridge's ROS-free parts: MuJoCo model from the MdhModel, motor model (003 §6.1),
sensors, safety.  Closed forms use a single joint about a vertical axis (gravity does no work)."""
from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from rbd_ros.algorithm.mdh import mdh_transform
from rbd_ros.model import MdhModel
from rbd_ros.model.physical import InertiaWarning
from rbd_ros.sim.examples import SEVEN_DOF_POSE, seven_dof, three_link
from rbd_ros.sim.motor import quantise
from rbd_ros.sim.mujoco_model import build_mujoco_model, fix_inertia
from rbd_ros.sim.simulator import BridgeConfig, Simulator

I_JOINT = 0.03 + 2.0 * 0.3**2  # link inertia about the joint axis of one_joint()


def one_joint(**changes) -> MdhModel:
    model = MdhModel(joint_names=("j",), joint_type=[0], a=[0.0], alpha=[0.0], d=[0.0],
                     theta=[0.0], mass=[2.0], com=[[0.3, 0.0, 0.0]],
                     inertia=[np.diag([0.01, 0.02, 0.03])], effort_limit=[5.0])
    return model.replace(**changes) if changes else model


class Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def __call__(self, level: str, message: str) -> None:
        self.lines.append((level, message))

    def count(self, text: str) -> int:
        return sum(text in m for _, m in self.lines)


def sim_of(model: MdhModel, **cfg) -> tuple[Simulator, Log]:
    log = Log()
    return Simulator(model, BridgeConfig(**cfg), log=log), log


# ---- the MuJoCo model ---------------------------------------------------------------------------
@pytest.mark.parametrize("prismatic", [False, True])
def test_bodies_follow_the_mdh_chain(prismatic: bool) -> None:
    base = np.eye(4)
    base[:3, :3] = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    base[:3, 3] = [0.1, -0.2, 0.3]
    model = three_link(base=base, joint_type=[0, 1 if prismatic else 0, 0],
                       lower=[-3, -0.5, -2.8], upper=[3, 0.5, 2.8])
    m, warnings = build_mujoco_model(model)
    assert warnings == []
    d = mujoco.MjData(m)
    q = np.array([0.4, -0.3, 1.1])
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    T = model.base.copy()
    for i in range(model.dof):
        theta = model.theta[i] + (0.0 if prismatic and i == 1 else q[i])
        dd = model.d[i] + (q[i] if prismatic and i == 1 else 0.0)
        T = T @ mdh_transform(model.a[i], model.alpha[i], dd, theta)
        R = T[:3, :3]
        np.testing.assert_allclose(d.xpos[i + 1], T[:3, 3], atol=1e-14)
        np.testing.assert_allclose(d.xmat[i + 1].reshape(3, 3), R, atol=1e-14)
        np.testing.assert_allclose(d.xipos[i + 1], R @ model.com[i] + T[:3, 3], atol=1e-14)
        Ri = d.ximat[i + 1].reshape(3, 3)
        np.testing.assert_allclose(Ri @ np.diag(m.body_inertia[i + 1]) @ Ri.T,
                                   R @ model.inertia[i] @ R.T, atol=1e-14)
        assert m.body_mass[i + 1] == model.mass[i]
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4 and m.opt.timestep == 0.001
    np.testing.assert_array_equal(m.opt.gravity, model.gravity)
    assert m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT
    np.testing.assert_allclose(m.jnt_range, np.c_[model.lower, model.upper])
    assert m.jnt_limited.all() and m.nu == 3
    assert m.jnt_type[1] == (mujoco.mjtJoint.mjJNT_SLIDE if prismatic else mujoco.mjtJoint.mjJNT_HINGE)


def test_actuator_model_on_the_joints() -> None:
    model = three_link(gear_ratio=[100, 80, 50], rotor_inertia=[2e-5, 3e-5, 1e-5],
                       viscous=[1.0, 2.0, 3.0], coulomb=[0.5, 0.4, 0.3])
    m, _ = build_mujoco_model(model)
    np.testing.assert_allclose(m.dof_armature, model.armature)  # Gamma^T J_M Gamma (6.17)
    np.testing.assert_allclose(m.dof_damping, model.viscous)  # D (6.16)
    np.testing.assert_allclose(m.dof_frictionloss, model.coulomb)
    m, _ = build_mujoco_model(model, armature=False, viscous=False, coulomb=False)
    assert not m.dof_armature.any() and not m.dof_damping.any() and not m.dof_frictionloss.any()
    m, _ = build_mujoco_model(model, actuators=False, integrator="implicitfast", timestep=0.002)
    assert m.nu == 0 and not m.dof_armature.any() and m.opt.timestep == 0.002
    m, _ = build_mujoco_model(model, integrator="euler", contacts=True)
    assert (m.geom_contype != 0).sum() == 3  # the collision capsules (the rest only look)
    assert not m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_CONTACT
    with pytest.raises(ValueError, match="integrator"):
        build_mujoco_model(model, integrator="leapfrog")


def test_puma_like_link3_inertia_is_fixed_minimally_with_a_warning() -> None:
    # Armstrong et al.'s PUMA 560 link 3: 0.066 + 0.0125 < 0.086
    puma3 = np.diag([0.066, 0.086, 0.0125])
    fixed, warnings = fix_inertia(17.4, np.zeros(3), puma3, label="link3")
    assert len(warnings) == 1 and "triangle inequality" in warnings[0] and "link3" in warnings[0]
    w = np.sort(fixed.principal)
    assert w[0] + w[1] >= w[2] and w[2] == 0.086
    deficit = 0.086 - 0.066 - 0.0125
    np.testing.assert_allclose(w[:2], [0.0125 + deficit / 2, 0.066 + deficit / 2])
    np.testing.assert_allclose(np.linalg.eigvalsh(fixed.tensor), w, atol=1e-15)
    with pytest.warns(InertiaWarning, match="link 'link2'.*triangle inequality"):
        model = three_link(inertia=[three_link().inertia[0], puma3, three_link().inertia[2]])
    with pytest.raises(ValueError):  # MuJoCo itself refuses it ...
        spec = mujoco.MjSpec()
        b = spec.worldbody.add_body(mass=1.0, fullinertia=[0.066, 0.086, 0.0125, 0, 0, 0])
        b.explicitinertial = True
        b.add_joint()
        spec.compile()
    m, warnings = build_mujoco_model(model)  # ... the model fixed it when it was made, and
    assert warnings == []  # said so: the bridge simulates the core's model unchanged
    np.testing.assert_allclose(np.sort(m.body_inertia[2]), np.linalg.eigvalsh(model.inertia[1]))
    log = Log()
    Simulator(model, log=log)
    assert log.count("inertia fix-up") == 0


def test_zero_mass_and_not_positive_definite_inertias_are_fixed() -> None:
    base = three_link()
    with pytest.warns(InertiaWarning, match="link 'link3'.*not positive semidefinite"):
        model = base.replace(mass=[4.0, 0.0, 2.0], inertia=[np.zeros((3, 3)), np.zeros((3, 3)),
                                                            np.diag([-0.01, 0.04, 0.04])])
    m, warnings = build_mujoco_model(model)  # MuJoCo's minimums on top of the model's [0, .04, .04]
    text = "\n".join(warnings)
    assert "mass 0 kg" in text and "not positive definite" in text
    assert len(warnings) == 4  # link1 inertia, link2 mass + inertia, link3 inertia
    assert m.body_mass[2] == 1e-6 and (m.body_inertia[1:] >= 1e-9).all()
    assert build_mujoco_model(three_link())[1] == []


# ---- configuration ------------------------------------------------------------------------------
def test_config_file_holds_the_defaults() -> None:
    from rbd_ros.util.resources import config_file

    assert BridgeConfig.from_yaml(config_file("bridge")) == BridgeConfig()
    with pytest.raises(ValueError, match="unknown bridge setting"):
        BridgeConfig.from_dict({"timestep": 0.001, "tiemstep": 1})
    for bad in ({"mode": "fast"}, {"integrator": "x"}, {"timestep": 0}, {"publish_every": 0},
                {"command_mode": "current"}, {"latency_steps": -1}, {"brake_damping": -1}):
        with pytest.raises(ValueError):
            BridgeConfig(**bad)
    with pytest.raises(ValueError, match="joints must list"):
        Simulator(three_link(), BridgeConfig(joints=("j1", "j2")))
    with pytest.raises(ValueError, match="voltage mode needs"):
        Simulator(three_link(), BridgeConfig(command_mode="voltage"))


# ---- actuator model ------------------------------------------------------------------------------
def test_saturation_clamps_to_the_effort_limit_and_can_be_switched_off() -> None:
    sim, _ = sim_of(one_joint(), command_timeout=0.0)
    sim.command([50.0])
    sim.step()
    assert sim.measure()[2][0] == 5.0 and sim.stats.saturated_steps == 1
    sim.command([-50.0])
    sim.step()
    assert sim.measure()[2][0] == -5.0
    sim, _ = sim_of(one_joint(), command_timeout=0.0, saturation=False)
    sim.command([50.0])
    sim.step()
    assert sim.measure()[2][0] == 50.0 and sim.stats.saturated_steps == 0


def test_viscous_friction_and_armature_closed_form() -> None:
    """I' qdd + D qd = tau  ->  qd(t) = tau/D (1 - exp(-D t / I')), I' = I + Gamma^2 J_M."""
    gamma, jm, D, tau = 50.0, 4e-5, 0.8, 2.0
    model = one_joint(gear_ratio=[gamma], rotor_inertia=[jm], viscous=[D])
    sim, _ = sim_of(model, command_timeout=0.0)
    for _ in range(1000):
        sim.command([tau])
        sim.step()
    Ip = I_JOINT + gamma**2 * jm
    t = sim.time
    assert t == pytest.approx(1.0)
    np.testing.assert_allclose(sim.qd, tau / D * (1 - math.exp(-D * t / Ip)), rtol=1e-10)
    np.testing.assert_allclose(sim.q, tau / D * (t - Ip / D * (1 - math.exp(-D * t / Ip))),
                               rtol=1e-10)
    sim, _ = sim_of(model, command_timeout=0.0, armature=False, viscous_friction=False)
    for _ in range(1000):
        sim.command([tau])
        sim.step()
    np.testing.assert_allclose(sim.qd, tau / I_JOINT * sim.time, rtol=1e-10)


def test_voltage_mode_matches_the_closed_form_of_6_15_to_6_17() -> None:
    """(6.17) for one joint: M' qdd + D' qd = K v, M' = I + g^2 J_M, D' = D + g^2 K_M K_e / R,
    K = g K_M / R; from rest qd(t) = K v / D' (1 - exp(-D' t / M'))."""
    g, jm, km, ke, r, D, v = 30.0, 5e-5, 0.05, 0.05, 1.2, 0.1, 12.0
    model = one_joint(gear_ratio=[g], rotor_inertia=[jm], viscous=[D], torque_constant=[km],
                      back_emf_constant=[ke], resistance=[r])
    sim, _ = sim_of(model, command_timeout=0.0, command_mode="voltage", voltage_limit=24.0)
    Mp, Dp, K = I_JOINT + g**2 * jm, D + g**2 * km * ke / r, g * km / r
    for _ in range(500):
        sim.command([v])
        sim.step()
    t = sim.time
    qd = K * v / Dp * (1 - math.exp(-Dp * t / Mp))
    q = K * v / Dp * (t - Mp / Dp * (1 - math.exp(-Dp * t / Mp)))
    np.testing.assert_allclose(sim.qd, qd, rtol=1e-9)
    np.testing.assert_allclose(sim.q, q, rtol=1e-9)
    # reported effort = gamma K_M i_M, i_M = (v - K_e gamma qd) / R  (6.2)
    np.testing.assert_allclose(sim.measure()[2], g * km * (v - ke * g * sim.qd) / r, rtol=1e-12)
    sim.command([100.0])  # clamped to the voltage limit
    sim.step()
    assert sim.stats.saturated_steps == 1
    np.testing.assert_allclose(sim.measure()[2], K * 24.0 - g**2 * km * ke / r * sim.qd)


def test_coulomb_friction_holds_below_and_slips_above() -> None:
    fc = 1.0
    sim, _ = sim_of(one_joint(coulomb=[fc]), command_timeout=0.0)
    for _ in range(500):
        sim.command([0.5 * fc])
        sim.step()
    assert abs(sim.qd[0]) < 1e-3 and abs(sim.q[0]) < 1e-3
    sim, _ = sim_of(one_joint(coulomb=[fc]), command_timeout=0.0)
    for _ in range(500):
        sim.command([3.0 * fc])
        sim.step()
    np.testing.assert_allclose(sim.qd, 2.0 * fc / I_JOINT * sim.time, rtol=0.02)
    sim, _ = sim_of(one_joint(coulomb=[fc]), command_timeout=0.0, coulomb_friction=False)
    for _ in range(500):
        sim.command([0.5 * fc])
        sim.step()
    np.testing.assert_allclose(sim.qd, 0.5 * fc / I_JOINT * sim.time, rtol=1e-10)


# ---- sensors and latency ------------------------------------------------------------------------
def test_encoder_quantisation_and_seeded_noise() -> None:
    res = 2 * np.pi / 4096
    x = np.array([0.1234, -1.0, 2.0])
    np.testing.assert_array_equal(quantise(x, np.array([res, 0.0, 0.5])),
                                  [np.round(0.1234 / res) * res, -1.0, 2.0])
    sim, _ = sim_of(three_link(), command_timeout=0.0, encoder_resolution=res,
                    initial_positions=[0.1234, -0.5, 0.77])
    q, _, _ = sim.measure()
    np.testing.assert_allclose(q / res, np.round(q / res), atol=1e-9)
    assert np.abs(q - [0.1234, -0.5, 0.77]).max() <= res / 2 + 1e-15
    a, _ = sim_of(three_link(), position_noise=0.01, velocity_noise=[0.1, 0.2, 0.3],
                  effort_noise=0.5, noise_seed=7)
    b, _ = sim_of(three_link(), position_noise=0.01, velocity_noise=[0.1, 0.2, 0.3],
                  effort_noise=0.5, noise_seed=7)
    ma = np.array([np.concatenate(a.measure()) for _ in range(4000)])
    mb = np.array([np.concatenate(b.measure()) for _ in range(4000)])
    np.testing.assert_array_equal(ma, mb)  # same seed, same noise
    np.testing.assert_allclose(ma.std(axis=0), [0.01] * 3 + [0.1, 0.2, 0.3] + [0.5] * 3, rtol=0.05)
    a.reset()
    np.testing.assert_array_equal(np.concatenate(a.measure()), ma[0])  # reset reseeds


def test_latency_delays_commands_by_whole_steps() -> None:
    rng = np.random.default_rng(3)
    commands = rng.uniform(-10, 10, (60, 3))
    late, _ = sim_of(three_link(), command_timeout=0.0, latency_steps=4)
    ref, _ = sim_of(three_link(), command_timeout=0.0)
    shifted = np.vstack([np.zeros((4, 3)), commands[:-4]])
    for c, s in zip(commands, shifted):
        late.command(c)
        late.step()
        ref.command(s)
        ref.step()
    np.testing.assert_array_equal(late.q, ref.q)
    np.testing.assert_array_equal(late.qd, ref.qd)


def test_joint_order_maps_commands_and_states() -> None:
    model = three_link()
    sim, _ = sim_of(model, command_timeout=0.0, joints=("j3", "j1", "j2"),
                    initial_positions=[0.3, 0.1, 0.2])
    np.testing.assert_array_equal(sim.q, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(sim.measure()[0], [0.3, 0.1, 0.2])
    sim.command([3.0, 1.0, 2.0])
    sim.step()
    np.testing.assert_array_equal(sim.mj_data.ctrl, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(sim.measure()[2], [3.0, 1.0, 2.0])


# ---- safety -------------------------------------------------------------------------------------
def test_timeout_brake_engages_once_and_releases() -> None:
    model = one_joint()
    sim, log = sim_of(model, command_timeout=0.05, brake_damping=0.2)
    now = 0.0
    for _ in range(200):  # spin up with fresh commands
        now += 0.001
        sim.command([1.0], now)
        sim.step(now)
    assert not sim.braking and sim.qd[0] > 0.5
    v0 = sim.qd[0]
    for _ in range(1000):  # controller gone
        now += 0.001
        sim.step(now)
    assert sim.braking and sim.measure()[2][0] == 0.0
    assert log.count("command timeout") == 1
    # the last command acts until the timeout, then qd = v1 exp(-b t / I) under the brake
    braked = sim.stats.stale_steps * 0.001
    assert braked == pytest.approx(0.95, abs=0.0015)
    v1 = v0 + 1.0 / I_JOINT * (1.0 - braked)
    np.testing.assert_allclose(sim.qd[0], v1 * math.exp(-0.2 * braked / I_JOINT), rtol=1e-9)
    sim.command([0.0], now)
    sim.step(now)
    assert not sim.braking and log.count("commands resumed") == 1
    assert sim.mj_model.dof_damping[0] == 0.0
    fresh, log = sim_of(model)  # no command at all is stale too
    fresh.step(10.0)
    assert fresh.braking and log.count("no command yet") == 1


def test_bad_commands_are_rejected_and_the_last_safe_one_kept() -> None:
    sim, log = sim_of(three_link(), command_timeout=0.0)
    assert sim.command([1.0, 2.0, 3.0])
    assert not sim.command([float("nan"), 0.0, 0.0])
    assert not sim.command([1.0, 2.0])
    assert not sim.command([])
    assert not sim.command([0.0, float("inf"), 0.0])
    sim.step()
    np.testing.assert_array_equal(sim.mj_data.ctrl, [1.0, 2.0, 3.0])
    assert sim.stats.commands_rejected == 4 and sim.stats.commands_received == 1
    errors = [m for level, m in log.lines if level == "error"]  # throttled per cause:
    assert len(errors) == 2 and "NaN/Inf" in errors[0] and "2 values" in errors[1], errors


def test_reset_restores_the_initial_state_and_keeps_the_clock() -> None:
    sim, _ = sim_of(seven_dof(), command_timeout=0.0, initial_positions=SEVEN_DOF_POSE.tolist(),
                    initial_velocities=[0.1] * 7, latency_steps=2)
    for _ in range(100):
        sim.command(np.ones(7))
        sim.step()
    t = sim.time
    sim.reset()
    np.testing.assert_array_equal(sim.q, SEVEN_DOF_POSE)
    np.testing.assert_array_equal(sim.qd, [0.1] * 7)
    assert sim.time == t
    with pytest.raises(ValueError, match="initial_positions"):
        sim_of(seven_dof(), initial_positions=[0.0, 1.0])


def test_joint_limits_hold_as_in_mujoco() -> None:
    model = seven_dof()
    sim, _ = sim_of(model, command_timeout=0.0, initial_positions=SEVEN_DOF_POSE.tolist())
    q4 = []
    for _ in range(800):  # joint 4 falls onto its lower limit at about step 300
        sim.command(np.zeros(7))
        sim.step()
        q4.append(sim.q[3])
    assert min(q4) > model.lower[3] - 0.02  # MuJoCo's limit is a soft constraint
    assert min(q4) < model.lower[3] + 0.02  # it did get there


def test_default_start_is_zero_clipped_into_the_limits() -> None:
    model = seven_dof()  # joint 4's range [-3.07, -0.07] excludes 0
    sim, log = sim_of(model)
    expected = np.zeros(7)
    expected[3] = model.upper[3]
    np.testing.assert_array_equal(sim.q, expected)
    assert log.count("nearest limit") == 1
