"""Every formulation (``rbd_ros.formulations``) against RNEA / CRBA (a second, independent
formulation, itself checked against Pinocchio and MuJoCo in ``test_core_dynamics``) and,
for the real arms, against Pinocchio directly; the ``method=`` API and the CLI.

Tolerance 1e-10 relative (``rel_err``: ``max |a - b| / max(1, max |b|)``)."""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import REPO, bundled, random_model, rel_err
from rbd_ros.formulations import METHODS
from rbd_ros.formulations.cli import main as cli_main
from rbd_ros.robot import Robot
from robots_data import PANDA, UR5, example_robot_urdf

TOL = 1e-10
ID = [m for m in METHODS["inverse_dynamics"] if m != "rnea"]
MM = [m for m in METHODS["mass_matrix"] if m != "crba"]

CASES = {
    "planar2": lambda: bundled("planar2"),
    "puma560": lambda: bundled("puma560"),
    "arm7": lambda: bundled("arm7"),
    "chain2": lambda: random_model(2, 21, prismatic=(1,)),
    "chain3_all_prismatic": lambda: random_model(3, 22, prismatic=(0, 1, 2)),
    "chain5": lambda: random_model(5, 23, prismatic=(0, 3)),
    "chain8": lambda: random_model(8, 24, prismatic=(2,)),
    "chain13": lambda: random_model(13, 25, prismatic=(4, 9)),
    "chain24": lambda: random_model(24, 26, prismatic=(3, 17, 23)),
}


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    robot = Robot(CASES[request.param]())
    rng = np.random.default_rng(sum(map(ord, request.param)))
    X = rng.uniform(-2, 2, (3, 3, robot.dof))  # 3 states of (q, qd, qdd)
    W = rng.normal(size=(3, 6)) * 5.0
    return robot, X, W


@pytest.mark.parametrize("method", ID)
def test_inverse_dynamics_equals_rnea(case, method: str) -> None:
    """With the model's gravity, with and without a tool wrench."""
    robot, X, W = case
    for (q, qd, qdd), w in zip(X, W):
        ref = robot.inverse_dynamics(q, qd, qdd)
        assert rel_err(robot.inverse_dynamics(q, qd, qdd, method=method), ref) < TOL
        ref_w = robot.inverse_dynamics(q, qd, qdd, tool_wrench=w)
        assert rel_err(ref_w, ref) > 1e-6  # the wrench matters
        assert rel_err(robot.inverse_dynamics(q, qd, qdd, tool_wrench=w, method=method), ref_w) < TOL


@pytest.mark.parametrize("method", MM)
def test_mass_matrix_equals_crba(case, method: str) -> None:
    robot, X, _ = case
    for q, _, _ in X:
        M = robot.mass_matrix(q, method=method)
        assert rel_err(M, robot.mass_matrix(q)) < TOL
        assert np.linalg.eigvalsh(0.5 * (M + M.T)).min() > 0


@pytest.mark.parametrize("method", ["kane", "gauss"])
def test_coriolis_matrix_times_qd_is_h_minus_g(case, method: str) -> None:
    robot, X, _ = case
    for q, qd, _ in X:
        C = robot.coriolis_matrix(q, qd, method=method)
        assert rel_err(C @ qd, robot.bias(q, qd) - robot.gravity(q)) < TOL


@pytest.mark.parametrize("rel, base, tip", [(PANDA, "panda_link0", "panda_link8"),
                                            (UR5, "base_link", "tool0")])
def test_real_arms_vs_pinocchio(rel: str, base: str, tip: str) -> None:
    """example-robot-data arms: every method against Pinocchio on the same file (extra
    joints, Panda's fingers, locked at 0 in a reduced model)."""
    import pinocchio as pin  # a test requirement (requirements-test.txt)
    path = example_robot_urdf(rel)
    robot = Robot.from_urdf(str(path), base_link=base, tip_link=tip)
    full = pin.buildModelFromUrdf(str(path))
    lock = [full.getJointId(nm) for nm in full.names[1:] if nm not in robot.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    assert list(pm.names[1:]) == list(robot.joint_names)
    pm.gravity.linear[:] = robot.model.gravity
    pd = pm.createData()
    rng = np.random.default_rng(5)
    for _ in range(2):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.dof))
        tau = pin.rnea(pm, pd, q, qd, qdd)
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        for m in ID:
            assert rel_err(robot.inverse_dynamics(q, qd, qdd, method=m), tau) < TOL, m
        for m in MM:
            assert rel_err(robot.mass_matrix(q, method=m), M) < TOL, m
        w = rng.normal(size=6)
        ref_w = robot.inverse_dynamics(q, qd, qdd, tool_wrench=w)
        for m in ID:
            assert rel_err(robot.inverse_dynamics(q, qd, qdd, tool_wrench=w, method=m), ref_w) < TOL, m


def test_method_api_shapes_checks_and_actuators() -> None:
    robot = Robot(random_model(4, 31, prismatic=(2,)))
    rng = np.random.default_rng(1)
    Q, QD, QDD = rng.uniform(-1, 1, (3, 5, 4))
    for m in ID:
        batch = robot.inverse_dynamics(Q, QD, QDD, method=m)
        assert batch.shape == (5, 4)
        assert rel_err(batch, robot.inverse_dynamics(Q, QD, QDD)) < TOL
        act = robot.inverse_dynamics(Q[0], QD[0], QDD[0], include_actuators=True, method=m)
        assert rel_err(act, robot.inverse_dynamics(Q[0], QD[0], QDD[0], include_actuators=True)) < TOL
    for m in MM:
        assert robot.mass_matrix(Q, method=m).shape == (5, 4, 4)
        assert rel_err(robot.mass_matrix(Q[1], include_actuators=True, method=m),
                       robot.mass_matrix(Q[1], include_actuators=True)) < TOL
    for m in ("kane", "gauss"):
        assert robot.coriolis_matrix(Q, QD, method=m).shape == (5, 4, 4)
    with pytest.raises(ValueError, match="unknown inverse_dynamics method 'newton'; valid: rnea, lagrange, "
                                         "lagrange_recursive, silver, kane, dual_quaternion, gauss"):
        robot.inverse_dynamics(Q[0], QD[0], QDD[0], method="newton")
    with pytest.raises(ValueError, match="valid: crba, lagrange, kane, gauss"):
        robot.mass_matrix(Q[0], method="silver")
    with pytest.raises(ValueError, match="valid: spatial, kane, gauss"):
        robot.coriolis_matrix(Q[0], QD[0], method="lagrange")
    with pytest.raises(ValueError, match=r"qd must have shape \(4,\)"):
        robot.inverse_dynamics(Q[0], QD[0, :3], QDD[0], method="silver")
    with pytest.raises(ValueError, match="qdd contains NaN"):
        robot.inverse_dynamics(Q[0], QD[0], np.full(4, np.nan), method="gauss")
    with pytest.raises(ValueError, match="tool_wrench must have shape"):
        robot.inverse_dynamics(Q[0], QD[0], QDD[0], tool_wrench=np.zeros(3), method="kane")


def test_cli(capsys) -> None:
    urdf = str(REPO / "urdf" / "puma560.urdf")
    assert cli_main([urdf, "--states", "2"]) == 0
    out = capsys.readouterr().out
    for m in {*ID, *MM, "kane", "gauss"}:
        assert m in out
    assert "FAIL" not in out
    assert cli_main([urdf, "--states", "2", "--tol", "0"]) == 1  # any rounding difference fails
    assert cli_main([urdf, "--tip", "no_such_link"]) == 2
    assert "no_such_link" in capsys.readouterr().err
