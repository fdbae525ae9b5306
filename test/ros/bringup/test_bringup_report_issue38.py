"""Issue 38, the bringup's status (ROS-free): the recorder says how many samples a flooded
stream lost (its stamps against a count kept by the producer), the report, terminal and page
say it, and the progress line's real-time factor is the final line's over the window so far."""
from __future__ import annotations

import collections
import threading
import time

import numpy as np
import pytest

from rbd_ros.ros.bringup.page import write_page
from rbd_ros.ros.bringup.recorder import BagRecorder, stamp_losses
from rbd_ros.ros.bringup.report import make_report, progress_factor, real_time_factor, summary_lines

STATES = "/joint_states"


def test_a_flooded_recorder_reports_the_samples_it_lost(tmp_path) -> None:
    """A 1 kHz stream into a keep-last queue of 50 that a slow consumer drains into the bag (as
    a reliable keep-last history overflows when its reader lags): the loss the recorder reports
    from the stamps is the producer's own count of overwritten samples."""
    from sensor_msgs.msg import JointState

    from rbd_ros.ros.bringup.recorder import cdr

    raw = cdr(JointState(name=["a"], position=[0.0]))
    rec = BagRecorder(tmp_path / "bag", {STATES: "sensor_msgs/msg/JointState"})
    history: collections.deque = collections.deque(maxlen=50)
    lock, done = threading.Lock(), threading.Event()
    overwritten = 0
    n, period_ns = 3000, 1_000_000

    def consumer() -> None:
        while not (done.is_set() and not history):
            with lock:
                item = history.popleft() if history else None
            if item is None:
                time.sleep(1e-4)
                continue
            rec.write(STATES, item, raw)
            if item % 7 == 0:
                time.sleep(2e-3)  # a slow consumer: every 7th sample costs it 2 ms

    reader = threading.Thread(target=consumer)
    reader.start()
    for k in range(n):
        with lock:
            if len(history) == history.maxlen:
                overwritten += 1  # the oldest sample is dropped
            history.append(k * period_ns)
        if k % 50 == 0:
            time.sleep(1e-3)
    done.set()
    reader.join()
    rec.close()
    loss = rec.losses({STATES: 1e-3})[STATES]
    assert overwritten > 100  # the flood did overflow the queue
    assert rec.counts[STATES] == n - overwritten  # what reached the bag
    first, last = min(rec.stamps[STATES]), max(rec.stamps[STATES])
    unseen = first // period_ns + (n - 1 - last // period_ns)  # lost before the first / after the last
    assert loss["received"] == n - overwritten
    assert loss["lost"] == overwritten - unseen and loss["expected"] == n - unseen


def test_stamp_losses_from_the_median_spacing() -> None:
    stamps = [k * 2_000_000 for k in range(100) if k not in (10, 11, 12, 50)]
    got = stamp_losses(stamps + stamps[:5])  # repeats count once (a paused bridge repeats)
    assert got == {"received": 96, "expected": 100, "lost": 4, "period_s": pytest.approx(2e-3)}
    assert stamp_losses([5])["lost"] == 0


def _report(times: np.ndarray):
    n = len(times)
    ref = np.zeros((n, 2))
    return make_report(["j1", "j2"], ref, ref + 1e-3, np.ones((n, 2)), times, 0.9, 0,
                       effort_limit=np.array([10.0, 10.0]))


def test_the_report_terminal_and_page_say_what_was_lost(tmp_path) -> None:
    times = np.array([k * 1e-3 for k in range(1000) if not 400 <= k < 430])
    report = _report(times)
    assert report.samples == 970 and report.samples_expected == 1000
    report.recording = {STATES: {"received": 26658, "expected": 30001, "lost": 3343, "period_s": 1e-3},
                        "/controller/controller_state": {"received": 30001, "expected": 30001, "lost": 0,
                                                         "period_s": 1e-3}}
    lines = summary_lines(report)
    assert any("970 samples of 1000 the stamps say were sent (30 lost or missed)" in x for x in lines), lines
    warn = [x for x in lines if x.startswith("warning: the recording lost")]
    assert warn == ["warning: the recording lost 3343 of 30001 /joint_states samples (from their stamps: "
                    "26658 recorded, one every 1 ms)"]
    assert warn[0] in report.table()  # the terminal
    report.robot, report.law = "kinova", "pd_gravity"
    page = write_page(tmp_path, report, {"bringup": {"duration": 1.0}}, title="kinova: pd_gravity, lockstep",
                      gains={"kp": "[1.0] (model)"}).read_text()
    assert "warning: the recording lost 3343 of 30001 /joint_states samples" in page
    assert "<title>kinova: pd_gravity, lockstep</title>" in page
    whole = _report(np.arange(1000) * 1e-3)
    assert whole.samples_expected == 1000 and not any("lost" in x for x in summary_lines(whole))


def test_the_progress_factor_is_the_final_lines_over_the_window_so_far() -> None:
    # the bridge's (wall, sim) diagnostics: paused at sim 2.0 for 3 s of wall, then at 0.5x
    samples = [(0.0, 0.0), (1.0, 1.0), (2.0, 2.0), (5.0, 2.0), (7.0, 3.0), (9.0, 4.0)]
    t_start = 2.1  # the tour starts just after the pause (bringup.send_tour)
    assert progress_factor(samples, t_start) == pytest.approx(real_time_factor(samples, t_start, 4.0))
    assert progress_factor(samples, t_start) == pytest.approx(0.5)  # the pause before it does not count
    assert np.isnan(progress_factor(samples[:3], t_start))  # nothing of the tour yet: '-'
    assert np.isnan(progress_factor([], t_start))
