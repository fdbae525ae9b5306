"""``sincos``: sine and cosine of a joint angle together, by polynomials (issue 32).

fdlibm's kernels (``__kernel_sin``/``__kernel_cos``, the coefficients of musl and FreeBSD):
the angle is reduced by ``k pi/2`` with ``pi/2`` in two parts (Cody-Waite; the reduced angle
``y0 + y1`` in two doubles, good to ~85 bits for ``|x| < 1e6``), the degree-13 and degree-14
minimax polynomials of sin and cos are evaluated on ``[-pi/4, pi/4]``, and the quadrant
``k mod 4`` swaps and negates them without a branch.  Larger or non-finite angles take glibc's
``sin``/``cos``.

Against glibc: identical on 97 % of angles, 1 ulp off on the rest up to 100 rad (2 at most),
never more than 2.3e-16 off up to 1e6 (``test/core/test_trig.py``).  Time, the 7 joint angles of a Panda state with the
rotations (``kinematics.joint_angles``, FMA contraction): 52 ns against glibc's 61 ns for
``|q| <= 1`` (glibc's fast path) and 107 ns for ``|q| <= 3``.

``counts.pure`` replaces ``sincos`` by ``sincos_libm`` (the operation counts tally ``sin`` and
``cos`` apart, not the polynomials' arithmetic).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.spatial6 import CONTRACT

_TOINT = 1.5 / 2.220446049250313e-16  # x + 1.5 * 2^52 - 1.5 * 2^52: x rounded to an integer
_INVPIO2 = 6.36619772367581382433e-01  # 2 / pi
_PIO2_1 = 1.57079632673412561417e+00  # the first 33 bits of pi / 2
_PIO2_1T = 6.07710050650619224932e-11  # pi / 2 - _PIO2_1
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11
_LARGE = 1.0e6  # from here on (and for NaN, Inf): glibc


@njit(cache=True, inline="always", fastmath=CONTRACT)
def sincos(x: float) -> tuple[float, float]:
    """``(sin x, cos x)`` (module docstring)."""
    if not abs(x) < _LARGE:
        return np.sin(x), np.cos(x)
    fn = x * _INVPIO2 + _TOINT - _TOINT  # k, the nearest multiple of pi/2
    k = int(fn)
    r = x - fn * _PIO2_1
    w = fn * _PIO2_1T
    y0 = r - w  # x - k pi/2 = y0 + y1
    y1 = (r - y0) - w
    z = y0 * y0
    zz = z * z
    rs = _S2 + z * (_S3 + z * _S4) + z * zz * (_S5 + z * _S6)  # __kernel_sin(y0, y1)
    v = z * y0
    s = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * _S1)
    rc = z * (_C1 + z * (_C2 + z * _C3)) + zz * zz * (_C4 + z * (_C5 + z * _C6))  # __kernel_cos(y0, y1)
    hz = 0.5 * z
    w1 = 1.0 - hz
    c = w1 + (((1.0 - w1) - hz) + (z * rc - y0 * y1))
    odd = (k & 1) == 1  # quadrant k mod 4: sin = s, c, -s, -c; cos = c, -s, -c, s
    return float(1 - (k & 2)) * (c if odd else s), float(1 - ((k + 1) & 2)) * (s if odd else c)


def sincos_libm(x):  # any number type (counts.Counted)
    """``(np.sin(x), np.cos(x))``: ``sincos`` for ``counts.pure``."""
    return np.sin(x), np.cos(x)
