"""Batches (issue 32): the inputs' finiteness is checked by NumPy's vectorised ``isfinite``
from ``validate._LOOP_MAX`` values on, the compiled loop below; either way, on one thread or
in parallel chunks, a NaN or Inf anywhere is refused naming the argument, and a finite batch
gives Pinocchio's rows."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros import Robot
from rbd_ros.algorithm.rnea import PARALLEL_MIN
from rbd_ros.model.urdf_export import model_to_urdf
from rbd_ros.util.validate import _LOOP_MAX
from robots_data import PANDA, example_robot_urdf

pin = pytest.importorskip("pinocchio")


@pytest.mark.parametrize("N", [3, _LOOP_MAX // 7 + 5, PARALLEL_MIN + 3])
def test_batch_refuses_non_finite_anywhere_and_matches_pinocchio(N: int) -> None:
    robot = Robot.from_urdf(str(example_robot_urdf(PANDA)), base_link="panda_link0", tip_link="panda_link8")
    pm = pin.buildModelFromXML(model_to_urdf(robot.model))
    pm.gravity.linear[:] = robot.model.gravity
    pd = pm.createData()
    rng = np.random.default_rng(N)
    Q, QD, QDD = rng.uniform(-2, 2, (3, N, robot.dof))
    tau = robot.inverse_dynamics(Q, QD, QDD)
    for k in (0, N // 2, N - 1):
        assert np.abs(tau[k] - pin.rnea(pm, pd, Q[k], QD[k], QDD[k])).max() < 1e-12
    assert np.abs(robot.gravity(Q)[-1] - pin.computeGeneralizedGravity(pm, pd, Q[-1])).max() < 1e-12
    for name, bad, what in (("qd", np.nan, "NaN"), ("qdd", np.inf, "Inf"), ("q", -np.inf, "Inf")):
        for row in (0, N // 2, N - 1):  # each parallel chunk's
            args = {"q": Q.copy(), "qd": QD.copy(), "qdd": QDD.copy()}
            args[name][row, -1] = bad
            with pytest.raises(ValueError, match=f"{name} contains {what}"):
                robot.inverse_dynamics(args["q"], args["qd"], args["qdd"])
            with pytest.raises(ValueError, match=f"{name} contains {what}"):
                robot.inverse_dynamics(args["q"], args["qd"], args["qdd"], include_actuators=True)
