"""Lagrange's equations with 4x4 pseudo-inertias (Uicker/Kahn): the direct O(n^4) form of
003 (3.28)-(3.30) and the recursive 4x4 form (Hollerbach, named in 002 §1.4).

Notation (003 ch.3, 002 §1): ``T_k = ^0T_k`` world pose of body k (002's ``W_k``), joint
derivative operator ``Q_j = S_j^`` (``chain.screw_matrix``), pseudo-inertia about the body
origin 003 (3.15)

    H_k = [[S, m s], [m s^T, m]],   S = int p p^T dm = (1/2) tr(I_c) E - I_c + m s s^T

(002 (2.11): ``J = (1/2) tr(I) E - I``).  Misprints corrected (docs/references.md):
003 (3.30) never defines ``Q_j`` (it is ``S_j^``, placed *after* ``^{j-1}T_j`` in modified DH);
003 (3.9) is garbled (use (3.15)); 002 §2.4's W-form force has ``W-ddot`` (misprint 002 §2.4);
the gravity term has the sign of (3.26), ``P = -sum m_k g^T s_k`` with g pointing down (the
``P_i = m_i g^T s_i`` of (3.39)/(3.41) has the wrong sign), and ``s_k`` is the CoM in frame k,
taken to the world by the full ``T_k`` (3.31 omits the origin).

Direct, 003 (3.28)-(3.30), every trace evaluated as written (``N_tr(n) = n(n+1)(2n+1)/6 +
(n(n+1)/2)^2``: 130 at n = 4, 532 at n = 6):

    dT_k/dq_j        = T_j Q_j ^jT_k                      (j <= k, else 0)       (3.30)
    d2T_k/dq_l dq_m  = T_a Q_a ^aT_b Q_b ^bT_k            (a = min, b = max)
    M_ij = sum_{k >= max(i,j)} tr(dT_k/dq_i H_k (dT_k/dq_j)^T)                    (3.28)
    h_i  = sum_{k >= i} sum_{l,m <= k} tr(dT_k/dq_i H_k (d2T_k/dq_l dq_m)^T) qd_l qd_m
    g_i  = - sum_{k >= i} m_k [g; 0]^T dT_k/dq_i [s_k; 1]
    tau  = M qdd + h + g                                                           (3.29)

The ``dT`` and ``d2T`` matrices come from cached partial products, so the cost stays
O(n^4) (the trace sum), not O(n^5).

Recursive (Hollerbach's, named in 002 §1.4; derived from 002 (1.2), ``tau_i = sum_{j >= i} tr(dT_j/dq_i H_j
T-ddot_j^T)``, with gravity as the base acceleration ``T-ddot_0 = -G``, ``G = [[0, g], [0, 0]]``):

    T_i = T_{i-1} A_i,  T-dot_i = T-dot_{i-1} A_i + T_i Q_i qd_i
    T-ddot_i = T-ddot_{i-1} A_i + 2 T-dot_{i-1} A_i Q_i qd_i + T_i (Q_i^2 qd_i^2 + Q_i qdd_i)
    D_n = H_n T-ddot_n^T,  D_i = H_i T-ddot_i^T + A_{i+1} D_{i+1},  tau_i = tr(Q_i D_i T_i)

Tool wrench ``w = [f; m]`` (world, on the tool, moment about the tool origin), as a
generalized force from virtual work (not in the papers): ``Q_i = tr(dT_tool/dq_i F^T)`` with
``F = [[(1/2) [m x] R_tool, f], [0, 0]]`` (``f . dp + m . dtheta``); ``tau -= Q``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.formulations.chain import KC, KG, KI, KM, constant_transform, joint_transform, mm4, screw_matrix


def trace_count(n: int) -> int:
    """Trace evaluations of the literal (3.28): ``n(n+1)(2n+1)/6 + (n(n+1)/2)^2``."""
    return n * (n + 1) * (2 * n + 1) // 6 + (n * (n + 1) // 2) ** 2


@njit(cache=True)
def pseudo_inertias(pk: np.ndarray, H: np.ndarray) -> None:
    """``H[k]`` = 003 (3.15) about body k's origin from mass, CoM and centroidal inertia."""
    n = H.shape[0]
    for k in range(n):
        m = pk[k, KM]
        tr = 0.5 * (pk[k, KI] + pk[k, KI + 4] + pk[k, KI + 8])
        for r in range(3):
            s_r = pk[k, KC + r]
            for c in range(3):
                H[k, r, c] = -pk[k, KI + 3 * r + c] + m * s_r * pk[k, KC + c]
            H[k, r, r] += tr
            H[k, r, 3] = m * s_r
            H[k, 3, r] = m * s_r
        H[k, 3, 3] = m


@njit(cache=True)
def wrench_matrix(T: np.ndarray, wrench: np.ndarray, F: np.ndarray) -> None:
    """``F = [[(1/2) [m x] R, f], [0, 0]]`` for a tool at pose ``T``: ``tr(dT F^T) = f . dp +
    m . dtheta`` (module docstring)."""
    mx = 0.5 * wrench[3]
    my = 0.5 * wrench[4]
    mz = 0.5 * wrench[5]
    for c in range(3):
        F[0, c] = -mz * T[1, c] + my * T[2, c]
        F[1, c] = mz * T[0, c] - mx * T[2, c]
        F[2, c] = -my * T[0, c] + mx * T[1, c]
    for r in range(3):
        F[r, 3] = wrench[r]
        F[3, r] = 0.0
    F[3, 3] = 0.0


@njit(cache=True)
def trace_abt(A: np.ndarray, B: np.ndarray) -> float:
    """``tr(A B^T) = sum_rc A_rc B_rc`` (4x4)."""
    s = 0.0
    for r in range(4):
        for c in range(4):
            s += A[r, c] * B[r, c]
    return s


@njit(cache=True)
def lagrange_direct(pk: np.ndarray, q: np.ndarray, qd: np.ndarray, want_h: bool,
                    wrench: np.ndarray, use_wrench: bool, M: np.ndarray, h: np.ndarray,
                    g: np.ndarray, wf: np.ndarray) -> int:
    """003 (3.28)-(3.30) literally (module docstring): writes ``M``, ``h`` (if ``want_h``, else
    zero), ``g`` and the tool wrench's generalized force ``wf``; returns the number of traces."""
    n = q.shape[0]
    H = np.empty((n, 4, 4))
    pseudo_inertias(pk, H)
    A = np.empty((n, 4, 4))
    Q = np.empty((n, 4, 4))
    T = np.empty((n, 4, 4))
    rel = np.empty((n, n, 4, 4))  # rel[j, k] = ^jT_k (k >= j)
    TQ = np.empty((n, 4, 4))  # T_j Q_j
    dT = np.zeros((n, n, 4, 4))  # dT[k, j] = dT_k / dq_j
    dTH = np.zeros((n, n, 4, 4))  # dT[k, j] H_k
    E = np.empty((n, n, 4, 4))  # E[l, m] = dT_m/dq_l Q_m (l <= m)
    D2 = np.empty((n, n, 4, 4))  # D2[l, m] = d2T_k/dq_l dq_m for the current k
    tmp = np.empty((4, 4))
    for i in range(n):
        joint_transform(pk, i, q[i], A[i])
        screw_matrix(pk, i, Q[i])
        if i == 0:
            T[0] = A[0]
        else:
            mm4(T[i - 1], A[i], T[i])
        mm4(T[i], Q[i], TQ[i])
    for j in range(n):  # ^jT_k = ^jT_{k-1} A_k
        rel[j, j] = np.eye(4)
        for k in range(j + 1, n):
            mm4(rel[j, k - 1], A[k], rel[j, k])
    for k in range(n):  # (3.30)
        for j in range(k + 1):
            mm4(TQ[j], rel[j, k], dT[k, j])
            mm4(dT[k, j], H[k], dTH[k, j])
    for m in range(n):
        for l in range(m + 1):
            mm4(dT[m, l], Q[m], E[l, m])
    traces = 0
    # M_ij, all n^2 entries (3.28)
    for i in range(n):
        for j in range(n):
            s = 0.0
            for k in range(max(i, j), n):
                s += trace_abt(dTH[k, i], dT[k, j])
                traces += 1
            M[i, j] = s
    # h_i (3.28), the triple sum with both orders (l, m) and (m, l)
    h[:] = 0.0
    if want_h:
        for k in range(n):
            for l in range(k + 1):
                for m in range(l, k + 1):
                    mm4(E[l, m], rel[m, k], D2[l, m])
            for i in range(k + 1):
                s = 0.0
                for l in range(k + 1):
                    for m in range(k + 1):
                        if l <= m:
                            s += trace_abt(dTH[k, i], D2[l, m]) * qd[l] * qd[m]
                        else:
                            s += trace_abt(dTH[k, i], D2[m, l]) * qd[l] * qd[m]
                        traces += 1
                h[i] += s
    # g_i = - sum_k m_k [g; 0]^T dT_k/dq_i [s_k; 1]
    for i in range(n):
        s = 0.0
        for k in range(i, n):
            sx = pk[k, KC]
            sy = pk[k, KC + 1]
            sz = pk[k, KC + 2]
            for r in range(3):
                D = dT[k, i]
                s += pk[k, KM] * pk[n, KG + r] * (D[r, 0] * sx + D[r, 1] * sy + D[r, 2] * sz + D[r, 3])
        g[i] = -s
    wf[:] = 0.0
    if use_wrench:
        Xt = np.empty((4, 4))
        constant_transform(pk, n, Xt)
        Tt = np.empty((4, 4))
        mm4(T[n - 1], Xt, Tt)
        F = np.empty((4, 4))
        wrench_matrix(Tt, wrench, F)
        for i in range(n):
            mm4(dT[n - 1, i], Xt, tmp)  # dT_tool/dq_i
            wf[i] = trace_abt(tmp, F)
    return traces


@njit(cache=True)
def lagrange_recursive(pk: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                       wrench: np.ndarray, use_wrench: bool, tau: np.ndarray) -> None:
    """The recursive 4x4 Lagrangian (module docstring), O(n)."""
    n = q.shape[0]
    H = np.empty((n, 4, 4))
    pseudo_inertias(pk, H)
    A = np.empty((n + 1, 4, 4))
    Q = np.empty((n, 4, 4))
    W = np.empty((n, 4, 4))
    Wd = np.empty((n, 4, 4))
    Wdd = np.empty((n, 4, 4))
    D = np.empty((4, 4))
    t1 = np.empty((4, 4))
    t2 = np.empty((4, 4))
    t3 = np.empty((4, 4))
    # base: T_0 = E, T-dot_0 = 0, T-ddot_0 = -G
    Wp = np.eye(4)
    Wdp = np.zeros((4, 4))
    Wddp = np.zeros((4, 4))
    for r in range(3):
        Wddp[r, 3] = -pk[n, KG + r]
    for i in range(n):
        joint_transform(pk, i, q[i], A[i])
        screw_matrix(pk, i, Q[i])
        mm4(Wp, A[i], W[i])  # T_i = T_{i-1} A_i
        mm4(Wdp, A[i], t1)  # T-dot_{i-1} A_i
        mm4(W[i], Q[i], t2)  # T_i Q_i
        mm4(t2, Q[i], t3)  # T_i Q_i^2
        for r in range(4):
            for c in range(4):
                Wd[i, r, c] = t1[r, c] + t2[r, c] * qd[i]
        mm4(t1, Q[i], D)  # T-dot_{i-1} A_i Q_i (D as scratch)
        mm4(Wddp, A[i], t1)  # T-ddot_{i-1} A_i
        for r in range(4):
            for c in range(4):
                Wdd[i, r, c] = (t1[r, c] + 2.0 * D[r, c] * qd[i] + t3[r, c] * qd[i] * qd[i]
                                + t2[r, c] * qdd[i])
        Wp = W[i]
        Wdp = Wd[i]
        Wddp = Wdd[i]
    # backward: D_i = H_i T-ddot_i^T + A_{i+1} D_{i+1}; tau_i = tr(Q_i D_i T_i)
    D[:] = 0.0
    if use_wrench:
        constant_transform(pk, n, A[n])
        mm4(W[n - 1], A[n], t1)
        wrench_matrix(t1, wrench, t2)
        for r in range(4):  # - X_tool F^T
            for c in range(4):
                D[r, c] = -(A[n, r, 0] * t2[c, 0] + A[n, r, 1] * t2[c, 1] + A[n, r, 2] * t2[c, 2]
                            + A[n, r, 3] * t2[c, 3])
    for i in range(n - 1, -1, -1):
        if i < n - 1:
            mm4(A[i + 1], D, t1)
        else:
            t1[:] = D
        for r in range(4):
            for c in range(4):
                D[r, c] = (t1[r, c] + H[i, r, 0] * Wdd[i, c, 0] + H[i, r, 1] * Wdd[i, c, 1]
                           + H[i, r, 2] * Wdd[i, c, 2] + H[i, r, 3] * Wdd[i, c, 3])
        mm4(Q[i], D, t1)
        s = 0.0
        for r in range(4):
            for c in range(4):
                s += t1[r, c] * W[i, c, r]
        tau[i] = s
