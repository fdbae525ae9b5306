"""SE(3): rigid motions, twists ``V = [v; w]`` (linear first, 004 and Pinocchio), wrenches
``[f; n]`` collocated with them.

* ``V^ = [[w^, v], [0, 0]]`` (004 Table 1), ``ad_V = [[w^, v^], [0, w^]]`` (004 (8)),
  ``ad~_p = [[0, -f^], [-f^, -h^]]`` for ``p = [f; h]`` (004 (73), misprint 004 (74)), so
  ``ad~_p V = -ad_V^T p``.
* ``exp(V) = [[exp(w^), J(w) v], [0, 1]]`` with ``J = so3.dexp`` (not in 004); ``log`` its
  inverse (``v = J(w)^{-1} p``).
* ``dexp(V) = sum_k ad_V^k / (k+1)! = [[J, Q], [0, J]]`` with Barfoot's closed-form ``Q(v, w)``;
  ``dexp_inv = [[J^-1, -J^-1 Q J^-1], [0, J^-1]]``.  004's ``S(phi) = dexp(-phi)`` (29)/(55).

Jitted kernels for hot loops (no allocation): :func:`_exp` (4x4 into a buffer),
:func:`_ad_apply` and :func:`dexp_inv_series_into` (``S(phi)^{-1} x`` by its Bernoulli series
through ``ad^8``, 004 (29) inverted: relative error below
``2e-8 |phi|^10``, so exact to rounding for integrator steps with ``|phi| < 0.1``).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from rbd_ros.lie import so3

name = "SE3"
dim = 6
H = np.eye(6)  # 004 (58) with every direction selected


def to_se3(T: np.ndarray) -> np.ndarray:
    return np.array(T, dtype=float)


from_se3 = to_se3


def hat(V: Sequence[float] | np.ndarray) -> np.ndarray:
    """``V^`` (4x4) of a twist ``[v; w]``."""
    V = np.asarray(V, dtype=float)
    out = np.zeros((4, 4))
    out[:3, :3] = so3.hat(V[3:])
    out[:3, 3] = V[:3]
    return out


def vee(X: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hat`."""
    X = np.asarray(X, dtype=float)
    return np.concatenate([X[:3, 3], so3.vee(X[:3, :3])])


def ad(V: Sequence[float] | np.ndarray) -> np.ndarray:
    """``ad_V = [[w^, v^], [0, w^]]`` (004 (8)), ``ad_V X = [V, X]``."""
    V = np.asarray(V, dtype=float)
    W = so3.hat(V[3:])
    return np.block([[W, so3.hat(V[:3])], [np.zeros((3, 3)), W]])


def ad_tilde(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """``ad~_p = [[0, -f^], [-f^, -h^]]`` for ``p = [f; h]`` (004 (73), misprint 004 (74))."""
    p = np.asarray(p, dtype=float)
    F = so3.hat(p[:3])
    return -np.block([[np.zeros((3, 3)), F], [F, so3.hat(p[3:])]])


@njit(cache=True)
def _exp(V: np.ndarray, T: np.ndarray) -> None:
    """``T = exp(V^)`` (4x4), ``V = [v; w]``."""
    w0 = V[3]
    w1 = V[4]
    w2 = V[5]
    so3.exp_into(w0, w1, w2, T)
    _, b, c, _, _ = so3.series_coefficients(np.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    v0 = V[0]
    v1 = V[1]
    v2 = V[2]
    # J v = v + b w x v + c w x (w x v)
    x0 = w1 * v2 - w2 * v1
    x1 = w2 * v0 - w0 * v2
    x2 = w0 * v1 - w1 * v0
    T[0, 3] = v0 + b * x0 + c * (w1 * x2 - w2 * x1)
    T[1, 3] = v1 + b * x1 + c * (w2 * x0 - w0 * x2)
    T[2, 3] = v2 + b * x2 + c * (w0 * x1 - w1 * x0)
    T[3, 0] = 0.0
    T[3, 1] = 0.0
    T[3, 2] = 0.0
    T[3, 3] = 1.0


@njit(cache=True)
def compose_exp_into(T0: np.ndarray, phi: np.ndarray, E: np.ndarray, out: np.ndarray) -> None:
    """``out = T0 exp(phi^)`` (``E`` a 4x4 scratch)."""
    _exp(phi, E)
    for r in range(4):
        for k in range(4):
            acc = 0.0
            for j in range(4):
                acc += T0[r, j] * E[j, k]
            out[r, k] = acc


def exp(V: Sequence[float] | np.ndarray) -> np.ndarray:
    """``exp(V^)`` (4x4) in closed form."""
    T = np.empty((4, 4))
    _exp(np.ascontiguousarray(V, dtype=float), T)
    return T


def log(T: np.ndarray) -> np.ndarray:
    """Twist ``[v; w]`` with ``exp(V^) = T`` (rotation angle in [0, pi])."""
    T = np.asarray(T, dtype=float)
    w = so3.log(T[:3, :3])
    return np.concatenate([so3.dexp_inv(w) @ T[:3, 3], w])


def _q_block(V: np.ndarray) -> np.ndarray:
    """Barfoot's ``Q(v, w)``: the upper-right block of ``dexp(V)``."""
    P, W = so3.hat(V[:3]), so3.hat(V[3:])
    t = float(np.linalg.norm(V[3:]))
    if t < 0.1:  # Taylor series (the closed forms cancel like eps / t^4); next terms < 3e-16
        t2 = t * t
        c1 = 1 / 6 - t2 / 120 + t2 * t2 / 5040 - t2**3 / 362880
        c2 = 1 / 24 - t2 / 720 + t2 * t2 / 40320 - t2**3 / 3628800
        c3 = 1 / 120 - t2 / 2520 + t2 * t2 / 120960 - t2**3 / 9979200
    else:
        s, c = np.sin(t), np.cos(t)
        c1 = (t - s) / t**3
        c2 = (t * t + 2 * c - 2) / (2 * t**4)
        c3 = (2 * t - 3 * s + t * c) / (2 * t**5)
    WP, PW, WW = W @ P, P @ W, W @ W
    return (0.5 * P + c1 * (WP + PW + WP @ W) + c2 * (WW @ P + PW @ W - 3 * WP @ W)
            + c3 * (WP @ WW + WW @ PW))


def dexp(V: Sequence[float] | np.ndarray) -> np.ndarray:
    """``sum_k ad_V^k / (k+1)!`` (6x6) in closed form (module docstring)."""
    V = np.asarray(V, dtype=float)
    J = so3.dexp(V[3:])
    return np.block([[J, _q_block(V)], [np.zeros((3, 3)), J]])


def dexp_inv(V: Sequence[float] | np.ndarray) -> np.ndarray:
    """Inverse of :func:`dexp` in closed form (``|w| < 2 pi``)."""
    V = np.asarray(V, dtype=float)
    Ji = so3.dexp_inv(V[3:])
    return np.block([[Ji, -Ji @ _q_block(V) @ Ji], [np.zeros((3, 3)), Ji]])


@njit(cache=True, inline="always")
def _ad_apply(phi: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """``out = ad_phi x = [w x x_v + v x x_w; w x x_w]`` (``out`` must not alias ``x``)."""
    v0, v1, v2, w0, w1, w2 = phi[0], phi[1], phi[2], phi[3], phi[4], phi[5]
    a0, a1, a2, b0, b1, b2 = x[0], x[1], x[2], x[3], x[4], x[5]
    out[0] = w1 * a2 - w2 * a1 + v1 * b2 - v2 * b1
    out[1] = w2 * a0 - w0 * a2 + v2 * b0 - v0 * b2
    out[2] = w0 * a1 - w1 * a0 + v0 * b1 - v1 * b0
    out[3] = w1 * b2 - w2 * b1
    out[4] = w2 * b0 - w0 * b2
    out[5] = w0 * b1 - w1 * b0


#: Bernoulli coefficients of S(phi)^{-1} = sum_k B_k (-ad_phi)^k / k! (k = 0..8), as the series
#: S(phi)^{-1} = sum_k c_k ad_phi^k (dexp_inv_series_into; robot.discrete differentiates it)
BERNOULLI_SERIES = (1.0, 0.5, 1.0 / 12.0, 0.0, -1.0 / 720.0, 0.0, 1.0 / 30240.0, 0.0, -1.0 / 1209600.0)


@njit(cache=True)
def dexp_inv_series_into(phi: np.ndarray, x: np.ndarray, out: np.ndarray, t1: np.ndarray,
                     t2: np.ndarray) -> None:
    """``out = S(phi)^{-1} x = x + 1/2 ad x + 1/12 ad^2 x - 1/720 ad^4 x + ...`` through
    ``ad^8`` (004 (29) inverted); ``t1, t2`` are 6-vector scratch."""
    for i in range(6):
        out[i] = x[i]
        t1[i] = x[i]
    for k in range(1, 9):
        _ad_apply(phi, t1, t2)
        c = BERNOULLI_SERIES[k]
        for i in range(6):
            t1[i] = t2[i]
            out[i] += c * t2[i]
