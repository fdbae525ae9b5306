"""Issue 19, the ROS-free core: no silent wrong numbers under threads, impossible inertias,
diverging simulations, a massless chain or odd inputs.

Oracles: the serial results of the same calls (thread safety), Pinocchio (the fixed inertia
changes no joint torque of PUMA's link 1), the eigenvalues of the tensors themselves, and the
MuJoCo model the bridge builds (it must hold the core's inertias)."""
from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from core_oracles import bundled, random_model
from rbd_ros.model import MdhModel
from rbd_ros.model.physical import InertiaWarning
from rbd_ros.robot import Robot, SimulationError, SingularMassMatrixError
from rbd_ros.services import DynamicsService, RequestError


@pytest.fixture(scope="module")
def robot() -> Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("error", InertiaWarning)  # the bundled PUMA is physical
        return Robot(bundled("puma560"))


# ---- item 1: one Robot from several threads ---------------------------------------------------
def test_item1_simulate_in_one_thread_does_not_corrupt_other_calls(robot: Robot) -> None:
    rng = np.random.default_rng(1)
    n = robot.dof
    qs = rng.uniform(-1, 1, (50, n))
    M_ref = [robot.mass_matrix(q) for q in qs]
    tau_ref = [robot.inverse_dynamics(q, q, q) for q in qs]
    torques = rng.uniform(-5, 5, (3000, n))
    sim_ref = robot.simulate(np.zeros(n), np.zeros(n), torques, 1e-4)
    wrong: list[str] = []
    stop = threading.Event()

    def simulating() -> None:
        while not stop.is_set():
            q, qd, _ = robot.simulate(np.zeros(n), np.zeros(n), torques, 1e-4)
            if not np.array_equal(q, sim_ref.q) or not np.array_equal(qd, sim_ref.qd):
                wrong.append("simulate")

    def computing() -> None:
        for _ in range(40):
            for q, M, tau in zip(qs, M_ref, tau_ref):
                if not np.array_equal(robot.mass_matrix(q), M):
                    wrong.append("mass_matrix")
                if not np.array_equal(robot.inverse_dynamics(q, q, q), tau):
                    wrong.append("inverse_dynamics")

    sims = [threading.Thread(target=simulating) for _ in range(2)]
    for t in sims:
        t.start()
    try:
        computing()
    finally:
        stop.set()
        for t in sims:
            t.join()
    assert wrong == []


# ---- item 5: physically impossible inertias -----------------------------------------------------
def _with_inertia(model: MdhModel, k: int, inertia: np.ndarray) -> MdhModel:
    I = model.inertia.copy()
    I[k] = inertia
    return model.replace(inertia=I)


def test_item5_indefinite_inertia_is_replaced_with_a_warning_naming_the_link() -> None:
    base = random_model(3, seed=5, actuators=False)
    bad = np.array([[0.01, 0.05, 0.0], [0.05, 0.01, 0.0], [0.0, 0.0, 0.02]])  # off-diagonal > diagonal
    assert np.linalg.eigvalsh(bad).min() < 0
    with pytest.warns(InertiaWarning, match=r"link 'link2' \(joint 'j1'\).*not positive semidefinite"):
        model = _with_inertia(base, 1, bad)
    w = np.linalg.eigvalsh(model.inertia[1])
    assert w.min() >= 0 and w[0] + w[1] >= w[2] * (1 - 1e-12)
    # the mass matrix is now positive definite everywhere we look
    robot = Robot(model)
    for q in np.random.default_rng(0).uniform(-3, 3, (20, 3)):
        assert np.linalg.eigvalsh(robot.mass_matrix(q)).min() > 0


def test_item5_triangle_inequality_fix_is_minimal_and_physical_ones_are_untouched() -> None:
    base = random_model(3, seed=6, actuators=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", InertiaWarning)  # a physical model warns about nothing
        MdhModel.from_dict(base.to_dict())
        point = _with_inertia(base, 0, np.zeros((3, 3)))  # point mass: physical
        rod = _with_inertia(base, 0, np.diag([0.0, 0.2, 0.2]))  # thin rod: physical
    assert not point.inertia[0].any() and np.array_equal(rod.inertia[0], np.diag([0.0, 0.2, 0.2]))
    puma3 = np.diag([0.066, 0.086, 0.0125])  # Armstrong et al.'s link 3: 0.066 + 0.0125 < 0.086
    with pytest.warns(InertiaWarning, match=r"triangle inequality.*0\.0125 \+ 0\.066 < 0\.086"):
        model = _with_inertia(base, 2, puma3)
    deficit = 0.086 - 0.066 - 0.0125
    np.testing.assert_allclose(np.diag(model.inertia[2]),
                               [0.066 + deficit / 2, 0.086, 0.0125 + deficit / 2], atol=1e-15)


def test_item5_bridge_simulates_the_core_model() -> None:
    pytest.importorskip("mujoco")
    from rbd_ros.sim.mujoco_model import build_mujoco_model

    base = random_model(3, seed=7, actuators=False)
    with pytest.warns(InertiaWarning):
        model = _with_inertia(base, 1, np.diag([0.066, 0.086, 0.0125]))
    m, fixups = build_mujoco_model(model)
    assert fixups == []  # nothing left for the bridge to change
    for i in range(3):  # MuJoCo's bodies carry the core's principal moments
        np.testing.assert_allclose(np.sort(m.body_inertia[i + 1]),
                                   np.linalg.eigvalsh(model.inertia[i]), rtol=1e-12)


def test_item5_puma_link1_fix_changes_no_joint_torque(tmp_path) -> None:
    """Armstrong et al. give PUMA link 1 only Izz = 0.35 (principal moments [0, 0, 0.35]);
    the fixed tensor (the bundled one) must give Pinocchio's torques of the original."""
    pin = pytest.importorskip("pinocchio")
    from robots_data import BUNDLED_URDF

    text = (BUNDLED_URDF / "puma560.urdf").read_text()
    fixed = '<inertia ixx="0.175" ixy="0.0" ixz="0.0" iyy="0.175" iyz="0.0" izz="0.35"/>'
    assert fixed in text  # the bundled PUMA is physical
    original = tmp_path / "puma560_akb.urdf"
    original.write_text(text.replace(fixed, fixed.replace("0.175", "0.0")))
    with pytest.warns(InertiaWarning, match=r"link 'link1'.*\[0\.175, 0\.175, 0\.35\]"):
        robot = Robot.from_urdf(str(original))
    pm = pin.buildModelFromUrdf(str(original))  # unfixed inertias
    pm.gravity.linear = np.array([0.0, 0.0, -9.81])
    pd = pm.createData()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, (3, 6))
        np.testing.assert_allclose(robot.inverse_dynamics(q, qd, qdd), pin.rnea(pm, pd, q, qd, qdd),
                                   atol=1e-9)


# ---- item 6: diverging simulations ---------------------------------------------------------------
@pytest.mark.parametrize("dt, torque", [(0.5, 0.0), (1e-3, 1e12)])
def test_item6_diverging_simulation_raises(robot: Robot, dt: float, torque: float) -> None:
    steps = int(round(20 / dt)) if dt > 0.1 else 200
    with pytest.raises(SimulationError, match=r"diverged at t = [0-9.e+-]+ s"):
        robot.simulate(np.zeros(6), np.zeros(6), np.full((steps, 6), torque), dt)


def test_item6_service_reports_divergence(robot: Robot) -> None:
    service = DynamicsService(robot)
    with pytest.raises(RequestError, match="diverged at t = "):
        service.forward_simulate(robot.joint_names, [0.0] * 6, [0.0] * 6, [0.0] * 6, 20.0, 0.5)


# ---- item 11: a massless chain -------------------------------------------------------------------
def _massless() -> Robot:
    return Robot.from_mdh([0, 0.5], [0, 0], [0, 0], [0, 0], [0, 0], np.zeros((2, 3)),
                          np.zeros((2, 3, 3)))


def test_item11_zero_mass_chain_names_the_singular_joints() -> None:
    robot = _massless()
    z = np.zeros(2)
    for call in (lambda: robot.forward_dynamics(z, z, z),
                 lambda: robot.forward_dynamics([0.0, 0.0], z, z),
                 lambda: robot.forward_dynamics(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2))),
                 lambda: robot.simulate(z, z, np.zeros((3, 2)), 0.01)):
        with pytest.raises(SingularMassMatrixError, match=r"singular mass matrix.*'joint1', 'joint2'"):
            call()
    service = DynamicsService(robot)
    with pytest.raises(RequestError, match="singular mass matrix"):
        service.forward_simulate(robot.joint_names, [0.0] * 2, [0.0] * 2, [0.0] * 2, 0.1, 0.01)


def test_item11_only_the_massless_end_is_named() -> None:
    robot = Robot.from_mdh([0, 0.5], [0, 0], [0, 0], [0, 0], [1.0, 0.0], [[0.1, 0, 0], [0, 0, 0]],
                           [np.eye(3) * 1e-3, np.zeros((3, 3))])
    z = np.zeros(2)
    with pytest.raises(SingularMassMatrixError, match=r"joints \['joint2'\]"):
        robot.forward_dynamics(z, z, z)


# ---- unclear messages ----------------------------------------------------------------------------
def test_unclear_python_torque_callback_is_accepted(robot: Robot) -> None:
    torques = np.random.default_rng(4).uniform(-1, 1, (40, 6))

    def table(t, q, qd, out):  # a plain Python function
        out[:] = torques[int(round(t / 1e-3))] - 1e-4 * qd

    plain = robot.simulate(np.zeros(6), np.zeros(6), table, 1e-3, steps=40)
    np.testing.assert_allclose(plain.tau, torques - 1e-4 * plain.qd[:-1], rtol=0, atol=1e-15)
    ref = robot.simulate(np.zeros(6), np.zeros(6), plain.tau, 1e-3)  # the same torques as an array
    np.testing.assert_array_equal(plain.q, ref.q)
    np.testing.assert_array_equal(plain.qdd, ref.qdd)


def test_unclear_complex_input_is_refused(robot: Robot) -> None:
    z = np.zeros(6)
    with pytest.raises(ValueError, match="q must be real numbers, got complex"):
        robot.inverse_dynamics(z + 1j, z, z)
    with pytest.raises(ValueError, match="tool_wrench must be real"):
        robot.inverse_dynamics(z, z, z, tool_wrench=[1j, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="tau must be real"):
        robot.simulate(z, z, np.zeros((2, 6), complex), 0.01)


def test_unclear_subnormal_dt_and_integrator_names_in_the_service(robot: Robot) -> None:
    service = DynamicsService(robot)
    names = robot.joint_names
    with pytest.raises(RequestError, match="integration steps requested"):
        service.forward_simulate(names, [0.0] * 6, [0.0] * 6, [0.0] * 6, 1.0, 5e-324)
    out = service.forward_simulate(names, [0.0] * 6, [0.0] * 6, [0.0] * 6, 0.01, 1e-3,
                                   integrator="semi_implicit_euler")
    ref = robot.simulate(np.zeros(6), np.zeros(6), np.zeros((10, 6)), 1e-3, "euler")
    np.testing.assert_array_equal(out.positions, ref.q)


# ---- item 7: references between the points ------------------------------------------------------
def test_item7_spline_overshooting_a_limit_between_points_is_found() -> None:
    from rbd_ros.control.trajectory import JointSpline

    lower, upper, vmax = np.array([-1.0]), np.array([1.0]), np.array([np.inf])
    # a clamped cubic spline through points close to the upper limit overshoots it
    P = np.array([[0.99], [0.2], [0.99], [0.99]])
    traj = JointSpline.from_points(0.0, [0.5, 1.0, 1.5, 2.0], P, start=(np.array([0.9]),) + (np.zeros(1),) * 2)
    q, _, _ = traj.sample(np.linspace(0, 2, 20001))  # oracle: dense sampling
    assert q.max() > 1.0 + 1e-3
    why = traj.limit_violation(["j"], lower, upper, vmax)
    assert why is not None and "position of j reaches" in why and "outside its limits [-1, 1]" in why
    peak = float(why.split("reaches ")[1].split(" ")[0])  # the worst of the first bad segment
    t = np.linspace(0, 2, 20001)
    first_bad = traj.knots[np.searchsorted(traj.knots, t[np.argmax(q[:, 0] > 1.0)]) - 1]
    seg = (t >= first_bad) & (t <= traj.knots[np.searchsorted(traj.knots, first_bad) + 1])
    assert abs(peak - q[seg, 0].max()) < 1e-5
    # the same points with more room stay inside: nothing to say
    inside = JointSpline.from_points(0.0, [1.0, 2.0], np.array([[0.5], [0.0]]),
                                     start=(np.zeros(1),) * 3)
    assert inside.sample(np.linspace(0, 2, 2001))[0].max() < 1.0
    assert inside.limit_violation(["j"], lower, upper, vmax) is None


def test_item7_a_1ns_segment_breaks_the_velocity_limit() -> None:
    from rbd_ros.control.trajectory import JointSpline

    traj = JointSpline.from_points(0.0, [1e-9], np.array([[1.5]]), start=(np.zeros(1),) * 3)
    why = traj.limit_violation(["j"], np.array([-3.0]), np.array([3.0]), np.array([2.0]))
    assert why is not None and "velocity of j" in why
    # a start already past a limit may come back (the arm sagged), not go further
    back = JointSpline.from_points(0.0, [2.0], np.array([[2.5]]), start=(np.array([3.2]), np.zeros(1), np.zeros(1)))
    assert back.limit_violation(["j"], np.array([-3.0]), np.array([3.0]), np.array([2.0])) is None
