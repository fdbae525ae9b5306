"""Recursive Newton-Euler inverse dynamics (jitted), and its special cases g(q) and h(q, qd).

003 §4.5 in link frames (misprints of 003 corrected, docs/references.md):

* forward: ``kinematics.velocity_acceleration_pass`` ((4.29)-(4.34), ``vd_0 = -g``);
* centre-of-mass acceleration (4.35) *without* the misprinted extra term (misprint 003 (4.35)):
  ``sdd_i = vd_i + wd_i x s_i + w_i x (w_i x s_i)``;
* backward (4.36)-(4.37): ``F_i = m_i sdd_i``, ``N_i = I_i wd_i + w_i x I_i w_i``,
  ``f_i = F_i + R f_{i+1}``, ``n_i = N_i + R n_{i+1} + s_i x F_i + p_{i+1} x R f_{i+1}``
  (``R = ^iR_{i+1}``, ``p_{i+1} = ^ip_{i+1}``);
* joint force (4.38)-(4.39): ``tau_i = z . n_i`` (revolute) or ``z . f_i`` (prismatic).

The gravity vector ``g(q)`` is RNEA at ``qd = qdd = 0``, written out without the motion
terms (``gravity``: subtree masses and first moments), and the bias
``h(q, qd) = C(q, qd) qd + g(q)`` (003 (5.1)) is RNEA at ``qdd = 0``.

External wrench: ``w = [f; m]`` applied *by the environment on the tool*, world frame,
moment about the tool origin.  The last link then exerts ``-w`` on the environment, which
enters (4.36)-(4.37) as ``f_{n+1}, n_{n+1}``; the result is ``tau = ID - J_tool^T w``.

Actuators (003 (6.16)-(6.17)), only when asked for: ``tau += G^2 Jm qdd + B qd + Tc sign(qd)``
(``sign(0) = 0``).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from rbd_ros.algorithm.actuators import armature, friction
from rbd_ros.algorithm.first_use import njit_no_nrt
from rbd_ros.algorithm.kinematics import angles, forward_kinematics, joint_angles, velocity_acceleration_pass
from rbd_ros.algorithm.layout import (
    A0,
    AP,
    ATYPE,
    COM,
    MASS,
    MCOM,
    VZERO,
    WF,
    WGR,
    WN,
    WP,
    WVD,
    WW,
    WWD,
    com_inertia,
    vrow,
)
from rbd_ros.algorithm.spatial6 import (
    CONTRACT,
    add3,
    cross3,
    load3,
    mat3t_vec,
    mdh_force_to_parent,
    mdh_rot,
    mdh_rot_t,
    point_acceleration,
    store3,
    sym3_vec,
)


@njit(cache=True, inline="always")
def body_wrench(mp: np.ndarray, i: int, w: tuple, wd: tuple, vd: tuple) -> tuple[tuple, tuple]:
    """Newton-Euler of body ``i`` (packed row: ``MASS``, ``COM`` s, ``IC`` I about the centre
    of mass) with angular velocity ``w``, angular acceleration ``wd`` and frame-origin
    acceleration ``vd`` (all in its frame): ``(F, N)``."""
    m = mp[i, MASS]
    a0, a1, a2 = point_acceleration(vd, wd, w, load3(mp, i, COM))  # s'' = vd + wd x s + w x (w x s), (4.35) corrected
    I = com_inertia(mp, i)
    N = add3(sym3_vec(I, wd), cross3(w, sym3_vec(I, w)))  # N = I wd + w x (I w)
    return (m * a0, m * a1, m * a2), N  # F = m s''


@njit(cache=True, fastmath=CONTRACT)
def backward_pass(mp: np.ndarray, ws: np.ndarray, n: int, fe0: float, fe1: float, fe2: float,
                  ne0: float, ne1: float, ne2: float, tau: np.ndarray) -> None:
    """Force recursion (4.35)-(4.39) after ``velocity_acceleration_pass``.  ``fe, ne``: force
    and moment (about the frame-n origin, frame n) the last link exerts on the environment."""
    cf = (fe0, fe1, fe2)  # the child's force and moment, in frame i, about its origin
    cn = (ne0, ne1, ne2)
    for i in range(n - 1, -1, -1):
        if i < n - 1:
            c = i + 1  # R f_{i+1}, R n_{i+1} + p_{i+1} x R f_{i+1} (R = ^iR_{i+1} = Rx(alpha) Rz(theta))
            cf, cn = mdh_force_to_parent(angles(mp, ws, c), load3(ws, c, WP), load3(ws, c, WF), load3(ws, c, WN))
        F, N = body_wrench(mp, i, load3(ws, i, WW), load3(ws, i, WWD), load3(ws, i, WVD))
        f = add3(F, cf)  # f_i = F_i + R f_{i+1} (4.36)
        nn = add3(add3(N, cn), cross3(load3(mp, i, COM), F))  # n_i = N_i + R n_{i+1} + p x R f_{i+1} + s_i x F_i (4.37)
        store3(ws, i, WF, f)
        store3(ws, i, WN, nn)
        tau[i] = nn[2] if mp[i, ATYPE] == 0.0 else f[2]  # (4.38)-(4.39)


@njit(cache=True, fastmath=CONTRACT)
def add_actuator_torques(mp: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray) -> None:
    """``tau += G^2 Jm qdd + B qd + Tc sign(qd)`` (003 (6.16)-(6.17), ``algorithm.actuators``)."""
    for i in range(qd.shape[0]):
        tau[i] += armature(mp, i) * qdd[i] + friction(mp, i, qd[i])


@njit(cache=True, fastmath=CONTRACT)
def rnea(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
         tau: np.ndarray) -> None:
    """Rigid-body inverse dynamics ``tau = M qdd + h`` (003 §4.5), no wrench, no actuators."""
    n = q.shape[0]
    joint_angles(mp, ws, q)  # the recursion needs no rotation matrices (joint_angles)
    velocity_acceleration_pass(mp, ws, qd, qdd, True)
    backward_pass(mp, ws, n, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, tau)


@njit(cache=True, inline="always")
def wrench_in_last_frame(mp: np.ndarray, ws: np.ndarray, n: int, f0: float, f1: float, f2: float,
                         m0: float, m1: float, m2: float) -> tuple[float, float, float, float, float, float]:
    """The tool wrench ``[f; m]`` (world axes, i.e. the kernels' frame 0 parent, moment about
    the tool origin) in frame n, moment about the frame-n origin: ``R^T f``,
    ``R^T m + p_tool x R^T f``.  Needs ``forward_kinematics``."""
    f = mat3t_vec(ws, n - 1, WGR, (f0, f1, f2))  # world -> frame n: x_n = R^T x_w
    m = add3(mat3t_vec(ws, n - 1, WGR, (m0, m1, m2)), cross3(load3(mp, n + 1, AP), f))  # about the frame-n origin
    return f[0], f[1], f[2], m[0], m[1], m[2]


@njit(cache=True, fastmath=CONTRACT)
def rnea_full(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
              wrench: np.ndarray, use_wrench: bool, actuators: bool, tau: np.ndarray) -> None:
    """RNEA with an optional tool wrench (module docstring) and actuator terms."""
    n = q.shape[0]
    if use_wrench:
        forward_kinematics(mp, ws, q)
        fx, fy, fz, mx, my, mz = wrench_in_last_frame(mp, ws, n, wrench[0], wrench[1], wrench[2],
                                                      wrench[3], wrench[4], wrench[5])
        velocity_acceleration_pass(mp, ws, qd, qdd, True)
        backward_pass(mp, ws, n, -fx, -fy, -fz, -mx, -my, -mz, tau)
    else:
        rnea(mp, ws, q, qd, qdd, tau)
    if actuators:
        add_actuator_torques(mp, qd, qdd, tau)


@njit(cache=True, fastmath=CONTRACT)
def gravity(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, tau: np.ndarray) -> None:
    """Generalized gravity ``g(q)`` = RNEA(q, 0, 0) (003 §4.5), with what the zero motion
    leaves of the recursion (issue 32: about a third of the full RNEA's arithmetic):

    * forward (4.33) at rest: ``vd_i = R^T vd_{i-1}``, ``vd_0 = -g`` (gravity rotated into frame i);
    * backward (4.36)-(4.37): every body force is ``m_k vd``, so ``f_i = mbar_i vd_i`` and
      ``n_i = h_i x vd_i`` with the subtree's mass ``mbar_i = m_i + mbar_{i+1}`` and first
      moment about the frame-i origin ``h_i = m_i s_i + R h_{i+1} + mbar_{i+1} p_{i+1}``;
    * (4.38)-(4.39): ``tau_i = z . n_i`` (revolute) or ``z . f_i`` (prismatic).

    Writes ``ws[i, WVD]`` (``vd_i``) and the joint angles; ``ws`` rows ``WW/WWD/WF/WN`` are
    not touched."""
    n = q.shape[0]
    joint_angles(mp, ws, q)
    vd = load3(mp, n + 2, A0)  # vd_0 = -g in frame 0
    for i in range(n):
        vd = mdh_rot_t(angles(mp, ws, i), vd)  # vd_i = R^T vd_{i-1} (4.33), w = wd = 0
        store3(ws, i, WVD, vd)
    mbar = 0.0  # the subtree below joint i: mass and first moment (frame i, about its origin)
    h = (0.0, 0.0, 0.0)
    for i in range(n - 1, -1, -1):
        if i < n - 1:
            c = i + 1  # R h_{i+1} + mbar_{i+1} p_{i+1} (R = ^iR_{i+1}, p_{i+1} = ^ip_{i+1})
            Rh = mdh_rot(angles(mp, ws, c), h)
            h = (Rh[0] + mbar * ws[c, WP], Rh[1] + mbar * ws[c, WP + 1], Rh[2] + mbar * ws[c, WP + 2])
        m = mp[i, MASS]
        mbar += m  # mbar_i = m_i + mbar_{i+1}
        h = (h[0] + mp[i, MCOM], h[1] + mp[i, MCOM + 1], h[2] + mp[i, MCOM + 2])  # + m_i s_i
        v0, v1, v2 = load3(ws, i, WVD)
        tau[i] = h[0] * v1 - h[1] * v0 if mp[i, ATYPE] == 0.0 else mbar * v2  # z.(h x vd), z.(mbar vd)


@njit(cache=True, fastmath=CONTRACT)
def bias(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> None:
    """Bias ``h(q, qd) = C(q, qd) qd + g(q)`` = RNEA(q, qd, 0)."""
    z = ws[vrow(q.shape[0]) + VZERO, :q.shape[0]]
    rnea(mp, ws, q, qd, z, tau)


#: batches of fewer states run on one thread (``base_batch``'s docstring): defined here, with
#: the fixed base's batch kernels, so that a fixed-base ``Robot`` imports (and on a fresh cache
#: compiles) none of the moving bases' eager entry points ``base_batch`` imports
PARALLEL_MIN = 4096


@njit(cache=True, parallel=True)
def rnea_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
               wrench: np.ndarray, use_wrench: bool, actuators: bool, tau: np.ndarray) -> None:
    """``rnea_full`` for each row of ``q, qd, qdd`` (N x n), ``prange`` over ``chunks``
    contiguous chunks of states (at most ``len(wss)``; one workspace ``wss[c]`` per chunk)."""
    N = q.shape[0]
    for c in prange(chunks):
        rnea_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, qd, qdd, wrench, use_wrench, actuators,
                  tau)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def rnea_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
              wrench: np.ndarray, use_wrench: bool, actuators: bool, tau: np.ndarray) -> None:
    """``rnea_full`` for rows ``lo .. hi - 1`` on one workspace, one thread: a chunk of
    ``rnea_batch``, or a whole batch too small to win back a parallel launch
    (``base_batch.PARALLEL_MIN``).  The flags are tested once, not per state: the plain
    case calls ``rnea`` itself (~0.31 -> 0.235 us per 7-DoF state, issue 32).  Compiled, as
    every ``*_rows`` kernel, without numba's runtime (``_nrt=False``): a row view ``q[k]`` is
    then made without an incref and a decref of the batch's ``MemInfo`` (atomic operations on
    memory the threads of a batch share): ~0.22 -> 0.20 us per 7-DoF state on one thread."""
    if use_wrench or actuators:
        for k in range(lo, hi):
            rnea_full(mp, ws, q[k], qd[k], qdd[k], wrench, use_wrench, actuators, tau[k])
    else:
        for k in range(lo, hi):
            rnea(mp, ws, q[k], qd[k], qdd[k], tau[k])


@njit_no_nrt(cache=True, nogil=True)
def rnea_rows_released(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, qd: np.ndarray,
                       qdd: np.ndarray, wrench: np.ndarray, use_wrench: bool, actuators: bool,
                       tau: np.ndarray) -> None:
    """``rnea_rows`` without the GIL, for a caller that owns ``ws`` (a workspace of its own,
    not a shared ``Robot``'s, whose single-state calls rely on the GIL to run whole): the
    planner's path check and retiming (``path_limits.PathLimits.torques``), so that the
    control cycle's thread runs while a long trajectory's torques are computed (issue 37).
    One thread: a ``prange`` launch on a loaded 2-core machine costs more than the 20 001
    states of a 10 000-point goal (``Robot._run_batch``), and would hold the GIL while it waits."""
    rnea_rows(mp, ws, lo, hi, q, qd, qdd, wrench, use_wrench, actuators, tau)


@njit(cache=True, parallel=True)
def gravity_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, tau: np.ndarray) -> None:
    """``gravity`` for each row of ``q`` (N x n), ``prange`` over chunks of states."""
    N = q.shape[0]
    for c in prange(chunks):
        gravity_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, tau)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def gravity_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, tau: np.ndarray) -> None:
    """``gravity`` for rows ``lo .. hi - 1``, one thread (``rnea_rows``)."""
    for k in range(lo, hi):
        gravity(mp, ws, q[k], tau[k])


@njit(cache=True, parallel=True)
def bias_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, qd: np.ndarray,
               tau: np.ndarray) -> None:
    """``bias`` for each row of ``q, qd`` (N x n), ``prange`` over chunks of states."""
    N = q.shape[0]
    for c in prange(chunks):
        bias_rows(mp, wss[c], c * N // chunks, (c + 1) * N // chunks, q, qd, tau)


@njit_no_nrt(cache=True)  # no NRT: no MemInfo incref/decref per row view (rnea.rnea_rows)
def bias_rows(mp: np.ndarray, ws: np.ndarray, lo: int, hi: int, q: np.ndarray, qd: np.ndarray,
              tau: np.ndarray) -> None:
    """``bias`` for rows ``lo .. hi - 1``, one thread (``rnea_rows``)."""
    for k in range(lo, hi):
        bias(mp, ws, q[k], qd[k], tau[k])
