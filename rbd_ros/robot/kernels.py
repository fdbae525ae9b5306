"""``Kernels``: the unchecked, allocation-free calls of any robot (Pinocchio style), one wrapper
for every root joint (``rbd_ros.bases``: each names its kernels as ``KernelCall``\\ s).

Arguments must be float64, C-contiguous, of the robot's sizes (``q (nq,)``, ``v, a (nv,)``,
``tau`` ``(nv,)`` or the diff drive's ``(nu,)``); results are preallocated buffers, overwritten
by the next call (``robot.data``'s for a fixed base).  ``rnea(q, v, a) -> tau``,
``forward_dynamics(q, v, tau) -> a``, ``crba(q) -> M``; a fixed base also ``gravity(q) -> g``
and ``jacobian(q) -> J`` (tool).  Diff drive: ``rnea`` returns ``[tau_L, tau_R, lam, joints]``,
``forward_dynamics`` the constrained ``a``.

Plain closures over the model, workspace and buffers with the kernel and its constants bound
as defaults (the fastest Python call path; a numba function returning its own output argument
would pay ~0.35 us to box it again).  A fixed base's calls go through the entry points of
``rbd_ros.algorithm.entries`` first (no dispatcher typing, no ``MemInfo`` per array: 7 DoF
``rnea`` ~0.45 -> ~0.3 us); what those refuse goes to the kernel itself as a float64 copy.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from rbd_ros.bases import KernelCall, RootJoint


def _bind(k: Callable[..., Any], mp: np.ndarray, ws: np.ndarray, out: np.ndarray, arity: int,
          constants: tuple) -> Callable[..., np.ndarray]:
    """``f(*inputs) = k(mp, ws, *inputs, *constants, out); return out`` for 1 or 3 inputs and
    up to 2 constants, written out (no ``*args`` on the call path)."""
    c = (*constants, None, None)[:2]
    nc = len(constants)
    if arity == 3 and nc == 0:
        def f3(x, y, z, _k=k, _mp=mp, _ws=ws, _o=out):
            _k(_mp, _ws, x, y, z, _o)
            return _o
        return f3
    if arity == 3 and nc == 1:
        def f31(x, y, z, _k=k, _mp=mp, _ws=ws, _c=c[0], _o=out):
            _k(_mp, _ws, x, y, z, _c, _o)
            return _o
        return f31
    if arity == 3 and nc == 2:
        def f32(x, y, z, _k=k, _mp=mp, _ws=ws, _c=c[0], _d=c[1], _o=out):
            _k(_mp, _ws, x, y, z, _c, _d, _o)
            return _o
        return f32
    if arity == 1 and nc == 0:
        def f1(x, _k=k, _mp=mp, _ws=ws, _o=out):
            _k(_mp, _ws, x, _o)
            return _o
        return f1
    if arity == 1 and nc == 1:
        def f11(x, _k=k, _mp=mp, _ws=ws, _c=c[0], _o=out):
            _k(_mp, _ws, x, _c, _o)
            return _o
        return f11
    raise ValueError(f"no kernel binding for {arity} inputs and {nc} constants")


def _f8_copy(x: Any) -> np.ndarray:
    """``x`` as a new aligned C-contiguous native float64 array (``_bind_entry``'s fallback):
    the kernel then runs the one signature it is compiled for.  Handed on as it came (strided,
    unaligned, float32, int64, big-endian), each new layout compiled a new specialization of
    the whole kernel on its first call, in the caller's cycle (issue 39: ``forward_dynamics``
    and its Cholesky solve for nine layouts, 94 s in CI); the copy costs ~0.5-1 us."""
    return np.array(x, dtype=np.float64)


def _bind_entry(e: Callable[..., Any], k: Callable[..., Any], mp: np.ndarray, ws: np.ndarray, out: np.ndarray,
                arity: int, constants: tuple) -> Callable[..., np.ndarray]:
    """As ``_bind``, through the entry point ``e`` (``algorithm.entries``) first: the kernel
    ``k`` itself only when ``e`` refuses the arguments (``TypeError``: not 1-D float64
    ndarrays; 1: not contiguous), given a float64 copy of each argument (``_f8_copy``).  A
    ``try`` costs nothing until it catches (CPython 3.11)."""
    c = (*constants, None)[0]
    nc = len(constants)
    if arity == 3 and nc == 0:
        def e3(x, y, z, _e=e, _k=k, _mp=mp, _ws=ws, _o=out):
            try:
                if _e(_mp, _ws, x, y, z, _o) == 0:
                    return _o
            except TypeError:
                pass
            _k(_mp, _ws, _f8_copy(x), _f8_copy(y), _f8_copy(z), _o)
            return _o
        return e3
    if arity == 3 and nc == 1:
        def e31(x, y, z, _e=e, _k=k, _mp=mp, _ws=ws, _c=c, _o=out):
            try:
                if _e(_mp, _ws, x, y, z, _c, _o) == 0:
                    return _o
            except TypeError:
                pass
            _k(_mp, _ws, _f8_copy(x), _f8_copy(y), _f8_copy(z), _c, _o)
            return _o
        return e31
    if arity == 1 and nc == 0:
        def e1(x, _e=e, _k=k, _mp=mp, _ws=ws, _o=out):
            try:
                if _e(_mp, _ws, x, _o) == 0:
                    return _o
            except TypeError:
                pass
            _k(_mp, _ws, _f8_copy(x), _o)
            return _o
        return e1
    if arity == 1 and nc == 1:
        def e11(x, _e=e, _k=k, _mp=mp, _ws=ws, _c=c, _o=out):
            try:
                if _e(_mp, _ws, x, _c, _o) == 0:
                    return _o
            except TypeError:
                pass
            _k(_mp, _ws, _f8_copy(x), _c, _o)
            return _o
        return e11
    raise ValueError(f"no kernel entry binding for {arity} inputs and {nc} constants")


_ARITY = {"rnea": 3, "forward_dynamics": 3, "crba": 1, "gravity": 1, "jacobian": 1}


class Kernels:
    """Unchecked calls of one robot (module docstring)."""

    rnea: Callable[..., np.ndarray]
    forward_dynamics: Callable[..., np.ndarray]
    crba: Callable[..., np.ndarray]

    def __init__(self, root: RootJoint, mp: np.ndarray, ws: np.ndarray, dof: int,
                 outputs: dict[str, np.ndarray] | None = None) -> None:
        nv = root.nv0 + dof
        outs = {"rnea": np.zeros(nv), "forward_dynamics": np.zeros(nv), "crba": np.zeros((nv, nv)),
                **(outputs or {})}
        named = {"wrench0": np.zeros(6), "tool": dof + 1}
        for op, call in root.kernels.items():
            consts = tuple(named.get(c, c) if isinstance(c, str) else c for c in call.constants)
            if call.entry:
                setattr(self, op, self._on_first_call(op, call, mp, ws, outs[op], consts))
            else:
                setattr(self, op, _bind(call.load(), mp, ws, outs[op], _ARITY[op], consts))

    def _on_first_call(self, op: str, call: KernelCall, mp: np.ndarray, ws: np.ndarray, out: np.ndarray,
                       consts: tuple) -> Callable[..., np.ndarray]:
        """A stand-in for ``op`` that compiles (or loads) its entry point on the first call, then
        puts the bound call in its place: a robot pays only for the kernels it calls."""
        bound: list[Callable[..., np.ndarray]] = []

        def first(*inputs: np.ndarray) -> np.ndarray:
            if not bound:
                e, k = call.load_entry(), call.load()
                bound.append(_bind(k, mp, ws, out, _ARITY[op], consts) if e is None
                             else _bind_entry(e, k, mp, ws, out, _ARITY[op], consts))
                setattr(self, op, bound[0])
            return bound[0](*inputs)

        return first
