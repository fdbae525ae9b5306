"""Constrained accelerations ``M qdd = Q + Q_c`` under ``A qdd = b``: the Udwadia-Kalaba
equation, 001 (62)-(63), and the Lagrange-multiplier (KKT) solve it equals.

Udwadia-Kalaba (001 (62)), ``M^{1/2}`` the symmetric positive-definite root (eigendecomposition),
``^+`` the Moore-Penrose inverse:

    D = A M^{-1/2},   Q_c = M^{1/2} D^+ (b - A M^{-1} Q),   M qdd = Q + Q_c             (62)

equivalently (63) ``M qdd + Omega C qd - M^{1/2} D^+ b = Omega tau``, ``Omega = E - M^{1/2} D^+ A
M^{-1}``, ``Q = tau - C qd``.  For a full-row-rank ``A``, ``M^{1/2} D^+ = A^T (A M^{-1} A^T)^{-1}``
(not in the documents): the KKT system

    [ M  A^T ] [ qdd  ]   [ Q ]
    [ A   0  ] [ -lam ] = [ b ],      Q_c = A^T lam                                      (KKT)

gives the same ``qdd``, and ``lam`` is the constraint force per constraint row.  UK needs no
full rank (redundant constraints are fine through ``D^+``); KKT does.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def udwadia_kalaba(M: np.ndarray, Q: np.ndarray, A: np.ndarray, b: np.ndarray,
                   qdd: np.ndarray, Qc: np.ndarray) -> None:
    """001 (62), literally: ``qdd`` and the constraint force ``Q_c`` (module docstring)."""
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    r = np.sqrt(w)
    Mh = (V * r) @ V.T  # M^{1/2}
    Mih = (V / r) @ V.T  # M^{-1/2}
    Dp = np.linalg.pinv(A @ Mih)  # D^+, D = A M^{-1/2}
    a = Mih @ (Mih @ Q)  # unconstrained M^{-1} Q
    Qc[:] = Mh @ (Dp @ (b - A @ a))
    qdd[:] = a + Mih @ (Mih @ Qc)


@njit(cache=True)
def kkt(M: np.ndarray, Q: np.ndarray, A: np.ndarray, b: np.ndarray, qdd: np.ndarray,
        lam: np.ndarray) -> None:
    """The multiplier form (module docstring): ``M qdd = Q + A^T lam``, ``A qdd = b``."""
    n = M.shape[0]
    r = A.shape[0]
    K = np.zeros((n + r, n + r))
    rhs = np.empty(n + r)
    K[:n, :n] = M
    K[:n, n:] = -A.T
    K[n:, :n] = A
    rhs[:n] = Q
    rhs[n:] = b
    x = np.linalg.solve(K, rhs)
    qdd[:] = x[:n]
    lam[:] = x[n:]
