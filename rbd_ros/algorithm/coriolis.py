"""Coriolis/centrifugal matrix C(q, qd) with ``M-dot - 2 C`` skew-symmetric (jitted).

From the link-wise form of the mass matrix, 003 (3.37)-(3.40),
``M = sum_k m_k Jv_k^T Jv_k + Jw_k^T I_k Jw_k`` (``Jv_k`` of the centre of mass, ``I_k`` world
axes), the factorisation

    C = sum_k  m_k Jv_k^T Jv-dot_k + Jw_k^T I_k Jw-dot_k + Jw_k^T [w_k x] I_k Jw_k

gives ``C qd = h - g`` (the Newton-Euler velocity terms, (3.47)) and
``C + C^T = M-dot`` (``I-dot_k = [w_k x] I_k - I_k [w_k x]``), i.e. ``M-dot - 2C`` is
skew-symmetric.  Columns (002 (3.15)-(3.16) in spatial form, world
frame at the world origin): with ``S_j = [s_w; s_v]`` and ``S-dot_j = v_j x S_j``,
``Jw_j = s_w``, ``Jv_kj = s_v + s_w x c_k``, ``Jw-dot_j = S-dot_j,w``,
``Jv-dot_kj = S-dot_j,v + S-dot_j,w x c_k + s_w x c-dot_k``.  O(n^3); not a hot-path kernel.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.crba import link_com_inertia
from rbd_ros.algorithm.kinematics import com_velocity, forward_kinematics, world_velocities
from rbd_ros.algorithm.layout import MASS, WCC, WICC, WS, WV, vrow


@njit(cache=True)
def coriolis_matrix(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray,
                    C: np.ndarray) -> None:
    """C(q, qd) (n x n) into ``C`` (module docstring).  Uses scratch rows 1..18."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    world_velocities(mp, ws, qd)
    v = vrow(n)
    # rows v+1..v+3: Jw_j ; v+4..v+6: Jw-dot_j ; v+7..v+9: S-dot_j,v
    for j in range(n):
        w0 = ws[j, WV]
        w1 = ws[j, WV + 1]
        w2 = ws[j, WV + 2]
        u0 = ws[j, WV + 3]
        u1 = ws[j, WV + 4]
        u2 = ws[j, WV + 5]
        s0 = ws[j, WS]
        s1 = ws[j, WS + 1]
        s2 = ws[j, WS + 2]
        t0 = ws[j, WS + 3]
        t1 = ws[j, WS + 4]
        t2 = ws[j, WS + 5]
        ws[v + 1, j] = s0
        ws[v + 2, j] = s1
        ws[v + 3, j] = s2
        ws[v + 4, j] = w1 * s2 - w2 * s1
        ws[v + 5, j] = w2 * s0 - w0 * s2
        ws[v + 6, j] = w0 * s1 - w1 * s0
        ws[v + 7, j] = (w1 * t2 - w2 * t1) + (u1 * s2 - u2 * s1)
        ws[v + 8, j] = (w2 * t0 - w0 * t2) + (u2 * s0 - u0 * s2)
        ws[v + 9, j] = (w0 * t1 - w1 * t0) + (u0 * s1 - u1 * s0)
    for i in range(n):
        for j in range(n):
            C[i, j] = 0.0
    for k in range(n):
        link_com_inertia(mp, ws, k)
        m = mp[k, MASS]
        c0 = ws[k, WCC]
        c1 = ws[k, WCC + 1]
        c2 = ws[k, WCC + 2]
        w0 = ws[k, WV]
        w1 = ws[k, WV + 1]
        w2 = ws[k, WV + 2]
        d0, d1, d2 = com_velocity(ws, k)
        # rows v+10..v+12: Jv_kj ; v+13..v+15: Jv-dot_kj ; v+16..v+18: A_j
        for j in range(k + 1):
            s0 = ws[v + 1, j]
            s1 = ws[v + 2, j]
            s2 = ws[v + 3, j]
            e0 = ws[v + 4, j]
            e1 = ws[v + 5, j]
            e2 = ws[v + 6, j]
            ws[v + 10, j] = ws[j, WS + 3] + (s1 * c2 - s2 * c1)
            ws[v + 11, j] = ws[j, WS + 4] + (s2 * c0 - s0 * c2)
            ws[v + 12, j] = ws[j, WS + 5] + (s0 * c1 - s1 * c0)
            ws[v + 13, j] = ws[v + 7, j] + (e1 * c2 - e2 * c1) + (s1 * d2 - s2 * d1)
            ws[v + 14, j] = ws[v + 8, j] + (e2 * c0 - e0 * c2) + (s2 * d0 - s0 * d2)
            ws[v + 15, j] = ws[v + 9, j] + (e0 * c1 - e1 * c0) + (s0 * d1 - s1 * d0)
            # A_j = I Jw-dot_j + w x (I Jw_j)
            l0 = ws[k, WICC] * s0 + ws[k, WICC + 1] * s1 + ws[k, WICC + 2] * s2
            l1 = ws[k, WICC + 3] * s0 + ws[k, WICC + 4] * s1 + ws[k, WICC + 5] * s2
            l2 = ws[k, WICC + 6] * s0 + ws[k, WICC + 7] * s1 + ws[k, WICC + 8] * s2
            ws[v + 16, j] = (ws[k, WICC] * e0 + ws[k, WICC + 1] * e1 + ws[k, WICC + 2] * e2
                             + (w1 * l2 - w2 * l1))
            ws[v + 17, j] = (ws[k, WICC + 3] * e0 + ws[k, WICC + 4] * e1 + ws[k, WICC + 5] * e2
                             + (w2 * l0 - w0 * l2))
            ws[v + 18, j] = (ws[k, WICC + 6] * e0 + ws[k, WICC + 7] * e1 + ws[k, WICC + 8] * e2
                             + (w0 * l1 - w1 * l0))
        for i in range(k + 1):
            for j in range(k + 1):
                C[i, j] += (m * (ws[v + 10, i] * ws[v + 13, j] + ws[v + 11, i] * ws[v + 14, j]
                                 + ws[v + 12, i] * ws[v + 15, j])
                            + ws[v + 1, i] * ws[v + 16, j] + ws[v + 2, i] * ws[v + 17, j]
                            + ws[v + 3, i] * ws[v + 18, j])
