"""Small dense solves the kernels share, in place and allocation-free.

* ``cholesky_solve_inplace``: ``A x = b`` for a symmetric positive-definite ``A`` held as a
  block of rows of a larger array: ``A = L L^T`` (Cholesky, the lower triangle overwritten by
  L), then ``L y = b`` and ``L^T x = y`` (``cholesky_substitute``, alone for a factor made
  elsewhere: ``rnea_derivatives.fd_factor``).  Used by ``forward_dynamics.fd_cholesky`` (M qdd =
  tau - h), ``ik.lm_step`` (the damped normal equations) and ``control.laws``.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def cholesky_solve_inplace(ws: np.ndarray, r0: int, n: int, b: np.ndarray) -> bool:
    """Factor the SPD block ``A = ws[r0:r0+n, :n]`` in place (lower triangle: L, A = L L^T)
    and overwrite ``b`` with ``A^{-1} b``.  False if A is not positive definite."""
    for j in range(n):
        d = ws[r0 + j, j]
        for k in range(j):
            d -= ws[r0 + j, k] * ws[r0 + j, k]
        if not d > 0.0:
            return False
        d = np.sqrt(d)
        ws[r0 + j, j] = d
        inv = 1.0 / d
        for i in range(j + 1, n):
            s = ws[r0 + i, j]
            for k in range(j):
                s -= ws[r0 + i, k] * ws[r0 + j, k]
            ws[r0 + i, j] = s * inv
    cholesky_substitute(ws, r0, n, b)
    return True


@njit(cache=True, inline="always")
def cholesky_substitute(ws: np.ndarray, r0: int, n: int, b: np.ndarray) -> None:
    """``b <- (L L^T)^{-1} b`` for the factor ``L`` in the lower triangle of ``ws[r0:r0+n, :n]``:
    ``L y = b``, then ``L^T x = y``."""
    for i in range(n):  # L y = b
        s = b[i]
        for k in range(i):
            s -= ws[r0 + i, k] * b[k]
        b[i] = s / ws[r0 + i, i]
    for i in range(n - 1, -1, -1):  # L^T x = y
        s = b[i]
        for k in range(i + 1, n):
            s -= ws[r0 + k, i] * b[k]
        b[i] = s / ws[r0 + i, i]
