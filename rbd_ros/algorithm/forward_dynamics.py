"""Forward dynamics ``qdd = M^{-1} (tau - h(q, qd))`` (003 (5.2)).

Two algorithms:

* ``fd_cholesky``: M by ``crba``, h by ``rnea`` at ``qdd = 0`` (sharing the link transforms),
  then an in-place Cholesky factorisation ``M = L L^T`` and two triangular solves
  (``linalg.cholesky_solve_inplace``);
* ``aba.aba``: the O(n) articulated-body algorithm.

``forward_dynamics`` is the one every caller (Robot, integrators, batch) uses; it runs ABA
from ``ABA_FROM_DOF`` joints on (currently always).  Why, measured by ``bench/bench_core.py``
(kernel calls from Python, median microseconds, this 2-core machine): 6 DoF Cholesky 1.64 /
ABA 1.67, 7 DoF 1.85 / 1.84, 12 DoF 2.61 / 2.49, 24 DoF 6.70 / 4.94, 48 DoF 22.3 / 8.1.
They tie at 6-7 joints (the call overhead, ~0.5 us, and the shared link transforms
dominate; Cholesky's n^3/6 is only ~60 flops there) and ABA's O(n) wins from ~10 joints on,
so one algorithm serves every size.  ``fd_cholesky`` stays as the independent check used by
the tests and the benchmark.

Actuators (003 (6.16)-(6.17)): ``M' = M + diag(G^2 Jm)`` and
``tau' = tau - B qd - Tc sign(qd)``.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from rbd_ros.algorithm.aba import aba
from rbd_ros.algorithm.actuators import armature, friction
from rbd_ros.algorithm.crba import crba_from_transforms
from rbd_ros.algorithm.first_use import njit_no_nrt
from rbd_ros.algorithm.kinematics import joint_transforms, velocity_acceleration_pass, world_transforms
from rbd_ros.algorithm.layout import VZERO, mrow, vrow
from rbd_ros.algorithm.linalg import cholesky_solve_inplace  # also imported from here (control.laws)
from rbd_ros.algorithm.rnea import backward_pass

#: joints from which ``forward_dynamics`` uses ABA instead of Cholesky (module docstring)
ABA_FROM_DOF = 1


@njit(cache=True)
def fd_cholesky(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray,
                actuators: bool, qdd: np.ndarray) -> None:
    """Forward dynamics by CRBA + RNEA + Cholesky (module docstring)."""
    n = q.shape[0]
    joint_transforms(mp, ws, q)
    velocity_acceleration_pass(mp, ws, qd, ws[vrow(n) + VZERO, :n], True)
    backward_pass(mp, ws, n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, qdd)  # qdd <- h(q, qd)
    for i in range(n):
        qdd[i] = tau[i] - qdd[i]
    world_transforms(mp, ws, n)
    r0 = mrow(n)
    crba_from_transforms(mp, ws, n, ws, r0)
    if actuators:  # M' = M + diag(G^2 Jm), tau' = tau - B qd - Tc sign(qd)
        for i in range(n):
            qdd[i] -= friction(mp, i, qd[i])
            ws[r0 + i, i] += armature(mp, i)
    if not cholesky_solve_inplace(ws, r0, n, qdd):
        for i in range(n):
            qdd[i] = np.nan


@njit(cache=True)
def forward_dynamics(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray,
                     tau: np.ndarray, actuators: bool, qdd: np.ndarray) -> None:
    """``qdd`` from (q, qd, tau): Cholesky below ``ABA_FROM_DOF`` joints, ABA from there."""
    if q.shape[0] >= ABA_FROM_DOF:
        aba(mp, ws, q, qd, tau, actuators, qdd)
    else:
        fd_cholesky(mp, ws, q, qd, tau, actuators, qdd)


@njit(cache=True, parallel=True)
def forward_dynamics_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, qd: np.ndarray,
                           tau: np.ndarray, actuators: bool, qdd: np.ndarray) -> None:
    """``forward_dynamics`` for each row (N x n), ``prange`` over chunks of states."""
    N = q.shape[0]
    for c in prange(chunks):
        forward_dynamics_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, qd, tau, actuators, qdd)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def forward_dynamics_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, qd: np.ndarray,
                          tau: np.ndarray, actuators: bool, qdd: np.ndarray) -> None:
    """``forward_dynamics`` for rows ``lo .. hi - 1`` on one workspace, one thread
    (``rnea.rnea_rows``)."""
    for k in range(lo, hi):
        forward_dynamics(mp, ws, q[k], qd[k], tau[k], actuators, qdd[k])
