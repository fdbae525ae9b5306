"""Physically consistent identification as a semidefinite program (Wensing, Kim, Slotine 2017,
"Linear matrix inequalities for physically consistent inertial parameter identification: a
statistical perspective on the mass distribution", RA-L 3(1), §IV: least squares subject to the
LMIs ``J_i >= 0`` of eq. (8)), solved by cvxpy with the Clarabel interior-point solver.

The data enter through the weighted least-squares fit: with ``W_w = Q R`` the weighted base
regressor and ``beta`` its solution, ``||W_w B phi - tau_w||^2 = ||R (B phi - beta)||^2 + const``,
so the constrained weighted least squares over the standard parameters ``phi`` is

    stage 1:  phi_1 = argmin ||R (B phi - beta)|| + MU ||x - x_prior||
                        s.t.  X_i >= MARGIN_1 I,  d >= 0

(``R`` normalised by ``||R beta||``: a relative weighted misfit).  ``beta_1 = B phi_1`` is the
best physical fit (unique: the misfit is a Euclidean norm of ``B phi``); the small second term
only keeps the solver's iterates bounded (without it they drift along the null space of ``B``,
which no data sees, to norms of 1e4 on the SO-100 arm and stage 2 then fails), and moves the fit by at most
``MU`` times the distance from the prior (relative).  The rest of ``phi``, the null space of
``B``, is taken nearest the prior:

    stage 2:  min ||x - x_prior||^2 = sum_i ||X_i - X_i,prior||_F^2 + ||d - d_prior||^2
              s.t.  B phi = beta_1,  X_i >= MARGIN_2 I,  d >= 0

in the coordinates of ``consistency._coordinates`` (``X_i = D J_i D / m_i``, each link's
pseudo-inertia scaled by its prior's mass and radius of gyration; ``d`` the drive terms over
their scales), the same metric as the alternating projections that back this up.  Both stages
are convex (a second-order cone and 4x4 PSD cones), so the solution is the global optimum.
``phi_1`` lies inside stage 2's cones by ``MARGIN_1 - MARGIN_2`` (far above the solver's 1e-8
accuracy), so stage 2 is strictly feasible; a misfit bound ``<= r*`` in place of the equality
would leave it (almost) no interior (Clarabel stops on "insufficient progress").  Norms, not
their squares, are minimised: the solver's absolute tolerance on a squared misfit would allow a
misfit of 1e-4.
"""
from __future__ import annotations

import warnings

import numpy as np

from rbd_ros.identification.regressor import NP

#: least eigenvalue of each scaled pseudo-inertia ``X_i`` in stage 1 and stage 2 (unitless: the
#: prior link's mass times its squared radius of gyration is 1)
MARGIN_1, MARGIN_2 = 1e-6, 1e-9
#: stage 1's weight on the distance from the prior (module docstring)
MU = 1e-7


class SolverUnavailable(RuntimeError):
    """cvxpy or its Clarabel solver is not installed, or the solver did not converge."""


def _import_cvxpy():
    try:
        import cvxpy as cp
    except ImportError as exc:
        raise SolverUnavailable(f"cvxpy is not installed ({exc}); pip install cvxpy clarabel") from exc
    if "CLARABEL" not in cp.installed_solvers():
        raise SolverUnavailable("cvxpy has no Clarabel solver; pip install clarabel")
    return cp


def _solve(cp, problem) -> None:
    try:
        with warnings.catch_warnings():  # "may be inaccurate": the status says it, checked below
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver="CLARABEL")
    except cp.error.SolverError as exc:
        raise SolverUnavailable(f"Clarabel failed: {exc}") from exc
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise SolverUnavailable(f"Clarabel: the semidefinite program is {problem.status}")


def _selection(n: int) -> np.ndarray:
    """``S`` (13 n, 19 n): ``x = S [vec X_1, ..., vec X_n, d]``, each link's block of ``x`` the
    weighted upper triangle of ``X_i`` (``consistency._coordinates``), then its drive terms."""
    iu = np.triu_indices(4)
    S = np.zeros((NP * n, 19 * n))
    for i in range(n):
        for k, (r, c) in enumerate(zip(*iu)):
            S[NP * i + k, 16 * i + 4 * c + r] = 1.0 if r == c else np.sqrt(2.0)  # column-major vec
        for k in range(3):
            S[NP * i + 10 + k, 16 * n + 3 * i + k] = 1.0
    return S


def constrained_wls(B: np.ndarray, beta: np.ndarray, R: np.ndarray, T: np.ndarray,
                    x_prior: np.ndarray) -> np.ndarray:
    """``phi`` of the two-stage program of the module docstring.  ``B`` (b, 13 n): ``beta = B
    phi``; ``R`` (b, b): the weighted regressor's triangular factor (any matrix whose
    ``||R (beta' - beta)||`` is the data misfit); ``T`` (13 n, 13 n): ``x = T phi`` the scaled
    coordinates, ``x_prior`` the prior's.  Raises ``SolverUnavailable``."""
    cp = _import_cvxpy()
    n = B.shape[1] // NP
    Tinv = np.linalg.inv(T)
    Rn = R / max(np.linalg.norm(R @ beta), 1e-300)  # relative misfit
    X = [cp.Variable((4, 4), symmetric=True) for _ in range(n)]
    d = cp.Variable(3 * n)
    x = _selection(n) @ cp.hstack([*(cp.vec(Xi, order="F") for Xi in X), d])  # x = T phi
    C = B @ Tinv  # beta = C x
    cones = [d >= 0.0]
    stage1 = cp.Problem(cp.Minimize(cp.norm(Rn @ C @ x - Rn @ beta) + MU * cp.norm(x - x_prior)),
                        [*cones, *(Xi >> MARGIN_1 * np.eye(4) for Xi in X)])
    _solve(cp, stage1)
    beta1 = C @ np.asarray(x.value, dtype=float)
    stage2 = cp.Problem(cp.Minimize(cp.sum_squares(x - x_prior)),
                        [*cones, *(Xi >> MARGIN_2 * np.eye(4) for Xi in X), C @ x == beta1])
    _solve(cp, stage2)
    return Tinv @ np.asarray(x.value, dtype=float)
