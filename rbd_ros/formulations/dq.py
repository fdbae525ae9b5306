"""Dual-quaternion algebra of 001 §2, on tuples (jitted, allocation-free, inlined by numba).

Conventions (001; docs/references.md, conventions):

* quaternion ``h = h1 + i h2 + j h3 + k h4``, **scalar first**, a 4-tuple;
* dual quaternion ``h = h_P + eps h_D`` (``eps^2 = 0``) (1)-(2), an 8-tuple ``vec8``
  (primary then dual);
* a *pure* dual quaternion (twist ``xi = w + eps v``, wrench ``zeta = f + eps tau``) is
  stored as its ``vec6 = [P(vec3); D(vec3)]``, a 6-tuple: twists ``[w; v]`` (angular
  first), wrenches ``[f; tau]`` (force first; misprint 001 (22)-(23) for the ordering);
* pose ``x = r + eps (1/2) p r`` (unit), ``x_a^b`` = pose of ``F_a`` w.r.t. ``F_b``;
  composition ``x_c^a = x_b^a x_c^b``;
* adjoint (3) ``Ad(x) xi = x xi x^*`` = ``R w + eps (R v + p x R w)`` (checked numerically);
  the same map moves a wrench ``f + eps tau`` (moment about the new origin);
* cross product (7)-(8) for pure dual quaternions: ``a x b = P(a) x P(b) + eps (P(a) x D(b)
  + D(a) x P(b))`` (the spatial motion cross product);
* inner product (30) ``<a, b> = -(ab + ba)/2 = <P(a), P(b)> + eps (<P(a), D(b)> +
  <D(a), P(b)>)``.

``ad`` is the literal sandwich ``x xi x^*``; the kernels use ``frame(x) = (R, p)`` once per
pose and ``ad_frame``/``ad_frame_inv`` per transformed vector (same numbers, fewer
operations: ``tests/test_formulations_dq.py`` checks one against the other).
"""
from __future__ import annotations

import numpy as np
from numba import njit

Q4 = tuple[float, float, float, float]
DQ8 = tuple[float, float, float, float, float, float, float, float]
V6 = tuple[float, float, float, float, float, float]
M9 = tuple[float, float, float, float, float, float, float, float, float]
V3 = tuple[float, float, float]


@njit(cache=True, inline="always")
def qmul(a: Q4, b: Q4) -> Q4:
    """Hamilton product (scalar first)."""
    return (a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
            a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
            a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
            a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0])


@njit(cache=True, inline="always")
def qconj(a: Q4) -> Q4:
    return (a[0], -a[1], -a[2], -a[3])


@njit(cache=True, inline="always")
def dqmul(a: DQ8, b: DQ8) -> DQ8:
    """``(a_P + eps a_D)(b_P + eps b_D) = a_P b_P + eps (a_P b_D + a_D b_P)`` (1)-(2)."""
    aP = (a[0], a[1], a[2], a[3])
    aD = (a[4], a[5], a[6], a[7])
    bP = (b[0], b[1], b[2], b[3])
    bD = (b[4], b[5], b[6], b[7])
    p = qmul(aP, bP)
    d1 = qmul(aP, bD)
    d2 = qmul(aD, bP)
    return (p[0], p[1], p[2], p[3], d1[0] + d2[0], d1[1] + d2[1], d1[2] + d2[2], d1[3] + d2[3])


@njit(cache=True, inline="always")
def dqconj(x: DQ8) -> DQ8:
    """``x^* = P^* + eps D^*``: the inverse of a unit dual quaternion."""
    return (x[0], -x[1], -x[2], -x[3], x[4], -x[5], -x[6], -x[7])


@njit(cache=True, inline="always")
def pose(r: Q4, p: V3) -> DQ8:
    """``x = r + eps (1/2) p r``."""
    d = qmul((0.0, 0.5 * p[0], 0.5 * p[1], 0.5 * p[2]), r)
    return (r[0], r[1], r[2], r[3], d[0], d[1], d[2], d[3])


@njit(cache=True, inline="always")
def translation(x: DQ8) -> V3:
    """``p = 2 D(x) P(x)^*``."""
    t = qmul((x[4], x[5], x[6], x[7]), qconj((x[0], x[1], x[2], x[3])))
    return (2.0 * t[1], 2.0 * t[2], 2.0 * t[3])


@njit(cache=True, inline="always")
def rotation_matrix(r: Q4) -> M9:
    """Row-major ``R`` with ``R v = r v r^*`` (unit r)."""
    w, x, y, z = r
    xx = x * x
    yy = y * y
    zz = z * z
    xy = x * y
    xz = x * z
    yz = y * z
    wx = w * x
    wy = w * y
    wz = w * z
    return (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
            2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
            2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy))


@njit(cache=True, inline="always")
def frame(x: DQ8) -> tuple[M9, V3]:
    """``(R, p)`` of a unit dual quaternion, for repeated adjoints."""
    return rotation_matrix((x[0], x[1], x[2], x[3])), translation(x)


@njit(cache=True, inline="always")
def rmul(R: M9, x: float, y: float, z: float) -> V3:
    return (R[0] * x + R[1] * y + R[2] * z, R[3] * x + R[4] * y + R[5] * z,
            R[6] * x + R[7] * y + R[8] * z)


@njit(cache=True, inline="always")
def rtmul(R: M9, x: float, y: float, z: float) -> V3:
    return (R[0] * x + R[3] * y + R[6] * z, R[1] * x + R[4] * y + R[7] * z,
            R[2] * x + R[5] * y + R[8] * z)


@njit(cache=True, inline="always")
def ad_frame(R: M9, p: V3, xi: V6) -> V6:
    """``Ad(x) xi = R a + eps (R b + p x R a)`` for ``xi = a + eps b``, ``frame(x) = (R, p)``."""
    a = rmul(R, xi[0], xi[1], xi[2])
    b = rmul(R, xi[3], xi[4], xi[5])
    return (a[0], a[1], a[2],
            b[0] + p[1] * a[2] - p[2] * a[1],
            b[1] + p[2] * a[0] - p[0] * a[2],
            b[2] + p[0] * a[1] - p[1] * a[0])


@njit(cache=True, inline="always")
def ad_frame_inv(R: M9, p: V3, xi: V6) -> V6:
    """``Ad(x^*) xi = R^T a + eps R^T (b - p x a)``."""
    a = rtmul(R, xi[0], xi[1], xi[2])
    b = rtmul(R, xi[3] - (p[1] * xi[2] - p[2] * xi[1]), xi[4] - (p[2] * xi[0] - p[0] * xi[2]),
              xi[5] - (p[0] * xi[1] - p[1] * xi[0]))
    return (a[0], a[1], a[2], b[0], b[1], b[2])


@njit(cache=True)
def ad(x: DQ8, xi: V6) -> V6:
    """``Ad(x) xi = x xi x^*`` (3), literally: two dual-quaternion products."""
    y = dqmul(dqmul(x, (0.0, xi[0], xi[1], xi[2], 0.0, xi[3], xi[4], xi[5])), dqconj(x))
    return (y[1], y[2], y[3], y[5], y[6], y[7])


@njit(cache=True, inline="always")
def cross(a: V6, b: V6) -> V6:
    """(7)-(8): ``a x b = P(a) x P(b) + eps (P(a) x D(b) + D(a) x P(b))``."""
    return (a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
            a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1],
            a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2],
            a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0])


@njit(cache=True, inline="always")
def inner(a: V6, b: V6) -> tuple[float, float]:
    """(30): ``<a, b> = (<P(a), P(b)>, <P(a), D(b)> + <D(a), P(b)>)`` (primary, dual)."""
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2],
            a[0] * b[3] + a[1] * b[4] + a[2] * b[5] + a[3] * b[0] + a[4] * b[1] + a[5] * b[2])


@njit(cache=True, inline="always")
def joint_pose(w: V3, v: V3, q: float) -> DQ8:
    """Pose of a joint displaced by ``q`` along the screw ``[w; v]`` (001 Table 1; unit ``w``
    or ``w = 0``): ``r = cos(q/2) + w sin(q/2)``, ``p = v q``."""
    if w[0] == 0.0 and w[1] == 0.0 and w[2] == 0.0:
        r = (1.0, 0.0, 0.0, 0.0)
    else:
        c = np.cos(0.5 * q)
        s = np.sin(0.5 * q)
        r = (c, w[0] * s, w[1] * s, w[2] * s)
    return pose(r, (v[0] * q, v[1] * q, v[2] * q))

