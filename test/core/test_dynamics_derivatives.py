"""``Robot.inverse_dynamics_derivatives`` and ``Robot.forward_dynamics_derivatives``
(``algorithm.rnea_derivatives``, issue 42) against independent oracles:

* Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives`` on the same URDF, to
  1e-8 relative, on real arms no other test names (Baxter's right arm, PR2's left arm, the
  3-DoF finger_edu) and on a 13-joint random chain (the BLAS path of the forward dynamics'
  derivatives, ``BLAS_FROM``); armature and friction are zero on both sides there;
* central finite differences of our own ``inverse_dynamics`` / ``forward_dynamics`` (kernels
  checked against Pinocchio and MuJoCo elsewhere) with what Pinocchio's calls lack: a tool
  wrench, prismatic joints, armature and viscous and Coulomb friction (``qd`` away from 0).
  Complex-step differentiation is not available: the kernels are numba ``float64`` code.

Tolerance: ``rel_err`` (``max |a - b| / max(1, max |b|)``) 1e-8 against Pinocchio; 1e-6
against central differences with step 1e-6 (their truncation and rounding error).
"""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import REPO, pinocchio_model, random_model, rel_err
from rbd_ros.algorithm.rnea import PARALLEL_MIN
from rbd_ros.algorithm.rnea_derivatives import BLAS_FROM
from rbd_ros.model.urdf_export import model_to_urdf
from rbd_ros.robot import Robot, SingularMassMatrixError
from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")

ARMS = {  # (URDF, base link, tip link): chains no other test names
    "baxter_right": ("baxter_description/urdf/baxter.urdf", "torso", "right_wrist"),
    "pr2_left": ("pr2_description/urdf/pr2.urdf", "torso_lift_link", "l_wrist_roll_link"),
    "finger_edu": ("finger_edu_description/robots/finger_edu.urdf", None, None),
}


def _arm(name: str) -> tuple[Robot, object, object]:
    """Our robot and Pinocchio's model and data of the same file, the other joints locked."""
    rel, base, tip = ARMS[name]
    path = str(example_robot_urdf(rel))
    robot = Robot.from_urdf(path, base_link=base, tip_link=tip)
    full = pin.buildModelFromUrdf(path)
    lock = [full.getJointId(nm) for nm in full.names[1:] if nm not in robot.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    assert list(pm.names[1:]) == list(robot.joint_names)
    pm.gravity.linear[:] = robot.model.gravity
    return robot, pm, pm.createData()


def _pin_q(pm, q: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration of our joint angles: a continuous joint (PR2's forearm and
    wrist rolls) is ``(cos q, sin q)`` there (its tangent, and so every derivative, is ``q``)."""
    out = pin.neutral(pm)
    for j, x in zip(pm.joints[1:], q):
        if j.nq == 2:
            out[j.idx_q:j.idx_q + 2] = np.cos(x), np.sin(x)
        else:
            out[j.idx_q] = x
    return out


def _full(M: np.ndarray) -> np.ndarray:
    """Pinocchio fills the upper triangle of M (and of M^-1) only in some versions."""
    return np.triu(M) + np.triu(M, 1).T


@pytest.mark.parametrize("name", list(ARMS))
def test_real_arms_equal_pinocchio(name: str) -> None:
    robot, pm, pd = _arm(name)
    rng = np.random.default_rng(42)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.dof))
        dq, dqd, M = robot.inverse_dynamics_derivatives(q, qd, qdd)
        pq = _pin_q(pm, q)
        p_dq, p_dqd, p_M = (np.array(x) for x in pin.computeRNEADerivatives(pm, pd, pq, qd, qdd))
        assert rel_err(dq, p_dq) < 1e-8 and rel_err(dqd, p_dqd) < 1e-8 and rel_err(M, _full(p_M)) < 1e-8
        assert np.abs(p_dq).max() > 1e-3  # not a trivially zero comparison
        tau = rng.uniform(-5, 5, robot.dof)
        a_dq, a_dqd, Minv = robot.forward_dynamics_derivatives(q, qd, tau)
        p = [np.array(x) for x in pin.computeABADerivatives(pm, pd, pq, qd, tau)]
        scale = max(1.0, np.abs(p[0]).max())
        assert np.abs(a_dq - p[0]).max() / scale < 1e-8
        assert rel_err(a_dqd, p[1]) < 1e-8 and rel_err(Minv, _full(p[2])) < 1e-8


def test_long_chain_equals_pinocchio() -> None:
    """13 joints with prismatic ones: the forward dynamics' BLAS products (``BLAS_FROM``)."""
    model = random_model(13, 7, prismatic=(3, 8), actuators=False)
    assert model.dof >= BLAS_FROM
    robot = Robot(model)
    pm, pd = pinocchio_model(model, model_to_urdf(model))
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-1, 1, (3, 13))
    dq, dqd, M = robot.inverse_dynamics_derivatives(q, qd, qdd)
    p = [np.array(x) for x in pin.computeRNEADerivatives(pm, pd, q, qd, qdd)]
    assert rel_err(dq, p[0]) < 1e-8 and rel_err(dqd, p[1]) < 1e-8 and rel_err(M, _full(p[2])) < 1e-8
    tau = rng.uniform(-5, 5, 13)
    a = robot.forward_dynamics_derivatives(q, qd, tau)
    p = [np.array(x) for x in pin.computeABADerivatives(pm, pd, q, qd, tau)]
    for ours, theirs in zip(a, (p[0], p[1], _full(p[2]))):
        assert rel_err(ours, theirs) < 1e-8


def _central(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Column j = (f(x + h e_j) - f(x - h e_j)) / 2h."""
    cols = []
    for j in range(x.shape[0]):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.array(cols).T


@pytest.mark.parametrize("n, prismatic", [(5, (1, 3)), (13, (2, 9))])
def test_finite_differences_with_wrench_prismatic_and_actuators(n: int, prismatic: tuple) -> None:
    robot = Robot(random_model(n, 11 + n, prismatic=prismatic))  # armature, viscous, Coulomb
    m = robot.model
    assert np.abs(m.armature).min() > 0 and np.abs(m.viscous).min() > 0 and np.abs(m.coulomb).max() > 0
    rng = np.random.default_rng(n)
    q, qdd = rng.uniform(-1, 1, (2, n))
    qd = rng.uniform(0.2, 1, n) * rng.choice([-1, 1], n)  # away from the Coulomb step at 0
    w = rng.normal(size=6) * 5
    for wrench, act in ((None, False), (w, False), (None, True), (w, True)):
        def tau(q=q, qd=qd, qdd=qdd, wrench=wrench, act=act):
            return robot.inverse_dynamics(q, qd, qdd, tool_wrench=wrench, include_actuators=act)
        dq, dqd, M = robot.inverse_dynamics_derivatives(q, qd, qdd, tool_wrench=wrench, include_actuators=act)
        assert rel_err(dq, _central(lambda x: tau(q=x), q)) < 1e-6
        assert rel_err(dqd, _central(lambda x: tau(qd=x), qd)) < 1e-6
        assert rel_err(M, _central(lambda x: tau(qdd=x), qdd)) < 1e-6
    t = rng.uniform(-5, 5, n)
    for act in (False, True):
        def qdd_of(q=q, qd=qd, t=t, act=act):
            return robot.forward_dynamics(q, qd, t, include_actuators=act)
        a_dq, a_dqd, Minv = robot.forward_dynamics_derivatives(q, qd, t, include_actuators=act)
        assert rel_err(a_dq, _central(lambda x: qdd_of(q=x), q)) < 1e-6
        assert rel_err(a_dqd, _central(lambda x: qdd_of(qd=x), qd)) < 1e-6
        assert rel_err(Minv, _central(lambda x: qdd_of(t=x), t)) < 1e-6
        assert rel_err(Minv, np.linalg.inv(robot.mass_matrix(q, include_actuators=act))) < 1e-10


def test_coulomb_contributes_nothing_and_viscous_its_diagonal() -> None:
    """The documented choice: d(Tc sign(qd))/dqd = 0, at qd = 0 too; B on the diagonal."""
    robot = Robot(random_model(4, 5))
    rng = np.random.default_rng(0)
    q, qdd = rng.uniform(-1, 1, (2, 4))
    for qd in (np.zeros(4), rng.uniform(-1, 1, 4)):
        rigid = robot.inverse_dynamics_derivatives(q, qd, qdd)[1]
        with_act = robot.inverse_dynamics_derivatives(q, qd, qdd, include_actuators=True)[1]
        assert np.allclose(with_act - rigid, np.diag(robot.model.viscous), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [7, 13])
def test_batches_equal_single_states_bit_for_bit(n: int) -> None:
    """Serial rows and, from ``PARALLEL_MIN`` states, the ``prange`` kernel."""
    robot = Robot(random_model(n, 2 * n, prismatic=(1,)))
    rng = np.random.default_rng(1)
    for N in (3, PARALLEL_MIN):
        Q, QD, X = rng.uniform(-1, 1, (3, N, n))
        ids = robot.inverse_dynamics_derivatives(Q, QD, X)
        fds = robot.forward_dynamics_derivatives(Q, QD, X, include_actuators=True)
        assert all(a.shape == (N, n, n) for a in (*ids, *fds))
        for k in (0, N // 2, N - 1):
            for batch, single in zip(ids, robot.inverse_dynamics_derivatives(Q[k], QD[k], X[k])):
                assert np.array_equal(batch[k], single)
            for batch, single in zip(fds, robot.forward_dynamics_derivatives(Q[k], QD[k], X[k],
                                                                             include_actuators=True)):
                assert np.array_equal(batch[k], single)


def test_fast_path_equals_the_validated_path() -> None:
    """Plain float64 vectors take the checked entry point; lists the validated path."""
    robot = Robot(random_model(6, 9))
    rng = np.random.default_rng(2)
    q, qd, x = rng.uniform(-1, 1, (3, 6))
    for call in (robot.inverse_dynamics_derivatives, robot.forward_dynamics_derivatives):
        for a, b in zip(call(q, qd, x), call(list(q), list(qd), list(x))):
            assert np.array_equal(a, b)


def test_bad_input_is_named() -> None:
    robot = Robot(random_model(3, 1))
    z = np.zeros(3)
    for call in (robot.inverse_dynamics_derivatives, robot.forward_dynamics_derivatives):
        with pytest.raises(ValueError, match=r"qd must have shape \(3,\)"):
            call(z, np.zeros(2), z)
        with pytest.raises(ValueError, match="q contains NaN"):
            call(np.array([0.0, np.nan, 0.0]), z, z)
        with pytest.raises(ValueError, match="must have the same shape"):
            call(np.zeros((2, 3)), np.zeros((3, 3)), np.zeros((2, 3)))
        with pytest.raises(ValueError, match="include_actuators must be True or False"):
            call(z, z, z, include_actuators="yes")
    with pytest.raises(ValueError, match="tool_wrench must have shape"):
        robot.inverse_dynamics_derivatives(z, z, z, tool_wrench=np.zeros(3))
    with pytest.raises(ValueError, match="non-finite|overflow|NaN or Inf"):
        robot.inverse_dynamics_derivatives(z, np.full(3, 1e200), z)


def test_singular_mass_matrix_names_the_joints() -> None:
    robot = Robot.from_mdh([0, 0.5], [0, 0], [0, 0], [0, 0], [1.0, 0.0], [[0.1, 0, 0], [0, 0, 0]],
                           [np.eye(3) * 1e-3, np.zeros((3, 3))])
    z = np.zeros(2)
    for q in (z, np.zeros((2, 2))):
        with pytest.raises(SingularMassMatrixError, match=r"joints \['joint2'\]"):
            robot.forward_dynamics_derivatives(q, q, q)


def test_moving_base_is_not_the_fixed_base_kernel() -> None:
    """A floating base's derivatives are (nv, nv) (``algorithm.root_derivatives``; checked
    against Pinocchio's free-flyer in test_root_derivatives.py), its joint block of ``M`` the
    fixed-base ``M`` (the base pose does not enter it)."""
    from rbd_ros.model import MdhModel

    m = MdhModel.from_yaml(str(REPO / "config" / "arm7.yaml")).with_base_type("floating")
    robot = Robot(m.replace(base_mass=4.0, base_com=np.array([0.01, -0.02, 0.05]), base_inertia=np.eye(3) * 0.05))
    q = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, np.full(robot.dof, 0.3)]
    dq, dv, M = robot.inverse_dynamics_derivatives(q, np.zeros(robot.nv), np.zeros(robot.nv))
    assert dq.shape == dv.shape == M.shape == (robot.nv, robot.nv)
    assert np.allclose(M[6:, 6:], Robot(m.with_base_type("fixed")).mass_matrix(q[7:]), rtol=0, atol=1e-12)


def test_threads_sharing_one_robot_get_the_single_thread_answers() -> None:
    """The kernels hold the GIL on the robot's one workspace (batches: one per chunk), so
    threads calling one robot at once get what one thread gets, bit for bit."""
    import threading

    robot = Robot(random_model(7, 17, prismatic=(4,)))
    rng = np.random.default_rng(8)
    states = rng.uniform(-1, 1, (8, 3, 7))
    calls = [robot.inverse_dynamics_derivatives, robot.forward_dynamics_derivatives]
    expected = [[call(*x) for x in states] for call in calls]
    batch = [call(states[:, 0], states[:, 1], states[:, 2]) for call in calls]
    bad: list[str] = []

    def worker(seed: int) -> None:
        order = np.random.default_rng(seed)
        for _ in range(40):
            c, k = int(order.integers(2)), int(order.integers(8))
            got = calls[c](*states[k])
            if not all(np.array_equal(a, b) for a, b in zip(got, expected[c][k])):
                bad.append(f"call {c} state {k}")
            if order.integers(10) == 0:
                got = calls[c](states[:, 0], states[:, 1], states[:, 2])
                if not all(np.array_equal(a, b) for a, b in zip(got, batch[c])):
                    bad.append(f"batch {c}")

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
