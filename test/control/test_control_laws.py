"""Control laws vs hand computation with the core's public API as the oracle; saturation,
NaN handling, anti-windup, gain validation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rbd_ros.control.gains import LAWS, load_gains, validate_gain, validate_gains
from rbd_ros.control.laws import ComputedTorque, Reference, ResolvedAcceleration, TaskPD, make_law
from rbd_ros.lie.so3 import orientation_error
from rbd_ros.robot import Robot
from rbd_ros.sim.examples import SEVEN_DOF_POSE, seven_dof, three_link

RNG = np.random.default_rng(3)


def _actuated(model):
    n = model.dof
    return model.replace(gear_ratio=np.full(n, 50.0), rotor_inertia=np.full(n, 2e-5),
                         viscous=np.linspace(0.5, 1.0, n), coulomb=np.linspace(0.2, 0.4, n),
                         effort_limit=np.full(n, 1e4))


@pytest.fixture(scope="module")
def arm7() -> Robot:
    return Robot(_actuated(seven_dof()))


def _state(robot: Robot, scale: float = 0.1) -> tuple[np.ndarray, ...]:
    n = robot.dof
    q = SEVEN_DOF_POSE[:n] + scale * RNG.normal(size=n)
    return q, RNG.normal(size=n), q + scale * RNG.normal(size=n), RNG.normal(size=n), RNG.normal(size=n)


def test_pd_pid_and_pd_gravity_match_hand_computation(arm7: Robot) -> None:
    q, qd, qr, qdr, qddr = _state(arm7)
    ref = Reference(7).set_joint(qr, qdr, qddr)
    kp, kd = np.linspace(100, 400, 7), np.linspace(5, 20, 7)
    pd = make_law("pd", arm7, {"kp": kp, "kd": kd})
    np.testing.assert_allclose(pd.compute(0.0, q, qd, ref), kp * (qr - q) + kd * (qdr - qd), rtol=1e-12)
    np.testing.assert_allclose(pd.error, qr - q)
    pdg = make_law("pd_gravity", arm7, {"kp": kp, "kd": kd})
    np.testing.assert_allclose(pdg.compute(0.0, q, qd, ref),
                               kp * (qr - q) + kd * (qdr - qd) + arm7.gravity(q), rtol=1e-12, atol=1e-12)
    pid = make_law("pid", arm7, {"kp": kp, "kd": kd, "ki": 10.0, "i_clamp": 1e3})
    tau0 = pid.compute(1.0, q, qd, ref).copy()  # first call: nothing integrated yet
    np.testing.assert_allclose(tau0, kp * (qr - q) + kd * (qdr - qd), rtol=1e-12)
    tau1 = pid.compute(1.002, q, qd, ref)
    np.testing.assert_allclose(tau1 - tau0, 10.0 * (qr - q) * 0.002, rtol=1e-9)


@pytest.mark.parametrize("actuators", [False, True])
def test_computed_torque_is_M_qdd_star_plus_h(arm7: Robot, actuators: bool) -> None:
    """(6.41)-(6.42): one RNEA call equals the textbook M qdd* + h (+ actuator terms of
    (6.16)-(6.17), Coulomb friction toward the reference; the drive damping is not stiff
    at 1 kHz here, so viscous at the measured one)."""
    q, qd, qr, qdr, qddr = _state(arm7)
    kp, kd = 400.0, 40.0
    law = ComputedTorque(arm7, {"kp": kp, "kd": kd}, model_actuators=actuators)
    tau = law.compute(0.0, q, qd, Reference(7).set_joint(qr, qdr, qddr))
    qdd_star = qddr + kd * (qdr - qd) + kp * (qr - q)
    want = arm7.mass_matrix(q, include_actuators=actuators) @ qdd_star + arm7.bias(q, qd)
    if actuators:
        m = arm7.model
        # Coulomb toward the reference: at q_d' + (kp/kd) e, linear over 1e-3 rad/s
        want += m.viscous * qd + m.coulomb * np.clip((qdr + kp / kd * (qr - q)) / 1e-3, -1, 1)
    np.testing.assert_allclose(tau, want, rtol=1e-10, atol=1e-9)


def test_task_pd_is_jt_kp_e_minus_kv_qd_plus_g(arm7: Robot) -> None:
    """(6.47) with the pose error [p_d - p; orientation_error(R_d, R)]."""
    q, qd, qr, _, _ = _state(arm7)
    T_d = arm7.fk(qr)
    kp = np.array([1000, 1200, 1400, 50, 60, 70.0])
    law = TaskPD(arm7, {"kp": kp, "kd": 3.0}, model_actuators=False)
    tau = law.compute(0.0, q, qd, Reference(7).set_task(T_d))
    T = arm7.fk(q)
    e = np.concatenate([T_d[:3, 3] - T[:3, 3], orientation_error(T_d[:3, :3], T[:3, :3])])
    np.testing.assert_allclose(law.error, e, atol=1e-12)
    textbook = arm7.jacobian(q).T @ (kp * e) - 3.0 * qd + arm7.gravity(q)
    np.testing.assert_allclose(tau, textbook, rtol=1e-10, atol=1e-10)
    # with the drives: T_c toward the velocity the feedback asks for, (J^T K_p e) / kd (q_d' = 0)
    from rbd_ros.control.gains import FRICTION_BAND

    tau = TaskPD(arm7, {"kp": kp, "kd": 3.0}).compute(0.0, q, qd, Reference(7).set_task(T_d))
    v = arm7.jacobian(q).T @ (kp * e) / 3.0
    friction = np.abs(arm7.model.coulomb) * np.clip(v / FRICTION_BAND, -1, 1)
    assert np.abs(arm7.model.coulomb).min() > 0
    np.testing.assert_allclose(tau, textbook + friction, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dof, joint_ref", [(6, False), (7, False), (7, True)])
def test_resolved_acceleration_matches_textbook_form(dof: int, joint_ref: bool) -> None:
    """(6.48)-(6.49): M J^-1 (r''* - J' q') + h for a square J; for 7 DoF the damped
    pseudo-inverse plus the null-space motion (I - J^# J) z: damping only for a pose
    reference, posture tracking for a joint reference."""
    from rbd_ros.model import MdhModel

    d = _actuated(seven_dof()).to_dict()
    d["joints"] = d["joints"][:dof]
    robot = Robot(MdhModel.from_dict(d))
    q, qd, qr, qdr, qddr = _state(robot)
    kp, kd, kn, kpn = 400.0, 40.0, 7.0, 30.0
    law = ResolvedAcceleration(robot, {"kp": kp, "kd": kd, "k_null": kn, "kp_null": kpn}, model_actuators=False)
    law.dls_damping = 0.0 if dof == 6 else law.dls_damping
    if joint_ref:
        ref = Reference(dof).set_joint(qr, qdr, qddr)
        Jr = robot.jacobian(qr)
        T_d, v_d, a_d = robot.fk(qr), Jr @ qdr, Jr @ qddr + robot.jacobian_dot_times_qd(qr, qdr)
        z = qddr + kn * (qdr - qd) + kpn * (qr - q)
    else:
        T_d, v_d, a_d = robot.fk(qr), RNG.normal(size=6), RNG.normal(size=6)
        ref = Reference(dof).set_task(T_d, v_d, a_d)
        z = -kn * qd
    tau = law.compute(0.0, q, qd, ref)
    J = robot.jacobian(q)
    T = robot.fk(q)
    e = np.concatenate([T_d[:3, 3] - T[:3, 3], orientation_error(T_d[:3, :3], T[:3, :3])])
    r_star = a_d + kd * (v_d - J @ qd) + kp * e
    b = r_star - robot.jacobian_dot_times_qd(q, qd)
    if dof == 6:
        qdd = np.linalg.solve(J, b)
    else:
        lam2 = law.dls_damping**2
        Jp = J.T @ np.linalg.inv(J @ J.T + lam2 * np.eye(6))
        qdd = Jp @ b + (np.eye(dof) - Jp @ J) @ z
        np.testing.assert_allclose(J @ qdd, b, rtol=1e-4, atol=1e-4)  # the task acceleration is met
    want = robot.mass_matrix(q) @ qdd + robot.bias(q, qd)
    np.testing.assert_allclose(tau, want, rtol=1e-8, atol=1e-8)


def test_task_reference_from_a_joint_reference_is_the_kinematic_image(arm7: Robot) -> None:
    q, qd, qr, qdr, qddr = _state(arm7)
    law = TaskPD(arm7)
    law.task_reference(Reference(7).set_joint(qr, qdr, qddr))
    np.testing.assert_allclose(law.ref_T, arm7.fk(qr), atol=1e-12)
    J = arm7.jacobian(qr)
    np.testing.assert_allclose(law.ref_v, J @ qdr, atol=1e-12)
    np.testing.assert_allclose(law.ref_a, J @ qddr + arm7.jacobian_dot_times_qd(qr, qdr), atol=1e-10)


@pytest.mark.parametrize("name", LAWS)
def test_torques_are_saturated_at_the_effort_limits(name: str) -> None:
    robot = Robot(three_link())
    stiff = {"stiffness": 1e6, "damping": 1e3} if name == "impedance" else {"kp": 1e6, "kd": 1e3}
    law = make_law(name, robot, {**stiff, "effort_limit": [100.0, 20.0, 100.0]})
    q = np.array([0.1, 0.2, 0.3])
    ref = Reference(3).set_joint(q + 1.0)
    tau = law.compute(0.0, q, np.zeros(3), ref)
    lim = np.minimum(robot.model.effort_limit, [100.0, 20.0, 100.0])
    assert (np.abs(tau) <= lim + 1e-12).all()
    assert law.saturated.any() and np.allclose(np.abs(tau[law.saturated]), lim[law.saturated])


@pytest.mark.parametrize("name", LAWS)
@pytest.mark.parametrize("where", ["q", "qd", "ref"])
def test_nan_input_gives_zero_torque_and_a_fault_then_recovers(name: str, where: str) -> None:
    robot = Robot(three_link())
    law = make_law(name, robot)
    q, qd = np.array([0.1, 0.2, 0.3]), np.zeros(3)
    ref = Reference(3).set_joint(q + 0.1)
    bad = {"q": q.copy(), "qd": qd.copy(), "ref": ref.q}
    bad[where][1] = np.nan
    tau = law.compute(0.0, bad["q"] if where == "q" else q, bad["qd"] if where == "qd" else qd, ref)
    assert law.fault and "non-finite" in law.status and not tau.any()
    ref.set_joint(q + 0.1)
    tau = law.compute(0.001, q, qd, ref)
    assert not law.fault and law.status == "ok" and np.isfinite(tau).all() and tau.any()


def test_task_laws_refuse_a_nan_pose_reference() -> None:
    robot = Robot(three_link())
    for cls in (TaskPD, ResolvedAcceleration):
        law = cls(robot)
        T = robot.fk(np.zeros(3))
        T[0, 3] = np.inf
        tau = law.compute(0.0, np.zeros(3), np.zeros(3), Reference(3).set_task(T))
        assert law.fault and not tau.any()


def test_singular_resolved_acceleration_never_returns_nan() -> None:
    robot = Robot(three_link())  # 3 joints: J J^T is singular without damping
    law = ResolvedAcceleration(robot)
    law.dls_damping = 0.0
    tau = law.compute(0.0, np.zeros(3), np.zeros(3), Reference(3).set_task(robot.fk(np.ones(3))))
    assert np.isfinite(tau).all()
    assert law.fault and not tau.any()


def test_pid_integral_is_clamped_and_unwinds_at_once() -> None:
    """Anti-windup: the integral term never exceeds i_clamp however long the error lasts,
    so it starts unwinding as soon as the error changes sign."""
    robot = Robot(three_link())
    law = make_law("pid", robot, {"kp": 0.0, "kd": 0.0, "ki": 100.0, "i_clamp": [5.0, 2.0, 1.0]})
    q = np.zeros(3)
    ref = Reference(3).set_joint(np.ones(3))
    for k in range(2000):  # 2 s at error 1 rad: an unclamped integral would reach 200 N m
        tau = law.compute(k * 1e-3, q, q, ref)
    np.testing.assert_allclose(tau, [5.0, 2.0, 1.0])
    ref.set_joint(-np.ones(3))
    tau = law.compute(2.0, q, q, ref)
    np.testing.assert_allclose(tau, np.array([5.0, 2.0, 1.0]) - 100.0 * 1e-3)
    law.compute(10.0, q, q, ref)  # a gap longer than max_dt integrates nothing
    np.testing.assert_allclose(law.integral, np.array([5.0, 2.0, 1.0]) - 100.0 * 1e-3)
    law.reset()
    assert not law.integral.any()


def test_gain_validation_refuses_with_a_reason() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        validate_gain("pd", "kp", [1.0, -2.0, 3.0], 3)
    with pytest.raises(ValueError, match="1 or 3 values"):
        validate_gain("pd", "kd", [1.0, 2.0], 3)
    with pytest.raises(ValueError, match="1 or 6 values"):
        validate_gain("task_pd", "kp", [1.0, 2.0, 3.0], 3)
    with pytest.raises(ValueError, match="NaN"):
        validate_gain("pid", "ki", float("nan"), 3)
    with pytest.raises(ValueError, match="not a gain of pd"):
        validate_gain("pd", "ki", 1.0, 3)
    with pytest.raises(ValueError, match="positive"):
        validate_gain("pd", "effort_limit", 0.0, 3)
    with pytest.raises(ValueError, match="needs gains"):
        validate_gains("pid", {"kp": 1.0}, 3)
    np.testing.assert_array_equal(validate_gain("pd", "kp", 2, 3), [2.0, 2.0, 2.0])
    law = make_law("pd", Robot(three_link()), {"kp": 10.0, "kd": 1.0})
    with pytest.raises(ValueError):
        law.set_gains(kp=20.0, kd=-1.0)  # atomic: kp is not changed either
    np.testing.assert_array_equal(law.gains["kp"], [10.0] * 3)
    law.set_gains(kp=[20.0, 30.0, 40.0])
    np.testing.assert_array_equal(law.gains["kp"], [20.0, 30.0, 40.0])
    with pytest.raises(ValueError, match="unknown controller type"):
        make_law("lqr", Robot(three_link()))


def test_gains_file_defaults_and_robot_overrides(tmp_path: Path) -> None:
    f = tmp_path / "g.yaml"
    f.write_text("defaults:\n  pd: {kp: 1.0, kd: 2.0}\nrobots:\n  mine:\n    pd: {kp: [3.0, 4.0]}\n")
    assert load_gains("pd", ["other"], f) == {"kp": 1.0, "kd": 2.0}
    assert load_gains("pd", ["x", "mine"], f) == {"kp": [3.0, 4.0], "kd": 2.0}
    import yaml

    from rbd_ros.control.gains import default_gains_file
    from rbd_ros.util.resources import config_file

    data = yaml.safe_load(default_gains_file().read_text())
    assert not data["defaults"]  # gains nobody gives come from the model (gains.model_gains)
    for name, laws in data["robots"].items():  # every bundled robot entry is valid
        dof = Robot.from_yaml(str(config_file(name))).dof
        for law, gains in laws.items():
            for k, v in gains.items():
                validate_gain(law, k, v, dof)
