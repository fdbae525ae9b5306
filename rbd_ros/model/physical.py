"""Physical consistency of a link's rotational inertia, checked when a model is made.

A rigid body's inertia about its centre of mass, ``I = integral (|r|^2 E - r r^T) dm``, has
principal moments ``I1 <= I2 <= I3`` (eigenvalues of ``I``) that

* are non-negative (``I`` positive semidefinite: ``x^T I x = integral |x x r|^2 dm >= 0``;
  zero only for a point mass or a thin rod along ``x``), and
* satisfy the triangle inequality ``I1 + I2 >= I3`` (``I1 + I2 - I3 = 2 integral r3^2 dm``
  in principal axes).

A tensor breaking either describes no body.  An indefinite one makes the mass matrix
indefinite (forward dynamics and simulation then return normal-looking wrong numbers), and
MuJoCo refuses both.  ``MdhModel`` therefore replaces it, at load time and with an
``InertiaWarning`` naming the link, by the nearest physical tensor (same principal axes):

* negative principal moments -> 0;
* ``I1 + I2 < I3`` -> the two smaller moments each raised by half the deficit, so
  ``I1 + I2 = I3`` (the smallest change in the Frobenius norm).

Every consumer (core, services, controller, MuJoCo bridge) then uses the same, fixed model.
The warning comes once per model and message in a process (``warn_once``); ``MdhModel(...,
inertia_fix=False)`` (``keep_inertia`` of the URDF loaders, ``urdf2mdh --keep-inertia``) keeps
the description's own tensor instead (its ``inertia_notes`` say which), for a like-for-like
comparison with tools that take it as given; MuJoCo refuses such a model.
"""
from __future__ import annotations

import warnings

import numpy as np

#: relative round-off allowed in the checks (eigenvalues are computed, not given)
RTOL = 1e-9


class InertiaWarning(UserWarning):
    """A link inertia was physically impossible and has been replaced (the message says how)."""


_WARNED: set[tuple[str, str]] = set()  # (model name, message) already warned in this process


def warn_once(model: str, message: str, stacklevel: int = 2) -> bool:
    """``InertiaWarning(message)`` unless model ``model`` was warned of it before in this
    process, whatever the warnings filters (a sweep builds one model many times: every
    perturbation, every cell); True when it warned.  The message names the link and its
    moments, so another description of the same name with other inertias warns again."""

    key = (model, message)
    if key in _WARNED:
        return False
    _WARNED.add(key)
    warnings.warn(message, InertiaWarning, stacklevel=stacklevel + 1)
    return True


def balance_moments(w: np.ndarray) -> np.ndarray:
    """Ascending principal moments ``w`` made to satisfy ``w0 + w1 >= w2`` exactly (in floating
    point): the two smaller raised by half the deficit (module docstring)."""
    new = np.array(w, dtype=float)
    deficit = new[2] - new[0] - new[1]
    if deficit > 0.0:
        new[0] += 0.5 * deficit
        new[1] += 0.5 * deficit
        new[2] = min(new[2], new[0] + new[1])
    return new


def physical_inertia(inertia: np.ndarray, label: str = "link") -> tuple[np.ndarray, str | None]:
    """``(tensor, None)`` if ``inertia`` (3x3, symmetric) is physical within round-off, else
    ``(nearest physical tensor, message)``; the message names ``label``, what is wrong and
    what would fix it."""
    I = np.asarray(inertia, dtype=float)
    w, V = np.linalg.eigh(I)  # ascending
    tol = RTOL * max(float(np.abs(w).max()), 1e-300)
    negative = w[0] < -tol
    triangle = w[0] + w[1] < w[2] - tol
    if not (negative or triangle):
        return I, None
    fixed = balance_moments(np.maximum(w, 0.0))
    what = []
    if negative:
        what.append("not positive semidefinite (a negative principal moment)")
    if triangle:
        what.append(f"breaks the triangle inequality I1 + I2 >= I3 "
                    f"({w[0]:.6g} + {w[1]:.6g} < {w[2]:.6g})")
    msg = (f"{label}: inertia is physically impossible: {' and '.join(what)}; principal moments "
           f"{_fmt(w)} kg m^2. Using {_fmt(fixed)} (same principal axes) instead; to fix the "
           f"description, give principal moments with I1, I2, I3 >= 0 and I1 + I2 >= I3, "
           f"e.g. these")
    return (V * fixed) @ V.T, msg


def _fmt(x: np.ndarray) -> str:
    return "[" + ", ".join(f"{float(t):.6g}" for t in x) + "]"
