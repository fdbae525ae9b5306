"""Weighted least squares of the base parameters, their standard deviations, a physical model,
and validation on held-out samples.

Gautier's weighting (Gautier and Poignet 2001, "Extended Kalman filtering and weighted least
squares dynamic identification of robot", Control Eng. Practice 9; Khalil-Dombre §12.4):
ordinary least squares first, then each joint's equations divided by that joint's residual
standard deviation ``sigma_j = ||rho_j|| / sqrt(N_j - b)``, and the weighted problem solved.
With unit-variance weighted residuals scaled by ``s^2 = ||rho_w||^2 / (r - b)``, the estimate's
covariance is ``s^2 (W_w^T W_w)^-1`` and the standard deviations its diagonal's roots.  These
assume independent rows: after the parallel low-pass (``window``) neighbouring rows are
correlated, so the standard deviations are then optimistic (by up to about the square root of
the kernel's width).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from rbd_ros.identification.base import BaseParameters, base_parameters, independent_columns
from rbd_ros.identification.consistency import IdentificationWarning, consistent_parameters, violations
from rbd_ros.identification.regressor import model_with_parameters, regressor, standard_parameters
from rbd_ros.model import MdhModel

#: a base parameter this badly conditioned in the recording (``|R_jj| / max``, unit columns) is
#: not identifiable from it
EXCITATION_TOL = 1e-6
#: relative standard deviation (%) above which a base parameter is reported as poorly identified
POOR_PERCENT = 50.0


class NotEnoughExcitation(ValueError):
    """The recording does not determine some base parameters (the message names them)."""


@dataclass
class Identification:
    """What ``identify`` found (``model`` is the identified robot)."""

    model: MdhModel
    prior: MdhModel
    base: BaseParameters
    beta: np.ndarray  # identified base parameters
    beta_std: np.ndarray  # their standard deviations
    beta_prior: np.ndarray  # the prior model's
    sigma: np.ndarray  # per joint residual std (N m) of the OLS fit
    condition: float  # of the weighted base regressor (unit-norm columns)
    samples: int
    consistency: str  # how the physical model was found (consistency.consistent_parameters)
    gap: float  # max |B phi - beta| / max |beta| of the physical model
    validation: dict = field(default_factory=dict)

    @property
    def relative_std(self) -> np.ndarray:
        """Standard deviations in % of ``|beta|`` (inf where beta is 0)."""
        with np.errstate(divide="ignore"):
            return 100.0 * self.beta_std / np.abs(self.beta)

    def table(self) -> str:
        """One line per base parameter: identified, std %, prior."""
        lines = [f"{'base parameter':<44} {'identified':>12} {'std %':>8} {'prior':>12}"]
        for lab, b, s, p in zip(self.base.labels(), self.beta, self.relative_std, self.beta_prior):
            lines.append(f"{lab[:44]:<44} {b:12.6g} {s:8.3g} {p:12.6g}")
        return "\n".join(lines)

    def summary(self) -> dict:
        return {"samples": self.samples, "base_parameters": self.base.count,
                "condition_number": self.condition, "consistency": self.consistency,
                "consistency_gap": self.gap,
                "residual_std": self.sigma.tolist(), "validation": self.validation,
                "parameters": [{"name": lab, "identified": float(b), "std": float(s), "prior": float(p)}
                               for lab, b, s, p in zip(self.base.labels(), self.beta, self.beta_std,
                                                       self.beta_prior)]}


def lowpass(x: np.ndarray, window: int) -> np.ndarray:
    """``x`` (N, ...) filtered along axis 0 by three moving averages of ``window // 3`` samples in
    cascade (a quadratic B-spline kernel, ``3 (window // 3) - 2`` samples wide: side lobes below
    -38 dB, so the blue noise of differentiated velocities is removed, unlike a Savitzky-Golay
    smoother's); only the rows the kernel covers fully are returned (``N - width + 1``), the
    rows of ``valid``.  ``window < 3``: ``x`` itself."""
    L = window // 3
    if L < 2:
        return x
    out = np.asarray(x, dtype=float)
    for _ in range(3):
        c = np.cumsum(out, axis=0)
        c = np.concatenate([np.zeros((1, *out.shape[1:])), c])
        out = (c[L:] - c[:-L]) / L  # moving average of L samples
    return out


def valid(mask: np.ndarray, window: int) -> np.ndarray:
    """The rows of ``lowpass(x, window)`` whose whole kernel lies on rows where ``mask``."""
    L = window // 3
    if L < 2:
        return mask
    return lowpass(mask.astype(float), window) > 1.0 - 1e-9


def _rows(tau: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Boolean (N, n) of the equations used (finite torque, and ``mask``)."""
    use = np.isfinite(tau)
    return use if mask is None else use & mask


def check_excitation(Wb: np.ndarray, base: BaseParameters) -> float:
    """Raise ``NotEnoughExcitation`` naming the base parameters ``Wb`` (rows: equations, columns:
    base parameters) does not determine; else return its condition number (unit columns)."""
    ind, dep = independent_columns(Wb, EXCITATION_TOL)
    labels = base.labels()
    if dep.size:
        names = ", ".join(labels[k] for k in dep)
        raise NotEnoughExcitation(
            f"the recording does not excite {dep.size} of the {base.count} base parameters, which "
            f"it cannot identify: {names}; record a richer motion (rbd-ros bringup --tour excitation)")
    Wn = Wb / np.linalg.norm(Wb, axis=0)
    s = np.linalg.svd(Wn, compute_uv=False)
    return float(s[0] / s[-1])


def identify(prior: MdhModel, q, qd, qdd, tau, mask=None, base: BaseParameters | None = None,
             held_out: tuple | None = None, window: int = 1) -> Identification:
    """Identify ``prior``'s arm from samples ``q, qd, qdd, tau`` (N, n): base parameters by
    weighted least squares, a physical model reproducing them (``consistency``), and, with
    ``held_out = (q, qd, qdd, tau)``, the torque prediction error of the prior and the
    identified models on those samples (``validate``).  ``mask`` (N, n) bool: the equations to
    use (e.g. leave out near-zero velocities, where Coulomb friction is not ``FC sign(qd)``).
    ``window``: with noisy samples, the regressor's columns and the torques are low-passed by the
    same low-pass filter (``lowpass``): Gautier's parallel filtering.  ``tau_k = Y_k beta`` for
    every sample, so ``F tau = (F Y) beta`` for any linear filter ``F``, exactly; smoothing the
    states first would not be (it blurs the Coulomb column's sign step, for one).  An equation is
    used only when every sample under the kernel is in ``mask``."""
    q, qd, qdd, tau = (np.asarray(x, dtype=float) for x in (q, qd, qdd, tau))
    N, n = q.shape
    if n != prior.dof or tau.shape != q.shape:
        raise ValueError(f"identify: q, qd, qdd and tau must be (N, {prior.dof}) for "
                         f"'{prior.name}', got q {q.shape}, tau {tau.shape}")
    base = base or base_parameters(prior)
    Y = regressor(prior, q, qd, qdd)[:, :, base.independent]  # (N, n, b): tau = Y beta
    use = valid(_rows(tau, mask), window)
    Y, tau = lowpass(Y, window), lowpass(np.nan_to_num(tau), window)  # parallel filtering
    N = len(tau)
    Wb, t = Y[use], tau[use]
    joint = np.broadcast_to(np.arange(n), (N, n))[use]
    if Wb.shape[0] <= base.count:
        raise NotEnoughExcitation(f"identify: {Wb.shape[0]} equations for {base.count} base "
                                  f"parameters; record longer")
    check_excitation(Wb, base)
    beta0 = np.linalg.lstsq(Wb, t, rcond=None)[0]  # OLS
    rho = t - Wb @ beta0
    sigma = np.zeros(n)
    for j in range(n):
        r = rho[joint == j]
        dof = max(r.size - base.count / n, 1.0)
        sigma[j] = np.sqrt(r @ r / dof) if r.size else np.nan
    floor = 1e-9 * max(np.sqrt(np.mean(t**2)), 1e-12)  # noise-free data: no zero division
    wgt = 1.0 / np.maximum(sigma, floor)[joint]
    Ww, tw = Wb * wgt[:, None], t * wgt
    beta, *_ = np.linalg.lstsq(Ww, tw, rcond=None)  # WLS
    rw = tw - Ww @ beta
    s2 = (rw @ rw) / max(Ww.shape[0] - base.count, 1)
    Rq = np.linalg.qr(Ww, mode="r")
    Rinv = np.linalg.inv(Rq)
    std = np.sqrt(s2 * np.einsum("ij,ij->i", Rinv, Rinv))  # diag((Ww^T Ww)^-1) = row norms of R^-1
    cond = check_excitation(Ww, base)
    phi_prior = standard_parameters(prior)
    phi, how, gap = consistent_parameters(base.matrix(), beta, phi_prior, metric=Rq)
    bad = violations(phi)
    if bad:
        raise RuntimeError(f"identify: no physical model found: {'; '.join(bad)}")
    model = model_with_parameters(prior, phi).replace(name=f"{prior.name}_identified")
    out = Identification(model, prior, base, beta, std, base.beta(phi_prior), sigma, cond, N, how, gap)
    poor = [lab for lab, rel in zip(base.labels(), out.relative_std) if rel > POOR_PERCENT]
    if poor:
        warnings.warn(f"identify: {len(poor)} base parameters have a standard deviation above "
                      f"{POOR_PERCENT:g} % of their value (poorly excited or near zero): "
                      + ", ".join(poor), IdentificationWarning, stacklevel=2)
    if held_out is not None:
        out.validation = validate(prior, model, *held_out, window=window)
    return out


def validate(prior: MdhModel, identified: MdhModel, q, qd, qdd, tau, window: int = 1) -> dict:
    """Torque prediction errors on samples: per joint and overall RMS of ``tau - Y phi`` for
    both models (filtered as ``identify``'s ``window``), and as % of the measured RMS torque."""
    q, qd, qdd, tau = (np.asarray(x, dtype=float) for x in (q, qd, qdd, tau))
    out: dict = {"samples": int(q.shape[0]),
                 "rms_torque": np.sqrt(np.nanmean(tau**2, axis=0)).tolist()}
    rms_all = float(np.sqrt(np.nanmean(tau**2)))
    use = valid(np.isfinite(tau), window)
    Y = lowpass(regressor(prior, q, qd, qdd), window)
    tau = np.where(use, lowpass(np.nan_to_num(tau), window), np.nan)
    out["rms_torque"] = np.sqrt(np.nanmean(tau**2, axis=0)).tolist()
    rms_all = float(np.sqrt(np.nanmean(tau**2)))
    for key, m in (("prior", prior), ("identified", identified)):
        err = tau - Y @ standard_parameters(m)
        out[f"{key}_rms_error"] = np.sqrt(np.nanmean(err**2, axis=0)).tolist()
        out[f"{key}_error_percent"] = 100.0 * float(np.sqrt(np.nanmean(err**2))) / rms_all
    return out
