"""The Schoenflies group X(z) = SE(2) x R (004 §4.4): ``V = [u, v, w, r]``, pose 4x4
``[[Rz(theta), p], [0, 1]]``.

``ad_V = [[0, -r, 0, v], [r, 0, 0, -u], [0, 0, 0, 0], [0, 0, 0, 0]]`` (89),
``ad~_p = [[0, 0, 0, -p2], [0, 0, 0, p1], [0, 0, 0, 0], [p2, -p1, 0, 0]]`` (004 Table 1;
misprint 004 (74): C = ad~, not ad, of Mv).  Embeds in SE(3) through 004's ``H`` (88); exp and log are
SE(2)'s with ``z = w`` added.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rbd_ros.lie import se2, so3

name = "Xz"
dim = 4
H = np.zeros((6, 4))  # 004 (88): [u, v, w, r] -> [u, v, w, 0, 0, r]
H[0, 0] = H[1, 1] = H[2, 2] = H[5, 3] = 1.0


def hat(V: Sequence[float] | np.ndarray) -> np.ndarray:
    u, v, w, r = (float(x) for x in V)
    return np.array([[0.0, -r, 0.0, u], [r, 0.0, 0.0, v], [0.0, 0.0, 0.0, w], [0.0] * 4])


def vee(X: np.ndarray) -> np.ndarray:
    return np.array([X[0, 3], X[1, 3], X[2, 3], 0.5 * (X[1, 0] - X[0, 1])])


def ad(V: Sequence[float] | np.ndarray) -> np.ndarray:
    """004 (89)."""
    u, v, _, r = (float(x) for x in V)
    return np.array([[0.0, -r, 0.0, v], [r, 0.0, 0.0, -u], [0.0] * 4, [0.0] * 4])


def ad_tilde(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """004 Table 1 (corrected): ``ad~_p V = -ad_V^T p``."""
    p1, p2, _, _ = (float(x) for x in p)
    return np.array([[0.0, 0.0, 0.0, -p2], [0.0, 0.0, 0.0, p1], [0.0] * 4, [p2, -p1, 0.0, 0.0]])


def exp(V: Sequence[float] | np.ndarray) -> np.ndarray:
    u, v, w, r = (float(x) for x in V)
    T = se2.rz(r, 4)
    T[:2, 3] = se2.planar_exp(u, v, r)
    T[2, 3] = w
    return T


def log(T: np.ndarray) -> np.ndarray:
    T = np.asarray(T, dtype=float)
    theta = float(np.arctan2(T[1, 0], T[0, 0]))
    return np.array([*se2.planar_log(theta, T[:2, 3]), T[2, 3], theta])


def dexp(V: Sequence[float] | np.ndarray) -> np.ndarray:
    return so3.three_term(ad(V), float(V[3]), False)


def dexp_inv(V: Sequence[float] | np.ndarray) -> np.ndarray:
    return so3.three_term(ad(V), float(V[3]), True)


def to_se3(T: np.ndarray) -> np.ndarray:
    return np.array(T, dtype=float)


def from_se3(T: np.ndarray) -> np.ndarray:
    return np.array(T, dtype=float)
