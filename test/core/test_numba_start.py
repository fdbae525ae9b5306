"""numba's start-up imports trimmed (``rbd_ros.algorithm.numba_start``, issue 39): a process
that imports rbd_ros and calls a kernel loads neither ``scipy.linalg`` nor coverage.py, and
numba still computes what it computed: its BLAS flag is the one numba's own check sets (run in
a process with ``RBD_ROS_FULL_NUMBA_IMPORT=1``), a jitted ``a @ b`` (BLAS) equals NumPy's,
``scipy.linalg`` and ``coverage`` import normally afterwards, and coverage in use keeps
numba's coverage support.  Each case in a fresh interpreter (the trims act on first import)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ros_helpers import REPO

_PROBE = r"""
import json, sys
import rbd_ros  # first, as every entry point of ours: the trims act when numba is first imported
import numpy as np
from numba import njit
from rbd_ros.robot import Robot
from rbd_ros.util.resources import config_file
from rbd_ros.model import MdhModel
robot = Robot(MdhModel.from_yaml(str(config_file("arm7"))))
tau = robot.inverse_dynamics(np.full(7, 0.1), np.zeros(7), np.zeros(7))
before = {"scipy_linalg": "scipy.linalg" in sys.modules, "coverage": "coverage" in sys.modules}
import numba.np.arraymath as am
import numba.misc.coverage_support as cs

@njit(cache=False)
def matmul(a, b):
    return a @ b

a, b = np.arange(12.0).reshape(3, 4), np.arange(8.0).reshape(4, 2) / 7
dot_ok = bool(np.array_equal(matmul(a, b), a @ b))
import scipy.linalg
import coverage
print(json.dumps({**before, "have_blas": am._HAVE_BLAS, "ensure_blas_is_numbas": am.ensure_blas.__module__,
                  "coverage_support": cs.coverage_available, "dot_ok": dot_ok,
                  "cython_blas": scipy.linalg.cython_blas.__name__,
                  "solve": float(scipy.linalg.solve([[2.0]], [4.0])[0]),
                  "coverage_version": bool(coverage.__version__), "tau_finite": bool(np.isfinite(tau).all())}))
"""


def _probe(**env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("COVERAGE_", "NUMBA_JIT_COVERAGE",
                                                                          "RBD_ROS_FULL_NUMBA"))}
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=REPO, env={**clean, **env},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def full() -> dict:
    return _probe(RBD_ROS_FULL_NUMBA_IMPORT="1")


def test_a_kernel_call_loads_neither_scipy_linalg_nor_coverage_and_numba_computes_the_same(full) -> None:
    trimmed = _probe()
    assert full["scipy_linalg"] and full["coverage"], full  # numba's own imports, the oracle's process
    assert not trimmed["scipy_linalg"] and not trimmed["coverage"], trimmed
    assert trimmed["have_blas"] is full["have_blas"] is True
    assert trimmed["ensure_blas_is_numbas"] == "numba.np.linalg"  # the real one put back
    assert trimmed["dot_ok"] and full["dot_ok"]
    assert trimmed["cython_blas"] == "scipy.linalg.cython_blas" and trimmed["solve"] == 2.0
    assert trimmed["coverage_version"] and trimmed["tau_finite"]
    assert trimmed["coverage_support"] is False and full["coverage_support"] is True


def test_coverage_in_use_keeps_numbas_coverage_support() -> None:
    kept = _probe(NUMBA_JIT_COVERAGE="1")
    assert kept["coverage"] and kept["coverage_support"] is True
    assert not kept["scipy_linalg"]  # the BLAS probe still trimmed


def test_the_probe_reads_a_missing_scipy_as_no_blas(monkeypatch) -> None:
    import importlib.util

    from rbd_ros.algorithm import numba_start

    assert numba_start.blas_available()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "scipy" else real(name, *a))
    assert not numba_start.blas_available()
