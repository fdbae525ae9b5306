"""Derivatives of a differential-drive base's dynamics (``Robot.inverse_dynamics_derivatives`` and
``Robot.forward_dynamics_derivatives`` with ``base_type="diff_drive"``), from the planar root's
(``algorithm.root_derivatives``, CM18) by constant projections.

In base rates the rolling constraint is linear with constant coefficients: ``v_y = 0`` at every
instant, so ``a_y = v-dot_y = 0`` too (001 (64) in the base frame).  With ``S`` the ``nv x ns``
selection of the independent speeds ``s = [v_x, omega, qd]`` (``v = S s``, ``ns = nv - 1``), the
wheel map ``B`` (``nv x nu``: ``F_x = (tau_L + tau_R) / r``, ``M_z = sep (tau_R - tau_L) / (2 r)``,
the joints' torques themselves; ``diff_drive.Wheels``) and the wheels' spin inertia ``M_w`` on
``(v_x, omega)``, the planar equations with the lateral ground force ``lam`` (000 (39)-(46)):

    (M(q) + M_w) S s-dot + h(q, S s) = B u + e_y lam.

``S^T`` removes ``lam`` (``S^T e_y = 0``): ``M_s s-dot = S^T (B u - h)``, ``M_s = S^T (M + M_w) S``.
With ``tau(q, v, a) = M a + h`` the planar inverse dynamics and its derivatives ``dtau/dq``,
``dtau/dv`` (``M_w`` is constant, so it adds only to ``dtau/da``):

* inverse dynamics ``u = T (M + M_w) S s-dot + T h``, ``T`` (``nu x nv``) the wheel torques of
  ``(F_x, M_z)`` (``Wheels.torques``) and the joints' rows: ``du/dq = T dtau/dq``,
  ``du/ds = T dtau/dv S``, ``du/ds-dot = T (M + M_w) S``;
* forward dynamics ``s-dot``: ``ds-dot/dq = -M_s^{-1} S^T dtau/dq``,
  ``ds-dot/ds = -M_s^{-1} S^T dtau/dv S``, ``ds-dot/du = M_s^{-1} S^T B``, each at the state's
  own ``s-dot``.

``q`` is perturbed in the base's tangent space (``T exp(dq^)`` of the base pose, as the planar
base's and Pinocchio's), so the ``q`` derivatives have ``nv`` columns; the rates are the
independent speeds (``ns`` columns: ``v_y`` is not a freedom of the base).  The lateral force
``lam`` is not differentiated here.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def projections(robot: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(S, B, T, M_w)`` of ``robot``'s diff-drive base (module docstring), made once per robot
    (read-only: its model is immutable)."""
    made = robot.__dict__.get("_diff_drive_projections")
    if made is None:
        made = robot._diff_drive_projections = _projections(robot)
    return made


def _projections(robot: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    nv, n = robot.nv, robot.dof
    w = robot.wheels
    r, sep = float(w.radius), float(w.separation)
    S = np.delete(np.eye(nv), 1, axis=1)
    B = np.zeros((nv, 2 + n))
    B[0, :2] = 1.0 / r
    B[2, 0], B[2, 1] = -0.5 * sep / r, 0.5 * sep / r
    B[3:, 2:] = np.eye(n)
    T = np.zeros((2 + n, nv))
    T[0, 0], T[0, 2] = 0.5 * r, -r / sep  # tau_L = r (F_x / 2 - M_z / sep)
    T[1, 0], T[1, 2] = 0.5 * r, r / sep  # tau_R = r (F_x / 2 + M_z / sep)
    T[2:, 3:] = np.eye(n)
    m_v, I_w = w.added_inertia()
    Mw = np.zeros((nv, nv))
    Mw[0, 0], Mw[2, 2] = m_v, I_w
    for x in (S, B, T, Mw):
        x.flags.writeable = False
    return S, B, T, Mw


def inverse(robot: Any, dq: np.ndarray, dv: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(du/dq, du/ds, du/ds-dot)`` from the planar ``dtau/dq``, ``dtau/dv``, ``M`` at the
    state (module docstring)."""
    S, _, T, Mw = projections(robot)
    return T @ dq, T @ dv @ S, T @ (M + Mw) @ S


def forward(robot: Any, dq: np.ndarray, dv: np.ndarray, M: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ds-dot/dq, ds-dot/ds, ds-dot/du)`` from the planar ``dtau/dq``, ``dtau/dv``, ``M`` at
    the state and its constrained acceleration (module docstring); ``np.linalg.LinAlgError``
    when ``M_s`` is not positive definite."""
    S, B, _, Mw = projections(robot)
    L = np.linalg.cholesky(S.T @ (M + Mw) @ S)
    Linv = np.linalg.solve(L, np.eye(L.shape[0]))
    Ms_inv = Linv.T @ Linv  # M_s^{-1} = L^{-T} L^{-1}
    return -Ms_inv @ (S.T @ dq), -Ms_inv @ (S.T @ dv @ S), Ms_inv @ (S.T @ B)
