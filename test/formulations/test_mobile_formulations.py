"""Mobile-manipulator formulations (``rbd_ros.formulations.planar_base``, ``diff_drive``,
``udwadia_kalaba``): arm7 on a planar (holonomic) base against Pinocchio with a planar root
joint (``pin.JointModelPlanar``: configuration (x, y, cos, sin), base-frame velocity), the
differential-drive routes against a KKT solve with Pinocchio's M and h, pinned numbers #16-#17
of the formulations sheet, and a simulation keeping the rolling constraint and the energy
balance.  Tolerance 1e-9 relative (``rel_err``)."""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import REPO, rel_err
from rbd_ros.formulations import Formulations
from rbd_ros.formulations import diff_drive as dd
from rbd_ros.formulations import planar_base as pb
from rbd_ros.formulations.chain import Chain
from rbd_ros.formulations.udwadia_kalaba import kkt, udwadia_kalaba
from rbd_ros.robot import Robot

pin = pytest.importorskip("pinocchio")

TOL = 1e-9
NO_WRENCH = np.zeros(6)
URDF = str(REPO / "urdf" / "arm7.urdf")
WORLD_METHODS = ("silver", "lagrange", "lagrange_recursive", "kane", "gauss", "dual_quaternion")


def _mount() -> np.ndarray:
    T = np.eye(4)
    c, s = np.cos(0.4), np.sin(0.4)
    T[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    T[:3, 3] = [0.22, -0.06, 0.35]
    return T


@pytest.fixture(scope="module")
def mobile():
    """arm7 on a 40 kg base (CoM off the base point), and the same in Pinocchio."""
    arm = Chain.from_model(Robot.from_urdf(URDF).model)
    base = pb.PlanarBase(40.0, np.array([-0.08, 0.03, 0.18]),
                         np.array([[1.2, 0.05, 0.02], [0.05, 1.6, -0.03], [0.02, -0.03, 2.1]]), _mount())
    F = Formulations(pb.whole_body_chain(base, arm))
    pm = pin.buildModelFromUrdf(URDF, pin.JointModelPlanar())
    pm.inertias[1] = pin.Inertia(base.mass, base.com, base.inertia)
    pm.jointPlacements[2] = pin.SE3(base.mount) * pm.jointPlacements[2]
    pm.gravity.linear[:] = arm.gravity
    assert (pm.nq, pm.nv, F.n) == (11, 10, 10)
    return base, arm, F, pm, pm.createData()


pin_q = pb.to_cos_sin


def pin_mass(pm, pd, q: np.ndarray) -> np.ndarray:
    M = pin.crba(pm, pd, pin_q(q))
    return np.triu(M) + np.triu(M, 1).T


def states(n: int, seed: int, k: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.5, 1.5, (k, 3, n))
    X[:, 0, :2] *= 3.0  # base far from the world origin
    return X


# ---- holonomic base -------------------------------------------------------------------------
def test_velocity_maps_by_finite_differences() -> None:
    """``world_accelerations`` is the time derivative of ``world_rates`` along a path."""
    rng = np.random.default_rng(3)
    q, v, vd = rng.normal(size=(3, 5))
    h = 1e-6
    qd = pb.world_rates(q, v)
    qdd = (pb.world_rates(q + h * qd, v + h * vd) - pb.world_rates(q - h * qd, v - h * vd)) / (2 * h)
    assert rel_err(pb.world_accelerations(q, v, vd), qdd) < 1e-8
    assert rel_err(pb.base_accelerations(q, qd, pb.world_accelerations(q, v, vd)), vd) < 1e-14
    assert rel_err(pb.base_rates(q, qd), v) < 1e-15
    assert abs(v[0] - qd[0]) > 1e-3  # the map is not the identity


@pytest.mark.parametrize("method", WORLD_METHODS + ("dqne_planar",))
def test_planar_base_inverse_dynamics_vs_pinocchio(mobile, method: str) -> None:
    """Base-frame force/moment and joint torques equal ``pin.rnea`` on the planar-root model."""
    base, arm, F, pm, pd = mobile
    dp, ws = pb.pack_arm(base, arm), pb.dqne_workspace(arm.dof)
    for q, v, vd in states(F.n, 11):
        qd, qdd = pb.world_rates(q, v), pb.world_accelerations(q, v, vd)
        if method == "dqne_planar":
            tau = np.empty(F.n)
            pb.dqne_planar(base.packed(), dp, arm.gravity, q, qd, qdd, NO_WRENCH, False, ws, tau)
        else:
            tau = F.inverse_dynamics(method, q, qd, qdd)
        ref = pin.rnea(pm, pd, pin_q(q), v, vd)
        assert rel_err(pb.base_rates(q, tau), ref) < TOL
        assert rel_err(tau, ref) > 1e-3  # world and base frame differ


def test_dqne_planar_yaw_force_needs_the_errata(mobile) -> None:
    """001 §3.2.2 literally (``tau_phi = D(<zeta_1, k>)``, moment about the world origin) is
    wrong away from the origin; the corrected ``- (p_B x f)_z`` matches Pinocchio."""
    base, arm, F, pm, pd = mobile
    q, v, vd = states(F.n, 12, 1)[0]
    q[:2] = (2.0, -1.5)
    qd, qdd = pb.world_rates(q, v), pb.world_accelerations(q, v, vd)
    tau = np.empty(F.n)
    pb.dqne_planar(base.packed(), pb.pack_arm(base, arm), arm.gravity, q, qd, qdd, NO_WRENCH, False,
                   pb.dqne_workspace(arm.dof), tau)
    literal = tau[2] + q[0] * tau[1] - q[1] * tau[0]
    ref = pin.rnea(pm, pd, pin_q(q), v, vd)
    assert abs(tau[2] - ref[2]) < TOL * max(1.0, np.abs(ref).max())
    assert abs(literal - ref[2]) > 1.0


def test_dqne_planar_tool_wrench(mobile) -> None:
    """With a tool wrench, equal to Silver's NE on the whole-body chain (same convention)."""
    base, arm, F, _, _ = mobile
    rng = np.random.default_rng(13)
    for q, qd, qdd in states(F.n, 13, 2):
        w = rng.normal(size=6) * 10.0
        tau = np.empty(F.n)
        pb.dqne_planar(base.packed(), pb.pack_arm(base, arm), arm.gravity, q, qd, qdd, w, True,
                       pb.dqne_workspace(arm.dof), tau)
        ref = F.inverse_dynamics("silver", q, qd, qdd, w)
        assert rel_err(tau, ref) < TOL
        assert rel_err(ref, F.inverse_dynamics("silver", q, qd, qdd)) > 1e-6


@pytest.mark.parametrize("method", ("lagrange", "kane", "gauss"))
def test_planar_base_mass_matrix_bias_and_aba_vs_pinocchio(mobile, method: str) -> None:
    _, _, F, pm, pd = mobile
    for q, v, tau in states(F.n, 14):
        qd = pb.world_rates(q, v)
        M = F.mass_matrix(method, q)
        h = F.inverse_dynamics(method, q, qd, np.zeros(F.n))  # h + g
        Mb, hb = pb.to_base_frame(q, v, M, h)
        Mp = pin_mass(pm, pd, q)
        assert rel_err(Mb, Mp) < TOL
        assert rel_err(hb, pin.rnea(pm, pd, pin_q(q), v, np.zeros(F.n))) < TOL
        assert rel_err(np.linalg.solve(Mb, tau - hb), pin.aba(pm, pd, pin_q(q), v, tau)) < TOL


def test_planar_base_functional_interface_vs_pinocchio(mobile) -> None:
    """``planar_base.inverse_dynamics / mass_matrix / bias / forward_dynamics`` in base rates."""
    _, _, F, pm, pd = mobile
    for q, v, vd in states(F.n, 16, 2):
        qp = pin_q(q)
        assert rel_err(pb.inverse_dynamics(F, q, v, vd, "dual_quaternion"), pin.rnea(pm, pd, qp, v, vd)) < TOL
        assert rel_err(pb.mass_matrix(F, q, "gauss"), pin_mass(pm, pd, q)) < TOL
        assert rel_err(pb.bias(F, q, v), pin.rnea(pm, pd, qp, v, 0 * v)) < TOL
        assert rel_err(pb.forward_dynamics(F, q, v, 10 * vd), pin.aba(pm, pd, qp, v, 10 * vd)) < TOL


def test_model_base_body_and_layouts(mobile) -> None:
    """``formulations(model)`` reads the model's base body (``MdhModel.base_*``, mount in
    ``model.base``) and equals the hand-built whole body; the cos/sin layout round-trips."""
    base, _, F, _, _ = mobile
    mount = base.mount @ Robot.from_urdf(URDF).model.base
    model = Robot.from_urdf(URDF).model.replace(base=mount, base_mass=base.mass, base_com=base.com,
                                               base_inertia=base.inertia)
    G = pb.formulations(model)
    for q, qd, qdd in states(F.n, 17, 2):
        assert rel_err(G.inverse_dynamics("silver", q, qd, qdd), F.inverse_dynamics("silver", q, qd, qdd)) < 1e-12
        q[2] = 3.0
        assert rel_err(pb.from_cos_sin(pb.to_cos_sin(q)), q) < 1e-15
    with pytest.raises(ValueError, match="mass must be finite and >= 0"):
        pb.PlanarBase(-1.0, np.zeros(3), np.eye(3))


@pytest.mark.parametrize("method", ("kane", "gauss"))
def test_whole_body_mdot_minus_2c_is_skew(mobile, method: str) -> None:
    """000 (36) / 001 (47): ``M-dot - 2C`` skew with the base joints (finite-difference M-dot)."""
    _, _, F, _, _ = mobile
    for q, qd, _ in states(F.n, 15, 2):
        h = 1e-6
        Md = (F.mass_matrix(method, q + h * qd) - F.mass_matrix(method, q - h * qd)) / (2 * h)
        S = Md - 2.0 * F.coriolis_matrix(method, q, qd)
        assert np.abs(S + S.T).max() < 1e-7 * max(1.0, np.abs(S).max())
        assert np.abs(S).max() > 1e-3


# ---- differential drive ---------------------------------------------------------------------
def pin_kkt(pm, pd, q: np.ndarray, v: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, float]:
    """KKT with Pinocchio's M and h (base rates) and the constraint ``v_y-dot = 0``."""
    M = pin_mass(pm, pd, q)
    h = pin.rnea(pm, pd, pin_q(q), v, np.zeros(len(v)))
    n = len(v)
    K = np.zeros((n + 1, n + 1))
    K[:n, :n], K[:n, n], K[n, 1] = M, -np.eye(n)[1], 1.0
    x = np.linalg.solve(K, np.concatenate([f - h, [0.0]]))
    return x[:n], x[n]


def test_diff_drive_routes_agree_with_pinocchio_kkt(mobile) -> None:
    _, arm, F, pm, pd = mobile
    wheels = dd.Wheels(radius=0.08, separation=0.45)
    rng = np.random.default_rng(21)
    for q, v, _ in states(F.n, 21):
        v[1] = 0.0
        tw, ta = rng.normal(size=2) * 5.0, rng.normal(size=arm.dof) * 5.0
        ref, lam_ref = pin_kkt(pm, pd, q, v, dd.generalized_force(wheels, tw, ta))
        assert abs(ref[1]) < 1e-12 and abs(lam_ref) > 1e-2
        for method in dd.METHODS:
            vd, lam = dd.forward_dynamics(F, wheels, q, v, tw, ta, method)
            assert rel_err(vd, ref) < TOL, method
            assert abs(lam - lam_ref) < TOL * max(1.0, abs(lam_ref)), method
        # the same as a 2-DoF root joint S = [lin x, ang z] in base rates (bench/README.md)
        M = pin_mass(pm, pd, q)
        h = pin.rnea(pm, pd, pin_q(q), v, np.zeros(F.n))
        keep = [0] + list(range(2, F.n))
        fr = (dd.generalized_force(wheels, tw, ta) - h)[keep]
        assert rel_err(np.linalg.solve(M[np.ix_(keep, keep)], fr), ref[keep]) < TOL
        # A qdd = b of 001 (64) in world rates
        qd = pb.world_rates(q, v)
        A, b = dd.constraint(q, qd)
        assert abs(A @ pb.world_accelerations(q, v, ref) - b)[0] < 1e-9
        assert abs(A @ qd)[0] < 1e-15


def test_diff_drive_inverse_dynamics_round_trip(mobile) -> None:
    """Wheel torques, arm torques and the lateral force that realise Pinocchio's constrained
    accelerations are the inputs that produced them (and are zero-sum checked on a base
    force with a pure forward push)."""
    _, arm, F, pm, pd = mobile
    wheels = dd.Wheels(radius=0.1, separation=0.5)
    rng = np.random.default_rng(22)
    for method in ("silver", "dual_quaternion", "kane"):
        q, v, _ = states(F.n, 22, 1)[0]
        v[1] = 0.0
        tw, ta = rng.normal(size=2) * 5.0, rng.normal(size=arm.dof)
        vd, lam = pin_kkt(pm, pd, q, v, dd.generalized_force(wheels, tw, ta))
        vd[1] = 0.0
        tw2, ta2, lam2 = dd.inverse_dynamics(F, wheels, q, v, vd, method)
        assert rel_err(tw2, tw) < TOL and rel_err(ta2, ta) < TOL, method
        assert abs(lam2 - lam) < TOL * max(1.0, abs(lam)), method
    # the ros2_control meanings: equal torques push, opposite torques turn (right wheel forward = +yaw)
    assert np.allclose(wheels.base_force(np.array([1.0, 1.0])), (20.0, 0.0))
    assert np.allclose(wheels.base_force(np.array([-1.0, 1.0])), (0.0, 5.0))


@pytest.mark.parametrize("method", dd.METHODS)
@pytest.mark.parametrize("a, expected", [(0.0, (0.0, 1.0, 0.0)), (0.3, (0.3, 1.0, -15.0 / 17.0))])
def test_pinned_knife_edge(method: str, a: float, expected: tuple[float, float, float]) -> None:
    """Sheet §7 #16 and #17: the base alone, m = 2, Iz = 0.5 about the CoM, CoM ``a`` ahead of
    the axle point, phi = 0, (x-dot, y-dot, phi-dot) = (1, 0, 1), no forces."""
    base = pb.PlanarBase(2.0, np.array([a, 0.0, 0.1]), np.diag([0.3, 0.4, 0.5]))
    F = Formulations(pb.whole_body_chain(base, None, np.array([0.0, 0.0, -9.81])))
    q, qd = np.zeros(3), np.array([1.0, 0.0, 1.0])
    v = pb.base_rates(q, qd)
    vd, lam = dd.constrained_dynamics(F, q, v, np.zeros(3), method)
    assert np.abs(pb.world_accelerations(q, v, vd) - expected).max() < 1e-12
    # Kane's closed form (sheet #17): v-dot = a w^2, w-dot = -m a v w / (Iz + m a^2)
    assert abs(vd[0] - a) < 1e-12 and abs(vd[2] + 2 * a / (0.5 + 2 * a * a)) < 1e-12
    # the lateral force: centripetal m v w plus the CoM's share
    assert lam == pytest.approx(2.0 * (1.0 + a * vd[2]), abs=1e-12)


def test_udwadia_kalaba_equals_kkt_and_its_force_does_no_work() -> None:
    """001 (62) vs the multiplier form on a random SPD system; ``Q_c . qd = 0`` for every
    admissible ``qd`` (``A qd = 0``)."""
    rng = np.random.default_rng(31)
    n, r = 7, 2
    L = rng.normal(size=(n, n))
    M = L @ L.T + n * np.eye(n)
    Q, A, b = rng.normal(size=n), rng.normal(size=(r, n)), rng.normal(size=r)
    q1, Qc, q2, lam = np.empty(n), np.empty(n), np.empty(n), np.empty(r)
    udwadia_kalaba(M, Q, A, b, q1, Qc)
    kkt(M, Q, A, b, q2, lam)
    assert rel_err(q1, q2) < 1e-12 and rel_err(Qc, A.T @ lam) < 1e-12
    assert rel_err(A @ q1, b) < 1e-12
    # (63): M qdd + Omega C qd - M^{1/2} D^+ b = Omega tau with Q = tau - C qd
    C, qd0 = rng.normal(size=(n, n)), rng.normal(size=n)
    tau = Q + C @ qd0
    w, V = np.linalg.eigh(M)
    Mh, Mih = (V * np.sqrt(w)) @ V.T, (V / np.sqrt(w)) @ V.T
    MhDp = Mh @ np.linalg.pinv(A @ Mih)
    Om = np.eye(n) - MhDp @ A @ np.linalg.inv(M)
    assert rel_err(M @ q1 + Om @ C @ qd0 - MhDp @ b, Om @ tau) < 1e-12
    qd = np.linalg.svd(A)[2][r:].T @ rng.normal(size=n - r)  # in the null space of A
    assert abs(Qc @ qd) < 1e-12 * np.abs(Qc).max() * np.abs(qd).max()


@pytest.fixture(scope="module")
def runs(mobile):
    """10 s of arm7 on a diff-drive base: constant wheel torques, a PD hold of the arm, each route."""
    _, _, F, _, _ = mobile
    wheels = dd.Wheels(radius=0.08, separation=0.45, spin_inertia=0.004)
    q0 = np.zeros(F.n)
    q0[3:] = [0.2, -0.4, 0.1, -1.6, 0.0, 1.2, 0.3]
    v0 = np.zeros(F.n)
    v0[0], v0[2] = 0.5, 0.3
    tw = np.array([0.4, 0.9])

    inertia = np.diag(F.mass_matrix("kane", q0))[3:]  # a PD hold of the arm at 3 rad/s, damped

    def ta(q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return inertia * (9.0 * (q0[3:] - q[3:]) - 6.0 * v[3:])
    out = {}
    for key, method, stab in [("kane", "kane", None), ("uk", "udwadia_kalaba", None),
                              ("uk_baumgarte", "udwadia_kalaba", "baumgarte"),
                              ("uk_projection", "udwadia_kalaba", "projection")]:
        out[key] = dd.simulate(F, wheels, q0, v0, tw, ta, dt=0.01, steps=1000, method=method,
                               stabilise=stab)
    return out


@pytest.mark.slow
def test_simulation_keeps_the_rolling_constraint(runs) -> None:
    """Integrating in the independent speeds (Kane) or projecting (UK) holds ``|v_y| < 1e-10``
    over 10 s; unstabilised UK drifts (printed for the record)."""
    drift = {k: float(np.abs(r["v_y"]).max()) for k, r in runs.items()}
    print("max |v_y| over 10 s:", drift)
    assert drift["kane"] < 1e-10
    assert drift["uk_projection"] < 1e-10
    assert drift["uk"] > 1e-12  # unstabilised world-rate integration does drift
    assert drift["uk_baumgarte"] < 1e-6  # bounded (not round-off) by the velocity feedback
    # the routes integrate the same motion
    assert np.abs(runs["kane"]["q"][-1] - runs["uk_projection"]["q"][-1]).max() < 1e-6
    assert np.abs(runs["kane"]["q"][-1, :3] - runs["kane"]["q"][0, :3]).max() > 0.5  # it moved


def test_simulation_energy_balance(runs) -> None:
    """``dE/dt = tau . qd``: the constraint force does no work, so ``E(t) - E(0)`` equals the
    input work ``W(t)`` to the integration error."""
    for key in ("kane", "uk_projection"):
        r = runs[key]
        scale = max(1.0, np.abs(r["E"] - r["E"][0]).max(), np.abs(r["W"]).max())
        assert np.abs(r["E"] - r["E"][0] - r["W"]).max() < 1e-6 * scale, key
        assert np.abs(r["W"]).max() > 1.0  # the wheels did work


def test_bad_input_is_named(mobile) -> None:
    _, arm, F, _, _ = mobile
    wheels = dd.Wheels(0.1, 0.5)
    q, v = np.zeros(F.n), np.zeros(F.n)
    v[1] = 0.2
    with pytest.raises(ValueError, match=r"v\[1\] \(lateral, v_y\) = 0.2 violates the rolling constraint"):
        dd.forward_dynamics(F, wheels, q, v, np.zeros(2), np.zeros(arm.dof))
    with pytest.raises(ValueError, match="unknown diff_drive method 'euler'; valid: kane, udwadia_kalaba, kkt"):
        dd.forward_dynamics(F, wheels, q, np.zeros(F.n), np.zeros(2), np.zeros(arm.dof), "euler")
    with pytest.raises(ValueError, match="wheel_radius must be positive"):
        dd.Wheels(0.0, 0.5)
    with pytest.raises(ValueError, match="mount must be a homogeneous transform"):
        pb.PlanarBase(1.0, np.zeros(3), np.eye(3), 2.0 * np.eye(4))
    with pytest.raises(ValueError, match="give gravity when there is no arm"):
        pb.whole_body_chain(pb.PlanarBase(1.0, np.zeros(3), np.eye(3)))


# ---- bundled mobile manipulators (URDF only; YAML waits for the model's base section) -----------
@pytest.mark.parametrize("name, wheels, radius, separation", [
    ("mobile_arm7", ("left_wheel_joint", "right_wheel_joint"), 0.08, 0.45),
    ("omni_arm7", ("front_left_wheel_joint", "front_right_wheel_joint"), 0.076, 0.56)])
def test_bundled_mobile_urdf(name: str, wheels: tuple[str, str], radius: float, separation: float) -> None:
    """The arm inside is arm7; Pinocchio (planar root, wheels locked and fused into the base)
    agrees with the whole-body chain built from the URDF's base inertia and mount; the wheel
    joints and cylinders give ros2_control's radius and separation."""
    import xml.etree.ElementTree as ET

    path = str(REPO / "urdf" / f"{name}.urdf")
    root = ET.parse(path).getroot()
    joints = {j.get("name"): j for j in root.iter("joint")}
    left, right = (np.array(joints[w].find("origin").get("xyz").split(), float) for w in wheels)
    assert np.linalg.norm(left - right) == pytest.approx(separation)
    link = {lk.get("name"): lk for lk in root.iter("link")}[joints[wheels[0]].find("child").get("link")]
    assert float(link.find("collision/geometry/cylinder").get("radius")) == pytest.approx(radius)
    arm_model = Robot.from_urdf(path, base_link="arm_base_link", tip_link="tool0").model
    ref_arm = Robot.from_urdf(URDF).model
    assert np.allclose(arm_model.mass, ref_arm.mass) and np.allclose(arm_model.d, ref_arm.d)
    full = pin.buildModelFromUrdf(path, pin.JointModelPlanar())
    lock = [full.getJointId(j) for j in full.names[2:] if "wheel" in j]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full))
    assert pm.nv == 10
    pm.gravity.linear[:] = ref_arm.gravity
    Y = pm.inertias[1]
    mount = np.eye(4)
    mount[:3, 3] = np.array(joints["arm_mount"].find("origin").get("xyz").split(), float)
    base = pb.PlanarBase(Y.mass, Y.lever, Y.inertia, mount)
    F = Formulations(pb.whole_body_chain(base, Chain.from_model(arm_model)))
    pd = pm.createData()
    for q, v, vd in states(F.n, 41, 2):
        tau = F.inverse_dynamics("silver", q, pb.world_rates(q, v), pb.world_accelerations(q, v, vd))
        assert rel_err(pb.base_rates(q, tau), pin.rnea(pm, pd, pin_q(q), v, vd)) < TOL


def test_spinning_wheels_vs_pinocchio_with_rolling_constraints() -> None:
    """``mobile_arm7`` in Pinocchio with its wheel joints and three constraints (no side slip,
    left and right rolling), solved by KKT, against ``diff_drive`` with the wheels' mass fused
    into the base and their spin inertia as ``Wheels.spin_inertia``: every route, the lateral
    force, and the inverse dynamics back to the wheel torques."""
    path = str(REPO / "urdf" / "mobile_arm7.urdf")
    full = pin.buildModelFromUrdf(path, pin.JointModelPlanar())
    arm_model = Robot.from_urdf(path, base_link="arm_base_link", tip_link="tool0").model
    full.gravity.linear[:] = arm_model.gravity
    lw, rw = (full.getJointId(j) for j in ("left_wheel_joint", "right_wheel_joint"))
    red = pin.buildReducedModel(full, [lw, rw], pin.neutral(full))
    Y = red.inertias[1]
    mount = np.eye(4)
    mount[:3, 3] = (0.10, 0.0, 0.225)
    F = Formulations(pb.whole_body_chain(pb.PlanarBase(Y.mass, Y.lever, Y.inertia, mount),
                                         Chain.from_model(arm_model)))
    r, s = 0.08, 0.45
    wheels = dd.Wheels(r, s, spin_inertia=full.inertias[lw].inertia[1, 1])
    assert wheels.spin_inertia > 1e-3
    iv = {j: full.joints[full.getJointId(j)].idx_v for j in full.names[1:]}
    iq = {j: full.joints[full.getJointId(j)].idx_q for j in full.names[1:]}
    arm_v = [iv[j] for j in arm_model.joint_names]
    arm_q = [iq[j] for j in arm_model.joint_names]
    pd = full.createData()
    rng = np.random.default_rng(51)
    for q, v, _ in states(F.n, 51, 2):
        v[1] = 0.0
        tw, ta = rng.normal(size=2) * 3.0, rng.normal(size=arm_model.dof) * 3.0
        qf = pin.neutral(full)
        qf[:4] = pin_q(q)[:4]
        for j, a in (("left_wheel_joint", 0.7), ("right_wheel_joint", -1.1)):
            qf[iq[j]:iq[j] + 2] = np.cos(a), np.sin(a)
        qf[arm_q] = q[3:]
        vf = np.zeros(full.nv)
        vf[:3] = v[:3]
        vf[iv["left_wheel_joint"]] = (v[0] - 0.5 * s * v[2]) / r
        vf[iv["right_wheel_joint"]] = (v[0] + 0.5 * s * v[2]) / r
        vf[arm_v] = v[3:]
        tau = np.zeros(full.nv)
        tau[iv["left_wheel_joint"]], tau[iv["right_wheel_joint"]] = tw
        tau[arm_v] = ta
        A = np.zeros((3, full.nv))
        A[0, 1] = 1.0  # v_y = 0
        for k, (j, side) in enumerate((("left_wheel_joint", -1.0), ("right_wheel_joint", 1.0))):
            A[1 + k, iv[j]], A[1 + k, 0], A[1 + k, 2] = r, -1.0, -side * 0.5 * s  # r th-dot = v_x +/- w s/2
        assert np.abs(A @ vf).max() < 1e-14
        M = pin.crba(full, pd, qf)
        M = np.triu(M) + np.triu(M, 1).T
        h = pin.rnea(full, pd, qf, vf, np.zeros(full.nv))
        K = np.block([[M, -A.T], [A, np.zeros((3, 3))]])
        x = np.linalg.solve(K, np.concatenate([tau - h, np.zeros(3)]))
        ref = np.concatenate([x[:3], x[arm_v]])
        for method in dd.METHODS:
            vd, lam = dd.forward_dynamics(F, wheels, q, v, tw, ta, method)
            assert rel_err(vd, ref) < TOL, method
            assert abs(lam - x[full.nv]) < TOL * max(1.0, abs(x[full.nv])), method
        tw2, ta2, lam2 = dd.inverse_dynamics(F, wheels, q, v, ref)
        assert rel_err(tw2, tw) < TOL and rel_err(ta2, ta) < TOL
        assert abs(lam2 - x[full.nv]) < TOL * max(1.0, abs(x[full.nv]))
        vd0, _ = dd.forward_dynamics(F, dd.Wheels(r, s), q, v, tw, ta)
        assert rel_err(vd0, ref) > 1e-4  # the spin inertia matters
