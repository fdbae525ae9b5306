"""Entry points of the fixed base's unchecked kernels for ``robot.kernels`` (issue 32).

Each calls the kernel of the same name with the same arguments (``rnea_entry(mp, ws, q, qd,
qdd, tau)`` is ``rnea.rnea(mp, ws, q, qd, qdd, tau)``) and returns 0, or 1 without calling it
when a state argument is not contiguous.  Compiled for one signature, without numba's runtime
(``_nrt=False``), with the state arguments typed ``algorithm.f8vector``, they are called as
``checked.entry(...)``, the compiled function itself, like ``algorithm.checked``'s: no
dispatcher typing and no ``MemInfo`` per array; anything but a 1-D float64 ndarray is a
``TypeError`` from the unboxing.  ``robot.kernels`` then calls the lazily compiled kernel,
which takes whatever it took before (strided, read-only, other dtypes).  Measured, 7 DoF
``rnea`` through a closure: 0.45 us through numba's dispatcher, ~0.3 us here.

Like the kernels, they trust the sizes (``robot.kernels``' contract) and allocate nothing.
Each is compiled (or loaded from the cache) on first use, ``compiled(name)``: eagerly, all
five would cost a fresh install ~7 s in the first ``Robot()``.
"""
from __future__ import annotations

from typing import Any, Callable

from numba import njit, types

from rbd_ros.algorithm.crba import crba
from rbd_ros.algorithm.f8vector import f8vector
from rbd_ros.algorithm.forward_dynamics import forward_dynamics
from rbd_ros.algorithm.kinematics import jacobian
from rbd_ros.algorithm.rnea import gravity, rnea

_M = types.float64[:, ::1]
_V = types.float64[::1]
_X = f8vector  # a state argument (unboxing checks ndim and dtype); x[:] is a _V
_I = types.int64


@njit(cache=True, inline="always")
def _strided(x) -> bool:  # noqa: ANN001
    """Not one aligned contiguous row (the unboxing takes any 1-D float64 ndarray as C-layout)."""
    return x.strides[0] != 8 or x.ctypes.data & 7 != 0


def rnea_entry(mp, ws, q, qd, qdd, tau):  # noqa: ANN001, ANN201 - typed by _SIGNATURES
    if _strided(q) or _strided(qd) or _strided(qdd):
        return 1
    rnea(mp, ws, q[:], qd[:], qdd[:], tau)
    return 0


def forward_dynamics_entry(mp, ws, q, qd, tau, actuators, qdd):  # noqa: ANN001, ANN201
    if _strided(q) or _strided(qd) or _strided(tau):
        return 1
    forward_dynamics(mp, ws, q[:], qd[:], tau[:], actuators, qdd)
    return 0


def crba_entry(mp, ws, q, M):  # noqa: ANN001, ANN201
    if _strided(q):
        return 1
    crba(mp, ws, q[:], M)
    return 0


def gravity_entry(mp, ws, q, g):  # noqa: ANN001, ANN201
    if _strided(q):
        return 1
    gravity(mp, ws, q[:], g)
    return 0


def jacobian_entry(mp, ws, q, frame, J):  # noqa: ANN001, ANN201
    if _strided(q):
        return 1
    jacobian(mp, ws, q[:], frame, J)
    return 0


_SIGNATURES = {"rnea_entry": _I(_M, _M, _X, _X, _X, _V),
               "forward_dynamics_entry": _I(_M, _M, _X, _X, _X, types.boolean, _V),
               "crba_entry": _I(_M, _M, _X, _M), "gravity_entry": _I(_M, _M, _X, _V),
               "jacobian_entry": _I(_M, _M, _X, _I, _M)}
_COMPILED: dict[str, Any] = {}


def compiled(name: str) -> Callable[..., Any]:
    """The dispatcher of entry point ``name``, compiled for its one signature on first use."""
    if name not in _COMPILED:
        _COMPILED[name] = njit(_SIGNATURES[name], cache=True, _nrt=False)(globals()[name])
    return _COMPILED[name]
