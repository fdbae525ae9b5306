"""Kane's equations through Lagrange's, 000 (12)-(38): mass matrix, bias and a Coriolis
matrix with ``M-dot - 2C`` skew-symmetric, from body Jacobians.

Per body i (000 (21), (25); ordering angular first)::

    J_i = [J_w,i ; J_v,i]   (J_w: body-frame angular velocity, J_v: inertial CoM velocity;
                             footnote 7: a mixed-frame stack, not a twist)
    M_i = blkdiag(I_i, m_i E3),   W_i = blkdiag([w_i x], 0),   w_i = J_w,i qd (body frame)

    M = sum J_i^T M_i J_i                                                             (35)
    h = sum J_i^T (M_i J-dot_i + W_i M_i J_i) qd                                        (35)
    C = sum J_i^T (M_i J-dot_i + W_i M_i J_i + M_i W_i J_i)                            (36)

The extra ``M_i W_i J_i`` vanishes against ``qd`` ((37): ``W_i J_i qd = [w x w; 0] = 0``) and
makes ``M-dot - 2C`` skew (after (38)).  Generalized forces: gravity
``f_c = sum m_i J_v,i^T g`` (27); applied ``J_i^T w_i^ex``, ``w_i^ex = [n_i ; R_i f_i]`` (28) (R_i
maps body to base components, misprint 000 (28)).  Inverse dynamics ``tau = M qdd + h - f_c -
J_n^T w_n^ex`` for the tool wrench (``Robot``'s convention, module ``robot``).

Jacobian columns for a joint screw ``[z_j; u_j]`` (world, axis through ``o_j``, body j's
angular velocity ``w_j``, origin velocity ``v_j``), j <= i::

    J_w col = R_i^T z_j,               J-dot_w col = R_i^T ((w_j - w_i) x z_j)
    J_v col = z_j x (c_i - o_j) + u_j,  J-dot_v col = (w_j x z_j) x (c_i - o_j)
                                          + z_j x (c-dot_i - v_j) + w_j x u_j

(``J-dot_w`` in the body frame: the derivative of ``R_i^T`` gives ``-[w_i x]``, cf. 000
Theorem 1 (17) and Corollary 1 (A-6), whose inertial-frame sign is misprinted: misprint 000 (A-6).)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.formulations.chain import KC, KG, KI, KM, project_body, world_kinematics


@njit(cache=True)
def kane_jacobians(pk: np.ndarray, q: np.ndarray, qd: np.ndarray, J: np.ndarray,
                   Jd: np.ndarray, T: np.ndarray, wb: np.ndarray) -> None:
    """``J[i]``, ``J-dot[i]`` (each ``(6, n)``, zero beyond column i), world poses ``T``
    (``n + 1``, last the tool) and body-frame angular velocities ``wb[i]`` (module docstring)."""
    n = q.shape[0]
    Z = np.empty((n, 6))
    w = np.empty((n + 1, 3))
    vo = np.empty((n + 1, 3))
    world_kinematics(pk, q, qd, T, Z, w, vo)
    J[:] = 0.0
    Jd[:] = 0.0
    c = np.empty(3)
    cd = np.empty(3)
    for i in range(n):
        R = T[i]
        for r in range(3):
            c[r] = R[r, 0] * pk[i, KC] + R[r, 1] * pk[i, KC + 1] + R[r, 2] * pk[i, KC + 2] + R[r, 3]
        # c-dot_i = v_i + w_i x (c_i - o_i)
        ex = c[0] - R[0, 3]
        ey = c[1] - R[1, 3]
        ez = c[2] - R[2, 3]
        cd[0] = vo[i, 0] + w[i, 1] * ez - w[i, 2] * ey
        cd[1] = vo[i, 1] + w[i, 2] * ex - w[i, 0] * ez
        cd[2] = vo[i, 2] + w[i, 0] * ey - w[i, 1] * ex
        for r in range(3):
            wb[i, r] = R[0, r] * w[i, 0] + R[1, r] * w[i, 1] + R[2, r] * w[i, 2]
        for j in range(i + 1):
            zx = Z[j, 0]
            zy = Z[j, 1]
            zz = Z[j, 2]
            # angular, body frame
            dx = (w[j, 1] - w[i, 1]) * zz - (w[j, 2] - w[i, 2]) * zy
            dy = (w[j, 2] - w[i, 2]) * zx - (w[j, 0] - w[i, 0]) * zz
            dz = (w[j, 0] - w[i, 0]) * zy - (w[j, 1] - w[i, 1]) * zx
            for r in range(3):
                J[i, r, j] = R[0, r] * zx + R[1, r] * zy + R[2, r] * zz
                Jd[i, r, j] = R[0, r] * dx + R[1, r] * dy + R[2, r] * dz
            # linear, inertial frame
            px = c[0] - T[j, 0, 3]
            py = c[1] - T[j, 1, 3]
            pz = c[2] - T[j, 2, 3]
            J[i, 3, j] = zy * pz - zz * py + Z[j, 3]
            J[i, 4, j] = zz * px - zx * pz + Z[j, 4]
            J[i, 5, j] = zx * py - zy * px + Z[j, 5]
            ax = w[j, 1] * zz - w[j, 2] * zy  # z-dot = w_j x z
            ay = w[j, 2] * zx - w[j, 0] * zz
            az = w[j, 0] * zy - w[j, 1] * zx
            ux = cd[0] - vo[j, 0]
            uy = cd[1] - vo[j, 1]
            uz = cd[2] - vo[j, 2]
            Jd[i, 3, j] = (ay * pz - az * py) + (zy * uz - zz * uy) + (w[j, 1] * Z[j, 5] - w[j, 2] * Z[j, 4])
            Jd[i, 4, j] = (az * px - ax * pz) + (zz * ux - zx * uz) + (w[j, 2] * Z[j, 3] - w[j, 0] * Z[j, 5])
            Jd[i, 5, j] = (ax * py - ay * px) + (zx * uy - zy * ux) + (w[j, 0] * Z[j, 4] - w[j, 1] * Z[j, 3])


@njit(cache=True)
def kane(pk: np.ndarray, q: np.ndarray, qd: np.ndarray, wrench: np.ndarray, use_wrench: bool,
         M: np.ndarray, C: np.ndarray, h: np.ndarray, fc: np.ndarray, fe: np.ndarray) -> None:
    """000 (35)-(36) ``M``, ``C``, ``h``; gravity ``f_c`` (27); the tool wrench's ``J^T w^ex``
    (28) into ``fe`` (zero if unused)."""
    n = q.shape[0]
    J = np.empty((n, 6, n))
    Jd = np.empty((n, 6, n))
    T = np.empty((n + 1, 4, 4))
    wb = np.empty((n, 3))
    kane_jacobians(pk, q, qd, J, Jd, T, wb)
    P = np.zeros((6, 6))
    X = np.zeros((6, 6))
    M[:] = 0.0
    C[:] = 0.0
    h[:] = 0.0
    fc[:] = 0.0
    fe[:] = 0.0
    PJ = np.empty((6, n))
    K = np.empty((6, n))
    jw = np.empty(6)
    jdw = np.empty(6)
    e = np.empty(6)
    cw = np.empty(3)
    for i in range(n):
        m = pk[i, KM]
        for r in range(3):
            for c in range(3):
                P[r, c] = pk[i, KI + 3 * r + c]
            P[3 + r, 3 + r] = m
        # X = W_i M_i + M_i W_i = blkdiag([w x] I + I [w x], 0)
        wx = wb[i, 0]
        wy = wb[i, 1]
        wz = wb[i, 2]
        for c in range(3):
            a0 = P[0, c]
            a1 = P[1, c]
            a2 = P[2, c]
            X[0, c] = wy * a2 - wz * a1
            X[1, c] = wz * a0 - wx * a2
            X[2, c] = wx * a1 - wy * a0
        for r in range(3):
            b0 = P[r, 0]
            b1 = P[r, 1]
            b2 = P[r, 2]
            X[r, 0] += b1 * wz - b2 * wy
            X[r, 1] += b2 * wx - b0 * wz
            X[r, 2] += b0 * wy - b1 * wx
        project_body(J[i], Jd[i], P, X, M, C, i + 1, PJ, K)
        # h_i term (35): J^T (M_i J-dot qd + W_i M_i J qd)
        jw[:] = 0.0
        jdw[:] = 0.0
        e[:] = 0.0
        for r in range(6):
            for j in range(i + 1):
                jw[r] += J[i, r, j] * qd[j]
                jdw[r] += Jd[i, r, j] * qd[j]
        for r in range(6):
            for k in range(6):
                e[r] += P[r, k] * jdw[k]
        lx = P[0, 0] * jw[0] + P[0, 1] * jw[1] + P[0, 2] * jw[2]
        ly = P[1, 0] * jw[0] + P[1, 1] * jw[1] + P[1, 2] * jw[2]
        lz = P[2, 0] * jw[0] + P[2, 1] * jw[1] + P[2, 2] * jw[2]
        e[0] += wy * lz - wz * ly
        e[1] += wz * lx - wx * lz
        e[2] += wx * ly - wy * lx
        for j in range(i + 1):
            s = 0.0
            for r in range(6):
                s += J[i, r, j] * e[r]
            h[j] += s
            # (27): f_c = sum m J_v^T g
            fc[j] += m * (J[i, 3, j] * pk[n, KG] + J[i, 4, j] * pk[n, KG + 1] + J[i, 5, j] * pk[n, KG + 2])
    if use_wrench:
        # (28) on the last body: n^ex = R^T (m + (p_tool - c) x f) about the CoM, body frame
        k = n - 1
        R = T[k]
        Tt = T[n]
        for r in range(3):
            cw[r] = R[r, 0] * pk[k, KC] + R[r, 1] * pk[k, KC + 1] + R[r, 2] * pk[k, KC + 2] + R[r, 3]
        px = Tt[0, 3] - cw[0]
        py = Tt[1, 3] - cw[1]
        pz = Tt[2, 3] - cw[2]
        mx = wrench[3] + py * wrench[2] - pz * wrench[1]
        my = wrench[4] + pz * wrench[0] - px * wrench[2]
        mz = wrench[5] + px * wrench[1] - py * wrench[0]
        we = np.empty(6)
        for r in range(3):
            we[r] = R[0, r] * mx + R[1, r] * my + R[2, r] * mz
            we[3 + r] = wrench[r]
        for j in range(n):
            s = 0.0
            for r in range(6):
                s += J[k, r, j] * we[r]
            fe[j] = s
