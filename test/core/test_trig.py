"""``algorithm.trig.sincos`` (issue 32) against NumPy's (glibc's) ``sin``/``cos``: within 2 ulp
over the angles a joint takes (up to 100 rad), within 2.3e-16 up to 1e6, exact at 0, glibc's
own answer from 1e6 on and for NaN and Inf."""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.spatial6 import CONTRACT
from rbd_ros.algorithm.trig import sincos


# as inlined into kinematics.joint_angles; not cached: a test file is outside rbd_ros's cache
# stamps (algorithm.jit_cache), so numba would key it on this file alone and, after an edit of
# trig.py, load the old sincos compiled into it (issue 45's audit: a wrong sign passed here)
@njit(fastmath=CONTRACT)
def _both(x: np.ndarray, out: np.ndarray) -> None:
    for i in range(x.shape[0]):
        out[i, 0], out[i, 1] = sincos(x[i])


def _sc(x: np.ndarray) -> np.ndarray:
    out = np.empty((x.shape[0], 2))
    _both(x, out)
    return out


def test_within_two_ulp_of_glibc() -> None:
    rng = np.random.default_rng(0)
    for lo, hi in ((1e-9, 1e-3), (0.5, 1.0), (0.8, 4.0), (4.0, 100.0), (100.0, 9.9e5)):
        x = rng.uniform(lo, hi, 200_000) * rng.choice([-1.0, 1.0], 200_000)
        got, ref = _sc(x), np.stack([np.sin(x), np.cos(x)], axis=1)
        ulp = np.abs(got - ref) / np.spacing(np.abs(ref))
        assert ulp.max() <= (2.0 if hi <= 100.0 else 8.0), (lo, hi, ulp.max())  # relative: near a zero
        assert np.abs(got - ref).max() <= 2.3e-16, (lo, hi)
    k = np.arange(-64, 65)
    x = k * (np.pi / 2)  # the quadrant boundaries: cancellation in the reduction
    assert np.abs(_sc(x) - np.stack([np.sin(x), np.cos(x)], axis=1)).max() <= 1e-16


def test_special_values() -> None:
    got = _sc(np.array([0.0, -0.0, 2e6, -3e7, np.inf, -np.inf, np.nan]))
    assert got[0].tolist() == [0.0, 1.0] and got[1].tolist() == [0.0, 1.0] and np.signbit(got[1, 0])
    assert got[2].tolist() == [np.sin(2e6), np.cos(2e6)] and got[3].tolist() == [np.sin(-3e7), np.cos(-3e7)]
    assert np.isnan(got[4:]).all()
