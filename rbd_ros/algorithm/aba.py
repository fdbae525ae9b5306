"""Articulated-body algorithm (Featherstone), O(n) forward dynamics (jitted).

Solves 003 (5.2) ``qdd = M^{-1} (tau - h - g)`` without forming M.
All spatial quantities are in world coordinates about the world origin (so no spatial
transforms between links are needed); a spatial motion is ``[w; v_O]``, a force ``[n_O; f]``:

1. ``v_i = v_{i-1} + S_i qd_i``, ``c_i = v_i x S_i qd_i`` (``S-dot_i = v_i x S_i``),
   ``IA_i = I_i``, ``pA_i = v_i x* I_i v_i``;
2. for i = n..1: ``U = IA_i S_i``, ``D = S_i^T U``, ``u = tau_i - S_i^T pA_i``;
   ``IA_{i-1} += IA_i - U U^T / D``, ``pA_{i-1} += pA_i + (IA_i - U U^T/D) c_i + U u / D``;
3. ``a_0 = [0; -g]`` (gravity as base acceleration, misprint 003 §4.5 step 1), for i = 1..n:
   ``a' = a_{i-1} + c_i``, ``qdd_i = (u - U^T a') / D``, ``a_i = a' + S_i qdd_i``.

Actuators (003 (6.17)): ``D += G^2 Jm``, ``u -= B qd + Tc sign(qd)``.

The three passes are separate (inlined) functions so a moving root reuses them
(``floating_base.aba_floating``): pass 1 from the root's velocity, pass 2 handing link 1's
articulated inertia to the root, pass 3 from the root's acceleration.

PACKED: ``IA`` is symmetric and stored as its upper triangle, row by row, in
``ws[i, WIA:WIA + 21]`` (index of (r, c), r <= c: ``spatial6.PACKED[r] + c - r``);
pass 2 works on the 21 entries as a tuple of scalars (``spatial6``: 21 + 12 loads per link
instead of 6 x 6 loops).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.actuators import armature, friction
from rbd_ros.algorithm.crba import link_world_inertia
from rbd_ros.algorithm.kinematics import forward_kinematics
from rbd_ros.algorithm.layout import GRAV, WA, WC, WCH, WCI, WCM, WD, WIA, WPA, WS, WU, WV
from rbd_ros.algorithm.spatial6 import (
    accumulate6,
    add6,
    add_sym6_downdate,
    dot6,
    force_cross,
    inertia_motion,
    inertia_packed,
    load3,
    load6,
    load_sym3,
    load_sym6,
    motion_cross,
    scale6,
    store6,
    store_sym6,
    sym6_vec,
    sym6_vec_acc,
)


@njit(cache=True)
def aba(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
        actuators: bool, qdd: np.ndarray) -> None:
    """Forward dynamics by the articulated-body algorithm (module docstring)."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    aba_velocities(mp, ws, qd, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    aba_articulate(mp, ws, qd, tau, actuators, -1)
    g = n + 2
    aba_accelerations(mp, ws, n, 0.0, 0.0, 0.0, -mp[g, GRAV], -mp[g, GRAV + 1], -mp[g, GRAV + 2], qdd)


@njit(cache=True, inline="always")
def aba_velocities(mp: np.ndarray, ws: np.ndarray, qd: np.ndarray, pw0: float, pw1: float,
                   pw2: float, pv0: float, pv1: float, pv2: float) -> None:
    """Pass 1 from a root moving with spatial velocity ``[pw; pv]`` (zero: a fixed base):
    velocities, bias accelerations, rigid-body inertias and bias forces.  Needs world
    transforms."""
    V = (pw0, pw1, pw2, pv0, pv1, pv2)
    for i in range(qd.shape[0]):
        link_world_inertia(mp, ws, i)  # I_i = (m, h, I_O) about the world origin, S_i
        Sq = scale6(load6(ws, i, WS), qd[i])
        V = add6(V, Sq)  # v_i = v_{i-1} + S_i qd_i
        store6(ws, i, WV, V)
        store6(ws, i, WC, motion_cross(V, Sq))  # c_i = v_i x S_i qd_i
        m = ws[i, WCM]
        h = load3(ws, i, WCH)
        I = load_sym3(ws, i, WCI)
        store_sym6(ws, i, WIA, inertia_packed(m, h, I))  # IA_i = I_i
        store6(ws, i, WPA, force_cross(V, inertia_motion(m, h, I, V)))  # pA_i = v_i x* I_i v_i


@njit(cache=True, inline="always")
def aba_articulate(mp: np.ndarray, ws: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                   actuators: bool, root: int) -> None:
    """Pass 2: articulated inertias, backward.  Link 0 hands its articulated inertia and bias
    force on to workspace row ``root`` (a floating base, ``floating_base``) when
    ``root >= 0``, to nothing (a fixed base) otherwise."""
    n = qd.shape[0]
    for i in range(n - 1, 0, -1):
        articulate_link(mp, ws, i, i - 1, qd, tau, actuators)
    articulate_link(mp, ws, 0, root, qd, tau, actuators)


@njit(cache=True, inline="always")
def articulate_link(mp: np.ndarray, ws: np.ndarray, i: int, p: int, qd: np.ndarray,
                    tau: np.ndarray, actuators: bool) -> None:
    """Pass 2 for link ``i`` (IA packed, see PACKED): ``U, D, u``, and, if ``p >= 0``,
    ``IA_p += IA_i - U U^T / D``, ``pA_p += pA_i + IA_i c_i + U (u - U.c_i) / D``."""
    X = load_sym6(ws, i, WIA)
    S = load6(ws, i, WS)
    pA = load6(ws, i, WPA)
    U = sym6_vec(X, S)  # U = IA S
    D = dot6(S, U)  # D = S^T U
    u = tau[i] - dot6(S, pA)  # u = tau - S^T pA
    if actuators:  # 003 (6.17): armature on the diagonal, friction off the input
        D += armature(mp, i)
        u -= friction(mp, i, qd[i])
    store6(ws, i, WU, U)
    ws[i, WD] = D
    ws[i, WD + 1] = u
    if p >= 0:
        c = load6(ws, i, WC)
        # pA_{i-1} += pA + (IA - U U^T/D) c + U u/D = pA + IA c + U (u - U.c)/D
        accumulate6(ws, p, WPA, sym6_vec_acc(add6(pA, scale6(U, (u - dot6(U, c)) / D)), X, c))
        add_sym6_downdate(ws, p, WIA, X, U, scale6(U, 1.0 / D))  # IA_{i-1} += IA - U U^T / D


@njit(cache=True, inline="always")
def aba_accelerations(mp: np.ndarray, ws: np.ndarray, n: int, a0: float, a1: float, a2: float,
                      a3: float, a4: float, a5: float, qdd: np.ndarray) -> None:
    """Pass 3, forward, from the root's spatial acceleration ``a`` minus gravity (a fixed
    base: ``[0; -g]``): ``qdd`` and the link accelerations ``ws[i, WA]``."""
    A = (a0, a1, a2, a3, a4, a5)
    for i in range(n):
        A = add6(A, load6(ws, i, WC))  # a' = a_{i-1} + c_i
        x = (ws[i, WD + 1] - dot6(load6(ws, i, WU), A)) / ws[i, WD]  # qdd_i = (u - U^T a') / D
        qdd[i] = x
        A = add6(A, scale6(load6(ws, i, WS), x))  # a_i = a' + S_i qdd_i
        store6(ws, i, WA, A)
