"""Batch kernels of the moving bases (``algorithm.base_batch``, issue 32): a batch of states
in one call gives, row by row, exactly the single-state calls' answers (bit for bit: the same
kernel on the same numbers), and Pinocchio's on a free-flyer / planar root (the same URDF);
a bad row of a batch is refused naming the row; the dynamics services answer batches of
moving-base states with them, equal to their own single-state answers."""
from __future__ import annotations

import re

import numpy as np
import pytest

from core_oracles import REPO, rel_err
from rbd_ros import Robot
from rbd_ros.robot.floating import FloatingBaseRobot
from rbd_ros.robot.mobile import DiffDriveEfforts, MobileBaseRobot
from rbd_ros.services import DynamicsService
from rbd_ros.urdf.parse import load_tree
from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")
TOL = 1e-9
Z1 = "z1_description/urdf/z1.urdf"  # Unitree Z1, 6 DoF: named by no other test of the bases
BASE_INERTIAL = ('<inertial><origin xyz="0.02 -0.01 0.04" rpy="0.2 -0.1 0.3"/><mass value="4.0"/>'
                 '<inertia ixx="0.06" ixy="0.002" ixz="-0.001" iyy="0.05" iyz="0.003" izz="0.07"/></inertial>')


def _floating_xml(xml: str) -> str:
    """The URDF with an inertial on its root link when it has none (a free body needs one)."""
    root = load_tree(xml).root
    if re.search(rf'<link name="{root}">\s*<inertial>', xml):
        return xml
    xml, k = re.subn(rf'<link name="{root}"\s*/>', f'<link name="{root}">{BASE_INERTIAL}</link>', xml)
    if k == 0:
        xml, k = re.subn(rf'<link name="{root}">', f'<link name="{root}">{BASE_INERTIAL}', xml, count=1)
    assert k == 1
    return xml


@pytest.fixture(scope="module", params=["arm7", "z1"])
def floating(request):
    """(robot, Pinocchio free-flyer model, data, our joint order in Pinocchio's)."""
    path = REPO / "urdf" / "arm7.urdf" if request.param == "arm7" else example_robot_urdf(Z1)
    xml = _floating_xml(path.read_text())
    robot = Robot.from_urdf(xml, base_type="floating")
    assert isinstance(robot, FloatingBaseRobot)
    full = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    lock = [full.getJointId(nm) for nm in full.names[2:] if nm not in robot.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    pm.gravity.linear[:] = robot.model.gravity
    names = list(pm.names[2:])
    return robot, pm, pm.createData(), [names.index(nm) for nm in robot.joint_names]


def _floating_states(robot: FloatingBaseRobot, N: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(N, 4))
    quat /= np.linalg.norm(quat, axis=1)[:, None]
    q = np.hstack([rng.normal(size=(N, 3)), quat, rng.uniform(-2, 2, (N, robot.dof))])
    return q, rng.normal(size=(N, robot.nv)), rng.normal(size=(N, robot.nv)), rng.normal(size=(N, robot.nv))


def test_floating_batch_is_the_single_state_calls_bit_for_bit(floating) -> None:
    robot = floating[0]
    q, v, a, tau = _floating_states(robot, 37, 1)
    ID, FD = robot.inverse_dynamics(q, v, a), robot.forward_dynamics(q, v, tau)
    M, G, H = robot.mass_matrix(q), robot.gravity(q), robot.bias(q, v)
    assert ID.shape == FD.shape == G.shape == H.shape == (37, robot.nv) and M.shape == (37, robot.nv, robot.nv)
    for k in range(37):
        assert np.array_equal(ID[k], robot.inverse_dynamics(q[k], v[k], a[k]))
        assert np.array_equal(FD[k], robot.forward_dynamics(q[k], v[k], tau[k]))
        assert np.array_equal(M[k], robot.mass_matrix(q[k]))
        assert np.array_equal(G[k], robot.gravity(q[k]))
        assert np.array_equal(H[k], robot.bias(q[k], v[k]))
    MA = robot.mass_matrix(q, include_actuators=True)
    assert np.array_equal(MA[5], robot.mass_matrix(q[5], include_actuators=True))


def test_floating_batch_matches_pinocchio_free_flyer(floating) -> None:
    robot, pm, pd, order = floating
    q, v, a, tau = _floating_states(robot, 12, 2)
    qi = np.concatenate([np.arange(7), 7 + np.array(order)])  # Pinocchio's q from ours: q[..., qi]
    vi = np.concatenate([np.arange(6), 6 + np.array(order)])
    qp, vp, ap, taup = (np.empty_like(x) for x in (q, v, a, tau))
    qp[:, qi], vp[:, vi], ap[:, vi], taup[:, vi] = q, v, a, tau
    ID, FD, M = robot.inverse_dynamics(q, v, a), robot.forward_dynamics(q, v, tau), robot.mass_matrix(q)
    for k in range(12):
        assert rel_err(ID[k], pin.rnea(pm, pd, qp[k], vp[k], ap[k])[vi]) < TOL
        assert rel_err(FD[k], pin.aba(pm, pd, qp[k], vp[k], taup[k])[vi]) < TOL
        Mp = pin.crba(pm, pd, qp[k])
        assert rel_err(M[k], (np.triu(Mp) + np.triu(Mp, 1).T)[np.ix_(vi, vi)]) < TOL


@pytest.fixture(scope="module")
def ground():
    """planar and diff_drive robots of the bundled mobile arms, with Pinocchio on a planar root
    (wheels locked) for the planar one."""
    omni = Robot.from_urdf(str(REPO / "urdf" / "omni_arm7.urdf"), base_type="planar", tip_link="tool0")
    diff = Robot.from_urdf(str(REPO / "urdf" / "mobile_arm7.urdf"), base_type="diff_drive", tip_link="tool0")
    assert isinstance(omni, MobileBaseRobot) and isinstance(diff, MobileBaseRobot)
    full = pin.buildModelFromUrdf(str(REPO / "urdf" / "omni_arm7.urdf"), pin.JointModelPlanar())
    lock = [full.getJointId(j) for j in full.names[2:] if "wheel" in j]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    pm.gravity.linear[:] = omni.model.gravity
    return omni, diff, pm, pm.createData()


def _ground_states(nv: int, N: int, seed: int, rolling: bool = False) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    q, v, a = (rng.uniform(-1.2, 1.2, (N, nv)) for _ in range(3))
    q[:, :2] *= 3.0
    if rolling:
        v[:, 1] = a[:, 1] = 0.0
    return q, v, a


def test_planar_batch_per_state_and_pinocchio(ground) -> None:
    omni, _, pm, pd = ground
    q, v, a = _ground_states(omni.nv, 25, 3)
    ID, M, H, G = omni.inverse_dynamics(q, v, a), omni.mass_matrix(q), omni.bias(q, v), omni.gravity(q)
    for k in range(25):
        assert np.array_equal(ID[k], omni.inverse_dynamics(q[k], v[k], a[k]))
        assert np.array_equal(M[k], omni.mass_matrix(q[k]))
        assert np.array_equal(H[k], omni.bias(q[k], v[k]))
        assert np.array_equal(G[k], omni.gravity(q[k]))
        qp = np.concatenate([q[k, :2], [np.cos(q[k, 2]), np.sin(q[k, 2])], q[k, 3:]])
        assert rel_err(ID[k], pin.rnea(pm, pd, qp, v[k], a[k])) < TOL
        Mp = pin.crba(pm, pd, qp)
        assert rel_err(M[k], np.triu(Mp) + np.triu(Mp, 1).T) < TOL
        assert rel_err(G[k], pin.computeGeneralizedGravity(pm, pd, qp)) < TOL


def test_diff_drive_batch_is_the_single_state_calls(ground) -> None:
    diff = ground[1]
    q, v, a = _ground_states(diff.nv, 25, 4, rolling=True)
    e = diff.inverse_dynamics(q, v, a)
    assert isinstance(e, DiffDriveEfforts) and e.wheels.shape == (25, 2) and e.joints.shape == (25, diff.dof)
    M = diff.mass_matrix(q)
    for k in range(25):
        one = diff.inverse_dynamics(q[k], v[k], a[k])
        assert np.array_equal(e.wheels[k], one.wheels) and np.array_equal(e.joints[k], one.joints)
        assert e.lateral_force[k] == one.lateral_force
        assert np.array_equal(M[k], diff.mass_matrix(q[k]))
    # the efforts realise the accelerations: the constrained forward dynamics gives a back
    for k in range(0, 25, 6):
        u = np.concatenate([e.wheels[k], e.joints[k]])
        assert rel_err(diff.forward_dynamics(q[k], v[k], u), a[k]) < 1e-9


def test_bad_rows_are_refused_naming_the_row(floating, ground) -> None:
    robot = floating[0]
    q, v, a, _ = _floating_states(robot, 6, 5)
    q[4, 3:7] *= 1.1
    with pytest.raises(ValueError, match=r"q\[4, 3:7\] must be a unit quaternion"):
        robot.inverse_dynamics(q, v, a)
    q[4, 3:7] /= 1.1
    v[2, 1] = np.nan
    with pytest.raises(ValueError, match="v"):
        robot.inverse_dynamics(q, v, a)
    with pytest.raises(ValueError, match=r"\(N, "):
        robot.inverse_dynamics(q, a[:5], a)
    _, diff, _, _ = ground
    q, v, a = _ground_states(diff.nv, 5, 6, rolling=True)
    v[3, 1] = 0.2
    with pytest.raises(ValueError, match=r"v\[3\]\[1\] \(lateral, v_y\)"):
        diff.inverse_dynamics(q, v, a)
    q[0, 2] = 1e9
    with pytest.raises(ValueError, match="yaw"):
        diff.mass_matrix(q)


@pytest.mark.parametrize("kind", ["floating", "planar", "diff_drive"])
def test_services_answer_moving_base_batches_as_single_states(kind: str, floating, ground) -> None:
    """4100 states (two chunks of the service) through ``DynamicsService``: every row equal to
    the service's answer for that state alone."""
    robot = {"floating": floating[0], "planar": ground[0], "diff_drive": ground[1]}[kind]
    svc = DynamicsService(robot)
    N = 4100
    if kind == "floating":
        q, v, a, _ = _floating_states(robot, N, 7)
    else:
        q, v, a = _ground_states(robot.nv, N, 7, rolling=kind == "diff_drive")
    names = [*svc.names.positions, *svc.names.velocities, *svc.names.wheels, *robot.joint_names]
    qq = q  # rows of the position names, the rates of the velocity names (model order here)
    vv, aa = v, a
    args = (names, qq.ravel(), vv.ravel(), aa.ravel())
    many = svc.inverse_dynamics(*args)
    M = svc.mass_matrix(names, qq.ravel())
    G = svc.gravity(names, qq.ravel())
    for k in (0, 1, 4095, 4096, N - 1):
        one = svc.inverse_dynamics(names, qq[k], vv[k], aa[k])
        assert np.array_equal(many[k], one[0])
        assert np.array_equal(M[k], svc.mass_matrix(names, qq[k])[0])
        assert np.array_equal(G[k], svc.gravity(names, qq[k])[0])
