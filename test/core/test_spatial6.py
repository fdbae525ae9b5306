"""The inline spatial helpers (rbd_ros.algorithm.spatial6) against dense NumPy matrices.

Oracle: each helper's formula written as an explicit matrix product (the 6x6 motion
cross-product matrix, its force dual -crm^T, the 6x6 spatial inertia, the MDH rotation of
mdh.mdh_transform, a dense symmetric 6x6), evaluated by NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from rbd_ros.algorithm import spatial6 as s6
from rbd_ros.algorithm.mdh import mdh_transform


def hat(x: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def crm(V: np.ndarray) -> np.ndarray:
    """Motion cross-product matrix of V = [w; v] (004 (8) in angular-first order)."""
    out = np.zeros((6, 6))
    out[:3, :3] = hat(V[:3])
    out[3:, 3:] = hat(V[:3])
    out[3:, :3] = hat(V[3:])
    return out


@njit
def _spatial(V, m, F, mass, h, Iu):
    Vt = (V[0], V[1], V[2], V[3], V[4], V[5])
    mt = (m[0], m[1], m[2], m[3], m[4], m[5])
    Ft = (F[0], F[1], F[2], F[3], F[4], F[5])
    I = (Iu[0], Iu[1], Iu[2], Iu[3], Iu[4], Iu[5])
    return (s6.motion_cross(Vt, mt), s6.force_cross(Vt, Ft),
            s6.inertia_motion(mass, (h[0], h[1], h[2]), I, Vt))


@njit
def _packed(X, s, y, p):
    a = np.zeros((2, 21))
    for k in range(21):
        a[0, k] = X[k]
    Xt = s6.load_sym6(a, 0, 0)
    st = (s[0], s[1], s[2], s[3], s[4], s[5])
    yt = (y[0], y[1], y[2], y[3], y[4], y[5])
    U = s6.sym6_vec(Xt, st)
    Y = s6.sym6_vec_acc(yt, Xt, st)
    s6.add_sym6_downdate(a, 1, 0, Xt, U, s6.scale6(U, p))
    return U, Y, a[1].copy()


@njit
def _mdh(cs, x, p, f, n):
    c = (cs[0], cs[1], cs[2], cs[3])
    xt = (x[0], x[1], x[2])
    return (s6.mdh_rot(c, xt), s6.mdh_rot_t(c, xt),
            s6.mdh_force_to_parent(c, (p[0], p[1], p[2]), (f[0], f[1], f[2]), (n[0], n[1], n[2])))


@njit
def _inertia(R, Iu, h, c):
    a = np.zeros((1, 9))
    for k in range(9):
        a[0, k] = R[k]
    I = (Iu[0], Iu[1], Iu[2], Iu[3], Iu[4], Iu[5])
    return s6.rotate_sym3(a, 0, 0, I), s6.parallel_axis(I, (h[0], h[1], h[2]), (c[0], c[1], c[2]))


def sym(u: tuple | np.ndarray) -> np.ndarray:
    return np.array([[u[0], u[1], u[2]], [u[1], u[3], u[4]], [u[2], u[4], u[5]]])


@pytest.mark.parametrize("seed", range(5))
def test_cross_products_and_inertia_match_dense_matrices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    V, m, F = rng.normal(size=(3, 6))
    mass = rng.uniform(0.5, 3.0)
    c = rng.normal(size=3)
    Iu = rng.normal(size=6)
    mc, fc, Im = _spatial(V, m, F, mass, mass * c, Iu)
    np.testing.assert_allclose(mc, crm(V) @ m, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(fc, -crm(V).T @ F, rtol=1e-14, atol=1e-14)
    I6 = np.block([[sym(Iu), mass * hat(c)], [-mass * hat(c), mass * np.eye(3)]])
    np.testing.assert_allclose(Im, I6 @ V, rtol=1e-13, atol=1e-13)
    # power is invariant: (V x* F) . m = -F . (V x m)
    assert abs(np.dot(fc, m) + np.dot(F, mc)) < 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_packed_symmetric_6x6(seed: int) -> None:
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(6, 6))
    A = A + A.T
    X = np.array([A[r, c] for r in range(6) for c in range(r, 6)])
    assert [s6.PACKED[r] for r in range(6)] == [0, 6, 11, 15, 18, 20]
    s, y = rng.normal(size=(2, 6))
    p = rng.uniform(0.1, 2.0)
    U, Y, down = _packed(X, s, y, p)
    np.testing.assert_allclose(U, A @ s, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(Y, y + A @ s, rtol=1e-13, atol=1e-13)
    B = A - p * np.outer(A @ s, A @ s)
    np.testing.assert_allclose(down, [B[r, c] for r in range(6) for c in range(r, 6)], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_mdh_rotations_are_those_of_mdh_transform(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, alpha, d, theta = rng.uniform(-3, 3, 4)
    R = mdh_transform(a, alpha, d, theta)[:3, :3]
    cs = np.array([np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)])
    x, p, f, n = rng.normal(size=(4, 3))
    Rx, RTx, (Rf, Rn) = _mdh(cs, x, p, f, n)
    np.testing.assert_allclose(Rx, R @ x, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(RTx, R.T @ x, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(Rf, R @ f, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(Rn, R @ n + np.cross(p, R @ f), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_rotated_inertia_and_parallel_axis(seed: int) -> None:
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    Iu = rng.normal(size=6)
    mass = rng.uniform(0.5, 3.0)
    c = rng.normal(size=3)
    rot, pa = _inertia(Q.ravel(), Iu, mass * c, c)
    np.testing.assert_allclose(sym(rot), Q @ sym(Iu) @ Q.T, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(sym(pa), sym(Iu) + mass * (c @ c * np.eye(3) - np.outer(c, c)), rtol=1e-13,
                               atol=1e-13)
