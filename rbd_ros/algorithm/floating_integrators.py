"""Whole-horizon integration of a floating-base robot on SE(3) x R^n in one jitted call.

State ``(q, v)`` in the free-flyer layout (``floating_base``); base kinematics
``T-dot = T (v_b, w_b)^`` (body twist, right multiplication), joints ``q-dot = qd``.  The
base is integrated on the group (not in the documents), the joints in
the same Runge-Kutta tableau:

* ``LIE_EULER``: ``T+ = T exp(h V^)``, ``q+ = q + h qd``, ``v+ = v + h a``;
* ``RKMK4``: classical RK4 in the chart ``T = T_k exp(phi^)``, ``phi-dot = S(phi)^{-1} V``
  (004's ``S(phi) = dexp(-phi)``, (29)/(55); ``lie.se3._dexp_inv_series``), the stage poses
  ``T_k exp(phi_s^)`` written back as position + quaternion; ``T+ = T_k exp(phi(h)^)``.

The quaternion of every stored pose comes from the rotation matrix (``so3``), so it stays
unit to rounding.  Torques/wrenches are a zero-order hold (row k over step k).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.floating_base import aba_floating
from rbd_ros.lie.se3 import _dexp_inv_series, _exp
from rbd_ros.lie.so3 import _quaternion_to_rotation, _rotation_to_quaternion

LIE_EULER = 0
RKMK4 = 1


@njit(cache=True, inline="always")
def pose_of(q: np.ndarray, T: np.ndarray) -> None:
    """4x4 base pose of ``q = [p; quaternion; ...]`` (quaternion normalised)."""
    s = 1.0 / np.sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6])
    _quaternion_to_rotation(q[3] * s, q[4] * s, q[5] * s, q[6] * s, T)
    for r in range(3):
        T[r, 3] = q[r]
        T[3, r] = 0.0
    T[3, 3] = 1.0


@njit(cache=True)
def _compose_quaternion(T: np.ndarray, E: np.ndarray, R: np.ndarray, q: np.ndarray,
                        out_q: np.ndarray) -> None:
    """``out_q[:7]`` = position and quaternion of ``T E`` (``R`` 3x3 scratch), the
    quaternion's sign chosen on the side of ``q[3:7]`` (continuous trajectories, as
    Pinocchio's ``integrate``)."""
    for r in range(3):
        out_q[r] = T[r, 0] * E[0, 3] + T[r, 1] * E[1, 3] + T[r, 2] * E[2, 3] + T[r, 3]
        for c in range(3):
            R[r, c] = T[r, 0] * E[0, c] + T[r, 1] * E[1, c] + T[r, 2] * E[2, c]
    _rotation_to_quaternion(R, out_q[3:7])
    if out_q[3] * q[3] + out_q[4] * q[4] + out_q[5] * q[5] + out_q[6] * q[6] < 0.0:
        for r in range(3, 7):
            out_q[r] = -out_q[r]


@njit(cache=True)
def integrate_config(q: np.ndarray, v: np.ndarray, dt: float, out: np.ndarray) -> None:
    """``out = q (+) v dt``: base ``T exp(dt V^)``, joints ``q + dt qd`` (Pinocchio's
    ``integrate`` for a free-flyer root)."""
    T = np.empty((4, 4))
    E = np.empty((4, 4))
    R = np.empty((3, 3))
    phi = np.empty(6)
    pose_of(q, T)
    for r in range(6):
        phi[r] = dt * v[r]
    _exp(phi, E)
    _compose_quaternion(T, E, R, q, out)
    for i in range(7, q.shape[0]):
        out[i] = q[i] + dt * v[i - 1]


@njit(cache=True, nogil=True)
def integrate_floating(mp: np.ndarray, ws: np.ndarray, q0: np.ndarray, v0: np.ndarray,
                       tau: np.ndarray, dt: float, method: int, actuators: bool, Q: np.ndarray,
                       V: np.ndarray, A: np.ndarray) -> None:
    """Integrate ``tau.shape[0]`` steps (module docstring) into ``Q (steps+1, 7+n)``,
    ``V`` and ``A (steps+1, 6+n)``; ``A[k]`` is the acceleration at the start of step k."""
    nv = v0.shape[0]
    nq = q0.shape[0]
    steps = tau.shape[0]
    T = np.empty((4, 4))  # scratch, allocated once per horizon
    E = np.empty((4, 4))
    R = np.empty((3, 3))
    qs = np.empty(nq)
    vs = np.empty(nv)
    K = np.empty((4, nv))  # stage velocities: chart rate (base, S^-1 V) and joint rates
    a = np.empty((4, nv))
    phi = np.empty(6)
    t1 = np.empty(6)
    t2 = np.empty(6)
    Q[0] = q0
    V[0] = v0
    c = (0.0, 0.5, 0.5, 1.0)
    for k in range(steps):
        q = Q[k]
        v = V[k]
        u = tau[k]
        pose_of(q, T)
        if method == LIE_EULER:
            aba_floating(mp, ws, q, v, u, actuators, A[k])
            for r in range(6):
                phi[r] = dt * v[r]
            _exp(phi, E)
            _compose_quaternion(T, E, R, q, Q[k + 1])
            for i in range(7, nq):
                Q[k + 1, i] = q[i] + dt * v[i - 1]
            for i in range(nv):
                V[k + 1, i] = v[i] + dt * A[k, i]
            continue
        for s in range(4):
            h = dt * c[s]
            for r in range(6):
                phi[r] = 0.0 if s == 0 else h * K[s - 1, r]
            if s == 0:
                for i in range(nq):
                    qs[i] = q[i]
                for i in range(nv):
                    vs[i] = v[i]
            else:
                _exp(phi, E)
                _compose_quaternion(T, E, R, q, qs)
                for i in range(7, nq):
                    qs[i] = q[i] + h * K[s - 1, i - 1]
                for i in range(nv):
                    vs[i] = v[i] + h * a[s - 1, i]
            aba_floating(mp, ws, qs, vs, u, actuators, a[s])
            _dexp_inv_series(phi, vs[:6], K[s, :6], t1, t2)  # phi-dot = S(phi)^{-1} V
            for i in range(6, nv):
                K[s, i] = vs[i]
        for i in range(nv):
            A[k, i] = a[0, i]
        for r in range(6):
            phi[r] = dt / 6.0 * (K[0, r] + 2.0 * K[1, r] + 2.0 * K[2, r] + K[3, r])
        _exp(phi, E)
        _compose_quaternion(T, E, R, q, Q[k + 1])
        for i in range(7, nq):
            Q[k + 1, i] = q[i] + dt / 6.0 * (K[0, i - 1] + 2.0 * K[1, i - 1] + 2.0 * K[2, i - 1] + K[3, i - 1])
        for i in range(nv):
            V[k + 1, i] = v[i] + dt / 6.0 * (a[0, i] + 2.0 * a[1, i] + 2.0 * a[2, i] + a[3, i])
    if steps > 0:
        aba_floating(mp, ws, Q[steps], V[steps], tau[steps - 1], actuators, A[steps])
    else:
        for i in range(nv):
            A[0, i] = 0.0
