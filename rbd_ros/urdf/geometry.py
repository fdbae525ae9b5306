"""Joint axes as lines in space -> Craig's modified DH frames and parameters.

003 §1.6 (misprint 003 (4.40), docs/references.md): frame ``i`` has its z axis on joint axis
``i``; ``x_i`` lies on the common normal of axes ``i`` and ``i+1`` and the origin ``O_i`` is
where that normal meets axis ``i``; then

    ^{i-1}T_i = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i).

Input: each MDH joint's axis as a line (a point and a unit direction) in the base_link
frame at the reference configuration (q = 0), plus the URDF frame of the link it moves.
``z_i`` always takes the URDF axis direction, so a positive joint motion keeps its sign and
nothing is negated.  Axis pairs (``i``, ``i+1``) are classified and handled as follows:

``skew``
    the unique common normal; ``O_i`` its foot on axis ``i``, ``a_i`` the distance.
``intersecting``
    the normal is ``±(z_i x z_{i+1})`` through the intersection point; ``a_i = 0``.
``parallel`` / ``anti-parallel``
    every normal is valid; the one through the URDF joint origin of joint ``i`` is used
    (so ``O_i`` is on the URDF link origin); ``x_i`` points across to axis ``i+1``,
    ``alpha_i = 0`` / ``pi``.
``collinear`` / ``anti-collinear``
    the normal direction is free; ``O_i`` is the URDF joint origin, ``x_i`` is the direction
    perpendicular to ``z_i`` closest to the URDF link frame, ``a_i = 0``, ``alpha_i = 0``/``pi``.

Where only the sign of ``x_i`` is free (skew, intersecting, parallel) the sign giving the
frame closest to the URDF link frame (largest ``trace(R_urdf^T R_mdh)``) wins; a tie keeps
``x_i ∥ z_i x z_{i+1}`` (Yamamoto's Step 4) or, for parallel axes, ``a_i >= 0``.  So an URDF
whose link frames already are MDH frames converts back to exactly those frames.

Frame 0 (Step 6): ``z_0 ≡ z_1`` with its origin at the foot of the base_link origin on axis
1 and ``x_0`` as close as possible to base_link's x axis; hence ``a_0 = alpha_0 = 0`` and
``base`` is the identity whenever axis 1 is base_link's z axis.  Frame n (Step 7): origin at
the URDF origin of joint n, ``x_n`` closest to the URDF frame of the last link.

Nearly parallel axes: MDH is ill-conditioned there (the common normal of nearly parallel
lines runs off to infinity) and rounding noise in URDF angles must not create kilometre-long
offsets.  A pair with ``|sin angle| < NOISE_TOL`` (1e-12) is exactly parallel; one with
``|sin angle| < PARALLEL_TOL`` (1e-9) is parallel unless its common normal lies within
``NEAR_REACH`` (10 m) of the URDF joint origins, in which case the exact normal is kept (e.g.
axes meeting at a tiny angle).  Lines closer than ``DISTANCE_TOL`` (1e-12 m) count as
intersecting/collinear.  The caller measures the resulting error against the URDF.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbd_ros.algorithm.mdh import mdh_transform

PARALLEL_TOL = 1e-9  # |z_i x z_{i+1}| below this: parallel, unless the normal is near (below)
NOISE_TOL = 1e-12  # ... and below this always parallel (rounding noise of rpy compositions)
NEAR_REACH = 10.0  # metres: a nearly-parallel pair whose common normal is this close keeps it
DISTANCE_TOL = 1e-12  # metres: lines this close intersect / are collinear
_ZERO = 1e-13  # parameters smaller than this are written as exact zeros

AXIS_CASES = ("skew", "intersecting", "parallel", "anti-parallel", "collinear", "anti-collinear")


@dataclass(frozen=True)
class AxisLine:
    """A joint axis: a point on it and its unit direction, both in the base_link frame."""

    point: np.ndarray
    direction: np.ndarray


@dataclass(frozen=True)
class MdhGeometry:
    """MDH parameters (per joint, Craig's ``a_{i-1}, alpha_{i-1}, d_i, theta_i``), the axis
    case of each consecutive pair, and the MDH frames F_0..F_n (base_link -> frame i at
    q = 0, composed with :func:`mdh_transform` so they are exactly the model's frames)."""

    a: np.ndarray
    alpha: np.ndarray
    d: np.ndarray
    theta: np.ndarray
    cases: tuple[str, ...]
    frames: np.ndarray  # (n+1, 4, 4)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def closest_x_on_circle(z: np.ndarray, R_ref: np.ndarray) -> np.ndarray:
    """Unit ``x ⊥ z`` maximising ``trace(R_ref^T [x, z x x, z])`` (closest frame to ``R_ref``).

    ``trace = x·x_ref + (z x x)·y_ref + const = x·(x_ref + y_ref x z) + const``.
    """
    v = R_ref[:, 0] + np.cross(R_ref[:, 1], z)
    for cand in (v, R_ref[:, 0], R_ref[:, 1], np.array([1.0, 0, 0]), np.array([0, 1.0, 0])):
        perp = cand - (cand @ z) * z
        if np.linalg.norm(perp) > 1e-6:
            return _unit(perp)
    raise AssertionError("unreachable: two orthogonal references cannot both be parallel to z")


def closest_sign(z: np.ndarray, n: np.ndarray, R_ref: np.ndarray) -> np.ndarray:
    """``n`` or ``-n``, whichever frame ``[x, z x x, z]`` is closer to ``R_ref`` (tie: ``n``)."""
    score = n @ (R_ref[:, 0] + np.cross(R_ref[:, 1], z))
    return -n if score < -1e-9 else n


def classify(l1: AxisLine, l2: AxisLine) -> tuple[str, np.ndarray, np.ndarray | None]:
    """Case of the pair, the origin ``O`` on line 1 and the default normal direction.

    The normal direction is ``None`` for collinear lines (free in the plane ⊥ z).
    """
    p1, u1, p2, u2 = l1.point, l1.direction, l2.point, l2.direction
    c = np.cross(u1, u2)
    s = float(np.linalg.norm(c))
    r = p2 - p1
    if s >= NOISE_TOL:
        n = c / s
        t1 = float(r @ np.cross(u2, n)) / s  # foot of the normal on line 1: p1 + t1 u1
        t2 = float(r @ np.cross(u1, n)) / s  # ... and on line 2: p2 + t2 u2
        if s >= PARALLEL_TOL or max(abs(t1), abs(t2)) <= NEAR_REACH:
            case = "intersecting" if abs(float(r @ n)) < DISTANCE_TOL else "skew"
            return case, p1 + t1 * u1, n
    anti = float(u1 @ u2) < 0
    w = r - float(r @ u1) * u1
    if np.linalg.norm(w) < DISTANCE_TOL:
        return ("anti-collinear" if anti else "collinear"), p1.copy(), None
    return ("anti-parallel" if anti else "parallel"), p1.copy(), _unit(w)


def _angle(v1: np.ndarray, v2: np.ndarray, about: np.ndarray) -> float:
    """Angle from ``v1`` to ``v2`` about the unit vector ``about`` (both ⊥ ``about``)."""
    return float(np.arctan2(np.cross(v1, v2) @ about, v1 @ v2))


def _clean(x: float) -> float:
    return 0.0 if abs(x) < _ZERO else x


def mdh_geometry(lines: list[AxisLine], link_frames: list[np.ndarray]) -> MdhGeometry:
    """MDH frames and parameters for the axis ``lines`` (see module docstring).

    ``link_frames[i]`` is the URDF frame (4x4, base_link coordinates, reference
    configuration) of the link joint ``i`` moves; it only breaks ties between valid frames.
    """
    n = len(lines)
    z = [ln.direction for ln in lines]
    origins: list[np.ndarray] = [np.zeros(3)] * (n + 1)
    xs: list[np.ndarray] = [np.zeros(3)] * (n + 1)
    cases: list[str] = []
    for i in range(n - 1):  # frame i+1 (1-based) from the pair (i, i+1)
        case, origin, normal = classify(lines[i], lines[i + 1])
        cases.append(case)
        R_ref = link_frames[i][:3, :3]
        xs[i + 1] = closest_x_on_circle(z[i], R_ref) if normal is None else closest_sign(z[i], normal, R_ref)
        origins[i + 1] = origin
    # frame n: on the URDF origin of joint n, x closest to the last link's URDF frame
    origins[n] = lines[-1].point
    xs[n] = closest_x_on_circle(z[-1], link_frames[-1][:3, :3])
    # frame 0: z_0 = z_1, origin = foot of the base_link origin on axis 1, x close to base_link's
    p, u = lines[0].point, z[0]
    origins[0] = p - float(p @ u) * u
    xs[0] = closest_x_on_circle(u, np.eye(3))
    zs = [z[0]] + z

    a, alpha, d, theta = (np.zeros(n) for _ in range(4))
    for i in range(1, n + 1):  # joint i (1-based): parameters a_{i-1}, alpha_{i-1}, d_i, theta_i
        x_prev, z_prev, z_i = xs[i - 1], zs[i - 1], zs[i]
        step = origins[i] - origins[i - 1]
        case = cases[i - 2] if i >= 2 else "collinear"
        if case in ("parallel", "collinear"):
            alpha[i - 1] = 0.0
        elif case in ("anti-parallel", "anti-collinear"):
            alpha[i - 1] = np.pi
        else:
            alpha[i - 1] = _clean(_angle(z_prev, z_i, x_prev))
        a[i - 1] = 0.0 if case in ("intersecting", "collinear", "anti-collinear") else _clean(float(step @ x_prev))
        d[i - 1] = _clean(float(step @ z_i))
        theta[i - 1] = _clean(_angle(x_prev, xs[i], z_i))
    alpha[alpha <= -np.pi] = np.pi

    frames = np.empty((n + 1, 4, 4))
    frames[0] = np.eye(4)
    frames[0][:3, :3] = np.column_stack([xs[0], np.cross(zs[0], xs[0]), zs[0]])
    frames[0][:3, 3] = origins[0]
    for i in range(n):
        frames[i + 1] = frames[i] @ mdh_transform(a[i], alpha[i], d[i], theta[i])
    return MdhGeometry(a=a, alpha=alpha, d=d, theta=theta, cases=tuple(cases), frames=frames)
