"""Batch kernels of the moving bases: one compiled call per trajectory (issue 32).

The free-flyer (``algorithm.floating_base``) and ground-base (``algorithm.planar_base``)
kernels for each row of ``(N, nq)`` positions and ``(N, nv)`` rates, ``prange`` over
``chunks`` contiguous chunks of states with one workspace ``wss[c]`` per chunk, as the fixed
base's ``rnea.rnea_batch``.  They trust their inputs (the fronts validate the whole batch
first: finite rows, unit quaternions, the diff drive's ``v_y = 0``) and every result is checked
by the caller before it leaves.  Each state gives bit for bit the single-state kernel's answer
(the same function on the same inputs; only the workspace differs).

Before these, ``FloatingBaseRobot`` and the dynamics services looped over the states in
Python, one checked core call each.

Threads: ``run`` gives a batch of fewer than ``PARALLEL_MIN`` states one thread (the serial
``*_rows`` kernel each ``prange`` chunk calls, run on the calling thread).  Measured on
the 2-core machine at load average ~9 (1000 planar states, ~0.22 ms of work): the ``prange``
launch over two OpenMP threads took 8-24 ms in median (best 0.13 ms), one thread 0.23 ms
median; a parallel launch waits for a core, and a small batch cannot win that back.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from rbd_ros.algorithm.first_use import njit_no_nrt
from rbd_ros.algorithm.floating_base import aba_floating, crba_floating, rnea_floating
from rbd_ros.algorithm.planar_base import aba_diff_drive, aba_ground, crba_planar, rnea_diff_drive, rnea_planar
from rbd_ros.algorithm.rnea import PARALLEL_MIN  # batches of fewer states run on one thread (module docstring)


def run(kernel, mp: np.ndarray, wss: np.ndarray, N: int, *args) -> None:
    """``kernel(mp, wss, chunks, *args)`` for a batch of ``N`` states, a chunk per thread (at
    most ``len(wss)``); below ``PARALLEL_MIN`` states its serial rows kernel on this thread
    instead, ``rows(mp, wss[0], 0, N, *args)``: no ``prange`` launch, and no
    ``numba.set_num_threads(1)`` around one (~9 us at 16 states, issue 32)."""
    if N >= PARALLEL_MIN:
        kernel(mp, wss, max(1, min(numba.get_num_threads(), len(wss), N)), *args)
    else:
        _ROWS[kernel](mp, wss[0], 0, N, *args)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def rnea_floating_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, v: np.ndarray,
                       a: np.ndarray, tau: np.ndarray) -> None:
    """``floating_base.rnea_floating`` for rows ``lo .. hi - 1``: ``tau[k] = M(q_k) a_k + h(q_k, v_k)``."""
    for k in range(lo, hi):
        rnea_floating(mp, ws, q[k], v[k], a[k], tau[k])


@njit(cache=True, parallel=True)
def rnea_floating_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, v: np.ndarray,
                        a: np.ndarray, tau: np.ndarray) -> None:
    """``rnea_floating_rows`` over ``chunks`` chunks of the states."""
    N = q.shape[0]
    for c in prange(chunks):
        rnea_floating_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, v, a, tau)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def crba_floating_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, M: np.ndarray) -> None:
    """``floating_base.crba_floating`` for rows ``lo .. hi - 1``: ``M[k] = M(q_k)``, (N, 6 + n, 6 + n)."""
    for k in range(lo, hi):
        crba_floating(mp, ws, q[k], M[k])


@njit(cache=True, parallel=True)
def crba_floating_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, M: np.ndarray) -> None:
    """``crba_floating_rows`` over ``chunks`` chunks of the states."""
    N = q.shape[0]
    for c in prange(chunks):
        crba_floating_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, M)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def aba_floating_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, v: np.ndarray,
                      tau: np.ndarray, actuators: bool, a: np.ndarray) -> None:
    """``floating_base.aba_floating`` for rows ``lo .. hi - 1``: ``a[k] = M^{-1}(tau_k - h)``."""
    for k in range(lo, hi):
        aba_floating(mp, ws, q[k], v[k], tau[k], actuators, a[k])


@njit(cache=True, parallel=True)
def aba_floating_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, v: np.ndarray,
                       tau: np.ndarray, actuators: bool, a: np.ndarray) -> None:
    """``aba_floating_rows`` over ``chunks`` chunks of the states."""
    N = q.shape[0]
    for c in prange(chunks):
        aba_floating_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, v, tau, actuators, a)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def rnea_ground_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, v: np.ndarray,
                     a: np.ndarray, diff_drive: bool, out: np.ndarray) -> None:
    """``planar_base.rnea_planar`` (``[F_x, F_y, M_z, joints]``) or, ``diff_drive``,
    ``rnea_diff_drive`` (``[tau_L, tau_R, lam, joints]``) for rows ``lo .. hi - 1``; no tool wrench."""
    for k in range(lo, hi):
        if diff_drive:
            rnea_diff_drive(mp, ws, q[k], v[k], a[k], a[k], False, out[k])
        else:
            rnea_planar(mp, ws, q[k], v[k], a[k], a[k], False, out[k])


@njit(cache=True, parallel=True)
def rnea_ground_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, v: np.ndarray,
                      a: np.ndarray, diff_drive: bool, out: np.ndarray) -> None:
    """``rnea_ground_rows`` over ``chunks`` chunks of the states."""
    N = q.shape[0]
    for c in prange(chunks):
        rnea_ground_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, v, a, diff_drive, out)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def crba_ground_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, M: np.ndarray) -> None:
    """``planar_base.crba_planar`` for rows ``lo .. hi - 1`` (base rates; a diff drive's wheel
    inertia included)."""
    for k in range(lo, hi):
        crba_planar(mp, ws, q[k], M[k])


@njit(cache=True, parallel=True)
def crba_ground_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, M: np.ndarray) -> None:
    """``crba_ground_rows`` over ``chunks`` chunks of the states."""
    N = q.shape[0]
    for c in prange(chunks):
        crba_ground_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, M)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def aba_ground_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, v: np.ndarray,
                    u: np.ndarray, diff_drive: bool, a: np.ndarray, lam: np.ndarray) -> None:
    """Forward dynamics for rows ``lo .. hi - 1``: planar ``planar_base.aba_ground`` (``u = [F_x,
    F_y, M_z, joints]``); ``diff_drive`` the constrained ``aba_diff_drive`` (``u = [tau_L, tau_R,
    joints]``, ``lam[k]`` the lateral ground force)."""
    for k in range(lo, hi):
        if diff_drive:
            lam[k] = aba_diff_drive(mp, ws, q[k], v[k], u[k], a[k])
        else:
            aba_ground(mp, ws, q[k], v[k], u[k, 0], u[k, 1], u[k, 2], u[k, 3:], False, a[k])
            lam[k] = 0.0


@njit(cache=True, parallel=True)
def aba_ground_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, v: np.ndarray,
                     u: np.ndarray, diff_drive: bool, a: np.ndarray, lam: np.ndarray) -> None:
    """``aba_ground_rows`` over ``chunks`` chunks of the states."""
    N = q.shape[0]
    for c in prange(chunks):
        aba_ground_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, v, u, diff_drive, a, lam)


#: each batch kernel's serial rows kernel (``run``)
_ROWS = {rnea_floating_batch: rnea_floating_rows, crba_floating_batch: crba_floating_rows,
         aba_floating_batch: aba_floating_rows, rnea_ground_batch: rnea_ground_rows,
         crba_ground_batch: crba_ground_rows, aba_ground_batch: aba_ground_rows}
