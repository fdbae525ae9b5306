"""A kernel compiled and cached by one process is loaded, not compiled again, by the next.

numba keys a cached kernel by its argument types; a function passed as an argument is typed by
the function object itself, which is new in every process, so such a key never matches again:
``integrators.integrate`` (and the ground bases' ``simulate_ground``) took a torque callback
argument and was compiled again by every process that simulated (10-60 s of CPU each on this
2-core machine, in every dynamics server, test worker and user script; its cache index had 32
entries).  The oracle is numba's own bookkeeping: the second of two identical processes has no
cache miss on any ``cache=True`` kernel of rbd_ros."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ros_helpers import REPO

SCRIPT = r"""
import json, sys
import numpy as np
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher
from rbd_ros.model import MdhModel
from rbd_ros.robot import Robot
from rbd_ros.util.resources import config_file

arm = Robot(MdhModel.from_yaml(str(config_file("arm7"))))
q = np.zeros(arm.dof)
for integrator in ("rk4", "semi_implicit_euler"):
    arm.simulate(q, q, np.zeros((3, arm.dof)), 1e-3, integrator=integrator)
arm.simulate(q, q, lambda t, q, qd, out: None, 1e-3, steps=2)  # a Python callback: per-step kernel
base = Robot(MdhModel.from_yaml(str(config_file("mobile_arm7"))))
base.simulate(base.neutral(), np.zeros(base.nv), np.zeros((2, base.nu)), 1e-3)
misses = {}
for name, module in list(sys.modules.items()):
    if name.startswith("rbd_ros"):
        for attr in list(vars(module).values()):
            if isinstance(attr, CPUDispatcher) and not isinstance(attr._cache, NullCache):
                misses[f"{attr.py_func.__module__}.{attr.py_func.__qualname__}"] = sum(attr.stats.cache_misses.values())
print(json.dumps(misses))
"""


def _misses() -> dict[str, int]:
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_second_process_compiles_no_cached_kernel_again() -> None:
    _misses()  # compiles what is not cached yet (or loads it)
    misses = _misses()
    assert "rbd_ros.algorithm.integrators.integrate" in misses  # the check sees the kernels
    compiled = {name: n for name, n in misses.items() if n}
    assert not compiled, f"compiled again in a second process (unstable cache key): {compiled}"
