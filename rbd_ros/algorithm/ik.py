"""Inverse kinematics (jitted): damped least squares within joint limits, the notes' Newton
iteration, and the analytic planar 2-link solution.

Task error (own choice, not in 003): for a target pose ``T = (R_t, p_t)`` and the tool pose
``(R, p)`` at q, ``e = [p_t - p; log(R_t R^T)]`` (world axes; the rotation vector of the
remaining rotation), so ``de/dq ~ J`` (the geometric tool Jacobian, ``kinematics``) near a
solution.  ``position_error = |p_t - p|`` (m), ``orientation_error = |log(R_t R^T)|`` (rad).
``rows = 3`` drops the orientation (position-only targets).

* ``dls_solve`` (the default): Levenberg-Marquardt on ``|e|^2``, ``(J^T J + lam I) dq = J^T e``,
  ``q <- clamp(q + dq, lower, upper)``; a step that lowers ``|e|^2`` is kept and lam shrinks
  (x 0.1, down to ``LAM_MIN``), otherwise lam grows (x 10) and the step is retried; when lam
  passes ``LAM_MAX`` or ``max_iter`` steps pass the attempt stops and a new one starts from a
  uniformly random configuration inside the limits (``random_config``).  The best pose over
  all attempts is returned.
* ``newton_solve``: 003 (1.20)-(1.23), ``q_i = q_{i-1} + k J^{-1}(q_{i-1}) (r - r_{i-1})`` with
  the minus sign the print lost (misprint 003 §1.9 step 3) and ``r - r_{i-1}`` read as the task error
  ``e`` above (instead of Euler angles, whose rate Jacobian is singular at theta = 0).  For a
  non-square J the least-squares / least-norm inverse is used.  No limits, no restarts; a
  singular J (pivot below ``PIVOT_EPS``) ends the iteration.
* ``two_link_ik``: 003 (1.24), both elbow branches.

Scratch ``S`` (``ik_scratch``): rows 0..5 the Jacobian, rows 6..6+n-1 an n x n matrix, then
vectors (``V + k``); kernels allocate nothing.  ``S[V + STOP, 0]`` is a stop flag: another
thread sets it (``request_stop``; the LM kernels run without the GIL) and ``dls_solve`` ends
within one iteration, keeping the best pose so far (success false) -- how the dynamics server
bounds a request's time (its ``max_request_seconds``) and ends on SIGTERM mid-solve.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from rbd_ros.algorithm.kinematics import forward_kinematics, frame_jacobian
from rbd_ros.algorithm.layout import WGP, WGR
from rbd_ros.algorithm.linalg import cholesky_solve_inplace
from rbd_ros.lie.so3 import log_into as so3_log

LAM0 = 1e-1  # initial damping (m^2)
LAM_MIN = 1e-12
LAM_MAX = 1e6
STALL_EVERY = 5  # every this many steps, the attempt stops unless |e|^2 fell below
STALL_RATIO = 0.5  # this fraction of its value STALL_EVERY steps earlier
PIVOT_EPS = 1e-12  # Newton: |pivot| below this (relative to the largest entry) = singular J
# vector rows of the scratch, after the Jacobian (6) and the matrix (n)
G, DQ, QT, E, ET, QB, QC, FX, STOP = 0, 1, 2, 3, 4, 5, 6, 7, 8
NV = 9
# info entries
I_SUCCESS, I_PERR, I_OERR, I_ITERS, I_ATTEMPTS = 0, 1, 2, 3, 4
NINFO = 5


def ik_scratch(n: int, threads: int = 0) -> np.ndarray:
    """Zeroed scratch for ``n`` joints, ``(6 + n + NV, max(n, 6))``, or a stack of
    ``threads`` of them for the batch kernel."""
    shape = (6 + n + NV, max(n, 6))
    return np.zeros((threads, *shape) if threads else shape)


def _stop_cells(S: np.ndarray) -> np.ndarray:
    """The stop flag(s) of a scratch or a stack of them (a view)."""
    n6 = S.shape[-2] - NV  # 6 + n
    return S[..., n6 + STOP, 0]


def request_stop(S: np.ndarray) -> None:
    """Set the stop flag of scratch ``S`` (or of each of a stack): a running ``dls_solve``
    on it returns within one iteration (module docstring).  Safe from any thread."""
    _stop_cells(S)[...] = 1.0


def clear_stop(S: np.ndarray) -> None:
    """Clear the stop flag(s) of ``S``, before a new solve."""
    _stop_cells(S)[...] = 0.0


def stop_requested(S: np.ndarray) -> bool:
    """Whether the stop flag of ``S`` (any of a stack) is set."""
    return bool(np.any(_stop_cells(S) != 0.0))


@njit(cache=True, inline="always")
def _next_uniform(state: np.uint64) -> tuple[np.uint64, float]:
    """splitmix64: the next state and a uniform number in [0, 1)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return state, float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def random_config(lim: np.ndarray, state: np.uint64, q: np.ndarray) -> np.uint64:
    """``q`` uniform in the sampling box ``lim[2] .. lim[3]`` (the joint limits where finite,
    else ``[-pi, pi]``; ``sampling_box``); returns the new random state."""
    for i in range(q.shape[0]):
        state, u = _next_uniform(state)
        q[i] = lim[2, i] + u * (lim[3, i] - lim[2, i])
    return state


@njit(cache=True)
def pose_error(ws: np.ndarray, n: int, T: np.ndarray, rows: int,
               e: np.ndarray) -> tuple[float, float]:
    """``e = [p_t - p; log(R_t R^T)]`` of the tool (world transforms in ``ws``) and the norms
    ``(|p_t - p|, |log(R_t R^T)|)``; with ``rows = 3`` only the position (angle 0)."""
    pe = 0.0
    for r in range(3):
        e[r] = T[r, 3] - ws[n, WGP + r]
        pe += e[r] * e[r]
    if rows == 3:
        return math.sqrt(pe), 0.0
    # R_e = R_t R^T
    r00 = T[0, 0] * ws[n, WGR] + T[0, 1] * ws[n, WGR + 1] + T[0, 2] * ws[n, WGR + 2]
    r01 = T[0, 0] * ws[n, WGR + 3] + T[0, 1] * ws[n, WGR + 4] + T[0, 2] * ws[n, WGR + 5]
    r02 = T[0, 0] * ws[n, WGR + 6] + T[0, 1] * ws[n, WGR + 7] + T[0, 2] * ws[n, WGR + 8]
    r10 = T[1, 0] * ws[n, WGR] + T[1, 1] * ws[n, WGR + 1] + T[1, 2] * ws[n, WGR + 2]
    r11 = T[1, 0] * ws[n, WGR + 3] + T[1, 1] * ws[n, WGR + 4] + T[1, 2] * ws[n, WGR + 5]
    r12 = T[1, 0] * ws[n, WGR + 6] + T[1, 1] * ws[n, WGR + 7] + T[1, 2] * ws[n, WGR + 8]
    r20 = T[2, 0] * ws[n, WGR] + T[2, 1] * ws[n, WGR + 1] + T[2, 2] * ws[n, WGR + 2]
    r21 = T[2, 0] * ws[n, WGR + 3] + T[2, 1] * ws[n, WGR + 4] + T[2, 2] * ws[n, WGR + 5]
    r22 = T[2, 0] * ws[n, WGR + 6] + T[2, 1] * ws[n, WGR + 7] + T[2, 2] * ws[n, WGR + 8]
    e[3], e[4], e[5], th = so3_log(r00, r01, r02, r10, r11, r12, r20, r21, r22)  # log(R_e)
    return math.sqrt(pe), th


@njit(cache=True)
def _gauss_solve(A: np.ndarray, b: np.ndarray, x: np.ndarray, m: int) -> bool:
    """Solve ``A x = b`` (m x m, overwritten) by Gaussian elimination with partial pivoting;
    False when a pivot is below ``PIVOT_EPS`` times the largest entry (singular A)."""
    scale = 0.0
    for i in range(m):
        x[i] = b[i]
        for j in range(m):
            scale = max(scale, abs(A[i, j]))
    if scale == 0.0:
        return False
    for k in range(m):
        p = k
        for i in range(k + 1, m):
            if abs(A[i, k]) > abs(A[p, k]):
                p = i
        if abs(A[p, k]) <= PIVOT_EPS * scale:
            return False
        if p != k:
            for j in range(m):
                A[k, j], A[p, j] = A[p, j], A[k, j]
            x[k], x[p] = x[p], x[k]
        for i in range(k + 1, m):
            f = A[i, k] / A[k, k]
            for j in range(k, m):
                A[i, j] -= f * A[k, j]
            x[i] -= f * x[k]
    for i in range(m - 1, -1, -1):
        s = x[i]
        for j in range(i + 1, m):
            s -= A[i, j] * x[j]
        x[i] = s / A[i, i]
    return True


@njit(cache=True, inline="always")
def _converged(pe: float, oe: float, tol_p: float, tol_o: float) -> bool:
    return pe <= tol_p and oe <= tol_o


@njit(cache=True)
def lm_step(S: np.ndarray, e: np.ndarray, q: np.ndarray, lim: np.ndarray, rows: int, lam: float,
            g: np.ndarray, dq: np.ndarray, fixed: np.ndarray) -> bool:
    """The damped step ``(J^T J + lam I) dq = J^T e`` (J in ``S[0:6]``) over the joints that
    are free to move: a joint at a limit whose step points out of the range is held
    (``dq_i = 0``, its column dropped) and the step recomputed, so the other joints still
    reduce the error (an active set; own choice, not in 003).  False if not solvable."""
    n = q.shape[0]
    for i in range(n):
        fixed[i] = 0.0
    for _ in range(n):
        for a in range(n):
            if fixed[a] != 0.0:
                g[a] = 0.0
                for b in range(a):
                    S[6 + a, b] = 0.0
                S[6 + a, a] = 1.0
                continue
            s = 0.0
            for r in range(rows):
                s += S[r, a] * e[r]
            g[a] = s
            for b in range(a + 1):
                s = 0.0
                if fixed[b] == 0.0:
                    for r in range(rows):
                        s += S[r, a] * S[r, b]
                S[6 + a, b] = s
            S[6 + a, a] += lam
        for i in range(n):
            dq[i] = g[i]
        if not cholesky_solve_inplace(S, 6, n, dq):  # (J^T J + lam I) in S[6:6+n, :n]
            return False
        more = False
        for i in range(n):
            if fixed[i] == 0.0 and ((q[i] <= lim[0, i] and dq[i] < 0.0)
                                    or (q[i] >= lim[1, i] and dq[i] > 0.0)):
                fixed[i] = 1.0
                more = True
        if not more:
            break
    return True


@njit(cache=True, nogil=True)
def dls_attempt(mp: np.ndarray, ws: np.ndarray, S: np.ndarray, T: np.ndarray, lim: np.ndarray,
                rows: int, tol_p: float, tol_o: float, max_iter: int,
                stall: bool) -> tuple[bool, int, float, float, float]:
    """One Levenberg-Marquardt run from ``q = S[V + QC]`` (updated in place); returns
    ``(converged, iterations, |e|^2, position error, orientation error)``.  With ``stall``
    the run also stops when progress is slow (``STALL_EVERY``, ``STALL_RATIO``)."""
    n = lim.shape[1]
    V = 6 + n
    q = S[V + QC, :n]
    qt = S[V + QT, :n]
    dq = S[V + DQ, :n]
    g = S[V + G, :n]
    e = S[V + E, :6]
    et = S[V + ET, :6]
    forward_kinematics(mp, ws, q)
    pe, oe = pose_error(ws, n, T, rows, e)
    err = 0.0
    for r in range(rows):
        err += e[r] * e[r]
    frame_jacobian(mp, ws, n, n + 1, S[0:6, :n])
    lam = LAM0
    it = 0
    check = err
    while it < max_iter and not _converged(pe, oe, tol_p, tol_o):
        if S[V + STOP, 0] != 0.0:  # another thread asked to stop (request_stop)
            break
        it += 1
        if stall and it % STALL_EVERY == 0:  # too little progress: give up (a restart follows)
            if err > STALL_RATIO * check:
                break
            check = err
        if not lm_step(S, e, q, lim, rows, lam, g, dq, S[V + FX, :n]):
            lam *= 10.0
            if lam > LAM_MAX:
                break
            continue
        # trial q = clamp(q + dq) inside [lower, upper]
        for i in range(n):
            qt[i] = min(max(q[i] + dq[i], lim[0, i]), lim[1, i])
        forward_kinematics(mp, ws, qt)
        pt, ot = pose_error(ws, n, T, rows, et)
        errt = 0.0
        for r in range(rows):
            errt += et[r] * et[r]
        if errt < err:  # accept: move, relax the damping, new Jacobian at q
            for i in range(n):
                q[i] = qt[i]
            for r in range(6):
                e[r] = et[r]
            err, pe, oe = errt, pt, ot
            frame_jacobian(mp, ws, n, n + 1, S[0:6, :n])
            lam = max(lam * 0.1, LAM_MIN)
        else:  # reject: more damping
            lam *= 10.0
            if lam > LAM_MAX:
                break
    return _converged(pe, oe, tol_p, tol_o), it, err, pe, oe


@njit(cache=True, nogil=True)
def dls_solve(mp: np.ndarray, ws: np.ndarray, S: np.ndarray, T: np.ndarray, q0: np.ndarray,
              use_q0: bool, lim: np.ndarray, rows: int, tol_p: float, tol_o: float, max_iter: int,
              max_attempts: int, seed: np.uint64, q_out: np.ndarray, info: np.ndarray) -> None:
    """Damped least squares with random restarts (module docstring): attempt 1 from ``q0``
    (clamped into the limits) when ``use_q0``, the others from ``random_config``; stops at
    the first converged attempt or after ``max_attempts``; if none converged, the best pose
    is polished by one more run without the early stop.  ``q_out`` = the best q (least
    ``|e|^2``), ``info`` = (success, position error, orientation error, iterations, attempts).
    The stop flag (``request_stop``) ends it within one iteration, without the polish; stopped
    before any attempt, ``q_out`` is NaN and the errors are Inf."""
    n = lim.shape[1]
    V = 6 + n
    q = S[V + QC, :n]
    qb = S[V + QB, :n]
    state = seed
    best = np.inf
    bpe = 0.0
    boe = 0.0
    iters = 0
    ok = False
    a = 0
    while a < max_attempts and not ok and S[V + STOP, 0] == 0.0:
        if a == 0 and use_q0:
            for i in range(n):
                q[i] = min(max(q0[i], lim[0, i]), lim[1, i])
        else:
            state = random_config(lim, state, q)
        a += 1
        ok, it, err, pe, oe = dls_attempt(mp, ws, S, T, lim, rows, tol_p, tol_o, max_iter, True)
        iters += it
        if ok or err < best or a == 1:  # the first attempt counts even when |e|^2 overflows
            best, bpe, boe = err, pe, oe
            for i in range(n):
                qb[i] = q[i]
    if a == 0:  # stopped before any attempt: nothing found
        for i in range(n):
            qb[i] = np.nan
        bpe = np.inf
        boe = np.inf
    elif not ok and S[V + STOP, 0] == 0.0:  # polish the best pose: one more run, no early stop
        for i in range(n):
            q[i] = qb[i]
        ok, it, err, pe, oe = dls_attempt(mp, ws, S, T, lim, rows, tol_p, tol_o, max_iter, False)
        iters += it
        if ok or err < best:
            bpe, boe = pe, oe
            for i in range(n):
                qb[i] = q[i]
    for i in range(n):
        q_out[i] = qb[i]
    info[I_SUCCESS] = 1.0 if ok else 0.0
    info[I_PERR] = bpe
    info[I_OERR] = boe
    info[I_ITERS] = iters
    info[I_ATTEMPTS] = a


@njit(cache=True, parallel=True, nogil=True)
def dls_solve_batch(mp: np.ndarray, wss: np.ndarray, Ss: np.ndarray, chunks: int, T: np.ndarray,
                    q0: np.ndarray, use_q0: bool, lim: np.ndarray, rows: int, tol_p: float,
                    tol_o: float, max_iter: int, max_attempts: int, seed: np.uint64,
                    q_out: np.ndarray, info: np.ndarray) -> None:
    """``dls_solve`` for each target ``T[k]`` (seed ``q0[k]``), ``prange`` over ``chunks``
    contiguous chunks of targets (one workspace and scratch per chunk); target k's random
    stream starts from ``seed + k`` so results do not depend on the chunking."""
    N = T.shape[0]
    for c in prange(chunks):
        for k in range(c * N // chunks, (c + 1) * N // chunks):
            s = (seed + np.uint64(k)) * np.uint64(0x2545F4914F6CDD1D)
            dls_solve(mp, wss[c], Ss[c], T[k], q0[k], use_q0, lim, rows, tol_p, tol_o, max_iter,
                      max_attempts, s, q_out[k], info[k])


@njit(cache=True, inline="always")
def _jt_times(S: np.ndarray, rows: int, n: int, x: np.ndarray, out: np.ndarray) -> None:
    """``out = J^T x`` for ``J = S[0:rows, :n]``."""
    for i in range(n):
        s = 0.0
        for r in range(rows):
            s += S[r, i] * x[r]
        out[i] = s


@njit(cache=True, inline="always")
def _gram(S: np.ndarray, rows: int, n: int, jtj: bool, A: np.ndarray) -> None:
    """``A = J^T J`` (n x n) if ``jtj``, else ``J J^T`` (rows x rows), ``J = S[0:rows, :n]``."""
    m, inner = (n, rows) if jtj else (rows, n)
    for r in range(m):
        for c in range(m):
            s = 0.0
            for k in range(inner):
                s += S[k, r] * S[k, c] if jtj else S[r, k] * S[c, k]
            A[r, c] = s


@njit(cache=True)
def newton_solve(mp: np.ndarray, ws: np.ndarray, S: np.ndarray, T: np.ndarray, q0: np.ndarray,
                 rows: int, gain: float, tol_p: float, tol_o: float, max_iter: int,
                 q_out: np.ndarray, info: np.ndarray) -> None:
    """003 (1.20)-(1.23), corrected: ``q_i = q_{i-1} + k J^{-1}(q_{i-1}) e(q_{i-1})`` until the
    tolerances hold, J is singular, or ``max_iter`` steps; ``J^{-1}`` is ``(J^T J)^{-1} J^T``
    when J has more rows than columns, ``J^T (J J^T)^{-1}`` when fewer."""
    n = q0.shape[0]
    V = 6 + n
    q = S[V + QC, :n]
    dq = S[V + DQ, :n]
    e = S[V + E, :6]
    b = S[V + G, :6]
    A = S[6:6 + n, :n]
    for i in range(n):
        q[i] = q0[i]
    it = 0
    while True:
        forward_kinematics(mp, ws, q)
        pe, oe = pose_error(ws, n, T, rows, e)
        if _converged(pe, oe, tol_p, tol_o) or it >= max_iter:
            break
        frame_jacobian(mp, ws, n, n + 1, S[0:6, :n])
        if n == rows:  # J dq = e
            for r in range(n):
                for c in range(n):
                    A[r, c] = S[r, c]
            ok = _gauss_solve(A, e, dq, n)
        elif n < rows:  # (J^T J) dq = J^T e
            _gram(S, rows, n, True, A)
            _jt_times(S, rows, n, e, b)
            ok = _gauss_solve(A, b, dq, n)
        else:  # (J J^T) y = e, dq = J^T y
            _gram(S, rows, n, False, A)
            ok = _gauss_solve(A, e, b, rows)
            if ok:
                _jt_times(S, rows, n, b, dq)
        if not ok:
            break
        finite = True
        for i in range(n):
            finite = finite and math.isfinite(dq[i])
        if not finite:
            break
        it += 1
        for i in range(n):
            q[i] += gain * dq[i]
    for i in range(n):
        q_out[i] = q[i]
    info[I_SUCCESS] = 1.0 if _converged(pe, oe, tol_p, tol_o) else 0.0
    info[I_PERR] = pe
    info[I_OERR] = oe
    info[I_ITERS] = it
    info[I_ATTEMPTS] = 1


@njit(cache=True)
def first_bad_pose(T: np.ndarray) -> int:
    """Index of the first ``T[k]`` (N x 4 x 4) that is not a finite rigid transform
    (``R R^T = I`` within 1e-6, ``det R > 0``, last row ``0 0 0 1``), or -1."""
    for k in range(T.shape[0]):
        for r in range(4):
            for c in range(4):
                if not math.isfinite(T[k, r, c]):
                    return k
        if T[k, 3, 0] != 0.0 or T[k, 3, 1] != 0.0 or T[k, 3, 2] != 0.0 or T[k, 3, 3] != 1.0:
            return k
        for a in range(3):
            for b in range(3):
                s = T[k, a, 0] * T[k, b, 0] + T[k, a, 1] * T[k, b, 1] + T[k, a, 2] * T[k, b, 2]
                if abs(s - (1.0 if a == b else 0.0)) > 1e-6:
                    return k
        det = (T[k, 0, 0] * (T[k, 1, 1] * T[k, 2, 2] - T[k, 1, 2] * T[k, 2, 1])
               - T[k, 0, 1] * (T[k, 1, 0] * T[k, 2, 2] - T[k, 1, 2] * T[k, 2, 0])
               + T[k, 0, 2] * (T[k, 1, 0] * T[k, 2, 1] - T[k, 1, 1] * T[k, 2, 0]))
        if det <= 0.0:
            return k
    return -1


def sampling_box(lower: np.ndarray, upper: np.ndarray, prismatic: np.ndarray) -> np.ndarray:
    """``lim`` (4, n): lower and upper limits (clamping), and the box random restarts sample
    from: the limits where finite, else ``[-pi, pi]`` (revolute) or ``[-1, 1]`` m
    (prismatic) on the unbounded side."""
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    span = np.where(np.asarray(prismatic, dtype=bool), 1.0, np.pi)
    slo = np.where(np.isfinite(lo), lo, np.where(np.isfinite(hi), np.minimum(hi, 0.0) - span, -span))
    shi = np.where(np.isfinite(hi), hi, np.where(np.isfinite(lo), np.maximum(lo, 0.0) + span, span))
    return np.ascontiguousarray(np.stack([lo, hi, slo, shi]))


def two_link_ik(x: float, y: float, l1: float, l2: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Analytic planar 2-link inverse kinematics, 003 (1.24):

        k  = sqrt((x^2 + y^2 + l1^2 + l2^2)^2 - 2((x^2 + y^2)^2 + l1^4 + l2^4))
        q1 = atan2(y, x) -/+ atan2(k, l1^2 + x^2 + y^2 - l2^2)
        q2 = +/- atan2(k, -(l1^2 + l2^2 - x^2 - y^2))

    for ``x = l1 cos q1 + l2 cos(q1 + q2)``, ``y = l1 sin q1 + l2 sin(q1 + q2)``.  Returns
    ``((q1, q2) with q2 >= 0, (q1, q2) with q2 <= 0)`` (upper / lower signs); at the
    workspace boundary (k = 0) both are the same.  Raises ``ValueError`` for an unreachable
    target (``r > l1 + l2`` or ``r < |l1 - l2|``, the radicand negative).  At ``x = y = 0``
    with ``l1 = l2``, q1 is arbitrary (0 is returned)."""
    for name, v in (("x", x), ("y", y), ("l1", l1), ("l2", l2)):
        if not math.isfinite(v):
            raise ValueError(f"two_link_ik: {name} must be finite, got {v}")
    if not (l1 > 0 and l2 > 0):
        raise ValueError(f"two_link_ik: link lengths must be positive, got l1={l1}, l2={l2}")
    r2 = x * x + y * y
    rad = (r2 + l1 * l1 + l2 * l2) ** 2 - 2.0 * (r2 * r2 + l1 ** 4 + l2 ** 4)
    tol = 1e-12 * (r2 + l1 * l1 + l2 * l2) ** 2  # round-off at the boundary
    if rad < -tol:
        r = math.sqrt(r2)
        raise ValueError(f"two_link_ik: target ({x}, {y}) at distance {r:.6g} is unreachable; "
                         f"reach is [{abs(l1 - l2):.6g}, {l1 + l2:.6g}]")
    k = math.sqrt(max(rad, 0.0))
    base = math.atan2(y, x)
    b1 = math.atan2(k, l1 * l1 + r2 - l2 * l2)
    q2 = math.atan2(k, -(l1 * l1 + l2 * l2 - r2))
    return (base - b1, q2), (base + b1, -q2)
