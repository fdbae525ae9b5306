"""Exact operation counts by construction: the jitted kernels' own source, run in plain
Python on a counting number type.

``pure(modname)`` imports a fresh copy of a module (and the ``rbd_ros`` modules it imports)
with ``numba.njit`` replaced by the identity, so the very source of ``rnea.rnea`` or
``dual_quaternion.dqne`` runs on ``Counted`` numbers: every ``*``, ``/``, ``+`` and ``-``
between numbers is tallied (also by constants such as ``2.0 * x``, and also where an operand
is 0 or 1: the count is of the code as written); ``sin``/``cos`` are tallied apart.
Negation and comparisons are not counted.  The counts therefore depend only on n and the
joint types, never on the values.

``TABLE3`` holds 001 Table 3 (multiplications, additions for an n-DoF serial robot).
"""
from __future__ import annotations

import importlib
import sys
import types
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import numpy as np

#: 001 Table 3: method -> (multiplications(n), additions(n))
TABLE3: dict[str, tuple[Callable[[int], float], Callable[[int], float]]] = {
    "dual quaternion Newton-Euler (arbitrary joints)": (lambda n: 882 * n - 48, lambda n: 724 * n - 40),
    "classic Newton-Euler (Luh, counted by Balafoutis)": (lambda n: 150 * n - 48, lambda n: 131 * n - 48),
    "dual quaternion Euler-Lagrange via GPLC": (lambda n: 4 * n**3 + 386 * n**2 + 401 * n,
                                                lambda n: 16 / 3 * n**3 + 326 * n**2 + 908 / 3 * n),
    "classic Euler-Lagrange (Hollerbach 3x3)": (lambda n: 412 * n - 277, lambda n: 320 * n - 201),
}


class Tally:
    """Counters of one run."""

    def __init__(self) -> None:
        self.mul = 0
        self.add = 0
        self.div = 0
        self.trig = 0

    def as_dict(self) -> dict[str, int]:
        return {"mul": self.mul, "add": self.add, "div": self.div, "trig": self.trig}


class Counted:
    """A float that tallies the arithmetic done with it into ``Counted.tally``."""

    __slots__ = ("v",)
    tally = Tally()

    def __init__(self, v: float) -> None:
        self.v = float(v)

    @staticmethod
    def _v(o: Any) -> float:
        return o.v if isinstance(o, Counted) else float(o)

    def __add__(self, o: Any) -> "Counted":
        Counted.tally.add += 1
        return Counted(self.v + self._v(o))

    __radd__ = __add__

    def __sub__(self, o: Any) -> "Counted":
        Counted.tally.add += 1
        return Counted(self.v - self._v(o))

    def __rsub__(self, o: Any) -> "Counted":
        Counted.tally.add += 1
        return Counted(self._v(o) - self.v)

    def __mul__(self, o: Any) -> "Counted":
        Counted.tally.mul += 1
        return Counted(self.v * self._v(o))

    __rmul__ = __mul__

    def __truediv__(self, o: Any) -> "Counted":
        Counted.tally.div += 1
        return Counted(self.v / self._v(o))

    def __rtruediv__(self, o: Any) -> "Counted":
        Counted.tally.div += 1
        return Counted(self._v(o) / self.v)

    def __neg__(self) -> "Counted":
        return Counted(-self.v)

    def __pos__(self) -> "Counted":
        return self

    def __eq__(self, o: object) -> bool:
        return self.v == self._v(o)

    def __ne__(self, o: object) -> bool:
        return self.v != self._v(o)

    def __lt__(self, o: Any) -> bool:
        return self.v < self._v(o)

    def __gt__(self, o: Any) -> bool:
        return self.v > self._v(o)

    def __le__(self, o: Any) -> bool:
        return self.v <= self._v(o)

    def __ge__(self, o: Any) -> bool:
        return self.v >= self._v(o)

    __hash__ = None  # type: ignore[assignment]

    def cos(self) -> "Counted":
        Counted.tally.trig += 1
        return Counted(np.cos(self.v))

    def sin(self) -> "Counted":
        Counted.tally.trig += 1
        return Counted(np.sin(self.v))

    # no __float__: storing a Counted in a float array raises instead of dropping the count


def counted(a: Any) -> np.ndarray:
    """An object array of ``Counted`` with the values of ``a``."""
    a = np.asarray(a, dtype=float)
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = Counted(a[idx])
    return out


def values(a: np.ndarray) -> np.ndarray:
    """The float values of an object array of ``Counted``."""
    return np.vectorize(lambda c: c.v if isinstance(c, Counted) else float(c), otypes=[float])(a)


def _identity_njit(*args: Any, **kw: Any) -> Any:
    if len(args) == 1 and callable(args[0]) and not kw:
        return args[0]
    return lambda f: f


@contextmanager
def _plain_numba() -> Iterator[None]:
    """Within: ``numba.njit`` is the identity and the ``rbd_ros`` kernel modules import
    afresh; afterwards ``sys.modules`` and the package attributes are as before."""
    fake = types.ModuleType("numba")
    fake.njit = _identity_njit  # type: ignore[attr-defined]
    fake.prange = range  # type: ignore[attr-defined]
    prefixes = ("rbd_ros.algorithm", "rbd_ros.formulations", "rbd_ros.model.data")
    saved = dict(sys.modules)
    for k in list(sys.modules):
        if k.startswith(prefixes):
            del sys.modules[k]
    sys.modules["numba"] = fake
    try:
        trig = importlib.import_module("rbd_ros.algorithm.trig")
        trig.sincos = trig.sincos_libm  # type: ignore[attr-defined]  # sin and cos tallied as such, not the polynomials
        yield
    finally:
        for k in list(sys.modules):
            if k not in saved:
                del sys.modules[k]
        sys.modules.update(saved)
        for k, mod in saved.items():  # undo the parent-package attributes the import set
            parent, _, leaf = k.rpartition(".")
            if parent in saved and k.startswith(prefixes):
                setattr(saved[parent], leaf, mod)


def pure(modname: str) -> types.ModuleType:
    """A fresh, uncompiled copy of ``modname`` (its kernels run in plain Python)."""
    with _plain_numba():
        return importlib.import_module(modname)


def count(fn: Callable[..., Any], *args: Any) -> dict[str, int]:
    """Run ``fn(*args)`` and return its tally."""
    Counted.tally = Tally()
    fn(*args)
    return Counted.tally.as_dict()


def fit_linear(n: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Least-squares ``y = a + b n``: ``(a, b, largest |residual|)``."""
    A = np.stack([np.ones(len(n)), np.asarray(n, dtype=float)], axis=1)
    (a, b), *_ = np.linalg.lstsq(A, np.asarray(y, dtype=float), rcond=None)
    return float(a), float(b), float(np.abs(A @ [a, b] - y).max())
