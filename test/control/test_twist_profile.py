"""The twist profile of ``rbd-ros bringup --controller diff_drive_velocity`` (issue 29) and
the path it commands, against closed forms: segment 1 drives straight, ``x = v (tau/2 - T
sin(2 pi tau / T) / (4 pi))``; in segments 2 and 3 every component is the same ``sin^2`` bump,
so the body velocity keeps its direction and ``|v| / omega`` is constant: a circular arc of
radius ``|v| / |omega|`` turning by ``omega_peak T / 2``."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbd_ros.control.twist_profile import PEAKS, TwistProfile


def arc_end(start: np.ndarray, peak: np.ndarray, T: float) -> np.ndarray:
    """The pose after a segment whose twist is ``peak sin^2``: heading turns by
    ``w T / 2``; the body velocity's direction ``phi`` is fixed in the body, so the point
    moves on a circle of radius ``|v| / w`` (closed form, not integrated)."""
    v, w = math.hypot(peak[0], peak[1]), peak[2]
    dpsi = w * T / 2
    phi = math.atan2(peak[1], peak[0])  # direction of travel in the body
    a0 = start[2] + phi
    R = v / w
    return np.array([start[0] + R * (math.sin(a0 + dpsi) - math.sin(a0)),
                     start[1] - R * (math.cos(a0 + dpsi) - math.cos(a0)), start[2] + dpsi])


@pytest.mark.parametrize("planar", [False, True])
def test_path_matches_closed_forms(planar: bool) -> None:
    T, t0 = 2.5, 7.0
    prof = TwistProfile(T, planar, t0=t0)
    start = np.array([0.3, -1.2, 0.7])
    peaks = PEAKS.copy()
    if not planar:
        peaks[:, 1] = 0.0
    # segment 1: straight ahead along the start heading
    tau = np.linspace(0.0, T, 11)
    x = peaks[0, 0] * (tau / 2 - T * np.sin(2 * np.pi * tau / T) / (4 * np.pi))
    got = prof.path(t0 + tau, start)
    expected = np.column_stack([start[0] + x * math.cos(start[2]), start[1] + x * math.sin(start[2]),
                                np.full_like(x, start[2])])
    np.testing.assert_allclose(got, expected, atol=1e-7)
    # segments 2 and 3: circular arcs
    p1 = expected[-1]
    p2 = arc_end(p1, peaks[1], T)
    p3 = arc_end(p2, peaks[2], T)
    np.testing.assert_allclose(prof.path([t0 + 2 * T], start)[0], p2, atol=1e-7)
    np.testing.assert_allclose(prof.path([t0 + 3 * T, t0 + 100.0], start), [p3, p3], atol=1e-7)
    np.testing.assert_allclose(prof.path([t0 - 1.0], start)[0], start, atol=0)  # held before


def test_twist_is_smooth_and_inside_the_controller_limits() -> None:
    T = 4.0  # the bringup's mobile segment time
    prof = TwistProfile(T, True)
    t = np.linspace(-0.5, 3 * T + 0.5, 30001)
    w = np.array([prof.twist(x) for x in t])
    assert np.all(np.abs(w) <= [1.0, 1.0, 2.0])  # controller.yaml max_velocity
    acc = np.abs(np.diff(w, axis=0)) / np.diff(t)[:, None]
    assert np.all(acc.max(axis=0) <= [1.0, 1.0, 3.0])  # max_acceleration: the limiter passes it
    np.testing.assert_allclose(acc.max(axis=0), np.abs(PEAKS).max(axis=0) * np.pi / T, rtol=1e-3)
    np.testing.assert_array_equal(w[t < 0], 0.0)
    np.testing.assert_array_equal(w[t >= 3 * T], 0.0)
    diff = TwistProfile(T, False)
    assert np.all(np.array([diff.twist(x)[1] for x in t[::100]]) == 0.0)  # diff drive


def test_bad_segment_time_is_refused() -> None:
    with pytest.raises(ValueError, match="segment_time must be a positive number of seconds"):
        TwistProfile(float("nan"), False)
