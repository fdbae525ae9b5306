"""Kinetic and potential energy (jitted).

003 (3.35): ``K = sum_k 1/2 m_k |c-dot_k|^2 + 1/2 w_k^T I_k w_k``
(world axes, ``I_k`` about the centre of mass), computed from the link velocities, not from
M, so ``K == 1/2 qd^T M qd`` is a real check.  Potential (3.39)/(3.41) with the sign made
explicit: ``P = -sum_k m_k g . c_k`` for the world gravity vector ``g`` (so ``P = m 9.81 h``
for ``g = (0, 0, -9.81)``; the printed (3.39) writes ``g^T s`` with ``g = [0 0 -g]``, which
has the opposite sign: misprint 003 (3.39), docs/references.md).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.crba import link_com_inertia
from rbd_ros.algorithm.kinematics import com_velocity, forward_kinematics, world_velocities
from rbd_ros.algorithm.layout import GRAV, MASS, WCC, WICC, WV


@njit(cache=True)
def kinetic_energy(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray) -> float:
    """Total kinetic energy K(q, qd), (3.35)."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    world_velocities(mp, ws, qd)
    K = 0.0
    for k in range(n):
        link_com_inertia(mp, ws, k)
        w0 = ws[k, WV]
        w1 = ws[k, WV + 1]
        w2 = ws[k, WV + 2]
        d0, d1, d2 = com_velocity(ws, k)
        Iw = 0.0
        for r in range(3):
            wr = w0 if r == 0 else (w1 if r == 1 else w2)
            Iw += wr * (ws[k, WICC + 3 * r] * w0 + ws[k, WICC + 3 * r + 1] * w1
                        + ws[k, WICC + 3 * r + 2] * w2)
        K += 0.5 * (mp[k, MASS] * (d0 * d0 + d1 * d1 + d2 * d2) + Iw)
    return K


@njit(cache=True)
def potential_energy(mp: np.ndarray, ws: np.ndarray, q: np.ndarray) -> float:
    """Gravitational potential energy ``P = -sum_k m_k g . c_k`` (module docstring)."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    g = n + 2
    P = 0.0
    for k in range(n):
        link_com_inertia(mp, ws, k)
        P -= mp[k, MASS] * (mp[g, GRAV] * ws[k, WCC] + mp[g, GRAV + 1] * ws[k, WCC + 1]
                            + mp[g, GRAV + 2] * ws[k, WCC + 2])
    return P
