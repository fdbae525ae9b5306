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
from rbd_ros.algorithm.checked import _nonfinite
from rbd_ros.algorithm.crba import composite_times_motion, crba_from_transforms
from rbd_ros.algorithm.kinematics import (
    angles,
    forward_kinematics,
    joint_angles,
    point_acceleration,
    rot,
    velocity_acceleration_from,
)
from rbd_ros.algorithm.layout import AP, AR, COM, GRAV, IC, MASS, MCOM, WA, WCH, WCI, WCM, WF, WIA, WN, WP, WPA
from rbd_ros.algorithm.rnea import backward_pass, body_wrench

#: packed upper-triangle offsets of a symmetric 6x6 (aba.py "PACKED")
_OFF = (0, 6, 11, 15, 18, 20)


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
    # R^T g with R of (x, y, z, w) (so3._quaternion_to_rotation), column by column
    return ((1.0 - 2.0 * (y * y + z * z)) * g0 + 2.0 * (x * y + z * w) * g1 + 2.0 * (x * z - y * w) * g2,
            2.0 * (x * y - z * w) * g0 + (1.0 - 2.0 * (x * x + z * z)) * g1 + 2.0 * (y * z + x * w) * g2,
            2.0 * (x * z + y * w) * g0 + 2.0 * (y * z - x * w) * g1 + (1.0 - 2.0 * (x * x + y * y)) * g2)


@njit(cache=True)
def rnea_floating(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                  tau: np.ndarray) -> None:
    """Inverse dynamics ``tau = [f_b; n_b; tau_joints] = M a + h`` (module docstring)."""
    gx, gy, gz = base_gravity(mp, q)
    joint_angles(mp, ws, q[7:])
    tau[0], tau[1], tau[2], tau[3], tau[4], tau[5] = rnea_root(
        mp, ws, v[6:], a[6:], gx, gy, gz, v[0], v[1], v[2], v[3], v[4], v[5],
        a[0], a[1], a[2], a[3], a[4], a[5], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, tau[6:])


@njit(cache=True, inline="always")
def rnea_root(mp: np.ndarray, ws: np.ndarray, qd: np.ndarray, qdd: np.ndarray, gx: float, gy: float,
              gz: float, vx: float, vy: float, vz: float, wx: float, wy: float, wz: float, dvx: float,
              dvy: float, dvz: float, dwx: float, dwy: float, dwz: float, fe0: float, fe1: float,
              fe2: float, ne0: float, ne1: float, ne2: float,
              tau: np.ndarray) -> tuple[float, float, float, float, float, float]:
    """The RNEA of the module docstring for any root, after ``joint_angles`` of the joints:
    base twist ``[v; w]`` and its rate ``[v-dot; w-dot]`` (base frame), base-frame gravity
    ``g_b``, and ``fe, ne`` (frame n, ``rnea.backward_pass``) the tool's wrench on the
    environment.  Joint torques into ``tau``; returns the base wrench ``(f_b, n_b)`` (base
    frame, about the base origin) a root joint must supply."""
    n = qd.shape[0]
    b = n  # packed row of the base
    # a_o = v-dot + w x v - g_b: classical acceleration of the base origin, gravity as -g
    aox = dvx + (wy * vz - wz * vy) - gx
    aoy = dvy + (wz * vx - wx * vz) - gy
    aoz = dvz + (wx * vy - wy * vx) - gz
    # frame 0 (origin p0, rotation R0 = mp[b, AR]): a_p0 = a_o + wd x p0 + w x (w x p0)
    p0 = mp[b, AP]
    p1 = mp[b, AP + 1]
    p2 = mp[b, AP + 2]
    ux, uy, uz = point_acceleration(aox, aoy, aoz, dwx, dwy, dwz, wx, wy, wz, p0, p1, p2)
    r = mp[b, AR:AR + 9]
    velocity_acceleration_from(  # R0^T x: into frame 0
        mp, ws, qd, qdd,
        r[0] * wx + r[3] * wy + r[6] * wz, r[1] * wx + r[4] * wy + r[7] * wz, r[2] * wx + r[5] * wy + r[8] * wz,
        r[0] * dwx + r[3] * dwy + r[6] * dwz, r[1] * dwx + r[4] * dwy + r[7] * dwz,
        r[2] * dwx + r[5] * dwy + r[8] * dwz,
        r[0] * ux + r[3] * uy + r[6] * uz, r[1] * ux + r[4] * uy + r[7] * uz, r[2] * ux + r[5] * uy + r[8] * uz)
    backward_pass(mp, ws, n, fe0, fe1, fe2, ne0, ne1, ne2, tau)
    # link 1's force and moment (frame 1, about its origin) -> base frame, about the base origin
    c, s, ca, sa = angles(mp, ws, 0)
    fx, fy, fz = rot(c, s, ca, sa, ws[0, WF], ws[0, WF + 1], ws[0, WF + 2])
    mx, my, mz = rot(c, s, ca, sa, ws[0, WN], ws[0, WN + 1], ws[0, WN + 2])
    ox = p0 + r[0] * ws[0, WP] + r[1] * ws[0, WP + 1] + r[2] * ws[0, WP + 2]  # link-1 origin
    oy = p1 + r[3] * ws[0, WP] + r[4] * ws[0, WP + 1] + r[5] * ws[0, WP + 2]
    oz = p2 + r[6] * ws[0, WP] + r[7] * ws[0, WP + 1] + r[8] * ws[0, WP + 2]
    Fx = r[0] * fx + r[1] * fy + r[2] * fz
    Fy = r[3] * fx + r[4] * fy + r[5] * fz
    Fz = r[6] * fx + r[7] * fy + r[8] * fz
    Nx = r[0] * mx + r[1] * my + r[2] * mz + (oy * Fz - oz * Fy)
    Ny = r[3] * mx + r[4] * my + r[5] * mz + (oz * Fx - ox * Fz)
    Nz = r[6] * mx + r[7] * my + r[8] * mz + (ox * Fy - oy * Fx)
    # the base body (row b): F = m (a_o + wd x c + w x (w x c)), N = I_c wd + w x I_c w (+ c x F)
    Bx, By, Bz, Cx, Cy, Cz = body_wrench(mp, b, wx, wy, wz, dwx, dwy, dwz, aox, aoy, aoz)
    sx = mp[b, COM]
    sy = mp[b, COM + 1]
    sz = mp[b, COM + 2]
    return (Fx + Bx, Fy + By, Fz + Bz, Nx + Cx + (sy * Bz - sz * By), Ny + Cy + (sz * Bx - sx * Bz),
            Nz + Cz + (sx * By - sy * Bx))


@njit(cache=True, inline="always")
def base_spatial_inertia(mp: np.ndarray, b: int) -> tuple[float, float, float, float, float, float,
                                                           float, float, float, float]:
    """The base body's spatial inertia about the base origin: ``m``, ``h = m c`` and the
    upper triangle of ``I_O = I_c + m (|c|^2 E - c c^T)`` (``I00, I01, I02, I11, I12, I22``)."""
    m = mp[b, MASS]
    h0 = mp[b, MCOM]
    h1 = mp[b, MCOM + 1]
    h2 = mp[b, MCOM + 2]
    c0 = mp[b, COM]
    c1 = mp[b, COM + 1]
    c2 = mp[b, COM + 2]
    return (m, h0, h1, h2, mp[b, IC] + h1 * c1 + h2 * c2, mp[b, IC + 1] - h0 * c1,
            mp[b, IC + 2] - h0 * c2, mp[b, IC + 4] + h0 * c0 + h2 * c2, mp[b, IC + 5] - h1 * c2,
            mp[b, IC + 8] + h0 * c0 + h1 * c1)


@njit(cache=True, inline="always")
def root_composite(mp: np.ndarray, ws: np.ndarray, n: int) -> tuple[float, float, float, float, float,
                                                                     float, float, float, float, float]:
    """``I^C_0``, the composite inertia of the base body and the whole chain about the base
    origin (``base_spatial_inertia`` + ``crba``'s composite of link 1 in ``ws[0]``), after
    ``crba_from_transforms``: ``m``, ``h``, upper triangle of ``I_O``."""
    m, h0, h1, h2, I00, I01, I02, I11, I12, I22 = base_spatial_inertia(mp, n)
    return (m + ws[0, WCM], h0 + ws[0, WCH], h1 + ws[0, WCH + 1], h2 + ws[0, WCH + 2], I00 + ws[0, WCI],
            I01 + ws[0, WCI + 1], I02 + ws[0, WCI + 2], I11 + ws[0, WCI + 4], I12 + ws[0, WCI + 5],
            I22 + ws[0, WCI + 8])


@njit(cache=True)
def crba_floating(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, M: np.ndarray) -> None:
    """Mass matrix ``(6 + n) x (6 + n)`` in the free-flyer layout (module docstring)."""
    n = q.shape[0] - 7
    forward_kinematics(mp, ws, q[7:])
    crba_from_transforms(mp, ws, n, M[6:, 6:], 0)  # joint block; leaves composites I^C_j in ws
    m, h0, h1, h2, I00, I01, I02, I11, I12, I22 = root_composite(mp, ws, n)
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
    # root: rigid inertia IA_0 (packed, [w; v] order as aba.py) and pA_0 = v x* I v - f_ext
    m, h0, h1, h2, I00, I01, I02, I11, I12, I22 = base_spatial_inertia(mp, b)
    x = ws[b, WIA:WIA + 21]
    x[0] = I00
    x[1] = I01
    x[2] = I02
    x[3] = 0.0
    x[4] = -h2
    x[5] = h1
    x[6] = I11
    x[7] = I12
    x[8] = h2
    x[9] = 0.0
    x[10] = -h0
    x[11] = I22
    x[12] = -h1
    x[13] = h0
    x[14] = 0.0
    x[15] = m
    x[16] = 0.0
    x[17] = 0.0
    x[18] = m
    x[19] = 0.0
    x[20] = m
    nn0 = I00 * wx + I01 * wy + I02 * wz + (h1 * vz - h2 * vy)
    nn1 = I01 * wx + I11 * wy + I12 * wz + (h2 * vx - h0 * vz)
    nn2 = I02 * wx + I12 * wy + I22 * wz + (h0 * vy - h1 * vx)
    ff0 = m * vx - (h1 * wz - h2 * wy)
    ff1 = m * vy - (h2 * wx - h0 * wz)
    ff2 = m * vz - (h0 * wy - h1 * wx)
    ws[b, WPA] = (wy * nn2 - wz * nn1) + (vy * ff2 - vz * ff1) - n0
    ws[b, WPA + 1] = (wz * nn0 - wx * nn2) + (vz * ff0 - vx * ff2) - n1
    ws[b, WPA + 2] = (wx * nn1 - wy * nn0) + (vx * ff1 - vy * ff0) - n2
    ws[b, WPA + 3] = wy * ff2 - wz * ff1 - f0
    ws[b, WPA + 4] = wz * ff0 - wx * ff2 - f1
    ws[b, WPA + 5] = wx * ff1 - wy * ff0 - f2
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
        d = x[_OFF[j]]
        for k in range(j):
            u = x[_OFF[k] + j - k]
            d -= u * u
        d = np.sqrt(d)
        x[_OFF[j]] = d
        for c in range(j + 1, 6):
            e = x[_OFF[j] + c - j]
            for k in range(j):
                e -= x[_OFF[k] + j - k] * x[_OFF[k] + c - k]
            x[_OFF[j] + c - j] = e / d
    y = ws[b, WA:WA + 6]
    for j in range(6):
        e = -ws[b, WPA + j]
        for k in range(j):
            e -= x[_OFF[k] + j - k] * y[k]
        y[j] = e / x[_OFF[j]]
    for j in range(5, -1, -1):
        e = y[j]
        for c in range(j + 1, 6):
            e -= x[_OFF[j] + c - j] * y[c]
        y[j] = e / x[_OFF[j]]
    aba_accelerations(mp, ws, n, y[0], y[1], y[2], y[3], y[4], y[5], a[6:])
    gx, gy, gz = base_gravity(mp, q)
    a[0] = y[3] + gx  # a = a' + [0; g_b], back to [v-dot; w-dot]
    a[1] = y[4] + gy
    a[2] = y[5] + gz
    a[3] = y[0]
    a[4] = y[1]
    a[5] = y[2]


# ---- validated entry points (FloatingBaseRobot's fast path; non-zero return = invalid) -----
# Eagerly compiled without numba's runtime and called through their compiled entry point
# (``checked.entry``), as ``algorithm.checked`` does for the fixed base: the caller checks
# ``ndim`` and ``dtype``; lengths, stride, alignment, finiteness and the unit quaternion are
# checked here; 2: the result is NaN or Inf (``rbd_ros.util.validate``).
_M = "float64[:, ::1]"
_V = "float64[::1]"


@njit(cache=True, inline="always")
def _bad(x: np.ndarray, size: int) -> bool:
    if x.shape[0] != size or x.strides[0] != 8 or x.ctypes.data & 7 != 0:
        return True
    for i in range(size):
        if not np.isfinite(x[i]):
            return True
    return False


@njit(cache=True, inline="always")
def _bad_q(mp: np.ndarray, q: np.ndarray) -> bool:
    """Not ``7 + n`` finite values with a unit quaternion (to ~1e-6) in ``q[3:7]``."""
    if _bad(q, mp.shape[0] + 4):
        return True
    s = q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]
    return abs(s - 1.0) > 2e-6


@njit(f"int64({_M}, {_M}, {_V}, {_V}, {_V}, {_V})", cache=True, _nrt=False)
def rnea_floating_checked(mp, ws, q, v, a, tau):  # noqa: ANN001, ANN201 - typed by the signature
    nv = mp.shape[0] + 3
    if _bad_q(mp, q) or _bad(v, nv) or _bad(a, nv) or tau.shape[0] != nv:
        return 1
    rnea_floating(mp, ws, q, v, a, tau)
    return 2 if _nonfinite(tau) else 0


@njit(f"int64({_M}, {_M}, {_V}, {_V}, {_V}, {_V})", cache=True, _nrt=False)
def aba_floating_checked(mp, ws, q, v, tau, a):  # noqa: ANN001, ANN201
    nv = mp.shape[0] + 3
    if _bad_q(mp, q) or _bad(v, nv) or _bad(tau, nv) or a.shape[0] != nv:
        return 1
    aba_floating(mp, ws, q, v, tau, False, a)
    return 2 if _nonfinite(a) else 0


@njit(f"int64({_M}, {_M}, {_V}, {_M})", cache=True, _nrt=False)
def crba_floating_checked(mp, ws, q, M):  # noqa: ANN001, ANN201
    nv = mp.shape[0] + 3
    if _bad_q(mp, q) or M.shape[0] != nv or M.shape[1] != nv:
        return 1
    crba_floating(mp, ws, q, M)
    return 2 if _nonfinite(M) else 0
