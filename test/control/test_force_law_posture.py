"""Issue 41.3: a force law given a joint reference (a FollowJointTrajectory goal) holds a
redundant arm's null space to the goal's ``q_d``: ``qdd* = J^#(a* - J' q') + (I - J^# J) z``
with ``z = q_d'' + k_null (q_d' - q') + (k_null / 2)^2 (q_d - q)`` (``force_laws._task_kernel``;
003 (6.48)-(6.49)); a pose reference keeps ``z = -k_null q'``.  Oracle: the torque by hand from
the mass matrix (CRBA) and the bias (``Robot.mass_matrix``, ``Robot.bias``), not the law's
RNEA, on the 7-DoF example arm; ``J^#`` the damped least-squares inverse of the law."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.control.laws import Reference, make_law
from rbd_ros.robot import Robot
from rbd_ros.sim.examples import SEVEN_DOF_POSE, seven_dof

RNG = np.random.default_rng(41)


@pytest.mark.parametrize("joint", [True, False], ids=["joint reference", "pose reference"])
def test_the_null_space_posture_of_a_joint_reference(joint: bool) -> None:
    robot = Robot(seven_dof())
    n = robot.dof
    q = SEVEN_DOF_POSE + 0.1 * RNG.normal(size=n)
    qd, qdr, qddr = 0.3 * RNG.normal(size=(3, n))
    qr = q + 0.1 * RNG.normal(size=n)
    law = make_law("impedance", robot, {"stiffness": [400.0] * 3 + [40.0] * 3, "damping": [40.0] * 3 + [4.0] * 3,
                                        "k_null": [8.0] * n})
    ref = Reference(n).set_joint(qr, qdr, qddr)
    if not joint:
        ref.set_task(robot.fk(qr), robot.jacobian(qr) @ qdr)
    tau = law.compute(0.0, q, qd, ref).copy()
    assert not law.saturated.any()
    J = robot.jacobian(q)
    v = J @ qd
    F = law.gains["stiffness"] * law.error + law.gains["damping"] * (law.ref_v - v)
    Jp = J.T @ np.linalg.inv(J @ J.T + law.dls_damping**2 * np.eye(6))
    k = law.gains["k_null"]
    z = qddr + k * (qdr - qd) + (k / 2) ** 2 * (qr - q) if joint else -k * qd
    qdd = Jp @ (law.ref_a - robot.jacobian_dot_times_qd(q, qd)) + (np.eye(n) - Jp @ J) @ z
    want = robot.mass_matrix(q) @ qdd + robot.bias(q, qd) + J.T @ F
    np.testing.assert_allclose(tau, want, rtol=1e-8, atol=1e-8)
