"""Pinned numbers of the formulations sheet §7 (#9, #10, #11, #18-#22), the identities of the
papers (M-dot - 2C skew for Kane and Gauss, corrected Remark 4.1, Kane's C qd = h and J-dot,
Lagrange's h from M by (3.47)), the dual-quaternion algebra against its other forms, the
operation counts, and a helical joint in dqNE against the energy balance dE/dt = qd^T tau."""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import random_model
from rbd_ros.formulations import Formulations, counts, dq, gauss, kane, lagrange
from rbd_ros.formulations import dual_quaternion as dqne_mod
from rbd_ros.formulations.chain import Chain, pack, world_kinematics
from rbd_ros.robot import Robot

ID = ("lagrange", "lagrange_recursive", "silver", "kane", "dual_quaternion", "gauss")


def planar2r() -> Robot:
    """Planar 2R of §7 #9/#10: l1 = l2 = 1, point masses 1 kg at the link ends, gravity -y."""
    return Robot.from_mdh(a=[0, 1], alpha=[0, 0], d=[0, 0], theta=[0, 0], mass=[1, 1],
                          com=[[1, 0, 0], [1, 0, 0]], inertia=np.zeros((2, 3, 3)),
                          gravity=[0, -9.81, 0])


def terms(F: Formulations, method: str, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(M, h, g)`` (h without gravity) from the formulations that give them apart."""
    n = F.n
    M, C = np.empty((n, n)), np.empty((n, n))
    a, b, c = np.empty(n), np.empty(n), np.empty(n)
    z6 = np.zeros(6)
    if method == "lagrange":
        lagrange.lagrange_direct(F.pk, q, qd, True, z6, False, M, a, b, c)
        return M, a, b
    if method == "kane":
        kane.kane(F.pk, q, qd, z6, False, M, C, a, b, c)
        return M, a, -b
    gauss.gauss(F.dp, q, qd, z6, False, M, C, b, c)
    return M, C @ qd, b


def test_pinned_9_planar_2r() -> None:
    robot = planar2r()
    F = Formulations(robot.model)
    q, qd = np.array([0.0, np.pi / 2]), np.array([1.0, 1.0])
    for m in ("lagrange", "kane", "gauss"):
        M, h, g = terms(F, m, q, qd)
        np.testing.assert_allclose(M, [[3, 1], [1, 1]], atol=1e-12, err_msg=m)
        np.testing.assert_allclose(h, [-3, 1], atol=1e-12, err_msg=m)
        np.testing.assert_allclose(g, [19.62, 0], atol=1e-12, err_msg=m)
    for m in ID:
        np.testing.assert_allclose(robot.inverse_dynamics(q, qd, np.zeros(2), method=m), [16.62, 1.0],
                                   atol=1e-12, err_msg=m)


def test_pinned_10_planar_2r() -> None:
    robot = planar2r()
    q, qd, qdd = np.array([0.3, -0.7]), np.array([0.5, -1.2]), np.array([0.8, 0.4])
    for m in ID:
        np.testing.assert_allclose(robot.inverse_dynamics(q, qd, qdd, method=m),
                                   [32.26360689, 10.68642768], atol=1e-8, err_msg=m)
    for m in ("lagrange", "kane", "gauss"):
        np.testing.assert_allclose(robot.mass_matrix(q, method=m),
                                   [[4.52968437, 1.76484219], [1.76484219, 1.0]], atol=1e-8, err_msg=m)


@pytest.mark.parametrize("n, traces", [(4, 130), (6, 532)])
def test_pinned_11_trace_count(n: int, traces: int) -> None:
    """The literal 003 (3.28) evaluates N_tr(n) traces (counted by the kernel as it runs)."""
    F = Formulations(random_model(n, 3))
    z = np.zeros(n)
    M, h, g, wf = np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)
    assert lagrange.lagrange_direct(F.pk, z + 0.1, z + 0.2, True, np.zeros(6), False, M, h, g, wf) == traces
    assert lagrange.trace_count(n) == traces


def test_pinned_18_adjoint_of_a_translation() -> None:
    """Ad(x)(k) = k + eps (2i - j) for x the pure translation (1, 2, 3) (001 (3))."""
    x = dq.pose((1.0, 0.0, 0.0, 0.0), (1.0, 2.0, 3.0))
    np.testing.assert_allclose(dq.ad(x, (0, 0, 1, 0, 0, 0)), [0, 0, 1, 2, -1, 0], atol=1e-15)
    R, p = dq.frame(x)
    np.testing.assert_allclose(dq.ad_frame(R, p, (0.0, 0.0, 1.0, 0.0, 0.0, 0.0)), [0, 0, 1, 2, -1, 0],
                               atol=1e-15)


def _unit_q(rng: np.random.Generator) -> tuple[float, ...]:
    v = rng.normal(size=4)
    return tuple(v / np.linalg.norm(v))


def test_pinned_19_quaternion_appendix_b() -> None:
    """000 App. B is scalar-last with the product matrices (B-10); ours (001) scalar-first
    Hamilton: (B-10)'s [a (*)] b is our qmul(a, b), [a (x)] b is qmul(b, a); (B-13)
    eta (*) eta^* = (0, 0, 0, 1); (B-9) Q(a (*) b) = Q(a) Q(b)."""
    rng = np.random.default_rng(19)

    def last(h: tuple[float, ...]) -> np.ndarray:  # scalar-first -> scalar-last
        return np.array([h[1], h[2], h[3], h[0]])

    def skew(v: np.ndarray) -> np.ndarray:
        return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])

    def star(eta: np.ndarray, sign: float) -> np.ndarray:  # (B-10)
        ev, e0 = eta[:3], eta[3]
        out = np.zeros((4, 4))
        out[:3, :3] = e0 * np.eye(3) + sign * skew(ev)
        out[:3, 3] = ev
        out[3, :3] = -ev
        out[3, 3] = e0
        return out

    for _ in range(5):
        a, b = _unit_q(rng), _unit_q(rng)
        np.testing.assert_allclose(star(last(a), +1) @ last(b), last(dq.qmul(a, b)), atol=1e-15)
        np.testing.assert_allclose(star(last(a), -1) @ last(b), last(dq.qmul(b, a)), atol=1e-15)
        np.testing.assert_allclose(last(dq.qmul(a, dq.qconj(a))), [0, 0, 0, 1], atol=1e-15)
        Ra = np.reshape(dq.rotation_matrix(a), (3, 3))
        Rb = np.reshape(dq.rotation_matrix(b), (3, 3))
        np.testing.assert_allclose(np.reshape(dq.rotation_matrix(dq.qmul(a, b)), (3, 3)), Ra @ Rb, atol=1e-14)


def test_dual_quaternion_algebra() -> None:
    """Pose composition = 4x4 product; the adjoint's fast form = the literal sandwich (3);
    its inverse; <a, b> = -(ab + ba)/2 (30); the cross product (8) = (ab - ba)/2 (7)."""
    rng = np.random.default_rng(2)
    for _ in range(5):
        Ts = []
        xs = []
        for _ in range(2):
            r = _unit_q(rng)
            p = tuple(rng.normal(size=3))
            xs.append(dq.pose(r, p))
            T = np.eye(4)
            T[:3, :3] = np.reshape(dq.rotation_matrix(r), (3, 3))
            T[:3, 3] = p
            Ts.append(T)
        R, p = dq.frame(dq.dqmul(xs[0], xs[1]))
        T = Ts[0] @ Ts[1]
        np.testing.assert_allclose(np.reshape(R, (3, 3)), T[:3, :3], atol=1e-14)
        np.testing.assert_allclose(p, T[:3, 3], atol=1e-14)
        xi = tuple(rng.normal(size=6))
        R, p = dq.frame(xs[0])
        np.testing.assert_allclose(dq.ad_frame(R, p, xi), dq.ad(xs[0], xi), atol=1e-13)
        np.testing.assert_allclose(dq.ad_frame_inv(R, p, xi), dq.ad(dq.dqconj(xs[0]), xi), atol=1e-13)
        a, b = tuple(rng.normal(size=6)), tuple(rng.normal(size=6))
        a8 = (0.0, *a[:3], 0.0, *a[3:])
        b8 = (0.0, *b[:3], 0.0, *b[3:])
        ab, ba = np.array(dq.dqmul(a8, b8)), np.array(dq.dqmul(b8, a8))
        sym = -(ab + ba) / 2
        np.testing.assert_allclose(dq.inner(a, b), [sym[0], sym[4]], atol=1e-13)
        assert np.abs(sym[[1, 2, 3, 5, 6, 7]]).max() < 1e-13
        np.testing.assert_allclose(dq.cross(a, b), ((ab - ba) / 2)[[1, 2, 3, 5, 6, 7]], atol=1e-13)


def test_pinned_20_pseudo_inertia() -> None:
    """002 (2.11) / 003 (3.15): I = diag(1, 2, 3) about the CoM at the origin -> the
    second-moment block J = (1/2) tr(I) E - I = diag(2, 1, 0), and back I = tr(J) E - J."""
    pk = np.zeros((2, 34))
    pk[0, 22:31] = np.diag([1.0, 2.0, 3.0]).ravel()
    pk[0, 18] = 1.0
    H = np.empty((1, 4, 4))
    lagrange.pseudo_inertias(pk, H)
    J = H[0, :3, :3]
    np.testing.assert_allclose(J, np.diag([2.0, 1.0, 0.0]), atol=1e-15)
    np.testing.assert_allclose(np.trace(J) * np.eye(3) - J, np.diag([1.0, 2.0, 3.0]), atol=1e-15)
    assert H[0, 3, 3] == 1.0


def test_pinned_21_22_table3() -> None:
    """001 Table 3 as data: values at n = 6 and 50, and the 3x3-Lagrangian / NE ratio 2.46
    at n = 6 that identifies 001's [66] with 002 §1.4's "roughly 2 1/2"."""
    T = counts.TABLE3
    want = {6: [(5244, 4304), (852, 738), (17166, 14704), (2195, 1719)],
            50: [(44052, 36160), (7452, 6502), (1485050, 1496800), (20323, 15799)]}
    for n, rows in want.items():
        for (mul, add), (fm, fa) in zip(rows, T.values()):
            assert fm(n) == pytest.approx(mul) and fa(n) == pytest.approx(add)
    hol, ne = list(T.values())[3], list(T.values())[1]
    ratio = (hol[0](6) + hol[1](6)) / (ne[0](6) + ne[1](6))
    assert (hol[0](6) + hol[1](6), ne[0](6) + ne[1](6)) == (3914, 1590)
    assert round(ratio, 2) == 2.46


def test_operation_counts_by_construction() -> None:
    """RNEA and dqNE run from their own source on the counting type: same bytecode as the
    jitted kernels, the same numbers, counts exactly linear in n and below 001 Table 3."""
    from rbd_ros.algorithm import rnea as rnea_jit
    from rbd_ros.model.data import empty_workspace, pack_model

    rn = counts.pure("rbd_ros.algorithm.rnea")
    dqm = counts.pure("rbd_ros.formulations.dual_quaternion")
    assert rn.rnea.__code__.co_code == rnea_jit.rnea.py_func.__code__.co_code
    assert dqm.dqne.__code__.co_code == dqne_mod.dqne.py_func.__code__.co_code
    assert hasattr(rnea_jit.rnea, "py_func")  # the real kernels are untouched
    import rbd_ros.algorithm

    assert rbd_ros.algorithm.rnea is rnea_jit
    ns = np.arange(1, 9)
    tallies = {"rnea": [], "dqne": []}
    for n in ns:
        model = random_model(int(n), 40, actuators=False)
        robot = Robot(model)
        q = np.linspace(-1, 1, n)
        tau = np.empty(n, dtype=object)
        c = counts.count(rn.rnea, counts.counted(pack_model(model)), counts.counted(empty_workspace(n)),
                         counts.counted(q), counts.counted(0.5 * q), counts.counted(q ** 2), tau)
        np.testing.assert_allclose(counts.values(tau), robot.inverse_dynamics(q, 0.5 * q, q ** 2), atol=1e-12)
        tallies["rnea"].append(c)
        dp = dqm.pack(Chain.from_model(model))
        c = counts.count(dqm.dqne, counts.counted(dp), counts.counted(q), counts.counted(0.5 * q),
                         counts.counted(q ** 2), counts.counted(np.zeros(6)), False,
                         counts.counted(np.zeros((n, dqm.NWS))), tau)
        np.testing.assert_allclose(counts.values(tau), robot.inverse_dynamics(q, 0.5 * q, q ** 2), atol=1e-12)
        tallies["dqne"].append(c)
    for name, paper in (("rnea", list(counts.TABLE3.values())[1]), ("dqne", list(counts.TABLE3.values())[0])):
        for k, key in enumerate(("mul", "add")):
            y = np.array([t[key] for t in tallies[name]])
            a, b, res = counts.fit_linear(ns[1:], y[1:])
            assert res < 1e-9, (name, key)  # exactly a + b n
            assert np.all(y[1:] <= np.array([paper[k](n) for n in ns[1:]])), (name, key)
        assert [t["trig"] for t in tallies[name]] == list(2 * ns)


# ---- identities ------------------------------------------------------------------------------
def _fd(f, q: np.ndarray, v: np.ndarray, h: float = 1e-6) -> np.ndarray:
    return (f(q + h * v) - f(q - h * v)) / (2 * h)


@pytest.fixture(scope="module")
def arm() -> tuple[Robot, np.ndarray, np.ndarray]:
    robot = Robot(random_model(6, 41, prismatic=(2,)))
    q, qd = np.random.default_rng(41).uniform(-1.5, 1.5, (2, 6))
    return robot, q, qd


@pytest.mark.parametrize("method", ["kane", "gauss"])
def test_mdot_minus_2c_skew(arm, method: str) -> None:
    robot, q, qd = arm
    Md = _fd(lambda x: robot.mass_matrix(x, method=method), q, qd)
    S = Md - 2 * robot.coriolis_matrix(q, qd, method=method)
    assert np.abs(S + S.T).max() < 1e-7 * max(1.0, np.abs(Md).max())
    assert np.abs(S).max() > 1e-3  # not trivially zero


def test_remark_41_corrected(arm) -> None:
    """(1/2) M-dot_GP - C_GP = the corrected A (skew); the printed -sum J^T S_bar J is not it."""
    robot, q, qd = arm
    F = Formulations(robot.model)
    Md = _fd(lambda x: robot.mass_matrix(x, method="gauss"), q, qd)
    lhs = 0.5 * Md - robot.coriolis_matrix(q, qd, method="gauss")
    A = gauss.remark41_matrix(F.dp, q, qd)
    assert np.abs(A - lhs).max() < 1e-7 * max(1.0, np.abs(Md).max())
    assert np.abs(A + A.T).max() < 1e-12
    n = robot.dof
    J, _, _ = gauss.jacobians(F.dp, q, qd)
    P, Sb = np.empty((6, 6)), np.empty((6, 6))
    printed = np.zeros((n, n))
    for i in range(n):
        gauss.body_matrices(F.dp, i, J[i], qd, P, Sb)
        printed -= J[i].T @ Sb @ J[i]
    assert np.abs(printed - lhs).max() > 1e-2


@pytest.mark.parametrize("which", ["kane", "gauss"])
def test_jacobian_derivatives_by_finite_differences(arm, which: str) -> None:
    robot, q, qd = arm
    F = Formulations(robot.model)
    n = robot.dof

    def jac(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        J, Jd = np.empty((n, 6, n)), np.empty((n, 6, n))
        if which == "kane":
            kane.kane_jacobians(F.pk, x, qd, J, Jd, np.empty((n + 1, 4, 4)), np.empty((n, 3)))
        else:
            gauss.gauss_jacobians(F.dp, x, qd, J, Jd, np.empty((n + 1, 12)))
        return J, Jd

    J_fd = _fd(lambda x: jac(x)[0], q, qd)
    assert np.abs(J_fd - jac(q)[1]).max() < 1e-7


def test_kane_c_qd_equals_h_and_lagrange_h_from_m(arm) -> None:
    """000 (37): C qd = h.  003 (3.47): h_i = sum_jk (dM_ij/dq_k - (1/2) dM_jk/dq_i) qd_j qd_k,
    with M by finite differences of 003 (3.28)."""
    robot, q, qd = arm
    F = Formulations(robot.model)
    n = robot.dof
    M, C, h, fc, fe = np.empty((n, n)), np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)
    kane.kane(F.pk, q, qd, np.zeros(6), False, M, C, h, fc, fe)
    assert np.abs(C @ qd - h).max() < 1e-12 * max(1.0, np.abs(h).max())
    dM = np.stack([_fd(lambda x: robot.mass_matrix(x, method="lagrange"), q, e) for e in np.eye(n)])  # [k, i, j]
    h347 = np.einsum("kij,j,k->i", dM, qd, qd) - 0.5 * np.einsum("ijk,j,k->i", dM, qd, qd)
    _, h_l, _ = terms(F, "lagrange", q, qd)
    assert np.abs(h347 - h_l).max() < 1e-7 * max(1.0, np.abs(h_l).max())


# ---- a helical joint ---------------------------------------------------------------------------
def helical_chain() -> Chain:
    rng = np.random.default_rng(7)
    n = 4
    X = np.empty((n + 1, 4, 4))
    for i in range(n + 1):
        X[i] = np.eye(4)
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        X[i, :3, :3] = Q * np.sign(np.linalg.det(Q))
        X[i, :3, 3] = rng.uniform(-0.3, 0.3, 3)
    inertia = []
    for _ in range(n):
        s = rng.uniform(0.01, 0.1, 3)
        inertia.append(np.diag([s[1] + s[2], s[0] + s[2], s[0] + s[1]]))
    return Chain.from_joints(["revolute", "helical", "prismatic", "helical"],
                             rng.normal(size=(n, 3)), X, rng.uniform(0.5, 3, n),
                             rng.uniform(-0.1, 0.1, (n, 3)), np.array(inertia), np.array([0, 0, -9.81]),
                             pitch=[0, 0.08, 0, -0.3])


def test_helical_all_formulations_agree() -> None:
    F = Formulations(helical_chain())
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, F.n))
        w = rng.normal(size=6)
        ref = F.inverse_dynamics("dual_quaternion", q, qd, qdd, w)
        for m in ID:
            tau = F.inverse_dynamics(m, q, qd, qdd, w)
            assert np.abs(tau - ref).max() < 1e-10 * max(1.0, np.abs(ref).max()), m


def test_helical_dqne_energy_balance() -> None:
    """Simulate the chain with dqNE alone (M by unit accelerations, h at qdd = 0: 001 §6) under
    smooth torques; the energy from the chain's kinematics (``world_kinematics``, not dqNE)
    must change by the work done, dE/dt = qd^T tau, to the RK4 error."""
    chain = helical_chain()
    F = Formulations(chain)
    n, pk = F.n, pack(chain)
    g = chain.gravity

    def dq_id(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        return F.inverse_dynamics("dual_quaternion", q, qd, qdd)

    def energy(q: np.ndarray, qd: np.ndarray) -> float:
        T, Z, w, vo = np.empty((n + 1, 4, 4)), np.empty((n, 6)), np.empty((n + 1, 3)), np.empty((n + 1, 3))
        world_kinematics(pk, q, qd, T, Z, w, vo)
        E = 0.0
        for i in range(n):
            R, o = T[i, :3, :3], T[i, :3, 3]
            c = o + R @ chain.com[i]
            v = vo[i] + np.cross(w[i], c - o)
            wb = R.T @ w[i]
            E += 0.5 * chain.mass[i] * v @ v + 0.5 * wb @ chain.inertia[i] @ wb - chain.mass[i] * g @ c
        return E

    def torque(t: float) -> np.ndarray:
        return np.array([2.0 * np.sin(3 * t), -1.5 * np.cos(2 * t), 4.0 * np.sin(t), 0.5])

    def rhs(t: float, s: np.ndarray) -> np.ndarray:
        q, qd = s[:n], s[n:2 * n]
        h = dq_id(q, qd, np.zeros(n))
        M = np.stack([dq_id(q, np.zeros(n), e) - dq_id(q, np.zeros(n), np.zeros(n)) for e in np.eye(n)], axis=1)
        tau = torque(t)
        return np.concatenate([qd, np.linalg.solve(M, tau - h), [qd @ tau]])

    s = np.concatenate([np.array([0.2, -0.4, 0.1, 0.7]), np.array([0.5, -1.0, 0.3, 0.8]), [0.0]])
    E0, dt = energy(s[:n], s[n:2 * n]), 1e-3
    for k in range(400):
        t = k * dt
        k1 = rhs(t, s)
        k2 = rhs(t + dt / 2, s + dt / 2 * k1)
        k3 = rhs(t + dt / 2, s + dt / 2 * k2)
        k4 = rhs(t + dt, s + dt * k3)
        s = s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    dE, work = energy(s[:n], s[n:2 * n]) - E0, s[-1]
    assert abs(work) > 0.1 and abs(dE) > 0.1
    assert abs(dE - work) < 1e-9
