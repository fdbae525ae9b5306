"""Statics (jitted): joint torques for a tool wrench, and the wrench each joint transmits.

003 ch.2.  The tool exerts ``m = [f; n]`` (force first, moment about the
tool origin) *on the environment*.  Virtual work (2.1), ``dq^T tau - dr^T m = 0``, gives

    tau = J^T m                                                              (2.2)

with ``J`` the geometric Jacobian of the tool origin (rows [linear; angular], world frame;
``kinematics.frame_jacobian``).  A wrench given in the tool frame, ``^H m``, is first rotated:
``m = [^0R_H ^H f; ^0R_H ^H n]``.  This is the corrected (2.6)-(2.7): the printed ``Gamma``
adds ``^0p_H x ^0f``, a moment about the *base* origin, while ``J`` maps to the velocity of the
*tool* origin (misprint 003 (2.6)-(2.7); planar 2R, l1 = l2 = 1, q = 0, f = (0, 1, 0): tau = (2, 1),
the literal (2.7) gives (4, 3)).

``joint_wrenches`` is the static case of the RNEA backward pass 003 (4.36)-(4.39) (zero
velocity and acceleration, gravity optional): ``f_i = R f_{i+1} [+ m_i g terms]``,
``n_i = R n_{i+1} + p_{i+1} x R f_{i+1} [+ ...]``, ``tau_i = z . n_i`` (R) or ``z . f_i`` (P),
a second, independent route to the same torques.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.kinematics import forward_kinematics, frame_jacobian, velocity_acceleration_pass
from rbd_ros.algorithm.layout import VZERO, WF, WGR, WN, vrow
from rbd_ros.algorithm.rnea import backward_pass, gravity, wrench_in_last_frame
from rbd_ros.algorithm.spatial6 import load3, mat3_vec


@njit(cache=True, inline="always")
def world_wrench(ws: np.ndarray, n: int, wrench: np.ndarray,
                 tool_frame: bool) -> tuple[float, float, float, float, float, float]:
    """``m = [f; n]`` in world axes: ``wrench`` itself, or ``[^0R_H ^H f; ^0R_H ^H n]`` for a
    tool-frame wrench (corrected 003 (2.3)-(2.7)); needs world transforms."""
    if not tool_frame:
        return wrench[0], wrench[1], wrench[2], wrench[3], wrench[4], wrench[5]
    f = mat3_vec(ws, n, WGR, (wrench[0], wrench[1], wrench[2]))  # ^0R_H ^H f
    m = mat3_vec(ws, n, WGR, (wrench[3], wrench[4], wrench[5]))  # ^0R_H ^H n
    return f[0], f[1], f[2], m[0], m[1], m[2]


@njit(cache=True)
def static_torques(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, wrench: np.ndarray,
                   tool_frame: bool, with_gravity: bool, tau: np.ndarray) -> None:
    """``tau = J^T m`` (003 (2.2)) [``+ g(q)``], J the tool's geometric Jacobian
    (``kinematics.frame_jacobian``, kept in workspace scratch rows 1..6)."""
    n = q.shape[0]
    if with_gravity:
        gravity(mp, ws, q, tau)  # g(q) = RNEA(q, 0, 0); forward kinematics below
    forward_kinematics(mp, ws, q)
    v = vrow(n) + 1  # scratch rows (row VZERO stays zero)
    J = ws[v:v + 6, :n]
    frame_jacobian(mp, ws, n, n + 1, J)
    m = world_wrench(ws, n, wrench, tool_frame)
    for j in range(n):
        t = 0.0
        for r in range(6):
            t += J[r, j] * m[r]
        tau[j] = tau[j] + t if with_gravity else t


@njit(cache=True)
def joint_wrenches(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, wrench: np.ndarray,
                   tool_frame: bool, with_gravity: bool, out: np.ndarray, tau: np.ndarray) -> None:
    """Static backward pass (003 (4.36)-(4.39), zero motion): ``out[i] = [f_i; n_i]`` (world
    axes, moment about joint i's frame origin), the wrench link i-1 exerts on link i through
    joint i while the tool exerts ``m`` on the environment; ``tau`` the joint torques."""
    n = q.shape[0]
    forward_kinematics(mp, ws, q)
    fx, fy, fz, mx, my, mz = world_wrench(ws, n, wrench, tool_frame)
    # world -> frame n (x_n = R^T x_w), moment about the frame-n origin: m + p_tool x f
    ex, ey, ez, ux, uy, uz = wrench_in_last_frame(mp, ws, n, fx, fy, fz, mx, my, mz)
    zero = ws[vrow(n) + VZERO, :n]  # joint angles are set by forward_kinematics
    velocity_acceleration_pass(mp, ws, zero, zero, with_gravity)  # all zero without gravity
    backward_pass(mp, ws, n, ex, ey, ez, ux, uy, uz, tau)
    for i in range(n):  # frame i -> world: x_w = ^WR_i x_i
        out[i, 0], out[i, 1], out[i, 2] = mat3_vec(ws, i, WGR, load3(ws, i, WF))
        out[i, 3], out[i, 4], out[i, 5] = mat3_vec(ws, i, WGR, load3(ws, i, WN))
