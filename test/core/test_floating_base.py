"""Arms on a free-floating base against Pinocchio with a free-flyer root (same URDF,
``pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())``): inverse dynamics, mass matrix,
forward dynamics, gravity, bias, integrate; zero-gravity momentum conservation of a
floating arm moving its joints (a space robot)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from rbd_ros import MdhModel, Robot
from rbd_ros.robot.floating import FloatingBaseRobot
from rbd_ros.urdf.parse import load_tree
from robots_data import BUNDLED_URDF, PANDA, UR5, example_robot_urdf

pin = pytest.importorskip("pinocchio")
TOL = 1e-9
BASE_INERTIAL = ('<inertial><origin xyz="0.01 -0.02 0.05" rpy="0.1 0.2 0.3"/><mass value="3.0"/>'
                 '<inertia ixx="0.05" ixy="0.001" ixz="0.002" iyy="0.06" iyz="-0.003" izz="0.04"/></inertial>')


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def with_base_inertial(xml: str, link: str) -> str:
    """The URDF with an inertial on the root link (the bundled arms have a massless base)."""
    xml, k = re.subn(rf'<link name="{link}"\s*/>', f'<link name="{link}">{BASE_INERTIAL}</link>', xml)
    if k == 0:
        xml, k = re.subn(rf'<link name="{link}">', f'<link name="{link}">{BASE_INERTIAL}', xml, count=1)
    assert k == 1
    return xml


def sym(M: np.ndarray) -> np.ndarray:
    return np.triu(M) + np.triu(M, 1).T


def pin_pair(xml: str, robot: FloatingBaseRobot):
    """Pinocchio free-flyer model of the same URDF (off-chain joints locked at 0), and the
    permutation of its joints onto ours."""
    full = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    lock = [full.getJointId(nm) for nm in full.names[2:] if nm not in robot.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    pm.gravity.linear[:] = robot.model.gravity
    names = list(pm.names[2:])
    order = [names.index(nm) for nm in robot.joint_names]
    return pm, pm.createData(), order


def random_state(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    quat = pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs()
    q = np.concatenate([rng.normal(size=3), quat, rng.uniform(-2, 2, n)])
    return q, rng.normal(size=6 + n), rng.normal(size=6 + n), rng.normal(size=6 + n)


CASES = [("puma560", None, None, None), ("arm7", None, None, None), ("planar2", None, None, None),
         ("panda", PANDA, None, "panda_link8"), ("ur5", UR5, None, "tool0")]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def pair(request):
    name, rel, base, tip = request.param
    path = BUNDLED_URDF / f"{name}.urdf" if rel is None else example_robot_urdf(rel)
    xml = path.read_text()
    root = load_tree(xml).root
    if not re.search(rf'<link name="{root}">\s*<inertial>', xml):
        xml = with_base_inertial(xml, root)
    robot = Robot.from_urdf(xml, base_link=base, tip_link=tip, base_type="floating")
    assert isinstance(robot, FloatingBaseRobot) and robot.nq == 7 + robot.dof and robot.nv == 6 + robot.dof
    return (robot, *pin_pair(xml, robot))


def _perm(x: np.ndarray, order: list[int], off: int) -> np.ndarray:
    """Our vector (base block of size ``off``, then our joint order) in Pinocchio's order."""
    out = x.copy()
    out[off + np.array(order)] = x[off:]
    return out


def test_dynamics_match_pinocchio_free_flyer(pair) -> None:
    robot, pm, pd, order = pair
    n = robot.dof
    rng = np.random.default_rng(3)
    vi = np.concatenate([np.arange(6), 6 + np.array(order)])  # our velocity index -> pin's
    for _ in range(4):
        q, v, a, tau = random_state(rng, n)
        qp, vp, ap, taup = _perm(q, order, 7), _perm(v, order, 6), _perm(a, order, 6), _perm(tau, order, 6)
        assert rel_err(robot.inverse_dynamics(q, v, a), pin.rnea(pm, pd, qp, vp, ap)[vi]) < TOL
        M = sym(pin.crba(pm, pd, qp))[np.ix_(vi, vi)]
        assert rel_err(robot.mass_matrix(q), M) < TOL
        assert rel_err(robot.forward_dynamics(q, v, tau), pin.aba(pm, pd, qp, vp, taup)[vi]) < TOL
        assert rel_err(robot.gravity(q), pin.computeGeneralizedGravity(pm, pd, qp)[vi]) < TOL
        assert rel_err(robot.bias(q, v), pin.nonLinearEffects(pm, pd, qp, vp)[vi]) < TOL
        qi = np.concatenate([np.arange(7), 7 + np.array(order)])
        assert rel_err(robot.integrate(q, v, 0.3), pin.integrate(pm, qp, 0.3 * vp)[qi]) < 1e-12
        # the joint block of M is the fixed-base M: independent of the base pose
        fixed = Robot(robot.model.replace(base_type="fixed"))
        assert rel_err(robot.mass_matrix(q)[6:, 6:], fixed.mass_matrix(q[7:])) < 1e-12


def test_kernels_match_public_api(pair) -> None:
    robot = pair[0]
    q, v, a, tau = random_state(np.random.default_rng(8), robot.dof)
    np.testing.assert_allclose(robot.kernels.rnea(q, v, a), robot.inverse_dynamics(q, v, a), rtol=0, atol=0)
    np.testing.assert_allclose(robot.kernels.forward_dynamics(q, v, tau), robot.forward_dynamics(q, v, tau),
                               rtol=0, atol=0)
    np.testing.assert_allclose(robot.kernels.crba(q), robot.mass_matrix(q), rtol=0, atol=0)


@pytest.mark.parametrize("integrator", ["rkmk4", "lie_euler"])
def test_space_robot_momentum_conservation(integrator: str) -> None:
    """Zero gravity, the arm moving its joints under internal torques: the world-frame
    spatial momentum of the whole system is conserved (RKMK4 to 1e-9 relative over 2 s at
    1 ms; Lie-Euler only to first order); quaternions stay unit."""
    xml = with_base_inertial((BUNDLED_URDF / "arm7.urdf").read_text(), "base_link")
    robot = Robot.from_urdf(xml, base_type="floating", gravity=(0.0, 0.0, 0.0))
    n = robot.dof
    rng = np.random.default_rng(2)
    q0 = robot.neutral()
    q0[7:] = rng.uniform(-1, 1, n)
    v0 = np.concatenate([rng.normal(size=6) * 0.3, rng.normal(size=n)])
    steps, dt = 2000, 1e-3
    t = np.arange(steps) * dt
    tau = np.zeros((steps, 6 + n))
    tau[:, 6:] = 0.2 * np.sin(np.outer(t, rng.uniform(1, 5, n)) + rng.uniform(0, 6, n))  # internal
    res = robot.simulate(q0, v0, tau, dt=dt, integrator=integrator)
    P = np.array([robot.momentum(res.q[k], res.qd[k])
                  for k in range(0, steps + 1, 50)])
    drift = np.abs(P - P[0]).max() / np.linalg.norm(P[0])
    assert np.abs(np.linalg.norm(res.q[:, 3:7], axis=1) - 1.0).max() < 1e-14
    assert np.abs(res.qd[:, 6:] - v0[6:]).max() > 1.0  # the joints really move
    if integrator == "rkmk4":
        assert drift < 1e-9, drift
    else:
        assert 1e-9 < drift < 1e-1, drift


def pin_rk4_chart(pm, pd, q: np.ndarray, v: np.ndarray, tau: np.ndarray, dt: float,
                  steps: int) -> tuple[np.ndarray, np.ndarray]:
    """RK4 in the chart with Pinocchio's ``aba`` and ``integrate`` (``pin.integrate(q, h K)``
    for the stages), constant ``tau``, Pinocchio's joint order: the state after ``steps``."""
    for _ in range(steps):
        k1 = v
        a1 = pin.aba(pm, pd, q, v, tau)
        k2 = v + dt / 2 * a1
        a2 = pin.aba(pm, pd, pin.integrate(pm, q, dt / 2 * k1), k2, tau)
        k3 = v + dt / 2 * a2
        a3 = pin.aba(pm, pd, pin.integrate(pm, q, dt / 2 * k2), k3, tau)
        k4 = v + dt * a3
        a4 = pin.aba(pm, pd, pin.integrate(pm, q, dt * k3), k4, tau)
        q = pin.integrate(pm, q, dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4))
        v = v + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
    return q, v


def test_simulate_matches_pinocchio_rk4_on_the_group() -> None:
    """Our RKMK4 against an RK4 in the chart written with Pinocchio's aba and integrate
    (pin.integrate(q, h K) for the stages): same scheme, independent dynamics and exp."""
    xml = with_base_inertial((BUNDLED_URDF / "puma560.urdf").read_text(), "base_link")
    robot = Robot.from_urdf(xml, base_type="floating")
    pm, pd, order = pin_pair(xml, robot)
    assert order == list(range(robot.dof))
    rng = np.random.default_rng(6)
    q, v, _, _ = random_state(rng, robot.dof)
    steps, dt = 200, 1e-3
    res = robot.simulate(q, v, np.zeros((steps, robot.nv)), dt=dt)
    # the chart's dexp correction is O(h^2 |V|^2)/2 per stage: compare loosely
    q, v = pin_rk4_chart(pm, pd, q, v, np.zeros(robot.nv), dt, steps)
    assert np.abs(res.q[-1] - q).max() < 1e-6
    assert np.abs(res.qd[-1] - v).max() < 1e-5


def test_model_round_trip_and_errors() -> None:
    xml = with_base_inertial((BUNDLED_URDF / "arm7.urdf").read_text(), "base_link")
    robot = Robot.from_urdf(xml, base_type="floating")
    m2 = MdhModel.from_yaml(robot.model.to_yaml())
    assert m2.base_type == "floating" and m2.base_mass == robot.model.base_mass
    np.testing.assert_array_equal(m2.base_inertia, robot.model.base_inertia)
    assert isinstance(Robot.from_yaml(robot.model.to_yaml()), FloatingBaseRobot)
    fixed = Robot.from_urdf(xml)
    assert type(fixed) is Robot and "base_type" not in fixed.model.to_dict()
    with pytest.raises(ValueError, match="positive mass"):
        Robot.from_yaml(fixed.model.to_yaml(), base_type="floating")  # the fixed model has no base body
    with pytest.raises(ValueError, match="positive mass"):
        Robot.from_urdf(BUNDLED_URDF / "arm7.urdf", base_type="floating")  # massless base_link
    m = fixed.model
    r = Robot.from_mdh(m.a, m.alpha, m.d, m.theta, m.mass, m.com, m.inertia, base_type="floating",
                       base_mass=2.0, base_inertia=np.eye(3))
    assert isinstance(r, FloatingBaseRobot) and r.nv == 6 + m.dof
    with pytest.raises(ValueError, match="base_type"):
        fixed.model.replace(base_type="hovering")
    q = robot.neutral()
    q[3:7] = [0, 0, 0, 2.0]
    with pytest.raises(ValueError, match="unit quaternion"):
        robot.inverse_dynamics(q, np.zeros(robot.nv), np.zeros(robot.nv))
    with pytest.raises(ValueError, match=r"nv = 6 \+ n"):
        robot.forward_dynamics(robot.neutral(), np.zeros(robot.dof), np.zeros(robot.nv))
    with pytest.raises(NotImplementedError):
        robot.coriolis_matrix(robot.neutral(), np.zeros(robot.nv))
    with pytest.raises(ValueError, match="unknown"):
        robot.simulate(robot.neutral(), np.zeros(robot.nv), np.zeros((3, robot.nv)), dt=1e-3, integrator="rk4")


def test_fast_path_input_forms() -> None:
    """The public calls go through compiled entry points when given float64 1-D contiguous
    arrays: strided, integer, list and read-only inputs give the same numbers, and results
    are fresh arrays."""
    xml = with_base_inertial((BUNDLED_URDF / "arm7.urdf").read_text(), "base_link")
    robot = Robot.from_urdf(xml, base_type="floating")
    q, v, a, _ = random_state(np.random.default_rng(12), robot.dof)
    ref = robot.inverse_dynamics(q, v, a)
    wide = np.zeros((robot.nq, 2))
    wide[:, 0] = q
    ro = q.copy()
    ro.setflags(write=False)
    for qq in (wide[:, 0], ro, q.tolist()):
        np.testing.assert_array_equal(robot.inverse_dynamics(qq, v, a), ref)
    np.testing.assert_array_equal(robot.mass_matrix(wide[:, 0]), robot.mass_matrix(q))
    assert robot.inverse_dynamics(q, v, a) is not robot.inverse_dynamics(q, v, a)
    z = robot.neutral().astype(int)
    np.testing.assert_allclose(robot.gravity(z), robot.gravity(robot.neutral()), rtol=0, atol=0)
