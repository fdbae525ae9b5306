"""The mass matrix in the links' own frames (``algorithm.crba.crba_local``, issue 32) against
Pinocchio's ``crba`` on the same URDF and against the world-frame composites
(``crba_world``, the former kernel): real arms no other test names, random chains with
prismatic joints on both sides of ``LOCAL_MAX``, the public call and ``robot.kernels``."""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import random_model, rel_err
from rbd_ros import Robot
from rbd_ros.algorithm import crba as C
from rbd_ros.model.urdf_export import model_to_urdf
from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")
ARMS = [("z1_description/urdf/z1.urdf", "link00", "link06"),
        ("kinova_description/robots/kinova.urdf", "j2s6s200_link_base", "j2s6s200_end_effector")]


def _pin_mass(pm, pd, q: np.ndarray) -> np.ndarray:
    M = pin.crba(pm, pd, q)
    return np.triu(M) + np.triu(M, 1).T


def _pinocchio(robot: Robot, xml: str | None = None):
    """Pinocchio's model of ``xml`` (default: our URDF export of the model), the joints off our
    chain locked at 0, and our joint order in its."""
    full = pin.buildModelFromXML(xml or model_to_urdf(robot.model))
    lock = [full.getJointId(nm) for nm in full.names[1:] if nm not in robot.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    names = list(pm.names[1:])
    return pm, pm.createData(), np.array([names.index(nm) for nm in robot.joint_names])


def _check(robot: Robot, seed: int, states: int = 8, xml: str | None = None) -> None:
    """crba_local == crba_world to 1e-13 and == Pinocchio to 1e-12."""
    pm, pd, order = _pinocchio(robot, xml)
    n = robot.dof
    rng = np.random.default_rng(seed)
    lo, hi = np.clip(robot.model.lower, -3, 3), np.clip(robot.model.upper, -3, 3)
    for _ in range(states):
        q = lo + rng.uniform(0, 1, n) * (hi - lo)
        ML, MW = np.empty((n, n)), np.empty((n, n))
        C.crba_local(robot._mp, robot._ws, q, ML)
        C.crba_world(robot._mp, robot._ws, q, MW)
        assert rel_err(ML, MW) < 1e-13
        assert np.array_equal(ML, ML.T)
        qp = np.zeros(pm.nq)  # continuous joints take (cos, sin) in Pinocchio
        for k, j in enumerate(order):
            jm = pm.joints[1 + int(j)]
            qp[jm.idx_q:jm.idx_q + jm.nq] = (np.cos(q[k]), np.sin(q[k])) if jm.nq == 2 else q[k]
        assert rel_err(ML, _pin_mass(pm, pd, qp)[np.ix_(order, order)]) < 1e-12
        M = robot.mass_matrix(q)
        assert np.array_equal(M, robot.kernels.crba(q))
        assert np.array_equal(M, ML if n <= C.LOCAL_MAX else MW)  # the dispatch


@pytest.mark.parametrize("rel, base, tip", ARMS, ids=[a[0].split("/")[0] for a in ARMS])
def test_real_arms_match_pinocchio(rel: str, base, tip) -> None:
    xml = example_robot_urdf(rel).read_text()
    robot = Robot.from_urdf(xml, base_link=base, tip_link=tip)
    _check(robot, 1, xml=xml)


@pytest.mark.parametrize("n, prismatic", [(3, (1,)), (7, (0, 4)), (C.LOCAL_MAX, (2, 13, 27)),
                                          (C.LOCAL_MAX + 1, (5, 28))])
def test_random_chains_with_prismatic_joints(n: int, prismatic: tuple[int, ...]) -> None:
    _check(Robot(random_model(n, 11 + n, prismatic=prismatic)), n, states=4)


def test_mdh_rot_sym_is_r_i_r_transpose() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        th, al = rng.uniform(-np.pi, np.pi, 2)
        A = rng.normal(size=(3, 3))
        I = A @ A.T
        Rz = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]])
        Rx = np.array([[1, 0, 0], [0, np.cos(al), -np.sin(al)], [0, np.sin(al), np.cos(al)]])
        want = Rx @ Rz @ I @ Rz.T @ Rx.T
        got = C.mdh_rot_sym((np.cos(th), np.sin(th), np.cos(al), np.sin(al)),
                            (I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]))
        np.testing.assert_allclose(got, want[np.triu_indices(3)], rtol=0, atol=1e-13 * np.abs(I).max())
