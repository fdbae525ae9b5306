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
``ws[i, WIA:WIA + 21]`` (index of (r, c), r <= c: ``(0, 6, 11, 15, 18, 20)[r] + c - r``);
pass 2 is written out on scalars (21 + 12 loads per link instead of 6 x 6 loops).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.actuators import armature, friction
from rbd_ros.algorithm.crba import link_world_inertia
from rbd_ros.algorithm.kinematics import forward_kinematics
from rbd_ros.algorithm.layout import GRAV, WA, WC, WCH, WCI, WCM, WD, WIA, WPA, WS, WU, WV


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
    n = qd.shape[0]
    for i in range(n):
        link_world_inertia(mp, ws, i)
        qdi = qd[i]
        sw0 = ws[i, WS] * qdi
        sw1 = ws[i, WS + 1] * qdi
        sw2 = ws[i, WS + 2] * qdi
        sv0 = ws[i, WS + 3] * qdi
        sv1 = ws[i, WS + 4] * qdi
        sv2 = ws[i, WS + 5] * qdi
        w0 = pw0 + sw0
        w1 = pw1 + sw1
        w2 = pw2 + sw2
        v0 = pv0 + sv0
        v1 = pv1 + sv1
        v2 = pv2 + sv2
        ws[i, WV] = w0
        ws[i, WV + 1] = w1
        ws[i, WV + 2] = w2
        ws[i, WV + 3] = v0
        ws[i, WV + 4] = v1
        ws[i, WV + 5] = v2
        # c = v x_m (S qd) = [w x sw; w x sv + v x sw]
        ws[i, WC] = w1 * sw2 - w2 * sw1
        ws[i, WC + 1] = w2 * sw0 - w0 * sw2
        ws[i, WC + 2] = w0 * sw1 - w1 * sw0
        ws[i, WC + 3] = (w1 * sv2 - w2 * sv1) + (v1 * sw2 - v2 * sw1)
        ws[i, WC + 4] = (w2 * sv0 - w0 * sv2) + (v2 * sw0 - v0 * sw2)
        ws[i, WC + 5] = (w0 * sv1 - w1 * sv0) + (v0 * sw1 - v1 * sw0)
        m = ws[i, WCM]
        h0 = ws[i, WCH]
        h1 = ws[i, WCH + 1]
        h2 = ws[i, WCH + 2]
        # IA = [[I_O, [h]x], [[h]x^T, m E]], symmetric: packed upper triangle (PACKED)
        ws[i, WIA] = ws[i, WCI]
        ws[i, WIA + 1] = ws[i, WCI + 1]
        ws[i, WIA + 2] = ws[i, WCI + 2]
        ws[i, WIA + 3] = 0.0
        ws[i, WIA + 4] = -h2
        ws[i, WIA + 5] = h1
        ws[i, WIA + 6] = ws[i, WCI + 4]
        ws[i, WIA + 7] = ws[i, WCI + 5]
        ws[i, WIA + 8] = h2
        ws[i, WIA + 9] = 0.0
        ws[i, WIA + 10] = -h0
        ws[i, WIA + 11] = ws[i, WCI + 8]
        ws[i, WIA + 12] = -h1
        ws[i, WIA + 13] = h0
        ws[i, WIA + 14] = 0.0
        ws[i, WIA + 15] = m
        ws[i, WIA + 16] = 0.0
        ws[i, WIA + 17] = 0.0
        ws[i, WIA + 18] = m
        ws[i, WIA + 19] = 0.0
        ws[i, WIA + 20] = m
        # I v = [I_O w + h x v; m v - h x w]
        nn0 = ws[i, WCI] * w0 + ws[i, WCI + 1] * w1 + ws[i, WCI + 2] * w2 + (h1 * v2 - h2 * v1)
        nn1 = ws[i, WCI + 3] * w0 + ws[i, WCI + 4] * w1 + ws[i, WCI + 5] * w2 + (h2 * v0 - h0 * v2)
        nn2 = ws[i, WCI + 6] * w0 + ws[i, WCI + 7] * w1 + ws[i, WCI + 8] * w2 + (h0 * v1 - h1 * v0)
        ff0 = m * v0 - (h1 * w2 - h2 * w1)
        ff1 = m * v1 - (h2 * w0 - h0 * w2)
        ff2 = m * v2 - (h0 * w1 - h1 * w0)
        # pA = v x* (I v) = [w x nn + v x ff; w x ff]
        ws[i, WPA] = (w1 * nn2 - w2 * nn1) + (v1 * ff2 - v2 * ff1)
        ws[i, WPA + 1] = (w2 * nn0 - w0 * nn2) + (v2 * ff0 - v0 * ff2)
        ws[i, WPA + 2] = (w0 * nn1 - w1 * nn0) + (v0 * ff1 - v1 * ff0)
        ws[i, WPA + 3] = w1 * ff2 - w2 * ff1
        ws[i, WPA + 4] = w2 * ff0 - w0 * ff2
        ws[i, WPA + 5] = w0 * ff1 - w1 * ff0
        pw0 = w0
        pw1 = w1
        pw2 = w2
        pv0 = v0
        pv1 = v1
        pv2 = v2


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
    """Pass 2 for link ``i`` (IA packed, see PACKED; scalarized): ``U, D, u``, and, if
    ``p >= 0``, ``IA_p += IA_i - U U^T / D``, ``pA_p += pA_i + IA_i c_i + U (u - U.c_i) / D``."""
    x0 = ws[i, WIA]
    x1 = ws[i, WIA + 1]
    x2 = ws[i, WIA + 2]
    x3 = ws[i, WIA + 3]
    x4 = ws[i, WIA + 4]
    x5 = ws[i, WIA + 5]
    x6 = ws[i, WIA + 6]
    x7 = ws[i, WIA + 7]
    x8 = ws[i, WIA + 8]
    x9 = ws[i, WIA + 9]
    x10 = ws[i, WIA + 10]
    x11 = ws[i, WIA + 11]
    x12 = ws[i, WIA + 12]
    x13 = ws[i, WIA + 13]
    x14 = ws[i, WIA + 14]
    x15 = ws[i, WIA + 15]
    x16 = ws[i, WIA + 16]
    x17 = ws[i, WIA + 17]
    x18 = ws[i, WIA + 18]
    x19 = ws[i, WIA + 19]
    x20 = ws[i, WIA + 20]
    s0 = ws[i, WS]
    s1 = ws[i, WS + 1]
    s2 = ws[i, WS + 2]
    s3 = ws[i, WS + 3]
    s4 = ws[i, WS + 4]
    s5 = ws[i, WS + 5]
    # U = IA S
    U0 = x0 * s0 + x1 * s1 + x2 * s2 + x3 * s3 + x4 * s4 + x5 * s5
    U1 = x1 * s0 + x6 * s1 + x7 * s2 + x8 * s3 + x9 * s4 + x10 * s5
    U2 = x2 * s0 + x7 * s1 + x11 * s2 + x12 * s3 + x13 * s4 + x14 * s5
    U3 = x3 * s0 + x8 * s1 + x12 * s2 + x15 * s3 + x16 * s4 + x17 * s5
    U4 = x4 * s0 + x9 * s1 + x13 * s2 + x16 * s3 + x18 * s4 + x19 * s5
    U5 = x5 * s0 + x10 * s1 + x14 * s2 + x17 * s3 + x19 * s4 + x20 * s5
    D = s0 * U0 + s1 * U1 + s2 * U2 + s3 * U3 + s4 * U4 + s5 * U5
    u = tau[i] - (s0 * ws[i, WPA] + s1 * ws[i, WPA + 1] + s2 * ws[i, WPA + 2]
                  + s3 * ws[i, WPA + 3] + s4 * ws[i, WPA + 4] + s5 * ws[i, WPA + 5])
    if actuators:  # (6.17): armature on the diagonal, friction off the input
        D += armature(mp, i)
        u -= friction(mp, i, qd[i])
    ws[i, WU] = U0
    ws[i, WU + 1] = U1
    ws[i, WU + 2] = U2
    ws[i, WU + 3] = U3
    ws[i, WU + 4] = U4
    ws[i, WU + 5] = U5
    ws[i, WD] = D
    ws[i, WD + 1] = u
    if p >= 0:
        c0 = ws[i, WC]
        c1 = ws[i, WC + 1]
        c2 = ws[i, WC + 2]
        c3 = ws[i, WC + 3]
        c4 = ws[i, WC + 4]
        c5 = ws[i, WC + 5]
        # pA_{i-1} += pA + (IA - U U^T/D) c + U u/D = pA + IA c + U (u - U.c)/D
        k = (u - (U0 * c0 + U1 * c1 + U2 * c2 + U3 * c3 + U4 * c4 + U5 * c5)) / D
        ws[p, WPA] += (ws[i, WPA] + U0 * k + x0 * c0 + x1 * c1 + x2 * c2 + x3 * c3
                       + x4 * c4 + x5 * c5)
        ws[p, WPA + 1] += (ws[i, WPA + 1] + U1 * k + x1 * c0 + x6 * c1 + x7 * c2 + x8 * c3
                           + x9 * c4 + x10 * c5)
        ws[p, WPA + 2] += (ws[i, WPA + 2] + U2 * k + x2 * c0 + x7 * c1 + x11 * c2
                           + x12 * c3 + x13 * c4 + x14 * c5)
        ws[p, WPA + 3] += (ws[i, WPA + 3] + U3 * k + x3 * c0 + x8 * c1 + x12 * c2
                           + x15 * c3 + x16 * c4 + x17 * c5)
        ws[p, WPA + 4] += (ws[i, WPA + 4] + U4 * k + x4 * c0 + x9 * c1 + x13 * c2
                           + x16 * c3 + x18 * c4 + x19 * c5)
        ws[p, WPA + 5] += (ws[i, WPA + 5] + U5 * k + x5 * c0 + x10 * c1 + x14 * c2
                           + x17 * c3 + x19 * c4 + x20 * c5)
        # IA_{i-1} += IA - U U^T / D (upper triangle)
        inv = 1.0 / D
        V0 = U0 * inv
        V1 = U1 * inv
        V2 = U2 * inv
        V3 = U3 * inv
        V4 = U4 * inv
        V5 = U5 * inv
        ws[p, WIA] += x0 - U0 * V0
        ws[p, WIA + 1] += x1 - U0 * V1
        ws[p, WIA + 2] += x2 - U0 * V2
        ws[p, WIA + 3] += x3 - U0 * V3
        ws[p, WIA + 4] += x4 - U0 * V4
        ws[p, WIA + 5] += x5 - U0 * V5
        ws[p, WIA + 6] += x6 - U1 * V1
        ws[p, WIA + 7] += x7 - U1 * V2
        ws[p, WIA + 8] += x8 - U1 * V3
        ws[p, WIA + 9] += x9 - U1 * V4
        ws[p, WIA + 10] += x10 - U1 * V5
        ws[p, WIA + 11] += x11 - U2 * V2
        ws[p, WIA + 12] += x12 - U2 * V3
        ws[p, WIA + 13] += x13 - U2 * V4
        ws[p, WIA + 14] += x14 - U2 * V5
        ws[p, WIA + 15] += x15 - U3 * V3
        ws[p, WIA + 16] += x16 - U3 * V4
        ws[p, WIA + 17] += x17 - U3 * V5
        ws[p, WIA + 18] += x18 - U4 * V4
        ws[p, WIA + 19] += x19 - U4 * V5
        ws[p, WIA + 20] += x20 - U5 * V5


@njit(cache=True, inline="always")
def aba_accelerations(mp: np.ndarray, ws: np.ndarray, n: int, a0: float, a1: float, a2: float,
                      a3: float, a4: float, a5: float, qdd: np.ndarray) -> None:
    """Pass 3, forward, from the root's spatial acceleration ``a`` minus gravity (a fixed
    base: ``[0; -g]``): ``qdd`` and the link accelerations ``ws[i, WA]``."""
    for i in range(n):
        a0 += ws[i, WC]
        a1 += ws[i, WC + 1]
        a2 += ws[i, WC + 2]
        a3 += ws[i, WC + 3]
        a4 += ws[i, WC + 4]
        a5 += ws[i, WC + 5]
        Ua = (ws[i, WU] * a0 + ws[i, WU + 1] * a1 + ws[i, WU + 2] * a2 + ws[i, WU + 3] * a3
              + ws[i, WU + 4] * a4 + ws[i, WU + 5] * a5)
        x = (ws[i, WD + 1] - Ua) / ws[i, WD]
        qdd[i] = x
        a0 += ws[i, WS] * x
        a1 += ws[i, WS + 1] * x
        a2 += ws[i, WS + 2] * x
        a3 += ws[i, WS + 3] * x
        a4 += ws[i, WS + 4] * x
        a5 += ws[i, WS + 5] * x
        ws[i, WA] = a0
        ws[i, WA + 1] = a1
        ws[i, WA + 2] = a2
        ws[i, WA + 3] = a3
        ws[i, WA + 4] = a4
        ws[i, WA + 5] = a5
