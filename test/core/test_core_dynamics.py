"""Dynamics kernels vs independent oracles (Pinocchio and MuJoCo built from the URDF that
``model_to_urdf`` writes, 003's closed forms for the planar arm) and physical identities.

Tolerance: 1e-9 relative (``rel_err``) unless a finite difference is involved."""
from __future__ import annotations

import zlib

import numpy as np
import pinocchio as pin  # (a test requirement: requirements-test.txt)
import pytest

from core_oracles import bundled, mujoco_compatible, mujoco_model, pinocchio_model, random_model, rel_err
from rbd_ros.algorithm import aba as aba_mod
from rbd_ros.algorithm import forward_dynamics as fd_mod
from rbd_ros.robot import Robot, SimulationError

TOL = 1e-9

CASES = {
    "planar2": lambda: bundled("planar2"),
    "puma560": lambda: bundled("puma560"),
    "arm7": lambda: bundled("arm7"),
    "prismatic7": lambda: random_model(7, 11, prismatic=(1, 4)),
    "all_prismatic3": lambda: random_model(3, 12, prismatic=(0, 1, 2)),
    "chain6": lambda: random_model(6, 13),
    "chain12": lambda: random_model(12, 14, prismatic=(5,)),
    "chain24": lambda: random_model(24, 15, prismatic=(3, 17)),
    "chain48": lambda: random_model(48, 16, prismatic=(10, 30)),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    model = CASES[request.param]()
    pm, pd = pinocchio_model(model)
    rng = np.random.default_rng(zlib.crc32(request.param.encode()))  # hash() changes per run
    n = model.dof
    states = rng.uniform(-2, 2, (3, 4, n))  # (q, qd, qdd) x 4 states
    return request.param, Robot(model), pm, pd, states


def test_inverse_dynamics_vs_pinocchio(case):
    _, robot, pm, pd, (Q, QD, QDD) = case
    batch = robot.inverse_dynamics(Q, QD, QDD)
    for k in range(len(Q)):
        ref = pin.rnea(pm, pd, Q[k], QD[k], QDD[k])
        assert rel_err(robot.inverse_dynamics(Q[k], QD[k], QDD[k]), ref) < TOL
        assert rel_err(batch[k], ref) < TOL


def test_mass_matrix_gravity_bias_vs_pinocchio(case):
    _, robot, pm, pd, (Q, QD, _) = case
    Mb = robot.mass_matrix(Q)
    for k in range(len(Q)):
        ref = pin.crba(pm, pd, Q[k])
        ref = np.triu(ref) + np.triu(ref, 1).T
        M = robot.mass_matrix(Q[k])
        assert rel_err(M, ref) < TOL and rel_err(Mb[k], ref) < TOL
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0  # SPD
        assert rel_err(robot.gravity(Q[k]), pin.computeGeneralizedGravity(pm, pd, Q[k])) < TOL
        assert rel_err(robot.bias(Q[k], QD[k]), pin.nonLinearEffects(pm, pd, Q[k], QD[k])) < TOL
    assert rel_err(robot.gravity(Q)[1], pin.computeGeneralizedGravity(pm, pd, Q[1])) < TOL
    assert rel_err(robot.bias(Q, QD)[2], pin.nonLinearEffects(pm, pd, Q[2], QD[2])) < TOL


def test_forward_dynamics_vs_pinocchio_both_algorithms(case):
    _, robot, pm, pd, (Q, QD, QDD) = case
    tau = robot.inverse_dynamics(Q, QD, QDD)
    out = np.empty(robot.dof)
    for k in range(len(Q)):
        ref = pin.aba(pm, pd, Q[k], QD[k], tau[k])
        scale = max(1.0, np.abs(ref).max())
        assert rel_err(robot.forward_dynamics(Q[k], QD[k], tau[k]), ref) < TOL * scale
        aba_mod.aba(robot._mp, robot._ws, Q[k], QD[k], tau[k], False, out)
        assert rel_err(out, ref) < TOL * scale
        fd_mod.fd_cholesky(robot._mp, robot._ws, Q[k], QD[k], tau[k], False, out)
        assert rel_err(out, ref) < TOL * scale
    # FD then ID is the identity (up to M's conditioning)
    qdd = robot.forward_dynamics(Q, QD, tau)
    assert rel_err(qdd, QDD) < 1e-7
    assert rel_err(robot.inverse_dynamics(Q, QD, qdd), tau) < TOL


def test_eom_assembly_and_coriolis(case):
    """M qdd + h == ID; C qd == h - g; M-dot - 2C skew (M-dot by central differences of
    Pinocchio's M along qd)."""
    _, robot, pm, pd, (Q, QD, QDD) = case
    for k in range(2):
        q, qd, qdd = Q[k], QD[k], QDD[k]
        M, h = robot.mass_matrix(q), robot.bias(q, qd)
        assert rel_err(M @ qdd + h, robot.inverse_dynamics(q, qd, qdd)) < TOL
        C = robot.coriolis_matrix(q, qd)
        assert rel_err(C @ qd, h - robot.gravity(q)) < TOL
        eps = 1e-6

        def Mp(x):
            A = pin.crba(pm, pd, x)
            return np.triu(A) + np.triu(A, 1).T

        Mdot = (Mp(q + eps * qd) - Mp(q - eps * qd)) / (2 * eps)
        S = Mdot - 2 * C
        assert np.abs(S + S.T).max() < 1e-6 * max(1.0, np.abs(Mdot).max())
        if (robot.model.joint_type == 0).any():  # all-prismatic: M constant, C = 0
            assert np.abs(S).max() > 1e-8  # skew but not trivially zero


def test_energy(case):
    """K = 1/2 qd^T M qd (Pinocchio's M), P vs Pinocchio, dE/dt = qd^T tau along the flow."""
    _, robot, pm, pd, (Q, QD, _) = case
    q, qd = Q[0], QD[0]
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    assert abs(robot.kinetic_energy(q, qd) - 0.5 * qd @ M @ qd) < TOL * max(1, qd @ M @ qd)
    P = pin.computePotentialEnergy(pm, pd, q)
    assert abs(robot.potential_energy(q) - P) < TOL * max(1.0, abs(P))
    tau = np.linspace(-1, 1, robot.dof)
    qdd = robot.forward_dynamics(q, qd, tau)
    h = 1e-5

    def E(s: float) -> float:
        x, v = q + s * qd + 0.5 * s * s * qdd, qd + s * qdd
        return robot.kinetic_energy(x, v) + robot.potential_energy(x)

    dEdt = (E(h) - E(-h)) / (2 * h)
    assert abs(dEdt - qd @ tau) < 1e-5 * max(1.0, abs(qd @ tau), robot.kinetic_energy(q, qd))


# ---- MuJoCo (mj_inverse) ----------------------------------------------------------------------
MJ_CASES = ["planar2", "puma560", "arm7", "prismatic7", "chain12", "chain24"]


@pytest.mark.parametrize("name", MJ_CASES)
def test_inverse_dynamics_vs_mujoco(name: str) -> None:
    import mujoco

    model = mujoco_compatible(CASES[name]())
    m, d = mujoco_model(model)
    robot = Robot(model)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, (3, model.dof))
        d.qpos[:], d.qvel[:], d.qacc[:] = q, qd, qdd
        mujoco.mj_inverse(m, d)
        assert rel_err(robot.inverse_dynamics(q, qd, qdd), d.qfrc_inverse) < TOL


def test_actuators_vs_mujoco_armature_and_damping() -> None:
    """include_actuators: armature G^2 Jm and viscous B against MuJoCo's joint armature and
    damping (Coulomb set to zero: MuJoCo's frictionloss is a constraint, not sign(qd))."""
    import mujoco

    model = bundled("puma560")
    model = mujoco_compatible(model.replace(coulomb=np.zeros(6)))
    m, d = mujoco_model(model)
    m.dof_armature[:] = model.armature
    m.dof_damping[:] = model.viscous
    robot = Robot(model)
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2, 2, (3, 6))
    d.qpos[:], d.qvel[:], d.qacc[:] = q, qd, qdd
    mujoco.mj_inverse(m, d)
    tau = robot.inverse_dynamics(q, qd, qdd, include_actuators=True)
    assert rel_err(tau, d.qfrc_inverse) < TOL
    assert rel_err(robot.inverse_dynamics(q, qd, qdd), d.qfrc_inverse) > 1e-3  # terms matter


def test_actuators_terms_and_forward_inverse_consistency() -> None:
    model = bundled("puma560")
    robot = Robot(model)
    rng = np.random.default_rng(4)
    Q, QD, QDD = rng.uniform(-2, 2, (3, 5, 6))
    QD[0, 2] = 0.0  # sign(0) = 0
    rigid = robot.inverse_dynamics(Q, QD, QDD)
    full = robot.inverse_dynamics(Q, QD, QDD, include_actuators=True)
    expect = rigid + model.armature * QDD + model.viscous * QD + model.coulomb * np.sign(QD)
    assert rel_err(full, expect) < TOL
    qdd = robot.forward_dynamics(Q, QD, full, include_actuators=True)
    assert rel_err(qdd, QDD) < 1e-8
    aba_out = np.empty(6)
    aba_mod.aba(robot._mp, robot._ws, Q[1], QD[1], full[1], True, aba_out)
    assert rel_err(aba_out, QDD[1]) < 1e-8
    M = robot.mass_matrix(Q[0], include_actuators=True)
    assert rel_err(M - robot.mass_matrix(Q[0]), np.diag(model.armature)) < TOL


def test_tool_wrench_is_minus_jacobian_transpose(case):
    """tau = ID - J^T w with Pinocchio's tool Jacobian (LOCAL_WORLD_ALIGNED = world axes at
    the tool origin: [linear; angular]), w applied by the environment on the tool."""
    _, robot, pm, pd, (Q, QD, QDD) = case
    w = np.array([3.0, -2.0, 5.0, 0.7, -0.4, 1.1])
    fid = pm.getFrameId(robot.model.tip_link)
    for k in range(2):
        J = pin.computeFrameJacobian(pm, pd, Q[k], fid, pin.LOCAL_WORLD_ALIGNED)
        ref = pin.rnea(pm, pd, Q[k], QD[k], QDD[k]) - J.T @ w
        assert rel_err(robot.inverse_dynamics(Q[k], QD[k], QDD[k], tool_wrench=w), ref) < TOL
    batch = robot.inverse_dynamics(Q, QD, QDD, tool_wrench=w)
    J = pin.computeFrameJacobian(pm, pd, Q[3], fid, pin.LOCAL_WORLD_ALIGNED)
    assert rel_err(batch[3], pin.rnea(pm, pd, Q[3], QD[3], QDD[3]) - J.T @ w) < TOL


# ---- 003 closed forms for the planar arm ---------------------------------------------------
def test_planar2_closed_form() -> None:
    """Two-link planar arm (003 Fig. 1.11) from Lagrange, 003 (3.40)-(3.47):
    M11 = I1 + I2 + m1 lc1^2 + m2 (l1^2 + lc2^2 + 2 l1 lc2 c2), M12 = I2 + m2 (lc2^2 + l1 lc2 c2),
    M22 = I2 + m2 lc2^2; h = m2 l1 lc2 s2 [-(2 qd1 qd2 + qd2^2), qd1^2];
    g = g0 [(m1 lc1 + m2 l1) c1 + m2 lc2 c12, m2 lc2 c12] (gravity along frame-0 -y)."""
    model = bundled("planar2")
    robot = Robot(model)
    l1, lc1, lc2 = 1.0, 0.5, 0.5
    m1, m2 = model.mass
    I1, I2 = model.inertia[0][2, 2], model.inertia[1][2, 2]
    g0 = 9.81
    rng = np.random.default_rng(0)
    for _ in range(5):
        (q1, q2), (d1, d2), qdd = rng.uniform(-3, 3, (3, 2))
        c2, s2 = np.cos(q2), np.sin(q2)
        M = np.array([[I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2),
                       I2 + m2 * (lc2**2 + l1 * lc2 * c2)],
                      [I2 + m2 * (lc2**2 + l1 * lc2 * c2), I2 + m2 * lc2**2]])
        hv = m2 * l1 * lc2 * s2 * np.array([-(2 * d1 * d2 + d2**2), d1**2])
        g = g0 * np.array([(m1 * lc1 + m2 * l1) * np.cos(q1) + m2 * lc2 * np.cos(q1 + q2),
                           m2 * lc2 * np.cos(q1 + q2)])
        q, qd = np.array([q1, q2]), np.array([d1, d2])
        assert rel_err(robot.mass_matrix(q), M) < TOL
        assert rel_err(robot.gravity(q), g) < TOL
        assert rel_err(robot.bias(q, qd), hv + g) < TOL
        assert rel_err(robot.inverse_dynamics(q, qd, qdd), M @ qdd + hv + g) < TOL
        T = robot.fk(q)  # tool in frame 0: (l1 c1 + l2 c12, l1 s1 + l2 s12, 0)
        p0 = np.linalg.solve(model.base, T[:, 3])[:3]
        assert rel_err(p0, [np.cos(q1) + np.cos(q1 + q2), np.sin(q1) + np.sin(q1 + q2), 0]) < TOL


def test_errata_extra_term_of_4_35_would_be_caught() -> None:
    """The misprinted (4.35) adds a term; our sdd_i = vd + wd x s + w x (w x s) matches the
    Lagrangian closed form above, and a point-mass pendulum pins it: tau = m l^2 qdd + m g l c."""
    m, l = 2.0, 0.7
    robot = Robot.from_mdh(a=[0.0], alpha=[np.pi / 2], d=[0.0], theta=[0.0], mass=[m],
                           com=[[l, 0, 0]], inertia=[np.zeros((3, 3))])
    # frame 0 = world rotated by alpha: joint axis is world -y, x1 starts along world x
    q, qd, qdd = np.array([0.3]), np.array([1.7]), np.array([-0.9])
    tau = robot.inverse_dynamics(q, qd, qdd)
    assert abs(tau[0] - (m * l * l * qdd[0] + m * 9.81 * l * np.cos(q[0]))) < 1e-12


# ---- integrators ------------------------------------------------------------------------------
def test_rk4_conserves_energy_10s() -> None:
    """Torque-free, friction-free RK4: total energy constant to 1e-6 relative over 10 s at
    1 ms (arm7 with gravity)."""
    robot = Robot(bundled("arm7"))
    q0 = np.array([0.3, -0.5, 0.2, -1.8, 0.1, 1.2, 0.4])
    qd0 = np.array([1.0, -0.5, 0.8, 0.3, -1.0, 0.6, 1.5])
    steps = 10_000
    q, qd, _ = robot.simulate(q0, qd0, np.zeros((steps, 7)), 1e-3)
    E = robot.kinetic_energy(q[::500], qd[::500]) + robot.potential_energy(q[::500])
    scale = abs(robot.kinetic_energy(q0, qd0)) + abs(robot.potential_energy(q0))
    assert np.abs(E - E[0]).max() < 1e-6 * scale
    assert np.abs(q[-1] - q0).max() > 0.1  # it did move


def test_rk4_matches_mujoco_rk4_and_orders() -> None:
    """Same ZOH torques, same step: our RK4 vs MuJoCo's RK4 integrator; RK4 error falls
    ~16x per halving of dt, semi-implicit Euler ~2x."""
    import mujoco

    model = bundled("arm7")
    robot = Robot(model)
    m, d = mujoco_model(model)
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = 1e-3
    rng = np.random.default_rng(1)
    q0, qd0 = rng.uniform(-1, 1, (2, 7))
    tau = np.repeat(rng.uniform(-5, 5, (10, 7)), 20, axis=0)  # 200 steps, 20 ms hold
    q, qd, qdd = robot.simulate(q0, qd0, tau, 1e-3)
    d.qpos[:], d.qvel[:] = q0, qd0
    for k in range(len(tau)):
        d.qfrc_applied[:] = tau[k]
        mujoco.mj_step(m, d)
    assert rel_err(q[-1], d.qpos) < 1e-9 and rel_err(qd[-1], d.qvel) < 1e-9
    assert rel_err(qdd[0], robot.forward_dynamics(q0, qd0, tau[0])) < TOL

    T = 0.2
    ref, _, _ = robot.simulate(q0, qd0, np.tile(tau[0], (2000, 1)), T / 2000)

    def err(method: str, steps: int) -> float:
        x, _, _ = robot.simulate(q0, qd0, np.tile(tau[0], (steps, 1)), T / steps, integrator=method)
        return float(np.abs(x[-1] - ref[-1]).max())

    r_rk4 = err("rk4", 50) / err("rk4", 100)
    r_eul = err("semi_implicit_euler", 200) / err("semi_implicit_euler", 400)
    assert 12 < r_rk4 < 20, r_rk4
    assert 1.6 < r_eul < 2.5, r_eul


@pytest.mark.slow
def test_simulate_with_jitted_callback_and_actuators() -> None:
    from numba import njit

    robot = Robot(bundled("puma560"))
    g0 = robot.gravity(np.zeros(6))

    @njit
    def constant(t, q, qd, out):
        for i in range(q.shape[0]):
            out[i] = 0.5 * (i + 1)

    res = robot.simulate(np.zeros(6), np.zeros(6), constant, 1e-3, steps=100)
    same = robot.simulate(np.zeros(6), np.zeros(6), np.tile(0.5 * np.arange(1, 7), (100, 1)), 1e-3)
    np.testing.assert_array_equal(res.q, same.q)
    np.testing.assert_array_equal(res.tau, same.tau)
    assert res.t[-1] == pytest.approx(0.1)

    # a PD law through the callback, with armature and viscous friction (include_actuators),
    # against MuJoCo's RK4 with the same joint armature and damping and the same torque held
    # over each step (Coulomb zero: MuJoCo's frictionloss is a constraint, not Tc sign(qd))
    import mujoco

    model = mujoco_compatible(bundled("puma560").replace(coulomb=np.zeros(6)))
    robot = Robot(model)

    @njit
    def pd(t, q, qd, out):
        for i in range(q.shape[0]):
            out[i] = 200.0 * (0.2 - q[i]) - 20.0 * qd[i]

    steps = 1000
    q_f, qd_f, _ = robot.simulate(np.zeros(6), np.zeros(6), pd, 1e-3, steps=steps,
                                  include_actuators=True)
    m, d = mujoco_model(model)
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    m.opt.timestep = 1e-3
    m.dof_armature[:] = model.armature
    m.dof_damping[:] = model.viscous
    for k in range(steps):
        d.qfrc_applied[:] = 200.0 * (0.2 - d.qpos) - 20.0 * d.qvel
        mujoco.mj_step(m, d)
        if k in (0, 99, steps - 1):
            assert rel_err(q_f[k + 1], d.qpos) < TOL, k
            assert rel_err(qd_f[k + 1], d.qvel) < TOL, k
    assert np.abs(q_f[-1]).min() > 0.1  # every joint moved towards the target
    # without the armature the wrist (Izz 4e-5 kg m^2) under kd = 20 is far too stiff for
    # dt = 1e-3: that diverges, and says so (issue 19) instead of returning NaN
    with pytest.raises(SimulationError, match="diverged at t = "):
        robot.simulate(np.zeros(6), np.zeros(6), pd, 1e-3, steps=3000)
    q_a = robot.simulate(np.zeros(6), np.zeros(6), constant, 1e-3, steps=100,
                         include_actuators=True).q
    assert np.isfinite(q_a).all() and not np.allclose(q_a[-1], res.q[-1])
    assert g0.shape == (6,)
