"""Composite-rigid-body algorithm: the joint-space mass matrix M(q) (jitted).

M is the inertia matrix of 003_871da85b02213601.txt (3.40), ``M = sum_k m_k J_sk^T J_sk +
J_wk^T I_k J_wk`` (3.37)-(3.38), computed in O(n^2) by composite bodies in world
coordinates about the world origin (Featherstone's CRBA):

* link k's spatial inertia about the world origin: mass ``m``, first moment ``h = m c``,
  rotational inertia ``I_O = R I_c R^T + m (|c|^2 E - c c^T)`` (``c`` world centre of mass);
* composite ``I^C_i = sum_{k >= i}`` of those (a serial chain: the subtree is links i..n);
* joint motion ``S_j = [z_j; p_j x z_j]`` (revolute) or ``[0; z_j]`` (prismatic), the
  Jacobian columns of 002_ad553f664761af43.txt (3.15)-(3.16) seen at the world origin;
* ``F_j = I^C_j S_j`` = ``[I_O w + h x v; m v - h x w]`` and ``M_ij = M_ji = S_i . F_j``
  for ``i <= j``.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from rbd_ros.algorithm.kinematics import forward_kinematics, motion_subspace
from rbd_ros.algorithm.layout import (COM, IC, MASS, WCC, WCH, WCI, WCM, WGP, WGR, WICC, WS,
                                      mrow)


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
    # T = I R^T (T[a, c] = sum_k I[a, k] R[c, k]) kept in WICC, then R T (upper triangle)
    for a in range(3):
        for c in range(3):
            ws[i, WICC + 3 * a + c] = (mp[i, IC + 3 * a] * ws[i, WGR + 3 * c]
                                       + mp[i, IC + 3 * a + 1] * ws[i, WGR + 3 * c + 1]
                                       + mp[i, IC + 3 * a + 2] * ws[i, WGR + 3 * c + 2])
    t00 = ws[i, WICC]
    t01 = ws[i, WICC + 1]
    t02 = ws[i, WICC + 2]
    t10 = ws[i, WICC + 3]
    t11 = ws[i, WICC + 4]
    t12 = ws[i, WICC + 5]
    t20 = ws[i, WICC + 6]
    t21 = ws[i, WICC + 7]
    t22 = ws[i, WICC + 8]
    for r in range(3):
        g0 = ws[i, WGR + 3 * r]
        g1 = ws[i, WGR + 3 * r + 1]
        g2 = ws[i, WGR + 3 * r + 2]
        for c in range(r, 3):
            tc0 = t00 if c == 0 else (t01 if c == 1 else t02)
            tc1 = t10 if c == 0 else (t11 if c == 1 else t12)
            tc2 = t20 if c == 0 else (t21 if c == 1 else t22)
            val = g0 * tc0 + g1 * tc1 + g2 * tc2
            ws[i, WICC + 3 * r + c] = val
            ws[i, WICC + 3 * c + r] = val


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
    cc = c0 * c0 + c1 * c1 + c2 * c2
    for r in range(3):
        cr = c0 if r == 0 else (c1 if r == 1 else c2)
        for c in range(3):
            ccol = c0 if c == 0 else (c1 if c == 1 else c2)
            val = ws[i, WICC + 3 * r + c] - m * cr * ccol
            if r == c:
                val += m * cc
            ws[i, WCI + 3 * r + c] = val


@njit(cache=True)
def crba_from_transforms(mp: np.ndarray, ws: np.ndarray, n: int) -> None:
    """Mass matrix into the workspace block ``ws[mrow(n) + i, j]`` (full, symmetric);
    needs ``forward_kinematics``."""
    r0 = mrow(n)
    for i in range(n - 1, -1, -1):
        link_world_inertia(mp, ws, i)
        if i < n - 1:
            ws[i, WCM] += ws[i + 1, WCM]
            for k in range(3):
                ws[i, WCH + k] += ws[i + 1, WCH + k]
            for k in range(9):
                ws[i, WCI + k] += ws[i + 1, WCI + k]
    for j in range(n):
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
        # n = I_O w + h x v ; f = m v - h x w
        n0 = ws[j, WCI] * w0 + ws[j, WCI + 1] * w1 + ws[j, WCI + 2] * w2 + (h1 * v2 - h2 * v1)
        n1 = ws[j, WCI + 3] * w0 + ws[j, WCI + 4] * w1 + ws[j, WCI + 5] * w2 + (h2 * v0 - h0 * v2)
        n2 = ws[j, WCI + 6] * w0 + ws[j, WCI + 7] * w1 + ws[j, WCI + 8] * w2 + (h0 * v1 - h1 * v0)
        f0 = m * v0 - (h1 * w2 - h2 * w1)
        f1 = m * v1 - (h2 * w0 - h0 * w2)
        f2 = m * v2 - (h0 * w1 - h1 * w0)
        for i in range(j + 1):
            val = (ws[i, WS] * n0 + ws[i, WS + 1] * n1 + ws[i, WS + 2] * n2
                   + ws[i, WS + 3] * f0 + ws[i, WS + 4] * f1 + ws[i, WS + 5] * f2)
            ws[r0 + i, j] = val
            ws[r0 + j, i] = val


@njit(cache=True)
def crba(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, M: np.ndarray) -> None:
    """Mass matrix M(q) (n x n) into ``M``."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    crba_from_transforms(mp, ws, n)
    r0 = mrow(n)
    for i in range(n):
        for j in range(n):
            M[i, j] = ws[r0 + i, j]


@njit(cache=True, parallel=True)
def crba_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, M: np.ndarray) -> None:
    """``crba`` for each row of ``q`` (N x n) into ``M`` (N x n x n), ``prange`` over chunks."""
    N = q.shape[0]
    for c in prange(chunks):
        ws = wss[c]
        for k in range(c * N // chunks, (c + 1) * N // chunks):
            crba(mp, ws, q[k], M[k])
