"""A free-floating base: the chain on an SE(3) root joint (jitted; Featherstone's
floating-base RNEA, CRBA and ABA, written on the fixed-base kernels of this package).

Layout (Pinocchio's free-flyer, so results compare directly): ``q = [p (3), quaternion
(x, y, z, w) (4), q_joints (n)]`` (base pose in the world), ``v = [v_b (3), w_b (3),
qd (n)]`` (base twist in the base frame, linear first), ``a = v-dot``; base wrench
``[f; n]`` in the base frame at the base origin, first in ``tau``.

Why it is the fixed-base algorithm plus a root: every link quantity is computed in the
coordinates of the base body (the fixed-base kernels' "world" is ``base_link``), where the
dynamics do not depend on the base pose except through gravity, ``g_b = R^T g``.  The root
(body 0, inertia in packed row ``n``: ``layout``) then enters as:

* RNEA: frame 0 starts with the base's ``w``, ``w-dot`` and origin acceleration
  ``a_o = v-dot_b + w_b x v_b - g_b`` (the classical acceleration minus gravity, 003 §4.5
  with misprint 003 §4.5 step 1), moved to MDH frame 0 (``kinematics.velocity_acceleration_from``); the
  base wrench is the base body's Newton-Euler wrench plus link 1's force moved to the base
  origin (003 (4.36)-(4.37) one step further).
* CRBA: ``M = [[I^C_0, F^T], [F, M_joints]]``, ``I^C_0`` the composite inertia of everything
  about the base origin, ``F_j = I^C_j S_j`` (``crba``'s columns, now also seen by the base).
* ABA: pass 1 from the base twist, pass 2 hands link 1's articulated inertia to the root,
  the root solves ``IA_0 a_0' = -pA_0`` (no joint force on a free body; ``a' = a - [0; g_b]``),
  pass 3 from ``a_0'``.

Other root joints plug into the same place (``rbd_ros.floating_base``): a root with motion
subspace ``S_0`` (6 x nv_0, base frame) projects the base wrench on ``S_0^T`` (RNEA), takes
``S_0^T I^C_0 S_0`` and ``S_0^T F`` (CRBA) and solves ``(S_0^T IA_0 S_0) qdd_0 = S_0^T(...)``
(ABA); free-flyer: ``S_0 = E``; planar: ``[e_x, e_y, e_wz]``; a differential drive adds its
rolling constraint on top, which in base rates leaves the root ``[e_x, e_wz]``
(``algorithm.planar_base``).  The root-independent parts are ``rnea_root``,
``root_composite`` and ``aba_root_articulate``; each root writes its own projection.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.aba import aba_accelerations, aba_articulate, aba_velocities
from rbd_ros.algorithm.checked import nonfinite
from rbd_ros.algorithm.crba import composite_times_motion, crba_from_transforms
from rbd_ros.algorithm.f8vector import bad_vector
from rbd_ros.algorithm.first_use import one_signature
from rbd_ros.algorithm.kinematics import angles, forward_kinematics, joint_angles, velocity_acceleration_from
from rbd_ros.algorithm.layout import AP, AR, COM, GRAV, IC, MASS, MCOM, WA, WCH, WCI, WCM, WF, WIA, WN, WP, WPA
from rbd_ros.algorithm.rnea import backward_pass, body_wrench
from rbd_ros.algorithm.spatial6 import (
    PACKED,
    add3,
    add6,
    cross3,
    force_cross,
    inertia_motion,
    inertia_packed,
    load3,
    load_sym3,
    mat3_vec,
    mat3t_vec,
    mdh_rot,
    parallel_axis,
    point_acceleration,
    store6,
    store_sym6,
    sub3,
    sub6,
)

PACKED6 = PACKED  #: packed upper-triangle offsets of a symmetric 6x6 (aba.py "PACKED")


@njit(cache=True, inline="always")
def base_gravity(mp: np.ndarray, q: np.ndarray) -> tuple[float, float, float]:
    """World gravity in the base frame, ``g_b = R^T g``, ``R`` from q's unit quaternion."""
    x, y, z, w = q[3], q[4], q[5], q[6]
    s = 1.0 / np.sqrt(x * x + y * y + z * z + w * w)
    x *= s
    y *= s
    z *= s
    w *= s
    g = mp.shape[0] - 1
    g0 = mp[g, GRAV]
    g1 = mp[g, GRAV + 1]
    g2 = mp[g, GRAV + 2]
    # R^T g with R of (x, y, z, w) (so3.quaternion_to_rotation_into), column by column
    return ((1.0 - 2.0 * (y * y + z * z)) * g0 + 2.0 * (x * y + z * w) * g1 + 2.0 * (x * z - y * w) * g2,
            2.0 * (x * y - z * w) * g0 + (1.0 - 2.0 * (x * x + z * z)) * g1 + 2.0 * (y * z + x * w) * g2,
            2.0 * (x * z + y * w) * g0 + 2.0 * (y * z - x * w) * g1 + (1.0 - 2.0 * (x * x + y * y)) * g2)


@njit(cache=True)
def rnea_floating(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                  tau: np.ndarray) -> None:
    """Inverse dynamics ``tau = [f_b; n_b; tau_joints] = M a + h`` (module docstring)."""
    g = base_gravity(mp, q)
    joint_angles(mp, ws, q[7:])
    zero = (0.0, 0.0, 0.0)
    f, n = rnea_root(mp, ws, v[6:], a[6:], g, (v[0], v[1], v[2]), (v[3], v[4], v[5]), (a[0], a[1], a[2]),
                     (a[3], a[4], a[5]), zero, zero, tau[6:])
    tau[0], tau[1], tau[2] = f
    tau[3], tau[4], tau[5] = n


@njit(cache=True, inline="always")
def rnea_root(mp: np.ndarray, ws: np.ndarray, qd: np.ndarray, qdd: np.ndarray, g: tuple, v: tuple, w: tuple,
              dv: tuple, dw: tuple, fe: tuple, ne: tuple, tau: np.ndarray) -> tuple[tuple, tuple]:
    """The RNEA of the module docstring for any root, after ``joint_angles`` of the joints:
    base twist ``[v; w]`` and its rate ``[dv; dw]`` (base frame), base-frame gravity
    ``g = g_b``, and ``fe, ne`` (frame n, ``rnea.backward_pass``) the tool's wrench on the
    environment.  Joint torques into ``tau``; returns the base wrench ``(f_b, n_b)`` (base
    frame, about the base origin) a root joint must supply."""
    b = qd.shape[0]  # packed row of the base; frame 0 sits at p0 = mp[b, AP], R0 = mp[b, AR]
    ao = sub3(add3(dv, cross3(w, v)), g)  # a_o = v-dot + w x v - g_b: the origin's acceleration, gravity as -g
    p0 = load3(mp, b, AP)
    u = point_acceleration(ao, dw, w, p0)  # frame 0's origin: a_o + wd x p0 + w x (w x p0)
    velocity_acceleration_from(mp, ws, qd, qdd, mat3t_vec(mp, b, AR, w), mat3t_vec(mp, b, AR, dw),
                               mat3t_vec(mp, b, AR, u))  # R0^T x: into frame 0
    backward_pass(mp, ws, b, fe[0], fe[1], fe[2], ne[0], ne[1], ne[2], tau)
    # link 1's force and moment (frame 1, about its origin o) -> base frame, about the base origin
    cs = angles(mp, ws, 0)
    o = add3(p0, mat3_vec(mp, b, AR, load3(ws, 0, WP)))  # link 1's origin
    F1 = mat3_vec(mp, b, AR, mdh_rot(cs, load3(ws, 0, WF)))
    N1 = add3(mat3_vec(mp, b, AR, mdh_rot(cs, load3(ws, 0, WN))), cross3(o, F1))
    # the base body (row b): F = m (a_o + wd x c + w x (w x c)), N = I_c wd + w x I_c w (+ c x F)
    F, N = body_wrench(mp, b, w, dw, ao)
    return add3(F1, F), add3(add3(N1, N), cross3(load3(mp, b, COM), F))


@njit(cache=True, inline="always")
def base_spatial_inertia(mp: np.ndarray, b: int) -> tuple[float, tuple, tuple]:
    """The base body's spatial inertia ``(m, h, I_O)`` about the base origin: mass, ``h = m c``
    and the upper triangle of ``I_O = I_c + m (|c|^2 E - c c^T)``."""
    h = load3(mp, b, MCOM)
    return mp[b, MASS], h, parallel_axis(load_sym3(mp, b, IC), h, load3(mp, b, COM))


@njit(cache=True, inline="always")
def root_composite(mp: np.ndarray, ws: np.ndarray, n: int) -> tuple[float, tuple, tuple]:
    """``I^C_0 = (m, h, I_O)``, the composite inertia of the base body and the whole chain
    about the base origin (``base_spatial_inertia`` + ``crba``'s composite of link 1 in
    ``ws[0]``), after ``crba_from_transforms``."""
    m, h, I = base_spatial_inertia(mp, n)
    return m + ws[0, WCM], add3(h, load3(ws, 0, WCH)), add6(I, load_sym3(ws, 0, WCI))


@njit(cache=True)
def crba_floating(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, M: np.ndarray) -> None:
    """Mass matrix ``(6 + n) x (6 + n)`` in the free-flyer layout (module docstring)."""
    n = q.shape[0] - 7
    forward_kinematics(mp, ws, q[7:])
    crba_from_transforms(mp, ws, n, M[6:, 6:], 0)  # joint block; leaves composites I^C_j in ws
    m, (h0, h1, h2), (I00, I01, I02, I11, I12, I22) = root_composite(mp, ws, n)
    # I^C_0 in [v; w] order: [[m E, -h^], [h^, I_O]]
    for r in range(3):
        for c in range(3):
            M[r, c] = m if r == c else 0.0
    M[0, 3] = M[3, 0] = 0.0
    M[1, 4] = M[4, 1] = 0.0
    M[2, 5] = M[5, 2] = 0.0
    M[0, 4] = M[4, 0] = h2
    M[0, 5] = M[5, 0] = -h1
    M[1, 3] = M[3, 1] = -h2
    M[1, 5] = M[5, 1] = h0
    M[2, 3] = M[3, 2] = h1
    M[2, 4] = M[4, 2] = -h0
    M[3, 3] = I00
    M[3, 4] = M[4, 3] = I01
    M[3, 5] = M[5, 3] = I02
    M[4, 4] = I11
    M[4, 5] = M[5, 4] = I12
    M[5, 5] = I22
    for j in range(n):  # F_j = I^C_j S_j = [n; f] about the base origin -> rows [f; n]
        n0, n1, n2, f0, f1, f2 = composite_times_motion(ws, j)
        col = 6 + j
        M[0, col] = M[col, 0] = f0
        M[1, col] = M[col, 1] = f1
        M[2, col] = M[col, 2] = f2
        M[3, col] = M[col, 3] = n0
        M[4, col] = M[col, 4] = n1
        M[5, col] = M[col, 5] = n2


@njit(cache=True, inline="always")
def aba_root_articulate(mp: np.ndarray, ws: np.ndarray, qd: np.ndarray, tau: np.ndarray, actuators: bool,
                        vx: float, vy: float, vz: float, wx: float, wy: float, wz: float, f0: float,
                        f1: float, f2: float, n0: float, n1: float, n2: float) -> None:
    """ABA passes 1 and 2 for any root, after ``forward_kinematics`` of the joints: the root's
    articulated inertia ``IA_0`` (packed, ``[w; v]`` order as ``aba``) into ``ws[n, WIA]`` and
    ``pA_0 = v x* I_0 v - [n; f]`` (``[f; n]``: the wrench applied to the base, base frame,
    about its origin) into ``ws[n, WPA]``; the base twist is ``[v; w]`` (base frame)."""
    b = qd.shape[0]
    aba_velocities(mp, ws, qd, wx, wy, wz, vx, vy, vz)
    m, h, I = base_spatial_inertia(mp, b)
    store_sym6(ws, b, WIA, inertia_packed(m, h, I))  # IA_0 = I_0 ([w; v] order, packed)
    V = (wx, wy, wz, vx, vy, vz)
    # pA_0 = v x* I_0 v - [n; f]
    store6(ws, b, WPA, sub6(force_cross(V, inertia_motion(m, h, I, V)), (n0, n1, n2, f0, f1, f2)))
    aba_articulate(mp, ws, qd, tau, actuators, b)


@njit(cache=True)
def aba_floating(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, tau: np.ndarray,
                 actuators: bool, a: np.ndarray) -> None:
    """Forward dynamics ``a = M^{-1}(tau - h)`` in the free-flyer layout (module docstring);
    ``tau[:6]`` is a wrench applied to the base ([f; n], base frame, base origin)."""
    n = q.shape[0] - 7
    b = n
    forward_kinematics(mp, ws, q[7:])
    aba_root_articulate(mp, ws, v[6:], tau[6:], actuators, v[0], v[1], v[2], v[3], v[4], v[5],
                        tau[0], tau[1], tau[2], tau[3], tau[4], tau[5])
    x = ws[b, WIA:WIA + 21]
    # IA_0 a' = -pA_0: Cholesky U^T U of the packed IA_0 in place, then two triangular solves
    for j in range(6):
        d = x[PACKED6[j]]
        for k in range(j):
            u = x[PACKED6[k] + j - k]
            d -= u * u
        d = np.sqrt(d)
        x[PACKED6[j]] = d
        for c in range(j + 1, 6):
            e = x[PACKED6[j] + c - j]
            for k in range(j):
                e -= x[PACKED6[k] + j - k] * x[PACKED6[k] + c - k]
            x[PACKED6[j] + c - j] = e / d
    y = ws[b, WA:WA + 6]
    for j in range(6):
        e = -ws[b, WPA + j]
        for k in range(j):
            e -= x[PACKED6[k] + j - k] * y[k]
        y[j] = e / x[PACKED6[j]]
    for j in range(5, -1, -1):
        e = y[j]
        for c in range(j + 1, 6):
            e -= x[PACKED6[j] + c - j] * y[c]
        y[j] = e / x[PACKED6[j]]
    aba_accelerations(mp, ws, n, y[0], y[1], y[2], y[3], y[4], y[5], a[6:])
    gx, gy, gz = base_gravity(mp, q)
    a[0] = y[3] + gx  # a = a' + [0; g_b], back to [v-dot; w-dot]
    a[1] = y[4] + gy
    a[2] = y[5] + gz
    a[3] = y[0]
    a[4] = y[1]
    a[5] = y[2]


# ---- validated entry points (FloatingBaseRobot's fast path; non-zero return = invalid) -----
# Compiled for one signature on first use (``first_use``), without numba's runtime, and called
# through their compiled entry point (``first_use.on_first_call``), as ``algorithm.checked``
# does for the fixed base: the caller checks
# ``ndim`` and ``dtype``; lengths, stride, alignment, finiteness and the unit quaternion are
# checked here; 2: the result is NaN or Inf (``rbd_ros.util.validate``).
_M = "float64[:, ::1]"
_V = "float64[::1]"


@njit(cache=True, inline="always")
def bad_configuration(mp: np.ndarray, q: np.ndarray) -> bool:
    """Not ``7 + n`` finite values with a unit quaternion (to ~1e-6) in ``q[3:7]``."""
    if bad_vector(q, mp.shape[0] + 4):
        return True
    s = q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]
    return abs(s - 1.0) > 2e-6


@one_signature(f"int64({_M}, {_M}, {_V}, {_V}, {_V}, {_V})", cache=True, _nrt=False)
def rnea_floating_checked(mp, ws, q, v, a, tau):  # typed by the signature
    nv = mp.shape[0] + 3
    if bad_configuration(mp, q) or bad_vector(v, nv) or bad_vector(a, nv) or tau.shape[0] != nv:
        return 1
    rnea_floating(mp, ws, q, v, a, tau)
    return 2 if nonfinite(tau) else 0


@one_signature(f"int64({_M}, {_M}, {_V}, {_V}, {_V}, {_V})", cache=True, _nrt=False)
def aba_floating_checked(mp, ws, q, v, tau, a):
    nv = mp.shape[0] + 3
    if bad_configuration(mp, q) or bad_vector(v, nv) or bad_vector(tau, nv) or a.shape[0] != nv:
        return 1
    aba_floating(mp, ws, q, v, tau, False, a)
    return 2 if nonfinite(a) else 0


@one_signature(f"int64({_M}, {_M}, {_V}, {_M})", cache=True, _nrt=False)
def crba_floating_checked(mp, ws, q, M):
    nv = mp.shape[0] + 3
    if bad_configuration(mp, q) or M.shape[0] != nv or M.shape[1] != nv:
        return 1
    crba_floating(mp, ws, q, M)
    return 2 if nonfinite(M) else 0
