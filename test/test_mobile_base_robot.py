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


def pin_reduced(path: str, gravity: np.ndarray):  # noqa: ANN201
    """The URDF on ``pin.JointModelPlanar`` with the wheel joints locked at 0."""
    full = pin.buildModelFromUrdf(path, pin.JointModelPlanar())
    lock = [full.getJointId(j) for j in full.names[2:] if "wheel" in j]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full))
    pm.gravity.linear[:] = gravity
    assert pm.nv == 10
    return pm, pm.createData()


def pin_q(q: np.ndarray) -> np.ndarray:
    return np.concatenate([q[:2], [np.cos(q[2]), np.sin(q[2])], q[3:]])


def pin_mass(pm, pd, q: np.ndarray) -> np.ndarray:  # noqa: ANN001
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
def omni():  # noqa: ANN201
    r = Robot.from_urdf(OMNI, base="planar", tip_link="tool0")
    return (r, *pin_reduced(OMNI, r.model.gravity))


@pytest.fixture(scope="module")
def diff():  # noqa: ANN201
    r = Robot.from_urdf(DIFF, base="diff_drive", tip_link="tool0")
    return (r, *pin_reduced(DIFF, r.model.gravity))


# ---- planar (holonomic) base -----------------------------------------------------------------
def test_planar_layout_and_base_body(omni) -> None:  # noqa: ANN001
    r, pm, _ = omni
    assert type(r).__name__ == "MobileBaseRobot" and r.model.base_type == "planar"
    assert (r.nq, r.nv, r.nu) == (10, 10, 10)
    # base body = base_link + 4 wheels of 1.5 kg, as Pinocchio's fused root body
    assert r.model.base_mass == pytest.approx(pm.inertias[1].mass, rel=1e-12) == 56.0
    assert rel_err(r.model.base_com, pm.inertias[1].lever) < 1e-12


@pytest.mark.parametrize("method", ("silver", "lagrange", "kane", "dual_quaternion", "gauss"))
def test_planar_inverse_dynamics_vs_pinocchio(omni, method: str) -> None:  # noqa: ANN001
    r, pm, pd = omni
    for q, v, a in states(r.nv, 1):
        tau = r.inverse_dynamics(q, v, a, method=method)
        assert rel_err(tau, pin.rnea(pm, pd, pin_q(q), v, a)) < TOL


@pytest.mark.parametrize("method", ("kane", "lagrange", "gauss"))
def test_planar_mass_bias_gravity_forward_vs_pinocchio(omni, method: str) -> None:  # noqa: ANN001
    r, pm, pd = omni
    for q, v, a in states(r.nv, 2):
        qp = pin_q(q)
        assert rel_err(r.mass_matrix(q, method=method), pin_mass(pm, pd, q)) < TOL
        assert rel_err(r.bias(q, v), pin.rnea(pm, pd, qp, v, 0 * v)) < TOL
        g = r.gravity(q)
        assert rel_err(g, pin.computeGeneralizedGravity(pm, pd, qp)) < TOL
        assert np.abs(g[:3]).max() < 1e-9 * np.abs(g).max()  # vertical gravity: no base force
        tau = 20.0 * a
        assert rel_err(r.forward_dynamics(q, v, tau, method=method), pin.aba(pm, pd, qp, v, tau)) < TOL


def test_planar_integrate_vs_pinocchio(omni) -> None:  # noqa: ANN001
    r, pm, _ = omni
    for q, v, _ in states(r.nv, 3):
        for dt in (0.01, 0.7):
            assert rel_err(pin_q(r.integrate(q, v, dt)), pin.integrate(pm, pin_q(q), v * dt)) < 1e-12


def test_planar_simulate_conserves_pinocchio_energy(omni) -> None:  # noqa: ANN001
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
def test_diff_drive_wheels_from_urdf(diff) -> None:  # noqa: ANN001
    r, _, _ = diff
    m = r.model
    assert (m.wheel_radius, m.wheel_separation) == (0.08, 0.45)
    assert m.wheel_joints == ("left_wheel_joint", "right_wheel_joint")
    assert m.wheel_spin_inertia == pytest.approx(0.00384)  # the wheel link's iyy (axle along y)
    assert (r.nq, r.nv, r.nu) == (10, 10, 9)


def _pin_kkt(r, pm, pd, q, v, u):  # noqa: ANN001, ANN202
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


@pytest.mark.parametrize("method", ("kane", "udwadia_kalaba", "kkt"))
def test_diff_drive_forward_dynamics_vs_pinocchio_kkt(diff, method: str) -> None:  # noqa: ANN001
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


@pytest.mark.parametrize("method", ("silver", "kane", "dual_quaternion", "gauss"))
def test_diff_drive_inverse_dynamics_round_trip(diff, method: str) -> None:  # noqa: ANN001
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


@pytest.mark.parametrize("method", ("kane", "udwadia_kalaba"))
def test_diff_drive_simulate_keeps_v_y_zero(diff, method: str) -> None:  # noqa: ANN001
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
    from_urdf = Robot.from_urdf(str(REPO / "urdf" / f"{name}.urdf"), base=base, tip_link="tool0")
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


def test_from_mdh_with_a_base(omni) -> None:  # noqa: ANN001
    """``from_mdh(..., base="planar" | "diff_drive")`` gives the same dynamics as the URDF."""
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
    assert Robot.from_yaml(d.model.to_yaml(), base="planar").model.wheel_radius == 0.0


def test_bad_input_is_refused_clearly(omni, diff) -> None:  # noqa: ANN001
    r, _, _ = diff
    o, _, _ = omni
    with pytest.raises(ValueError, match="base 'tracked' unknown"):
        Robot.from_urdf(DIFF, base="tracked", tip_link="tool0")
    with pytest.raises(ValueError, match="cannot tell the left drive wheel.*left_wheel="):
        Robot.from_urdf(OMNI, base="diff_drive", tip_link="tool0")
    with pytest.raises(ValueError, match="'arm_mount' is not a joint|is not a wheel"):
        Robot.from_urdf(DIFF, base="diff_drive", tip_link="tool0", left_wheel="joint1")
    with pytest.raises(ValueError, match="axle midpoint"):  # front wheels: midpoint at x = 0.22
        Robot.from_urdf(OMNI, base="diff_drive", tip_link="tool0", left_wheel="front_left_wheel_joint",
                        right_wheel="front_right_wheel_joint")
    with pytest.raises(ValueError, match="wheel options .* are for base 'diff_drive'"):
        Robot.from_urdf(OMNI, base="planar", tip_link="tool0", wheel_radius=0.1)
    with pytest.raises(ValueError, match="needs positive wheel_radius and wheel_separation"):
        MdhModel.from_dict({**r.model.to_dict(), "wheels": {}})
    with pytest.raises(ValueError, match="needs the file's wheels section"):
        Robot.from_yaml(o.model.to_yaml(), base="diff_drive")
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
        o.jacobian(q)


def test_diff_drive_vs_pinocchio_with_spinning_wheels(diff) -> None:  # noqa: ANN001
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
        for method in ("kane", "udwadia_kalaba", "kkt"):
            a, lam = rob.constrained_dynamics(q, v, u, method=method)
            assert rel_err(a, ref) < TOL, method
            assert abs(lam - lam_ref) < TOL * max(1.0, abs(lam_ref)), method
        eff = rob.inverse_dynamics(q, v, ref)
        assert rel_err(np.concatenate([eff.wheels, eff.joints]), u) < TOL


def test_simulate_refuses_bad_options_and_reports_divergence(diff, omni) -> None:  # noqa: ANN001
    from rbd_ros.robot import SimulationError

    r, o = diff[0], omni[0]
    q0, v0 = np.zeros(r.nq), np.zeros(r.nv)
    with pytest.raises(ValueError, match="unknown diff_drive simulate method 'kkt'"):
        r.simulate(q0, v0, np.zeros(r.nu), 0.01, 2, method="kkt")
    with pytest.raises(ValueError, match="stabilise is for a diff_drive base"):
        o.simulate(q0, v0, np.zeros(o.nu), 0.01, 2, stabilise="projection")
    with pytest.raises(SimulationError, match="diverged"):  # 1e4 N m on a light wrist at dt = 0.5 s
        r.simulate(q0, v0, np.full(r.nu, 1e4), 0.5, 20)
