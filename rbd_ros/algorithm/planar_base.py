"""A ground base: the chain on a planar root joint, holonomic or differential drive (jitted;
the recursive path of ``MobileBaseRobot``, issue 17).

Layout (``rbd_ros.mobile_base``, spec §2): ``q = [x, y, yaw, joints]``, ``v = [v_x, v_y, omega,
joint rates]`` (base twist in the base frame, as ``pin.JointModelPlanar``), ``a = v-dot``;
generalized forces ``[F_x, F_y, M_z, joint torques]`` (on the base, base frame, moment about
the base point B = the base origin).

The root is a joint with a constant motion subspace in the base frame, so the free-flyer
kernels of ``algorithm.floating_base`` (the fixed-base passes in base coordinates plus a root)
serve it with the root's rows projected on ``S_0`` (that module's docstring):

* planar: ``S_0 = [e_vx, e_vy, e_wz]`` (the base twist is ``[v_x, v_y, 0; 0, 0, omega]``);
  base-frame gravity ``g_b = Rz(yaw)^T g``;
* RNEA: ``floating_base.rnea_root`` with that twist and ``[a_x, a_y, 0; 0, 0, omega-dot]``; the
  generalized base force is ``S_0^T`` of the root wrench: ``(f_x, f_y, n_z)``;
* CRBA: ``M = [[S_0^T I^C_0 S_0, S_0^T F], [F^T S_0, M_joints]]`` (``floating_base.root_composite``);
* ABA: passes 1-2 from the base twist (``floating_base.aba_root_articulate``), then the root
  joint's own equation ``(S_0^T IA_0 S_0) x = S_0^T (IA_0 [0; g_b] - pA_0)``, a 3x3 Cholesky,
  ``a'_0 = S_0 x - [0; g_b]``, pass 3.

Differential drive.  The no-side-slip constraint 001 (64), ``A(q) qd = 0`` in world rates, is
``v_y = 0`` in base rates: the constant ``A = e_2^T`` with ``A v-dot = 0`` (``b = 0``).  So the
independent speeds of 000 (39)-(46) are ``u = [v_x, omega, qd]`` with the *constant* basis
``v = B u`` (``B``: ``E`` without column 2, ``B-dot = 0``), and Kane's equations 000 (46) /
the projection of 001 (62)-(63) on the admissible directions read

    (B^T M B) u-dot = B^T (f - h),      lam = e_2^T (M a + h - f)     (spec §3)

``B^T M B`` is the mass matrix of the same tree on a 2-DoF root ``S_0 = [e_vx, e_wz]``: the
constrained dynamics *is* the ABA with that root, one O(n) pass with a 2x2 root solve, and
``lam`` (the ground's lateral force at B along the base y axis) is the ``e_vy`` row of the
root's equation ``IA_0 a'_0 + pA_0`` (the wrench the root joint transmits), free after the
solve.  This is exact (no projection, no stabilisation: ``v_y`` is not a state) and the
fastest of the exact routes: the Udwadia-Kalaba form 001 (62) needs ``M``, ``M^{-1}`` (or a
factorisation) and ``A M^{-1} A^T``, KKT a (nv + 1)-square solve, Kane in speeds ``B^T M B``
and a dense solve, all O(n^3) against ABA's O(n) (and a 10-DoF CRBA + Cholesky costs more
than the ABA here).  Inputs: wheel torques ``(tau_L, tau_R)`` give ``F_x = (tau_L + tau_R)/r``,
``M_z = (s/2)(tau_R - tau_L)/r`` (``formulations.diff_drive.Wheels``); the wheels' spin
inertia adds ``m_v``, ``I_omega`` on ``(v_x, omega)`` (``layout.WHEEL``), which add to the
2x2 root matrix and leave ``lam`` alone.  Inverse dynamics is the planar RNEA at ``v_y =
a_y = 0``: ``lam = F_y``, the wheels supply ``(F_x + m_v a_x, M_z + I_omega omega-dot)``.

``simulate_ground``: RK4 on ``(q, v)`` with ``q-dot = T(yaw) v`` (``T``: the base rotation on
``(v_x, v_y)``) and ``v-dot`` from the ABA above; for the diff drive ``a[1]`` is exactly 0,
so ``v_y`` stays exactly 0 (integration in the independent speeds).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.aba import aba_accelerations
from rbd_ros.algorithm.checked import nonfinite, split_workspace
from rbd_ros.algorithm.crba import composite_times_motion, crba_from_transforms
from rbd_ros.algorithm.f8vector import bad_vector
from rbd_ros.algorithm.first_use import one_signature
from rbd_ros.algorithm.floating_base import PACKED6, aba_root_articulate, rnea_root, root_composite
from rbd_ros.algorithm.kinematics import forward_kinematics, joint_angles
from rbd_ros.algorithm.layout import GRAV, WHEEL, WIA, WPA, vrow
from rbd_ros.algorithm.rnea import wrench_in_last_frame


@njit(cache=True, inline="always")
def _ia(x: np.ndarray, r: int, c: int) -> float:
    """Entry (r, c) of the packed symmetric ``IA`` (``aba`` PACKED)."""
    if r > c:
        r, c = c, r
    return x[PACKED6[r] + c - r]


@njit(cache=True, inline="always")
def base_gravity(mp: np.ndarray, yaw: float) -> tuple[float, float, float]:
    """``g_b = Rz(yaw)^T g``: world gravity in the base frame."""
    g = mp.shape[0] - 1
    c = np.cos(yaw)
    s = np.sin(yaw)
    return c * mp[g, GRAV] + s * mp[g, GRAV + 1], c * mp[g, GRAV + 1] - s * mp[g, GRAV], mp[g, GRAV + 2]


@njit(cache=True)
def rnea_planar(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                wrench: np.ndarray, use_wrench: bool, tau: np.ndarray) -> None:
    """``tau = [F_x, F_y, M_z, joint torques] = M a + h - J^T w`` (module docstring); ``w`` the
    tool wrench (world axes, on the tool, moment about it) when ``use_wrench``."""
    n = q.shape[0] - 3
    yaw = q[2]
    g = base_gravity(mp, yaw)
    f0 = f1 = f2 = m0 = m1 = m2 = 0.0
    if use_wrench:
        forward_kinematics(mp, ws, q[3:])  # frame n's rotation in the base frame
        c = np.cos(yaw)
        s = np.sin(yaw)
        # world -> base frame (Rz(yaw)^T), then frame n; the tool exerts -w on the environment
        f0, f1, f2, m0, m1, m2 = wrench_in_last_frame(
            mp, ws, n, c * wrench[0] + s * wrench[1], c * wrench[1] - s * wrench[0], wrench[2],
            c * wrench[3] + s * wrench[4], c * wrench[4] - s * wrench[3], wrench[5])
    else:
        joint_angles(mp, ws, q[3:])
    (Fx, Fy, _), (_, _, Nz) = rnea_root(mp, ws, v[3:], a[3:], g, (v[0], v[1], 0.0), (0.0, 0.0, v[2]),
                                        (a[0], a[1], 0.0), (0.0, 0.0, a[2]), (-f0, -f1, -f2), (-m0, -m1, -m2),
                                        tau[3:])
    tau[0] = Fx  # S_0^T of the root wrench
    tau[1] = Fy
    tau[2] = Nz


@njit(cache=True)
def rnea_diff_drive(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, a: np.ndarray,
                    wrench: np.ndarray, use_wrench: bool, out: np.ndarray) -> None:
    """Diff-drive inverse dynamics (``v[1] = a[1] = 0``): ``out = [tau_L, tau_R, lam, joint
    torques]``, ``lam = F_y`` the ground's lateral force (module docstring)."""
    rnea_planar(mp, ws, q, v, a, wrench, use_wrench, out)
    g = mp.shape[0] - 1
    r = mp[g, WHEEL]
    s = mp[g, WHEEL + 1]
    Fx = out[0] + mp[g, WHEEL + 2] * a[0]  # + M_w u-dot: the wheels' spin inertia
    Mz = out[2] + mp[g, WHEEL + 3] * a[2]
    out[2] = out[1]
    out[0] = r * (0.5 * Fx - Mz / s)  # Wheels.torques
    out[1] = r * (0.5 * Fx + Mz / s)


@njit(cache=True)
def crba_planar(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, M: np.ndarray) -> None:
    """``M`` in base rates, ``(3 + n)^2`` (module docstring), plus the wheels' spin inertia
    ``m_v``, ``I_omega`` on ``(v_x, omega)`` (zero without wheels)."""
    n = q.shape[0] - 3
    forward_kinematics(mp, ws, q[3:])
    crba_from_transforms(mp, ws, n, M[3:, 3:], 0)  # joint block; leaves composites I^C_j in ws
    m, (h0, h1, _), (_, _, _, _, _, I22) = root_composite(mp, ws, n)
    g = n + 2
    # S_0^T I^C_0 S_0, I^C_0 = [[m E, -h^], [h^, I_O]] in [v; w] order, S_0 = [e_vx, e_vy, e_wz]
    M[0, 0] = m + mp[g, WHEEL + 2]
    M[1, 1] = m
    M[0, 1] = M[1, 0] = 0.0
    M[0, 2] = M[2, 0] = -h1
    M[1, 2] = M[2, 1] = h0
    M[2, 2] = I22 + mp[g, WHEEL + 3]
    for j in range(n):  # S_0^T F_j, F_j = I^C_j S_j = [n; f] about the base origin
        n0, n1, n2, f0, f1, f2 = composite_times_motion(ws, j)
        M[0, 3 + j] = M[3 + j, 0] = f0
        M[1, 3 + j] = M[3 + j, 1] = f1
        M[2, 3 + j] = M[3 + j, 2] = n2


@njit(cache=True)
def aba_ground(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, Fx: float, Fy: float,
               Mz: float, tau: np.ndarray, rolling: bool, a: np.ndarray) -> float:
    """``a`` for the base force ``(F_x, F_y, M_z)`` and joint torques ``tau``: planar root
    (``rolling`` false) or the diff drive's 2-DoF root ``[e_vx, e_wz]`` (``rolling``:
    ``a[1] = 0``, ``F_y`` ignored); returns ``lam``, the ``e_vy`` row of the root's
    equation (module docstring; 0 for the planar root)."""
    n = q.shape[0] - 3
    b = n
    gx, gy, gz = base_gravity(mp, q[2])
    forward_kinematics(mp, ws, q[3:])
    if rolling:
        Fy = 0.0
    aba_root_articulate(mp, ws, v[3:], tau, False, v[0], v[1], 0.0, 0.0, 0.0, v[2],
                        Fx, Fy, 0.0, 0.0, 0.0, Mz)
    x = ws[b, WIA:WIA + 21]
    p = ws[b, WPA:WPA + 6]
    g = n + 2
    # [w; v] indices: e_vx = 3, e_vy = 4, e_wz = 2; rhs_i = S_i^T (IA [0; g_b] - pA)
    r0 = _ia(x, 3, 3) * gx + _ia(x, 3, 4) * gy + _ia(x, 3, 5) * gz - p[3]
    r1 = _ia(x, 4, 3) * gx + _ia(x, 4, 4) * gy + _ia(x, 4, 5) * gz - p[4]
    r2 = _ia(x, 2, 3) * gx + _ia(x, 2, 4) * gy + _ia(x, 2, 5) * gz - p[2]
    k00 = _ia(x, 3, 3) + mp[g, WHEEL + 2]  # S_0^T IA_0 S_0 (+ M_w on v_x, omega)
    k02 = _ia(x, 2, 3)
    k22 = _ia(x, 2, 2) + mp[g, WHEEL + 3]
    if rolling:  # 2x2: [v_x, omega]
        det = k00 * k22 - k02 * k02
        ax = (k22 * r0 - k02 * r2) / det
        ay = 0.0
        aw = (k00 * r2 - k02 * r0) / det
    else:  # 3x3 Cholesky: [v_x, v_y, omega]
        l00 = np.sqrt(k00)
        l10 = _ia(x, 3, 4) / l00
        l20 = k02 / l00
        l11 = np.sqrt(_ia(x, 4, 4) - l10 * l10)
        l21 = (_ia(x, 2, 4) - l20 * l10) / l11
        l22 = np.sqrt(k22 - l20 * l20 - l21 * l21)
        y0 = r0 / l00
        y1 = (r1 - l10 * y0) / l11
        y2 = (r2 - l20 * y0 - l21 * y1) / l22
        aw = y2 / l22
        ay = (y1 - l21 * aw) / l11
        ax = (y0 - l10 * ay - l20 * aw) / l00
    # a'_0 = S_0 [a_x, a_y, omega-dot] - [0; g_b], [w; v] order
    aba_accelerations(mp, ws, n, 0.0, 0.0, aw, ax - gx, ay - gy, -gz, a[3:])
    a[0] = ax
    a[1] = ay
    a[2] = aw
    if not rolling:
        return 0.0
    # lam = e_vy^T (IA_0 a'_0 + pA_0)
    return (_ia(x, 4, 2) * aw + _ia(x, 4, 3) * (ax - gx) + _ia(x, 4, 4) * (-gy) + _ia(x, 4, 5) * (-gz)
            + p[4])


@njit(cache=True, inline="always")
def wheel_force(mp: np.ndarray, tl: float, tr: float) -> tuple[float, float]:
    """``(F_x, M_z) = ((tau_L + tau_R)/r, (s/2)(tau_R - tau_L)/r)`` (``Wheels.base_force``)."""
    g = mp.shape[0] - 1
    r = mp[g, WHEEL]
    return (tl + tr) / r, 0.5 * mp[g, WHEEL + 1] * (tr - tl) / r


@njit(cache=True)
def aba_diff_drive(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, u: np.ndarray,
                   a: np.ndarray) -> float:
    """Constrained ``a`` (``a[1] = 0``) for ``u = [tau_L, tau_R, joint torques]``; returns ``lam``."""
    Fx, Mz = wheel_force(mp, u[0], u[1])
    return aba_ground(mp, ws, q, v, Fx, 0.0, Mz, u[2:], True, a)


@njit(cache=True, inline="always")
def _rates(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, v: np.ndarray, u: np.ndarray,
           rolling: bool, a: np.ndarray) -> None:
    if rolling:
        aba_diff_drive(mp, ws, q, v, u, a)
    else:
        aba_ground(mp, ws, q, v, u[0], u[1], u[2], u[3:], False, a)


@njit(cache=True, inline="always")
def _advance(q: np.ndarray, v: np.ndarray, dq: np.ndarray, dv: np.ndarray, h: float, qt: np.ndarray,
             vt: np.ndarray) -> None:
    """``qt = q + h dq``, ``vt = v + h dv`` (``dq`` in world rates)."""
    for i in range(q.shape[0]):
        qt[i] = q[i] + h * dq[i]
        vt[i] = v[i] + h * dv[i]


@njit(cache=True, inline="always")
def _world_rates(q: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    """``q-dot = T(yaw) v``: the base rotation on ``(v_x, v_y)`` (``planar_base.world_rates``)."""
    c = np.cos(q[2])
    s = np.sin(q[2])
    out[0] = c * v[0] - s * v[1]
    out[1] = s * v[0] + c * v[1]
    for i in range(2, q.shape[0]):
        out[i] = v[i]


@njit(cache=True, nogil=True)
def ground_step(mp: np.ndarray, ws: np.ndarray, Q: np.ndarray, V: np.ndarray, A: np.ndarray, k: int,
                u: np.ndarray, dt: float, rolling: bool) -> None:
    """One RK4 step from row ``k`` under the held input ``u``: ``A[k]`` and row ``k + 1``
    (``q-dot = T(yaw) v``, ``v-dot`` by ``aba_ground``; module docstring)."""
    nv = V.shape[1]
    r = vrow(nv - 3)
    qt = ws[r + 1, :nv]  # stage state
    vt = ws[r + 2, :nv]
    sq = ws[r + 3, :nv]  # k1 + 2 k2 + 2 k3 + k4 (world rates, accelerations)
    sv = ws[r + 4, :nv]
    kq = ws[r + 5, :nv]  # stage rates
    kv = ws[r + 6, :nv]
    q = Q[k]
    v = V[k]
    _rates(mp, ws, q, v, u, rolling, A[k])  # k1
    _world_rates(q, v, kq)
    for i in range(nv):
        sq[i] = kq[i]
        sv[i] = A[k, i]
    _advance(q, v, kq, A[k], 0.5 * dt, qt, vt)
    _rates(mp, ws, qt, vt, u, rolling, kv)  # k2
    _world_rates(qt, vt, kq)
    for i in range(nv):
        sq[i] += 2.0 * kq[i]
        sv[i] += 2.0 * kv[i]
    _advance(q, v, kq, kv, 0.5 * dt, qt, vt)
    _rates(mp, ws, qt, vt, u, rolling, kv)  # k3
    _world_rates(qt, vt, kq)
    for i in range(nv):
        sq[i] += 2.0 * kq[i]
        sv[i] += 2.0 * kv[i]
    _advance(q, v, kq, kv, dt, qt, vt)
    _rates(mp, ws, qt, vt, u, rolling, kv)  # k4
    _world_rates(qt, vt, kq)
    for i in range(nv):
        sq[i] += kq[i]
        sv[i] += kv[i]
    _advance(q, v, sq, sv, dt / 6.0, Q[k + 1], V[k + 1])


@njit(cache=True, nogil=True)
def simulate_ground(mp: np.ndarray, ws: np.ndarray, q0: np.ndarray, v0: np.ndarray, U: np.ndarray,
                    dt: float, rolling: bool, Q: np.ndarray, V: np.ndarray, A: np.ndarray) -> None:
    """RK4 over ``U.shape[0]`` steps (zero-order hold ``U[k]``; module docstring).  ``Q, V, A``:
    ``steps + 1`` rows; ``A[k]`` the acceleration at the start of step k.  Arrays and numbers
    only, so every process finds its cache entry (``integrators.integrate``)."""
    Q[0, :] = q0
    V[0, :] = v0
    if rolling:
        V[0, 1] = 0.0  # not a state: u = [v_x, omega, qd]
    steps = U.shape[0]
    for k in range(steps):
        ground_step(mp, ws, Q, V, A, k, U[k], dt, rolling)
    if steps > 0:
        _rates(mp, ws, Q[steps], V[steps], U[steps - 1], rolling, A[steps])


@njit(nogil=True)  # not cached: once per feedback law and process (integrators.integrate)
def simulate_ground_callback(mp: np.ndarray, ws: np.ndarray, q0: np.ndarray, v0: np.ndarray,
                             U: np.ndarray, dt: float, rolling: bool, u_fn, Q: np.ndarray,
                             V: np.ndarray, A: np.ndarray) -> None:
    """``simulate_ground`` with ``u_fn(t, q, v, U[k])`` filling the input at the start of step k."""
    Q[0, :] = q0
    V[0, :] = v0
    if rolling:
        V[0, 1] = 0.0
    steps = U.shape[0]
    for k in range(steps):
        u_fn(k * dt, Q[k], V[k], U[k])
        ground_step(mp, ws, Q, V, A, k, U[k], dt, rolling)
    if steps > 0:
        _rates(mp, ws, Q[steps], V[steps], U[steps - 1], rolling, A[steps])


# ---- validated entry points (MobileBaseRobot's fast path; non-zero return = invalid) -------
# As ``algorithm.checked``: compiled for one signature on first use, without numba's runtime,
# called through their compiled entry point on ``mw`` (``data.model_workspace``); the caller checks ``ndim`` and
# ``dtype``, these check lengths, stride, alignment, finiteness and (diff drive) ``v_y = 0``
# with the tolerance of ``bases.root_joint.check_rolling``; 2: the result is NaN or Inf.
_M = "float64[:, ::1]"
_V = "float64[::1]"


@njit(cache=True, inline="always")
def _slides(x: np.ndarray) -> bool:
    """``|x[1]| > 1e-9 max(1, |x|_inf)``: a lateral speed / acceleration breaking 001 (64)."""
    big = 1.0
    for i in range(x.shape[0]):
        big = max(big, abs(x[i]))
    return abs(x[1]) > 1e-9 * big


@one_signature(f"int64({_M}, {_V}, {_V}, {_V}, {_V})", cache=True, _nrt=False)
def rnea_planar_checked(mw, q, v, a, tau):  # typed by the signature
    mp, ws = split_workspace(mw)
    nv = mp.shape[0]
    if bad_vector(q, nv) or bad_vector(v, nv) or bad_vector(a, nv) or tau.shape[0] != nv:
        return 1
    if mp[nv - 1, WHEEL] > 0.0 and (_slides(v) or _slides(a)):  # a diff drive: v_y = a_y = 0
        return 1
    rnea_planar(mp, ws, q, v, a, a, False, tau)
    return 2 if nonfinite(tau) else 0


@one_signature(f"int64({_M}, {_V}, {_V}, {_V}, {_V})", cache=True, _nrt=False)
def rnea_diff_drive_checked(mw, q, v, a, out):
    mp, ws = split_workspace(mw)
    nv = mp.shape[0]
    if bad_vector(q, nv) or bad_vector(v, nv) or bad_vector(a, nv) or out.shape[0] != nv or _slides(v) or _slides(a):
        return 1
    rnea_diff_drive(mp, ws, q, v, a, a, False, out)
    return 2 if nonfinite(out) else 0


@one_signature(f"int64({_M}, {_V}, {_M})", cache=True, _nrt=False)
def crba_planar_checked(mw, q, M):
    mp, ws = split_workspace(mw)
    nv = mp.shape[0]
    if bad_vector(q, nv) or M.shape[0] != nv or M.shape[1] != nv:
        return 1
    crba_planar(mp, ws, q, M)
    return 2 if nonfinite(M) else 0


@one_signature(f"int64({_M}, {_V}, {_V}, {_V}, {_V})", cache=True, _nrt=False)
def aba_planar_checked(mw, q, v, f, a):
    mp, ws = split_workspace(mw)
    nv = mp.shape[0]
    if bad_vector(q, nv) or bad_vector(v, nv) or bad_vector(f, nv) or a.shape[0] != nv:
        return 1
    aba_ground(mp, ws, q, v, f[0], f[1], f[2], f[3:], False, a)
    return 2 if nonfinite(a) else 0


@one_signature(f"int64({_M}, {_V}, {_V}, {_V}, {_V}, {_V})", cache=True, _nrt=False)
def aba_diff_drive_checked(mw, q, v, u, a, lam):
    mp, ws = split_workspace(mw)
    nv = mp.shape[0]
    if (bad_vector(q, nv) or bad_vector(v, nv) or bad_vector(u, nv - 1) or a.shape[0] != nv
            or lam.shape[0] < 1 or _slides(v)):
        return 1
    lam[0] = aba_diff_drive(mp, ws, q, v, u, a)
    return 2 if nonfinite(a) or not np.isfinite(lam[0]) else 0
