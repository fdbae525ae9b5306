"""Kinematics kernels vs Pinocchio (same URDF) and finite differences."""
from __future__ import annotations

import numpy as np
import pinocchio as pin  # (a test requirement: requirements-test.txt)
import pytest

from core_oracles import bundled, pinocchio_model, random_model, rel_err
from rbd_ros.robot import Robot

TOL = 1e-9

CASES = {
    "puma560": lambda: bundled("puma560"),
    "arm7": lambda: bundled("arm7"),
    "prismatic8": lambda: random_model(8, 21, prismatic=(0, 3, 7)),
    "chain30": lambda: random_model(30, 22, prismatic=(9,)),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    model = CASES[request.param]()
    pm, pd = pinocchio_model(model)
    rng = np.random.default_rng(5)
    return Robot(model), pm, pd, rng.uniform(-2, 2, (2, 3, model.dof))


def test_fk_link_poses_and_jacobians_vs_pinocchio(case):
    robot, pm, pd, (Q, _) = case
    m = robot.model
    for q in Q:
        pin.forwardKinematics(pm, pd, q)
        pin.updateFramePlacements(pm, pd)
        pin.computeJointJacobians(pm, pd, q)
        tool = pm.getFrameId(m.tip_link)
        assert rel_err(robot.fk(q), pd.oMf[tool].homogeneous) < TOL
        poses = robot.link_poses(q)
        assert poses.shape == (m.dof + 1, 4, 4)
        np.testing.assert_allclose(poses[0], m.base, atol=1e-15)
        for i, name in enumerate(m.link_names):
            fid = pm.getFrameId(name)
            assert rel_err(poses[i + 1], pd.oMf[fid].homogeneous) < TOL
            J = pin.getFrameJacobian(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
            assert rel_err(robot.jacobian(q, link=name), J) < TOL
            assert rel_err(robot.jacobian(q, link=i + 1), J) < TOL
        Jt = pin.getFrameJacobian(pm, pd, tool, pin.LOCAL_WORLD_ALIGNED)
        assert rel_err(robot.jacobian(q), Jt) < TOL
        assert rel_err(robot.jacobian(q, link=m.tip_link), Jt) < TOL
        assert not robot.jacobian(q, link=0).any()
    assert rel_err(robot.fk(Q)[1], robot.fk(Q[1])) == 0.0
    assert rel_err(robot.jacobian(Q)[2], robot.jacobian(Q[2])) == 0.0
    P = robot.link_poses(Q)  # a batch: each state's poses, bit for bit
    assert P.shape == (len(Q), robot.dof + 1, 4, 4)
    assert all(np.array_equal(P[k], robot.link_poses(Q[k])) for k in range(len(Q)))


def test_jdot_qd_vs_pinocchio_and_finite_differences(case):
    robot, pm, pd, (Q, QD) = case
    tool = pm.getFrameId(robot.model.tip_link)
    for q, qd in zip(Q, QD):
        pin.forwardKinematics(pm, pd, q, qd, np.zeros(robot.dof))
        pin.updateFramePlacements(pm, pd)
        a = pin.getFrameClassicalAcceleration(pm, pd, tool, pin.LOCAL_WORLD_ALIGNED)
        jdqd = robot.jacobian_dot_times_qd(q, qd)
        assert rel_err(jdqd, np.r_[a.linear, a.angular]) < TOL
        h = 1e-6
        fd = (robot.jacobian(q + h * qd) - robot.jacobian(q - h * qd)) / (2 * h) @ qd
        assert rel_err(jdqd, fd) < 1e-6


def _rzyz(phi: float, th: float, psi: float) -> np.ndarray:
    def rz(a: float) -> np.ndarray:
        return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])

    ry = np.array([[np.cos(th), 0, np.sin(th)], [0, 1, 0], [-np.sin(th), 0, np.cos(th)]])
    return rz(phi) @ ry @ rz(psi)


def test_analytic_jacobian_euler_zyz(case):
    """003 (1.34)-(1.37): eta are Z-Y-Z angles of the tool rotation, Omega(eta) eta-dot = w,
    and J_a qd equals the finite-difference rate of (p, eta)."""
    robot, _, _, (Q, QD) = case
    for q, qd in zip(Q, QD):
        Ja, eta = robot.analytic_jacobian(q)
        T = robot.fk(q)
        np.testing.assert_allclose(_rzyz(*eta), T[:3, :3], atol=1e-12)
        J = robot.jacobian(q)
        np.testing.assert_allclose(Ja[:3], J[:3], atol=0)
        phi, th = eta[0], eta[1]
        Omega = np.array([[0, -np.sin(phi), np.sin(th) * np.cos(phi)],
                          [0, np.cos(phi), np.sin(th) * np.sin(phi)], [1, 0, np.cos(th)]])
        assert rel_err(Omega @ Ja[3:], J[3:]) < TOL
        h = 1e-6
        _, e1 = robot.analytic_jacobian(q + h * qd)
        _, e0 = robot.analytic_jacobian(q - h * qd)
        d = (e1 - e0 + np.pi) % (2 * np.pi) - np.pi
        assert rel_err(Ja[3:] @ qd, d / (2 * h)) < 1e-5


def test_analytic_jacobian_singularity_raises() -> None:
    robot = Robot(bundled("planar2").replace(base=np.eye(4)))  # tool z stays world z: theta = 0
    with pytest.raises(ValueError, match="singular"):
        robot.analytic_jacobian(np.array([0.3, 0.4]))
