"""Robot-level mobile bases (``rbd_ros.mobile_base.MobileBaseRobot``, issue 17): the bundled
``omni_arm7`` (planar) and ``mobile_arm7`` (diff drive) through the public API against
Pinocchio with a planar root joint (wheels locked and fused into the base body; the diff
drive's constraint and wheel spin inertia added in a KKT solve with Pinocchio's M and h),
the routes against each other, the simulation's constraint, the YAML round trip, and bad
input.  Tolerance 1e-9 relative (``rel_err``)."""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import REPO, rel_err
from rbd_ros import Robot
from rbd_ros.model import MdhModel

pin = pytest.importorskip("pinocchio")

TOL = 1e-9
OMNI = str(REPO / "urdf" / "omni_arm7.urdf")
DIFF = str(REPO / "urdf" / "mobile_arm7.urdf")


def pin_reduced(path: str, gravity: np.ndarray):
    """The URDF on ``pin.JointModelPlanar`` with the wheel joints locked at 0."""
    full = pin.buildModelFromUrdf(path, pin.JointModelPlanar())
    lock = [full.getJointId(j) for j in full.names[2:] if "wheel" in j]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full))
    pm.gravity.linear[:] = gravity
    assert pm.nv == 10
    return pm, pm.createData()


def pin_q(q: np.ndarray) -> np.ndarray:
    return np.concatenate([q[:2], [np.cos(q[2]), np.sin(q[2])], q[3:]])


def pin_mass(pm, pd, q: np.ndarray) -> np.ndarray:
    M = pin.crba(pm, pd, pin_q(q))
    return np.triu(M) + np.triu(M, 1).T


def states(n: int, seed: int, k: int = 2, rolling: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.2, 1.2, (k, 3, n))
    X[:, 0, :2] *= 3.0  # base away from the world origin
    if rolling:
        X[:, 1:, 1] = 0.0
    return X


@pytest.fixture(scope="module")
def omni():
    r = Robot.from_urdf(OMNI, base_type="planar", tip_link="tool0")
    return (r, *pin_reduced(OMNI, r.model.gravity))


@pytest.fixture(scope="module")
def diff():
    r = Robot.from_urdf(DIFF, base_type="diff_drive", tip_link="tool0")
    return (r, *pin_reduced(DIFF, r.model.gravity))


# ---- planar (holonomic) base -----------------------------------------------------------------
def test_planar_layout_and_base_body(omni) -> None:
    r, pm, _ = omni
    # one Robot class for every base: the root joint (rbd_ros.bases) picks the methods
    assert type(r) is Robot and r.root.kind == r.base_type == r.model.base_type == "planar"
    assert (r.nq, r.nv, r.nu) == (10, 10, 10)
    # base body = base_link + 4 wheels of 1.5 kg, as Pinocchio's fused root body
    assert r.model.base_mass == pytest.approx(pm.inertias[1].mass, rel=1e-12) == 56.0
    assert rel_err(r.model.base_com, pm.inertias[1].lever) < 1e-12


@pytest.mark.parametrize("method", ("recursive", "silver", "lagrange", "kane", "dual_quaternion", "gauss"))
def test_planar_inverse_dynamics_vs_pinocchio(omni, method: str) -> None:
    r, pm, pd = omni
    for q, v, a in states(r.nv, 1):
        tau = r.inverse_dynamics(q, v, a, method=method)
        assert rel_err(tau, pin.rnea(pm, pd, pin_q(q), v, a)) < TOL


@pytest.mark.parametrize("method", ("recursive", "kane", "lagrange", "gauss"))
def test_planar_mass_bias_gravity_forward_vs_pinocchio(omni, method: str) -> None:
    r, pm, pd = omni
    for q, v, a in states(r.nv, 2):
        qp = pin_q(q)
        assert rel_err(r.mass_matrix(q, method=method), pin_mass(pm, pd, q)) < TOL
        assert rel_err(r.bias(q, v, method=method), pin.rnea(pm, pd, qp, v, 0 * v)) < TOL
        g = r.gravity(q, method=method)
        assert rel_err(g, pin.computeGeneralizedGravity(pm, pd, qp)) < TOL
        assert np.abs(g[:3]).max() < 1e-9 * np.abs(g).max()  # vertical gravity: no base force
        tau = 20.0 * a
        assert rel_err(r.forward_dynamics(q, v, tau, method=method), pin.aba(pm, pd, qp, v, tau)) < TOL


def test_planar_low_level_kernels_vs_pinocchio(omni) -> None:
    """``robot.kernels`` of a planar base (``RootJoint.kernels``: ``planar_base``'s RNEA and CRBA,
    ``bases.ground_kernels.aba_planar``), unvalidated, against Pinocchio's rnea, crba and aba."""
    r, pm, pd = omni
    for q, v, a in states(r.nv, 3):
        qp, tau = pin_q(q), 20.0 * a
        assert rel_err(r.kernels.rnea(q, v, a), pin.rnea(pm, pd, qp, v, a)) < TOL
        assert rel_err(r.kernels.crba(q), pin_mass(pm, pd, q)) < TOL
        assert rel_err(r.kernels.forward_dynamics(q, v, tau), pin.aba(pm, pd, qp, v, tau)) < TOL


def test_planar_integrate_vs_pinocchio(omni) -> None:
    r, pm, _ = omni
    for q, v, _ in states(r.nv, 3):
        for dt in (0.01, 0.7):
            assert rel_err(pin_q(r.integrate(q, v, dt)), pin.integrate(pm, pin_q(q), v * dt)) < 1e-12


def test_planar_simulate_conserves_pinocchio_energy(omni) -> None:
    """No input: the whole body's energy (Pinocchio's kinetic + potential) stays put under RK4."""
    r, pm, pd = omni
    q0, v0, _ = states(r.nv, 4, 1)[0]
    v0 *= 0.5
    res = r.simulate(q0, v0, np.zeros(r.nu), dt=2e-3, steps=100)
    assert res.q.shape == (101, r.nq) and res.qd.shape == res.qdd.shape == (101, r.nv)

    def energy(q: np.ndarray, v: np.ndarray) -> float:
        return pin.computeKineticEnergy(pm, pd, pin_q(q), v) + pin.computePotentialEnergy(pm, pd, pin_q(q))

    E = np.array([energy(q, v) for q, v in zip(res.q, res.qd)])
    assert np.ptp(E) < 1e-6 * abs(E[0] - pin.computePotentialEnergy(pm, pd, pin_q(q0))) + 1e-9
    assert np.abs(res.q[-1] - q0).max() > 1e-2  # it moved
    assert rel_err(res.qdd[0], pin.aba(pm, pd, pin_q(q0), v0, np.zeros(r.nv))) < TOL


# ---- differential drive ----------------------------------------------------------------------
def test_diff_drive_wheels_from_urdf(diff) -> None:
    r, _, _ = diff
    m = r.model
    assert (m.wheel_radius, m.wheel_separation) == (0.08, 0.45)
    assert m.wheel_joints == ("left_wheel_joint", "right_wheel_joint")
    assert m.wheel_spin_inertia == pytest.approx(0.00384)  # the wheel link's iyy (axle along y)
    assert (r.nq, r.nv, r.nu) == (10, 10, 9)


def _pin_kkt(r, pm, pd, q, v, u):
    """KKT with Pinocchio's base-rate M and h, the wheels' spin inertia on (v_x, omega), the
    wheel forces (F_x, M_z) = ((tl + tr) / r, (s/2)(tr - tl) / r), and the constraint v_y-dot = 0."""
    rad, sep, Ia = r.model.wheel_radius, r.model.wheel_separation, r.model.wheel_spin_inertia
    M = pin_mass(pm, pd, q)
    M[0, 0] += 2 * Ia / rad**2
    M[2, 2] += Ia * sep**2 / (2 * rad**2)
    h = pin.rnea(pm, pd, pin_q(q), v, 0 * v)
    f = np.concatenate([[(u[0] + u[1]) / rad, 0.0, 0.5 * sep * (u[1] - u[0]) / rad], u[2:]])
    K = np.zeros((r.nv + 1, r.nv + 1))
    K[:r.nv, :r.nv], K[1, r.nv], K[r.nv, 1] = M, 1.0, 1.0
    sol = np.linalg.solve(K, np.concatenate([f - h, [0.0]]))
    return sol[:r.nv], -sol[r.nv]  # lam: the force the ground adds along base y


@pytest.mark.parametrize("method", ("recursive", "kane", "udwadia_kalaba", "kkt"))
def test_diff_drive_forward_dynamics_vs_pinocchio_kkt(diff, method: str) -> None:
    r, pm, pd = diff
    rng = np.random.default_rng(5)
    for q, v, _ in states(r.nv, 5, rolling=True):
        u = rng.uniform(-20, 20, r.nu)
        a_ref, lam_ref = _pin_kkt(r, pm, pd, q, v, u)
        a = r.forward_dynamics(q, v, u, method=method)
        a2, lam = r.constrained_dynamics(q, v, u, method=method)
        assert a[1] == 0.0 and rel_err(a, a_ref) < TOL and rel_err(a2, a) == 0.0
        assert abs(lam - lam_ref) < TOL * max(1.0, abs(lam_ref))
        assert abs(lam_ref) > 1e-2  # the constraint is active


@pytest.mark.parametrize("method", ("recursive", "silver", "kane", "dual_quaternion", "gauss"))
def test_diff_drive_inverse_dynamics_round_trip(diff, method: str) -> None:
    """Inverse dynamics (wheel torques, arm torques, lateral force) fed to the constrained
    forward dynamics (Pinocchio KKT) gives the acceleration back and the same lateral force."""
    r, pm, pd = diff
    for q, v, a in states(r.nv, 6, rolling=True):
        eff = r.inverse_dynamics(q, v, a, method=method)
        u = np.concatenate([eff.wheels, eff.joints])
        a_ref, lam_ref = _pin_kkt(r, pm, pd, q, v, u)
        assert rel_err(a_ref, a) < TOL
        assert abs(eff.lateral_force - lam_ref) < TOL * max(1.0, abs(lam_ref))
        assert rel_err(r.mass_matrix(q)[3:, 3:], pin_mass(pm, pd, q)[3:, 3:]) < TOL


@pytest.mark.parametrize("method", ("recursive", "kane", "udwadia_kalaba"))
def test_diff_drive_simulate_keeps_v_y_zero(diff, method: str) -> None:
    r, _, _ = diff
    q0 = np.zeros(r.nq)
    q0[3:] = [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]
    v0 = np.zeros(r.nv)
    v0[0], v0[2] = 0.4, 0.3
    u = np.concatenate([[1.5, 2.5], r.gravity(q0)[3:]])  # turning, arm held against gravity
    res = r.simulate(q0, v0, u, dt=0.01, steps=100, method=method,
                     stabilise="projection" if method == "udwadia_kalaba" else None)
    assert np.abs(res.qd[:, 1]).max() < 1e-10
    assert np.abs(res.q[-1, 2] - q0[2]) > 0.1 and np.abs(res.qd[-1, 0] - v0[0]) > 1e-2  # it drove and turned
    assert res.t[-1] == pytest.approx(1.0) and np.abs(res.qdd[:, 1]).max() == 0.0


# ---- YAML and construction -------------------------------------------------------------------
@pytest.mark.parametrize("name, base", (("omni_arm7", "planar"), ("mobile_arm7", "diff_drive")))
def test_bundled_yaml_round_trip(name: str, base: str) -> None:
    """``config/<name>.yaml`` holds the base (and wheels) of the URDF conversion; to_yaml and
    back is exact."""
    from_urdf = Robot.from_urdf(str(REPO / "urdf" / f"{name}.urdf"), base_type=base, tip_link="tool0")
    r = Robot.from_yaml(str(REPO / "config" / f"{name}.yaml"))
    assert r.model.base_type == base
    m, u = r.model, from_urdf.model
    for key in ("base_mass", "base_com", "base_inertia", "base", "a", "d", "mass", "wheel_radius",
                "wheel_separation", "wheel_spin_inertia"):
        assert rel_err(np.asarray(getattr(m, key)), np.asarray(getattr(u, key))) < 1e-14, key
    assert m.wheel_joints == u.wheel_joints
    again = MdhModel.from_yaml(m.to_yaml())
    assert again.to_dict() == m.to_dict()
    assert (m.gear_ratio == 100.0).all()  # arm7's actuators, which URDF cannot hold


def test_from_mdh_with_a_base(omni) -> None:
    """``from_mdh(..., base_type="planar" | "diff_drive")`` gives the same dynamics as the URDF."""
    r, _, _ = omni
    m = r.model
    keys = dict(base=m.base, base_mass=m.base_mass, base_com=m.base_com, base_inertia=m.base_inertia,
                gravity=m.gravity, tool=m.tool)
    p = Robot.from_mdh(m.a, m.alpha, m.d, m.theta, m.mass, m.com, m.inertia, base_type="planar", **keys)
    d = Robot.from_mdh(m.a, m.alpha, m.d, m.theta, m.mass, m.com, m.inertia, base_type="diff_drive",
                       wheel_radius=0.1, wheel_separation=0.5, **keys)
    q, v, a = states(r.nv, 7, 1, rolling=True)[0]
    assert rel_err(p.inverse_dynamics(q, v, a), r.inverse_dynamics(q, v, a)) < 1e-12
    eff = d.inverse_dynamics(q, v, a)
    tau = r.inverse_dynamics(q, v, a)
    assert rel_err(eff.joints, tau[3:]) < 1e-12 and eff.lateral_force == pytest.approx(tau[1], rel=1e-12)
    assert rel_err(np.array([eff.wheels.sum() / 0.1, 0.25 * (eff.wheels[1] - eff.wheels[0]) / 0.1]),
                   tau[[0, 2]]) < 1e-12
    assert Robot.from_yaml(d.model.to_yaml(), base_type="planar").model.wheel_radius == 0.0


def test_bad_input_is_refused_clearly(omni, diff) -> None:
    r, _, _ = diff
    o, _, _ = omni
    with pytest.raises(ValueError, match="base_type 'tracked' unknown"):
        Robot.from_urdf(DIFF, base_type="tracked", tip_link="tool0")
    with pytest.raises(ValueError, match="cannot tell the left drive wheel.*left_wheel="):
        Robot.from_urdf(OMNI, base_type="diff_drive", tip_link="tool0")
    with pytest.raises(ValueError, match="'arm_mount' is not a joint|is not a wheel"):
        Robot.from_urdf(DIFF, base_type="diff_drive", tip_link="tool0", left_wheel="joint1")
    with pytest.raises(ValueError, match="axle midpoint"):  # front wheels: midpoint at x = 0.22
        Robot.from_urdf(OMNI, base_type="diff_drive", tip_link="tool0", left_wheel="front_left_wheel_joint",
                        right_wheel="front_right_wheel_joint")
    with pytest.raises(ValueError, match="wheel options .* are for base 'diff_drive'"):
        Robot.from_urdf(OMNI, base_type="planar", tip_link="tool0", wheel_radius=0.1)
    with pytest.raises(ValueError, match="needs positive wheel_radius and wheel_separation"):
        MdhModel.from_dict({**r.model.to_dict(), "wheels": {}})
    with pytest.raises(ValueError, match="needs the file's wheels section"):
        Robot.from_yaml(o.model.to_yaml(), base_type="diff_drive")
    q, v, a = np.zeros(r.nq), np.zeros(r.nv), np.zeros(r.nv)
    v[1] = 0.1
    with pytest.raises(ValueError, match=r"v\[1\] \(lateral, v_y\).*rolling constraint"):
        r.forward_dynamics(q, v, np.zeros(r.nu))
    with pytest.raises(ValueError, match=r"tau must have shape \(9,\).*tau_left, tau_right"):
        r.forward_dynamics(q, a, np.zeros(r.nv))
    with pytest.raises(ValueError, match="unknown diff_drive forward_dynamics method 'aba'"):
        r.forward_dynamics(q, a, np.zeros(r.nu), method="aba")
    with pytest.raises(ValueError, match=r"q must have shape \(10,\)"):
        o.inverse_dynamics(np.zeros(11), a, a)
    with pytest.raises(ValueError, match="contains NaN"):
        o.mass_matrix(np.full(o.nq, np.nan))
    with pytest.raises(NotImplementedError, match="planar base"):
        o.joint_wrenches(q, np.zeros(6))


def test_diff_drive_vs_pinocchio_with_spinning_wheels(diff) -> None:
    """``mobile_arm7`` in Pinocchio with its wheel joints free and three constraints (no side
    slip, left and right rolling with the URDF's r and s) solved by KKT, against the Robot read
    from the same URDF (wheel radius, separation and spin inertia found by ``urdf.wheels``)."""
    rob = diff[0]
    r, s = rob.model.wheel_radius, rob.model.wheel_separation
    full = pin.buildModelFromUrdf(DIFF, pin.JointModelPlanar())
    full.gravity.linear[:] = rob.model.gravity
    iv = {j: full.joints[full.getJointId(j)].idx_v for j in full.names[1:]}
    iq = {j: full.joints[full.getJointId(j)].idx_q for j in full.names[1:]}
    arm_v = [iv[j] for j in rob.joint_names]
    arm_q = [iq[j] for j in rob.joint_names]
    lw, rw = rob.model.wheel_joints
    pd = full.createData()
    rng = np.random.default_rng(52)
    for q, v, _ in states(rob.nv, 52, rolling=True):
        u = rng.normal(size=rob.nu) * 3.0
        qf = pin.neutral(full)
        qf[:4] = pin_q(q)[:4]
        for j, ang in ((lw, 0.7), (rw, -1.1)):
            qf[iq[j]:iq[j] + 2] = np.cos(ang), np.sin(ang)
        qf[arm_q] = q[3:]
        vf = np.zeros(full.nv)
        vf[:3] = v[:3]
        vf[iv[lw]], vf[iv[rw]] = (v[0] - 0.5 * s * v[2]) / r, (v[0] + 0.5 * s * v[2]) / r
        vf[arm_v] = v[3:]
        tau = np.zeros(full.nv)
        tau[iv[lw]], tau[iv[rw]] = u[:2]
        tau[arm_v] = u[2:]
        A = np.zeros((3, full.nv))
        A[0, 1] = 1.0  # v_y = 0
        for k, (j, side) in enumerate(((lw, -1.0), (rw, 1.0))):
            A[1 + k, iv[j]], A[1 + k, 0], A[1 + k, 2] = r, -1.0, -side * 0.5 * s  # r th-dot = v_x +/- w s/2
        M = pin.crba(full, pd, qf)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.rnea(full, pd, qf, vf, np.zeros(full.nv))
        x = np.linalg.solve(np.block([[M, -A.T], [A, np.zeros((3, 3))]]),
                            np.concatenate([tau - h, np.zeros(3)]))
        ref, lam_ref = np.concatenate([x[:3], x[arm_v]]), x[full.nv]
        for method in ("recursive", "kane", "udwadia_kalaba", "kkt"):
            a, lam = rob.constrained_dynamics(q, v, u, method=method)
            assert rel_err(a, ref) < TOL, method
            assert abs(lam - lam_ref) < TOL * max(1.0, abs(lam_ref)), method
        eff = rob.inverse_dynamics(q, v, ref)
        assert rel_err(np.concatenate([eff.wheels, eff.joints]), u) < TOL


def test_simulate_refuses_bad_options_and_reports_divergence(diff, omni) -> None:
    from rbd_ros.robot import SimulationError

    r, o = diff[0], omni[0]
    q0, v0 = np.zeros(r.nq), np.zeros(r.nv)
    with pytest.raises(ValueError, match="unknown diff_drive simulate method 'kkt'"):
        r.simulate(q0, v0, np.zeros(r.nu), 0.01, 2, method="kkt")
    with pytest.raises(ValueError, match="stabilise is for a diff_drive base"):
        o.simulate(q0, v0, np.zeros(o.nu), 0.01, 2, stabilise="projection")
    with pytest.raises(SimulationError, match="diverged"):  # 1e4 N m on a light wrist at dt = 0.5 s
        r.simulate(q0, v0, np.full(r.nu, 1e4), 0.5, 20)


# ---- the recursive path (algorithm.planar_base): default, formulations, wrench, simulate ---------
ID_ROUTES = ("silver", "lagrange", "lagrange_recursive", "kane", "dual_quaternion", "gauss")


@pytest.mark.parametrize("base", ("planar", "diff_drive"))
@pytest.mark.slow
def test_recursive_is_the_default_and_agrees_with_every_formulation(omni, diff, base: str) -> None:
    r = omni[0] if base == "planar" else diff[0]
    rng = np.random.default_rng(61)
    for q, v, a in states(r.nv, 61, rolling=True):
        flat = (lambda e: e) if base == "planar" else (lambda e: np.r_[e.wheels, e.lateral_force, e.joints])
        ref = flat(r.inverse_dynamics(q, v, a, method="recursive"))
        assert rel_err(flat(r.inverse_dynamics(q, v, a)), ref) == 0.0  # the default
        assert rel_err(r.kernels.rnea(q, v, a), ref) == 0.0  # [tau_L, tau_R, lam, joints] for the diff drive
        for m in ID_ROUTES:
            assert rel_err(flat(r.inverse_dynamics(q, v, a, method=m)), ref) < TOL, m
            assert rel_err(r.bias(q, v, method=m), r.bias(q, v)) < TOL, m
        for m in ("kane", "lagrange", "gauss"):
            assert rel_err(r.mass_matrix(q, method=m), r.mass_matrix(q)) < TOL, m
        assert rel_err(r.kernels.crba(q), r.mass_matrix(q)) == 0.0
        u = rng.uniform(-20, 20, r.nu)
        acc = r.forward_dynamics(q, v, u)
        assert rel_err(r.kernels.forward_dynamics(q, v, u), acc) == 0.0
        for m in (("kane", "lagrange", "gauss") if base == "planar" else ("kane", "udwadia_kalaba", "kkt")):
            assert rel_err(r.forward_dynamics(q, v, u, method=m), acc) < TOL, m
        if base == "diff_drive":
            a2, lam = r.constrained_dynamics(q, v, u)
            for m in ("kane", "udwadia_kalaba", "kkt"):
                assert abs(r.constrained_dynamics(q, v, u, method=m)[1] - lam) < TOL * max(1.0, abs(lam)), m
            assert a2[1] == 0.0 and rel_err(a2, acc) == 0.0
            # M a + h = f + e_y lam in base rates (the multiplier from the solve, not from ID)
            f = np.r_[(u[0] + u[1]) / r.wheels.radius, lam,
                      0.5 * r.wheels.separation * (u[1] - u[0]) / r.wheels.radius, u[2:]]
            assert rel_err(r.mass_matrix(q) @ acc + r.bias(q, v), f) < TOL


def _pin_tool_jacobian(pm, pd, q: np.ndarray) -> np.ndarray:
    qp = pin_q(q)
    pin.computeJointJacobians(pm, pd, qp)
    pin.updateFramePlacements(pm, pd)
    return pin.getFrameJacobian(pm, pd, pm.getFrameId("tool0"), pin.LOCAL_WORLD_ALIGNED)


@pytest.mark.parametrize("method", ("recursive", "silver", "dual_quaternion", "kane"))
def test_tool_wrench_vs_pinocchio(omni, diff, method: str) -> None:
    """``tool_wrench`` as ``Robot``'s: ``ID - J^T w`` with Pinocchio's whole-body tool Jacobian
    (world axes, base-rate columns); the diff drive's lateral force and wheel torques carry
    the wrench's share."""
    rng = np.random.default_rng(62)
    r, pm, pd = omni
    for q, v, a in states(r.nv, 62):
        w = rng.normal(size=6) * 20.0
        ref = pin.rnea(pm, pd, pin_q(q), v, a) - _pin_tool_jacobian(pm, pd, q).T @ w
        assert rel_err(r.inverse_dynamics(q, v, a, method=method, tool_wrench=w), ref) < TOL
    r, pm, pd = diff
    for q, v, a in states(r.nv, 63, rolling=True):
        w = rng.normal(size=6) * 20.0
        eff = r.inverse_dynamics(q, v, a, method=method, tool_wrench=w)
        fb = pin.rnea(pm, pd, pin_q(q), v, a) - _pin_tool_jacobian(pm, pd, q).T @ w
        assert rel_err(eff.joints, fb[3:]) < TOL and abs(eff.lateral_force - fb[1]) < TOL * np.abs(fb).max()
        rad, sep = r.wheels.radius, r.wheels.separation
        mv, Iw = r.wheels.added_inertia()
        assert rel_err(np.array([eff.wheels.sum() / rad, 0.5 * sep * (eff.wheels[1] - eff.wheels[0]) / rad]),
                       np.array([fb[0] + mv * a[0], fb[2] + Iw * a[2]])) < TOL
    with pytest.raises(ValueError, match=r"tool_wrench must have shape \(6,\)"):
        r.inverse_dynamics(q, v, a, tool_wrench=np.zeros(3))


def test_fast_path_falls_back_on_unusual_arrays(omni, diff) -> None:
    """Strided, integer and list inputs give the same numbers as contiguous float64 ones; a
    lateral speed or acceleration on the diff drive is refused by name on every entry."""
    r = omni[0]
    q, v, a = states(r.nv, 64, 1)[0]
    ref = r.inverse_dynamics(q, v, a)
    Z = np.zeros((r.nv, 3))
    Z[:, 1] = q
    assert rel_err(r.inverse_dynamics(Z[:, 1], v, a), ref) == 0.0
    assert rel_err(r.inverse_dynamics(list(q), v.tolist(), a), ref) == 0.0
    assert rel_err(r.mass_matrix(Z[:, 1]), r.mass_matrix(q)) == 0.0
    assert rel_err(r.gravity(np.zeros(r.nq, dtype=int)), r.gravity(np.zeros(r.nq))) == 0.0
    d = diff[0]
    q, v, a = states(d.nv, 65, 1, rolling=True)[0]
    u = np.ones(d.nu)
    for call in (lambda vv, aa: d.inverse_dynamics(q, vv, aa), lambda vv, aa: d.bias(q, vv),
                 lambda vv, aa: d.forward_dynamics(q, vv, u), lambda vv, aa: d.constrained_dynamics(q, vv, u)):
        bad = v.copy()
        bad[1] = 1e-3
        with pytest.raises(ValueError, match=r"v\[1\] \(lateral, v_y\)"):
            call(bad, a)
    bad = a.copy()
    bad[1] = 1e-3
    with pytest.raises(ValueError, match=r"a\[1\] \(lateral, v_y\)"):
        d.inverse_dynamics(q, v, bad)
    with pytest.raises(ValueError, match="contains NaN"):
        d.forward_dynamics(q, v, np.r_[np.nan, u[1:]])


def _feedback_law(kp: np.ndarray, kd: np.ndarray, q_ref: np.ndarray, tau_ff: np.ndarray, rad: float,
                  sep: float):
    """A base speed regulator (``F_x = 80 (0.4 - v_x)``, ``M_z = 20 (0.3 - omega)`` through the
    wheels) and a joint PD law with feedforward, ``tau_ff + kp (q_ref - q) - kd qd``."""
    def law(t: float, q: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
        Fx = 80.0 * (0.4 - v[0])
        Mz = 20.0 * (0.3 - v[2])
        out[0] = rad * (0.5 * Fx - Mz / sep)
        out[1] = rad * (0.5 * Fx + Mz / sep)
        for i in range(q_ref.shape[0]):
            out[2 + i] = tau_ff[i] + kp[i] * (q_ref[i] - q[3 + i]) - kd[i] * v[3 + i]
    return law


@pytest.mark.slow
def test_simulate_with_feedback_law_sequence_and_energy_balance(diff) -> None:
    """A feedback law (Python and ``@njit``) and the same inputs replayed as a sequence give
    the same trajectory; ``v_y`` is exactly 0 over 10 s; the energy balance
    ``E(T) - E(0) = int u . (wheel rates, qd) dt`` (Pinocchio's energies plus the wheels' spin
    energy: the lateral force does no work) holds to the integration error."""
    from numba import njit

    r, pm, pd = diff
    q0 = np.zeros(r.nq)
    q0[3:] = [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]
    v0 = np.zeros(r.nv)
    v0[0], v0[2] = 0.1, -0.2
    Md = np.diag(r.mass_matrix(q0))[3:]  # critically damped at 10 rad/s on each joint's own inertia
    law = _feedback_law(100.0 * Md, 20.0 * Md, q0[3:].copy(), r.gravity(q0)[3:], r.wheels.radius,
                        r.wheels.separation)
    dt, steps = 0.01, 1000
    res = r.simulate(q0, v0, law, dt, steps)
    jres = r.simulate(q0, v0, njit(law), dt, steps)
    assert rel_err(jres.q, res.q) < 1e-13 and rel_err(jres.tau, res.tau) < 1e-13
    again = r.simulate(q0, v0, res.tau, dt)
    assert rel_err(again.q, res.q) == 0.0 and rel_err(again.qd, res.qd) == 0.0
    assert res.q.shape == (steps + 1, r.nq) and res.tau.shape == (steps, r.nu)
    assert np.abs(res.qd[:, 1]).max() == 0.0 and np.abs(res.qdd[:, 1]).max() == 0.0
    held = r.simulate(q0, v0, res.tau[0], dt, 200)  # the first input, open loop, for 2 s
    dev = np.abs(res.q[:201, 3:] - q0[3:]).max()
    assert np.abs(res.q[:, 3:] - q0[3:]).max() < 0.5  # the law holds the arm over 10 s
    assert np.abs(held.q[:, 3:] - q0[3:]).max() > 3.0 * dev
    assert abs(res.qd[-1, 0] - 0.4) < 0.01 and abs(res.qd[-1, 2] - 0.3) < 0.01  # the base at its speeds
    rad, sep = r.wheels.radius, r.wheels.separation
    mv, Iw = r.wheels.added_inertia()

    def energy(q: np.ndarray, v: np.ndarray) -> float:
        qp = pin_q(q)
        return (pin.computeKineticEnergy(pm, pd, qp, v) + pin.computePotentialEnergy(pm, pd, qp)
                + 0.5 * (mv * v[0] ** 2 + Iw * v[2] ** 2))

    def power(k: int, j: int) -> float:  # input power of the inputs held over step k at state j
        v = res.qd[j]
        rates = np.r_[(v[0] - 0.5 * sep * v[2]) / rad, (v[0] + 0.5 * sep * v[2]) / rad, v[3:]]
        return float(res.tau[k] @ rates)

    E = np.array([energy(q, v) for q, v in zip(res.q[:201], res.qd[:201])])
    W = np.cumsum([0.5 * dt * (power(k, k) + power(k, k + 1)) for k in range(200)])
    assert np.abs(E[1:] - E[0] - W).max() < 1e-5 * np.abs(W).max()
    assert np.abs(W).max() > 1.0  # the inputs did work


def test_simulate_recursive_matches_the_formulations(omni, diff) -> None:
    """Same RK4 on the same state: the recursive route and Kane's agree to round-off."""
    for r, seed in ((omni[0], 66), (diff[0], 67)):
        q0, v0, _ = states(r.nv, seed, 1, rolling=True)[0]
        u = np.random.default_rng(seed).uniform(-5, 5, r.nu)
        a = r.simulate(q0, 0.5 * v0, u, 0.005, 60)
        b = r.simulate(q0, 0.5 * v0, u, 0.005, 60, method="kane")
        assert rel_err(a.q, b.q) < 1e-10 and rel_err(a.qd, b.qd) < 1e-10 and rel_err(a.qdd, b.qdd) < 1e-9


def test_simulate_input_errors(diff) -> None:
    r = diff[0]
    q0, v0 = np.zeros(r.nq), np.zeros(r.nv)
    with pytest.raises(ValueError, match="run with method='recursive'"):
        r.simulate(q0, v0, np.ones((3, r.nu)) * np.arange(3)[:, None], 0.01, method="kane")
    with pytest.raises(ValueError, match="run with method='recursive'"):
        r.simulate(q0, v0, lambda t, q, v, out: None, 0.01, 3, method="udwadia_kalaba")
    with pytest.raises(ValueError, match="steps .* is required with an input callback"):
        r.simulate(q0, v0, lambda t, q, v, out: None, 0.01)
    with pytest.raises(ValueError, match=r"tau must have shape \(9,\) \(held\) or \(steps, 9\)"):
        r.simulate(q0, v0, np.zeros((4, r.nv)), 0.01)
    with pytest.raises(ValueError, match="steps=5 but tau has 4 rows"):
        r.simulate(q0, v0, np.zeros((4, r.nu)), 0.01, 5)
    with pytest.raises(ValueError, match="stabilise is for method='udwadia_kalaba'"):
        r.simulate(q0, v0, np.zeros(r.nu), 0.01, 2, stabilise="baumgarte")


@pytest.mark.parametrize("base", ("planar", "diff_drive"))
def test_bias_power_matches_mass_matrix_rate_by_finite_differences(omni, diff, base: str) -> None:
    """``v . (h - g) = (1/2) v . M-dot v`` (the power identity behind ``M-dot - 2C`` skew, which
    holds in base rates too), ``M-dot`` by central differences of the recursive ``M`` along
    ``q-dot = T(yaw) v``: the RNEA and CRBA kernels agree with each other."""
    r = omni[0] if base == "planar" else diff[0]
    for q, v, _ in states(r.nv, 68, 3, rolling=True):
        c, s = np.cos(q[2]), np.sin(q[2])
        qd = np.r_[c * v[0] - s * v[1], s * v[0] + c * v[1], v[2:]]
        eps = 1e-6
        Md = (r.mass_matrix(q + eps * qd) - r.mass_matrix(q - eps * qd)) / (2 * eps)
        lhs = v @ (r.bias(q, v) - r.gravity(q))
        assert abs(lhs - 0.5 * v @ Md @ v) < 1e-7 * max(1.0, abs(lhs)), (lhs, 0.5 * v @ Md @ v)
        assert abs(lhs) > 1e-2


def test_massless_wrist_is_a_singular_mass_matrix_by_name(omni) -> None:
    """A massless last link: ABA divides by zero; both bases name the joint (as ``Robot``)."""
    from rbd_ros.robot import SingularMassMatrixError

    m = omni[0].model
    mass, inertia = m.mass.copy(), m.inertia.copy()
    mass[-1], inertia[-1] = 0.0, 0.0
    keys = dict(base=m.base, base_mass=m.base_mass, base_com=m.base_com, base_inertia=m.base_inertia,
                gravity=m.gravity, tool=m.tool)
    for kind, extra in (("planar", {}), ("diff_drive", dict(wheel_radius=0.1, wheel_separation=0.5))):
        r = Robot.from_mdh(m.a, m.alpha, m.d, m.theta, mass, m.com, inertia, base_type=kind, **keys, **extra)
        last = r.joint_names[-1]
        with pytest.raises(SingularMassMatrixError, match=rf"\['{last}'\] move no mass"):
            r.forward_dynamics(np.zeros(r.nq), np.zeros(r.nv), np.zeros(r.nu))
        with pytest.raises(SingularMassMatrixError, match=rf"\['{last}'\]"):
            r.simulate(np.zeros(r.nq), np.zeros(r.nv), np.zeros(r.nu), 0.01, 3)
        if kind == "diff_drive":
            with pytest.raises(SingularMassMatrixError, match=rf"\['{last}'\]"):
                r.constrained_dynamics(np.zeros(r.nq), np.zeros(r.nv), np.zeros(r.nu))
