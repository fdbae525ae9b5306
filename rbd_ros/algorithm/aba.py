"""Articulated-body algorithm (Featherstone), O(n) forward dynamics (jitted).

Solves 003_871da85b02213601.txt (5.2) ``qdd = M^{-1} (tau - h - g)`` without forming M.
All spatial quantities are in world coordinates about the world origin (so no spatial
transforms between links are needed); a spatial motion is ``[w; v_O]``, a force ``[n_O; f]``:

1. ``v_i = v_{i-1} + S_i qd_i``, ``c_i = v_i x S_i qd_i`` (``S-dot_i = v_i x S_i``),
   ``IA_i = I_i``, ``pA_i = v_i x* I_i v_i``;
2. for i = n..1: ``U = IA_i S_i``, ``D = S_i^T U``, ``u = tau_i - S_i^T pA_i``;
   ``IA_{i-1} += IA_i - U U^T / D``, ``pA_{i-1} += pA_i + (IA_i - U U^T/D) c_i + U u / D``;
3. ``a_0 = [0; -g]`` (gravity as base acceleration, ERRATA "003"), for i = 1..n:
   ``a' = a_{i-1} + c_i``, ``qdd_i = (u - U^T a') / D``, ``a_i = a' + S_i qdd_i``.

Actuators (003 (6.17)): ``D += G^2 Jm``, ``u -= B qd + Tc sign(qd)``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.crba import link_world_inertia
from rbd_ros.algorithm.kinematics import forward_kinematics
from rbd_ros.algorithm.layout import (ARM, COUL, GRAV, VISC, WA, WC, WCH, WCI, WCM, WD, WIA, WPA,
                                      WS, WU, WV)


@njit(cache=True)
def aba(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
        actuators: bool, qdd: np.ndarray) -> None:
    """Forward dynamics by the articulated-body algorithm (module docstring)."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    # ---- pass 1: velocities, bias accelerations, rigid-body inertias and bias forces
    pw0 = 0.0
    pw1 = 0.0
    pw2 = 0.0
    pv0 = 0.0
    pv1 = 0.0
    pv2 = 0.0
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
        # IA = [[I_O, [h]x], [[h]x^T, m E]]
        for r in range(3):
            for c in range(3):
                ws[i, WIA + 6 * r + c] = ws[i, WCI + 3 * r + c]
                ws[i, WIA + 6 * (r + 3) + c + 3] = m if r == c else 0.0
        ws[i, WIA + 3] = 0.0
        ws[i, WIA + 4] = -h2
        ws[i, WIA + 5] = h1
        ws[i, WIA + 9] = h2
        ws[i, WIA + 10] = 0.0
        ws[i, WIA + 11] = -h0
        ws[i, WIA + 15] = -h1
        ws[i, WIA + 16] = h0
        ws[i, WIA + 17] = 0.0
        for r in range(3):
            for c in range(3):
                ws[i, WIA + 6 * (c + 3) + r] = ws[i, WIA + 6 * r + c + 3]
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
    # ---- pass 2: articulated inertias, backward
    for i in range(n - 1, -1, -1):
        D = 0.0
        sp = 0.0
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += ws[i, WIA + 6 * r + c] * ws[i, WS + c]
            ws[i, WU + r] = acc
            D += ws[i, WS + r] * acc
            sp += ws[i, WS + r] * ws[i, WPA + r]
        u = tau[i] - sp
        if actuators:
            v = qd[i]
            s = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
            D += mp[i, ARM]
            u -= mp[i, VISC] * v + mp[i, COUL] * s
        ws[i, WD] = D
        ws[i, WD + 1] = u
        if i > 0:
            inv = 1.0 / D
            uD = u * inv
            for r in range(6):
                Ur = ws[i, WU + r] * inv
                for c in range(6):
                    ws[i, WIA + 6 * r + c] -= Ur * ws[i, WU + c]
            for r in range(6):
                acc = ws[i, WPA + r] + ws[i, WU + r] * uD
                for c in range(6):
                    acc += ws[i, WIA + 6 * r + c] * ws[i, WC + c]
                ws[i - 1, WPA + r] += acc
            for k in range(36):
                ws[i - 1, WIA + k] += ws[i, WIA + k]
    # ---- pass 3: accelerations, forward
    g = n + 2
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = -mp[g, GRAV]
    a4 = -mp[g, GRAV + 1]
    a5 = -mp[g, GRAV + 2]
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
