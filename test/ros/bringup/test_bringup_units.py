"""The bringup's pure parts: the real-time factor (``rbd_ros.ros.bringup.report.real_time_factor``)
on made-up bridge diagnostics (simulated over wall time across exactly the reported window),
the missed-cycle count (the tour's limits: test_any_arm), and the report's loop-timing line
(realtime runs only)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_ros.ros.bringup.report import real_time_factor


def test_steady_run_between_two_pauses():
    # paused at sim 1.0 (wall 10), resumed at wall 12, ran at rtf 3 to sim 7 (wall 14), paused
    samples = [(10.0, 1.0), (12.0, 1.0), (13.0, 4.0), (14.0, 7.0), (20.0, 7.0)]
    assert real_time_factor(samples, 1.1, 6.5) == pytest.approx(3.0, rel=1e-12)


def test_idle_before_and_after_the_window_does_not_count():
    # 5 s idle before (the bridge waits for its first command), 30 s paused after
    samples = [(0.0, 0.0), (5.0, 0.0), (6.0, 0.5), (7.0, 1.0), (37.0, 1.0)]
    assert real_time_factor(samples, 0.1, 1.0) == pytest.approx(0.5, rel=1e-12)


def test_idle_inside_the_window_counts():
    # runs at rtf 1 for 1 s, stands still for 2 s, runs 1 s more: 2 simulated s in 4 wall s
    samples = [(0.0, 0.0), (1.0, 1.0), (3.0, 1.0), (4.0, 2.0)]
    assert real_time_factor(samples, 0.0, 2.0) == pytest.approx(0.5, rel=1e-12)


def test_no_message_inside_the_window():
    # a 0.3 s window between two samples one second apart: the rate of that second
    samples = [(100.0, 50.0), (101.0, 52.5)]
    assert real_time_factor(samples, 50.5, 50.8) == pytest.approx(2.5, rel=1e-12)


def test_one_message_inside_the_window_with_different_rates():
    # rtf 1 then rtf 4: a window of 0.5 s at each rate takes 0.5 + 0.125 s
    samples = [(0.0, 0.0), (1.0, 1.0), (2.0, 5.0)]
    assert real_time_factor(samples, 0.5, 1.5) == pytest.approx(1.0 / 0.625, rel=1e-12)


def test_never_zero_without_information():
    assert math.isnan(real_time_factor([], 0.0, 1.0))
    assert math.isnan(real_time_factor([(3.0, 1.0)], 0.0, 2.0))  # one message
    assert math.isnan(real_time_factor([(0.0, 5.0), (1.0, 6.0)], 0.0, 2.0))  # window not covered
    assert math.isnan(real_time_factor([(0.0, 0.0), (1.0, 1.0)], 0.5, 0.5))  # empty window


def test_order_and_rounding_of_samples():
    # messages may be handed over out of order; a sample whose sim_time is a rounding below
    # the previous one does not make time run backwards
    samples = [(2.0, 2.0), (0.0, 0.0), (1.0, 1.0), (1.5, 1.0 - 1e-15)]
    # reached 0.25 at wall 0.25, stood still from wall 1 to 1.5, reached 1.75 at wall 1.875
    assert real_time_factor(samples, 0.25, 1.75) == pytest.approx(1.5 / 1.625, rel=1e-9)


# ---- missed cycles ----------------------------------------------------------------------------
def test_missed_cycles_count_from_before_the_tour_to_its_end():
    from rbd_ros.ros.bringup.report import missed_cycles

    start = {"steps_without_new_command": 7}
    end = {"steps_without_new_command": 19}
    assert missed_cycles(start, end) == 12
    assert missed_cycles(None, end) == 19  # no diagnostics before: counted from 0
    assert missed_cycles(start, None) == 0
    assert missed_cycles(end, end) == 0


def test_loop_timing_is_printed_for_realtime_runs_only():
    """The period/jitter line means deadlines only when the loop is paced by the wall clock."""
    from rbd_ros.ros.bringup.report import make_report

    t = np.linspace(0.0, 1.0, 11)
    zeros = np.zeros((11, 2))
    timing = {"period_p50_us": 1000.0, "period_p99_us": 1180.0, "period_max_us": 2500.0,
              "jitter_p99_us": 180.0, "overruns": 3}
    for mode, shown in (("composed, realtime", True), ("separate, realtime", True),
                        ("composed, lockstep", False), ("separate, lockstep", False)):
        report = make_report(["a", "b"], zeros, zeros, zeros, t, 1.0, 0)
        report.mode, report.timing = mode, dict(timing)
        table = report.table()
        assert report.realtime is shown
        assert ("loop: period p50 1000 us, p99 1180 us, max 2500 us; jitter p99 180 us; "
                "overruns 3" in table) is shown, table
        assert f"controller {mode}" in table


def test_recording_waits_for_the_commands_sent_before_the_tour(capsys):
    """Commands carry no stamp: recording starts once as many have arrived as controller
    states up to the pause; if they never do, the run says so instead of going on silently."""
    from rbd_ros.ros.bringup.cli import build_plan, parse_args
    from rbd_ros.ros.bringup.runner import Runner

    b = Runner(build_plan(parse_args(["--robot", "planar2"])))
    b.controller_state = [(0.001 * k, b"") for k in range(1, 1001)]  # the pause at t = 1 s
    b.commands_seen = 1000 - 5  # all but the slack: nothing in flight
    b.wait_for_commands_until(1.0, limit=5.0)
    assert capsys.readouterr().out == ""
    b.commands_seen = 400  # 600 still queued behind the states
    b.wait_for_commands_until(1.0, limit=0.05)
    assert "600 commands from before the tour were still in flight" in capsys.readouterr().out
