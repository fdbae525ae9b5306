"""Default gains that hold everywhere the arm goes (issue 26, item 1; issue 27's gains message).

The arm: TIAGo Pro's left arm (example-robot-data, 7-DoF, no other test uses it), whose
joints 1 and 3 are colinear at joint 2 = 0 (a common 7-DoF shoulder).  Near that line the
mode in which joints 1 and 3 turn against each other has only the inertia of the link
between them (1 / (M^-1)_11 = 0.12 kg m^2 at the tour's start, 0.0022 at joint 2 = 0), so
gains sized at the start pose drove the sampled loop unstable there (pd: 32 % of the
bringup tour's cycles at an effort limit with a sign flip).  The model's damping is now
scheduled with the inertia (``rbd_ros.control.gains``, "Where the arm goes").

Oracles: the closed loop in MuJoCo (``rbd_ros.sim.closed_loop.run_tour``, lockstep 1 kHz),
and the spectral radius of the exact zero-order-hold map of the linearised multi-joint loop
``M e'' + D e' = -K_p e - K_v e'`` (matrix exponential, scipy), independent of the
column-sum rule the law uses.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

from rbd_ros.control.gains import LAWS, model_gains
from rbd_ros.control.laws import Reference, make_law
from rbd_ros.control.tour import Tour, plan_tour
from rbd_ros.robot import Robot
from rbd_ros.sim.closed_loop import run_tour
from robots_data import example_robot_urdf

TIAGO_PRO = ("tiago_pro_description/robots/tiago_pro.urdf", "torso_lift_link", "arm_left_7_link")
RATE = 1000.0


@pytest.fixture(scope="module")
def arm():
    from rbd_ros.urdf import load_model

    rel, base, tip = TIAGO_PRO
    return load_model(str(example_robot_urdf(rel)), base, tip)


@pytest.fixture(scope="module")
def crossing(arm) -> Tour:
    """From the bringup tour's start, joint 2 swings from -0.5 across 0 to +0.5 rad and back
    (every other joint moving too), 1.5 s per segment."""
    start = plan_tour(arm, segment_time=2.0).start.copy()
    start[1] = -0.5
    out = start.copy()
    out[1] = 0.5
    out[[0, 2, 4]] += [0.3, -0.3, 0.3]
    return Tour(start=start, waypoints=np.array([out, start]), segment_time=1.5,
                amplitude=np.abs(out - start), peak_torque=np.zeros(arm.dof))


def _zoh_radius(M: np.ndarray, D: np.ndarray, kp: np.ndarray, kd: np.ndarray, dt: float) -> float:
    """Spectral radius of the exact sampled (zero-order hold) map of ``(e, e')`` for
    ``M e'' + D e' = u``, ``u = -K_p e - K_v e'`` held over ``dt``."""
    return _zoh_radius_k(M, D, np.diag(kp), kd, dt)


def test_the_shoulder_is_colinear_at_joint_2_zero_and_its_inertia_collapses(arm, crossing) -> None:
    robot = Robot(arm)
    q = crossing.start.copy()
    q[1] = 0.0
    J = robot.jacobian(q)
    np.testing.assert_allclose(abs(J[3:, 0] @ J[3:, 2]), 1.0, atol=1e-9)  # axes 1, 3 parallel
    m_start = 1.0 / np.diag(np.linalg.inv(robot.mass_matrix(crossing.start, include_actuators=True)))
    m_line = 1.0 / np.diag(np.linalg.inv(robot.mass_matrix(q, include_actuators=True)))
    assert m_line[0] < m_start[0] / 10 and m_line[2] < m_start[2] / 5


def test_scheduled_damping_keeps_the_sampled_loop_stable_where_the_start_gains_do_not(arm, crossing) -> None:
    robot = Robot(arm)
    D = np.abs(arm.viscous)
    law = make_law("pd", arm, q0=crossing.start, rate=RATE)
    assert law.schedule and law.gain_source["kd"] == "model"
    kp0, kd0 = law.gains["kp"].copy(), law.gains["kd"].copy()
    q_line = crossing.start.copy()
    q_line[1] = 0.0
    M_line = robot.mass_matrix(q_line, include_actuators=True)
    assert _zoh_radius(M_line, D, kp0, kd0, 1 / RATE) > 1.5  # the start's gains: unstable there
    t = np.linspace(0.0, crossing.duration, 25)
    Q, _, _ = crossing.spline().sample(t)
    for q in [*Q, q_line]:
        law.scheduled_gains(q)
        kp, kd = law._kp_use, law._kd_use
        assert np.all(kd <= kd0) and np.all(kp <= kp0)
        rho = _zoh_radius(robot.mass_matrix(q, include_actuators=True), D, kp, kd, 1 / RATE)
        assert rho < 1.0, (q.round(3).tolist(), rho)
    law.scheduled_gains(q_line)
    assert law._kd_use[0] < 0.1 * kd0[0]  # joint 1's damping is what had to give
    # given gains are used as given (no schedule); switched off, the law uses its gains
    given = make_law("pd", arm, {"kp": kp0, "kd": kd0}, q0=crossing.start, rate=RATE)
    assert not given.schedule
    law.schedule = False
    e = np.full(arm.dof, 1e-3)
    tau = law.compute(0.0, q_line - e, np.zeros(arm.dof), Reference(arm.dof).set_joint(q_line))
    np.testing.assert_allclose(tau, np.clip(kp0 * e, -arm.effort_limit, arm.effort_limit), rtol=1e-12)


def test_every_law_with_default_gains_crosses_the_colinear_shoulder_without_a_limit_cycle(arm, crossing) -> None:
    for law in LAWS:
        r = run_tour(arm, law, tour=crossing, duration=crossing.duration + 0.3)
        where = f"tiago_pro/{law}"
        assert r.chatter < 0.01, (where, r.chatter)  # any joint: at its limit with a sign flip
        assert r.chatter_joint.max() < 0.01 and r.saturated_joint.max() < 0.01, where
        assert r.saturated < 0.01, (where, r.saturated)
        assert r.unstable_steps == 0, where
        if law == "computed_torque":
            assert r.rms_error.max() < 1e-3, (where, r.rms_error.tolist())
        elif law in ("pd_gravity", "pid", "resolved_acceleration"):
            assert r.rms_error.max() < 2e-2, (where, r.rms_error.tolist())
        if law in ("task_pd", "resolved_acceleration"):
            assert r.tool_position_rms < 5e-3, (where, r.tool_position_rms)


def test_the_notes_name_the_joints_whose_damping_the_schedule_lowers(arm, crossing) -> None:
    t = np.linspace(0.0, crossing.duration, 13)
    poses, _, _ = crossing.spline().sample(t)
    _, notes = model_gains("pd", arm, crossing.start, rate=RATE, poses=poses)
    lowered = [n for n in notes if "scheduled with the inertia" in n]
    assert any("'arm_left_1_joint'" in n for n in lowered)
    assert any("'arm_left_3_joint'" in n for n in lowered)


def test_a_massless_link_is_named_not_a_singular_matrix(arm) -> None:
    n = arm.dof
    mass = np.array(arm.mass, dtype=float)
    inertia = np.array(arm.inertia, dtype=float)
    mass[-1], inertia[-1] = 0.0, 0.0
    bare = arm.replace(mass=mass, inertia=inertia, rotor_inertia=np.zeros(n))
    for law in ("pd", "computed_torque", "task_pd"):
        with pytest.raises(ValueError, match=r"arm_left_7_joint.*arm_left_7_link.*massless"):
            make_law(law, bare, rate=RATE)


def test_task_pd_scheduled_damping_keeps_its_sampled_loop_stable(arm, crossing) -> None:
    """Task PD's joint stiffness ``J^T K_p J`` with the scheduled joint damping: no mode grows
    (radius 1 is the undamped-free self-motion, which ``J^T K_p J`` does not hold)."""
    robot = Robot(arm)
    D = np.abs(arm.viscous)
    law = make_law("task_pd", arm, q0=crossing.start, rate=RATE)
    Q, _, _ = crossing.spline().sample(np.linspace(0.0, crossing.duration, 13))
    for q in Q:
        law.scheduled_gains(q)
        J = robot.jacobian(q)
        rho = _zoh_radius_k(robot.mass_matrix(q, include_actuators=True), D,
                            J.T @ np.diag(law.gains["kp"]) @ J, law._kd_use, 1 / RATE)
        assert rho < 1.0 + 1e-9, (q.round(3).tolist(), rho)


def _zoh_radius_k(M: np.ndarray, D: np.ndarray, K: np.ndarray, kd: np.ndarray, dt: float) -> float:
    """``_zoh_radius`` with a full stiffness matrix ``K``."""
    n = len(kd)
    Minv = np.linalg.inv(M)
    Ac = np.block([[np.zeros((n, n)), np.eye(n)], [np.zeros((n, n)), -Minv @ np.diag(D)]])
    Bc = np.vstack([np.zeros((n, n)), Minv])
    E = sl.expm(np.block([[Ac, Bc], [np.zeros((n, 3 * n))]]) * dt)
    Ad, Bd = E[:2 * n, :2 * n], E[:2 * n, 2 * n:]
    return float(np.abs(np.linalg.eigvals(Ad - Bd @ np.hstack([K, np.diag(kd)]))).max())
