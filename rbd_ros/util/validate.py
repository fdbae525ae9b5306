"""One validation rule per kind of argument, for every public entry point of the ROS-free
core (``Robot`` and its based subclasses, ``RigidBody``, ``MdhModel``, the URDF loader) and
for the services and command-line helpers that wrap them.  ROS-free and cheap; each raises a
``ValueError`` with one line naming the argument, what it got and what is accepted.

Kinds (issue 27: nothing is reinterpreted without a word):

* ``integer(name, x, minimum)``: a count, index or seed.  ``bool`` is refused (``True`` is not
  "1 step"), so is a float with a fractional part (``2.5`` steps is not 2); an integral float
  (``100.0``, as YAML/JSON give) is accepted.
* ``flag(name, x)``: a switch (``include_actuators``): ``bool`` / ``numpy.bool_`` only, so a
  string ``"no"`` is not read as true.
* ``positive(name, x)``: a tolerance, gain, time step or timeout: a finite real ``> 0``,
  not ``bool``, not subnormal (``5e-324`` s is not a time step).
* ``real(name, x)``: a finite real scalar (e.g. ``integrate``'s ``dt``, which may be negative).
* ``finite_array(name, arr)``: no NaN or Inf in an already converted array.
* ``gravity(name, g)``: three finite numbers (m/s^2).
* ``rigid_pose(name, T)``: a finite 4x4 rigid transform (rotation orthonormal within 1e-6,
  det +1, last row 0 0 0 1); ``rotation(name, R)`` the 3x3 part alone.
* ``joint_limits(names, lower, upper, where)``: no NaN limit, ``lower < upper`` for every
  movable joint.  ``lower == upper`` is refused, not guessed: a URDF means by it either a
  joint that cannot move (lock it) or, as often, limits never written (``<limit>`` without
  lower/upper defaults both to 0: example-robot-data's free-swinging double pendulum), where
  treating it as fixed would be wrong; the message gives both fixes.
* ``finite_result(what, out, **inputs)``: a result is checked before it leaves: a non-finite
  one raises ``NonFiniteResultError`` naming the cause (the largest input).
* ``renamed(where, old, new, value, current, default)``: an old keyword spelling (docs/guides/
  glossary.md): its value, after one ``DeprecationWarning`` naming the new one.
"""
from __future__ import annotations

import math
import numbers
import sys
import warnings
from typing import Any, Sequence

import numpy as np

_TINY = sys.float_info.min  # the smallest normal double


def renamed(where: str, old: str, new: str, value: Any, current: Any, default: Any = None) -> Any:
    """The keyword ``new``'s value (``current``, whose default is ``default``) when the caller
    may have spelled it ``old`` (``value``; None: not given): the old spelling's value after one
    ``DeprecationWarning`` naming the new one; both given is an error."""
    if value is None:
        return current
    if current is not default and not (isinstance(current, str) and current == default):
        raise ValueError(f"{where}: give {new}= only ({old}= is its deprecated spelling)")

    warnings.warn(f"{where}: {old}= is deprecated, use {new}= ({old}= goes in the next release)",
                  DeprecationWarning, stacklevel=3)
    return value


class NonFiniteResultError(ValueError):
    """A computation on finite inputs produced NaN or Inf (the inputs overflow float64, or the
    model is degenerate); the message names the cause.  A ``ValueError`` so that every
    caller that turns bad arguments into ``success=false`` also reports this.  ``result``:
    the offending array, for a caller that names the bad entry in its own terms (the dynamics
    service names the caller's joint)."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class SimulationError(RuntimeError):
    """A simulation diverged: the state became NaN or Inf (the message says when).  Raised by
    every simulator of the core (``Robot.simulate``, ``lie.rigid_body``); also importable from
    ``rbd_ros.robot``."""


def _real_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))


def integer(name: str, x: Any, minimum: int | None = None) -> int:
    """``x`` as an ``int`` (module docstring: no bool, no fractional float), ``>= minimum``."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be an integer, got {x!r} ({type(x).__name__})")
    if isinstance(x, numbers.Integral):
        k = int(x)
    else:
        xf = float(x)
        if not (math.isfinite(xf) and xf.is_integer()):
            raise ValueError(f"{name} must be an integer, got {x!r} (a fractional or non-finite number "
                             f"is not rounded silently)")
        k = int(xf)
    if minimum is not None and k < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {k}")
    return k


def flag(name: str, x: Any) -> bool:
    """``x`` as a ``bool``: only ``True``/``False`` (or ``numpy.bool_``)."""
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {x!r} ({type(x).__name__})")
    return bool(x)


def real(name: str, x: Any) -> float:
    """A finite real scalar (not bool)."""
    if not _real_scalar(x) or not math.isfinite(float(x)):
        raise ValueError(f"{name} must be a finite real number, got {x!r}")
    return float(x)


def positive(name: str, x: Any) -> float:
    """A finite real ``> 0`` and not subnormal (tolerance, gain, time step, timeout)."""
    if not _real_scalar(x) or not math.isfinite(float(x)) or not float(x) >= _TINY:
        raise ValueError(f"{name} must be a positive number, got {x!r}")
    return float(x)


def _all_finite_loop(a: np.ndarray) -> bool:
    """No NaN or Inf in ``a`` (any shape): one compiled loop, ~0.2 us per call against ~1 us
    for ``np.isfinite(a).all()`` on a small array."""
    for v in a.flat:
        if not np.isfinite(v):
            return False
    return True


def _all_finite(a: np.ndarray) -> bool:
    """``_all_finite_loop`` compiled on first use (so ``import rbd_ros`` does not import numba);
    the compiled kernel then replaces this stub as the module's ``_all_finite``."""
    global _all_finite
    from numba import njit

    _all_finite = njit(cache=True)(_all_finite_loop)
    return _all_finite(a)


#: from this many values on, NumPy's vectorised ``isfinite(a).all()`` (~0.15 ns a value, ~1 us
#: a call) beats the compiled loop (~0.4 ns a value, ~0.2 us a call): a 20 000-state 7-DoF
#: batch's three inputs 10 -> 3.6 ns per state (issue 32)
_LOOP_MAX = 8192


def _finite64(a: np.ndarray) -> bool:
    """No NaN or Inf in the float64 array ``a``: the compiled loop for small arrays, NumPy's
    vectorised check for large ones (``_LOOP_MAX``)."""
    return _all_finite(a) if a.size < _LOOP_MAX else bool(np.isfinite(a).all())


def finite_array(name: str, arr: np.ndarray) -> np.ndarray:
    """``arr`` unchanged if it holds no NaN or Inf."""
    if not (_finite64(arr) if arr.dtype == np.float64 else np.isfinite(arr).all()):
        raise ValueError(f"{name} contains {'NaN' if np.isnan(arr).any() else 'Inf'}")
    return arr


def real_array(name: str, x: Any) -> np.ndarray:
    """``x`` as a C-contiguous float64 array; complex values are refused, not cut to their
    real part."""
    try:
        arr = np.asarray(x)
        if not np.iscomplexobj(arr):
            return np.ascontiguousarray(arr, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of numbers, got {type(x).__name__}") from exc
    raise ValueError(f"{name} must be real numbers, got complex values")


def gravity(name: str, g: Any) -> np.ndarray:
    """Gravity ``(3,)``, finite (m/s^2)."""
    arr = real_array(name, g)
    if arr.shape != (3,):
        raise ValueError(f"{name} must be 3 numbers (m/s^2), got shape {arr.shape}")
    return finite_array(name, arr)


def rotation(name: str, R: Any, tol: float = 1e-6) -> np.ndarray:
    """A 3x3 rotation: finite, ``R R^T = I`` within ``tol``, ``det R = +1``."""
    arr = real_array(name, R)
    if arr.shape != (3, 3):
        raise ValueError(f"{name} must be a 3x3 rotation matrix, got shape {arr.shape}")
    finite_array(name, arr)
    err = float(np.abs(arr @ arr.T - np.eye(3)).max())
    if err > tol or np.linalg.det(arr) <= 0:
        raise ValueError(f"{name} is not a rotation (R R^T - I off by {err:.3g}, det {np.linalg.det(arr):.6g}; "
                         f"needs orthonormal columns and det +1)")
    return arr


def rigid_pose(name: str, T: Any, tol: float = 1e-6) -> np.ndarray:
    """A 4x4 rigid transform ``[[R, p], [0 0 0 1]]``, finite, ``R`` a rotation."""
    arr = real_array(name, T)
    if arr.shape != (4, 4):
        raise ValueError(f"{name} must be a 4x4 homogeneous transform, got shape {arr.shape}")
    finite_array(name, arr)
    if not np.array_equal(arr[3], [0.0, 0.0, 0.0, 1.0]):
        raise ValueError(f"{name} is not a rigid transform: its last row is {arr[3].tolist()}, not [0, 0, 0, 1]")
    err = float(np.abs(arr[:3, :3] @ arr[:3, :3].T - np.eye(3)).max())
    det = float(np.linalg.det(arr[:3, :3]))
    if err > tol or det <= 0:
        raise ValueError(f"{name} is not a rigid transform: its rotation part has R R^T - I off by {err:.3g} "
                         f"and det {det:.6g} (needs orthonormal columns, det +1; no scaling or shear)")
    return arr


def joint_limits(names: Sequence[str], lower: np.ndarray, upper: np.ndarray, where: str) -> None:
    """Joint position limits: none NaN, ``lower < upper`` (``-inf``/``inf`` for none)."""
    for i, jn in enumerate(names):
        for side, v in (("lower", lower[i]), ("upper", upper[i])):
            if math.isnan(v):
                raise ValueError(f"{where}: joint '{jn}' has a NaN {side} limit; give a number (or "
                                 f"-inf/inf, or no limit) for it")
        if lower[i] > upper[i]:
            raise ValueError(f"{where}: joint '{jn}' has lower limit {lower[i]:g} above upper {upper[i]:g}")
        if lower[i] == upper[i]:
            raise ValueError(f"{where}: joint '{jn}' has lower == upper == {lower[i]:g}, an empty range (URDF's "
                             f"default when <limit> gives no lower/upper): if it moves, give its real limits or "
                             f"make it continuous; if it cannot, declare it fixed or lock it (locked_joints="
                             f"{{'{jn}': {lower[i]:g}}}, urdf2mdh --lock {jn}={lower[i]:g})")


def floating_base_body(base_link: str, mass: float, inertia: np.ndarray) -> None:
    """A floating base needs a base body with positive mass and a positive-definite inertia."""
    eig = np.linalg.eigvalsh(np.asarray(inertia, dtype=float))
    if not (mass > 0 and eig.min() > 0):
        raise ValueError(
            f"a floating base needs a base body with positive mass and a positive-definite inertia "
            f"(base_link '{base_link}' has mass {mass:g}, inertia eigenvalues {np.round(eig, 9).tolist()}); "
            f"otherwise the joint next to the base has no inertia to push against (singular mass matrix): "
            f"give '{base_link}' an <inertial> or choose another base link")


def finite_result(what: str, out: Any, **inputs: Any) -> Any:
    """``out`` unchanged when finite, else ``NonFiniteResultError`` naming the likely cause:
    the input with the largest magnitude (finite inputs too large for float64)."""
    if _finite64(out) if isinstance(out, np.ndarray) and out.dtype == np.float64 else np.isfinite(out).all():
        return out
    raise NonFiniteResultError(f"{what}: the result is NaN or Inf although the inputs are finite; {_cause(inputs)}",
                               result=out)


def largest_input(inputs: dict[str, Any], finite_only: bool = False) -> tuple[str, float]:
    """``(name, magnitude)`` of the input with the largest absolute entry (``("", 0.0)`` when
    none): the likely cause of a non-finite result of finite inputs (``finite_only``: NaN and
    Inf entries are left out).  Used here and by the dynamics service's messages."""
    big, name = 0.0, ""
    for k, v in inputs.items():
        if v is None:
            continue
        a = np.abs(np.asarray(v, dtype=float))
        m = float((a[np.isfinite(a)] if finite_only else a).max(initial=0.0))
        if m > big:
            big, name = m, k
    return name, big


def _cause(inputs: dict[str, Any]) -> str:
    name, big = largest_input(inputs)
    if big > 1e100:
        return (f"the inputs overflow float64 (largest: |{name}| = {big:.3g}); use physically meaningful "
                f"magnitudes")
    return "the model or state is degenerate here (no input is unusually large)"


__all__ = ["NonFiniteResultError", "finite_array", "finite_result", "flag", "floating_base_body", "gravity",
           "integer", "joint_limits", "largest_input", "positive", "real", "real_array", "rigid_pose", "rotation"]
