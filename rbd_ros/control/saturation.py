"""Saturation and chatter of a controller's torques, per joint (issue 26 item 4).

``SaturationStats(n)`` counts, every control cycle (``update``, one jitted call, nothing
allocated):

* cycles at the effort limit (the law clipped the torque: ``ControlLaw.saturated``);
* cycles at the limit *with a sign flip* against the previous cycle's command
  (``tau_k tau_{k-1} < 0``): bang-bang chatter between the two limits;
* the peak ``|tau|`` (N m).

``report(cycles)`` gives the numbers since the previous report (the *window*: percentages of
its cycles, the window's peak) and since the start (counts, peak), and starts a new window;
``crossings(report, names)`` gives one warning line per joint whose window percentage (either
one) rose above ``threshold`` % (once per crossing: the joint is re-armed when both fall back
to or below it).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

WARN_PERCENT = 1.0  # % of a window's cycles, at the limit or at the limit with a sign flip


@njit(cache=True)
def _count_saturation(tau: np.ndarray, saturated: np.ndarray, prev: np.ndarray, at: np.ndarray,
           flips: np.ndarray, peak: np.ndarray, window_peak: np.ndarray) -> None:  # pragma: no cover
    """Per joint ``i``: ``at += sat_i``, ``flips += sat_i and tau_i prev_i < 0``, peaks of
    ``|tau_i|``; then ``prev = tau``."""
    for i in range(tau.shape[0]):
        a = abs(tau[i])
        if a > peak[i]:
            peak[i] = a
        if a > window_peak[i]:
            window_peak[i] = a
        if saturated[i]:
            at[i] += 1
            if tau[i] * prev[i] < 0.0:  # the clipped command changed sign since the last cycle
                flips[i] += 1
        prev[i] = tau[i]


class SaturationStats:
    """Per-joint saturation and chatter counters (module docstring); model joint order."""

    def __init__(self, n: int) -> None:
        self.at = np.zeros(n, dtype=np.int64)  # cycles at the limit, since the start
        self.flips = np.zeros(n, dtype=np.int64)  # ... of which with a sign flip
        self.peak = np.zeros(n)  # max |tau| since the start, N m
        self.window_peak = np.zeros(n)  # max |tau| since the last report, N m
        self.prev = np.zeros(n)  # the previous cycle's command
        self._at0 = np.zeros(n, dtype=np.int64)
        self._flips0 = np.zeros(n, dtype=np.int64)
        self._cycles0 = 0
        self._warned = np.zeros(n, dtype=bool)

    def update(self, tau: np.ndarray, saturated: np.ndarray) -> None:
        """One cycle's command (after saturation) and which joints the law clipped."""
        _count_saturation(tau, saturated, self.prev, self.at, self.flips, self.peak, self.window_peak)

    def reset(self) -> None:
        for x in (self.at, self.flips, self.peak, self.window_peak, self.prev, self._at0, self._flips0):
            x.fill(0)
        self._cycles0 = 0
        self._warned[:] = False

    def report(self, cycles: int, order: np.ndarray | None = None) -> dict[str, Any]:
        """The window since the last report (percentages of its cycles, its peak) and the
        totals since the start, as lists (in ``order``: indices into the model's joints);
        starts a new window.  ``cycles``: the controller's cycle count now."""
        at, flips = self.at.copy(), self.flips.copy()
        window_peak = self.window_peak.copy()
        self.window_peak.fill(0.0)
        k = cycles - self._cycles0
        d_at, d_flips = at - self._at0, flips - self._flips0
        self._at0, self._flips0, self._cycles0 = at, flips, cycles
        idx = np.arange(len(at)) if order is None else np.asarray(order)
        pct = 100.0 * d_at / k if k > 0 else np.zeros(len(at))
        fpct = 100.0 * d_flips / k if k > 0 else np.zeros(len(at))
        return {
            "window_cycles": int(k),
            "saturated_percent": [float(x) for x in pct[idx]],
            "saturated_flip_percent": [float(x) for x in fpct[idx]],
            "peak_effort": [float(x) for x in window_peak[idx]],
            "total_cycles": int(cycles),
            "saturated_cycles": [int(x) for x in at[idx]],
            "saturated_flip_cycles": [int(x) for x in flips[idx]],
            "peak_effort_total": [float(x) for x in self.peak[idx]],
        }

    def crossings(self, report: dict[str, Any], names: list[str], limits: Any,
                  order: np.ndarray | None = None, threshold: float = WARN_PERCENT) -> list[str]:
        """Warning lines for the joints of ``report`` (in ``names`` order, model indices
        ``order``) whose window percentage rose above ``threshold`` (once per crossing)."""
        lines = []
        idx = np.arange(len(names)) if order is None else np.asarray(order)
        for j, name in enumerate(names):
            pct, fpct = report["saturated_percent"][j], report["saturated_flip_percent"][j]
            i = int(idx[j])
            over = pct > threshold or fpct > threshold
            if over and not self._warned[i]:
                lines.append(f"saturation: {name} at its effort limit ({float(limits[i]):.4g} N m) in "
                             f"{pct:.1f} % of the last {report['window_cycles']} cycles, {fpct:.1f} % "
                             f"with a sign flip against the previous command (chatter); peak |tau| "
                             f"{report['peak_effort'][j]:.4g} N m")
            self._warned[i] = over
        return lines
