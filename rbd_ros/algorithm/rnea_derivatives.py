"""Analytical derivatives of inverse and forward dynamics (jitted): ``dtau/dq``, ``dtau/dqd``,
``M`` and ``dqdd/dq``, ``dqdd/dqd``, ``M^{-1}``, fixed base.

The derivation of CM18 (Carpentier and Mansard, docs/references.md; Pinocchio's
``computeRNEADerivatives``), written for a serial chain in world coordinates about the world
origin (motions ``[w; v]``, forces ``[n; f]``, ``spatial6``), RNEA in Featherstone's form:

* forward: ``v_i = v_{i-1} + S_i qd_i``, ``a_i = a_{i-1} + psi_i qd_i + S_i qdd_i`` with
  ``psi_i = v_{i-1} x S_i`` (``= S-dot_i``), ``a_0 = [0; -g]`` (misprint 003 §4.5 step 1);
  ``f_i = Y_i a_i + v_i x* Y_i v_i``, ``F_i = sum_{k >= i} f_k``, ``tau_i = S_i . F_i``;
* a change of ``q_j`` turns the bodies ``k >= j`` about joint j: their ``S_k``, ``Y_k`` move
  with ``S_j x``; ``v_k`` and ``a_k`` do too except for ``dv_k/dq_j - S_j x v_k = psi_j`` and
  ``da_k/dq_j - S_j x a_k = psi_j x v_k + beta_j``, ``beta_j = a_{j-1} x S_j + v_{j-1} x psi_j``
  (Pinocchio's ``dVdq``, ``dAdq``); so ``df_k/dq_j = S_j x* f_k + Y_k beta_j + B_k psi_j`` and
  ``df_k/dqd_j = B_k S_j + 2 Y_k psi_j`` with the body's Coriolis matrix
  ``B_k x = v_k x* Y_k x - Y_k (v_k x x) + x x* (Y_k v_k)`` (CM18's ``Y.variation(v)`` plus
  the cross matrix of the momentum);
* ``B_k = Y-dot_k + C(L_k)``: ``Y-dot_k = v_k x* Y_k - Y_k v_k x`` is symmetric and has the
  form of a spatial inertia of mass 0 (``inertia_rate``: first moment ``h-dot = m nu + w x h``,
  ``I-dot = [w]x I - I [w]x + 2 (nu . h) E - h nu^T - nu h^T``), ``C(L) x = x x* L`` is skew,
  ``L_k = Y_k v_k`` the momentum; the composites over ``k >= i`` are 15 numbers, not a 6 x 6;
* with the composites ``Y^C_i``, ``B^C_i = Y-dot^C_i + C(L^C_i)``, ``U_i = Y^C_i S_i``,
  ``W_i = B^C_i^T S_i = Y-dot^C_i S_i - S_i x* L^C_i`` (``i >= j``, the lower triangle and the
  diagonal; ``(S_j x S_i) . F_i`` cancels ``S_i . (S_j x* F_i)``)::

      dtau_i/dq_j  = U_i . beta_j + W_i . psi_j           dtau_i/dqd_j = 2 U_i . psi_j + W_i . S_j

  and for ``i < j`` (the upper triangle; ``S_i`` does not depend on ``q_j``)::

      dtau_i/dq_j  = S_i . (S_j x* F_j + Y^C_j beta_j + B^C_j psi_j)
      dtau_i/dqd_j = S_i . (B^C_j S_j + 2 Y^C_j psi_j)             M_ij = S_i . U_j

* the tool wrench ``w = [f; m]`` (``rnea``: world axes, moment about the tool origin ``p``)
  enters ``F`` as ``-[m + p x f; f]``, which does not turn with the bodies (only its point
  moves): ``dtau_i/dq_j -= S_i . G_j``, ``G_j = [p x (f x w_j) - w_j x m; -w_j x f]``
  (``w_j`` the angular part of ``S_j``; zero for a prismatic joint);
* actuators (003 (6.16)-(6.17)): ``M += diag(G^2 Jm)``, ``dtau/dqd += diag(B)``; the Coulomb
  term ``Tc sign(qd)`` has derivative 0 at ``qd != 0`` and none (a step) at ``qd = 0``: its
  derivative is returned as 0 there too;
* forward dynamics (003 (5.2)): ``qdd = FD(q, qd, tau)`` (by ``crba``, ``rnea.bias`` and the
  Cholesky factor of ``M``, which the derivatives need too), then at that ``qdd``
  ``dqdd/dq = -M^{-1} dtau/dq``, ``dqdd/dqd = -M^{-1} dtau/dqd``, ``dqdd/dtau = M^{-1}``
  (``M`` with the armature when asked, by a Cholesky factor ``M = L L^T``).

Costs: O(n) spatial products per joint plus six dot products of 6-vectors per pair ``i, j``
(the pairs read ``S``, ``psi``, ``beta`` as structure-of-arrays rows of the workspace's scratch
vectors, ``SOA``). Nothing is allocated; the workspace is ``layout``'s, as every kernel's.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange, types

from rbd_ros.algorithm.actuators import armature, friction, viscous
from rbd_ros.algorithm.crba import crba, link_world_inertia
from rbd_ros.algorithm.f8vector import bad_vector, f8vector
from rbd_ros.algorithm.first_use import njit_no_nrt, one_signature
from rbd_ros.algorithm.kinematics import forward_kinematics
from rbd_ros.algorithm.layout import GRAV, WA, WCH, WCI, WCM, WGP, WS, WV, mrow, vrow
from rbd_ros.algorithm.linalg import cholesky_substitute
from rbd_ros.algorithm.rnea import bias
from rbd_ros.algorithm.spatial6 import (
    CONTRACT,
    add3,
    add6,
    cross3,
    dot6,
    force_cross,
    inertia_motion,
    load3,
    load6,
    load_sym3,
    motion_cross,
    scale6,
    store6,
    sub3,
    sub6,
)

#: the first of the workspace's scratch rows (``layout.vrow``) holding ``S_j``, ``psi_j``,
#: ``beta_j`` as structure of arrays: row ``vrow(n) + SOA + 6 k + r`` is component r of
#: quantity k (0: S, 1: psi, 2: beta) for every joint j (row 0 is ``layout.VZERO``)
SOA = 1
#: the scratch row holding ``qdd = FD(q, qd, tau)`` in ``aba_derivatives`` (``fd_factor``)
QDD = SOA + 18
#: joints from which ``aba_derivatives`` multiplies by ``M^{-1}`` with BLAS (``np.dot``) instead
#: of two more Cholesky solves on rows (48 joints, one 48 x 48 product: 5.3 us against 12 us
#: for the solve, measured interleaved at load 6; below ~12 joints the call costs more than the
#: arithmetic).  BLAS is numpy's (OpenBLAS): give it one thread (``OPENBLAS_NUM_THREADS=1``, as
#: the tests and ``bench/bench_derivatives.py`` do) on a busy machine: at load 10 its threads
#: made the 48-joint derivatives 46 -> 78 us of CPU and 49 -> 260 us of wall time.  A
#: hand-written 4-row product (rows of B reused, or 4 x 8 register tiles) was slower than the
#: solves here (17-18 us a product, not vectorised well by numba)
BLAS_FROM = 12


@njit(cache=True, inline="always")
def inertia_rate(m: float, h: tuple, I: tuple, V: tuple) -> tuple[tuple, tuple]:
    """``Y-dot = V x* Y - Y V x`` of the spatial inertia ``Y = (m, h, I)`` (about the origin)
    moving with ``V = [w; nu]``: a spatial inertia of mass 0, ``(h-dot, I-dot)`` with
    ``h-dot = m nu + w x h`` and ``I-dot = A + A^T + 2 (nu . h) E - h nu^T - nu h^T``,
    ``A = [w]x I`` (module docstring)."""
    w0, w1, w2 = V[0], V[1], V[2]
    n0, n1, n2 = V[3], V[4], V[5]
    h0, h1, h2 = h
    I00, I01, I02, I11, I12, I22 = I
    a00 = w1 * I02 - w2 * I01  # A = [w]x I, column k = w x I[:, k]
    a10 = w2 * I00 - w0 * I02
    a20 = w0 * I01 - w1 * I00
    a11 = w2 * I01 - w0 * I12
    a21 = w0 * I11 - w1 * I01
    a01 = w1 * I12 - w2 * I11
    a02 = w1 * I22 - w2 * I12
    a12 = w2 * I02 - w0 * I22
    a22 = w0 * I12 - w1 * I02
    d = 2.0 * (n0 * h0 + n1 * h1 + n2 * h2)  # 2 nu . h
    Id = (2.0 * (a00 - h0 * n0) + d, a01 + a10 - h0 * n1 - n0 * h1, a02 + a20 - h0 * n2 - n0 * h2,
          2.0 * (a11 - h1 * n1) + d, a12 + a21 - h1 * n2 - n1 * h2, 2.0 * (a22 - h2 * n2) + d)
    hd = add3((m * n0, m * n1, m * n2), cross3((w0, w1, w2), h))  # h-dot = m nu + w x h
    return hd, Id


@njit(cache=True, inline="always")
def soa_at(ws: np.ndarray, r: int, j: int) -> tuple[float, float, float, float, float, float]:
    """The 6-vector stored as structure of arrays from row ``r`` (``SOA``), joint ``j``."""
    return ws[r, j], ws[r + 1, j], ws[r + 2, j], ws[r + 3, j], ws[r + 4, j], ws[r + 5, j]


@njit(cache=True, inline="always")
def _store_soa(ws: np.ndarray, r: int, j: int, x: tuple) -> None:
    """``soa_at(ws, r, j) = x``."""
    for k in range(6):
        ws[r + k, j] = x[k]


@njit(cache=True, inline="always")
def forward_link(mp: np.ndarray, ws: np.ndarray, rs: int, i: int, V: tuple, A: tuple, qd: float,
                 qdd: float) -> tuple[tuple, tuple]:
    """The forward pass at joint i from its parent's ``V = v_{i-1}``, ``A = a_{i-1}``: ``Y_i``
    and ``S_i`` (``link_world_inertia``), ``psi_i``, ``beta_i`` into the ``SOA`` rows from ``rs``,
    ``v_i``, ``a_i`` into ``ws[i, WV/WA]`` and returned (module docstring)."""
    link_world_inertia(mp, ws, i)  # Y_i about the world origin, S_i
    S = load6(ws, i, WS)
    psi = motion_cross(V, S)  # psi_i = v_{i-1} x S_i
    beta = add6(motion_cross(A, S), motion_cross(V, psi))  # beta_i = a_{i-1} x S_i + v_{i-1} x psi_i
    _store_soa(ws, rs, i, S)
    _store_soa(ws, rs + 6, i, psi)
    _store_soa(ws, rs + 12, i, beta)
    V = add6(V, scale6(S, qd))  # v_i = v_{i-1} + S_i qd_i
    A = add6(A, add6(scale6(psi, qd), scale6(S, qdd)))  # a_i = a_{i-1} + psi_i qd_i + S_i qdd_i
    store6(ws, i, WV, V)
    store6(ws, i, WA, A)
    return V, A


@njit(cache=True, inline="always")
def tool_force(ws: np.ndarray, n: int, wrench: np.ndarray) -> tuple[float, float, float, float, float, float]:
    """``-[m + p x f; f]``: the tool wrench ``[f; m]`` (moment about the tool origin ``p``) as
    the force the chain's last body starts ``F`` with."""
    f = (wrench[0], wrench[1], wrench[2])
    mo = add3((wrench[3], wrench[4], wrench[5]), cross3(load3(ws, n, WGP), f))
    return (-mo[0], -mo[1], -mo[2], -f[0], -f[1], -f[2])


@njit(cache=True, inline="always")
def add_body(c: tuple, m: float, h: tuple, I: tuple, V: tuple, A: tuple) -> tuple:
    """The composites ``c = (m, h, I, h-dot, I-dot, L, F)`` of the bodies after this one with
    the body ``Y = (m, h, I)`` moving with ``V``, ``A`` added: ``L += Y V``, ``F += Y A + V x*
    Y V``, ``Y-dot += inertia_rate``."""
    L = inertia_motion(m, h, I, V)  # L_i = Y_i v_i
    F = add6(c[6], add6(inertia_motion(m, h, I, A), force_cross(V, L)))  # += Y_i a_i + v_i x* L_i
    hd, Id = inertia_rate(m, h, I, V)  # Y-dot_i
    return c[0] + m, add3(c[1], h), add6(c[2], I), add3(c[3], hd), add6(c[4], Id), add6(c[5], L), F


@njit(cache=True, inline="always")
def link_body(ws: np.ndarray, i: int) -> tuple:
    """Link i's ``(m, h, I)`` about the world origin and its ``v_i``, ``a_i`` (``forward_link``)."""
    return ws[i, WCM], load3(ws, i, WCH), load_sym3(ws, i, WCI), load6(ws, i, WV), load6(ws, i, WA)


@njit(cache=True, inline="always")
def column_terms(c: tuple, S: tuple, psi: tuple, beta: tuple) -> tuple[tuple, tuple, tuple, tuple]:
    """At the composites ``c`` (``add_body``) of a column ``S`` with its ``psi``, ``beta``:
    ``U = Y^C S``, ``W = B^C^T S``, ``dF/dq = S x* F + Y^C beta + B^C psi`` and ``dF/dqd =
    B^C S + 2 Y^C psi`` (module docstring)."""
    m, h, I, hd, Id, L, F = c
    U = inertia_motion(m, h, I, S)  # U_i = Y^C_i S_i
    T = inertia_motion(0.0, hd, Id, S)  # Y-dot^C_i S_i
    X = force_cross(S, L)  # S_i x* L^C_i = C(L^C_i) S_i
    dFdqd = add6(add6(T, X), scale6(inertia_motion(m, h, I, psi), 2.0))  # B^C S_i + 2 Y^C psi_i
    dFdq = add6(add6(force_cross(S, F), inertia_motion(m, h, I, beta)),  # S x* F + Y^C beta
                add6(inertia_motion(0.0, hd, Id, psi), force_cross(psi, L)))  # + B^C psi
    return U, sub6(T, X), dFdq, dFdqd  # W_i = B^C_i^T S_i = T - X


@njit(cache=True, inline="always")
def wrench_column(p: tuple, wrench: np.ndarray, S: tuple) -> tuple[float, float, float, float, float, float]:
    """``G_j = [p x (f x w_j) - w_j x m; -w_j x f]`` of the tool wrench ``[f; m]`` at ``p`` and
    the column ``S_j`` (``w_j`` its angular part): ``dtau_i/dq_j -= S_i . G_j``."""
    f = (wrench[0], wrench[1], wrench[2])
    wj = (S[0], S[1], S[2])
    Gn = sub3(cross3(p, cross3(f, wj)), cross3(wj, (wrench[3], wrench[4], wrench[5])))
    Gf = cross3(wj, f)  # -(w_j x f), negated below
    return (Gn[0], Gn[1], Gn[2], -Gf[0], -Gf[1], -Gf[2])


ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
#: the composites of no body (``add_body``)
NO_BODY = (0.0, (0.0, 0.0, 0.0), ZERO6, (0.0, 0.0, 0.0), ZERO6, ZERO6, ZERO6)


@njit(cache=True, fastmath=CONTRACT)
def rnea_derivatives(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                     wrench: np.ndarray, use_wrench: bool, actuators: bool, dtau_dq: np.ndarray,
                     dtau_dqd: np.ndarray, M: np.ndarray) -> None:
    """``dtau/dq``, ``dtau/dqd`` and ``M = dtau/dqdd`` (n x n each) of ``rnea.rnea_full`` at
    ``(q, qd, qdd)`` with its tool wrench and actuator terms (module docstring)."""
    n = q.shape[0]
    rs = vrow(n) + SOA  # S rows; psi at rs + 6, beta at rs + 12
    forward_kinematics(mp, ws, q)
    g = n + 2
    V = ZERO6
    A = (0.0, 0.0, 0.0, -mp[g, GRAV], -mp[g, GRAV + 1], -mp[g, GRAV + 2])  # a_0 = [0; -g]
    for i in range(n):
        V, A = forward_link(mp, ws, rs, i, V, A, qd[i], qdd[i])
    # the composites of links i..n: Y^C (m, h, I), Y-dot^C (hd, Id), momentum L^C, force F
    F = tool_force(ws, n, wrench) if use_wrench else ZERO6  # -[m + p x f; f]: the environment's wrench on the tool
    c = (0.0, (0.0, 0.0, 0.0), ZERO6, (0.0, 0.0, 0.0), ZERO6, ZERO6, F)
    for i in range(n - 1, -1, -1):
        mi, hi, Ii, Vi, Ai = link_body(ws, i)
        c = add_body(c, mi, hi, Ii, Vi, Ai)
        S = soa_at(ws, rs, i)
        U, W, dFdq, dFdqd = column_terms(c, S, soa_at(ws, rs + 6, i), soa_at(ws, rs + 12, i))
        U2 = scale6(U, 2.0)
        for j in range(i + 1):  # row i, j <= i: the lower triangle and the diagonal
            Sj = soa_at(ws, rs, j)
            pj = soa_at(ws, rs + 6, j)
            dtau_dq[i, j] = dot6(U, soa_at(ws, rs + 12, j)) + dot6(W, pj)  # U_i . beta_j + W_i . psi_j
            dtau_dqd[i, j] = dot6(U2, pj) + dot6(W, Sj)  # 2 U_i . psi_j + W_i . S_j
            M[i, j] = dot6(U, Sj)  # M_ij = S_j . Y^C_i S_i
        for k in range(i):  # column i, k < i: the upper triangle
            Sk = soa_at(ws, rs, k)
            dtau_dq[k, i] = dot6(Sk, dFdq)
            dtau_dqd[k, i] = dot6(Sk, dFdqd)
            M[k, i] = M[i, k]
    if use_wrench:  # the wrench's point moves, its axes do not: dtau_i/dq_j -= S_i . G_j
        p = load3(ws, n, WGP)
        for j in range(n):
            G = wrench_column(p, wrench, soa_at(ws, rs, j))
            for i in range(n):
                dtau_dq[i, j] -= dot6(soa_at(ws, rs, i), G)
    if actuators:  # M += diag(G^2 Jm), dtau/dqd += diag(B) (003 (6.16)-(6.17)); Coulomb: 0
        for i in range(n):
            M[i, i] += armature(mp, i)
            dtau_dqd[i, i] += viscous(mp, i, 1.0)


@njit(cache=True, fastmath=CONTRACT)
def cholesky_factor(ws: np.ndarray, r0: int, n: int) -> bool:
    """``A = L L^T`` in place in the lower triangle of the SPD block ``ws[r0:r0 + n, :n]``
    (``linalg.cholesky_solve_inplace``'s factor, its dot products summed in four independent
    partial sums: four chains of dependent FMAs instead of one, ~3x faster at 48 joints);
    ``False`` if A is not positive definite."""
    for j in range(n):
        for i in range(j, n):  # L_ij = (A_ij - sum_{k < j} L_ik L_jk) / L_jj, L_jj = sqrt(A_jj - ...)
            s0 = s1 = s2 = s3 = 0.0
            k = 0
            while k + 4 <= j:
                s0 += ws[r0 + i, k] * ws[r0 + j, k]
                s1 += ws[r0 + i, k + 1] * ws[r0 + j, k + 1]
                s2 += ws[r0 + i, k + 2] * ws[r0 + j, k + 2]
                s3 += ws[r0 + i, k + 3] * ws[r0 + j, k + 3]
                k += 4
            while k < j:
                s0 += ws[r0 + i, k] * ws[r0 + j, k]
                k += 1
            v = ws[r0 + i, j] - ((s0 + s1) + (s2 + s3))
            if i == j:
                if not v > 0.0:
                    return False
                ws[r0 + j, j] = np.sqrt(v)
            else:
                ws[r0 + i, j] = v / ws[r0 + j, j]
    return True


@njit(cache=True, fastmath=CONTRACT)
def lower_inverse(ws: np.ndarray, r0: int, n: int, T: np.ndarray) -> None:
    """``T = L^{-1}`` (lower triangular, n x n) of the Cholesky factor in ``ws[r0:r0 + n, :n]``:
    forward substitution on the identity, row by row, only where ``T`` is not zero."""
    for i in range(n):
        for c in range(n):
            T[i, c] = 0.0
        T[i, i] = 1.0
        for k in range(i):  # T_i -= L_ik T_k (T_k is zero right of column k)
            lik = ws[r0 + i, k]
            for c in range(k + 1):
                T[i, c] -= lik * T[k, c]
        inv = 1.0 / ws[r0 + i, i]
        for c in range(i + 1):
            T[i, c] *= inv


@njit(cache=True, fastmath=CONTRACT)
def cholesky_solve_rows3(ws: np.ndarray, r0: int, n: int, A: np.ndarray, B: np.ndarray, C: np.ndarray) -> None:
    """``A <- (L L^T)^{-1} A``, ``B <- -(L L^T)^{-1} B``, ``C <- -(L L^T)^{-1} C`` (n x n each),
    forward then back substitution (``linalg.cholesky_substitute``) on whole rows, the three in
    the same loops: short chains, where the loop overhead, not the arithmetic, is the cost (7
    joints: ~0.35 us against three solves' ~0.65)."""
    for i in range(n):  # L Y = B
        for k in range(i):
            lik = ws[r0 + i, k]
            for c in range(n):
                A[i, c] -= lik * A[k, c]
                B[i, c] -= lik * B[k, c]
                C[i, c] -= lik * C[k, c]
        inv = 1.0 / ws[r0 + i, i]
        for c in range(n):
            A[i, c] *= inv
            B[i, c] *= inv
            C[i, c] *= inv
    for i in range(n - 1, -1, -1):  # L^T X = Y
        for k in range(i + 1, n):
            lki = ws[r0 + k, i]
            for c in range(n):  # B, C: rows k > i hold -X_k already, so + L_ki (-X_k)
                A[i, c] -= lki * A[k, c]
                B[i, c] += lki * B[k, c]
                C[i, c] += lki * C[k, c]
        inv = 1.0 / ws[r0 + i, i]
        for c in range(n):
            A[i, c] *= inv
            B[i, c] *= -inv  # -X_i = -(Y_i - sum_k L_ki X_k) / L_ii
            C[i, c] *= -inv


@njit(cache=True, fastmath=CONTRACT)
def fd_factor(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, actuators: bool,
              dtau_dq: np.ndarray, dtau_dqd: np.ndarray, M: np.ndarray) -> bool:
    """The first half of ``aba_derivatives``: the Cholesky factor ``L`` of ``M`` (with the
    armature when asked; into the workspace's matrix block, ``layout.mrow``), ``qdd = M^{-1}
    (tau - h [- B qd - Tc sign(qd)])`` with it (``crba`` + ``rnea.bias``: at 7 joints ~0.5 us
    against ABA's ~1.1 us, and the factor is needed anyway), and the derivatives of inverse
    dynamics at that ``qdd`` (``rnea_derivatives``; ``M`` again, as computed there); ``False``
    (outputs NaN) when ``M`` is not positive definite."""
    n = q.shape[0]
    r0 = mrow(n)
    qdd = ws[vrow(n) + QDD, :n]
    crba(mp, ws, q, M)
    bias(mp, ws, q, qd, qdd)  # qdd <- h(q, qd)
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
        if actuators:  # M + diag(G^2 Jm), tau - h - B qd - Tc sign(qd) (003 (6.16)-(6.17))
            qdd[i] -= friction(mp, i, qd[i])
            M[i, i] += armature(mp, i)
        for j in range(n):
            ws[r0 + i, j] = M[i, j]
    if not cholesky_factor(ws, r0, n):  # M = L L^T
        for i in range(n):
            for j in range(n):
                dtau_dq[i, j] = np.nan
                dtau_dqd[i, j] = np.nan
                M[i, j] = np.nan
        return False
    cholesky_substitute(ws, r0, n, qdd)  # qdd <- M^{-1} (tau - h ...)
    rnea_derivatives(mp, ws, q, qd, qdd, qdd, False, actuators, dtau_dq, dtau_dqd, M)  # (qdd: the unused wrench)
    return True


@njit(cache=True, fastmath=CONTRACT)
def aba_derivatives_solve(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                          actuators: bool, dqdd_dq: np.ndarray, dqdd_dqd: np.ndarray, Minv: np.ndarray) -> bool:
    """``aba_derivatives`` by three Cholesky solves on rows (short chains, ``BLAS_FROM``; no
    BLAS, so callable without numba's runtime)."""
    n = q.shape[0]
    if not fd_factor(mp, ws, q, qd, tau, actuators, dqdd_dq, dqdd_dqd, Minv):
        return False
    for i in range(n):
        for j in range(n):
            Minv[i, j] = 1.0 if i == j else 0.0
    cholesky_solve_rows3(ws, mrow(n), n, Minv, dqdd_dq, dqdd_dqd)  # M^{-1}, -M^{-1} dtau/dq, -M^{-1} dtau/dqd
    return True


@njit(cache=True, fastmath=CONTRACT)
def aba_derivatives(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                    actuators: bool, dqdd_dq: np.ndarray, dqdd_dqd: np.ndarray, Minv: np.ndarray) -> bool:
    """``dqdd/dq``, ``dqdd/dqd`` and ``M^{-1} = dqdd/dtau`` of ``forward_dynamics`` at
    ``(q, qd, tau)`` (module docstring); ``False`` (outputs NaN) when M is not positive definite.
    From ``BLAS_FROM`` joints ``M^{-1} = L^{-T} L^{-1}`` and the products by BLAS (needs numba's
    runtime), below by ``aba_derivatives_solve``."""
    n = q.shape[0]
    if n < BLAS_FROM:
        return aba_derivatives_solve(mp, ws, q, qd, tau, actuators, dqdd_dq, dqdd_dqd, Minv)
    if not fd_factor(mp, ws, q, qd, tau, actuators, dqdd_dq, dqdd_dqd, Minv):
        return False
    T = ws.reshape(-1)[:n * n].reshape((n, n))  # the link rows (free now) as an n x n scratch
    lower_inverse(ws, mrow(n), n, T)  # T = L^{-1}
    np.dot(T.T, T, Minv)  # M^{-1} = L^{-T} L^{-1} (BLAS dgemm)
    for X in (dqdd_dq, dqdd_dqd):
        for i in range(n):
            for j in range(n):
                T[i, j] = -X[i, j]
        np.dot(Minv, T, X)  # -M^{-1} dtau/dq, -M^{-1} dtau/dqd
    return True


@njit(cache=True, parallel=True)
def rnea_derivatives_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, qd: np.ndarray,
                           qdd: np.ndarray, wrench: np.ndarray, use_wrench: bool, actuators: bool,
                           dq: np.ndarray, dqd: np.ndarray, M: np.ndarray) -> None:
    """``rnea_derivatives`` for each row of ``q, qd, qdd`` (N x n) into (N, n, n) outputs,
    ``prange`` over ``chunks`` chunks of states (one workspace each, ``rnea.rnea_batch``)."""
    N = q.shape[0]
    for c in prange(chunks):
        rnea_derivatives_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, qd, qdd, wrench, use_wrench,
                              actuators, dq, dqd, M)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def rnea_derivatives_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, qd: np.ndarray,
                          qdd: np.ndarray, wrench: np.ndarray, use_wrench: bool, actuators: bool,
                          dq: np.ndarray, dqd: np.ndarray, M: np.ndarray) -> None:
    """``rnea_derivatives`` for rows ``lo .. hi - 1``, one thread (``rnea.rnea_rows``)."""
    for k in range(lo, hi):
        rnea_derivatives(mp, ws, q[k], qd[k], qdd[k], wrench, use_wrench, actuators, dq[k], dqd[k], M[k])


@njit(cache=True, parallel=True)
def aba_derivatives_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, qd: np.ndarray,
                          tau: np.ndarray, actuators: bool, dq: np.ndarray, dqd: np.ndarray,
                          Minv: np.ndarray) -> None:
    """``aba_derivatives`` for each row of ``q, qd, tau`` (N x n), ``prange`` over chunks."""
    N = q.shape[0]
    for c in prange(chunks):
        aba_derivatives_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, qd, tau, actuators, dq, dqd,
                             Minv)


@njit(cache=True)  # with NRT: aba_derivatives' BLAS products need it (rnea.rnea_rows has none)
def aba_derivatives_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, qd: np.ndarray,
                         tau: np.ndarray, actuators: bool, dq: np.ndarray, dqd: np.ndarray,
                         Minv: np.ndarray) -> None:
    """``aba_derivatives`` for rows ``lo .. hi - 1``, one thread (``rnea.rnea_rows``)."""
    for k in range(lo, hi):
        aba_derivatives(mp, ws, q[k], qd[k], tau[k], actuators, dq[k], dqd[k], Minv[k])


# ---- checked single-state entry points (``robot.derivatives``' fast path) ----------------------
# As ``algorithm.checked``'s: the model and workspace as one array ``mw`` (``data.model_workspace``),
# the states typed ``f8vector`` (unboxing checks ndim and dtype), the three results in one
# (3, n, n) array, no NRT, called through ``first_use.entry``; 0 = done, 1 = an argument is not n
# finite contiguous values or the output has the wrong shape, 2 = a result is not finite (or,
# ``aba_derivatives_entry``, M is singular, or the chain needs BLAS): the caller then takes its
# full validation path, which names the cause.  Compiled on first use (``first_use.one_signature``),
# so a ``Robot`` that never asks for derivatives never compiles them.
_MW, _X, _OUT, _INT = types.float64[:, ::1], f8vector, types.float64[:, :, ::1], types.int64
_V = types.float64[::1]  # f8vector's unboxing needs numba's runtime off: the BLAS entry's states


@njit(cache=True, inline="always")
def finite_entries(a: np.ndarray) -> bool:
    """No NaN or Inf in the (3, n, n) results: ``x * 0`` is 0 for a finite ``x`` and NaN
    otherwise, summed in four independent chains (no branch per value: ~4x faster than testing
    each value at 48 joints)."""
    s0 = s1 = s2 = s3 = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            k = 0
            while k + 4 <= a.shape[2]:
                s0 += a[i, j, k] * 0.0
                s1 += a[i, j, k + 1] * 0.0
                s2 += a[i, j, k + 2] * 0.0
                s3 += a[i, j, k + 3] * 0.0
                k += 4
            while k < a.shape[2]:
                s0 += a[i, j, k] * 0.0
                k += 1
    return (s0 + s1) + (s2 + s3) == 0.0


@njit(cache=True, inline="always")
def _entry_arguments(mw: np.ndarray, q: np.ndarray, qd: np.ndarray, x: np.ndarray, out: np.ndarray) -> tuple:
    """An entry's arguments unpacked: ``n``, ``mp``, ``ws`` (``data.model_workspace``: header
    row, mp, ws), the three states as plain rows, and whether the call is refused (a state not
    ``n`` finite values in one aligned contiguous row, ``f8vector.bad_vector``, or ``out`` not
    ``(3, n, n)``)."""
    n = int(mw[0, 0])
    q, qd, x = q[:], qd[:], x[:]
    bad = (bad_vector(q, n) or bad_vector(qd, n) or bad_vector(x, n) or out.shape[0] != 3 or out.shape[1] != n
           or out.shape[2] != n)
    return n, mw[1:n + 4], mw[n + 4:], q, qd, x, bad


@one_signature(_INT(_MW, _X, _X, _X, _OUT), cache=True, _nrt=False)
def rnea_derivatives_entry(mw, q, qd, qdd, out):  # typed by the signature
    n, mp, ws, q, qd, qdd, bad = _entry_arguments(mw, q, qd, qdd, out)
    if bad:
        return 1
    rnea_derivatives(mp, ws, q, qd, qdd, qdd, False, False, out[0], out[1], out[2])  # (qdd: the unused wrench)
    return 0 if finite_entries(out) else 2


@one_signature(_INT(_MW, _X, _X, _X, _OUT), cache=True, _nrt=False)
def aba_derivatives_entry(mw, q, qd, tau, out):
    n, mp, ws, q, qd, tau, bad = _entry_arguments(mw, q, qd, tau, out)
    if bad:
        return 1
    if n >= BLAS_FROM or not aba_derivatives_solve(mp, ws, q, qd, tau, False, out[0], out[1], out[2]):
        return 2  # (long chains: the caller's full path, which has numba's runtime for BLAS)
    return 0 if finite_entries(out) else 2


@one_signature(_INT(_MW, _V, _V, _V, _OUT), cache=True)
def aba_derivatives_blas_entry(mw, q, qd, tau, out):
    """``aba_derivatives_entry`` for chains from ``BLAS_FROM`` joints: compiled with numba's
    runtime, which the BLAS products need, and called through its dispatcher (which refuses
    other types with ``TypeError``), not ``first_use.entry``."""
    n, mp, ws, q, qd, tau, bad = _entry_arguments(mw, q, qd, tau, out)
    if bad:
        return 1
    if not aba_derivatives(mp, ws, q, qd, tau, False, out[0], out[1], out[2]):
        return 2
    return 0 if finite_entries(out) else 2
