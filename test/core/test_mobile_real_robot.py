"""Mobile manipulators from a real description we never tuned for: PAL's TIAGo
(example-robot-data ``tiago_no_hand.urdf``): a differential-drive base (``wheel_left_joint`` /
``wheel_right_joint``, four fixed casters), a prismatic torso, a head branch off the chain
(locked) and a 7-joint arm.

Oracles: Pinocchio on the same URDF with a planar root joint at the URDF root
(``base_footprint``), every joint off our chain locked at 0 (``pin.buildReducedModel``: wheels
and head), for the planar base to 1e-9 relative; the diff drive through a KKT solve with
Pinocchio's M and h, the wheels' spin inertia and the rolling constraint
(``test_mobile_base_robot._pin_kkt``); the URDF's own numbers for the wheels; MuJoCo for the
bridge (wheels) and the core's simulate (ideal)."""
from __future__ import annotations

import sysconfig
from pathlib import Path

import numpy as np
import pytest

from core_oracles import rel_err
from rbd_ros import Robot
from rbd_ros.model import MdhModel
from rbd_ros.urdf.errors import UrdfError

pin = pytest.importorskip("pinocchio")
from test_mobile_base_robot import _pin_kkt, pin_mass, pin_q, states  # noqa: E402

TOL = 1e-9


ROBOTS = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
if not (ROBOTS / "tiago_description" / "robots" / "tiago_no_hand.urdf").is_file():
    pytest.skip(f"example-robot-data (TIAGo's URDF) is not installed under {ROBOTS}: "
                "pip install -r requirements-test.txt", allow_module_level=True)
TIAGO_DIR = ROBOTS / "tiago_description" / "robots"
TIAGO = str(TIAGO_DIR / "tiago_no_hand.urdf")
WHEELS = {"left_wheel": "wheel_left_joint", "right_wheel": "wheel_right_joint"}
TIP = "wrist_ft_tool_link"
ARM = ("torso_lift_joint", *(f"arm_{i}_joint" for i in range(1, 8)))


def pin_planar(path: str, chain: tuple[str, ...], gravity: np.ndarray):
    """The URDF on ``pin.JointModelPlanar`` (at its root link), all joints but ``chain`` locked at 0."""
    full = pin.buildModelFromUrdf(path, pin.JointModelPlanar())
    lock = [full.getJointId(j) for j in full.names[2:] if j not in chain]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full))
    pm.gravity.linear[:] = gravity
    assert tuple(pm.names[2:]) == chain and pm.nv == 3 + len(chain)
    return full, pm, pm.createData()


def pin_tiago(gravity: np.ndarray):
    """TIAGo on ``pin.JointModelPlanar`` (at base_footprint), all but torso and arm locked at 0."""
    return pin_planar(TIAGO, ARM, gravity)


@pytest.fixture(scope="module")
def tiago():
    r = Robot.from_urdf(TIAGO, base_type="diff_drive", base_link="base_link", tip_link=TIP, **WHEELS)
    return (r, *pin_tiago(r.model.gravity))


@pytest.fixture(scope="module")
def tiago_planar(tiago):
    return Robot.from_urdf(TIAGO, base_type="planar", base_link="base_link", tip_link=TIP), *tiago[2:]


# ---- the conversion ---------------------------------------------------------------------------
def test_wheels_found_from_the_urdf_geometry(tiago) -> None:
    """Radius and separation read from the URDF: the wheel cylinders' radius 0.0985 m (= the
    height of base_link above base_footprint) and the wheel joints' y = +-0.2022 m; the spin
    inertia is the wheel link's inertia about its axle (Pinocchio's body inertia)."""
    r, full, _, _ = tiago
    m = r.model
    assert m.wheel_radius == 0.0985 and m.wheel_separation == pytest.approx(2 * 0.2022, abs=1e-15)
    assert m.wheel_joints == ("wheel_left_joint", "wheel_right_joint")
    fd = full.createData()
    pin.forwardKinematics(full, fd, pin.neutral(full))
    assert fd.oMi[full.getJointId("wheel_left_joint")].translation[2] == pytest.approx(m.wheel_radius)
    for jn in m.wheel_joints:
        inertia = full.inertias[full.getJointId(jn)]  # about the joint frame, axle = joint z
        spin = inertia.inertia[2, 2] + inertia.mass * (inertia.lever[0] ** 2 + inertia.lever[1] ** 2)
        assert m.wheel_spin_inertia == pytest.approx(spin, rel=1e-12)
    # wheels found without being named, the same
    auto = Robot.from_urdf(TIAGO, base_type="diff_drive", base_link="base_link", tip_link=TIP).model
    assert (auto.wheel_radius, auto.wheel_separation, auto.wheel_joints) == \
        (m.wheel_radius, m.wheel_separation, m.wheel_joints)


def test_whole_robot_is_carried_by_the_base(tiago) -> None:
    """Every link of the URDF rides on the robot: base body (base_link, base_footprint and
    what is fixed to it, casters, wheels, torso column) plus the chain (head lumped on the
    torso) weigh what Pinocchio's whole model weighs; the base body is Pinocchio's root body."""
    r, full, pm, _ = tiago
    m = r.model
    assert m.base_mass + m.mass.sum() == pytest.approx(pin.computeTotalMass(full), rel=1e-12)
    assert m.base_mass == pytest.approx(pm.inertias[1].mass, rel=1e-12)
    lever = pm.inertias[1].lever - [0.0, 0.0, 0.0985]  # base_footprint -> base_link
    assert rel_err(m.base_com, lever) < 1e-12
    assert m.joint_names == ARM and m.joint_type[0] == 1  # prismatic torso


def test_base_footprint_or_base_link_same_dynamics(tiago) -> None:
    """base_footprint sits on the floor under the axle midpoint, base_link on the axle: the
    same vertical line, so the same base rates and the same M and h."""
    r = tiago[0]
    f = Robot.from_urdf(TIAGO, base_type="diff_drive", base_link="base_footprint", tip_link=TIP, **WHEELS)
    assert f.model.base_mass == pytest.approx(r.model.base_mass, rel=1e-14)
    assert MdhModel.from_yaml(f.model.to_yaml()).wheel_axle_height == f.model.wheel_axle_height == 0.0985
    for q, v, _ in states(r.nv, 11, rolling=True):
        assert rel_err(f.mass_matrix(q), r.mass_matrix(q)) < 1e-12
        assert rel_err(f.bias(q, v), r.bias(q, v)) < 1e-12


@pytest.mark.parametrize("wheels", [WHEELS, {}])
def test_tip_inferred_without_the_wheels_but_not_past_the_head(wheels: dict) -> None:
    """The drive wheels (named or found) are no branches for the tip inference; TIAGo's head
    is, so the message lists the arm's end and the camera frames, not the wheels."""
    with pytest.raises(UrdfError, match="give tip_link") as err:
        Robot.from_urdf(TIAGO, base_type="diff_drive", base_link="base_link", **wheels)
    assert "wheel_" not in str(err.value) and TIP in str(err.value)
    # a base carrying only the arm: the tip is found (our mobile_arm7: its tool0)
    from core_oracles import REPO

    r = Robot.from_urdf(str(REPO / "urdf" / "mobile_arm7.urdf"), base_type="diff_drive")
    assert r.model.tip_link == "tool0" and r.model.wheel_joints == ("left_wheel_joint", "right_wheel_joint")


# ---- planar base: Pinocchio to 1e-9 ----------------------------------------------------------
@pytest.mark.parametrize("method", ("recursive", "silver", "kane", "gauss"))
def test_planar_inverse_dynamics_vs_pinocchio(tiago_planar, method: str) -> None:
    r, pm, pd = tiago_planar
    for q, v, a in states(r.nv, 1):
        q[3] = 0.1  # the torso's stroke (0 .. 0.35 m)
        assert rel_err(r.inverse_dynamics(q, v, a, method=method), pin.rnea(pm, pd, pin_q(q), v, a)) < TOL


@pytest.mark.parametrize("method", ("recursive", "kane", "gauss"))
def test_planar_mass_bias_gravity_forward_vs_pinocchio(tiago_planar, method: str) -> None:
    r, pm, pd = tiago_planar
    for q, v, a in states(r.nv, 2):
        qp = pin_q(q)
        assert rel_err(r.mass_matrix(q, method=method), pin_mass(pm, pd, q)) < TOL
        assert rel_err(r.bias(q, v), pin.rnea(pm, pd, qp, v, 0 * v)) < TOL
        assert rel_err(r.gravity(q), pin.computeGeneralizedGravity(pm, pd, qp)) < TOL
        tau = 20.0 * a
        assert rel_err(r.forward_dynamics(q, v, tau, method=method), pin.aba(pm, pd, qp, v, tau)) < TOL


# ---- differential drive: KKT with Pinocchio's M, h -------------------------------------------
@pytest.mark.parametrize("method", ("recursive", "kane", "udwadia_kalaba", "kkt"))
def test_diff_drive_forward_dynamics_vs_pinocchio_kkt(tiago, method: str) -> None:
    r, _, pm, pd = tiago
    rng = np.random.default_rng(5)
    for q, v, _ in states(r.nv, 5, rolling=True):
        u = rng.uniform(-20, 20, r.nu)
        a_ref, lam_ref = _pin_kkt(r, pm, pd, q, v, u)
        a, lam = r.constrained_dynamics(q, v, u, method=method)
        assert a[1] == 0.0 and rel_err(a, a_ref) < TOL
        assert abs(lam - lam_ref) < TOL * max(1.0, abs(lam_ref)) and abs(lam_ref) > 1e-2


def _pin_efforts(r, pm, pd, q, v, a):
    """Inverse dynamics from Pinocchio's M, h plus the wheels' spin inertia:
    ``Q = M a + h`` gives the arm torques, the lateral force ``lam = Q_y`` and the wheel torques
    realising ``(F_x, M_z) = (Q_x, Q_omega)`` (``tau_L,R = r (F_x/2 -/+ M_z/s)``)."""
    rad, sep, Ia = r.model.wheel_radius, r.model.wheel_separation, r.model.wheel_spin_inertia
    M = pin_mass(pm, pd, q)
    M[0, 0] += 2 * Ia / rad**2
    M[2, 2] += Ia * sep**2 / (2 * rad**2)
    Q = M @ a + pin.rnea(pm, pd, pin_q(q), v, 0 * v)
    wheels = rad * np.array([0.5 * Q[0] - Q[2] / sep, 0.5 * Q[0] + Q[2] / sep])
    return wheels, Q[3:], Q[1]


@pytest.mark.parametrize("method", ("recursive", "silver", "kane", "gauss"))
def test_diff_drive_inverse_dynamics_vs_pinocchio(tiago, method: str) -> None:
    """Wheel torques, arm torques and the lateral force against Pinocchio's M a + h, and the
    torques fed back through the KKT solve give the acceleration (condition of M: ~1e-7)."""
    r, _, pm, pd = tiago
    for q, v, a in states(r.nv, 6, rolling=True):
        eff = r.inverse_dynamics(q, v, a, method=method)
        wheels, joints, lam = _pin_efforts(r, pm, pd, q, v, a)
        u = np.concatenate([eff.wheels, eff.joints])
        assert rel_err(u, np.concatenate([wheels, joints])) < TOL
        assert abs(eff.lateral_force - lam) < TOL * max(1.0, abs(lam))
        a_ref, lam_ref = _pin_kkt(r, pm, pd, q, v, u)
        assert rel_err(a_ref, a) < 1e-9 * np.linalg.cond(pin_mass(pm, pd, q))
        assert rel_err(r.gravity(q), pin.computeGeneralizedGravity(pm, pd, pin_q(q))) < TOL


# ---- what else a user might try: one clear line -----------------------------------------------
def test_other_example_robots_convert_or_say_why() -> None:
    """TIAGo with a hand (fingers locked) and dual-arm TIAGo convert once the tip is named; the
    PR2 (powered casters, no diff drive) converts on a planar base and a diff_drive request
    gets one line naming the wheels."""
    hand = Robot.from_urdf(str(TIAGO_DIR / "tiago.urdf"), base_type="diff_drive", base_link="base_link",
                           tip_link="arm_tool_link", **WHEELS)
    assert hand.model.joint_names == ARM and hand.model.wheel_radius == 0.0985
    dual = Robot.from_urdf(str(TIAGO_DIR / "tiago_dual.urdf"), base_type="diff_drive", base_link="base_link",
                           tip_link="arm_left_tool_link", **WHEELS)
    assert dual.model.joint_names[1:] == tuple(f"arm_left_{i}_joint" for i in range(1, 8))
    pr2 = str(ROBOTS / "pr2_description" / "urdf" / "pr2.urdf")
    planar = Robot.from_urdf(pr2, base_type="planar", base_link="base_link", tip_link="r_gripper_palm_link")
    assert planar.model.joint_names[0] == "torso_lift_joint" and planar.nq == 3 + planar.dof
    # PR2 on its planar base (base_footprint above base_link carried; the other arm, head, laser
    # and grippers locked) against Pinocchio's planar root, 1e-9
    full, pm, pd = pin_planar(pr2, planar.model.joint_names, planar.model.gravity)
    assert planar.model.base_mass + planar.model.mass.sum() == pytest.approx(pin.computeTotalMass(full), rel=1e-12)
    unbounded = [pm.joints[i].nq == 2 for i in range(2, pm.njoints)]  # continuous: (cos, sin)

    def pin_q2(q: np.ndarray) -> np.ndarray:
        arm = [[np.cos(x), np.sin(x)] if two else [x] for x, two in zip(q[3:], unbounded)]
        return np.concatenate([pin_q(q)[:4], *arm])

    assert any(unbounded)
    for q, v, a in states(planar.nv, 7):
        q[3] = 0.1
        assert rel_err(planar.inverse_dynamics(q, v, a), pin.rnea(pm, pd, pin_q2(q), v, a)) < TOL
        M = pin.crba(pm, pd, pin_q2(q))
        assert rel_err(planar.mass_matrix(q), np.triu(M) + np.triu(M, 1).T) < TOL
    for wheels, says in (({}, "cannot tell the left drive wheel"),
                         ({"left_wheel": "fl_caster_l_wheel_joint", "right_wheel": "fl_caster_r_wheel_joint"},
                          "'fl_caster_l_wheel_joint' is a fixed joint")):
        with pytest.raises(UrdfError, match=says) as err:
            Robot.from_urdf(pr2, base_type="diff_drive", base_link="base_link", tip_link="r_gripper_palm_link",
                            **wheels)
        assert "\n" not in str(err.value)


# ---- the MuJoCo bridge's simulator on TIAGo ---------------------------------------------------
HOME = np.array([0.15, 0.2, -1.34, -0.2, 1.94, -1.57, 1.37, 0.0])  # torso up 15 cm, arm tucked
DT = 1e-3


def _quiet(*_) -> None:
    pass


def _yaw(quat_xyzw: np.ndarray) -> float:
    return 2.0 * np.arctan2(quat_xyzw[2], quat_xyzw[3])


def _sim(r, base_model: str, arm0: np.ndarray = HOME):
    from rbd_ros.sim.mobile_sim import MobileConfig, MobileSimulator
    from rbd_ros.sim.simulator import BridgeConfig

    cfg = BridgeConfig(initial_positions=[0.0, 0.0, *arm0])
    return MobileSimulator(r.model, cfg, MobileConfig(base_model=base_model), log=_quiet)


def _run(r, sim, steps: int, wheels, hold: bool = True) -> np.ndarray:
    """``steps`` steps with wheel torques ``wheels``; the arm under PD + gravity with gains
    from the model's own inertia (``M_ii (2 pi 3 Hz)^2``, critically damped) or zero torque.
    Returns the largest arm error over the run."""
    k, q0 = sim.k, sim.q0.copy()
    wn = 2 * np.pi * 3.0
    Mii = np.diag(r.mass_matrix(np.concatenate([[0.0, 0.0, 0.0], q0[k:]])))[3:]
    worst = 0.0
    for _ in range(steps):
        q, qd, _ = sim.measure()
        arm = np.zeros(r.dof)
        if hold:
            arm = r.gravity(np.concatenate([[0.0, 0.0, 0.0], q[k:]]))[3:] \
                + Mii * (wn**2 * (q0[k:] - q[k:]) - 2 * wn * qd[k:])
        assert sim.command(np.concatenate([wheels, arm]), None)
        sim.step(None)
        worst = max(worst, float(np.abs(q[k:] - q0[k:]).max()))
    return worst


@pytest.mark.parametrize("base_link", ["base_link", "base_footprint"])
def test_mujoco_tiago_mass_com_and_wheels_on_the_floor(tiago, base_link: str) -> None:
    """MuJoCo's robot weighs what the URDF does, its centre of mass is the model's, and the
    wheel axles sit one wheel radius above the floor whichever base link is the base point."""
    import mujoco

    from rbd_ros.sim.mobile_model import build_mobile_model

    r = tiago[0] if base_link == "base_link" else \
        Robot.from_urdf(TIAGO, base_type="diff_drive", base_link=base_link, tip_link=TIP, **WHEELS)
    m = r.model
    assert m.wheel_axle_height == pytest.approx(0.0 if base_link == "base_link" else 0.0985, abs=1e-15)
    mj, warnings = build_mobile_model(m, "wheels")
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    base = mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, m.base_link)
    assert mj.body_subtreemass[base] == pytest.approx(pin.computeTotalMass(tiago[1]), rel=1e-9)
    for name in ("wheel_left", "wheel_right"):
        assert d.xpos[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, name)][2] == pytest.approx(m.wheel_radius)
    # centre of mass at q = 0: Pinocchio's, on the floor frame (base_footprint = world at z 0)
    full = tiago[1]
    fd = full.createData()
    com = pin.centerOfMass(full, fd, pin.neutral(full))
    assert np.allclose(d.subtree_com[base], com, atol=1e-9)


@pytest.mark.parametrize("base_model", ["wheels", "ideal"])
def test_mujoco_tiago_holds_still_and_survives_a_limp_arm(tiago, base_model: str) -> None:
    """3 s standing with the arm under PD + gravity: the base stays put and the arm on its
    target; then 2 s more with zero arm torque (the arm falls): no divergence, the base stays
    on its wheels."""
    r = tiago[0]
    sim = _sim(r, base_model)
    err = _run(r, sim, 3000, [0.0, 0.0])
    pos, quat, lin, _ = sim.base_state()
    assert err < 1e-4 and np.hypot(*pos[:2]) < 1e-3 and abs(_yaw(quat)) < 1e-3
    z0 = pos[2]
    _run(r, sim, 2000, [0.0, 0.0], hold=False)
    q, qd, _ = sim.measure()
    pos, quat, lin, ang = sim.base_state()
    assert np.isfinite(q).all() and np.isfinite(qd).all() and sim.stats.unstable_steps == 0
    assert abs(pos[2] - z0) < 5e-3 and abs(quat[0]) < 0.02 and abs(quat[1]) < 0.02  # level, on the floor
    assert np.abs(q[sim.k:] - sim.q0[sim.k:]).max() > 0.1  # the limp arm did move


def test_mujoco_tiago_equal_wheel_torques_follow_the_core(tiago) -> None:
    """Equal wheel torques drive TIAGo forward; it turns only as the core's dynamics says (its
    arm puts the centre of mass off the centre line, coupling v_x and omega): the rolling MuJoCo
    base ends within 2 cm and 0.02 rad of the ideal one (the core) after 1.5 s."""
    r = tiago[0]
    ends = []
    for base_model in ("wheels", "ideal"):
        sim = _sim(r, base_model)
        _run(r, sim, 1500, [3.0, 3.0])
        pos, quat, lin, _ = sim.base_state()
        ends.append(np.array([pos[0], pos[1], _yaw(quat)]))
        assert lin[0] > 0.5 and abs(lin[1]) < 1e-2 and sim.stats.unstable_steps == 0
    assert ends[1][0] > 0.4
    assert np.hypot(*(ends[0][:2] - ends[1][:2])) < 0.02 and abs(ends[0][2] - ends[1][2]) < 0.02


def test_mujoco_tiago_ideal_is_the_core_simulation(tiago) -> None:
    """The ideal base stepped under a constant input ends where ``simulate`` does (1e-9)."""
    r = tiago[0]
    sim = _sim(r, "ideal")
    k = sim.k
    q0 = np.concatenate([[0.0, 0.0, 0.0], HOME])
    u = np.concatenate([[1.0, 2.0], r.gravity(q0)[3:]]) + np.random.default_rng(3).normal(size=r.nu) * 0.02
    for _ in range(200):
        assert sim.command(u, None)
        sim.step(None)
    ref = r.simulate(q0, np.zeros(r.nv), u, DT, 200)
    q, qd, _ = sim.measure()
    pos, quat, lin, ang = sim.base_state()
    assert np.allclose(q[k:], ref.q[-1][3:], atol=1e-9, rtol=0)
    assert np.allclose(qd[k:], ref.qd[-1][3:], atol=1e-9, rtol=0)
    assert np.allclose([pos[0], pos[1], _yaw(quat)], ref.q[-1][:3], atol=1e-9, rtol=0)
    assert np.allclose([lin[0], lin[1], ang[2]], ref.qd[-1][:3], atol=1e-9, rtol=0)
    assert abs(ref.q[-1][2]) > 1e-3  # it turned


# ---- the dynamics server on TIAGo (a real process) -------------------------------------------
@pytest.mark.ros
@pytest.mark.slow
def test_ros_server_tiago_inverse_dynamics(tiago, node_process) -> None:
    """``rbd-ros dynamics-server -p urdf_path:=tiago_no_hand.urdf -p base:=diff_drive ...``:
    the wheels found by the server are TIAGo's; inverse dynamics (wheel torques, torso and arm,
    lateral force) equals Pinocchio's M a + h (1e-9) and the in-process core (1e-12)."""
    from rbd_ros.ros.client import DynamicsClient
    from rbd_ros.services import LATERAL_FORCE

    r, _, pm, pd = tiago
    node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={TIAGO}", "-p", "base:=diff_drive",
                  "-p", "base_link:=base_link", "-p", f"tip_link:={TIP}", "-p", "service_namespace:=tiago"],
                 ready="dynamics_server: ready", timeout=180)
    X = states(r.nv, 12, k=3, rolling=True)
    Q, V, A = X[:, 0], X[:, 1], X[:, 2]
    with DynamicsClient(namespace="tiago", timeout=120) as c:
        m = c.get_model()
        assert m.base_type == "diff_drive"
        model = MdhModel.from_yaml(m.model_yaml)
        assert model.wheel_joints == r.model.wheel_joints and model.wheel_radius == r.model.wheel_radius
        names = c.joint_names + [LATERAL_FORCE]
        assert names[6:8] == list(r.model.wheel_joints) and names[8:-1] == list(ARM)
        eff = c.inverse_dynamics(Q, V, A, joint_names=names)
    assert eff.shape == (3, 2 + r.dof + 1)
    for k in range(3):
        wheels, joints, lam = _pin_efforts(r, pm, pd, Q[k], V[k], A[k])
        assert rel_err(eff[k], np.concatenate([wheels, joints, [lam]])) < TOL
        core = r.inverse_dynamics(Q[k], V[k], A[k])
        assert np.abs(eff[k] - np.concatenate([core.wheels, core.joints, [core.lateral_force]])).max() < 1e-12 \
            * np.abs(eff[k]).max()


def test_mujoco_tiago_casters_from_the_urdf(tiago) -> None:
    """TIAGo's four caster spheres (URDF: 0.025 m, touching the floor) become MuJoCo's casters,
    and the YAML keeps them."""
    import mujoco

    from rbd_ros.sim.mobile_model import build_mobile_model

    m = tiago[0].model
    want = sorted((x, s * 0.102, 0.025) for x in (0.1695 - 0.016, -0.1735 - 0.016) for s in (1, -1))
    assert np.allclose(m.casters, want, atol=1e-12)
    assert MdhModel.from_yaml(m.to_yaml()).casters == m.casters
    mj, _ = build_mobile_model(m, "wheels")
    d = mujoco.MjData(mj)
    mujoco.mj_forward(mj, d)
    got = sorted((*d.geom_xpos[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, f"caster{k}")][:2],
                  mj.geom_size[mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, f"caster{k}")][0])
                 for k in range(4))
    assert np.allclose(got, want, atol=1e-9)
    assert mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_GEOM, "caster4") == -1


@pytest.mark.ros
@pytest.mark.slow
def test_ros_bridge_tiago_from_the_urdf_equals_the_core(tiago, node_process) -> None:
    """``rbd-ros mujoco-bridge -p urdf_path:=tiago_no_hand.urdf -p base:=diff_drive ...`` (the
    ``base`` parameter as the dynamics server's): TIAGo's wheels and arm on /joint_states, and
    the ideal base under a constant input through the topics equals the core's ``simulate``."""
    from test_mobile_bridge_node import MobileClient, _yaw

    from ros_helpers import ros_context

    r = tiago[0]
    node_process(["mujoco-bridge", "--ros-args", "-p", f"urdf_path:={TIAGO}", "-p", "base:=diff_drive",
                  "-p", "base_link:=base_link", "-p", f"tip_link:={TIP}", "-p", "mode:=lockstep",
                  "-p", "base_model:=ideal", "-p", "stats_period:=0.0"],
                 ready="mujoco_bridge: ready (diff_drive base (ideal", timeout=120.0)
    with ros_context() as ctx:
        c = MobileClient(ctx)
        try:
            c.wait_connected(timeout=60.0)
            t0, q0, _, _ = c.latest()
            assert c.names == [*r.model.wheel_joints, *ARM]
            start = np.concatenate([[0.0, 0.0, 0.0], q0[2:]])
            u = np.concatenate([[1.0, 1.5], r.gravity(start)[3:]])
            for _ in range(100):
                t, q, qd, _ = c.step(u)
            odom = c.odom_at(t)
        finally:
            c.close()
    ref = r.simulate(start, np.zeros(r.nv), u, DT, 100)
    np.testing.assert_allclose(q[2:], ref.q[-1][3:], rtol=0, atol=1e-9)
    p = odom.pose.pose.position
    np.testing.assert_allclose([p.x, p.y, _yaw(odom.pose.pose.orientation)], ref.q[-1][:3], rtol=0, atol=1e-9)
    assert ref.q[-1][0] > 1e-4  # it drove


def test_urdf2mdh_writes_a_tiago_model_file(tiago, tmp_path, capsys) -> None:
    """``rbd-ros urdf2mdh tiago_no_hand.urdf --base-type diff_drive -o tiago.yaml``: the file
    is the robot (same M and h as the URDF's conversion; wheels and casters kept); a planar
    base with --wheels is refused in one line."""
    from rbd_ros.urdf.cli import main

    out = tmp_path / "tiago.yaml"
    assert main([TIAGO, "--base", "base_link", "--tip", TIP, "--base-type", "diff_drive", "-o", str(out)]) == 0
    assert "radius 0.0985 m, separation 0.4044 m, 4 casters" in capsys.readouterr().out
    r, f = tiago[0], Robot.from_yaml(str(out))
    assert f.model.wheel_joints == r.model.wheel_joints and f.model.casters == r.model.casters
    for q, v, _ in states(r.nv, 13, k=1, rolling=True):
        assert rel_err(f.mass_matrix(q), r.mass_matrix(q)) < 1e-14 and rel_err(f.bias(q, v), r.bias(q, v)) < 1e-14
    assert main([TIAGO, "--base", "base_link", "--tip", TIP, "--base-type", "planar", "--wheels", "a", "b"]) == 2
    assert "are for base 'diff_drive', not 'planar'" in capsys.readouterr().err
