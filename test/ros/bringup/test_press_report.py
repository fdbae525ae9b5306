"""The press task's report (``rbd_ros.ros.bringup.press.press_report`` and ``report_lines``,
issue 30) on a hand-made F/T series, the fast tier's test of the module (the bringup runs of
``--task press`` are ``slow``): the force error over the middle 80 % of the slide, the impact
peak before it, the cycles without contact over the whole slide and the position error along
the surface, each against values computed by hand here."""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

from rbd_ros.ros.bringup.press import LOST_FRACTION, SLIDE_TIME, check_press_law, press_report, report_lines

F = 10.0  # N: the set force
SETTLE, SLIDE = 0.5, 4.0  # s: the phases' starts (simulated time)


def _task(retreat: float) -> NS:
    phases = {"settle": SETTLE, "approach": 1.0, "press": 2.5, "slide": SLIDE, "retreat": retreat}
    return NS(args=NS(force=F, controller="impedance", composed=False, mode="lockstep"),
              phases=phases, model=NS(name="arm"))


def test_the_report_is_the_hand_computed_figures() -> None:
    t = np.round(np.arange(0.0, 9.0, 0.01), 6)  # 100 Hz readings, the slide from 4 s for 3 s
    f_n = np.full_like(t, F)
    f_n[(t >= 2.5) & (t < 2.6)] = 2.5 * F  # the impact, before the slide
    mid = (t >= SLIDE + 0.3) & (t < SLIDE + 2.7)  # the middle 80 % of the 3 s slide
    f_n[mid] += np.where(np.arange(mid.sum()) % 2 == 0, 1.0, -3.0)  # errors +1, -3 N alternating
    lost = np.flatnonzero((t >= SLIDE) & (t < SLIDE + 0.3))[:4]  # contact lost: at the slide's start
    f_n[lost] = 0.5 * LOST_FRACTION * F
    e_free = np.where(mid, 2e-3, 0.0)
    e_free[np.flatnonzero(mid)[7]] = 5e-3
    rep = press_report(_task(retreat=SLIDE + SLIDE_TIME + 0.5), {"t": t, "f_n": f_n, "e_free": e_free}, 9.0)
    assert rep["force_error_rms_N"] == pytest.approx(np.sqrt((1.0 + 9.0) / 2))  # mid has an even count
    assert mid.sum() % 2 == 0
    assert rep["force_error_max_N"] == pytest.approx(3.0)
    assert rep["impact_peak_ratio"] == pytest.approx(2.5)
    assert rep["contact_lost_cycles"] == 4
    assert rep["slide_cycles"] == 300
    n = mid.sum()
    assert rep["position_error_rms_m"] == pytest.approx(np.sqrt(((n - 1) * 4e-6 + 25e-6) / n))
    assert rep["position_error_max_m"] == pytest.approx(5e-3)
    assert rep["phases_s"]["slide"] == pytest.approx(SLIDE - SETTLE)
    text = "\n".join(report_lines(rep))
    assert "max 3.000 N" in text and "2.50 x the set force" in text and "4 cycles" in text


def test_a_retreat_before_the_planned_end_shortens_the_slide_and_no_readings_is_an_error() -> None:
    t = np.round(np.arange(0.0, 9.0, 0.01), 6)
    f_n = np.full_like(t, F)
    f_n[(t >= SLIDE) & (t < SLIDE + 1.0)] = F + 2.0  # the whole (shortened, 1 s) slide 2 N over
    rep = press_report(_task(retreat=SLIDE + 1.0), {"t": t, "f_n": f_n, "e_free": np.zeros_like(t)}, 9.0)
    assert rep["slide_cycles"] == 100 and rep["force_error_rms_N"] == pytest.approx(2.0)
    with pytest.raises(RuntimeError, match="no F/T readings arrived over the slide"):
        press_report(_task(retreat=SLIDE + 1.0), {"t": t[t < SLIDE], "f_n": f_n[t < SLIDE],
                                                  "e_free": np.zeros((t < SLIDE).sum())}, 9.0)
    with pytest.raises(ValueError, match="--task press needs a force law"):
        check_press_law("pd")
