"""Base (identifiable) parameters by QR decomposition (Gautier 1990, "Numerical calculation of
the base inertial parameters of robots", J. Robotic Systems 8(4); Khalil-Dombre §9.4).

The stacked regressor ``W`` of random states has rank ``b < 13 n``: some standard parameters
have no effect on the torques and some act only in fixed linear combinations.  ``W = Q R``
(no pivoting, columns in ``PARAMETERS`` order): a column whose ``|R_jj|`` is zero to round-off
is a combination of the columns before it.  With ``W1`` the independent columns and ``W2 =
W1 K`` the others, ``tau = W1 (phi1 + K phi2)``: the base parameters are ``beta = phi1 + K
phi2`` and the base regressor is ``W1``.  The columns are scaled to unit norm first, so the
rank test does not depend on units.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbd_ros.identification.regressor import NP, parameter_names, regressor
from rbd_ros.model import MdhModel

#: ``|R_jj| / max |R_ii|`` below this (unit-norm columns): a dependent column
RANK_TOL = 1e-8
#: a column this small against the largest is zero (any unit choice moves norms by far less)
ZERO_COLUMN = 1e-9


@dataclass(frozen=True)
class BaseParameters:
    """``beta = phi[independent] + K @ phi[dependent]`` (module docstring)."""

    independent: np.ndarray  # (b,) indices into phi
    dependent: np.ndarray  # (13 n - b,)
    K: np.ndarray  # (b, 13 n - b)
    names: tuple[str, ...]  # of phi

    @property
    def count(self) -> int:
        return len(self.independent)

    def beta(self, phi: np.ndarray) -> np.ndarray:
        phi = np.asarray(phi, dtype=float)
        return phi[self.independent] + self.K @ phi[self.dependent]

    def matrix(self) -> np.ndarray:
        """``B`` (b, 13 n) with ``beta = B phi``."""
        B = np.zeros((self.count, len(self.names)))
        B[np.arange(self.count), self.independent] = 1.0
        B[:, self.dependent] = self.K
        return B

    def labels(self, tol: float = 1e-9) -> list[str]:
        """Each base parameter as its combination, e.g. ``'ZZ1 + Ia1 + 0.09 M2'``."""
        out = []
        for r, j in enumerate(self.independent):
            terms = [self.names[j]]
            for c, k in enumerate(self.dependent):
                coef = self.K[r, c]
                if abs(coef) > tol:
                    terms.append(("+ " if coef > 0 else "- ")
                                 + ("" if abs(abs(coef) - 1) < tol else f"{abs(coef):.4g} ")
                                 + self.names[k])
            out.append(" ".join(terms))
        return out

    def without_effect(self) -> list[str]:
        """Standard parameters with no effect on any torque (a zero column of ``K``)."""
        return [self.names[k] for c, k in enumerate(self.dependent) if not np.any(self.K[:, c])]


def independent_columns(W: np.ndarray, tol: float = RANK_TOL) -> tuple[np.ndarray, np.ndarray]:
    """``(independent, dependent)`` column indices of ``W`` (QR without pivoting, unit-norm
    columns; a zero column, or one below ``ZERO_COLUMN`` of the largest, is dependent)."""
    norms = np.linalg.norm(W, axis=0)
    live = norms > ZERO_COLUMN * max(norms.max(), 1e-300)  # round-off (a base rotated by 1e-13) is no effect
    Wn = np.where(live, W / np.where(live, norms, 1.0), 0.0)
    Rd = np.abs(np.diag(np.linalg.qr(Wn, mode="r")))
    ok = (Rd > tol * max(Rd.max(), 1e-300)) & live
    return np.flatnonzero(ok), np.flatnonzero(~ok)


def random_states(model: MdhModel, count: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """``count`` random ``q, qd, qdd`` (positions inside finite limits, else +-pi)."""
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = lo + rng.random((count, model.dof)) * (hi - lo)
    return q, rng.normal(size=(count, model.dof)), rng.normal(size=(count, model.dof))


def base_parameters(model: MdhModel, samples: int | None = None, seed: int = 0) -> BaseParameters:
    """The base parameters of ``model``'s kinematics (its masses are not used) from the
    regressor at random states (``samples``: default ``max(60, 20 n)``)."""
    n = model.dof
    q, qd, qdd = random_states(model, samples or max(60, 20 * n), seed)
    W = regressor(model, q, qd, qdd).reshape(-1, NP * n)
    ind, dep = independent_columns(W)
    K = np.linalg.lstsq(W[:, ind], W[:, dep], rcond=None)[0] if dep.size else np.zeros((ind.size, 0))
    K[np.abs(K) < 1e-11] = 0.0  # round-off of exact structural zeros
    return BaseParameters(ind, dep, K, tuple(parameter_names(n)))
