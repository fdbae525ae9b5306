"""Composite-rigid-body algorithm: the joint-space mass matrix M(q) (jitted).

M is the inertia matrix of 003 (3.40), ``M = sum_k m_k J_sk^T J_sk +
J_wk^T I_k J_wk`` (3.37)-(3.38), computed in O(n^2) by composite bodies in world
coordinates about the world origin (Featherstone's CRBA):

* link k's spatial inertia about the world origin: mass ``m``, first moment ``h = m c``,
  rotational inertia ``I_O = R I_c R^T + m (|c|^2 E - c c^T)`` (``c`` world centre of mass);
* composite ``I^C_i = sum_{k >= i}`` of those (a serial chain: the subtree is links i..n);
* joint motion ``S_j = [z_j; p_j x z_j]`` (revolute) or ``[0; z_j]`` (prismatic), the
  Jacobian columns of 002 (3.15)-(3.16) seen at the world origin;
* ``F_j = I^C_j S_j`` = ``[I_O w + h x v; m v - h x w]`` and ``M_ij = M_ji = S_i . F_j``
  for ``i <= j``.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from rbd_ros.algorithm.kinematics import forward_kinematics, motion_subspace
from rbd_ros.algorithm.layout import COM, MASS, WCC, WCH, WCI, WCM, WGP, WGR, WICC, WS, com_inertia


@njit(cache=True)
def link_com_inertia(mp: np.ndarray, ws: np.ndarray, i: int) -> None:
    """World centre of mass ``c = p + R s`` of link i into ``ws[i, WCC]`` and its inertia
    about the centre of mass in world axes, ``R I_c R^T``, into ``ws[i, WICC]``; needs world
    transforms."""
    s0 = mp[i, COM]
    s1 = mp[i, COM + 1]
    s2 = mp[i, COM + 2]
    for r in range(3):
        ws[i, WCC + r] = (ws[i, WGP + r] + ws[i, WGR + 3 * r] * s0 + ws[i, WGR + 3 * r + 1] * s1
                          + ws[i, WGR + 3 * r + 2] * s2)
    # W = R I R^T, unrolled on scalars (I symmetric): T = I R^T, then W = R T (upper half)
    r00 = ws[i, WGR]
    r01 = ws[i, WGR + 1]
    r02 = ws[i, WGR + 2]
    r10 = ws[i, WGR + 3]
    r11 = ws[i, WGR + 4]
    r12 = ws[i, WGR + 5]
    r20 = ws[i, WGR + 6]
    r21 = ws[i, WGR + 7]
    r22 = ws[i, WGR + 8]
    a, b, c, d, e, f = com_inertia(mp, i)  # I = [[a, b, c], [b, d, e], [c, e, f]]
    # T[:, k] = I R[k, :]^T
    t00 = a * r00 + b * r01 + c * r02
    t10 = b * r00 + d * r01 + e * r02
    t20 = c * r00 + e * r01 + f * r02
    t01 = a * r10 + b * r11 + c * r12
    t11 = b * r10 + d * r11 + e * r12
    t21 = c * r10 + e * r11 + f * r12
    t02 = a * r20 + b * r21 + c * r22
    t12 = b * r20 + d * r21 + e * r22
    t22 = c * r20 + e * r21 + f * r22
    w00 = r00 * t00 + r01 * t10 + r02 * t20
    w01 = r00 * t01 + r01 * t11 + r02 * t21
    w02 = r00 * t02 + r01 * t12 + r02 * t22
    w11 = r10 * t01 + r11 * t11 + r12 * t21
    w12 = r10 * t02 + r11 * t12 + r12 * t22
    w22 = r20 * t02 + r21 * t12 + r22 * t22
    ws[i, WICC] = w00
    ws[i, WICC + 1] = w01
    ws[i, WICC + 2] = w02
    ws[i, WICC + 3] = w01
    ws[i, WICC + 4] = w11
    ws[i, WICC + 5] = w12
    ws[i, WICC + 6] = w02
    ws[i, WICC + 7] = w12
    ws[i, WICC + 8] = w22


@njit(cache=True)
def link_world_inertia(mp: np.ndarray, ws: np.ndarray, i: int) -> None:
    """Spatial inertia of link i about the world origin into ``ws[i, WCM/WCH/WCI]`` (mass
    ``m``, first moment ``h = m c``, ``I_O = R I_c R^T + m (|c|^2 E - c c^T)``), after
    ``link_com_inertia``; and the motion subspace ``ws[i, WS]``.  Needs world transforms."""
    link_com_inertia(mp, ws, i)
    motion_subspace(mp, ws, i)
    m = mp[i, MASS]
    c0 = ws[i, WCC]
    c1 = ws[i, WCC + 1]
    c2 = ws[i, WCC + 2]
    ws[i, WCM] = m
    ws[i, WCH] = m * c0
    ws[i, WCH + 1] = m * c1
    ws[i, WCH + 2] = m * c2
    h0 = m * c0
    h1 = m * c1
    h2 = m * c2
    # I_O = W + m (|c|^2 E - c c^T)
    ws[i, WCI] = ws[i, WICC] + h1 * c1 + h2 * c2
    ws[i, WCI + 4] = ws[i, WICC + 4] + h0 * c0 + h2 * c2
    ws[i, WCI + 8] = ws[i, WICC + 8] + h0 * c0 + h1 * c1
    x01 = ws[i, WICC + 1] - h0 * c1
    x02 = ws[i, WICC + 2] - h0 * c2
    x12 = ws[i, WICC + 5] - h1 * c2
    ws[i, WCI + 1] = x01
    ws[i, WCI + 3] = x01
    ws[i, WCI + 2] = x02
    ws[i, WCI + 6] = x02
    ws[i, WCI + 5] = x12
    ws[i, WCI + 7] = x12


@njit(cache=True, inline="always")
def composite_times_motion(ws: np.ndarray, j: int) -> tuple[float, float, float, float, float, float]:
    """``F_j = I^C_j S_j = [n; f]``: ``n = I_O w + h x v``, ``f = m v - h x w`` for the
    composite inertia ``ws[j, WCM/WCH/WCI]`` and ``S_j = ws[j, WS] = [w; v]``."""
    w0 = ws[j, WS]
    w1 = ws[j, WS + 1]
    w2 = ws[j, WS + 2]
    v0 = ws[j, WS + 3]
    v1 = ws[j, WS + 4]
    v2 = ws[j, WS + 5]
    m = ws[j, WCM]
    h0 = ws[j, WCH]
    h1 = ws[j, WCH + 1]
    h2 = ws[j, WCH + 2]
    return (ws[j, WCI] * w0 + ws[j, WCI + 1] * w1 + ws[j, WCI + 2] * w2 + (h1 * v2 - h2 * v1),
            ws[j, WCI + 3] * w0 + ws[j, WCI + 4] * w1 + ws[j, WCI + 5] * w2 + (h2 * v0 - h0 * v2),
            ws[j, WCI + 6] * w0 + ws[j, WCI + 7] * w1 + ws[j, WCI + 8] * w2 + (h0 * v1 - h1 * v0),
            m * v0 - (h1 * w2 - h2 * w1), m * v1 - (h2 * w0 - h0 * w2), m * v2 - (h0 * w1 - h1 * w0))


@njit(cache=True)
def crba_from_transforms(mp: np.ndarray, ws: np.ndarray, n: int, out: np.ndarray, r0: int) -> None:
    """Mass matrix into ``out[r0 + i, j]`` (full, symmetric): ``out = M, r0 = 0`` or the
    workspace block ``out = ws, r0 = mrow(n)``.  Needs ``forward_kinematics``."""
    for i in range(n - 1, -1, -1):
        link_world_inertia(mp, ws, i)
        if i < n - 1:
            ws[i, WCM] += ws[i + 1, WCM]
            for k in range(3):
                ws[i, WCH + k] += ws[i + 1, WCH + k]
            for k in range(9):
                ws[i, WCI + k] += ws[i + 1, WCI + k]
    for j in range(n):
        n0, n1, n2, f0, f1, f2 = composite_times_motion(ws, j)  # F_j = I^C_j S_j
        for i in range(j + 1):
            val = (ws[i, WS] * n0 + ws[i, WS + 1] * n1 + ws[i, WS + 2] * n2
                   + ws[i, WS + 3] * f0 + ws[i, WS + 4] * f1 + ws[i, WS + 5] * f2)
            out[r0 + i, j] = val
            out[r0 + j, i] = val


@njit(cache=True)
def crba(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, M: np.ndarray) -> None:
    """Mass matrix M(q) (n x n) into ``M``."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    crba_from_transforms(mp, ws, n, M, 0)


@njit(cache=True, parallel=True)
def crba_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, M: np.ndarray) -> None:
    """``crba`` for each row of ``q`` (N x n) into ``M`` (N x n x n), ``prange`` over chunks."""
    N = q.shape[0]
    for c in prange(chunks):
        ws = wss[c]
        for k in range(c * N // chunks, (c + 1) * N // chunks):
            crba(mp, ws, q[k], M[k])
