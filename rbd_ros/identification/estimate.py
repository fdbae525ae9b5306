"""Weighted least squares of the base parameters, their standard deviations, a physical model,
and validation on held-out samples.

Gautier's weighting (Gautier and Poignet 2001, "Extended Kalman filtering and weighted least
squares dynamic identification of robot", Control Eng. Practice 9; Khalil-Dombre §12.4):
ordinary least squares first, then each joint's equations divided by that joint's residual
standard deviation ``sigma_j = ||rho_j|| / sqrt(N_j - b)``, and the weighted problem solved.
With unit-variance weighted residuals scaled by ``s^2 = ||rho_w||^2 / (r - b)``, the estimate's
covariance is ``s^2 (W_w^T W_w)^-1`` and the standard deviations its diagonal's roots, for
independent rows.  After the parallel low-pass (``window``) neighbouring rows are correlated
(the kernel spreads each sample's noise over its width), and that formula was 4-9x optimistic
(finger_edu, 5 % torque noise, 8 noise draws: the spread of the estimates against the formula's
std, median 6.4x); with ``window > 1`` the covariance is the sandwich of white noise through the
filter instead (``filtered_std``), ``beta - beta_true = G^T F e`` with ``G = W_w (W_w^T
W_w)^-1``: ``sum_j s_j^2 (F^T G_j)^T (F^T G_j)``, each joint's raw noise variance ``s_j^2``
from its filtered residuals over the kernel's squared norm.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
import yaml

from rbd_ros.identification.base import BaseParameters, base_parameters, independent_columns
from rbd_ros.identification.consistency import (
    IdentificationWarning,
    consistent_parameters,
    physical_checks,
    violations,
)
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
                "consistency_gap": self.gap, "physical_checks": physical_checks(self.model),
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


#: ``identify``'s held-out samples: ``(q, qd, qdd, tau)``, or with ``qd_viscous`` fifth
HeldOut = (tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
           | tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray])


def identify(prior: MdhModel, q, qd, qdd, tau, mask=None, base: BaseParameters | None = None,
             held_out: HeldOut | None = None, window: int = 1, qd_viscous=None) -> Identification:
    """Identify ``prior``'s arm from samples ``q, qd, qdd, tau`` (N, n): base parameters by
    weighted least squares, a physical model reproducing them (``consistency``), and, with
    ``held_out = (q, qd, qdd, tau)``, the torque prediction error of the prior and the
    identified models on those samples (``validate``).  ``mask`` (N, n) bool: the equations to
    use (e.g. leave out near-zero velocities, where Coulomb friction is not ``FC sign(qd)``).
    ``window``: with noisy samples, the regressor's columns and the torques are low-passed by the
    same low-pass filter (``lowpass``): Gautier's parallel filtering.  ``tau_k = Y_k beta`` for
    every sample, so ``F tau = (F Y) beta`` for any linear filter ``F``, exactly; smoothing the
    states first would not be (it blurs the Coulomb column's sign step, for one).  An equation is
    used only when every sample under the kernel is in ``mask``.  ``qd_viscous``: the viscous
    column's velocity (``recording.Samples.qd_step``, a step's mean velocity; None: ``qd``);
    ``held_out`` may carry one as a fifth array."""
    q, qd, qdd, tau = (np.asarray(x, dtype=float) for x in (q, qd, qdd, tau))
    N, n = q.shape
    if n != prior.dof or tau.shape != q.shape:
        raise ValueError(f"identify: q, qd, qdd and tau must be (N, {prior.dof}) for "
                         f"'{prior.name}', got q {q.shape}, tau {tau.shape}")
    base = base or base_parameters(prior)
    Y = regressor(prior, q, qd, qdd, qd_viscous)[:, :, base.independent]  # (N, n, b): tau = Y beta
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
    Rq = cast(np.ndarray, np.linalg.qr(Ww, mode="r"))  # mode "r": R alone (the stubs say QRResult)
    Rinv = np.linalg.inv(Rq)
    if window // 3 < 2:
        std = np.sqrt(s2 * np.einsum("ij,ij->i", Rinv, Rinv))  # diag((Ww^T Ww)^-1) = row norms of R^-1
    else:  # rows correlated by the filter (module docstring)
        rows = np.broadcast_to(np.arange(N)[:, None], (N, n))[use]
        std = filtered_std(Ww, Rinv, rw, rows, joint, window, N, n)
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
        # mypy splats no union of tuple lengths (either fits validate's positionals)
        out.validation = validate(prior, model, *held_out, window=window)  # type: ignore[misc]
    return out


def parallel_window(qd: np.ndarray, window: int = 0) -> int:
    """The parallel filter's window (odd): ``window`` given (> 0), else 1 for a noise-free
    recording of velocities ``qd`` (N, n), else 81 (``identify_samples``)."""
    if window <= 0:
        rough = np.median(np.abs(np.diff(qd, 2, axis=0)), axis=0)
        window = 1 if np.all(rough <= 3e-5 * np.maximum(np.abs(qd).max(axis=0), 1e-9)) else 81
    return int(window) | 1


def filtered_std(Ww: np.ndarray, Rinv: np.ndarray, rw: np.ndarray, rows: np.ndarray,
                 joint: np.ndarray, window: int, N: int, n: int) -> np.ndarray:
    """The standard deviations of the weighted least squares ``beta`` of ``Ww`` (equations at
    filtered row ``rows``, joint ``joint``; residuals ``rw``; ``R^-1`` of ``Ww``'s QR) when each
    joint's noise was white before ``lowpass(., window)`` (module docstring): ``F^T G_j`` is
    the kernel's full convolution of ``G_j`` (the filter's adjoint: ``lowpass`` of ``G_j``
    padded by the kernel's width less one each side)."""
    width = 3 * (window // 3) - 2
    impulse = np.zeros(2 * width - 1)
    impulse[width - 1] = 1.0
    k2 = float(np.sum(lowpass(impulse, window) ** 2))  # the kernel's squared norm
    G = Ww @ (Rinv @ Rinv.T)  # (r, b): beta - beta_true = G^T e
    var = np.zeros(G.shape[1])
    for j in range(n):
        sel = joint == j
        if not sel.any():
            continue
        s2 = float(rw[sel] @ rw[sel]) / max(sel.sum(), 1) / k2  # the raw (unfiltered) noise variance
        full = np.zeros((N, G.shape[1]))
        full[rows[sel]] = G[sel]
        H = lowpass(np.pad(full, ((width - 1, width - 1), (0, 0))), window)  # F^T G_j
        var += s2 * np.einsum("tb,tb->b", H, H)
    return np.sqrt(var)


def identify_samples(prior: MdhModel, samples, held_out: float = 0.25, window: int = 0):
    """``identify`` on a recording's ``recording.Samples``: the last ``held_out`` of its time
    kept for validation, the parallel filter's ``window`` (0: 1 for a noise-free recording,
    else 81: noise shows as a jagged velocity, the median second difference over the peak
    speed ~1.6e-6 on a noise-free 1 kHz recording, 4e-4..6e-3 with the bridge's ``--noise``).
    Returns the ``Identification``, the held-out ``Samples`` and the window used; the one
    path of ``rbd-ros identify`` and the bringup's identification loop."""
    if not 0.0 < held_out < 0.9:
        raise ValueError(f"--held-out must be in (0, 0.9), got {held_out}")
    window = parallel_window(samples.qd, window)
    fit, held = samples.split(held_out)
    res = identify(prior, **fit.equations(), window=window,
                   held_out=(held.q, held.qd, held.qdd, np.where(held.mask, held.tau, np.nan), held.qd_step))
    return res, held, window


def validate(prior: MdhModel, identified: MdhModel, q, qd, qdd, tau, qd_viscous=None,
             window: int = 1) -> dict:
    """Torque prediction errors on samples: per joint and overall RMS of ``tau - Y phi`` for
    both models (filtered as ``identify``'s ``window``), and as % of the measured RMS torque
    (``qd_viscous``: ``identify``'s)."""
    q, qd, qdd, tau = (np.asarray(x, dtype=float) for x in (q, qd, qdd, tau))
    out: dict = {"samples": int(q.shape[0]),
                 "rms_torque": np.sqrt(np.nanmean(tau**2, axis=0)).tolist()}
    rms_all = float(np.sqrt(np.nanmean(tau**2)))
    use = valid(np.isfinite(tau), window)
    Y = lowpass(regressor(prior, q, qd, qdd, qd_viscous), window)
    tau = np.where(use, lowpass(np.nan_to_num(tau), window), np.nan)
    out["rms_torque"] = np.sqrt(np.nanmean(tau**2, axis=0)).tolist()
    rms_all = float(np.sqrt(np.nanmean(tau**2)))
    for key, m in (("prior", prior), ("identified", identified)):
        err = tau - Y @ standard_parameters(m)
        out[f"{key}_rms_error"] = np.sqrt(np.nanmean(err**2, axis=0)).tolist()
        out[f"{key}_error_percent"] = 100.0 * float(np.sqrt(np.nanmean(err**2))) / rms_all
    return out


def write_model(res, path: str, source: str) -> None:
    """The identified ``MdhModel`` under ``model:``, the figures under ``identification:``."""

    body = yaml.safe_dump({"model": res.model.to_dict(), "identification": res.summary()},
                          sort_keys=False, default_flow_style=None, width=120)
    head = (f"# {res.model.name}: identified by rbd-ros identify from {source} (prior: {res.prior.name}).\n"
            f"# Load with rbd-ros bringup --model {Path(path).name}, the nodes' model_yaml parameter or\n"
            f"# rbd_ros.Robot.from_yaml.  Held-out torque error: prior "
            f"{res.validation.get('prior_error_percent', float('nan')):.2f} %, identified "
            f"{res.validation.get('identified_error_percent', float('nan')):.2f} % of the RMS torque.\n")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(head + body, encoding="utf-8")
