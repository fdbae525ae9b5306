"""Whole-horizon integration of a floating-base robot on SE(3) x R^n in one jitted call.

State ``(q, v)`` in the free-flyer layout (``floating_base``); base kinematics
``T-dot = T (v_b, w_b)^`` (body twist, right multiplication), joints ``q-dot = qd``.  The
base is integrated on the group (not in the documents), the joints in the same Runge-Kutta
tableau: the stages of ``lie.integrators`` (``LIE_EULER``, ``RKMK4``: the one home of both
schemes) with the base pose as ``T``, the joint angles as its additive coordinates and ABA as ``f``.

The quaternion of every stored pose comes from the rotation matrix (``so3``), so it stays
unit to rounding.  Torques/wrenches are a zero-order hold (row k over step k).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.floating_base import aba_floating
from rbd_ros.lie.integrators import LIE_EULER, RKMK4, lie_finish, lie_rate, lie_stage, stage_count, step_scratch
from rbd_ros.lie.se3 import compose_exp_into
from rbd_ros.lie.so3 import quaternion_to_rotation_into, rotation_to_quaternion_into

__all__ = ["LIE_EULER", "RKMK4", "integrate_config", "integrate_floating", "pose_of"]


@njit(cache=True, inline="always")
def pose_of(q: np.ndarray, T: np.ndarray) -> None:
    """4x4 base pose of ``q = [p; quaternion; ...]`` (quaternion normalised)."""
    s = 1.0 / np.sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6])
    quaternion_to_rotation_into(q[3] * s, q[4] * s, q[5] * s, q[6] * s, T)
    for r in range(3):
        T[r, 3] = q[r]
        T[3, r] = 0.0
    T[3, 3] = 1.0


@njit(cache=True)
def _store_pose(T: np.ndarray, q: np.ndarray, out_q: np.ndarray) -> None:
    """``out_q[:7]`` = position and quaternion of ``T``, the quaternion's sign chosen on the
    side of ``q[3:7]`` (continuous trajectories, as Pinocchio's ``integrate``)."""
    for r in range(3):
        out_q[r] = T[r, 3]
    rotation_to_quaternion_into(T, out_q[3:7])  # reads T[:3, :3]
    if out_q[3] * q[3] + out_q[4] * q[4] + out_q[5] * q[5] + out_q[6] * q[6] < 0.0:
        for r in range(3, 7):
            out_q[r] = -out_q[r]


@njit(cache=True)
def integrate_config(q: np.ndarray, v: np.ndarray, dt: float, out: np.ndarray) -> None:
    """``out = q (+) v dt``: base ``T exp(dt V^)``, joints ``q + dt qd`` (Pinocchio's
    ``integrate`` for a free-flyer root)."""
    T = np.empty((4, 4))
    E = np.empty((4, 4))
    Tn = np.empty((4, 4))
    phi = np.empty(6)
    pose_of(q, T)
    for r in range(6):
        phi[r] = dt * v[r]
    compose_exp_into(T, phi, E, Tn)  # T exp(dt V^)
    _store_pose(Tn, q, out)
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
    Tst = np.empty((4, 4))
    Tn = np.empty((4, 4))
    qs = np.empty(nq)
    a, Vs, K, phi, E, t1, t2 = step_scratch(nv)  # a, Vs: stage accelerations, velocities
    Q[0] = q0
    V[0] = v0
    for k in range(steps):
        q = Q[k]
        v = V[k]
        pose_of(q, T)
        for s in range(stage_count(method)):
            if s == 0:
                aba_floating(mp, ws, q, v, tau[k], actuators, a[0])  # a_1 = ABA at the start
                lie_rate(0, v[:6], K, phi, t1, t2)
            else:
                lie_stage(s, T, q[7:], v, dt, a, Vs, K, phi, E, Tst, qs[7:])  # stage pose and joints
                _store_pose(Tst, q, qs)
                aba_floating(mp, ws, qs, Vs[s], tau[k], actuators, a[s])  # a_s at the stage
                lie_rate(s, Vs[s, :6], K, phi, t1, t2)  # the base twist is v[:6]
        lie_finish(method, T, q[7:], v, dt, a, Vs, K, phi, E, Tn, Q[k + 1, 7:], V[k + 1])
        _store_pose(Tn, q, Q[k + 1])
        for i in range(nv):
            A[k, i] = a[0, i]
    if steps > 0:
        aba_floating(mp, ws, Q[steps], V[steps], tau[steps - 1], actuators, A[steps])
    else:
        for i in range(nv):
            A[0, i] = 0.0
