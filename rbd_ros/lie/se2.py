"""SE(2): planar rigid motions, ``V = [u, v, r]`` (004 §4.4), pose 3x3 ``[[R(theta), p], [0, 1]]``.

``V^ = [[0, -r, u], [r, 0, v], [0, 0, 0]]`` (004 Table 1), ``ad_V = [[0, -r, v], [r, 0, -u],
[0, 0, 0]]`` (78), ``ad~_p = [[0, 0, -p2], [0, 0, p1], [p2, -p1, 0]]`` (83).  Embeds in SE(3)
through 004's ``H`` (77).  ``ad^3 = -r^2 ad``, so exp, dexp and dexp_inv have the three-term
closed forms of :func:`so3.series_coefficients`; exp's translation is ``V_l (u, v)`` with
``V_l = (sin r / r) E + ((1 - cos r) / r) J`` (``J`` the 90-degree rotation).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rbd_ros.lie import so3

name = "SE2"
dim = 3
H = np.zeros((6, 3))  # 004 (77): V = [u, v, r] -> [u, v, 0, 0, 0, r]
H[0, 0] = H[1, 1] = H[5, 2] = 1.0


def hat(V: Sequence[float] | np.ndarray) -> np.ndarray:
    u, v, r = (float(x) for x in V)
    return np.array([[0.0, -r, u], [r, 0.0, v], [0.0, 0.0, 0.0]])


def vee(X: np.ndarray) -> np.ndarray:
    return np.array([X[0, 2], X[1, 2], 0.5 * (X[1, 0] - X[0, 1])])


def ad(V: Sequence[float] | np.ndarray) -> np.ndarray:
    """004 (78)."""
    u, v, r = (float(x) for x in V)
    return np.array([[0.0, -r, v], [r, 0.0, -u], [0.0, 0.0, 0.0]])


def ad_tilde(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """004 (83): ``ad~_p V = -ad_V^T p``."""
    p1, p2, _ = (float(x) for x in p)
    return np.array([[0.0, 0.0, -p2], [0.0, 0.0, p1], [p2, -p1, 0.0]])


def planar_exp(u: float, v: float, r: float) -> np.ndarray:
    """Translation ``V_l (u, v)`` of the planar exponential (module docstring)."""
    a, b, _, _, _ = so3.series_coefficients(abs(r))
    return np.array([a * u - b * r * v, b * r * u + a * v])


def planar_log(theta: float, p: np.ndarray) -> tuple[float, float]:
    """``(u, v)`` with ``V_l (u, v) = p`` (the 2x2 ``V_l`` inverted)."""
    a, b, _, _, _ = so3.series_coefficients(abs(theta))
    br = b * theta
    det = a * a + br * br
    return (a * p[0] + br * p[1]) / det, (-br * p[0] + a * p[1]) / det


def rz(theta: float, k: int) -> np.ndarray:
    """k x k identity with the rotation by ``theta`` in its top-left 2x2 block."""
    T = np.eye(k)
    c, s = np.cos(theta), np.sin(theta)
    T[:2, :2] = [[c, -s], [s, c]]
    return T


def exp(V: Sequence[float] | np.ndarray) -> np.ndarray:
    u, v, r = (float(x) for x in V)
    T = rz(r, 3)
    T[:2, 2] = planar_exp(u, v, r)
    return T


def log(T: np.ndarray) -> np.ndarray:
    T = np.asarray(T, dtype=float)
    theta = float(np.arctan2(T[1, 0], T[0, 0]))
    return np.array([*planar_log(theta, T[:2, 2]), theta])


def dexp(V: Sequence[float] | np.ndarray) -> np.ndarray:
    """``sum_k ad_V^k / (k+1)!`` (004's ``S(phi) = dexp(-phi)``, (72))."""
    return so3.three_term(ad(V), float(V[2]), False)


def dexp_inv(V: Sequence[float] | np.ndarray) -> np.ndarray:
    return so3.three_term(ad(V), float(V[2]), True)


def to_se3(T: np.ndarray) -> np.ndarray:
    out = np.eye(4)
    out[:2, :2] = T[:2, :2]
    out[:2, 3] = T[:2, 2]
    return out


def from_se3(T: np.ndarray) -> np.ndarray:
    out = np.eye(3)
    out[:2, :2] = T[:2, :2]
    out[:2, 2] = T[:2, 3]
    return out
