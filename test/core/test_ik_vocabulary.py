"""One IK result vocabulary (issue 29): ``Robot.ik`` answers ``rbd_ros.IKResult`` with the
service's names (``positions``, ``solved``, ``position_errors``, ``orientation_errors``,
``iterations``, ``attempts``); the names before (``q``, ``success``, ``position_error``,
``orientation_error``) still read for one release, each with a ``DeprecationWarning``.

On Unitree's Z1 (example-robot-data ``z1.urdf``, 6 arm joints to ``link06``): the solution's
tool placement from Pinocchio equals the target."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")
import rbd_ros  # noqa: E402
from rbd_ros.robot import IKResult, Robot  # noqa: E402

Z1 = "z1_description/urdf/z1.urdf"


def test_new_names_and_old_names_warn() -> None:
    urdf = str(example_robot_urdf(Z1))
    robot = Robot.from_urdf(urdf, tip_link="link06")
    rng = np.random.default_rng(4)
    q = rng.uniform(np.clip(robot.model.lower, -2, 2), np.clip(robot.model.upper, -2, 2), (3, robot.dof))
    T = robot.fk(q)
    batch = robot.ik(T, seeds=np.clip(q + 0.1, robot.model.lower, robot.model.upper))
    one = robot.ik(T[0])
    assert rbd_ros.IKResult is IKResult and isinstance(one, IKResult)
    assert batch.solved.all() and batch.positions.shape == (3, robot.dof) and batch.attempts.shape == (3,)
    assert one.solved is True and one.positions.shape == (robot.dof,) and one.attempts >= 1
    pm = pin.buildModelFromUrdf(urdf)
    pd = pm.createData()
    for k, sol in enumerate(batch.positions):
        qp = pin.neutral(pm)
        for j, name in enumerate(robot.joint_names):
            qp[pm.joints[pm.getJointId(name)].idx_q] = sol[j]
        pin.framesForwardKinematics(pm, pd, qp)
        np.testing.assert_allclose(pd.oMf[pm.getFrameId("link06")].homogeneous, T[k], atol=2e-6)
    for old, new in (("q", "positions"), ("success", "solved"), ("position_error", "position_errors"),
                     ("orientation_error", "orientation_errors")):
        with pytest.warns(DeprecationWarning, match=f"IKResult.{old} is deprecated, use IKResult.{new}"):
            value = getattr(one, old)
        assert value is getattr(one, new)
    with pytest.raises(AttributeError, match="no attribute 'qq'"):
        one.qq  # noqa: B018
