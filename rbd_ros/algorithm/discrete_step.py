"""The Jacobians of one RK4 step of a fixed-base chain in one jitted call (issue 42 item 1; the
fast path of ``robot.discrete``, whose docstring writes the chain rule; the step is
``algorithm.integrators.step``'s, ``tau`` held over it).

For ``y = [q; v]`` and the stage states ``y_s = y + h c_s k_{s-1}`` (``c = 0, 1/2, 1/2, 1``) the
derivatives of ``(q_s, v_s)`` with respect to the inputs ``[q, v, u]`` (``n x 3 n`` each)
are carried stage by stage: ``dk_q = dv_s``, ``dk_v = f_q dq_s + f_v dv_s + [0 0 M^-1]`` with
``forward_dynamics`` and ``rnea_derivatives.aba_derivatives`` (CM18) at the stage state, and
``[dq+; dv+] = [I 0] + h/6 sum_s w_s [dk_q; dk_v]`` (``w = 1, 2, 2, 1``).  Results written into
``A (2 n, 2 n)`` and ``B (2 n, n)``; ``False`` when a stage's mass matrix is singular.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from rbd_ros.algorithm.forward_dynamics import forward_dynamics
from rbd_ros.algorithm.rnea_derivatives import aba_derivatives

_C = (0.0, 0.5, 0.5, 1.0)
_W = (1.0, 2.0, 2.0, 1.0)


@njit(cache=True)
def rk4_step_jacobians(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, u: np.ndarray,
                       h: float, actuators: bool, A: np.ndarray, B: np.ndarray) -> bool:
    """``A = d[q+; v+]/d[q; v]``, ``B = d[q+; v+]/du`` of one RK4 step (module docstring)."""
    n = q.shape[0]
    cols = 3 * n
    a = np.empty(n)
    fq = np.empty((n, n))
    fv = np.empty((n, n))
    Minv = np.empty((n, n))
    qs = q.copy()
    vs = v.copy()
    dqs = np.zeros((n, cols))
    dvs = np.zeros((n, cols))
    for i in range(n):
        dqs[i, i] = 1.0
        dvs[i, n + i] = 1.0
    dkv = np.empty((n, cols))
    accq = np.zeros((n, cols))
    accv = np.zeros((n, cols))
    for s in range(4):
        forward_dynamics(mp, ws, qs, vs, u, actuators, a)
        if not aba_derivatives(mp, ws, qs, vs, u, actuators, fq, fv, Minv):
            return False
        for i in range(n):
            for j in range(cols):
                acc = 0.0
                for k in range(n):
                    acc += fq[i, k] * dqs[k, j] + fv[i, k] * dvs[k, j]
                dkv[i, j] = acc
            for j in range(n):
                dkv[i, 2 * n + j] += Minv[i, j]
        w = _W[s]
        for i in range(n):
            for j in range(cols):
                accq[i, j] += w * dvs[i, j]
                accv[i, j] += w * dkv[i, j]
        if s < 3:
            c = h * _C[s + 1]
            for i in range(n):
                qs[i] = q[i] + c * vs[i]  # with this stage's v before it is replaced
                vs[i] = v[i] + c * a[i]
                for j in range(cols):
                    dqs[i, j] = c * dvs[i, j]
                    dvs[i, j] = c * dkv[i, j]
                dqs[i, i] += 1.0
                dvs[i, n + i] += 1.0
    s6 = h / 6.0
    for i in range(n):
        for j in range(2 * n):
            A[i, j] = s6 * accq[i, j]
            A[n + i, j] = s6 * accv[i, j]
        A[i, i] += 1.0
        A[n + i, n + i] += 1.0
        for j in range(n):
            B[i, j] = s6 * accq[i, 2 * n + j]
            B[n + i, j] = s6 * accv[i, 2 * n + j]
    return True


@njit(cache=True)
def rk4_step_jacobians_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, v: np.ndarray,
                            u: np.ndarray, h: float, actuators: bool, A: np.ndarray, B: np.ndarray,
                            ok: np.ndarray) -> None:
    """``rk4_step_jacobians`` for rows ``lo .. hi - 1`` (``ok[k]``: M regular), one thread."""
    for k in range(lo, hi):
        ok[k] = rk4_step_jacobians(mp, ws, q[k], v[k], u[k], h, actuators, A[k], B[k])


@njit(cache=True, parallel=True)
def rk4_step_jacobians_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, v: np.ndarray,
                             u: np.ndarray, h: float, actuators: bool, A: np.ndarray, B: np.ndarray,
                             ok: np.ndarray) -> None:
    """``rk4_step_jacobians_rows`` over ``chunks`` chunks of states, ``prange`` (one workspace each)."""
    N = q.shape[0]
    for c in prange(chunks):
        rk4_step_jacobians_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, v, u, h, actuators, A, B, ok)
