"""``retime`` imports toppra without matplotlib (``retime._toppra``): toppra imports
``matplotlib.pyplot`` at its top for its plot methods only, and that import held the GIL for
~75 ms in one stretch (0.21 s in CI), pausing a running controller's cycle while its planner
warmed up on a thread after "ready".  In a fresh interpreter: a goal retimed under a torque
limit (the oracle: the limit itself, checked along the result) leaves matplotlib unloaded; a
later ``import matplotlib.pyplot`` is the real module, and toppra's own ``plt`` reaches it."""
from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = r"""
import sys
import numpy as np
from rbd_ros.control import retime as rt
from rbd_ros.control.path_limits import PathLimits
from rbd_ros.control.trajectory import JointSpline
from rbd_ros.model import MdhModel

model = MdhModel.from_yaml(sys.argv[1])
n = model.dof
z = np.zeros((1, n))
q0 = np.clip(np.zeros(n), np.asarray(model.lower) + 0.7, np.asarray(model.upper) - 0.7)
spline = JointSpline.from_points(0.0, [0.05], (q0 + 0.6)[None], z, z, start=(q0, np.zeros(n), np.zeros(n)))
limits = PathLimits.from_model(model)
out = rt.retime(spline, limits)
assert out.duration > 0.05, out.duration  # 0.6 rad in 50 ms is beyond the limits: slowed down
assert out.check.violation is None, out.check.violation
assert "matplotlib" not in sys.modules and "matplotlib.pyplot" not in sys.modules, "matplotlib loaded"
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import toppra.algorithm.algorithm as algorithm
import toppra.parametrizer as parametrizer
assert plt.__file__.endswith("pyplot.py"), plt
assert algorithm.plt.plot is plt.plot and parametrizer.plt.plot is plt.plot
print("ok", out.duration)
"""


@pytest.mark.slow
def test_retiming_leaves_matplotlib_unloaded_and_a_later_import_real() -> None:
    from robots_data import REPO

    out = subprocess.run([sys.executable, "-c", SCRIPT, str(REPO / "config" / "arm7.yaml")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stdout + out.stderr
