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
Each is compiled (or loaded from the cache) on first use (``algorithm.first_use``;
``compiled(name)``): eagerly, all five would cost a fresh install ~7 s in the first ``Robot()``.
"""
from __future__ import annotations

from typing import Any, Callable

from numba import types

from rbd_ros.algorithm.crba import crba
from rbd_ros.algorithm.f8vector import f8vector, strided
from rbd_ros.algorithm.first_use import one_signature
from rbd_ros.algorithm.forward_dynamics import forward_dynamics
from rbd_ros.algorithm.kinematics import jacobian
from rbd_ros.algorithm.rnea import gravity, rnea

_M = types.float64[:, ::1]
_V = types.float64[::1]
_X = f8vector  # a state argument (unboxing checks ndim and dtype); x[:] is a _V
_I = types.int64


@one_signature(_I(_M, _M, _X, _X, _X, _V), cache=True, _nrt=False)
def rnea_entry(mp, ws, q, qd, qdd, tau):  # typed by the signature
    if strided(q) or strided(qd) or strided(qdd):
        return 1
    rnea(mp, ws, q[:], qd[:], qdd[:], tau)
    return 0


@one_signature(_I(_M, _M, _X, _X, _X, types.boolean, _V), cache=True, _nrt=False)
def forward_dynamics_entry(mp, ws, q, qd, tau, actuators, qdd):
    if strided(q) or strided(qd) or strided(tau):
        return 1
    forward_dynamics(mp, ws, q[:], qd[:], tau[:], actuators, qdd)
    return 0


@one_signature(_I(_M, _M, _X, _M), cache=True, _nrt=False)
def crba_entry(mp, ws, q, M):
    if strided(q):
        return 1
    crba(mp, ws, q[:], M)
    return 0


@one_signature(_I(_M, _M, _X, _V), cache=True, _nrt=False)
def gravity_entry(mp, ws, q, g):
    if strided(q):
        return 1
    gravity(mp, ws, q[:], g)
    return 0


@one_signature(_I(_M, _M, _X, _I, _M), cache=True, _nrt=False)
def jacobian_entry(mp, ws, q, frame, J):
    if strided(q):
        return 1
    jacobian(mp, ws, q[:], frame, J)
    return 0


def compiled(name: str) -> Callable[..., Any]:
    """The dispatcher of entry point ``name``, compiled for its one signature on first use."""
    return globals()[name].dispatcher()
