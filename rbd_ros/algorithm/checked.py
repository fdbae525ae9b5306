"""Validated single-state entry points used by ``Robot``'s fast path.

Compiled for exactly ``float64`` C-contiguous arrays (the 2-D ``mw`` of
``data.model_workspace``, 1-D states and outputs), each on its first use
(``algorithm.first_use``: importing this module compiles nothing, a process pays only for the
entry points it calls): numba's dispatcher then refuses any
other argument type (``TypeError``) instead of compiling a new specialisation, and the
kernel checks lengths and finiteness itself, which costs nanoseconds instead of the
microseconds of NumPy checks from Python.  A non-zero return code means "invalid" (1: an
argument; 2: the result is NaN or Inf): ``Robot`` then reruns its full Python validation and
result check, which raise the ``ValueError`` naming the argument or the cause.
The dynamics kernels themselves trust their inputs.

Call cost, not arithmetic, dominates a 7-DoF call, so these entry points

* take the packed model and the workspace as one array ``mw`` (row 0: header ``n``; rows
  ``1 .. n + 3``: ``mp``; the rest: ``ws``), split into views here: each array argument
  costs the dispatcher tens of nanoseconds to type and unbox;
* are compiled without numba's reference-counted runtime (``_nrt=False``): they allocate
  nothing, and without NRT an array argument is unboxed without allocating (and freeing) a
  ``MemInfo`` for it, ~60 ns per array, ~0.3 us per call with five arrays.  The kernels they
  call are ordinary NRT functions; NRT's incref/decref skip the null ``MemInfo`` of these
  arguments;
* are called by ``Robot`` through ``entry(dispatcher)``, the compiled function itself,
  skipping the dispatcher's typing of each argument (~35 ns per array).  That bypasses the
  dispatcher's type check: numba's unboxing only checks "an ndarray with 8-byte items", so the
  caller must check ``ndim == 1`` and ``dtype is float64`` of every state argument first
  (a 2-D array would overflow the 1-D array struct); stride and alignment are checked here.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from rbd_ros.algorithm.crba import crba
from rbd_ros.algorithm.f8vector import bad_vector, f8vector
from rbd_ros.algorithm.first_use import entry, one_signature
from rbd_ros.algorithm.forward_dynamics import forward_dynamics
from rbd_ros.algorithm.rnea import bias, gravity, rnea

_M = types.float64[:, ::1]
_V = types.float64[::1]
_X = f8vector  # a state argument: its unboxing checks ndim and dtype (``algorithm.f8vector``); x[:] is a _V
_I = types.int64


@njit(cache=True, inline="always")
def _bad(mp: np.ndarray, x: np.ndarray) -> bool:
    """Not ``n`` finite values in one aligned contiguous row (``f8vector.bad_vector``)."""
    return bad_vector(x, mp.shape[0] - 3)


@njit(cache=True, inline="always")
def nonfinite(x: np.ndarray) -> bool:
    """Any NaN or Inf in the result ``x`` (1-D or 2-D): a result is checked before it leaves
    (``rbd_ros.util.validate``); finite inputs can still overflow (``qd = 1e200``)."""
    for v in x.flat:
        if not np.isfinite(v):
            return True
    return False


@njit(cache=True, inline="always")
def split_workspace(mw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mp, ws)`` views of ``mw`` (``data.model_workspace``)."""
    n = int(mw[0, 0])
    return mw[1:n + 4], mw[n + 4:]


@one_signature(_I(_M, _X, _X, _X, _V), cache=True, _nrt=False)
def rnea_checked(mw, q, qd, qdd, tau):  # typed by the signature
    """``rnea`` if q, qd, qdd have n finite entries (and tau n entries), else 1."""
    mp, ws = split_workspace(mw)
    q, qd, qdd = q[:], qd[:], qdd[:]
    if _bad(mp, q) or _bad(mp, qd) or _bad(mp, qdd) or tau.shape[0] != q.shape[0]:
        return 1
    rnea(mp, ws, q, qd, qdd, tau)
    return 2 if nonfinite(tau) else 0


@one_signature(_I(_M, _X, _X, _X, _V), cache=True, _nrt=False)
def forward_dynamics_checked(mw, q, qd, tau, qdd):
    """``forward_dynamics`` (no actuators) after the same checks."""
    mp, ws = split_workspace(mw)
    q, qd, tau = q[:], qd[:], tau[:]
    if _bad(mp, q) or _bad(mp, qd) or _bad(mp, tau) or qdd.shape[0] != q.shape[0]:
        return 1
    forward_dynamics(mp, ws, q, qd, tau, False, qdd)
    return 2 if nonfinite(qdd) else 0


@one_signature(_I(_M, _X, _M), cache=True, _nrt=False)
def crba_checked(mw, q, M):
    mp, ws = split_workspace(mw)
    q = q[:]
    if _bad(mp, q) or M.shape[0] != q.shape[0] or M.shape[1] != q.shape[0]:
        return 1
    crba(mp, ws, q, M)
    return 2 if nonfinite(M) else 0


@one_signature(_I(_M, _X, _V), cache=True, _nrt=False)
def gravity_checked(mw, q, g):
    mp, ws = split_workspace(mw)
    q = q[:]
    if _bad(mp, q) or g.shape[0] != q.shape[0]:
        return 1
    gravity(mp, ws, q, g)
    return 2 if nonfinite(g) else 0


@one_signature(_I(_M, _X, _X, _V), cache=True, _nrt=False)
def bias_checked(mw, q, qd, h):
    mp, ws = split_workspace(mw)
    q, qd = q[:], qd[:]
    if _bad(mp, q) or _bad(mp, qd) or h.shape[0] != q.shape[0]:
        return 1
    bias(mp, ws, q, qd, h)
    return 2 if nonfinite(h) else 0


__all__ = ["bias_checked", "crba_checked", "entry", "forward_dynamics_checked", "gravity_checked",
           "rnea_checked"]
