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
from rbd_ros.algorithm.spatial6 import add3, cross3, load3, load6, load_sym3, motion_cross, sym3_vec


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
        S = load6(ws, j, WS)
        Sd = motion_cross(load6(ws, j, WV), S)  # S-dot_j = v_j x S_j
        ws[v + 1, j], ws[v + 2, j], ws[v + 3, j] = S[0], S[1], S[2]  # Jw_j
        ws[v + 4, j], ws[v + 5, j], ws[v + 6, j] = Sd[0], Sd[1], Sd[2]  # Jw-dot_j
        ws[v + 7, j], ws[v + 8, j], ws[v + 9, j] = Sd[3], Sd[4], Sd[5]
    for i in range(n):
        for j in range(n):
            C[i, j] = 0.0
    for k in range(n):
        link_com_inertia(mp, ws, k)
        m = mp[k, MASS]
        c = load3(ws, k, WCC)
        w = load3(ws, k, WV)
        d = com_velocity(ws, k)
        I = load_sym3(ws, k, WICC)
        # rows v+10..v+12: Jv_kj ; v+13..v+15: Jv-dot_kj ; v+16..v+18: A_j
        for j in range(k + 1):
            s = (ws[v + 1, j], ws[v + 2, j], ws[v + 3, j])  # Jw_j
            e = (ws[v + 4, j], ws[v + 5, j], ws[v + 6, j])  # Jw-dot_j
            # Jv_kj = s_v + s_w x c_k
            ws[v + 10, j], ws[v + 11, j], ws[v + 12, j] = add3(load3(ws, j, WS + 3), cross3(s, c))
            # Jv-dot_kj = S-dot_j,v + S-dot_j,w x c_k + s_w x c-dot_k
            ws[v + 13, j], ws[v + 14, j], ws[v + 15, j] = add3(add3((ws[v + 7, j], ws[v + 8, j], ws[v + 9, j]),
                                                                    cross3(e, c)), cross3(s, d))
            # A_j = I Jw-dot_j + w x (I Jw_j)
            ws[v + 16, j], ws[v + 17, j], ws[v + 18, j] = add3(sym3_vec(I, e), cross3(w, sym3_vec(I, s)))
        for i in range(k + 1):
            for j in range(k + 1):
                C[i, j] += (m * (ws[v + 10, i] * ws[v + 13, j] + ws[v + 11, i] * ws[v + 14, j]
                                 + ws[v + 12, i] * ws[v + 15, j])
                            + ws[v + 1, i] * ws[v + 16, j] + ws[v + 2, i] * ws[v + 17, j]
                            + ws[v + 3, i] * ws[v + 18, j])
