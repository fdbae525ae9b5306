"""Recursive Newton-Euler inverse dynamics (jitted), and its special cases g(q) and h(q, qd).

003 §4.5 in link frames (misprints of 003 corrected, docs/references.md):

* forward: ``kinematics.velocity_acceleration_pass`` ((4.29)-(4.34), ``vd_0 = -g``);
* centre-of-mass acceleration (4.35) *without* the misprinted extra term (misprint 003 (4.35)):
  ``sdd_i = vd_i + wd_i x s_i + w_i x (w_i x s_i)``;
* backward (4.36)-(4.37): ``F_i = m_i sdd_i``, ``N_i = I_i wd_i + w_i x I_i w_i``,
  ``f_i = F_i + R f_{i+1}``, ``n_i = N_i + R n_{i+1} + s_i x F_i + p_{i+1} x R f_{i+1}``
  (``R = ^iR_{i+1}``, ``p_{i+1} = ^ip_{i+1}``);
* joint force (4.38)-(4.39): ``tau_i = z . n_i`` (revolute) or ``z . f_i`` (prismatic).

The gravity vector ``g(q)`` is RNEA at ``qd = qdd = 0`` and the bias
``h(q, qd) = C(q, qd) qd + g(q)`` (003 (5.1)) is RNEA at ``qdd = 0``: one kernel, reused.

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
from rbd_ros.algorithm.kinematics import angles, forward_kinematics, joint_angles, rot, velocity_acceleration_pass
from rbd_ros.algorithm.layout import AP, ATYPE, COM, MASS, VZERO, WF, WGR, WN, WP, WVD, WW, WWD, com_inertia, vrow


@njit(cache=True, inline="always")
def body_wrench(mp: np.ndarray, i: int, wx: float, wy: float, wz: float, ax: float, ay: float,
                az: float, vx: float, vy: float, vz: float) -> tuple[float, float, float, float,
                                                                     float, float]:
    """Newton-Euler of body ``i`` (packed row: ``MASS``, ``COM`` s, ``IC`` I about the centre
    of mass) with angular velocity ``w``, angular acceleration ``a`` and frame-origin
    acceleration ``v`` (all in its frame): ``F = m sdd`` with (4.35) corrected,
    ``sdd = v + a x s + w x (w x s)``, and ``N = I a + w x (I w)`` (about the centre of mass)."""
    sx = mp[i, COM]
    sy = mp[i, COM + 1]
    sz = mp[i, COM + 2]
    m = mp[i, MASS]
    tx = wy * sz - wz * sy
    ty = wz * sx - wx * sz
    tz = wx * sy - wy * sx
    Fx = m * (vx + (ay * sz - az * sy) + (wy * tz - wz * ty))
    Fy = m * (vy + (az * sx - ax * sz) + (wz * tx - wx * tz))
    Fz = m * (vz + (ax * sy - ay * sx) + (wx * ty - wy * tx))
    i0, i1, i2, i4, i5, i8 = com_inertia(mp, i)  # row-major indices of I's distinct entries
    lx = i0 * wx + i1 * wy + i2 * wz
    ly = i1 * wx + i4 * wy + i5 * wz
    lz = i2 * wx + i5 * wy + i8 * wz
    return (Fx, Fy, Fz, i0 * ax + i1 * ay + i2 * az + (wy * lz - wz * ly),
            i1 * ax + i4 * ay + i5 * az + (wz * lx - wx * lz),
            i2 * ax + i5 * ay + i8 * az + (wx * ly - wy * lx))


@njit(cache=True)
def backward_pass(mp: np.ndarray, ws: np.ndarray, n: int, fe0: float, fe1: float, fe2: float,
                  ne0: float, ne1: float, ne2: float, tau: np.ndarray) -> None:
    """Force recursion (4.35)-(4.39) after ``velocity_acceleration_pass``.  ``fe, ne``: force
    and moment (about the frame-n origin, frame n) the last link exerts on the environment."""
    cfx = fe0
    cfy = fe1
    cfz = fe2
    cnx = ne0
    cny = ne1
    cnz = ne2
    for i in range(n - 1, -1, -1):
        if i < n - 1:
            # child force/moment expressed in frame i: R f, R n + p x R f
            c = i + 1
            fx = ws[c, WF]
            fy = ws[c, WF + 1]
            fz = ws[c, WF + 2]
            mx = ws[c, WN]
            my = ws[c, WN + 1]
            mz = ws[c, WN + 2]
            # R x = Rx(alpha) Rz(theta) x of joint c (kinematics.joint_angles)
            ct, st, ca, sa = angles(mp, ws, c)
            cfx, cfy, cfz = rot(ct, st, ca, sa, fx, fy, fz)
            rmx, rmy, rmz = rot(ct, st, ca, sa, mx, my, mz)
            px = ws[c, WP]
            py = ws[c, WP + 1]
            pz = ws[c, WP + 2]
            cnx = rmx + (py * cfz - pz * cfy)
            cny = rmy + (pz * cfx - px * cfz)
            cnz = rmz + (px * cfy - py * cfx)
        # (4.35) corrected and Euler's equation: F = m sdd, N = I wd + w x (I w)
        Fx, Fy, Fz, Nx, Ny, Nz = body_wrench(mp, i, ws[i, WW], ws[i, WW + 1], ws[i, WW + 2],
                                             ws[i, WWD], ws[i, WWD + 1], ws[i, WWD + 2],
                                             ws[i, WVD], ws[i, WVD + 1], ws[i, WVD + 2])
        sx = mp[i, COM]
        sy = mp[i, COM + 1]
        sz = mp[i, COM + 2]
        # (4.36)-(4.37)
        fx = Fx + cfx
        fy = Fy + cfy
        fz = Fz + cfz
        nx = Nx + cnx + (sy * Fz - sz * Fy)
        ny = Ny + cny + (sz * Fx - sx * Fz)
        nz = Nz + cnz + (sx * Fy - sy * Fx)
        ws[i, WF] = fx
        ws[i, WF + 1] = fy
        ws[i, WF + 2] = fz
        ws[i, WN] = nx
        ws[i, WN + 1] = ny
        ws[i, WN + 2] = nz
        tau[i] = nz if mp[i, ATYPE] == 0.0 else fz  # (4.38)-(4.39)


@njit(cache=True)
def add_actuator_torques(mp: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray) -> None:
    """``tau += G^2 Jm qdd + B qd + Tc sign(qd)`` (003 (6.16)-(6.17), ``algorithm.actuators``)."""
    for i in range(qd.shape[0]):
        tau[i] += armature(mp, i) * qdd[i] + friction(mp, i, qd[i])


@njit(cache=True)
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
    k = n - 1
    # world -> frame n: x_n = R^T x_w
    fx = ws[k, WGR] * f0 + ws[k, WGR + 3] * f1 + ws[k, WGR + 6] * f2
    fy = ws[k, WGR + 1] * f0 + ws[k, WGR + 4] * f1 + ws[k, WGR + 7] * f2
    fz = ws[k, WGR + 2] * f0 + ws[k, WGR + 5] * f1 + ws[k, WGR + 8] * f2
    mx = ws[k, WGR] * m0 + ws[k, WGR + 3] * m1 + ws[k, WGR + 6] * m2
    my = ws[k, WGR + 1] * m0 + ws[k, WGR + 4] * m1 + ws[k, WGR + 7] * m2
    mz = ws[k, WGR + 2] * m0 + ws[k, WGR + 5] * m1 + ws[k, WGR + 8] * m2
    # moment about the frame-n origin: m + p_tool x f
    t = n + 1
    px = mp[t, AP]
    py = mp[t, AP + 1]
    pz = mp[t, AP + 2]
    return fx, fy, fz, mx + (py * fz - pz * fy), my + (pz * fx - px * fz), mz + (px * fy - py * fx)


@njit(cache=True)
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


@njit(cache=True)
def gravity(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, tau: np.ndarray) -> None:
    """Generalized gravity ``g(q)`` = RNEA(q, 0, 0)."""
    z = ws[vrow(q.shape[0]) + VZERO, :q.shape[0]]
    rnea(mp, ws, q, z, z, tau)


@njit(cache=True)
def bias(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> None:
    """Bias ``h(q, qd) = C(q, qd) qd + g(q)`` = RNEA(q, qd, 0)."""
    z = ws[vrow(q.shape[0]) + VZERO, :q.shape[0]]
    rnea(mp, ws, q, qd, z, tau)


@njit(cache=True, parallel=True)
def rnea_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
               wrench: np.ndarray, use_wrench: bool, actuators: bool, tau: np.ndarray) -> None:
    """``rnea_full`` for each row of ``q, qd, qdd`` (N x n), ``prange`` over ``chunks``
    contiguous chunks of states (at most ``len(wss)``; one workspace ``wss[c]`` per chunk)."""
    N = q.shape[0]
    for c in prange(chunks):
        ws = wss[c]
        for k in range(c * N // chunks, (c + 1) * N // chunks):
            rnea_full(mp, ws, q[k], qd[k], qdd[k], wrench, use_wrench, actuators, tau[k])


@njit(cache=True, parallel=True)
def gravity_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, tau: np.ndarray) -> None:
    """``gravity`` for each row of ``q`` (N x n), ``prange`` over chunks of states."""
    N = q.shape[0]
    for c in prange(chunks):
        ws = wss[c]
        for k in range(c * N // chunks, (c + 1) * N // chunks):
            gravity(mp, ws, q[k], tau[k])


@njit(cache=True, parallel=True)
def bias_batch(mp: np.ndarray, wss: np.ndarray, chunks: int, q: np.ndarray, qd: np.ndarray,
               tau: np.ndarray) -> None:
    """``bias`` for each row of ``q, qd`` (N x n), ``prange`` over chunks of states."""
    N = q.shape[0]
    for c in prange(chunks):
        ws = wss[c]
        for k in range(c * N // chunks, (c + 1) * N // chunks):
            bias(mp, ws, q[k], qd[k], tau[k])
