"""Dual-quaternion Newton-Euler (dqNE), 001 (15)-(30), for revolute, prismatic and helical
joints with an end-effector wrench (algebra: ``formulations.dq``).

Frames (001 §3.2, on a ``chain.Chain``): body i has its CoM frame ``c_i`` (body axes, origin
at the CoM) and the joint frame ``j_{i-1}`` on joint i's axis; ``c_0 = F_0`` is the world.
Constant ``K_i = x_{j_i}^{c_i}`` (CoM of body i -> next joint frame; ``K_{-1} = X[0]``), and
joint-dependent ``y_i = x_{c_i}^{j_{i-1}}(q_i) = exp(S_i q_i) (1 + eps com_i / 2)``; then
``x_{c_i}^{c_{i-1}} = K_{i-1} y_i``.

Forward, i = 1..n (``xi_0 = xi-dot_0 = 0``)::

    xi_i = Ad(x_{c_{i-1}}^{c_i}) xi_{i-1} + Ad(x_{j_{i-1}}^{c_i}) S_i qd_i                    (19)
    xi-dot_i = Ad(x_{c_{i-1}}^{c_i}) xi-dot_{i-1} + Ad(x_{j_{i-1}}^{c_i}) S_i qdd_i
               + xi_{c_i,c_{i-1}}^{c_i} x Ad(x_{c_{i-1}}^{c_i}) xi_{i-1},                       (20)
    xi_{c_i,c_{i-1}}^{c_i} = -Ad(x_{j_{i-1}}^{c_i}) S_i qd_i                                    (21)
    f_i = m_i (D(xi-dot) + P(xi) x D(xi)),  tau_i = I_i P(xi-dot) + P(xi) x I_i P(xi)        (25)-(26)
    zeta_{c_i} = (f_i + eps tau_i) - m_i g^{c_i}                                                (24)

(``D(xi-dot)`` is not the classical CoM acceleration: misprint 001 (22)-(23)).  Joint twists of
001 Table 1 are ``S_i qd_i`` with ``S = l`` (revolute), ``eps l`` (prismatic), ``(1 + eps h) l``
(helical); their derivatives ``S_i qdd_i`` (after (21), where the axis is joint i's own,
``l_{j_{i-1}}``, not the printed ``l_{j_i}``: misprint 001 (21)).  Gravity in the CoM frame is carried
down the chain, ``g^{c_i} = Ad(r_{c_{i-1}}^{c_i}) g^{c_{i-1}}`` (= ``Ad(r_0^{c_i}) g``).

Backward, i = n..1 (``zeta_{n+1}``: the wrench the end effector exerts on the environment, in
the tool frame ``j_n``; footnote 6 leaves the sign open; ours: the robot supplies it):

    zeta_i = Ad(y_i) (zeta_{c_i} + Ad(K_i) zeta_{i+1})                                         (29)

(001 writes ``Ad(x_{c_i}^{j_{i-1}}) zeta_{c_i} + Ad(x_{j_i}^{j_{i-1}}) zeta_{i+1}``: the same by
linearity of Ad, one adjoint fewer).  Generalized force: the dual part of
``<zeta_i, S_i>`` (30): revolute ``<tau, l>``, prismatic ``<f, l>``, helical
``<tau, l> + h <f, l>`` (001 gives no helical force: misprint 001 Table 1, helical).

The tool wrench of ``Robot`` (``w = [f; m]`` on the tool by the environment, world, moment
about the tool origin) gives ``zeta_{n+1} = -(R_tool^T f + eps R_tool^T m)``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.formulations.chain import Chain
from rbd_ros.formulations.dq import (
    ad_frame,
    ad_frame_inv,
    cross,
    dqmul,
    frame,
    inner,
    joint_pose,
    pose,
    qmul,
    rotation_matrix,
    rtmul,
)
from rbd_ros.lie.so3 import rotation_to_quaternion

# packed columns (row i < n: body i; row n: K_{-1} = X[0] and gravity)
DS = 0  # screw [w; v] (6)
DK = 6  # K_i = x_{j_i}^{c_i} (8)
DR = 14  # its rotation matrix (9)
DP = 23  # its translation (3)
DC = 26  # CoM, body frame (3)
DM = 29  # mass
DI = 30  # inertia about the CoM, body axes (9)
DG = 39  # gravity, world (3), row n
ND = 42
NWS = 18  # workspace per body: zeta_c (6), frame of y_i (R 9, p 3)


def dq_of(T: np.ndarray) -> np.ndarray:
    """``vec8`` of the unit dual quaternion of a 4x4 pose (scalar-first, 001 §2)."""
    x, y, z, w = rotation_to_quaternion(T[:3, :3])
    return np.array(pose((w, x, y, z), tuple(T[:3, 3])))


def pack(chain: Chain) -> np.ndarray:
    """The packed dqNE model ``dp`` (``(n + 1, ND)``)."""
    n = chain.dof
    dp = np.zeros((n + 1, ND))
    for i in range(n + 1):
        if i < n:
            Tc = np.eye(4)
            Tc[:3, 3] = -chain.com[i]
            K = Tc @ chain.X[i + 1]
            row = i
            dp[i, DS:DS + 6] = chain.screw[i]
            dp[i, DC:DC + 3] = chain.com[i]
            dp[i, DM] = chain.mass[i]
            dp[i, DI:DI + 9] = chain.inertia[i].ravel()
        else:
            K = chain.X[0]
            row = n
            dp[n, DG:DG + 3] = chain.gravity
        dp[row, DK:DK + 8] = dq_of(K)
        dp[row, DR:DR + 9] = K[:3, :3].ravel()
        dp[row, DP:DP + 3] = K[:3, 3]
    return dp


@njit(cache=True, inline="always")
def row3(a: np.ndarray, i: int, c: int) -> tuple[float, float, float]:
    return (a[i, c], a[i, c + 1], a[i, c + 2])


@njit(cache=True, inline="always")
def row6(a: np.ndarray, i: int, c: int) -> tuple[float, float, float, float, float, float]:
    return (a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5])


@njit(cache=True, inline="always")
def row9(a: np.ndarray, i: int, c: int) -> tuple[float, float, float, float, float, float,
                                                   float, float, float]:
    return (a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5],
            a[i, c + 6], a[i, c + 7], a[i, c + 8])


@njit(cache=True, inline="always")
def dq_at(a: np.ndarray, i: int, c: int) -> tuple[float, float, float, float, float, float,
                                                 float, float]:
    return (a[i, c], a[i, c + 1], a[i, c + 2], a[i, c + 3], a[i, c + 4], a[i, c + 5],
            a[i, c + 6], a[i, c + 7])


@njit(cache=True)
def dqne(dp: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray,
         use_wrench: bool, ws: np.ndarray, tau: np.ndarray) -> None:
    """001 (19)-(30) (module docstring).  ``ws``: ``(n, NWS)`` scratch."""
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    dqne_seeded(dp, q, qd, qdd, zero, zero, row3(dp, q.shape[0], DG), (1.0, 0.0, 0.0, 0.0),
                wrench, use_wrench, ws, tau)


@njit(cache=True)
def dqne_seeded(dp: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                xi0: tuple, xid0: tuple, g0: tuple, r0: tuple, wrench: np.ndarray,
                use_wrench: bool, ws: np.ndarray, tau: np.ndarray) -> tuple:
    """dqNE of a chain carried by a moving body ``c_0`` (a mobile base, 001 §3.2): its body
    twist ``xi0`` and acceleration ``xid0`` (in ``c_0``), gravity ``g0`` in ``c_0`` axes and
    the rotation ``r0`` of ``c_0`` in the world (for the tool wrench); ``X[0]`` (row n of
    ``dp``) is then ``x_{j_0}^{c_0}``.  Returns ``zeta_1``, the wrench joint 1 transmits, in
    ``j_0`` (moment about its origin); ``dqne`` is the fixed base ``xi0 = xid0 = 0``."""
    n = q.shape[0]
    xi = xi0
    xid = xid0
    gx = g0[0]
    gy = g0[1]
    gz = g0[2]
    Kprev = dq_at(dp, n, DK)
    racc = r0
    for i in range(n):
        S = row6(dp, i, DS)
        # y_i = x_{c_i}^{j_{i-1}}(q_i);  z_i = x_{c_i}^{c_{i-1}} = K_{i-1} y_i
        y = dqmul(joint_pose((S[0], S[1], S[2]), (S[3], S[4], S[5]), q[i]),
                  pose((1.0, 0.0, 0.0, 0.0), row3(dp, i, DC)))
        z = dqmul(Kprev, y)
        Ry, py = frame(y)
        Rz, pz = frame(z)
        if use_wrench:
            racc = qmul(racc, (z[0], z[1], z[2], z[3]))
        # (19): xi_i = Ad(z^*) xi_{i-1} + Ad(y^*) S qd
        a = ad_frame_inv(Rz, pz, xi)
        s = ad_frame_inv(Ry, py, S)
        qdi = qd[i]
        qddi = qdd[i]
        xi = (a[0] + s[0] * qdi, a[1] + s[1] * qdi, a[2] + s[2] * qdi,
              a[3] + s[3] * qdi, a[4] + s[4] * qdi, a[5] + s[5] * qdi)
        # (20)-(21): xi-dot_i = Ad(z^*) xi-dot_{i-1} + Ad(y^*) S qdd + (-Ad(y^*) S qd) x a
        b = ad_frame_inv(Rz, pz, xid)
        c = cross(a, s)
        xid = (b[0] + s[0] * qddi + c[0] * qdi, b[1] + s[1] * qddi + c[1] * qdi,
               b[2] + s[2] * qddi + c[2] * qdi, b[3] + s[3] * qddi + c[3] * qdi,
               b[4] + s[4] * qddi + c[4] * qdi, b[5] + s[5] * qddi + c[5] * qdi)
        # g^{c_i} = R_z^T g^{c_{i-1}}
        gx, gy, gz = rtmul(Rz, gx, gy, gz)
        # (25)-(26), (24)
        m = dp[i, DM]
        wx = xi[0]
        wy = xi[1]
        wz = xi[2]
        fx = m * (xid[3] + wy * xi[5] - wz * xi[4] - gx)
        fy = m * (xid[4] + wz * xi[3] - wx * xi[5] - gy)
        fz = m * (xid[5] + wx * xi[4] - wy * xi[3] - gz)
        I = row9(dp, i, DI)
        lx = I[0] * wx + I[1] * wy + I[2] * wz
        ly = I[3] * wx + I[4] * wy + I[5] * wz
        lz = I[6] * wx + I[7] * wy + I[8] * wz
        ws[i, 0] = fx
        ws[i, 1] = fy
        ws[i, 2] = fz
        ws[i, 3] = I[0] * xid[0] + I[1] * xid[1] + I[2] * xid[2] + (wy * lz - wz * ly)
        ws[i, 4] = I[3] * xid[0] + I[4] * xid[1] + I[5] * xid[2] + (wz * lx - wx * lz)
        ws[i, 5] = I[6] * xid[0] + I[7] * xid[1] + I[8] * xid[2] + (wx * ly - wy * lx)
        for k in range(9):
            ws[i, 6 + k] = Ry[k]
        ws[i, 15] = py[0]
        ws[i, 16] = py[1]
        ws[i, 17] = py[2]
        Kprev = dq_at(dp, i, DK)
    zeta = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if use_wrench:
        # zeta_{n+1} in the tool frame: -(R_tool^T f, R_tool^T m), R_tool = R_{c_n} R_K
        Rc = rotation_matrix(racc)
        f = rtmul(Rc, wrench[0], wrench[1], wrench[2])
        mm = rtmul(Rc, wrench[3], wrench[4], wrench[5])
        RK = row9(dp, n - 1, DR)
        f = rtmul(RK, f[0], f[1], f[2])
        mm = rtmul(RK, mm[0], mm[1], mm[2])
        zeta = (-f[0], -f[1], -f[2], -mm[0], -mm[1], -mm[2])
    for i in range(n - 1, -1, -1):
        # (29): zeta_i = Ad(y_i) (zeta_{c_i} + Ad(K_i) zeta_{i+1})
        kz = ad_frame(row9(dp, i, DR), row3(dp, i, DP), zeta)  # not k: the loop index above
        zc = (ws[i, 0] + kz[0], ws[i, 1] + kz[1], ws[i, 2] + kz[2],
              ws[i, 3] + kz[3], ws[i, 4] + kz[4], ws[i, 5] + kz[5])
        zeta = ad_frame(row9(ws, i, 6), row3(ws, i, 15), zc)
        # (30): generalized force = D(<zeta_i, S_i>)
        tau[i] = inner(zeta, row6(dp, i, DS))[1]
    return zeta
