"""The ROS-free half of ``test/ros/test_mobile_services.py`` (its docstring says what both halves check):
``rbd_ros.services.DynamicsService`` called directly, in the ROS-free run."""
from __future__ import annotations

import numpy as np
import pytest
from test_mobile_base_robot import DIFF, OMNI, _pin_kkt, _pin_tool_jacobian, pin_mass, pin_q, pin_reduced

from core_oracles import REPO, rel_err

pin = pytest.importorskip("pinocchio")
from rbd_ros.robot import Robot  # noqa: E402
from rbd_ros.services import LATERAL_FORCE, DynamicsService, RequestError, base_names  # noqa: E402

TOL = 1e-9
BQ = ["base_x", "base_y", "base_yaw"]
BV = ["base_vx", "base_vy", "base_wz"]
WHEELS = ["left_wheel_joint", "right_wheel_joint"]


@pytest.fixture(scope="module")
def omni():
    r = Robot.from_urdf(OMNI, base_type="planar", tip_link="tool0")
    return (r, DynamicsService(r, max_points=500), *pin_reduced(OMNI, r.model.gravity))


@pytest.fixture(scope="module")
def diff():
    r = Robot.from_urdf(DIFF, base_type="diff_drive", tip_link="tool0")
    return (r, DynamicsService(r, max_points=500), *pin_reduced(DIFF, r.model.gravity))


def shuffled(names: list[str], seed: int) -> list[str]:
    return [names[i] for i in np.random.default_rng(seed).permutation(len(names))]


def columns(names: list[str], space: list[str]) -> list[int]:
    """Index in ``space`` (model order) of each of the caller's ``names`` that belongs to it."""
    return [space.index(nm) for nm in names if nm in space]


def random_states(r: Robot, N: int, seed: int, rolling: bool) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    Q, V, A = (rng.uniform(-1.2, 1.2, (N, r.nv)) for _ in range(3))
    Q[:, :2] *= 3.0
    if rolling:
        V[:, 1] = A[:, 1] = 0.0
    return Q, V, A


# ---- planar (holonomic) base --------------------------------------------------------------------
def test_planar_services_match_pinocchio(omni) -> None:
    r, service, pm, pd = omni
    joints = list(r.joint_names)
    names = shuffled(BQ + BV + joints, 1)
    qs, vs = BQ + joints, BV + joints
    pc, vc = columns(names, qs), columns(names, vs)
    Q, V, A = random_states(r, 3, 2, rolling=False)
    tau = service.inverse_dynamics(names, Q[:, pc].ravel(), V[:, vc].ravel(), A[:, vc].ravel())
    M = service.mass_matrix(names, Q[:, pc].ravel())
    g = service.gravity(names, Q[:, pc].ravel())
    assert tau.shape == g.shape == (3, r.nv) and M.shape == (3, r.nv, r.nv)
    for k in range(3):
        qp = pin_q(Q[k])
        assert rel_err(tau[k], pin.rnea(pm, pd, qp, V[k], A[k])[vc]) < TOL
        assert rel_err(M[k], pin_mass(pm, pd, Q[k])[np.ix_(vc, vc)]) < TOL
        assert rel_err(g[k], pin.computeGeneralizedGravity(pm, pd, qp)[vc]) < TOL
    # one state in the model's order (the client's default names) gives the same numbers
    one = service.inverse_dynamics(BQ + BV + joints, Q[0], V[0], A[0])
    assert rel_err(one[0], pin.rnea(pm, pd, pin_q(Q[0]), V[0], A[0])) < TOL


def _rk4(f, q: np.ndarray, v: np.ndarray, tau_rows: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """RK4 on (q = [x, y, yaw, joints], v = base-frame twist + rates), one torque row per step;
    q-dot = (c v_x - s v_y, s v_x + c v_y, w_z, joint rates)."""
    def qdot(q: np.ndarray, v: np.ndarray) -> np.ndarray:
        c, s = np.cos(q[2]), np.sin(q[2])
        return np.r_[c * v[0] - s * v[1], s * v[0] + c * v[1], v[2:]]

    for u in tau_rows:
        k1 = qdot(q, v), f(q, v, u)
        k2 = qdot(q + dt / 2 * k1[0], v + dt / 2 * k1[1]), f(q + dt / 2 * k1[0], v + dt / 2 * k1[1], u)
        k3 = qdot(q + dt / 2 * k2[0], v + dt / 2 * k2[1]), f(q + dt / 2 * k2[0], v + dt / 2 * k2[1], u)
        k4 = qdot(q + dt * k3[0], v + dt * k3[1]), f(q + dt * k3[0], v + dt * k3[1], u)
        q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return q, v


def test_planar_forward_simulate_vs_pinocchio_rk4(omni) -> None:
    """Two torque rows held 0.05 s each (one core simulation over the (steps, nu) input
    sequence), against RK4 on ``pin.aba``; the base moves and turns."""
    r, service, pm, pd = omni
    joints = list(r.joint_names)
    names = shuffled(BQ + BV + joints, 3)
    pc, vc = columns(names, BQ + joints), columns(names, BV + joints)
    Q, V, _ = random_states(r, 1, 4, rolling=False)
    q0, v0 = Q[0], 0.3 * V[0]
    rng = np.random.default_rng(5)
    T = rng.normal(size=(2, r.nv)) * 20.0
    dt = 1e-3
    out = service.forward_simulate(names, q0[pc], v0[vc], T[:, vc].ravel(), effort_period=0.05,
                                   dt=dt, output_period=0.05)
    assert np.allclose(out.times, [0.0, 0.05, 0.1])
    assert out.positions.shape == (3, r.nq) and out.velocities.shape == (3, r.nv)

    def aba(q: np.ndarray, v: np.ndarray, u: np.ndarray) -> np.ndarray:
        return pin.aba(pm, pd, pin_q(q), v, u)

    half = np.repeat(T, 50, axis=0)
    q1, v1 = _rk4(aba, q0, v0, half[:50], dt)
    q2, v2 = _rk4(aba, q1, v1, half[50:], dt)
    assert np.abs(out.positions[1] - q1[pc]).max() < 1e-9 and np.abs(out.positions[2] - q2[pc]).max() < 1e-9
    assert np.abs(out.velocities[2] - v2[vc]).max() < 1e-8
    assert rel_err(out.accelerations[0], aba(q0, v0, T[0])[vc]) < TOL  # step 0 under row 0
    assert np.abs(q2[:3] - q0[:3]).max() > 1e-2  # the base moved


# ---- differential drive ---------------------------------------------------------------------------
def test_diff_drive_services_match_pinocchio_kkt(diff) -> None:
    """Inverse dynamics (wheel torques, arm torques, lateral force, caller's order) fed to the
    KKT forward dynamics gives the acceleration and the same lateral force back; M (with the
    wheels' spin inertia) and g against Pinocchio's."""
    r, service, pm, pd = diff
    joints = list(r.joint_names)
    names = shuffled(BQ + BV + WHEELS + joints + [LATERAL_FORCE], 6)
    pc, vc = columns(names, BQ + joints), columns(names, BV + joints)
    uc = columns(names, WHEELS + joints + [LATERAL_FORCE])
    Q, V, A = random_states(r, 3, 7, rolling=True)
    eff = service.inverse_dynamics(names, Q[:, pc].ravel(), V[:, vc].ravel(), A[:, vc].ravel())
    assert eff.shape == (3, 2 + r.dof + 1)
    model_eff = np.empty_like(eff)
    model_eff[:, uc] = eff
    rad, sep, Ia = r.model.wheel_radius, r.model.wheel_separation, r.model.wheel_spin_inertia
    plain = [nm for nm in names if nm != LATERAL_FORCE]  # an answer of inverse_dynamics only
    M = service.mass_matrix(plain, Q[:, pc].ravel())
    g = service.gravity(plain, Q[:, pc].ravel())
    for k in range(3):
        u, lam = model_eff[k, :-1], model_eff[k, -1]
        a_ref, lam_ref = _pin_kkt(r, pm, pd, Q[k], V[k], u)
        assert rel_err(a_ref, A[k]) < TOL
        assert abs(lam - lam_ref) < TOL * max(1.0, abs(lam_ref)) and abs(lam_ref) > 1e-2
        M_ref = pin_mass(pm, pd, Q[k])
        M_ref[0, 0] += 2 * Ia / rad**2
        M_ref[2, 2] += Ia * sep**2 / (2 * rad**2)
        assert rel_err(M[k], M_ref[np.ix_(vc, vc)]) < TOL
        assert rel_err(g[k], pin.computeGeneralizedGravity(pm, pd, pin_q(Q[k]))[vc]) < TOL
    # without the lateral-force name: the wheel and arm torques alone, in the caller's order
    eff2 = service.inverse_dynamics(plain, Q[:, pc].ravel(), V[:, vc].ravel(), A[:, vc].ravel())
    assert eff2.shape == (3, 2 + r.dof)
    listed = [nm for nm in names if nm in WHEELS + joints + [LATERAL_FORCE]]  # eff's columns
    assert np.array_equal(eff2, eff[:, [j for j, nm in enumerate(listed) if nm != LATERAL_FORCE]])


def test_diff_drive_forward_simulate_vs_kkt_rk4(diff) -> None:
    """Wheel torques and arm torques, two rows; RK4 on the KKT accelerations (base_vy-dot = 0,
    so this is RK4 in the independent speeds as the core's); base_vy stays exactly 0."""
    r, service, pm, pd = diff
    joints = list(r.joint_names)
    names = shuffled(BQ + BV + WHEELS + joints, 8)
    pc, vc, uc = columns(names, BQ + joints), columns(names, BV + joints), columns(names, WHEELS + joints)
    Q, V, _ = random_states(r, 1, 9, rolling=True)
    q0, v0 = Q[0], 0.3 * V[0]
    g = r.gravity(q0)[3:]
    T = np.array([np.r_[2.0, 3.0, g], np.r_[-1.0, 2.5, g]])  # turning, the arm roughly held
    dt = 1e-3
    out = service.forward_simulate(names, q0[pc], v0[vc], T[:, uc].ravel(), effort_period=0.05,
                                   dt=dt, output_period=0.05)
    assert out.positions.shape == (3, r.nq) and out.velocities.shape == (3, r.nv)

    def kkt(q: np.ndarray, v: np.ndarray, u: np.ndarray) -> np.ndarray:
        return _pin_kkt(r, pm, pd, q, v, u)[0]

    q1, v1 = _rk4(kkt, q0, v0, np.repeat(T[:1], 50, axis=0), dt)
    q2, v2 = _rk4(kkt, q1, v1, np.repeat(T[1:], 50, axis=0), dt)
    assert np.abs(out.positions[2] - q2[pc]).max() < 1e-8
    assert np.abs(out.velocities[2] - v2[vc]).max() < 1e-7
    assert np.all(out.velocities[:, vc.index(1)] == 0.0)  # base_vy's column
    full = service.forward_simulate(names, q0[pc], v0[vc], T[:, uc].ravel(), effort_period=0.05, dt=dt)
    assert np.abs(full.velocities[:, vc.index(1)]).max() == 0.0  # every step
    assert np.abs(q2[2] - q0[2]) > 1e-3  # it turned


# ---- bad requests ----------------------------------------------------------------------------
@pytest.mark.parametrize("case, message", [
    ("joints_only", "this robot has a diff_drive base: joint_names must also list its base coordinates"),
    ("no_wheels", "a diff_drive base's efforts are its wheel torques ['left_wheel_joint', 'right_wheel_joint']"),
    ("vy", "velocities state 1: base_vy = 0.2, but a diff_drive base cannot slide sideways"),
    ("vy_accel", "accelerations state 0: base_vy = -1, but a diff_drive base cannot slide sideways"),
    ("vy_sim", "initial_velocities state 0: base_vy = 0.5"),
    ("torque_width", "efforts has 10 values, not a multiple of 9 efforts ['left_wheel_joint'"),
    ("nan", "velocities contains NaN or Inf (first at state 0, 'joint3')"),
    ("short", "positions has 9 values, not a multiple of 10 position coordinates"),
    ("lateral_in_gravity", "'base_lateral_force' (the diff_drive base's lateral ground force) is an answer of "
                           "inverse_dynamics and static_torques only"),
    ("wrench", "tool_wrench is not available for a diff_drive-base robot yet"),
    ("actuators", "include_actuators is not available for a diff_drive-base robot yet"),
    ("integrator", "integrator 'rkmk4' unknown; use one of ['rk4'] (a diff_drive-base robot)"),
    ("ik", "inverse_kinematics is not available for a diff_drive-base robot: a pose target leaves the "
           "base's redundant freedom open"),
])
def test_diff_drive_bad_requests(diff, case: str, message: str) -> None:
    r, service, *_ = diff
    joints = list(r.joint_names)
    names = BQ + BV + WHEELS + joints
    q, v, u = np.zeros((2, r.nq)), np.zeros((2, r.nv)), np.zeros(r.nu)
    with pytest.raises(RequestError) as err:
        if case == "joints_only":
            service.gravity(joints, np.zeros(r.dof))
        elif case == "no_wheels":
            service.mass_matrix(BQ + BV + joints, q[0])
        elif case == "vy":
            v[1, 1] = 0.2
            service.inverse_dynamics(names, q, v, np.zeros_like(v))
        elif case == "vy_accel":
            a = v.copy()
            a[0, 1] = -1.0
            service.inverse_dynamics(names, q, v, a)
        elif case == "vy_sim":
            v[0, 1] = 0.5
            service.forward_simulate(names, q[0], v[0], u, 0.01, 0.001)
        elif case == "torque_width":
            service.forward_simulate(names, q[0], v[0], np.zeros(r.nv), 0.01, 0.001)
        elif case == "nan":
            v[0, 5] = np.nan
            service.inverse_dynamics(names, q, v, v)
        elif case == "short":
            service.gravity(names, q[0, :-1])
        elif case == "lateral_in_gravity":
            service.gravity(names + [LATERAL_FORCE], q[0])
        elif case == "wrench":
            service.inverse_dynamics(names, q[0], v[0], v[0], tool_wrench=[1.0, 0, 0, 0, 0, 0])
        elif case == "actuators":
            service.mass_matrix(names, q[0], include_actuators=True)
        elif case == "integrator":
            service.forward_simulate(names, q[0], v[0], u, 0.01, 0.001, integrator="rkmk4")
        else:
            service.inverse_kinematics(names, np.eye(4).ravel())
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_planar_bad_requests(omni) -> None:
    r, service, *_ = omni
    joints = list(r.joint_names)
    q, v = np.zeros(r.nq), np.zeros(r.nv)
    with pytest.raises(RequestError, match=r"unknown joint names \['left_wheel_joint', 'right_wheel_joint'\]; "
                                           r"this planar-base robot takes .*wheel torques are for a diff_drive base"):
        service.forward_simulate(BQ + BV + WHEELS + joints, q, v, np.zeros(2 + r.dof), 0.01, 0.001)
    with pytest.raises(RequestError, match="unknown joint names \\['base_lateral_force'\\]"):
        service.inverse_dynamics(BQ + BV + joints + [LATERAL_FORCE], q, v, v)
    with pytest.raises(RequestError, match="this robot has a planar base: joint_names must also list"):
        service.inverse_dynamics(joints, q[3:], v[3:], v[3:])
    with pytest.raises(RequestError, match="joint_names lacks \\['base_wz'\\]"):
        service.gravity([nm for nm in BQ + BV + joints if nm != "base_wz"], q)
    # a planar base may slide sideways: base_vy is a velocity like any other
    assert service.inverse_dynamics(BQ + BV + joints, q, np.r_[0, 0.5, np.zeros(r.nv - 2)], v).shape == (1, r.nv)


def test_base_names_configurable_and_checked(diff) -> None:
    r, *_ = diff
    names = base_names(r.model, ["x", "y", "th"], ["vx", "vy", "w"], ["wl", "wr"])
    service = DynamicsService(r, names=names)
    joints = list(r.joint_names)
    q, v = np.zeros(r.nq), np.zeros(r.nv)
    tau = service.inverse_dynamics(["wr", "wl", "th", "x", "y", "vx", "vy", "w", *joints, LATERAL_FORCE], q, v, v)
    ref = DynamicsService(r).inverse_dynamics(BQ + BV + WHEELS + joints + [LATERAL_FORCE], q, v, v)
    assert np.array_equal(tau[0, :2], ref[0, 1::-1]) and np.array_equal(tau[0, 2:], ref[0, 2:])
    with pytest.raises(RequestError, match="unknown joint names \\['base_x'"):
        service.gravity(BQ + ["vx", "vy", "w", "wl", "wr"] + joints, q)
    for kw, message in [
        ({"positions": ["x", "y"]}, "base_position_names must have 3 names (x, y, yaw) for a 'diff_drive' base"),
        ({"velocities": ["vx", "vy", "joint2"]}, "names ['joint2'] repeated among the base coordinates"),
        ({"wheels": ["w"]}, "wheel_joint_names must have 2 names (left, right)"),
        ({"velocities": ["vx", "", "w"]}, "must not be empty strings"),
    ]:
        with pytest.raises(ValueError) as err:
            base_names(r.model, **kw)
        assert message in str(err.value)
    omni = Robot.from_yaml(str(REPO / "config" / "omni_arm7.yaml"))
    with pytest.raises(ValueError, match="wheel_joint_names is for a 'diff_drive' base; this one is 'planar'"):
        base_names(omni.model, wheels=["a", "b"])
    fixed = Robot.from_yaml(str(REPO / "config" / "arm7.yaml"))
    with pytest.raises(ValueError, match="base_position_names must have none for a 'fixed' base"):
        base_names(fixed.model, positions=["x", "y", "th"])


# ---- kinematics and statics ---------------------------------------------------------------------
def _pin_tool(pm, pd, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio's tool pose and whole-body tool Jacobian (world axes, base-rate columns)."""
    J = _pin_tool_jacobian(pm, pd, q)  # also places the frames
    return pd.oMf[pm.getFrameId("tool0")].homogeneous, J


@pytest.mark.parametrize("base", ("planar", "diff_drive"))
def test_forward_kinematics_jacobian_static_torques_vs_pinocchio(omni, diff, base: str) -> None:
    """ForwardKinematics (world poses), Jacobian (a column per velocity name, caller's order)
    and StaticTorques (planar: J^T m + g on the velocity names; diff_drive: the wheel torques
    ``r (F_x/2 -/+ M_z/s)`` and the lateral force ``F_y`` of Pinocchio's ``J^T m + g``)."""
    r, service, pm, pd = omni if base == "planar" else diff
    joints = list(r.joint_names)
    wheels = WHEELS if base == "diff_drive" else []
    names = shuffled(BQ + BV + wheels + joints, 11)
    pc, vc = columns(names, BQ + joints), columns(names, BV + joints)
    Q, _, _ = random_states(r, 2, 12, rolling=False)
    m = np.random.default_rng(13).normal(size=6) * 25.0
    tool, links = service.forward_kinematics(names, Q[0, pc])
    J = service.jacobian(names, Q[0, pc])
    T_ref, J_ref = _pin_tool(pm, pd, Q[0])
    assert rel_err(tool, T_ref) < TOL and links.shape == (r.dof + 1, 4, 4)
    assert rel_err(links[0], r.base_pose(Q[0]) @ r.model.base) < TOL  # frame 0: the mounting, carried
    assert J.shape == (6, r.nv) and rel_err(J, J_ref[:, vc]) < TOL
    J3 = service.jacobian(names, Q[0, pc], link=r.model.link_names[2])
    assert np.abs(J3 - J).max() > 1e-3 and np.abs(J3[:, [vc.index(3 + k) for k in range(3, r.dof)]]).max() == 0.0
    if base == "diff_drive":
        names = names + [LATERAL_FORCE]
    for gravity in (False, True):
        eff = service.static_torques(names, Q[:, pc].ravel(), m, include_gravity=gravity)
        for k in range(2):
            qp = pin_q(Q[k])
            f = _pin_tool(pm, pd, Q[k])[1].T @ m + (pin.computeGeneralizedGravity(pm, pd, qp) if gravity else 0.0)
            if base == "planar":
                assert eff.shape == (2, r.nv) and rel_err(eff[k], f[vc]) < TOL
                continue
            rad, sep = r.model.wheel_radius, r.model.wheel_separation
            model_order = np.r_[rad * (0.5 * f[0] - f[2] / sep), rad * (0.5 * f[0] + f[2] / sep), f[3:], f[1]]
            uc = columns(names, WHEELS + joints + [LATERAL_FORCE])
            assert eff.shape == (2, 2 + r.dof + 1) and rel_err(eff[k], model_order[uc]) < TOL
    # the wrench in tool axes gives the same efforts
    R = tool[:3, :3]
    a = service.static_torques(names, Q[0, pc], np.r_[R.T @ m[:3], R.T @ m[3:]], frame="tool")
    assert rel_err(a, service.static_torques(names, Q[0, pc], m)) < TOL
    with pytest.raises(RequestError, match="frame must be 'world' or 'tool'"):
        service.static_torques(names, Q[0, pc], m, frame="base")
    with pytest.raises(RequestError, match="joint_names lacks"):
        service.jacobian([nm for nm in names if nm not in ("base_vx", LATERAL_FORCE)], Q[0, pc])
