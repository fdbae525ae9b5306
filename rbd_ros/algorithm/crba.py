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

``crba`` takes that route (``crba_world``) for long chains and, up to ``LOCAL_MAX`` joints,
the same algorithm in the links' own MDH frames (``crba_local``: no world transforms; issue
32).  The floating and ground bases use the world-frame composites (``crba_from_transforms``).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from rbd_ros.algorithm.first_use import njit_no_nrt
from rbd_ros.algorithm.kinematics import angles, forward_kinematics, joint_angles, motion_subspace
from rbd_ros.algorithm.layout import (
    ATYPE,
    COM,
    MASS,
    MCOM,
    WCC,
    WCH,
    WCI,
    WCM,
    WGP,
    WGR,
    WICC,
    WP,
    WS,
    com_inertia,
)
from rbd_ros.algorithm.spatial6 import (
    CONTRACT,
    add3,
    dot6,
    inertia_motion,
    load3,
    load6,
    load_sym3,
    mat3_vec,
    mdh_force_to_parent,
    mdh_rot,
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


@njit(cache=True, inline="always")
def mdh_rot_sym(cs: tuple, I: tuple) -> tuple[float, float, float, float, float, float]:
    """Upper triangle of ``R I R^T`` for ``R = ^{i-1}R_i = Rx(alpha) Rz(theta)`` (``I``
    symmetric, upper triangle): about z by theta, then about x by alpha, 20 products instead of
    ``rotate_sym3``'s 54."""
    c, s, ca, sa = cs
    xx, xy, xz, yy, yz, zz = I
    cc, ss, cs2 = c * c, s * s, c * s
    # Rz I Rz^T: x' = c x - s y, y' = s x + c y
    xx1 = cc * xx - 2.0 * cs2 * xy + ss * yy
    yy1 = ss * xx + 2.0 * cs2 * xy + cc * yy
    xy1 = cs2 * (xx - yy) + (cc - ss) * xy
    xz1 = c * xz - s * yz
    yz1 = s * xz + c * yz
    # Rx (.) Rx^T: y' = ca y - sa z, z' = sa y + ca z
    aa, bb, ab = ca * ca, sa * sa, ca * sa
    return (xx1, ca * xy1 - sa * xz1, sa * xy1 + ca * xz1,
            aa * yy1 - 2.0 * ab * yz1 + bb * zz, ab * (yy1 - zz) + (aa - bb) * yz1,
            bb * yy1 + 2.0 * ab * yz1 + aa * zz)


#: chains up to this many joints take ``crba_local``, longer ones ``crba_world``: the local
#: form saves the world transforms (O(n)) but carries each column up the chain as a force
#: (~22 products per entry against ``S_i . F_j``'s 6), so it loses from ~30 joints
#: (interleaved, best of 21: local / world 0.40 at 6, 0.56 at 12, 0.52 at 24, 1.08 at 32,
#: 1.31 at 48 joints)
LOCAL_MAX = 28


@njit(cache=True)
def crba(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, M: np.ndarray) -> None:
    """Mass matrix M(q) (n x n) into ``M`` (``crba_local`` or ``crba_world``, ``LOCAL_MAX``)."""
    if q.shape[0] <= LOCAL_MAX:
        crba_local(mp, ws, q, M)
    else:
        crba_world(mp, ws, q, M)


@njit(cache=True)
def crba_world(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, M: np.ndarray) -> None:
    """Mass matrix M(q) (n x n) into ``M`` by composites in world coordinates (module
    docstring; ``crba_from_transforms``)."""
    forward_kinematics(mp, ws, q)
    crba_from_transforms(mp, ws, q.shape[0], M, 0)


@njit(cache=True, fastmath=CONTRACT)  # FMA fusion only (spatial6.CONTRACT)
def crba_local(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, M: np.ndarray) -> None:
    """Mass matrix M(q) (n x n) into ``M``, in the links' own frames (Featherstone's CRBA on
    the MDH structure, as ``rnea``): no world transforms.  The composite inertia of links
    i..n about frame i's origin, frame i axes, ``(m, h, I_O)``, from its child's by
    ``R = ^{i-1}R_i``, ``p = ^{i-1}p_i``: ``h' = R h + m p``,
    ``I' = R I R^T + m (|p|^2 E - p p^T) + 2 (p . Rh) E - p (Rh)^T - (Rh) p^T``.  Joint i's
    motion is ``e_z`` of frame i (angular for revolute, linear for prismatic), so
    ``F_j = I^C_j S_j`` is read off the composite (revolute ``[I_O e_z; e_z x h]``, prismatic
    ``[h x e_z; m e_z]``), carried to the parents as a force (``mdh_force_to_parent``), and
    ``M_ij`` is its z moment (revolute i) or z force (prismatic i) in frame i.  Same
    composites and ``M`` as ``crba_from_transforms`` to rounding (~1e-15 relative)."""
    n = q.shape[0]
    joint_angles(mp, ws, q)  # cos, sin of theta_i and ^{i-1}p_i
    m = 0.0
    h0 = h1 = h2 = 0.0
    I00 = I01 = I02 = I11 = I12 = I22 = 0.0
    for i in range(n - 1, -1, -1):
        if i < n - 1:  # the child's composite (frame i + 1) into frame i, about its origin
            cs = angles(mp, ws, i + 1)
            p0, p1, p2 = load3(ws, i + 1, WP)
            r0, r1, r2 = mdh_rot(cs, (h0, h1, h2))  # R h
            J00, J01, J02, J11, J12, J22 = mdh_rot_sym(cs, (I00, I01, I02, I11, I12, I22))
            pp = p0 * p0 + p1 * p1 + p2 * p2
            d = 2.0 * (p0 * r0 + p1 * r1 + p2 * r2)  # 2 p . Rh
            # I' = R I R^T + m (|p|^2 E - p p^T) + 2 (p . Rh) E - p Rh^T - Rh p^T
            I00 = J00 + m * (pp - p0 * p0) + d - 2.0 * p0 * r0
            I11 = J11 + m * (pp - p1 * p1) + d - 2.0 * p1 * r1
            I22 = J22 + m * (pp - p2 * p2) + d - 2.0 * p2 * r2
            I01 = J01 - m * p0 * p1 - p0 * r1 - r0 * p1
            I02 = J02 - m * p0 * p2 - p0 * r2 - r0 * p2
            I12 = J12 - m * p1 * p2 - p1 * r2 - r1 * p2
            h0 = r0 + m * p0  # h' = R h + m p
            h1 = r1 + m * p1
            h2 = r2 + m * p2
        # + link i itself: I_O = I_c + m (|c|^2 E - c c^T), h = m c (frame i)
        mi = mp[i, MASS]
        c = load3(mp, i, COM)
        hi = load3(mp, i, MCOM)
        L00, L01, L02, L11, L12, L22 = parallel_axis(com_inertia(mp, i), hi, c)
        m += mi
        h0 += hi[0]
        h1 += hi[1]
        h2 += hi[2]
        I00 += L00
        I01 += L01
        I02 += L02
        I11 += L11
        I12 += L12
        I22 += L22
        ws[i, WCM] = m  # the composite of links i..n, frame i (read below)
        store3(ws, i, WCH, (h0, h1, h2))
        store_sym3(ws, i, WCI, (I00, I01, I02, I11, I12, I22))
    for j in range(n):
        hj0, hj1, hj2 = load3(ws, j, WCH)
        if mp[j, ATYPE] == 0.0:  # revolute: F_j = [I_O e_z; e_z x h]
            f = (-hj1, hj0, 0.0)
            nm = (ws[j, WCI + 2], ws[j, WCI + 5], ws[j, WCI + 8])
            M[j, j] = nm[2]
        else:  # prismatic: F_j = [h x e_z; m e_z]
            f = (0.0, 0.0, ws[j, WCM])
            nm = (hj1, -hj0, 0.0)
            M[j, j] = f[2]
        for i in range(j - 1, -1, -1):  # F_j carried to frame i: M_ij = S_i . F_j
            f, nm = mdh_force_to_parent(angles(mp, ws, i + 1), load3(ws, i + 1, WP), f, nm)
            val = nm[2] if mp[i, ATYPE] == 0.0 else f[2]
            M[i, j] = val
            M[j, i] = val


@njit(cache=True, parallel=True)
def crba_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, M: np.ndarray) -> None:
    """``crba`` for each row of ``q`` (N x n) into ``M`` (N x n x n), ``prange`` over chunks."""
    N = q.shape[0]
    for c in prange(chunks):
        crba_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, M)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def crba_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, M: np.ndarray) -> None:
    """``crba`` for rows ``lo .. hi - 1`` on one workspace, one thread (``rnea.rnea_rows``)."""
    for k in range(lo, hi):
        crba(mp, ws, q[k], M[k])
