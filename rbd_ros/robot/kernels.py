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
would pay ~0.35 us to box it again).
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
        def f3(x, y, z, _k=k, _mp=mp, _ws=ws, _o=out):  # noqa: ANN001, ANN202
            _k(_mp, _ws, x, y, z, _o)
            return _o
        return f3
    if arity == 3 and nc == 1:
        def f31(x, y, z, _k=k, _mp=mp, _ws=ws, _c=c[0], _o=out):  # noqa: ANN001, ANN202
            _k(_mp, _ws, x, y, z, _c, _o)
            return _o
        return f31
    if arity == 3 and nc == 2:
        def f32(x, y, z, _k=k, _mp=mp, _ws=ws, _c=c[0], _d=c[1], _o=out):  # noqa: ANN001, ANN202
            _k(_mp, _ws, x, y, z, _c, _d, _o)
            return _o
        return f32
    if arity == 1 and nc == 0:
        def f1(x, _k=k, _mp=mp, _ws=ws, _o=out):  # noqa: ANN001, ANN202
            _k(_mp, _ws, x, _o)
            return _o
        return f1
    if arity == 1 and nc == 1:
        def f11(x, _k=k, _mp=mp, _ws=ws, _c=c[0], _o=out):  # noqa: ANN001, ANN202
            _k(_mp, _ws, x, _c, _o)
            return _o
        return f11
    raise ValueError(f"no kernel binding for {arity} inputs and {nc} constants")


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
            call: KernelCall
            consts = tuple(named.get(c, c) if isinstance(c, str) else c for c in call.constants)
            setattr(self, op, _bind(call.load(), mp, ws, outs[op], _ARITY[op], consts))
