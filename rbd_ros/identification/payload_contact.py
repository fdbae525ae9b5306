"""Contact in a payload recording (issue 41): the stretches of F/T readings that no payload
explains, found and left out of ``identification.payload``'s fit.

The payload model (``payload`` module docstring: ``w = A(a - g, omega, alpha) phi + w_0``) holds
in free motion only; a contact adds a wrench it cannot explain, and fitting through it makes
the identified mass, centre of mass and offset wrong.  Found by trimming: first the half of the
samples a fit explains best (concentration steps of least trimmed squares, Rousseeuw and Van
Driessen 2006: fit, keep the half with the smallest residuals, fit again, until that half no
longer changes), then from that fit each (filtered) sample's force and moment residual norms,
their robust scale (1.4826 x the median over the samples kept: the noise), flag the samples
above ``FACTOR`` x that scale and
above an absolute floor (``FORCE_FLOOR`` N, ``MOMENT_FLOOR`` N m: a good sensor's resolution,
so a noise-free recording's round-off is no contact), keep the flagged runs longer than
``MIN_TIME`` s (a contact lasts; a spike does not), grown by the filter's width (their
neighbours' filtered rows carry them), and fit again without them, until the runs no longer
change.  The stretches left out are returned (``Unexplained``) for the caller to name; when
they are most of the recording there is no free motion to fit: ``ValueError``.

The rule needs free motion that turns the sensor: at one orientation (a press holds it) a
steady contact is explained as well by an offset equal to it (the offset and the weight are
the same constant wrench in the sensor's axes), and the free part could be flagged instead.
So a recording, or the samples left after the stretches are taken out, that turned the sensor
less than ``MIN_TURN`` degrees against gravity is refused (naming those stretches) rather than
name the wrong one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

FACTOR = 8.0  # residual over its robust scale
FORCE_FLOOR, MOMENT_FLOOR = 0.2, 0.02  # N, N m
MIN_TIME = 0.05  # s
MAX_FRACTION = 0.5  # of the samples: more flagged than this, refused
MIN_TURN = 4.0  # degrees (95th percentile) of gravity from its mean direction in the sensor axes: a
# press held 1.6 (the nodes, UR10), the shortest excitation tested 7.9 (the humanoid arm, 1.5 s)
ROUNDS = 8


@dataclass(frozen=True)
class Unexplained:
    """A stretch ``[t0, t1]`` (s, the recording's stamps) of readings the payload does not
    explain: its largest force and moment residuals (N, N m) against the noise elsewhere."""

    t0: float
    t1: float
    force: float
    moment: float
    force_noise: float
    moment_noise: float

    def line(self, t_start: float = 0.0) -> str:
        return (f"t = {self.t0:.3f}-{self.t1:.3f} s ({self.t0 - t_start:.2f}-{self.t1 - t_start:.2f} s "
                f"into the recording): residual up to {self.force:.3g} N, {self.moment:.3g} N m "
                f"against {self.force_noise:.2g} N, {self.moment_noise:.2g} N m elsewhere")


def _changes(tc: np.ndarray, w: np.ndarray) -> str:
    """Where the force departs from its value at the recording's start (its first ``MIN_TIME``
    s, taken as free) by over half its usual largest change (the 99th percentile), for at least
    ``MIN_TIME`` s: a recording at one orientation cannot say more of where a contact was."""
    f = w[:, :3]
    change = np.linalg.norm(f - np.median(f[tc - tc[0] <= MIN_TIME], axis=0), axis=1)
    level = float(np.percentile(change, 99))
    if level < 5 * FORCE_FLOOR:
        return ""
    runs = [(a, b) for a, b in _runs(change > 0.5 * level) if tc[b - 1] - tc[a] >= MIN_TIME]
    if not runs:
        return ""
    return (f"; the force departs from its value at the recording's start by ~{level:.3g} N at t = "
            + ", ".join(f"{tc[a]:.3f}-{tc[b - 1]:.3f} s" for a, b in runs) + " (contact there?)")


def _check_turned(a_minus_g: np.ndarray, spans: list, tc: np.ndarray, w: np.ndarray | None = None) -> None:
    """``ValueError`` when gravity (``a - g``, sensor axes) of the samples fitted stayed within
    ``MIN_TURN`` degrees of its mean direction (95 % of them: the brief accelerations of a
    phase change are no excitation): the weight is then a constant wrench in the sensor's axes,
    not separable from the offset (or from a steady contact)."""
    u = a_minus_g / np.linalg.norm(a_minus_g, axis=1, keepdims=True)
    mean = u.mean(axis=0)
    mean /= np.linalg.norm(mean)
    turn = float(np.percentile(np.degrees(np.arccos(np.clip(u @ mean, -1.0, 1.0))), 95))
    if turn < MIN_TURN:
        left = ("; left out as unexplained: " + ", ".join(f"{tc[a]:.3f}-{tc[b - 1]:.3f} s" for a, b in spans)
                if spans else _changes(tc, w) if w is not None else "")
        raise ValueError(f"payload: the F/T sensor turned only {turn:.1f} degrees against gravity over the "
                         f"readings fitted (at least {MIN_TURN:g} needed): its weight and offset (and any "
                         f"steady contact, a press) are the same constant wrench there{left}; record an "
                         "excitation that turns the wrist, without contact")


def _runs(flag: np.ndarray) -> list[tuple[int, int]]:
    """``[(start, end)]`` (end exclusive) of the True runs of ``flag``."""
    d = np.diff(np.concatenate([[0], flag.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1), strict=True))


def fit_without_contact(t: np.ndarray, A: np.ndarray, w: np.ndarray, a_minus_g: np.ndarray, offset: bool,
                        fit: Callable[[np.ndarray, np.ndarray], tuple[Any, np.ndarray]]):
    """The fit with the unexplained stretches left out (module docstring): ``(fit's result,
    the Unexplained stretches)`` (none: free motion throughout).  ``t`` (N,) the samples'
    times; ``A``, ``w`` the regressor and the readings, both filtered (``payload.
    filtered_regressor``: N - width + 1 rows); ``a_minus_g`` (N, 3) the sensor's; ``fit(A, w)``
    the least squares (``payload.fit_weighted``), returning its result and the parameters."""
    t = np.asarray(t, dtype=float)
    width = len(t) - len(w) + 1  # the filter's kernel: filtered row k is centred on sample k + width // 2
    tc = t[width // 2: width // 2 + len(w)]
    n = len(w)
    inner = slice(width // 2, width // 2 + n)  # the samples the filtered rows are centred on
    if offset:
        _check_turned(a_minus_g[inner], [], tc, w)
    scale = np.array([np.sqrt(np.mean(w[:, :3] ** 2)) or 1.0] * 3 + [np.sqrt(np.mean(w[:, 3:] ** 2)) or 1.0] * 3)
    keep = np.ones(n, dtype=bool)
    for _ in range(ROUNDS):  # concentration steps: fit the half of the samples it explains best
        result, x = fit(A[keep], w[keep])
        z = np.linalg.norm((w - A @ x) / scale, axis=1)
        best = z <= np.median(z)
        if (best == keep).all():
            break
        keep = best
    spans: list[tuple[int, int]] | None = None
    for _ in range(ROUNDS):  # the runs that fit leaves unexplained, left out, fitted again
        r = w - A @ x
        ef, en = np.linalg.norm(r[:, :3], axis=1), np.linalg.norm(r[:, 3:], axis=1)
        sf, sn = 1.4826 * np.median(ef[keep]), 1.4826 * np.median(en[keep])
        flag = (ef > max(FACTOR * sf, FORCE_FLOOR)) | (en > max(FACTOR * sn, MOMENT_FLOOR))
        new = [(a, b) for a, b in _runs(flag) if tc[b - 1] - tc[a] >= MIN_TIME]
        if new == spans:
            break
        spans, keep = new, np.ones(n, dtype=bool)
        for a, b in spans:
            keep[max(a - width, 0): b + width] = False
        if keep.sum() < (1.0 - MAX_FRACTION) * n:
            left = ", ".join(f"{tc[a]:.3f}-{tc[b - 1]:.3f} s" for a, b in spans)
            raise ValueError(f"payload: the readings at t = {left} ({100 * (1 - keep.mean()):.0f} % of the "
                             f"recording) are not explained by a payload (residual up to {ef.max():.3g} N, "
                             f"{en.max():.3g} N m against {sf:.2g} N, {sn:.2g} N m): contact? a payload "
                             "is identified from free motion; record an excitation without contact")
        result, x = fit(A[keep], w[keep])
    spans = spans or []
    if offset:
        _check_turned(a_minus_g[inner][keep], spans, tc)
    out = tuple(Unexplained(float(tc[a]), float(tc[b - 1]), float(ef[a:b].max()), float(en[a:b].max()),
                            float(sf), float(sn)) for a, b in spans)
    return result, out
