"""Kinematics: link frames, velocities and accelerations, Jacobians (jitted).

Sources: 003 §1.6 (MDH frames; misprint 003 (4.40)), (4.29)-(4.34) (velocity
and acceleration recursion, with (4.31)-(4.32) restored from (4.14)-(4.15): misprint
003 (4.31)-(4.32), docs/references.md),
002 (3.13)-(3.16) (Jacobian columns), 003 (1.34)-(1.37) (Euler-angle
analytic Jacobian).

All kernels take the packed model ``mp`` and a workspace ``ws`` (``rbd_ros.algorithm.layout``)
and write into the workspace or a caller-provided output; none allocates.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.layout import A0, AP, AR, ATYPE, VZERO, WCC, WCS, WGP, WGR, WP, WR, WS, WV, WVD, WW, WWD, vrow
from rbd_ros.algorithm.spatial6 import CONTRACT, add3, cross3, load3, mat3_vec, mdh_rot_t, point_acceleration, store3
from rbd_ros.algorithm.trig import sincos
from rbd_ros.lie.so3 import euler_zyz


@njit(cache=True, fastmath=CONTRACT)
def joint_angles(mp: np.ndarray, ws: np.ndarray, q: np.ndarray) -> None:
    """``cos, sin`` of each joint's total angle ``theta_i`` (offset + q_i for revolute joints)
    into ``ws[i, WCS:WCS+2]``, and the local origin ``^{i-1}p_i`` into ``ws[i, WP:WP+3]``.

    ``A_i``'s rotation is ``Rx(alpha) Rz(theta_0)`` (``mdh.mdh_transform``), so in ``mp`` its
    entries give ``cos theta_0 = AR[0]``, ``sin theta_0 = -AR[1]``, ``cos alpha = AR[8]``,
    ``sin alpha = -AR[5]``; the joint rotation is then
    ``^{i-1}R_i = Rx(alpha) Rz(theta)`` (003 §1.6), applied by ``spatial6.mdh_rot_t``/``mdh_rot`` with four numbers
    instead of nine."""
    n = q.shape[0]
    for i in range(n):
        c0 = mp[i, AR]
        s0 = -mp[i, AR + 1]
        if mp[i, ATYPE] == 0.0:
            s, c = sincos(q[i])  # polynomials, within an ulp of glibc (algorithm.trig)
            ws[i, WCS] = c0 * c - s0 * s
            ws[i, WCS + 1] = s0 * c + c0 * s
            for r in range(3):
                ws[i, WP + r] = mp[i, AP + r]
        else:
            ws[i, WCS] = c0
            ws[i, WCS + 1] = s0
            for r in range(3):
                ws[i, WP + r] = mp[i, AP + r] + mp[i, AR + 3 * r + 2] * q[i]


@njit(cache=True, inline="always")
def angles(mp: np.ndarray, ws: np.ndarray, i: int) -> tuple[float, float, float, float]:
    """``cos, sin`` of joint i's theta (after ``joint_angles``) and of its alpha."""
    return ws[i, WCS], ws[i, WCS + 1], mp[i, AR + 8], -mp[i, AR + 5]


@njit(cache=True)
def joint_transforms(mp: np.ndarray, ws: np.ndarray, q: np.ndarray) -> None:
    """``joint_angles``, plus the local rotations ``^{i-1}R_i = Rx(alpha) Rz(theta)`` into
    ``ws[i, WR:WR+9]`` (row-major), as 003 §1.6 writes them (``mdh.mdh_transform``)."""
    joint_angles(mp, ws, q)
    for i in range(q.shape[0]):
        c, s, ca, sa = angles(mp, ws, i)
        ws[i, WR] = c
        ws[i, WR + 1] = -s
        ws[i, WR + 2] = 0.0
        ws[i, WR + 3] = s * ca
        ws[i, WR + 4] = c * ca
        ws[i, WR + 5] = -sa
        ws[i, WR + 6] = s * sa
        ws[i, WR + 7] = c * sa
        ws[i, WR + 8] = ca


@njit(cache=True, inline="always")
def _compose(P: np.ndarray, prow: int, pr: int, pp: int, Lc: np.ndarray, lrow: int, lr: int,
             lp: int, ws: np.ndarray, orow: int) -> None:
    """``ws[orow, WGR/WGP] = P[prow] (R at pr, p at pp) * Lc[lrow] (R at lr, p at lp)``."""
    for r in range(3):
        p0 = P[prow, pr + 3 * r]
        p1 = P[prow, pr + 3 * r + 1]
        p2 = P[prow, pr + 3 * r + 2]
        for k in range(3):
            ws[orow, WGR + 3 * r + k] = (p0 * Lc[lrow, lr + k] + p1 * Lc[lrow, lr + 3 + k]
                                         + p2 * Lc[lrow, lr + 6 + k])
        ws[orow, WGP + r] = (P[prow, pp + r] + p0 * Lc[lrow, lp] + p1 * Lc[lrow, lp + 1]
                             + p2 * Lc[lrow, lp + 2])


@njit(cache=True)
def world_transforms(mp: np.ndarray, ws: np.ndarray, n: int) -> None:
    """World poses ``^W T_i = base ^0T_1 ... ^{i-1}T_i`` of frames 1..n into
    ``ws[i - 1, WGR/WGP]`` and of the tool (``^W T_n tool``) into ``ws[n, WGR/WGP]``;
    needs ``joint_transforms``."""
    _compose(mp, n, AR, AP, ws, 0, WR, WP, ws, 0)
    for i in range(1, n):
        _compose(ws, i - 1, WGR, WGP, ws, i, WR, WP, ws, i)
    _compose(ws, n - 1, WGR, WGP, mp, n + 1, AR, AP, ws, n)


@njit(cache=True)
def forward_kinematics(mp: np.ndarray, ws: np.ndarray, q: np.ndarray) -> None:
    """Local and world transforms of every link frame and of the tool (003 §1.6)."""
    joint_transforms(mp, ws, q)
    world_transforms(mp, ws, q.shape[0])


@njit(cache=True)
def link_poses(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out[k]`` (4x4) = world pose of frame k, k = 0 (base) .. n."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    for k in range(n + 1):
        for r in range(3):
            for c in range(3):
                out[k, r, c] = mp[n, AR + 3 * r + c] if k == 0 else ws[k - 1, WGR + 3 * r + c]
            out[k, r, 3] = mp[n, AP + r] if k == 0 else ws[k - 1, WGP + r]
            out[k, 3, r] = 0.0
        out[k, 3, 3] = 1.0


@njit(cache=True)
def link_poses_rows(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out[s]`` = :func:`link_poses` at ``q[s]``, for each row of ``q`` (S, n): (S, n + 1, 4, 4)."""
    for s in range(q.shape[0]):
        link_poses(mp, ws, q[s], out[s])


@njit(cache=True)
def tool_pose(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out`` (4x4) = world pose of the tool frame."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    for r in range(3):
        for c in range(3):
            out[r, c] = ws[n, WGR + 3 * r + c]
        out[r, 3] = ws[n, WGP + r]
        out[3, r] = 0.0
    out[3, 3] = 1.0


@njit(cache=True)
def tool_poses(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """``out[k]`` (4x4) = world pose of the tool at ``q[k]``, for each row of ``q`` (N, n)."""
    for k in range(q.shape[0]):
        tool_pose(mp, ws, q[k], out[k])


@njit(cache=True)
def frame_jacobian(mp: np.ndarray, ws: np.ndarray, n: int, frame: int, J: np.ndarray) -> None:
    """Geometric Jacobian (6 x n, rows [linear; angular], world frame) of the origin of
    ``frame`` (1..n link frames, n + 1 the tool, 0 the fixed base: zero) from the world
    transforms in ``ws``.  Column j (002 (3.15)-(3.16)): revolute ``[z_j x (p - p_j); z_j]``,
    prismatic ``[z_j; 0]``, zero for joints after ``frame``."""
    if frame == n + 1:
        trow = n
    else:
        trow = frame - 1
    last = min(frame, n)
    for j in range(n):
        if j >= last:
            for r in range(6):
                J[r, j] = 0.0
            continue
        zx = ws[j, WGR + 2]
        zy = ws[j, WGR + 5]
        zz = ws[j, WGR + 8]
        if mp[j, ATYPE] == 0.0:
            dx = ws[trow, WGP] - ws[j, WGP]
            dy = ws[trow, WGP + 1] - ws[j, WGP + 1]
            dz = ws[trow, WGP + 2] - ws[j, WGP + 2]
            J[0, j] = zy * dz - zz * dy
            J[1, j] = zz * dx - zx * dz
            J[2, j] = zx * dy - zy * dx
            J[3, j] = zx
            J[4, j] = zy
            J[5, j] = zz
        else:
            J[0, j] = zx
            J[1, j] = zy
            J[2, j] = zz
            J[3, j] = 0.0
            J[4, j] = 0.0
            J[5, j] = 0.0


@njit(cache=True)
def jacobian(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, frame: int, J: np.ndarray) -> None:
    """Geometric Jacobian of a frame at ``q`` (see ``frame_jacobian``)."""
    forward_kinematics(mp, ws, q)
    frame_jacobian(mp, ws, q.shape[0], frame, J)


@njit(cache=True)
def motion_subspace(mp: np.ndarray, ws: np.ndarray, i: int) -> None:
    """Joint i's spatial motion ``S_i = [z_i; p_i x z_i]`` (revolute) or ``[0; z_i]``
    (prismatic) in world coordinates at the world origin into ``ws[i, WS:WS+6]``: the
    Jacobian column of 002 (3.15)-(3.16) of the body point at the world
    origin.  Needs world transforms."""
    z = (ws[i, WGR + 2], ws[i, WGR + 5], ws[i, WGR + 8])  # z_i, world
    if mp[i, ATYPE] == 0.0:
        store3(ws, i, WS, z)
        store3(ws, i, WS + 3, cross3(load3(ws, i, WGP), z))  # p_i x z_i
    else:
        store3(ws, i, WS, (0.0, 0.0, 0.0))
        store3(ws, i, WS + 3, z)


@njit(cache=True)
def world_velocities(mp: np.ndarray, ws: np.ndarray, qd: np.ndarray) -> None:
    """Spatial velocities ``v_i = v_{i-1} + S_i qd_i`` (world, at the world origin; 003
    (4.12)-(4.13) and their linear counterparts) into ``ws[i, WV:WV+6]``, and ``S_i`` into
    ``ws[i, WS]``.  Needs world transforms."""
    for i in range(qd.shape[0]):
        motion_subspace(mp, ws, i)
        for k in range(6):
            prev = ws[i - 1, WV + k] if i > 0 else 0.0
            ws[i, WV + k] = prev + ws[i, WS + k] * qd[i]


@njit(cache=True, inline="always")
def com_velocity(ws: np.ndarray, k: int) -> tuple[float, float, float]:
    """World velocity of link k's centre of mass, ``c-dot = v_O + w x c``, after
    ``world_velocities`` and ``crba.link_com_inertia`` (``ws[k, WCC]``)."""
    return add3(load3(ws, k, WV + 3), cross3(load3(ws, k, WV), load3(ws, k, WCC)))


@njit(cache=True, fastmath=CONTRACT)
def velocity_acceleration_pass(mp: np.ndarray, ws: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                               gravity: bool) -> None:
    """Forward recursion of 003 (4.29)-(4.34) in frame i, after ``joint_angles``::

        w_i   = R^T w_{i-1} + z qd_i                                   (R joints, (4.29))
        wd_i  = R^T wd_{i-1} + (R^T w_{i-1}) x z qd_i + z qdd_i        (R joints, misprint 003 (4.31))
        vd_i  = R^T (vd_{i-1} + wd_{i-1} x p + w_{i-1} x (w_{i-1} x p))            (4.33)
              [+ 2 (R^T w_{i-1}) x z qd_i + z qdd_i for T joints]                  (4.34)

    with ``R = ^{i-1}R_i``, ``p = ^{i-1}p_i``.  The base starts at rest with
    ``vd_0 = -g`` (misprint 003 §4.5 step 1) when ``gravity`` is true, else ``vd_0 = 0``.
    Writes ``ws[i, WW/WWD/WVD]``.
    """
    vd0 = load3(mp, qd.shape[0] + 2, A0) if gravity else (0.0, 0.0, 0.0)
    # one inlined copy of the recursion (two, one per branch, doubled its compile time)
    velocity_acceleration_from(mp, ws, qd, qdd, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), vd0)


@njit(cache=True, inline="always")
def velocity_acceleration_from(mp: np.ndarray, ws: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                               w: tuple, wd: tuple, vd: tuple) -> None:
    """The recursion of ``velocity_acceleration_pass`` from a moving frame 0: angular velocity
    ``w``, angular acceleration ``wd`` and origin acceleration ``vd`` (gravity included as
    ``-g``) of frame 0, in frame 0 (a floating base, ``floating_base.rnea_floating``)."""
    for i in range(qd.shape[0]):
        cs = angles(mp, ws, i)  # R = ^{i-1}R_i = Rx(alpha) Rz(theta); x_i = R^T x_{i-1}
        u = point_acceleration(vd, wd, w, load3(ws, i, WP))  # vd_{i-1} + wd_{i-1} x p + w_{i-1} x (w_{i-1} x p)
        nw0, nw1, nw2 = mdh_rot_t(cs, w)  # R^T w_{i-1}
        a0, a1, a2 = mdh_rot_t(cs, wd)
        v0, v1, v2 = mdh_rot_t(cs, u)  # (4.33)
        qdi = qd[i]
        qddi = qdd[i]
        if mp[i, ATYPE] == 0.0:
            w = (nw0, nw1, nw2 + qdi)  # w_i = R^T w_{i-1} + z qd (4.29)
            wd = (a0 + nw1 * qdi, a1 - nw0 * qdi, a2 + qddi)  # + (R^T w_{i-1}) x z qd + z qdd (misprint 003 (4.31))
            vd = (v0, v1, v2)
        else:
            w = (nw0, nw1, nw2)
            wd = (a0, a1, a2)
            vd = (v0 + 2.0 * nw1 * qdi, v1 - 2.0 * nw0 * qdi, v2 + qddi)  # + 2 (R^T w_{i-1}) x z qd + z qdd (4.34)
        store3(ws, i, WW, w)
        store3(ws, i, WWD, wd)
        store3(ws, i, WVD, vd)


@njit(cache=True)
def jacobian_dot_times_qd(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray,
                          out: np.ndarray) -> None:
    """``J-dot(q, qd) qd`` of the tool's geometric Jacobian, world frame [linear; angular]:
    the tool's classical acceleration when ``qdd = 0`` and gravity is off (from the
    recursion of ``velocity_acceleration_pass``), ``a_t = vd_n + wd_n x p_t + w_n x (w_n x p_t)``.
    ``out`` has 6 entries."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    velocity_acceleration_pass(mp, ws, qd, ws[vrow(n) + VZERO, :n], False)
    k = n - 1
    wd = load3(ws, k, WWD)
    a_t = point_acceleration(load3(ws, k, WVD), wd, load3(ws, k, WW), load3(mp, n + 1, AP))  # frame n
    out[0], out[1], out[2] = mat3_vec(ws, k, WGR, a_t)  # world axes
    out[3], out[4], out[5] = mat3_vec(ws, k, WGR, wd)


@njit(cache=True)
def analytic_jacobian(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, J: np.ndarray,
                      eta: np.ndarray) -> bool:
    """Analytic Jacobian of the tool, rows [p-dot; eta-dot] with Z-Y-Z Euler angles ``eta``
    (written to ``eta``): ``J = diag(I_3, Omega^{-1}(phi, theta)) J_omega`` inverting
    003 (1.37), with ``Omega`` of (1.34) and its inverse (1.35) in closed form:

        theta-dot = -s_phi w_x + c_phi w_y
        psi-dot   = (c_phi w_x + s_phi w_y) / s_theta
        phi-dot   = w_z - c_theta psi-dot

    Returns False (and leaves the angular rows as ``J_omega``'s) where ``s_theta ~ 0``."""
    n = q.shape[0]
    jacobian(mp, ws, q, n + 1, J)
    R = np.empty((3, 3))  # tiny; this kernel is not in a hot loop
    for r in range(3):
        for c in range(3):
            R[r, c] = ws[n, WGR + 3 * r + c]
    euler_zyz(R, eta)
    cph = np.cos(eta[0])
    sph = np.sin(eta[0])
    cth = np.cos(eta[1])
    sth = np.sin(eta[1])
    if abs(sth) < 1e-9:
        return False
    for j in range(n):
        wx = J[3, j]
        wy = J[4, j]
        wz = J[5, j]
        psid = (cph * wx + sph * wy) / sth
        J[4, j] = -sph * wx + cph * wy
        J[5, j] = psid
        J[3, j] = wz - cth * psid
    return True
