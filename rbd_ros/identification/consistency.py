"""Physically consistent standard parameters that reproduce identified base parameters.

A link's ten inertial parameters describe a body iff its pseudo-inertia

    J = [[Sigma, h], [h^T, m]],   Sigma = tr(I_o)/2 E - I_o     (Wensing, Kim, Slotine 2017,
                                                                 RA-L 3(1), eq. (6)-(8))

is positive semidefinite (then ``m >= 0``, the inertia about the centre of mass is PSD and its
principal moments satisfy the triangle inequality); armature and friction must be >= 0.

``consistent_parameters`` first takes the standard parameters nearest the prior (the URDF's,
in a per-parameter scaled norm) that give the identified ``beta`` exactly (the null space of
``B`` is not seen by the data, so the prior fills it).  If every link is then physical, that is
the answer.  Otherwise it solves Wensing et al.'s constrained weighted least squares, the LMIs
``J_i >= 0`` by a semidefinite program (``convex``: cvxpy and Clarabel): the physical model
whose base parameters fit the data best in the WLS metric, the rest nearest the prior.  Without
cvxpy (or if the solver fails) a warning says so and alternating projections stand in: between
the affine set ``B phi = beta`` and the convex set of physical parameters (each ``J`` onto the
PSD cone by clamping its eigenvalues, the drive terms onto ``>= 0``), in coordinates where each
link's ``J`` is scaled by its prior's mass and radius of gyration: both sets convex, so the
iterates approach a point of both when they meet (noise-free data of a real body) and
otherwise the physical point nearest the data's in that parameter metric (not the data's).
The result is always physical; ``gap`` says how far its base parameters are from ``beta``.
"""
from __future__ import annotations

import warnings

import numpy as np

from rbd_ros.identification.convex import SolverUnavailable, constrained_wls
from rbd_ros.identification.regressor import NP, inertia_about_origin

#: relative eigenvalue tolerance of the pseudo-inertia test
PSD_TOL = 1e-9
#: least scale of a drive term in the projections' metric (N m, N m s/rad, kg m^2)
DRIVE_SCALE = 1e-3


class IdentificationWarning(UserWarning):
    """An identified quantity to be trusted less (the message says which and why)."""


def pseudo_inertia(block: np.ndarray) -> np.ndarray:
    """``J`` (4x4) of one joint's block of ``phi`` (module docstring)."""
    Io = inertia_about_origin(block)
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(Io) * np.eye(3) - Io
    J[:3, 3] = J[3, :3] = block[6:9]
    J[3, 3] = block[9]
    return J


def physical_checks(model) -> list[dict]:  # an MdhModel
    """Per link of ``model``, each condition of a physical body checked and named: ``mass`` > 0,
    the pseudo-inertia ``J`` positive semidefinite (``psd_margin``: its least eigenvalue over its
    largest), and the **triangle inequalities** of the principal moments about the centre of
    mass, ``I_a <= I_b + I_c`` for each moment (``triangle_margin``: the least of ``I_b + I_c -
    I_a`` over the largest moment).  ``J >= 0`` implies the other two (module docstring); they are
    checked on their own so that a report names which one fails."""
    out = []
    for i, name in enumerate(model.joint_names):
        m, c, I = float(model.mass[i]), np.asarray(model.com[i], float), np.asarray(model.inertia[i], float)
        moments = np.linalg.eigvalsh(0.5 * (I + I.T))
        top = max(float(np.abs(moments).max()), 1e-300)
        triangle = min(moments[(k + 1) % 3] + moments[(k + 2) % 3] - moments[k] for k in range(3)) / top
        Io = I + m * ((c @ c) * np.eye(3) - np.outer(c, c))
        block = np.array([Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2], *(m * c), m])
        ev = np.linalg.eigvalsh(pseudo_inertia(block))
        psd = float(ev[0] / max(abs(ev[-1]), 1e-300))
        out.append({"joint": name, "mass": m, "psd_margin": psd, "triangle_margin": float(triangle),
                    "physical": bool(m > 0 and psd >= -PSD_TOL and triangle >= -PSD_TOL
                                     and moments[0] >= -PSD_TOL * top)})
    return out


def from_pseudo_inertia(J: np.ndarray) -> np.ndarray:
    """The ten inertial parameters of ``J`` (inverse of ``pseudo_inertia``)."""
    S = J[:3, :3]
    Io = np.trace(S) * np.eye(3) - S
    return np.array([Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2], *J[:3, 3], J[3, 3]])


def violations(phi: np.ndarray, names: list[str] | None = None) -> list[str]:
    """What makes ``phi`` unphysical, one entry per link or drive term ([] = physical)."""
    P = np.asarray(phi, dtype=float).reshape(-1, NP)
    out = []
    for i, b in enumerate(P):
        ev = np.linalg.eigvalsh(pseudo_inertia(b))
        if ev[0] < -PSD_TOL * max(abs(ev[-1]), 1e-300) or not b[9] > 0.0:
            out.append(f"link {i + 1}: pseudo-inertia not positive semidefinite "
                       f"(least eigenvalue {ev[0]:.3g}, mass {b[9]:.4g})")
        for k, label in ((10, "Ia"), (11, "FV"), (12, "FC")):
            if b[k] < 0.0:
                out.append(f"{label}{i + 1} = {b[k]:.4g} < 0")
    return out


def parameter_scale(phi_prior: np.ndarray) -> np.ndarray:
    """A size per standard parameter for the prior's norm: its own magnitude, at least 1e-3 of
    the largest of its kind over the links (and 1e-9)."""
    P = np.abs(np.asarray(phi_prior, dtype=float).reshape(-1, NP))
    floor = np.maximum(1e-3 * P.max(axis=0), 1e-9)
    return np.maximum(P, floor).reshape(-1)


def nearest_exact(B: np.ndarray, beta: np.ndarray, phi_prior: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``argmin ||(phi - phi_prior) / scale||`` subject to ``B phi = beta``."""
    Bs = B * scale
    step = np.linalg.lstsq(Bs, beta - B @ phi_prior, rcond=None)[0]
    return phi_prior + scale * step


def _link_scales(phi_prior: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per link a mass and a length (radius of gyration) of the prior, to make ``J`` unitless."""
    P = np.asarray(phi_prior, dtype=float).reshape(-1, NP)
    m = np.maximum(P[:, 9], 1e-3 * max(P[:, 9].max(), 1e-9))
    tr = np.array([np.trace(pseudo_inertia(b)[:3, :3]) for b in P])
    length = np.sqrt(np.maximum(tr / m, 1e-6))
    return m, np.maximum(length, 1e-3 * length.max())


_TRIU = np.triu_indices(4)
_WEIGHT = np.where(_TRIU[0] == _TRIU[1], 1.0, np.sqrt(2.0))  # Frobenius norm of the full matrix


def _coordinates(phi_prior: np.ndarray, drive_scale: np.ndarray) -> np.ndarray:
    """``T`` (13 n x 13 n): ``x = T phi`` holds each link's ``D J D / m`` (``D = diag(1/l, 1/l,
    1/l, 1)``, ``_link_scales``) as its 10 weighted upper-triangle entries (so ``|x|`` is the
    Frobenius norm) and the drive terms divided by ``drive_scale``."""
    n = len(phi_prior) // NP
    m, length = _link_scales(phi_prior)
    T = np.zeros((NP * n, NP * n))
    for i in range(n):
        D = np.diag([1.0 / length[i]] * 3 + [1.0])
        for k in range(10):
            e = np.zeros(NP)
            e[k] = 1.0
            Jt = D @ pseudo_inertia(e) @ D / m[i]
            T[NP * i:NP * i + 10, NP * i + k] = _WEIGHT * Jt[_TRIU]
        for k in range(10, NP):
            T[NP * i + k, NP * i + k] = 1.0 / drive_scale[NP * i + k]
    return T


def _project_physical(x: np.ndarray, margin: float) -> np.ndarray:
    """Nearest point of ``x`` (``_coordinates``) with every scaled ``J >= margin I`` and the
    drive terms >= 0 (eigenvalues clamped; Frobenius-nearest)."""
    out = x.copy()
    for i in range(len(x) // NP):
        v = x[NP * i:NP * i + 10] / _WEIGHT
        J = np.zeros((4, 4))
        J[_TRIU] = v
        J = J + np.triu(J, 1).T
        w, V = np.linalg.eigh(J)
        if w[0] < margin:
            J = (V * np.maximum(w, margin)) @ V.T
            out[NP * i:NP * i + 10] = _WEIGHT * J[_TRIU]
        out[NP * i + 10:NP * i + NP] = np.maximum(x[NP * i + 10:NP * i + NP], 0.0)
    return out


def alternating_projections(B: np.ndarray, beta: np.ndarray, phi_start: np.ndarray, phi_prior: np.ndarray,
                            iterations: int = 3000, margin: float = 1e-9) -> np.ndarray:
    """A physical ``phi`` (every scaled pseudo-inertia ``>= margin I``) with ``B phi`` at or
    nearest ``beta``: projections alternately onto the two convex sets (von Neumann; Boyd and
    Dattorro, "Alternating projections", 2003) in the scaled coordinates of ``_coordinates``,
    the last one onto the physical set.  Where the sets meet it converges to a common point,
    else to the physical point nearest the affine set."""
    T = scaled_coordinates(phi_prior)
    Tinv = np.linalg.inv(T)
    C = B @ Tinv
    Cp = np.linalg.pinv(C)
    x = T @ phi_start
    for _ in range(iterations):
        y = _project_physical(x, margin)
        if np.linalg.norm(y - x) <= 1e-13 * max(float(np.linalg.norm(x)), 1.0):
            break
        x = y - Cp @ (C @ y - beta)  # onto B phi = beta
    return Tinv @ _project_physical(x, margin)


def scaled_coordinates(phi_prior: np.ndarray) -> np.ndarray:
    """``T`` of ``_coordinates`` with the drive terms over their prior's size (at least
    ``DRIVE_SCALE``): the metric of the projections and of ``convex``'s stage 2."""
    return _coordinates(phi_prior, np.maximum(parameter_scale(phi_prior), DRIVE_SCALE))


def _physical_polish(phi: np.ndarray, phi_prior: np.ndarray, margin: float = 1e-9) -> np.ndarray:
    """``phi`` with any pseudo-inertia the solver left a round-off below ``margin`` (scaled)
    clamped onto it (``_project_physical``); a physical ``phi`` is returned unchanged."""
    T = scaled_coordinates(phi_prior)
    x = T @ phi
    y = _project_physical(x, margin)
    return phi if np.array_equal(x, y) else np.linalg.solve(T, y)


def consistent_parameters(B: np.ndarray, beta: np.ndarray, phi_prior: np.ndarray,
                          metric: np.ndarray | None = None) -> tuple[np.ndarray, str, float]:
    """Physical ``phi`` with ``B phi`` equal or nearest to ``beta``, near ``phi_prior`` (module
    docstring).  ``metric`` (b, b): ``R`` with ``||R (beta' - beta)||`` the data misfit of base
    parameters ``beta'`` (the weighted regressor's triangular factor; default: the identity).
    Returns ``(phi, how, gap)``: ``how`` is 'prior-nearest' (the prior's nearest exact solution
    was physical), 'sdp' (constrained WLS by ``convex``), 'projected' (alternating projections,
    the fallback); ``gap`` is ``max |B phi - beta| / max |beta|`` (0 up to round-off when
    ``beta`` is a body's)."""
    scale = parameter_scale(phi_prior)
    phi = nearest_exact(B, beta, phi_prior, scale)
    how = "prior-nearest"
    if violations(phi):
        R = np.eye(len(beta)) if metric is None else np.asarray(metric, dtype=float)
        T = scaled_coordinates(phi_prior)
        try:
            phi, how = _physical_polish(constrained_wls(B, beta, R, T, T @ phi_prior), phi_prior), "sdp"
        except SolverUnavailable as exc:
            warnings.warn(f"physical consistency: {exc}; using alternating projections instead (the "
                          f"physical model nearest the data in a parameter metric, not the WLS one)",
                          IdentificationWarning, stacklevel=2)
            phi, how = alternating_projections(B, beta, phi, phi_prior), "projected"
    gap = float(np.abs(B @ phi - beta).max() / max(np.abs(beta).max(), 1e-300))
    return phi, how, gap
