"""SO(3): rotations.  The one home of rotation conversions in rbd_ros.

Algebra: ``w^ = [[0, -w3, w2], [w3, 0, -w1], [-w2, w1, 0]]`` (004 Table 1), ``ad_w = w^``,
``ad~_p = -p^`` (004 (68), misprint 004 Table 1).  Closed forms (not in 004, which gives only
the series (64)), ``t = |w|``:

* ``exp(w) = E + sin t / t w^ + (1 - cos t) / t^2 w^2`` (Rodrigues);
* ``log(R)``: the rotation vector with angle in [0, pi] (axis from the symmetric part at pi);
* ``dexp(w) = sum_k (w^)^k / (k+1)! = E + (1 - cos t)/t^2 w^ + (t - sin t)/t^3 w^2`` and
  ``dexp_inv(w) = E - 1/2 w^ + (1 - (t/2) cot(t/2)) / t^2 w^2``.  004's ``S(phi)`` of
  ``v = S(phi) phi-dot`` (64) is ``dexp(-phi)``.

The same three-term forms serve every algebra whose ``ad`` satisfies ``ad^3 = -t^2 ad``
(SO(3), SE(2), X(z)): :func:`series_coefficients`.

Conversions: quaternions are scalar-last ``(x, y, z, w)`` (``geometry_msgs``, Pinocchio's
``coeffs()``); roll-pitch-yaw is URDF's ``R = Rz(yaw) Ry(pitch) Rx(roll)``.  At gimbal lock
(``|pitch| = pi/2``) :func:`to_rpy` puts the whole remaining rotation into roll and returns
yaw = 0 (tf2's ``getRPY`` convention).  :func:`euler_zyz` gives 003 §1.13's Z-Y-Z angles
(the analytic Jacobian's).  The ``_``-prefixed kernels are numba-jitted for hot
loops (floating-base dynamics, Lie-group integrators).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

_EPS = 1e-2  # below this angle the closed forms switch to their Taylor series (error < 1e-17)


def hat(w: Sequence[float] | np.ndarray) -> np.ndarray:
    """``w^`` (3x3 skew-symmetric), ``w^ x = w x x``."""
    w0, w1, w2 = (float(v) for v in w)
    return np.array([[0.0, -w2, w1], [w2, 0.0, -w0], [-w1, w0, 0.0]])


def vee(W: np.ndarray) -> np.ndarray:
    """Inverse of :func:`hat` (the skew part of ``W``)."""
    W = np.asarray(W, dtype=float)
    return 0.5 * np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]])


ad = hat  # ad_w = w^ on so(3)


def ad_tilde(p: Sequence[float] | np.ndarray) -> np.ndarray:
    """``ad~_p = -p^`` (004 (68), misprint 004 Table 1): ``ad~_p v = -ad_v^T p``."""
    return -hat(p)


@njit(cache=True)
def series_coefficients(t: float) -> tuple[float, float, float, float, float]:
    """``(sin t / t, (1 - cos t)/t^2, (t - sin t)/t^3, (1 - (t/2)cot(t/2))/t^2, t)`` with
    Taylor series below ``_EPS``: the coefficients of exp, dexp and dexp_inv for any ``ad``
    with ``ad^3 = -t^2 ad`` (module docstring)."""
    if t < _EPS:
        t2 = t * t
        t4 = t2 * t2
        return (1.0 - t2 / 6.0 + t4 / 120.0, 0.5 - t2 / 24.0 + t4 / 720.0,
                1.0 / 6.0 - t2 / 120.0 + t4 / 5040.0, 1.0 / 12.0 + t2 / 720.0 + t4 / 30240.0, t)
    s = np.sin(t)
    sh = np.sin(0.5 * t)  # half-angle forms: 1 - cos t = 2 sh^2, (t/2) cot(t/2) without 1 - cos t
    t2 = t * t
    return (s / t, 2.0 * sh * sh / t2, (t - s) / (t2 * t),
            (1.0 - 0.5 * t * np.cos(0.5 * t) / sh) / t2, t)


@njit(cache=True)
def exp_into(w0: float, w1: float, w2: float, R: np.ndarray) -> None:
    """``R = exp(w^)`` (Rodrigues) into a 3x3 (or the top-left of a larger) array."""
    a, b, _, _, _ = series_coefficients(np.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    R[0, 0] = 1.0 - b * (w1 * w1 + w2 * w2)
    R[1, 1] = 1.0 - b * (w0 * w0 + w2 * w2)
    R[2, 2] = 1.0 - b * (w0 * w0 + w1 * w1)
    R[0, 1] = b * w0 * w1 - a * w2
    R[1, 0] = b * w0 * w1 + a * w2
    R[0, 2] = b * w0 * w2 + a * w1
    R[2, 0] = b * w0 * w2 - a * w1
    R[1, 2] = b * w1 * w2 - a * w0
    R[2, 1] = b * w1 * w2 + a * w0


def exp(w: Sequence[float] | np.ndarray) -> np.ndarray:
    """``exp(w^)``, the rotation by ``|w|`` about ``w`` (Rodrigues)."""
    R = np.empty((3, 3))
    w0, w1, w2 = (float(v) for v in w)
    exp_into(w0, w1, w2, R)
    return R


def axis_rotation(axis: Sequence[float] | np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` about the unit vector ``axis``: ``exp(angle axis)``."""
    return exp(np.asarray(axis, dtype=float) * float(angle))


@njit(cache=True)
def log_into(r00: float, r01: float, r02: float, r10: float, r11: float, r12: float, r20: float,
         r21: float, r22: float) -> tuple[float, float, float, float]:
    """Rotation vector and angle ``(x, y, z, th)`` of the rotation matrix with entries ``rij``
    (jitted, scalar; :func:`log`, the IK's orientation error)."""
    # log: angle th = atan2(|v|/2, (tr - 1)/2), v = vee(R_e - R_e^T) = 2 sin(th) a
    vx = r21 - r12
    vy = r02 - r20
    vz = r10 - r01
    s = 0.5 * math.sqrt(vx * vx + vy * vy + vz * vz)
    c = 0.5 * (r00 + r11 + r22 - 1.0)
    th = math.atan2(s, c)
    if s > 1e-7 or c > 0.0:
        k = th / (2.0 * s) if s > 1e-12 else 0.5  # th / (2 sin th) -> 1/2 as th -> 0
        ex = k * vx
        ey = k * vy
        ez = k * vz
    else:
        # th ~ pi: (R_e + R_e^T)/2 = I + 2 (a a^T - I) sin^2(th/2)... ~ 2 a a^T - I
        if r00 >= r11 and r00 >= r22:
            ax = math.sqrt(max(0.5 * (r00 + 1.0), 0.0))
            ay = 0.25 * (r01 + r10) / ax
            az = 0.25 * (r02 + r20) / ax
        elif r11 >= r22:
            ay = math.sqrt(max(0.5 * (r11 + 1.0), 0.0))
            ax = 0.25 * (r01 + r10) / ay
            az = 0.25 * (r12 + r21) / ay
        else:
            az = math.sqrt(max(0.5 * (r22 + 1.0), 0.0))
            ax = 0.25 * (r02 + r20) / az
            ay = 0.25 * (r12 + r21) / az
        if ax * vx + ay * vy + az * vz < 0.0:
            ax, ay, az = -ax, -ay, -az
        ex = th * ax
        ey = th * ay
        ez = th * az
    return ex, ey, ez, th


def log(R: np.ndarray) -> np.ndarray:
    """Rotation vector (axis * angle, angle in [0, pi]) of a rotation matrix: ``exp(log R) = R``."""
    R = np.asarray(R, dtype=float)
    x, y, z, _ = log_into(R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2])
    return np.array([x, y, z])


def orientation_error(R_desired: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Rotation vector (world frame) taking ``R`` to ``R_desired``: ``log(R_d R^T)``, the
    orientation part of a task-space error, exact for any angle below pi."""
    e = np.empty(3)
    # C-contiguous copies of views (``T[:3, :3]``): one kernel signature for any input
    orientation_error_into(np.ascontiguousarray(R_desired, dtype=float), np.ascontiguousarray(R, dtype=float), e, 0)
    return e


@njit(cache=True)
def orientation_error_into(Rd: np.ndarray, R: np.ndarray, e: np.ndarray, k: int) -> float:
    """``e[k:k+3] = log(R_d R^T)`` of the top-left 3x3 blocks of ``Rd`` and ``R`` (rotations
    or poses), in place for the control laws' cycle; returns the angle."""
    # R_e = R_d R^T, entry (i, j) = sum_m Rd[i, m] R[j, m]
    r00 = Rd[0, 0] * R[0, 0] + Rd[0, 1] * R[0, 1] + Rd[0, 2] * R[0, 2]
    r01 = Rd[0, 0] * R[1, 0] + Rd[0, 1] * R[1, 1] + Rd[0, 2] * R[1, 2]
    r02 = Rd[0, 0] * R[2, 0] + Rd[0, 1] * R[2, 1] + Rd[0, 2] * R[2, 2]
    r10 = Rd[1, 0] * R[0, 0] + Rd[1, 1] * R[0, 1] + Rd[1, 2] * R[0, 2]
    r11 = Rd[1, 0] * R[1, 0] + Rd[1, 1] * R[1, 1] + Rd[1, 2] * R[1, 2]
    r12 = Rd[1, 0] * R[2, 0] + Rd[1, 1] * R[2, 1] + Rd[1, 2] * R[2, 2]
    r20 = Rd[2, 0] * R[0, 0] + Rd[2, 1] * R[0, 1] + Rd[2, 2] * R[0, 2]
    r21 = Rd[2, 0] * R[1, 0] + Rd[2, 1] * R[1, 1] + Rd[2, 2] * R[1, 2]
    r22 = Rd[2, 0] * R[2, 0] + Rd[2, 1] * R[2, 1] + Rd[2, 2] * R[2, 2]
    e[k], e[k + 1], e[k + 2], th = log_into(r00, r01, r02, r10, r11, r12, r20, r21, r22)
    return th


@njit(cache=True)
def orientation_angles_into(Rd: np.ndarray, R: np.ndarray, out: np.ndarray) -> None:
    """``out[k] = |log(R_d[k] R[k]^T)|`` for a batch of rotations or poses ``(N, 3|4, 3|4)``:
    the angle of each orientation error (:func:`orientation_error_into`, row by row; the
    rotation vector's norm is its angle)."""
    e = np.empty(3)
    for k in range(Rd.shape[0]):
        out[k] = orientation_error_into(Rd[k], R[k], e, 0)


def orientation_angles(R_desired: np.ndarray, R: np.ndarray) -> np.ndarray:
    """``(N,)`` angles (rad, in [0, pi]) of the orientation errors ``log(R_d R^T)`` of two
    ``(N, 3|4, 3|4)`` batches of rotations or poses (one kernel call, no Python per row)."""
    Rd = np.ascontiguousarray(R_desired, dtype=float)
    R = np.ascontiguousarray(R, dtype=float)
    if Rd.ndim != 3 or Rd.shape != R.shape or Rd.shape[1] < 3 or Rd.shape[2] < 3:
        raise ValueError(f"orientation_angles needs two (N, 3|4, 3|4) batches of one shape, "
                         f"got {Rd.shape} and {R.shape}")
    out = np.empty(Rd.shape[0])
    orientation_angles_into(Rd, R, out)
    return out


def three_term(A: np.ndarray, t: float, inverse: bool) -> np.ndarray:
    """``dexp = E + b A + c A^2`` or ``dexp_inv = E - A/2 + d A^2`` of an ``A = ad_phi`` with
    ``A^3 = -t^2 A`` (SO(3), SE(2), X(z); coefficients :func:`series_coefficients`)."""
    _, b, c, d, _ = series_coefficients(abs(t))
    E = np.eye(A.shape[0])
    return E - 0.5 * A + d * (A @ A) if inverse else E + b * A + c * (A @ A)


def dexp(w: Sequence[float] | np.ndarray) -> np.ndarray:
    """``sum_k ad_w^k / (k+1)!`` in closed form (004's ``S(phi)`` is ``dexp(-phi)``, (64))."""
    return three_term(hat(w), float(np.linalg.norm(np.asarray(w, dtype=float))), False)


def dexp_inv(w: Sequence[float] | np.ndarray) -> np.ndarray:
    """Inverse of :func:`dexp`: ``E - 1/2 w^ + (1 - (t/2) cot(t/2)) / t^2 w^2`` (``|w| < 2 pi``)."""
    return three_term(hat(w), float(np.linalg.norm(np.asarray(w, dtype=float))), True)


# ---- SO(3) as a group of rigid motions (rbd_ros.lie.rigid_body) ------------------------------
name = "SO3"
dim = 3
H = np.vstack([np.zeros((3, 3)), np.eye(3)])  # 004 (62): w -> [0; w]


def to_se3(R: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    return T


def from_se3(T: np.ndarray) -> np.ndarray:
    return np.array(T[:3, :3], dtype=float)


# ---- quaternions (x, y, z, w), scalar last ---------------------------------------------------
@njit(cache=True)
def quaternion_to_rotation_into(x: float, y: float, z: float, w: float, R: np.ndarray) -> None:
    """Rotation matrix of a unit quaternion into ``R`` (3x3 or the top-left of a 4x4)."""
    R[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    R[0, 1] = 2.0 * (x * y - z * w)
    R[0, 2] = 2.0 * (x * z + y * w)
    R[1, 0] = 2.0 * (x * y + z * w)
    R[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    R[1, 2] = 2.0 * (y * z - x * w)
    R[2, 0] = 2.0 * (x * z - y * w)
    R[2, 1] = 2.0 * (y * z + x * w)
    R[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@njit(cache=True)
def rotation_to_quaternion_into(R: np.ndarray, out: np.ndarray) -> None:
    """Unit quaternion (x, y, z, w), w >= 0, of ``R`` (Shepperd's method: the largest of the
    four squared components first, so it is accurate everywhere)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr >= R[0, 0] and tr >= R[1, 1] and tr >= R[2, 2]:
        w = 0.5 * np.sqrt(1.0 + tr)
        x, y, z = (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        x = 0.5 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        w, y, z = (R[2, 1] - R[1, 2]) / (4 * x), (R[0, 1] + R[1, 0]) / (4 * x), (R[0, 2] + R[2, 0]) / (4 * x)
    elif R[1, 1] >= R[2, 2]:
        y = 0.5 * np.sqrt(1.0 - R[0, 0] + R[1, 1] - R[2, 2])
        w, x, z = (R[0, 2] - R[2, 0]) / (4 * y), (R[0, 1] + R[1, 0]) / (4 * y), (R[1, 2] + R[2, 1]) / (4 * y)
    else:
        z = 0.5 * np.sqrt(1.0 - R[0, 0] - R[1, 1] + R[2, 2])
        w, x, y = (R[1, 0] - R[0, 1]) / (4 * z), (R[0, 2] + R[2, 0]) / (4 * z), (R[1, 2] + R[2, 1]) / (4 * z)
    s = 1.0 / np.sqrt(x * x + y * y + z * z + w * w)
    if w < 0.0:
        s = -s
    out[0] = x * s
    out[1] = y * s
    out[2] = z * s
    out[3] = w * s


def rotation_to_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (x, y, z, w), w >= 0, of a rotation matrix."""
    q = np.empty(4)
    rotation_to_quaternion_into(np.ascontiguousarray(R, dtype=float)[:3, :3], q)
    return q


def quaternion_to_rotation(q: Sequence[float] | np.ndarray) -> np.ndarray:
    """Rotation matrix of a quaternion (x, y, z, w); normalised first, zero norm refused."""
    x, y, z, w = np.asarray(q, dtype=float)
    s = x * x + y * y + z * z + w * w
    if not np.isfinite(s) or s < 1e-12:
        raise ValueError(f"quaternion {tuple(q)} has zero or non-finite norm")
    R = np.empty((3, 3))
    k = 1.0 / np.sqrt(s)
    quaternion_to_rotation_into(x * k, y * k, z * k, w * k, R)
    return R


def pose_matrix(position: Sequence[float] | np.ndarray, quaternion: Sequence[float] | np.ndarray) -> np.ndarray:
    """4x4 homogeneous transform from a position and a quaternion (x, y, z, w)."""
    T = np.eye(4)
    T[:3, :3] = quaternion_to_rotation(quaternion)
    T[:3, 3] = position
    return T


# ---- roll-pitch-yaw (URDF) -------------------------------------------------------------------
def rpy_matrix(rpy: Sequence[float] | np.ndarray) -> np.ndarray:
    """Rotation matrix of URDF roll-pitch-yaw angles, ``Rz(y) Ry(p) Rx(r)``."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def to_rpy(R: np.ndarray) -> np.ndarray:
    """Roll-pitch-yaw of a rotation matrix (inverse of :func:`rpy_matrix`), pitch in
    [-pi/2, pi/2]; at gimbal lock yaw = 0 and the rest goes into roll (module docstring)."""
    R = np.asarray(R, dtype=float)
    cp = np.hypot(R[0, 0], R[1, 0])
    pitch = np.arctan2(-R[2, 0], cp)
    if cp < 1e-12:  # gimbal lock: R = Ry(+-pi/2) Rx(roll') with yaw folded into roll'
        return np.array([np.arctan2(-R[1, 2], R[1, 1]), pitch, 0.0])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


# ---- Z-Y-Z Euler angles (003 §1.13; the analytic Jacobian, algorithm.kinematics) ----------
@njit(cache=True)
def euler_zyz(R: np.ndarray, out: np.ndarray) -> None:
    """Z-Y-Z Euler angles (phi, theta, psi) of 003 §1.13, ``R = Rz(phi) Ry(theta) Rz(psi)``,
    with theta in [0, pi]; at theta = 0 or pi (Omega singular) psi = 0."""
    s = np.sqrt(R[0, 2] * R[0, 2] + R[1, 2] * R[1, 2])
    th = np.arctan2(s, R[2, 2])
    if s > 1e-12:
        out[0] = np.arctan2(R[1, 2], R[0, 2])
        out[2] = np.arctan2(R[2, 1], -R[2, 0])
    else:
        out[0] = np.arctan2(R[1, 0], R[0, 0]) if R[2, 2] > 0 else np.arctan2(-R[1, 0], -R[0, 0])
        out[2] = 0.0
    out[1] = th
