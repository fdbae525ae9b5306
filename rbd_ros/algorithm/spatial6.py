"""Spatial-vector helpers the kernels are written on (numba ``inline="always"``).

Every helper takes and returns floats or tuples of floats: inlined into a kernel they are
plain scalar arithmetic in registers, nothing is allocated (the ``ws``/``mp`` rows are read
and written in place by the ``load``/``store`` helpers).  Each one is the formula of its
docstring evaluated in the order written there, so a kernel rewritten on them gives the same
floating-point results as the hand-expanded code it replaces.

Conventions (as ``aba``, ``crba``): a spatial motion is ``V = [w; v]`` (angular first; ``v``
the velocity of the body point at the reference origin), a spatial force ``F = [n; f]``
(moment about that origin first).  In 004's notation (linear first), ``v x m`` is
``ad_V m`` and ``v x* f`` is ``-ad_V^T f`` (004 (7)-(8)).  A spatial inertia about the origin
is ``(m, h, I)``: mass, first moment ``h = m c`` and rotational inertia ``I`` about the origin,
``I`` symmetric as its upper triangle ``(I00, I01, I02, I11, I12, I22)``.

A modified-DH joint (003 §1.6, ``mdh``) rotates by ``R = Rx(alpha) Rz(theta)`` and moves the
origin by ``p = ^{i-1}p_i``; the rotation is applied with the four numbers
``cs = (cos theta, sin theta, cos alpha, sin alpha)`` (8 products instead of 15).
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: numba ``fastmath`` flags of the recursive Newton-Euler kernels: ``contract`` only, i.e. a
#: product and a sum may be fused into one FMA (one rounding instead of two); no reassociation,
#: no assumption about NaN or Inf.  7-DoF RNEA per state 232 -> 207 ns (issue 32), as close to
#: Pinocchio as before (3.6e-14 N m on Panda over 2000 states, either way)
CONTRACT = {"contract"}

# ---- 3-vectors and 3x3 matrices ---------------------------------------------------------------


@njit(cache=True, inline="always")
def cross3(a: tuple, b: tuple) -> tuple[float, float, float]:
    """``a x b``."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def add3(a: tuple, b: tuple) -> tuple[float, float, float]:
    """``a + b``."""
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


@njit(cache=True, inline="always")
def sub3(a: tuple, b: tuple) -> tuple[float, float, float]:
    """``a - b``."""
    return a[0] - b[0], a[1] - b[1], a[2] - b[2]


@njit(cache=True, inline="always")
def load3(a: np.ndarray, i: int, col: int) -> tuple[float, float, float]:
    """``a[i, col:col + 3]``."""
    return a[i, col], a[i, col + 1], a[i, col + 2]


@njit(cache=True, inline="always")
def store3(a: np.ndarray, i: int, col: int, x: tuple) -> None:
    """``a[i, col:col + 3] = x``."""
    a[i, col] = x[0]
    a[i, col + 1] = x[1]
    a[i, col + 2] = x[2]


@njit(cache=True, inline="always")
def _mat3_strided_vec(a: np.ndarray, i: int, col: int, rs: int, cs: int, x: tuple) -> tuple[float, float, float]:
    """``B x`` for the 3x3 ``B[r, k] = a[i, col + r rs + k cs]`` (constant strides: inlined,
    the compiler folds the offsets)."""
    x0, x1, x2 = x
    r1, r2, c1, c2 = col + rs, col + 2 * rs, cs, 2 * cs
    return (a[i, col] * x0 + a[i, col + c1] * x1 + a[i, col + c2] * x2,
            a[i, r1] * x0 + a[i, r1 + c1] * x1 + a[i, r1 + c2] * x2,
            a[i, r2] * x0 + a[i, r2 + c1] * x1 + a[i, r2 + c2] * x2)


@njit(cache=True, inline="always")
def mat3_vec(a: np.ndarray, i: int, col: int, x: tuple) -> tuple[float, float, float]:
    """``R x``, ``R`` the 3x3 stored row-major in ``a[i, col:col + 9]``."""
    return _mat3_strided_vec(a, i, col, 3, 1, x)


@njit(cache=True, inline="always")
def mat3t_vec(a: np.ndarray, i: int, col: int, x: tuple) -> tuple[float, float, float]:
    """``R^T x`` (the same nine entries, rows and columns swapped)."""
    return _mat3_strided_vec(a, i, col, 1, 3, x)


@njit(cache=True, inline="always")
def sym3_vec(I: tuple, x: tuple) -> tuple[float, float, float]:
    """``I x`` for the symmetric ``I = (I00, I01, I02, I11, I12, I22)``."""
    I00, I01, I02, I11, I12, I22 = I
    x0, x1, x2 = x
    return (I00 * x0 + I01 * x1 + I02 * x2, I01 * x0 + I11 * x1 + I12 * x2,
            I02 * x0 + I12 * x1 + I22 * x2)


@njit(cache=True, inline="always")
def load_sym3(a: np.ndarray, i: int, col: int) -> tuple[float, float, float, float, float, float]:
    """Upper triangle ``(I00, I01, I02, I11, I12, I22)`` of the symmetric 3x3 stored
    row-major (all nine entries) in ``a[i, col:col + 9]``."""
    return a[i, col], a[i, col + 1], a[i, col + 2], a[i, col + 4], a[i, col + 5], a[i, col + 8]


@njit(cache=True, inline="always")
def rotate_sym3(a: np.ndarray, i: int, col: int, I: tuple) -> tuple[float, float, float, float, float, float]:
    """Upper triangle of ``R I R^T`` (``I`` symmetric, upper triangle; ``R`` row-major in
    ``a[i, col:col + 9]``): ``T = I R^T`` column by column, then ``R T``."""
    r00, r01, r02 = a[i, col], a[i, col + 1], a[i, col + 2]
    r10, r11, r12 = a[i, col + 3], a[i, col + 4], a[i, col + 5]
    r20, r21, r22 = a[i, col + 6], a[i, col + 7], a[i, col + 8]
    t00, t10, t20 = sym3_vec(I, (r00, r01, r02))  # T[:, k] = I R[k, :]^T
    t01, t11, t21 = sym3_vec(I, (r10, r11, r12))
    t02, t12, t22 = sym3_vec(I, (r20, r21, r22))
    return (r00 * t00 + r01 * t10 + r02 * t20, r00 * t01 + r01 * t11 + r02 * t21,
            r00 * t02 + r01 * t12 + r02 * t22, r10 * t01 + r11 * t11 + r12 * t21,
            r10 * t02 + r11 * t12 + r12 * t22, r20 * t02 + r21 * t12 + r22 * t22)


@njit(cache=True, inline="always")
def parallel_axis(Ic: tuple, h: tuple, c: tuple) -> tuple[float, float, float, float, float, float]:
    """Upper triangle of ``I_O = I_c + m (|c|^2 E - c c^T)`` (Steiner), ``h = m c``: the
    rotational inertia about the origin of a body with inertia ``I_c`` about its centre of mass
    ``c``."""
    I00, I01, I02, I11, I12, I22 = Ic
    h0, h1, h2 = h
    c0, c1, c2 = c
    return (I00 + h1 * c1 + h2 * c2, I01 - h0 * c1, I02 - h0 * c2, I11 + h0 * c0 + h2 * c2,
            I12 - h1 * c2, I22 + h0 * c0 + h1 * c1)


@njit(cache=True, inline="always")
def store_sym3(a: np.ndarray, i: int, col: int, I: tuple) -> None:
    """``a[i, col:col + 9]`` = the symmetric 3x3 of upper triangle ``I``, row-major."""
    I00, I01, I02, I11, I12, I22 = I
    a[i, col] = I00
    a[i, col + 1] = I01
    a[i, col + 2] = I02
    a[i, col + 3] = I01
    a[i, col + 4] = I11
    a[i, col + 5] = I12
    a[i, col + 6] = I02
    a[i, col + 7] = I12
    a[i, col + 8] = I22


@njit(cache=True, inline="always")
def point_acceleration(vd: tuple, wd: tuple, w: tuple, p: tuple) -> tuple[float, float, float]:
    """Acceleration of the body point ``p``: ``vd + wd x p + w x (w x p)`` (003 (4.33), before
    the rotation into the next frame), ``vd`` the origin's acceleration."""
    a0, a1, a2 = cross3(wd, p)
    b0, b1, b2 = cross3(w, cross3(w, p))
    return vd[0] + a0 + b0, vd[1] + a1 + b1, vd[2] + a2 + b2


# ---- modified-DH joint rotation (003 §1.6) ------------------------------------------------------


@njit(cache=True, inline="always")
def mdh_rot(cs: tuple, x: tuple) -> tuple[float, float, float]:
    """``R x`` for ``R = ^{i-1}R_i = Rx(alpha) Rz(theta)`` (frame i -> frame i-1), 8 products."""
    c, s, ca, sa = cs
    x0, x1, x2 = x
    z1 = s * x0 + c * x1
    return c * x0 - s * x1, ca * z1 - sa * x2, sa * z1 + ca * x2


@njit(cache=True, inline="always")
def mdh_rot_t(cs: tuple, x: tuple) -> tuple[float, float, float]:
    """``R^T x = Rz(-theta) Rx(-alpha) x`` (frame i-1 -> frame i), 8 products."""
    c, s, ca, sa = cs
    x0, x1, x2 = x
    y1 = ca * x1 + sa * x2
    return c * x0 + s * y1, c * y1 - s * x0, ca * x2 - sa * x1


@njit(cache=True, inline="always")
def mdh_force_to_parent(cs: tuple, p: tuple, f: tuple, n: tuple) -> tuple[tuple, tuple]:
    """A force ``f`` and moment ``n`` (frame i, about its origin) in frame i-1, moment about
    the frame-(i-1) origin: ``(R f, R n + p x R f)`` (003 (4.36)-(4.37))."""
    Rf = mdh_rot(cs, f)
    return Rf, add3(mdh_rot(cs, n), cross3(p, Rf))


# ---- spatial (6-)vectors ------------------------------------------------------------------------


@njit(cache=True, inline="always")
def load6(a: np.ndarray, i: int, col: int) -> tuple[float, float, float, float, float, float]:
    """``a[i, col:col + 6]``."""
    return a[i, col], a[i, col + 1], a[i, col + 2], a[i, col + 3], a[i, col + 4], a[i, col + 5]


@njit(cache=True, inline="always")
def store6(a: np.ndarray, i: int, col: int, x: tuple) -> None:
    """``a[i, col:col + 6] = x``."""
    a[i, col] = x[0]
    a[i, col + 1] = x[1]
    a[i, col + 2] = x[2]
    a[i, col + 3] = x[3]
    a[i, col + 4] = x[4]
    a[i, col + 5] = x[5]


@njit(cache=True, inline="always")
def accumulate6(a: np.ndarray, i: int, col: int, x: tuple) -> None:
    """``a[i, col:col + 6] += x``."""
    a[i, col] += x[0]
    a[i, col + 1] += x[1]
    a[i, col + 2] += x[2]
    a[i, col + 3] += x[3]
    a[i, col + 4] += x[4]
    a[i, col + 5] += x[5]


@njit(cache=True, inline="always")
def scale6(x: tuple, k: float) -> tuple[float, float, float, float, float, float]:
    """``x k``."""
    return x[0] * k, x[1] * k, x[2] * k, x[3] * k, x[4] * k, x[5] * k


@njit(cache=True, inline="always")
def add6(a: tuple, b: tuple) -> tuple[float, float, float, float, float, float]:
    """``a + b``."""
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@njit(cache=True, inline="always")
def sub6(a: tuple, b: tuple) -> tuple[float, float, float, float, float, float]:
    """``a - b``."""
    return a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5]


@njit(cache=True, inline="always")
def dot6(a: tuple, b: tuple) -> float:
    """``a . b`` (a force on a motion: power)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True, inline="always")
def motion_cross(V: tuple, m: tuple) -> tuple[float, float, float, float, float, float]:
    """``V x m = [w x mw; w x mv + v x mw]`` for ``V = [w; v]``, ``m = [mw; mv]`` (004 (8))."""
    w, v = (V[0], V[1], V[2]), (V[3], V[4], V[5])
    mw = (m[0], m[1], m[2])
    return cross3(w, mw) + add3(cross3(w, (m[3], m[4], m[5])), cross3(v, mw))


@njit(cache=True, inline="always")
def force_cross(V: tuple, F: tuple) -> tuple[float, float, float, float, float, float]:
    """``V x* F = [w x n + v x f; w x f]`` for ``V = [w; v]``, ``F = [n; f]`` (``-ad_V^T``,
    004 (7)-(8))."""
    w, v = (V[0], V[1], V[2]), (V[3], V[4], V[5])
    f = (F[3], F[4], F[5])
    return add3(cross3(w, (F[0], F[1], F[2])), cross3(v, f)) + cross3(w, f)


@njit(cache=True, inline="always")
def inertia_motion(m: float, h: tuple, I: tuple, V: tuple) -> tuple[float, float, float, float,
                                                                      float, float]:
    """``I V = [I w + h x v; m v - h x w]``: the spatial inertia ``(m, h, I)`` (about the
    origin) times ``V = [w; v]`` (its momentum when ``V`` is a velocity)."""
    w = (V[0], V[1], V[2])
    v = (V[3], V[4], V[5])
    I00, I01, I02, I11, I12, I22 = I
    a0, a1, a2 = cross3(h, v)
    b0, b1, b2 = cross3(h, w)
    return (I00 * w[0] + I01 * w[1] + I02 * w[2] + a0, I01 * w[0] + I11 * w[1] + I12 * w[2] + a1,
            I02 * w[0] + I12 * w[1] + I22 * w[2] + a2, m * v[0] - b0, m * v[1] - b1, m * v[2] - b2)


# ---- symmetric 6x6 (articulated inertias), packed upper triangle --------------------------------
# Entry (r, c), r <= c, at ``PACKED[r] + c - r`` (``aba`` PACKED).

PACKED = (0, 6, 11, 15, 18, 20)


@njit(cache=True, inline="always")
def inertia_packed(m: float, h: tuple, I: tuple) -> tuple:
    """The 21 packed entries of the spatial inertia ``[[I, [h]x], [[h]x^T, m E]]``."""
    h0, h1, h2 = h
    I00, I01, I02, I11, I12, I22 = I
    return (I00, I01, I02, 0.0, -h2, h1,
            I11, I12, h2, 0.0, -h0,
            I22, -h1, h0, 0.0,
            m, 0.0, 0.0,
            m, 0.0,
            m)


@njit(cache=True, inline="always")
def load_sym6(a: np.ndarray, i: int, col: int) -> tuple:
    """The 21 packed entries ``a[i, col:col + 21]``."""
    return (a[i, col], a[i, col + 1], a[i, col + 2], a[i, col + 3], a[i, col + 4], a[i, col + 5],
            a[i, col + 6], a[i, col + 7], a[i, col + 8], a[i, col + 9], a[i, col + 10],
            a[i, col + 11], a[i, col + 12], a[i, col + 13], a[i, col + 14],
            a[i, col + 15], a[i, col + 16], a[i, col + 17],
            a[i, col + 18], a[i, col + 19],
            a[i, col + 20])


@njit(cache=True, inline="always")
def store_sym6(a: np.ndarray, i: int, col: int, X: tuple) -> None:
    """``a[i, col:col + 21] = X`` (packed; in constant slices: a loop indexing the tuple is slower)."""
    store6(a, i, col, X[0:6])
    store6(a, i, col + 6, X[6:12])
    store6(a, i, col + 12, X[12:18])
    store3(a, i, col + 18, X[18:21])


@njit(cache=True, inline="always")
def sym6_vec(X: tuple, s: tuple) -> tuple[float, float, float, float, float, float]:
    """``X s`` for the packed symmetric ``X``."""
    (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19,
     x20) = X
    s0, s1, s2, s3, s4, s5 = s
    return (x0 * s0 + x1 * s1 + x2 * s2 + x3 * s3 + x4 * s4 + x5 * s5,
            x1 * s0 + x6 * s1 + x7 * s2 + x8 * s3 + x9 * s4 + x10 * s5,
            x2 * s0 + x7 * s1 + x11 * s2 + x12 * s3 + x13 * s4 + x14 * s5,
            x3 * s0 + x8 * s1 + x12 * s2 + x15 * s3 + x16 * s4 + x17 * s5,
            x4 * s0 + x9 * s1 + x13 * s2 + x16 * s3 + x18 * s4 + x19 * s5,
            x5 * s0 + x10 * s1 + x14 * s2 + x17 * s3 + x19 * s4 + x20 * s5)


@njit(cache=True, inline="always")
def sym6_vec_acc(y: tuple, X: tuple, s: tuple) -> tuple[float, float, float, float, float, float]:
    """``y + X s`` for the packed symmetric ``X``, each row summed left to right from ``y``."""
    (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17, x18, x19,
     x20) = X
    s0, s1, s2, s3, s4, s5 = s
    return (y[0] + x0 * s0 + x1 * s1 + x2 * s2 + x3 * s3 + x4 * s4 + x5 * s5,
            y[1] + x1 * s0 + x6 * s1 + x7 * s2 + x8 * s3 + x9 * s4 + x10 * s5,
            y[2] + x2 * s0 + x7 * s1 + x11 * s2 + x12 * s3 + x13 * s4 + x14 * s5,
            y[3] + x3 * s0 + x8 * s1 + x12 * s2 + x15 * s3 + x16 * s4 + x17 * s5,
            y[4] + x4 * s0 + x9 * s1 + x13 * s2 + x16 * s3 + x18 * s4 + x19 * s5,
            y[5] + x5 * s0 + x10 * s1 + x14 * s2 + x17 * s3 + x19 * s4 + x20 * s5)


@njit(cache=True, inline="always")
def add_sym6_downdate(a: np.ndarray, p: int, col: int, X: tuple, U: tuple, V: tuple) -> None:
    """``a[p] += X - U V^T`` on the packed upper triangle (``V = U / D``: ``X - U U^T / D``);
    written out (a loop indexing the tuples is slower)."""
    a[p, col] += X[0] - U[0] * V[0]
    a[p, col + 1] += X[1] - U[0] * V[1]
    a[p, col + 2] += X[2] - U[0] * V[2]
    a[p, col + 3] += X[3] - U[0] * V[3]
    a[p, col + 4] += X[4] - U[0] * V[4]
    a[p, col + 5] += X[5] - U[0] * V[5]
    a[p, col + 6] += X[6] - U[1] * V[1]
    a[p, col + 7] += X[7] - U[1] * V[2]
    a[p, col + 8] += X[8] - U[1] * V[3]
    a[p, col + 9] += X[9] - U[1] * V[4]
    a[p, col + 10] += X[10] - U[1] * V[5]
    a[p, col + 11] += X[11] - U[2] * V[2]
    a[p, col + 12] += X[12] - U[2] * V[3]
    a[p, col + 13] += X[13] - U[2] * V[4]
    a[p, col + 14] += X[14] - U[2] * V[5]
    a[p, col + 15] += X[15] - U[3] * V[3]
    a[p, col + 16] += X[16] - U[3] * V[4]
    a[p, col + 17] += X[17] - U[3] * V[5]
    a[p, col + 18] += X[18] - U[4] * V[4]
    a[p, col + 19] += X[19] - U[4] * V[5]
    a[p, col + 20] += X[20] - U[5] * V[5]
