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
from rbd_ros.algorithm.spatial6 import (
    add3,
    dot6,
    inertia_motion,
    load3,
    load6,
    load_sym3,
    mat3_vec,
    parallel_axis,
    rotate_sym3,
    store3,
    store_sym3,
)


@njit(cache=True)
def link_com_inertia(mp: np.ndarray, ws: np.ndarray, i: int) -> None:
    """World centre of mass ``c = p + R s`` of link i into ``ws[i, WCC]`` and its inertia
    about the centre of mass in world axes, ``R I_c R^T``, into ``ws[i, WICC]``; needs world
    transforms."""
    store3(ws, i, WCC, add3(load3(ws, i, WGP), mat3_vec(ws, i, WGR, load3(mp, i, COM))))  # c = p + R s
    store_sym3(ws, i, WICC, rotate_sym3(ws, i, WGR, com_inertia(mp, i)))  # R I_c R^T


@njit(cache=True)
def link_world_inertia(mp: np.ndarray, ws: np.ndarray, i: int) -> None:
    """Spatial inertia of link i about the world origin into ``ws[i, WCM/WCH/WCI]`` (mass
    ``m``, first moment ``h = m c``, ``I_O = R I_c R^T + m (|c|^2 E - c c^T)``), after
    ``link_com_inertia``; and the motion subspace ``ws[i, WS]``.  Needs world transforms."""
    link_com_inertia(mp, ws, i)
    motion_subspace(mp, ws, i)
    m = mp[i, MASS]
    c0, c1, c2 = load3(ws, i, WCC)
    h = (m * c0, m * c1, m * c2)
    ws[i, WCM] = m
    store3(ws, i, WCH, h)
    store_sym3(ws, i, WCI, parallel_axis(load_sym3(ws, i, WICC), h, (c0, c1, c2)))  # I_O = W + m (|c|^2 E - c c^T)


@njit(cache=True, inline="always")
def composite_times_motion(ws: np.ndarray, j: int) -> tuple[float, float, float, float, float, float]:
    """``F_j = I^C_j S_j = [n; f]``: ``n = I_O w + h x v``, ``f = m v - h x w`` for the
    composite inertia ``ws[j, WCM/WCH/WCI]`` and ``S_j = ws[j, WS] = [w; v]``."""
    return inertia_motion(ws[j, WCM], load3(ws, j, WCH), load_sym3(ws, j, WCI), load6(ws, j, WS))


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
        F = composite_times_motion(ws, j)  # F_j = I^C_j S_j
        for i in range(j + 1):
            val = dot6(load6(ws, i, WS), F)  # M_ij = S_i . F_j
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
