"""Analytical derivatives of the dynamics of a chain on a moving root joint (jitted): the
free-flyer (``algorithm.floating_base``) and, by its columns, the planar root
(``algorithm.planar_base``).  Issue 42; the fixed-base derivation (CM18, docs/references.md)
is ``algorithm.rnea_derivatives``' docstring, which this one extends.

Tangent-space convention (Pinocchio's for ``JointModelFreeFlyer`` and ``JointModelPlanar``):
a change ``dq`` of the base configuration is the right perturbation ``T exp(dq^)`` of the base
pose (``dq = [dp; dth]`` in the base frame, linear first: ``Robot.integrate``), the base twist
``v_b = [v; w]`` is held in the base frame while q moves; so ``dtau/dq`` is ``nv x nv``.

Everything is computed in the inertial frame B that coincides with the base at this instant
(the fixed-base kernels' "world" is ``base_link``: ``forward_kinematics`` of the joints), where
gravity is ``g_b = R^T g``.  In B the root's six columns are the unit motions
``S_c = [0; e_c]`` (c < 3, linear) and ``[e_{c-3}; 0]`` (angular), about B's origin (motions
``[w; v]``, forces ``[n; f]``, ``spatial6``).  A right perturbation of the base along ``S_a``
turns every body *and every root column* with ``S_a x`` (``Ad_T exp(d e_a) e_b = S_b + d S_a x
S_b``), and the base's spatial velocity ``v_0 = sum_c S_c v_c`` moves as ``S_a x v_0``, its
acceleration ``a_0 = [0; -g_b] + sum_c S_c a_c`` (``S-dot_c qd_c`` sums to ``v_0 x v_0 = 0``)
as ``S_a x a_0 + [0; -g_b] x S_a``.  So the root columns enter the fixed-base formulas with

    ``psi_a = 0``, ``beta_a = [0; -g_b] x S_a``      (the parent of the root is the world, at rest)

and one change in the velocity derivatives: ``da_k/dqd_a = S_a x v_k + chi_a`` with
``chi_a = (v_parent + v_own) x S_a``, i.e. ``chi_j = 2 psi_j`` on a 1-DoF joint and
``chi_a = v_0 x S_a`` on the root (a root rate moves the arm's ``psi_j = v_{j-1} x S_j`` through
``v_{j-1}`` but not the root's own acceleration).  With the composites ``Y^C``, ``B^C`` of the
bodies from the later of the two bodies on (``U_i = Y^C S_i``, ``W_i = B^C^T S_i``)::

    i on a body at or after j's:  dtau_i/dq_j = U_i . beta_j + W_i . psi_j,  dtau_i/dqd_j = U_i . chi_j + W_i . S_j
    i on a body before j's:       dtau_i/dq_j = S_i . (S_j x* F_j + Y^C_j beta_j + B^C_j psi_j)
                                  dtau_i/dqd_j = S_i . (B^C_j S_j + Y^C_j chi_j)

and the root block (both columns on the base body, each turning the other) takes the first
line for all 36 pairs.  The tool wrench (world axes in the caller, given here in B's axes,
where it is constant) enters as in ``rnea_derivatives``: ``F`` starts at ``-[m + p x f; f]``
and ``dtau_i/dq_j -= S_i . G_j`` for every pair (``G_j`` with the angular part of ``S_j``).

The planar root (``S_0 = [e_vx, e_vy, e_wz]``) is a sub-group: its derivatives are the rows and
columns 0, 1, 5 of the free-flyer's at the embedded state (``v_z = w_x = w_y = 0``, the same
for ``a``), ``g_b = Rz(yaw)^T g``.  Forward dynamics (003 (5.2)) as on the fixed base:
``dqdd/dx = -M^{-1} dtau/dx`` at ``qdd = FD(q, v, tau)``, ``dqdd/dtau = M^{-1}``.

Costs: the fixed-base kernel's, plus six root columns (a 6 x (6 + n) strip and a 6 x 6 block).
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from rbd_ros.algorithm.actuators import armature, viscous
from rbd_ros.algorithm.f8vector import bad_vector, f8vector
from rbd_ros.algorithm.first_use import one_signature
from rbd_ros.algorithm.floating_base import (
    aba_floating,
    bad_configuration,
    base_gravity,
    base_spatial_inertia,
)
from rbd_ros.algorithm.kinematics import forward_kinematics
from rbd_ros.algorithm.layout import WGP, WHEEL, vrow
from rbd_ros.algorithm.planar_base import aba_ground
from rbd_ros.algorithm.planar_base import base_gravity as planar_gravity
from rbd_ros.algorithm.rnea_derivatives import (
    NO_BODY,
    SOA,
    ZERO6,
    add_body,
    cholesky_factor,
    cholesky_solve_rows3,
    column_terms,
    finite_entries,
    forward_link,
    link_body,
    soa_at,
    tool_force,
    wrench_column,
)
from rbd_ros.algorithm.spatial6 import (
    CONTRACT,
    dot6,
    load3,
    motion_cross,
    scale6,
)


@njit(cache=True, inline="always")
def root_column(c: int) -> tuple[float, float, float, float, float, float]:
    """``S_c`` of the free-flyer in B (module docstring): c = 0..2 linear ``[0; e_c]``, 3..5
    angular ``[e_{c-3}; 0]``, as ``[w; v]``."""
    k = c + 3 if c < 3 else c - 3
    return (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0,
            1.0 if k == 3 else 0.0, 1.0 if k == 4 else 0.0, 1.0 if k == 5 else 0.0)


@njit(cache=True, inline="always")
def _on_column(c: int, X: tuple) -> float:
    """``S_c . X`` for a force ``X = [n; f]`` (``root_column``): its ``f_c`` (c < 3) or ``n_{c-3}``."""
    return X[c + 3] if c < 3 else X[c - 3]


@njit(cache=True, fastmath=CONTRACT)
def rnea_derivatives_root(mp: np.ndarray, ws: np.ndarray, qj: np.ndarray, g: np.ndarray, v: np.ndarray,
                          a: np.ndarray, wrench: np.ndarray, use_wrench: bool, actuators: bool,
                          dtau_dq: np.ndarray, dtau_dv: np.ndarray, M: np.ndarray) -> None:
    """``dtau/dq``, ``dtau/dv`` and ``M`` ((6 + n) x (6 + n) each, free-flyer layout) of the
    free-flyer RNEA at joint angles ``qj``, base-frame gravity ``g = g_b``, ``v``, ``a``
    (``[v_b; w_b; qd]``, ``[v-dot_b; w-dot_b; qdd]``), the tool wrench ``[f; m]`` in base axes
    (module docstring)."""
    n = qj.shape[0]
    rs = vrow(n) + SOA  # S rows; psi at rs + 6, beta at rs + 12 (joints only)
    forward_kinematics(mp, ws, qj)
    Ag = (0.0, 0.0, 0.0, -g[0], -g[1], -g[2])  # [0; -g_b]: the root's parent, the world
    V0 = (v[3], v[4], v[5], v[0], v[1], v[2])  # base twist as [w; v] about B's origin
    A0 = (a[3], a[4], a[5], a[0] - g[0], a[1] - g[1], a[2] - g[2])
    V, A = V0, A0
    for i in range(n):
        V, A = forward_link(mp, ws, rs, i, V, A, v[6 + i], a[6 + i])
    # the root columns' beta_c = [0; -g_b] x S_c and chi_c = v_0 x S_c, once
    BC = (motion_cross(Ag, root_column(0)), motion_cross(Ag, root_column(1)), motion_cross(Ag, root_column(2)),
          motion_cross(Ag, root_column(3)), motion_cross(Ag, root_column(4)), motion_cross(Ag, root_column(5)))
    CC = (motion_cross(V0, root_column(0)), motion_cross(V0, root_column(1)), motion_cross(V0, root_column(2)),
          motion_cross(V0, root_column(3)), motion_cross(V0, root_column(4)), motion_cross(V0, root_column(5)))
    c = NO_BODY
    if use_wrench:
        c = (0.0, c[1], c[2], c[3], c[4], c[5], tool_force(ws, n, wrench))
    for i in range(n - 1, -1, -1):
        mi, hi, Ii, Vi, Ai = link_body(ws, i)
        c = add_body(c, mi, hi, Ii, Vi, Ai)
        U, W, dFdq, dFdqd = column_terms(c, soa_at(ws, rs, i), soa_at(ws, rs + 6, i), soa_at(ws, rs + 12, i))
        U2 = scale6(U, 2.0)
        r = 6 + i
        for j in range(i + 1):  # joints j <= i
            Sj = soa_at(ws, rs, j)
            pj = soa_at(ws, rs + 6, j)
            dtau_dq[r, 6 + j] = dot6(U, soa_at(ws, rs + 12, j)) + dot6(W, pj)
            dtau_dv[r, 6 + j] = dot6(U2, pj) + dot6(W, Sj)
            M[r, 6 + j] = dot6(U, Sj)
        for col in range(6):  # the root's columns (a body before i): psi_c = 0; U . S_c = U's entry
            dtau_dq[r, col] = dot6(U, BC[col])
            dtau_dv[r, col] = dot6(U, CC[col]) + _on_column(col, W)
            M[r, col] = _on_column(col, U)
        for k in range(i):  # joints k < i: the upper triangle
            Sk = soa_at(ws, rs, k)
            dtau_dq[6 + k, r] = dot6(Sk, dFdq)
            dtau_dv[6 + k, r] = dot6(Sk, dFdqd)
            M[6 + k, r] = M[r, 6 + k]
        for col in range(6):  # the root's rows (a body before i)
            dtau_dq[col, r] = _on_column(col, dFdq)
            dtau_dv[col, r] = _on_column(col, dFdqd)
            M[col, r] = M[r, col]
    # the base body, then the root block (every pair: the columns turn each other)
    mb, hb, Ib = base_spatial_inertia(mp, n)
    c = add_body(c, mb, hb, Ib, V0, A0)
    for col in range(6):
        Sc = root_column(col)
        U, W, _, _ = column_terms(c, Sc, ZERO6, ZERO6)
        for d in range(6):
            dtau_dq[col, d] = dot6(U, BC[d])
            dtau_dv[col, d] = dot6(U, CC[d]) + _on_column(d, W)
            M[col, d] = _on_column(d, U)
    if use_wrench:  # the wrench's point moves, its axes do not (rnea_derivatives)
        p = load3(ws, n, WGP)
        for j in range(6 + n):
            G = wrench_column(p, wrench, root_column(j) if j < 6 else soa_at(ws, rs, j - 6))
            for i in range(6 + n):
                dtau_dq[i, j] -= dot6(root_column(i) if i < 6 else soa_at(ws, rs, i - 6), G)
    if actuators:  # 003 (6.16)-(6.17), as rnea_derivatives
        for i in range(n):
            M[6 + i, 6 + i] += armature(mp, i)
            dtau_dv[6 + i, 6 + i] += viscous(mp, i, 1.0)



@njit(cache=True, fastmath=CONTRACT)
def floating_derivatives(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, x: np.ndarray,
                         forward: bool, out: np.ndarray) -> bool:
    """A floating base's ``(dtau/dq, dtau/dv, M)`` at ``a = x`` into ``out[0:3]`` or, ``forward``,
    ``(dqdd/dq, dqdd/dv, M^{-1})`` at ``tau = x`` (``aba_floating``'s ``qdd``, then
    ``-M^{-1}`` times the first two by the Cholesky factor ``M = L L^T`` held in ``out[3]``,
    ``rnea_derivatives.cholesky_solve_rows3``); ``out`` is ``(4, nv, nv)``, ``out[3]`` scratch
    (``qdd`` and ``g_b`` first).  ``False`` when M is not positive definite."""
    nv = v.shape[0]
    g = out[3, 1, :3]
    g[0], g[1], g[2] = base_gravity(mp, q)
    a = x
    if forward:
        a = out[3, 0]
        aba_floating(mp, ws, q, v, x, False, a)
    rnea_derivatives_root(mp, ws, q[7:], g, v, a, g, False, False, out[0], out[1], out[2])  # (g: the unused wrench)
    return forward_solve(out, nv) if forward else True


@njit(cache=True, fastmath=CONTRACT)
def forward_solve(out: np.ndarray, nv: int) -> bool:
    """``out[0:3] = (dtau/dq, dtau/dv, M)`` -> ``(-M^{-1} dtau/dq, -M^{-1} dtau/dv, M^{-1})``
    by the Cholesky factor ``M = L L^T`` held in ``out[3]``; ``False`` when M is not positive
    definite."""
    L, Minv = out[3], out[2]
    for i in range(nv):
        for j in range(nv):
            L[i, j] = Minv[i, j]
    if not cholesky_factor(L, 0, nv):
        return False
    for i in range(nv):
        for j in range(nv):
            Minv[i, j] = 1.0 if i == j else 0.0
    cholesky_solve_rows3(L, 0, nv, Minv, out[0], out[1])  # M^{-1}, -M^{-1} dtau/dq, -M^{-1} dtau/dv
    return True


@njit(cache=True, inline="always")
def _planar_column(i: int) -> int:
    """The free-flyer's column of the planar root's coordinate i (v_x, v_y, w_z: 0, 1, 5)."""
    return i if i < 2 else (5 if i == 2 else i + 3)


@njit(cache=True, fastmath=CONTRACT)
def planar_derivatives(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, x: np.ndarray,
                       forward: bool, full: np.ndarray, out: np.ndarray) -> bool:
    """``floating_derivatives`` for a planar base (``q = [x, y, yaw, joints]``): the free-flyer's
    derivatives at the embedded state into ``full`` (``(4, 6 + n, 6 + n)``; ``full[3]`` holds
    the embedded ``v``, ``a`` and ``g_b``), their rows and columns 0, 1, 5, 6.. into ``out``
    (``(4, 3 + n, 3 + n)``; module docstring); forward: ``aba_ground``'s ``qdd`` at ``tau = x``."""
    nv = v.shape[0]
    nf = nv + 3
    V, A, g = full[3, 0], full[3, 1], full[3, 2]
    g[0], g[1], g[2] = planar_gravity(mp, q[2])
    a = x
    if forward:
        a = out[3, 0]
        aba_ground(mp, ws, q, v, x[0], x[1], x[2], x[3:], False, a)
    for i in range(nf):
        V[i] = 0.0
        A[i] = 0.0
    for i in range(nv):
        V[_planar_column(i)] = v[i]
        A[_planar_column(i)] = a[i]
    rnea_derivatives_root(mp, ws, q[3:], g, V, A, g, False, False, full[0], full[1], full[2])
    for k in range(3):
        for i in range(nv):
            r = _planar_column(i)
            for j in range(nv):
                out[k, i, j] = full[k, r, _planar_column(j)]
    return forward_solve(out, nv) if forward else True

# ---- the checked single-state entry point (``robot.derivatives``' fast path for a floating
# base), as ``rnea_derivatives``': ``mw`` (``data.model_workspace``), ``f8vector`` states,
# compiled on first use, no NRT; 0 = done, 1 = an argument is not what it must be (lengths,
# finite, a unit quaternion, the output's shape), 2 = M singular or a result not finite: the
# caller's full path then names the cause.
@one_signature(types.int64(types.float64[:, ::1], f8vector, f8vector, f8vector, types.boolean,
                           types.float64[:, :, ::1]), cache=True, _nrt=False)
def floating_derivatives_entry(mw, q, v, x, forward, out):  # typed by the signature
    n = int(mw[0, 0])
    mp, ws = mw[1:n + 4], mw[n + 4:]
    q, v, x = q[:], v[:], x[:]
    nv = n + 6
    if (bad_configuration(mp, q) or bad_vector(v, nv) or bad_vector(x, nv)
            or out.shape[0] != 4 or out.shape[1] != nv or out.shape[2] != nv):
        return 1
    if not floating_derivatives(mp, ws, q, v, x, forward, out):
        return 2
    return 0 if finite_entries(out[:3]) else 2


@one_signature(types.int64(types.float64[:, ::1], f8vector, f8vector, f8vector, types.boolean,
                           types.float64[:, :, ::1], types.float64[:, :, ::1], types.float64), cache=True, _nrt=False)
def planar_derivatives_entry(mw, q, v, x, forward, full, out, max_yaw):
    """``floating_derivatives_entry`` for a planar base: 1 also for ``|yaw| > max_yaw``
    (``bases.root_joint.MAX_YAW``, whose check in ``robot.mobile`` names it) and, ``forward``,
    for a diff drive's model (its wheels: its constrained forward dynamics differ; its inverse
    dynamics' derivatives are the planar ones, projected by ``robot.diff_drive_derivatives``)."""
    n = int(mw[0, 0])
    mp, ws = mw[1:n + 4], mw[n + 4:]
    q, v, x = q[:], v[:], x[:]
    nv = n + 3
    if (bad_vector(q, nv) or bad_vector(v, nv) or bad_vector(x, nv) or abs(q[2]) > max_yaw
            or (forward and mp[n + 2, WHEEL] > 0.0)
            or full.shape[0] != 4 or full.shape[1] != nv + 3 or full.shape[2] != nv + 3
            or out.shape[0] != 4 or out.shape[1] != nv or out.shape[2] != nv):
        return 1
    if not planar_derivatives(mp, ws, q, v, x, forward, full, out):
        return 2
    return 0 if finite_entries(out[:3]) else 2


__all__ = ["floating_derivatives", "floating_derivatives_entry", "forward_solve", "planar_derivatives",
           "planar_derivatives_entry", "rnea_derivatives_root", "root_column"]
