"""Gauss's principle of least constraint in dual-quaternion form (dqGP), 001 (31)-(52):
the whole-body equations ``M_GP qdd + C_GP qd + g_GP = tau_GP`` at O(n^3).

Per body i, the body twist of its CoM frame ``nu_i = vec6(xi_{0,c_i}^{c_i}) = J_i qd``
(33), ``[w; v]`` both in ``c_i``.  Column j of ``J_i`` is joint j's screw moved to ``c_i``
with the adjoint (3) of 001 §2:

    J_i[:, j] = Ad((x_{c_i}^0)^*) Ad(x_{j_{j-1}}^0) S_j        (j <= i, else 0)

(001 obtains the same ``J`` from the pose Jacobian, ``2 I_bar H+_8(x^*) J_x``; (33) pads with
``n - i`` zero columns: one coordinate per body: misprint 001 (33).)  Its derivative, from Lemma
2.1 (9): ``J-dot_i[:, j] = -(sum_{j < k <= i} J_i[:, k] qd_k) x J_i[:, j]`` (cross product (8)).

    Psi_i = blkdiag(I_i, m_i E3)                                                     (31)
    M_GP  = sum J_i^T Psi_i J_i                                                      (46)
    C_GP  = sum J_i^T (S_bar_i J_i + Psi_i J-dot_i),
    S_bar_i = blkdiag(-S(I_i w_i), m_i S(w_i))                                 (44), (47)
    g_GP  = - sum J_D,i^T vec3(Ad(r_0^{c_i}) m_i g)                                   (50)
    tau_GP = sum J_i^T sigma_i,   sigma_i = [tau; f] (the swapped vec6, (49))          (48)

Here the only applied CoM wrench is the tool's (``Robot``'s ``w = [f; m]`` on the tool,
moment about the tool origin, moved to the last CoM); inverse dynamics
``tau = M_GP qdd + C_GP qd + g_GP - J_n^T sigma_tool``.

Remark 4.1 (52): ``(1/2) M-dot_GP - C_GP`` is skew, but it equals (misprint 001 Remark 4.1)

    A = sum [ (J-dot^T Psi J - J^T Psi J-dot)/2 - J^T S_bar J ]

(the printed ``-sum J^T S_bar J`` alone is wrong); ``remark41_matrix`` computes it.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.formulations.chain import project_body
from rbd_ros.formulations.dq import ad_frame, ad_frame_inv, cross, dqmul, frame, joint_pose, pose
from rbd_ros.formulations.dual_quaternion import DC, DG, DI, DK, DM, DS, dq_at, row3, row6, row9


@njit(cache=True)
def gauss_jacobians(dp: np.ndarray, q: np.ndarray, qd: np.ndarray, J: np.ndarray,
                    Jd: np.ndarray, F: np.ndarray) -> None:
    """Body-twist Jacobians ``J[i]`` and ``J-dot[i]`` (``(6, n)``, ``[w; v]`` in ``c_i``) and
    the CoM frames ``F[i] = (R 9, p 3)`` of ``x_{c_i}^0`` (``F[n]``: the tool frame)."""
    n = q.shape[0]
    Sw = np.empty((n, 6))  # joint screws in the world frame
    x = dq_at(dp, n, DK)  # x_{j_0}^0 = X[0]
    for i in range(n):
        # screw of joint i in the world: Ad(x_{j_{i-1}}^0) S_i
        Rj, pj = frame(x)
        s = ad_frame(Rj, pj, row6(dp, i, DS))
        for r in range(6):
            Sw[i, r] = s[r]
        S = row6(dp, i, DS)
        # x_{c_i}^0 = x_{j_{i-1}}^0 exp(S q) (1 + eps com/2)
        x = dqmul(x, dqmul(joint_pose((S[0], S[1], S[2]), (S[3], S[4], S[5]), q[i]),
                           pose((1.0, 0.0, 0.0, 0.0), row3(dp, i, DC))))
        R, p = frame(x)
        for r in range(9):
            F[i, r] = R[r]
        for r in range(3):
            F[i, 9 + r] = p[r]
        x = dqmul(x, dq_at(dp, i, DK))  # x_{j_i}^0 = x_{c_i}^0 K_i
    R, p = frame(x)
    for r in range(9):
        F[n, r] = R[r]
    for r in range(3):
        F[n, 9 + r] = p[r]
    J[:] = 0.0
    Jd[:] = 0.0
    for i in range(n):
        R = row9(F, i, 0)
        p = row3(F, i, 9)
        for j in range(i + 1):
            c = ad_frame_inv(R, p, row6(Sw, j, 0))
            for r in range(6):
                J[i, r, j] = c[r]
        # J-dot col j = -(sum_{j<k<=i} col_k qd_k) x col j
        v = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for j in range(i, -1, -1):
            col = (J[i, 0, j], J[i, 1, j], J[i, 2, j], J[i, 3, j], J[i, 4, j], J[i, 5, j])
            d = cross(col, v)
            for r in range(6):
                Jd[i, r, j] = d[r]
            v = (v[0] + col[0] * qd[j], v[1] + col[1] * qd[j], v[2] + col[2] * qd[j],
                 v[3] + col[3] * qd[j], v[4] + col[4] * qd[j], v[5] + col[5] * qd[j])


@njit(cache=True)
def jacobians(dp: np.ndarray, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``gauss_jacobians`` into fresh arrays ``(J, J-dot, F)``."""
    n = q.shape[0]
    J = np.empty((n, 6, n))
    Jd = np.empty((n, 6, n))
    F = np.empty((n + 1, 12))
    gauss_jacobians(dp, q, qd, J, Jd, F)
    return J, Jd, F


@njit(cache=True)
def body_matrices(dp: np.ndarray, i: int, J: np.ndarray, qd: np.ndarray, P: np.ndarray,
                  Sb: np.ndarray) -> None:
    """``Psi_i`` (31) and ``S_bar_i`` (44) at the body angular velocity ``w_i = J_w qd``."""
    m = dp[i, DM]
    n = qd.shape[0]
    w0 = 0.0
    w1 = 0.0
    w2 = 0.0
    for j in range(n):
        w0 += J[0, j] * qd[j]
        w1 += J[1, j] * qd[j]
        w2 += J[2, j] * qd[j]
    P[:] = 0.0
    Sb[:] = 0.0
    I = row9(dp, i, DI)
    for r in range(3):
        for c in range(3):
            P[r, c] = I[3 * r + c]
        P[3 + r, 3 + r] = m
    s0 = I[0] * w0 + I[1] * w1 + I[2] * w2
    s1 = I[3] * w0 + I[4] * w1 + I[5] * w2
    s2 = I[6] * w0 + I[7] * w1 + I[8] * w2
    # -S(s) and m S(w)
    Sb[0, 1] = s2
    Sb[0, 2] = -s1
    Sb[1, 0] = -s2
    Sb[1, 2] = s0
    Sb[2, 0] = s1
    Sb[2, 1] = -s0
    Sb[3, 4] = -m * w2
    Sb[3, 5] = m * w1
    Sb[4, 3] = m * w2
    Sb[4, 5] = -m * w0
    Sb[5, 3] = -m * w1
    Sb[5, 4] = m * w0


@njit(cache=True)
def gauss(dp: np.ndarray, q: np.ndarray, qd: np.ndarray, wrench: np.ndarray, use_wrench: bool,
          M: np.ndarray, C: np.ndarray, g: np.ndarray, fe: np.ndarray) -> None:
    """001 (46)-(50): ``M_GP``, ``C_GP``, ``g_GP``; the tool wrench's ``J_n^T sigma`` (48) into
    ``fe`` (zero if unused)."""
    n = q.shape[0]
    J, Jd, F = jacobians(dp, q, qd)
    P = np.empty((6, 6))
    Sb = np.empty((6, 6))
    PJ = np.empty((6, n))
    K = np.empty((6, n))
    M[:] = 0.0
    C[:] = 0.0
    g[:] = 0.0
    fe[:] = 0.0
    for i in range(n):
        body_matrices(dp, i, J[i], qd, P, Sb)
        project_body(J[i], Jd[i], P, Sb, M, C, i + 1, PJ, K)
        # (50): g_GP = - J_D^T (m R^T g)
        m = dp[i, DM]
        R = row9(F, i, 0)
        gx = m * (R[0] * dp[n, DG] + R[3] * dp[n, DG + 1] + R[6] * dp[n, DG + 2])
        gy = m * (R[1] * dp[n, DG] + R[4] * dp[n, DG + 1] + R[7] * dp[n, DG + 2])
        gz = m * (R[2] * dp[n, DG] + R[5] * dp[n, DG + 1] + R[8] * dp[n, DG + 2])
        for j in range(i + 1):
            g[j] -= J[i, 3, j] * gx + J[i, 4, j] * gy + J[i, 5, j] * gz
    if use_wrench:
        # sigma = [tau; f] at the last CoM, c_n axes: tau = R^T (m + (p_tool - p_c) x f)
        k = n - 1
        R = row9(F, k, 0)
        px = F[n, 9] - F[k, 9]
        py = F[n, 10] - F[k, 10]
        pz = F[n, 11] - F[k, 11]
        mx = wrench[3] + py * wrench[2] - pz * wrench[1]
        my = wrench[4] + pz * wrench[0] - px * wrench[2]
        mz = wrench[5] + px * wrench[1] - py * wrench[0]
        t0 = R[0] * mx + R[3] * my + R[6] * mz
        t1 = R[1] * mx + R[4] * my + R[7] * mz
        t2 = R[2] * mx + R[5] * my + R[8] * mz
        f0 = R[0] * wrench[0] + R[3] * wrench[1] + R[6] * wrench[2]
        f1 = R[1] * wrench[0] + R[4] * wrench[1] + R[7] * wrench[2]
        f2 = R[2] * wrench[0] + R[5] * wrench[1] + R[8] * wrench[2]
        for j in range(n):
            fe[j] = (J[k, 0, j] * t0 + J[k, 1, j] * t1 + J[k, 2, j] * t2 + J[k, 3, j] * f0
                     + J[k, 4, j] * f1 + J[k, 5, j] * f2)


def remark41_matrix(dp: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Remark 4.1's matrix, corrected (misprint 001 Remark 4.1): ``A = sum [(J-dot^T Psi J - J^T Psi
    J-dot)/2 - J^T S_bar J]``, which equals ``(1/2) M-dot_GP - C_GP`` and is skew."""
    n = q.shape[0]
    J, Jd, _ = jacobians(dp, q, qd)
    P = np.empty((6, 6))
    Sb = np.empty((6, 6))
    A = np.zeros((n, n))
    for i in range(n):
        body_matrices(dp, i, J[i], qd, P, Sb)
        A += 0.5 * (Jd[i].T @ P @ J[i] - J[i].T @ P @ Jd[i]) - J[i].T @ Sb @ J[i]
    return A
