"""Validated single-state entry points used by ``Robot``'s fast path.

Eagerly compiled for exactly ``float64`` C-contiguous arrays (2-D model/workspace, 1-D
states): numba's dispatcher then refuses any other argument type (``TypeError``) instead of
compiling a new specialisation, and the kernel checks lengths and finiteness itself, which
costs nanoseconds instead of the microseconds of NumPy checks from Python.  A non-zero
return code means "invalid": ``Robot`` then reruns its full Python validation, which
raises the ``ValueError`` naming the argument.  The dynamics kernels themselves trust their
inputs.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.crba import crba
from rbd_ros.algorithm.forward_dynamics import forward_dynamics
from rbd_ros.algorithm.rnea import bias, gravity, rnea

_M = "float64[:, ::1]"
_V = "float64[::1]"


@njit(cache=True, inline="always")
def _bad(mp: np.ndarray, x: np.ndarray) -> bool:
    if x.shape[0] != mp.shape[0] - 3:
        return True
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return True
    return False


@njit(f"int64({_M}, {_M}, {_V}, {_V}, {_V}, {_V})", cache=True)
def rnea_checked(mp, ws, q, qd, qdd, tau):  # noqa: ANN001, ANN201 - typed by the signature
    """``rnea`` if q, qd, qdd have n finite entries (and tau n entries), else 1."""
    if _bad(mp, q) or _bad(mp, qd) or _bad(mp, qdd) or tau.shape[0] != q.shape[0]:
        return 1
    rnea(mp, ws, q, qd, qdd, tau)
    return 0


@njit(f"int64({_M}, {_M}, {_V}, {_V}, {_V}, {_V})", cache=True)
def forward_dynamics_checked(mp, ws, q, qd, tau, qdd):  # noqa: ANN001, ANN201
    """``forward_dynamics`` (no actuators) after the same checks."""
    if _bad(mp, q) or _bad(mp, qd) or _bad(mp, tau) or qdd.shape[0] != q.shape[0]:
        return 1
    forward_dynamics(mp, ws, q, qd, tau, False, qdd)
    return 0


@njit(f"int64({_M}, {_M}, {_V}, float64[:, ::1])", cache=True)
def crba_checked(mp, ws, q, M):  # noqa: ANN001, ANN201
    if _bad(mp, q) or M.shape[0] != q.shape[0] or M.shape[1] != q.shape[0]:
        return 1
    crba(mp, ws, q, M)
    return 0


@njit(f"int64({_M}, {_M}, {_V}, {_V})", cache=True)
def gravity_checked(mp, ws, q, g):  # noqa: ANN001, ANN201
    if _bad(mp, q) or g.shape[0] != q.shape[0]:
        return 1
    gravity(mp, ws, q, g)
    return 0


@njit(f"int64({_M}, {_M}, {_V}, {_V}, {_V})", cache=True)
def bias_checked(mp, ws, q, qd, h):  # noqa: ANN001, ANN201
    if _bad(mp, q) or _bad(mp, qd) or h.shape[0] != q.shape[0]:
        return 1
    bias(mp, ws, q, qd, h)
    return 0
