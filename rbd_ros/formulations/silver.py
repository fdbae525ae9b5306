"""Silver's angular-velocity Lagrangian, 002 (3.1)-(3.16): the 3x3 form, which equals
Newton-Euler (002 §3.2), as an O(n) recursion in world coordinates.

Kinetic energy (3.1) ``K = sum (1/2) m_i v_i^2 + (1/2) w_i . I_i . w_i``; with the
identities (3.4)-(3.7) and the corrected (3.10) (``dw_i/dqd_j``, not ``dw_i/dq_j``:
misprint 002 (3.10)) Lagrange's equations become (3.11)-(3.12)

    tau_j = sum_{i >= j} ( F_i . dv_i/dqd_j + N_i . dw_i/dqd_j ),
    F_i = m_i v-dot_i,   N_i = I_i w-dot_i + w_i x (I_i w_i),

with the partial velocities (3.15)-(3.16) of a joint screw ``[z_j; u_j]`` (world; revolute
``[z; 0]``, prismatic ``[0; z]``, helical ``[z; h z]``), axis through ``o_j``:
``dw_i/dqd_j = z_j``, ``dv_i/dqd_j = z_j x (c_i - o_j) + u_j``.  Summing over ``i`` from
the tip (the "additional link" of 002 §3.2 carries the tool load) gives

    f_j = F_j + f_{j+1},   n_j = N_j + (c_j - o_j) x F_j + n_{j+1} + (o_{j+1} - o_j) x f_{j+1},
    tau_j = z_j . n_j + u_j . f_j.

Forward (``w_0 = w-dot_0 = 0``, origin acceleration ``a_0 = -g``: gravity as base
acceleration, misprint 002 (1.2))::

    w_j = w_{j-1} + z_j qd_j,   w-dot_j = w-dot_{j-1} + w_{j-1} x z_j qd_j + z_j qdd_j
    a_j = a_{j-1} + w-dot_{j-1} x r + w_{j-1} x (w_{j-1} x r) + 2 w_{j-1} x u_j qd_j + u_j qdd_j
          (r = o_j - o_{j-1}; for a helical joint the rotation part is that of a revolute)
    v-dot_j = a_j + w-dot_j x (c_j - o_j) + w_j x (w_j x (c_j - o_j))

Tool wrench ``w = [f; m]`` (world, on the tool, moment about the tool origin ``o_{n+1}``):
``f_{n+1} = -f``, ``n_{n+1} = -m``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.formulations.chain import KC, KG, KI, KM, KS, KX, joint_transform, mm4


@njit(cache=True)
def silver(pk: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray,
           use_wrench: bool, tau: np.ndarray) -> None:
    """002 (3.11)-(3.16) as the O(n) recursion of the module docstring."""
    n = q.shape[0]
    st = np.empty((n + 1, 24))  # per body: o(3) c(3) z(3) u(3) F(3) N(3); row n: tool origin
    T = np.eye(4)
    A = np.empty((4, 4))
    R = np.empty((4, 4))
    wx = 0.0
    wy = 0.0
    wz = 0.0
    bx = 0.0  # w-dot
    by = 0.0
    bz = 0.0
    ax = -pk[n, KG]
    ay = -pk[n, KG + 1]
    az = -pk[n, KG + 2]
    ox = 0.0
    oy = 0.0
    oz = 0.0
    for j in range(n):
        joint_transform(pk, j, q[j], A)
        mm4(T, A, R)  # T <- T A
        T[:] = R
        # world axis z, screw translation u, CoM c
        zx = T[0, 0] * pk[j, KS] + T[0, 1] * pk[j, KS + 1] + T[0, 2] * pk[j, KS + 2]
        zy = T[1, 0] * pk[j, KS] + T[1, 1] * pk[j, KS + 1] + T[1, 2] * pk[j, KS + 2]
        zz = T[2, 0] * pk[j, KS] + T[2, 1] * pk[j, KS + 1] + T[2, 2] * pk[j, KS + 2]
        ux = T[0, 0] * pk[j, KS + 3] + T[0, 1] * pk[j, KS + 4] + T[0, 2] * pk[j, KS + 5]
        uy = T[1, 0] * pk[j, KS + 3] + T[1, 1] * pk[j, KS + 4] + T[1, 2] * pk[j, KS + 5]
        uz = T[2, 0] * pk[j, KS + 3] + T[2, 1] * pk[j, KS + 4] + T[2, 2] * pk[j, KS + 5]
        sx = T[0, 0] * pk[j, KC] + T[0, 1] * pk[j, KC + 1] + T[0, 2] * pk[j, KC + 2]
        sy = T[1, 0] * pk[j, KC] + T[1, 1] * pk[j, KC + 1] + T[1, 2] * pk[j, KC + 2]
        sz = T[2, 0] * pk[j, KC] + T[2, 1] * pk[j, KC + 1] + T[2, 2] * pk[j, KC + 2]
        # a_j = a_{j-1} + w-dot x r + w x (w x r) + 2 w x u qd + u qdd
        rx = T[0, 3] - ox
        ry = T[1, 3] - oy
        rz = T[2, 3] - oz
        cx = wy * rz - wz * ry
        cy = wz * rx - wx * rz
        cz = wx * ry - wy * rx
        qj = qd[j]
        qq = qdd[j]
        ax += (by * rz - bz * ry) + (wy * cz - wz * cy) + 2.0 * (wy * uz - wz * uy) * qj + ux * qq
        ay += (bz * rx - bx * rz) + (wz * cx - wx * cz) + 2.0 * (wz * ux - wx * uz) * qj + uy * qq
        az += (bx * ry - by * rx) + (wx * cy - wy * cx) + 2.0 * (wx * uy - wy * ux) * qj + uz * qq
        # w-dot_j = w-dot_{j-1} + w_{j-1} x z qd + z qdd;  w_j = w_{j-1} + z qd
        bx += (wy * zz - wz * zy) * qj + zx * qq
        by += (wz * zx - wx * zz) * qj + zy * qq
        bz += (wx * zy - wy * zx) * qj + zz * qq
        wx += zx * qj
        wy += zy * qj
        wz += zz * qj
        ox = T[0, 3]
        oy = T[1, 3]
        oz = T[2, 3]
        # v-dot_j of the CoM;  F = m v-dot,  N = I w-dot + w x I w  (I in world axes)
        cx = wy * sz - wz * sy
        cy = wz * sx - wx * sz
        cz = wx * sy - wy * sx
        m = pk[j, KM]
        Fx = m * (ax + (by * sz - bz * sy) + (wy * cz - wz * cy))
        Fy = m * (ay + (bz * sx - bx * sz) + (wz * cx - wx * cz))
        Fz = m * (az + (bx * sy - by * sx) + (wx * cy - wy * cx))
        # body-frame w, w-dot -> I, then back to world
        wbx = T[0, 0] * wx + T[1, 0] * wy + T[2, 0] * wz
        wby = T[0, 1] * wx + T[1, 1] * wy + T[2, 1] * wz
        wbz = T[0, 2] * wx + T[1, 2] * wy + T[2, 2] * wz
        abx = T[0, 0] * bx + T[1, 0] * by + T[2, 0] * bz
        aby = T[0, 1] * bx + T[1, 1] * by + T[2, 1] * bz
        abz = T[0, 2] * bx + T[1, 2] * by + T[2, 2] * bz
        lx = pk[j, KI] * wbx + pk[j, KI + 1] * wby + pk[j, KI + 2] * wbz
        ly = pk[j, KI + 3] * wbx + pk[j, KI + 4] * wby + pk[j, KI + 5] * wbz
        lz = pk[j, KI + 6] * wbx + pk[j, KI + 7] * wby + pk[j, KI + 8] * wbz
        Nbx = pk[j, KI] * abx + pk[j, KI + 1] * aby + pk[j, KI + 2] * abz + (wby * lz - wbz * ly)
        Nby = pk[j, KI + 3] * abx + pk[j, KI + 4] * aby + pk[j, KI + 5] * abz + (wbz * lx - wbx * lz)
        Nbz = pk[j, KI + 6] * abx + pk[j, KI + 7] * aby + pk[j, KI + 8] * abz + (wbx * ly - wby * lx)
        for r in range(3):
            st[j, r] = T[r, 3]
            st[j, 12 + r] = (Fx, Fy, Fz)[r]
            st[j, 15 + r] = T[r, 0] * Nbx + T[r, 1] * Nby + T[r, 2] * Nbz
        st[j, 3] = sx
        st[j, 4] = sy
        st[j, 5] = sz
        st[j, 6] = zx
        st[j, 7] = zy
        st[j, 8] = zz
        st[j, 9] = ux
        st[j, 10] = uy
        st[j, 11] = uz
    _backward(pk, st, T, n, wrench, use_wrench, tau)


@njit(cache=True, inline="always")
def _backward(pk: np.ndarray, st: np.ndarray, T: np.ndarray, n: int, wrench: np.ndarray, use_wrench: bool,
              tau: np.ndarray) -> None:
    """The backward sweep of ``silver`` over its per-body table ``st`` (``T``: the last link's
    world pose): link forces and moments, and ``tau_j = z . n_j + u . f_j``."""
    # tool origin o_{n+1} = T_n p_tool, and the load it carries
    for r in range(3):
        st[n, r] = (T[r, 0] * pk[n, KX + 3] + T[r, 1] * pk[n, KX + 7] + T[r, 2] * pk[n, KX + 11]
                    + T[r, 3])
    fx = 0.0
    fy = 0.0
    fz = 0.0
    nx = 0.0
    ny = 0.0
    nz = 0.0
    if use_wrench:
        fx = -wrench[0]
        fy = -wrench[1]
        fz = -wrench[2]
        nx = -wrench[3]
        ny = -wrench[4]
        nz = -wrench[5]
    for j in range(n - 1, -1, -1):
        # n_j = N_j + s x F_j + n_{j+1} + (o_{j+1} - o_j) x f_{j+1};  f_j = F_j + f_{j+1}
        px = st[j + 1, 0] - st[j, 0]
        py = st[j + 1, 1] - st[j, 1]
        pz = st[j + 1, 2] - st[j, 2]
        sx = st[j, 3]
        sy = st[j, 4]
        sz = st[j, 5]
        Fx = st[j, 12]
        Fy = st[j, 13]
        Fz = st[j, 14]
        nx += st[j, 15] + (sy * Fz - sz * Fy) + (py * fz - pz * fy)
        ny += st[j, 16] + (sz * Fx - sx * Fz) + (pz * fx - px * fz)
        nz += st[j, 17] + (sx * Fy - sy * Fx) + (px * fy - py * fx)
        fx += Fx
        fy += Fy
        fz += Fz
        # tau_j = z . n_j + u . f_j  (002 (3.15)-(3.16))
        tau[j] = st[j, 6] * nx + st[j, 7] * ny + st[j, 8] * nz + st[j, 9] * fx + st[j, 10] * fy + st[j, 11] * fz
