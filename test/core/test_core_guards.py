"""Issue 27, the ROS-free core: based robots under threads, NaN out of finite input, inputs
reinterpreted without a word, a floating base answering a fixed-base question, unclear
messages, and ``joint_wrenches(frame="tool")`` against Pinocchio.

Oracles: single-threaded answers of the same calls (threads), Pinocchio's RNEA joint forces
``data.f`` (joint wrenches), the mass matrix's null space computed here (a massless base),
the hand-made overflow (``qd = 1e200``: ``qd^2`` is beyond float64)."""
from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest

from core_oracles import REPO
from rbd_ros.lie.rigid_body import RigidBody
from rbd_ros.model import MdhModel
from rbd_ros.robot import Robot, SimulationError, SingularMassMatrixError
from rbd_ros.robot.floating import FloatingBaseRobot
from rbd_ros.urdf import load_model
from rbd_ros.urdf.cli import main as urdf2mdh
from rbd_ros.util import validate
from rbd_ros.util.validate import NonFiniteResultError

ARM7 = REPO / "urdf" / "arm7.urdf"
OMNI = str(REPO / "urdf" / "omni_arm7.urdf")
DIFF = str(REPO / "urdf" / "mobile_arm7.urdf")


def floating_arm7() -> FloatingBaseRobot:
    m = MdhModel.from_yaml(str(REPO / "config" / "arm7.yaml")).with_base_type("floating")
    r = Robot(m.replace(base_mass=4.0, base_com=np.array([0.01, -0.02, 0.05]),
                        base_inertia=np.diag([0.05, 0.06, 0.04])))
    assert isinstance(r, FloatingBaseRobot)
    return r


@pytest.fixture(scope="module")
def based() -> dict[str, Robot]:
    return {"floating": floating_arm7(), "planar": Robot.from_urdf(OMNI, base_type="planar", tip_link="tool0"),
            "diff_drive": Robot.from_urdf(DIFF, base_type="diff_drive", tip_link="tool0")}


def _state(r: Robot, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(r, FloatingBaseRobot):
        quat = rng.normal(size=4)
        q = np.concatenate([rng.normal(size=3), quat / np.linalg.norm(quat), rng.uniform(-1, 1, r.dof)])
    else:
        q = rng.uniform(-1, 1, r.nq)
    v, a = rng.uniform(-1, 1, (2, r.nv))
    if getattr(r, "wheels", None) is not None:
        v[1] = a[1] = 0.0  # no side slip
    return q, v, a


def _inputs(r: Robot, steps: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(-2, 2, (steps, getattr(r, "nu", r.nv)))


# ---- shared workspace under a released GIL ---------------------------------------------------
@pytest.mark.parametrize("kind", ["floating", "planar", "diff_drive"])
@pytest.mark.slow
def test_simulate_in_threads_corrupts_no_other_call(based, kind: str) -> None:
    """One thread simulates (the kernel releases the GIL), others compute single-state
    dynamics on the same robot: every answer equals the single-threaded one, bit for bit."""
    r = based[kind]
    rng = np.random.default_rng(3)
    states = [_state(r, rng) for _ in range(20)]
    tau_ref = [r.inverse_dynamics(q, v, a) for q, v, a in states]
    M_ref = [r.mass_matrix(q) for q, _, _ in states]
    q0, v0, _ = states[0]
    U = _inputs(r, 5000, rng) * 0.1
    sim_ref = r.simulate(q0, v0, U, 1e-4)
    wrong: list[str] = []
    stop = threading.Event()

    def simulating() -> None:
        while not stop.is_set():
            try:
                res = r.simulate(q0, v0, U, 1e-4)
            except Exception as exc:  # noqa: BLE001 - a corrupted state may diverge
                wrong.append(f"simulate raised {type(exc).__name__}")
                continue
            if not (np.array_equal(res.q, sim_ref.q) and np.array_equal(res.qd, sim_ref.qd)):
                wrong.append("simulate")

    def computing() -> None:
        t_end = time.perf_counter() + 2.0
        while time.perf_counter() < t_end:
            for (q, v, a), tau, M in zip(states, tau_ref, M_ref):
                t = r.inverse_dynamics(q, v, a)
                same = all(np.array_equal(x, y) for x, y in zip(t, tau)) if isinstance(t, tuple) \
                    else np.array_equal(t, tau)
                if not same:
                    wrong.append("inverse_dynamics")
                if not np.array_equal(r.mass_matrix(q), M):
                    wrong.append("mass_matrix")

    sims = [threading.Thread(target=simulating) for _ in range(2)]
    for t in sims:
        t.start()
    try:
        workers = [threading.Thread(target=computing) for _ in range(2)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
    finally:
        stop.set()
        for t in sims:
            t.join()
    assert not wrong, f"{len(wrong)} wrong answers, e.g. {sorted(set(wrong))}"


# ---- NaN out of finite input -----------------------------------------------------------------
def test_huge_rates_raise_naming_the_cause_fixed_base() -> None:
    r = Robot.from_yaml(str(REPO / "config" / "arm7.yaml"))
    n = r.dof
    q, big, z = np.zeros(n), np.full(n, 1e200), np.zeros(n)
    for call in (lambda: r.inverse_dynamics(q, big, z), lambda: r.forward_dynamics(q, big, z),
                 lambda: r.bias(q, big), lambda: r.kinetic_energy(q, big),
                 lambda: r.coriolis_matrix(q, big * 1e108),  # C is linear in qd: 1e200 still fits
                 lambda: r.inverse_dynamics(np.zeros((3, n)), np.full((3, n), 1e200), np.zeros((3, n))),
                 lambda: r.inverse_dynamics(list(q), list(big), list(z), include_actuators=True)):
        with pytest.raises(NonFiniteResultError, match=r"overflow float64 \(largest: \|qd\| = 1e\+(200|308)\)"):
            call()
    # the same inputs a little smaller are an ordinary answer: finite
    assert np.isfinite(r.inverse_dynamics(q, np.full(n, 1e100), z)).all()
    # and a huge tool wrench whose moment about a joint overflows (m + r x f)
    with pytest.raises(NonFiniteResultError, match=r"\|wrench\| = 1.7e\+308"):
        r.joint_wrenches(q, np.full(6, 1.7e308))


# slow on a fresh cache only: the Kane formulation (a cross-check, compiled on first use, not by
# ``rbd-ros warm``) compiles 20-34 s in a CI-like run
@pytest.mark.slow
def test_huge_rates_raise_naming_the_cause_in_a_formulation() -> None:
    r = Robot.from_yaml(str(REPO / "config" / "arm7.yaml"))
    n = r.dof
    with pytest.raises(NonFiniteResultError, match=r"overflow float64 \(largest: \|qd\| = 1e\+200\)"):
        r.inverse_dynamics(np.zeros(n), np.full(n, 1e200), np.zeros(n), method="kane")


@pytest.mark.parametrize("kind", ["floating", "planar", "diff_drive"])
def test_huge_rates_raise_naming_the_cause_on_a_base(based, kind: str) -> None:
    r = based[kind]
    q, v, a = _state(r, np.random.default_rng(1))
    v = v * 1e200
    with pytest.raises(NonFiniteResultError, match=r"\|v\| = "):
        r.inverse_dynamics(q, v, a)
    with pytest.raises(NonFiniteResultError, match=r"\|v\| = "):
        r.forward_dynamics(q, v, np.zeros(getattr(r, "nu", r.nv)))
    with pytest.raises(NonFiniteResultError):
        r.integrate(q, np.full(r.nv, 1e308) * (np.arange(r.nv) != 1), 10.0)


def test_planar_base_without_mass_is_singular_not_nan() -> None:
    r0 = Robot.from_urdf(OMNI, base_type="planar", tip_link="tool0")
    r = Robot(r0.model.replace(base_mass=0.0, base_com=np.zeros(3), base_inertia=np.zeros((3, 3)),
                               mass=np.zeros(r0.dof), inertia=np.zeros((r0.dof, 3, 3))))
    q, v, _ = _state(r, np.random.default_rng(2))
    M = r.mass_matrix(q)
    w, V = np.linalg.eigh(M)
    assert w[0] < 1e-12 * max(1.0, w[-1])  # the oracle: M is singular here
    for tau in (np.zeros(r.nv), np.ones(r.nv)):
        with pytest.raises(SingularMassMatrixError, match="base_vx"):
            r.forward_dynamics(q, v, tau)
        with pytest.raises(SingularMassMatrixError, match="base_vx"):
            r.forward_dynamics(list(q), list(v), list(tau))  # the full path too


def test_floating_simulate_and_rigid_body_diverging_raise() -> None:
    r = floating_arm7()
    q0 = r.neutral()
    with pytest.raises(SimulationError, match="diverged at t = "):
        r.simulate(q0, np.full(r.nv, 1e150), np.zeros((50, r.nv)), 0.1)
    body = RigidBody("SE3", np.diag([2.0, 2, 2, 1, 2, 3]))
    with pytest.raises(SimulationError, match="diverged at t = "):
        body.simulate(np.eye(4), np.full(6, 1e150), None, 0.1, steps=50)
    # a quiet run is untouched
    P, V = body.simulate(np.eye(4), np.ones(6) * 0.1, None, 0.01, steps=10)
    assert np.isfinite(P).all() and np.isfinite(V).all()


# ---- inputs reinterpreted without a word -----------------------------------------------------
def test_validators_one_rule_per_kind() -> None:
    for bad in (True, 2.5, "3", np.nan, None):
        with pytest.raises(ValueError, match="steps must be an integer"):
            validate.integer("steps", bad)
    assert validate.integer("steps", 3.0) == 3 and validate.integer("steps", np.int64(4)) == 4
    with pytest.raises(ValueError, match="steps must be >= 1"):
        validate.integer("steps", 0, 1)
    for bad in (True, 0.0, -1e-3, 5e-324, np.inf, np.nan, "0.1"):
        with pytest.raises(ValueError, match="dt must be a positive number"):
            validate.positive("dt", bad)
    for bad in ("no", 1, None):
        with pytest.raises(ValueError, match="include_actuators must be True or False"):
            validate.flag("include_actuators", bad)
    shear = np.eye(4)
    shear[0, 1] = 0.2
    scaled = np.diag([2.0, 2.0, 2.0, 1.0])
    mirror = np.diag([-1.0, 1.0, 1.0, 1.0])
    proj = np.eye(4)
    proj[3, 0] = 0.1
    for T in (shear, scaled, mirror, proj):
        with pytest.raises(ValueError, match="not a rigid transform"):
            validate.rigid_pose("base", T)
    for g in ([0.0, np.nan, -9.81], [0.0, -9.81], [[0.0, 0.0, -9.81]]):
        with pytest.raises(ValueError, match="gravity"):
            validate.gravity("gravity", g)


def test_entry_points_use_the_validators(based) -> None:
    r = Robot.from_yaml(str(REPO / "config" / "arm7.yaml"))
    n = r.dof
    z = np.zeros(n)
    with pytest.raises(ValueError, match="steps must be an integer"):
        r.simulate(z, z, lambda t, q, qd, out: None, 1e-3, steps=2.5)
    with pytest.raises(ValueError, match="steps must be an integer"):
        r.simulate(z, z, lambda t, q, qd, out: None, 1e-3, steps=True)
    with pytest.raises(ValueError, match="dt must be a positive number"):
        r.simulate(z, z, np.zeros((3, n)), True)
    with pytest.raises(ValueError, match="link must be an integer"):
        r.jacobian(z, link=True)
    with pytest.raises(ValueError, match="link must be an integer"):
        r.jacobian(z, link=2.5)
    with pytest.raises(ValueError, match="max_iterations must be an integer"):
        r.ik(r.fk(z), max_iterations=2.5)
    with pytest.raises(ValueError, match="position_tolerance must be a positive number"):
        r.ik(r.fk(z), position_tolerance=True)
    with pytest.raises(ValueError, match="include_actuators must be True or False"):
        r.inverse_dynamics(z, z, z, include_actuators="no")
    for rb in based.values():
        q, v, _ = _state(rb, np.random.default_rng(0))
        U = np.zeros((3, getattr(rb, "nu", rb.nv)))
        with pytest.raises(ValueError, match="dt must be a positive number"):
            rb.simulate(q, v, U, True)
        with pytest.raises(ValueError, match="steps must be an integer"):
            rb.simulate(q, v, U, 1e-3, steps=2.5)
    body = RigidBody("SE3", np.diag([2.0, 2, 2, 1, 2, 3]))
    with pytest.raises(ValueError, match="steps must be an integer"):
        body.simulate(np.eye(4), np.zeros(6), None, 0.01, steps=2.5)
    with pytest.raises(ValueError, match="not a rigid transform"):
        body.simulate(np.diag([2.0, 2, 2, 1]), np.zeros(6), None, 0.01, steps=2)
    with pytest.raises(ValueError, match="gravity"):
        RigidBody("SE3", np.eye(6), gravity=[0.0, np.nan, -9.81])
    with pytest.raises(ValueError, match="gravity must be 3 numbers"):
        RigidBody("SE3", np.eye(6), gravity=[0.0, -9.81])


def test_model_refuses_non_rigid_mount_nan_and_empty_limits() -> None:
    m = MdhModel.from_yaml(str(REPO / "config" / "arm7.yaml"))
    base = m.base.copy()
    base[:3, :3] *= 1.1
    with pytest.raises(ValueError, match="MdhModel: base is not a rigid transform"):
        m.replace(base=base)
    lower = m.lower.copy()
    lower[2] = np.nan
    with pytest.raises(ValueError, match=f"joint '{m.joint_names[2]}' has a NaN lower limit"):
        m.replace(lower=lower)
    upper = m.upper.copy()
    upper[1] = m.lower[1]
    with pytest.raises(ValueError, match=f"joint '{m.joint_names[1]}' has lower == upper"):
        m.replace(upper=upper)
    with pytest.raises(ValueError, match="gravity contains NaN"):
        m.replace(gravity=np.array([0.0, np.nan, -9.81]))
    with pytest.raises(ValueError, match="base_mass must be a finite real number, got True"):
        m.replace(base_type="planar", base_mass=True)


def test_urdf_nan_limit_and_immovable_joint_are_named() -> None:
    xml = ARM7.read_text()
    lim = re.search(r'<joint name="joint3"[\s\S]*?<limit[^>]*?lower="([^"]*)"[^>]*?upper="([^"]*)"', xml)
    lo, hi = lim.group(1), lim.group(2)
    head, tail = xml[:lim.start()], xml[lim.start():]
    nan = head + tail.replace(f'lower="{lo}"', 'lower="nan"', 1)
    with pytest.raises(ValueError, match="joint 'joint3' has a NaN lower limit"):
        load_model(nan)
    same = head + tail.replace(f'upper="{hi}"', f'upper="{lo}"', 1)
    with pytest.raises(ValueError, match="joint 'joint3' has lower == upper .*locked_joints="):
        load_model(same)
    # the fix the message gives works: the joint locked at its only position
    locked = load_model(same, locked_joints={"joint3": float(lo)})
    assert "joint3" not in locked.joint_names and locked.dof == 6


def test_urdf2mdh_refuses_a_massless_floating_base(tmp_path, capsys) -> None:
    out = tmp_path / "floating.yaml"
    assert urdf2mdh([str(ARM7), "--base-type", "floating", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "base_link 'base_link' has mass 0" in err and "<inertial>" in err and "--base" in err
    assert not out.exists()


# ---- a floating base that answers a fixed-base question ---------------------------------------
def test_based_robots_refuse_fixed_base_questions_by_name(based) -> None:
    for kind, r in based.items():
        q, v, a = _state(r, np.random.default_rng(0))
        with pytest.raises(NotImplementedError, match=f"ik is not available with a {kind}"):
            r.ik(np.eye(4))
        with pytest.raises(NotImplementedError, match="joint_wrenches|not available"):
            r.joint_wrenches(q, np.zeros(6))
    fl = based["floating"]
    q, v, a = _state(fl, np.random.default_rng(0))
    with pytest.raises(NotImplementedError, match="only the recursive route"):
        fl.inverse_dynamics(q, v, a, method="kane")
    with pytest.raises(NotImplementedError, match="only the recursive route"):
        fl.mass_matrix(q, method="lagrange")
    with pytest.raises(NotImplementedError, match="only the recursive route"):
        fl.forward_dynamics(q, v, a, method="kkt")
    with pytest.raises(NotImplementedError, match="only the recursive route"):
        fl.bias(q, v, method="kane")
    np.testing.assert_array_equal(fl.forward_dynamics(q, v, a, method="recursive"), fl.forward_dynamics(q, v, a))
    np.testing.assert_array_equal(fl.inverse_dynamics(q, v, a, method="rnea"), fl.inverse_dynamics(q, v, a))


# ---- joint_wrenches(frame="tool") against Pinocchio's RNEA joint forces ----------------------
@pytest.mark.parametrize("include_gravity", [False, True])
def test_joint_wrenches_tool_frame_vs_pinocchio(include_gravity: bool) -> None:
    """003 ch.2 / (4.36)-(4.37): with the arm still and the tool exerting ``m`` (tool axes) on
    the environment, the environment pushes ``-m`` on the tool; Pinocchio's RNEA at ``v = a =
    0`` with that external force gives in ``data.f[j]`` the wrench joint j transmits (joint
    frame, about the URDF joint origin), here moved to world axes about the MDH frame origin."""
    pin = pytest.importorskip("pinocchio")
    r = Robot.from_urdf(str(ARM7))
    pm = pin.buildModelFromUrdf(str(ARM7))
    pm.gravity.linear[:] = r.model.gravity if include_gravity else 0.0
    pd = pm.createData()
    ids = [pm.getJointId(nm) for nm in r.joint_names]
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = rng.uniform(-1.5, 1.5, r.dof)
        m_tool = rng.normal(size=6) * [10, 10, 10, 2, 2, 2]
        W = r.joint_wrenches(q, m_tool, frame="tool", include_gravity=include_gravity)
        qp = np.zeros(pm.nq)
        for i, j in enumerate(ids):
            qp[pm.idx_qs[j]] = q[i]
        pin.forwardKinematics(pm, pd, qp)
        T = r.fk(q)
        R, p = T[:3, :3], T[:3, 3]
        f_w, n_w = R @ m_tool[:3], R @ m_tool[3:]  # tool wrench in world axes, about the tool origin
        # the environment on the tool: -m, as a spatial force about the world origin
        F_world = pin.Force(-f_w, -(n_w + np.cross(p, f_w)))
        fext = [pin.Force.Zero() for _ in range(pm.njoints)]
        tool_joint = ids[-1]
        fext[tool_joint] = pd.oMi[tool_joint].actInv(F_world)  # in that joint's frame
        pin.rnea(pm, pd, qp, np.zeros(pm.nv), np.zeros(pm.nv), fext)
        P = r.link_poses(q)
        for i, j in enumerate(ids):
            Fw = pd.oMi[j].act(pd.f[j])  # about the world origin, world axes
            o = P[i + 1, :3, 3]  # MDH frame i origin
            want = np.concatenate([Fw.linear, Fw.angular - np.cross(o, Fw.linear)])
            np.testing.assert_allclose(W[i], want, atol=1e-9 * max(1.0, np.abs(want).max()))


def test_a_feedback_law_returning_nan_is_named(based) -> None:
    r = Robot.from_yaml(str(REPO / "config" / "arm7.yaml"))
    n = r.dof

    def law(t: float, q: np.ndarray, qd: np.ndarray, out: np.ndarray) -> None:
        out[:] = np.nan if t > 0.0015 else 0.0

    with pytest.raises(SimulationError, match=r"torque callback returned NaN or Inf at t = 0.002 s \(step 2\)"):
        r.simulate(np.zeros(n), np.zeros(n), law, 1e-3, steps=5)
    rb = based["planar"]
    q, v, _ = _state(rb, np.random.default_rng(0))
    with pytest.raises(SimulationError, match=r"callback returned NaN or Inf at t = 0.002 s \(step 2\)"):
        rb.simulate(q, v, law, 1e-3, steps=5)


def test_rigid_body_refuses_bad_mass_and_com() -> None:
    with pytest.raises(ValueError, match="mass must be a finite real number"):
        RigidBody("SO3", np.eye(3), mass=np.nan, com=[0, 0, 0.1])
    with pytest.raises(ValueError, match="com must be 3 numbers"):
        RigidBody("SO3", np.eye(3), mass=1.0, com=[0, 0.1])
    with pytest.raises(ValueError, match="com contains NaN"):
        RigidBody("SO3", np.eye(3), mass=1.0, com=[0, 0, np.nan])


def test_double_pendulum_with_unwritten_limits_is_refused_with_both_fixes() -> None:
    """example-robot-data's double pendulum swings freely but its revolute joints carry
    ``lower = upper = 0``: neither "fixed" nor "0..0" is right, so the message names the
    joint and both fixes; the continuous version (the right fix for it) loads and swings."""
    from robots_data import example_robot_urdf

    path = example_robot_urdf("double_pendulum_description/urdf/double_pendulum.urdf")
    with pytest.raises(ValueError, match=r"joint 'joint1' has lower == upper == 0.*make it continuous.*lock it"):
        load_model(str(path))
    xml = path.read_text().replace('type="revolute"', 'type="continuous"')
    r = Robot(load_model(xml))
    assert r.dof == 2 and np.isinf(r.model.lower).all()
    res = r.simulate(np.array([0.3, 0.0]), np.zeros(2), np.zeros((200, 2)), 1e-3)
    assert abs(res.q[-1, 0] - 0.3) > 1e-3  # it swings under gravity
