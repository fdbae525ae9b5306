"""The drive model of 003 (6.16)-(6.17) per joint, the one copy every kernel uses.

A joint driven through a gear of ratio ``G`` by a rotor of inertia ``Jm`` with viscous
friction ``B`` and Coulomb friction ``Tc`` needs, beyond the rigid-body torque,
``tau_act = G^2 Jm qdd + B qd + Tc sign(qd)``: the armature ``G^2 Jm`` (the ``Gamma^T J_M
Gamma`` of (6.17), ``layout.ARM``) adds to the diagonal of ``M``, the friction ``B qd + Tc
sign(qd)`` ((6.16), ``layout.VISC``, ``layout.COUL``) to the bias.  ``sign(0) = 0``.

Small ``@njit(inline="always")`` functions: numba inlines them into each kernel, so sharing
them costs no call (bench/bench_core.py).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.layout import ARM, COUL, VISC


@njit(cache=True, inline="always")
def sign(x: float) -> float:  # pragma: no cover - jitted
    """``sign(x)`` with ``sign(0) = 0``."""
    return 1.0 if x > 0.0 else (-1.0 if x < 0.0 else 0.0)


@njit(cache=True, inline="always")
def armature(mp: np.ndarray, i: int) -> float:  # pragma: no cover - jitted
    """``G_i^2 Jm_i``, the reflected rotor inertia of joint ``i`` (003 (6.17))."""
    return mp[i, ARM]


@njit(cache=True, inline="always")
def coulomb(mp: np.ndarray, i: int, v: float) -> float:  # pragma: no cover - jitted
    """``Tc_i sign(v)`` (003 (6.16))."""
    return mp[i, COUL] * sign(v)


@njit(cache=True, inline="always")
def viscous(mp: np.ndarray, i: int, v: float) -> float:  # pragma: no cover - jitted
    """``B_i v`` (003 (6.16))."""
    return mp[i, VISC] * v


@njit(cache=True, inline="always")
def friction(mp: np.ndarray, i: int, v: float) -> float:  # pragma: no cover - jitted
    """``B_i v + Tc_i sign(v)``, the friction torque of joint ``i`` at velocity ``v`` (003 (6.16))."""
    return viscous(mp, i, v) + coulomb(mp, i, v)
