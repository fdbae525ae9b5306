"""The force integral on a new target (``_ForceLaw.set_target_wrench``, review item #10):
driven in free space to the velocity bound pressing 10 N down, the target flipped to 10 N up
(or set to zero), the hybrid and the admittance law must turn the reference round within a few
cycles, not keep going the old way on the wound integral (before the fix: about 0.1 s).

The laws run on the joint-limited UR5 at a fixed pose with the model's gains, along z only:
the admittance's reference speed is its own outer loop's ``offset_v`` (free space: ``m = 0``,
nothing of the arm enters it); the hybrid's tool speed follows the task equation of the
module docstring, ``r'' = a* + F / Lambda`` (``m = 0``, ``Lambda`` the arm's inertia along z
at the pose, from the mass matrix and the Jacobian).  Oracle: the laws' equations written out
by hand (module docstring) with the integral restarting at zero at the flip, which must give
the same reversal cycle as the law."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

UR5 = "ur_description/urdf/ur5_joint_limited_robot.urdf"
Q0 = np.array([0.3, -1.2, 1.5, -1.9, -1.57, 0.0])
DT, F = 1e-3, 10.0
DOWN, UP = np.array([0, 0, -F, 0, 0, 0.0]), np.array([0, 0, F, 0, 0, 0.0])


@pytest.fixture(scope="module")
def arm():
    from rbd_ros.robot import Robot
    from rbd_ros.urdf import load_model

    model = load_model(str(example_robot_urdf(UR5)))
    robot = Robot(model)
    J = robot.jacobian(Q0)
    lam = 1.0 / (J @ np.linalg.solve(robot.mass_matrix(Q0), J.T))[2, 2]  # Lambda along z
    return model, robot, J, lam


def _drive(law, J, lam, cycles, target, v0=0.0):
    """Set ``target``, then run ``cycles`` cycles from the z speed ``v0``; return the
    reference's z speed after each cycle."""
    from rbd_ros.control.laws import Reference
    from rbd_ros.robot import Robot

    T0 = Robot(law.model).fk(Q0)
    ref = Reference(6).set_task(T0)
    law.set_target_wrench(target, Q0)
    law.set_measured_wrench(np.zeros(6), sensor_frame=False)
    hybrid = law.name == "hybrid_force_position"
    v, out = v0, np.zeros(cycles)
    Jinv = np.linalg.inv(J)
    for k in range(cycles):
        t = law._t_prev + DT if np.isfinite(law._t_prev) else 0.0
        qd = Jinv @ np.array([0, 0, v, 0, 0, 0.0]) if hybrid else np.zeros(6)
        law.compute(t, Q0, qd, ref)
        if hybrid:  # the task equation, m = 0: r'' = a* + F / Lambda
            v += DT * (law.acc[2] + law.force[2] / lam)
        else:  # the admittance's reference speed
            v = law.offset_v[2]
        out[k] = v
    return out


def _hybrid_oracle(g, lam, v, md):
    """The hybrid along z after the flip, by hand: ``I += (m_d - m) dt`` below the bound,
    ``-=`` past it, ``F = m_d + k_f (m_d - m) + k_i I``, ``a* = -D_f v`` (m = 0, integral
    from 0)."""
    fp, fi, fd, vlim = (float(g[k][2]) for k in ("force_p", "force_i", "force_damping", "velocity_limit"))
    integral, out = 0.0, []
    for _ in range(200):
        over = v * md > 0 and abs(v) > vlim
        integral += -md * DT if over else md * DT
        a = -fd * v - (10.0 * fd * (v - np.copysign(vlim, v)) if over else 0.0)
        v += DT * (a + (md + fp * md + fi * integral) / lam)
        out.append(v)
    return np.array(out)


def _admittance_oracle(g, v, md):
    """The admittance's outer loop along z after the flip, by hand (semi-implicit Euler):
    ``I += m_d dt`` below the bound, ``x'' = (m_d + k_i I - D_a x') / M_a``, clamped at the
    bound (m = 0, K_a = 0, integral from 0)."""
    M, D, fi, vlim = (float(g[k][2]) for k in ("mass", "damping", "force_i", "velocity_limit"))
    integral, out = 0.0, []
    for _ in range(200):
        if not (v * md > 0 and abs(v) >= vlim):
            integral += md * DT
        v += DT * (md + fi * integral - D * v) / M
        v = float(np.clip(v, -vlim, vlim))
        out.append(v)
    return np.array(out)


@pytest.mark.parametrize("law_name", ["hybrid_force_position", "admittance"])
def test_a_flipped_target_turns_the_reference_round_at_once(arm, law_name) -> None:
    from rbd_ros.control.laws import make_law

    model, _, J, lam = arm
    law = make_law(law_name, model, q0=Q0)
    g, vlim = law.gains, law.gains["velocity_limit"][2]
    assert g["force_i"][2] > 0.0
    before = _drive(law, J, lam, 400, DOWN)
    v0 = before[-1]
    assert v0 < -0.95 * vlim  # at the bound, coming down
    assert law.integral[2] < -0.1  # wound (N s): -0.32 hybrid, -1.6 admittance
    after = _drive(law, J, lam, 200, UP, v0=v0)
    oracle = (_hybrid_oracle(g, lam, v0, F) if law_name == "hybrid_force_position"
              else _admittance_oracle(g, v0, F))
    k_law, k_oracle = np.argmax(after > 0.0), np.argmax(oracle > 0.0)
    assert after.max() > 0.0 and oracle.max() > 0.0
    assert k_oracle <= 15  # a few cycles (1 ms each): 6 hybrid, 12 admittance (before: 10, 136)
    assert k_law == k_oracle, (k_law, k_oracle)
    travel = -DT * after[:k_law].sum()  # how far the reference still went down, m
    assert travel <= -DT * oracle[:k_oracle].sum() + 1e-9, travel


@pytest.mark.parametrize("law_name", ["hybrid_force_position", "admittance"])
def test_the_integral_is_kept_unless_the_target_flips_or_goes_to_zero(arm, law_name) -> None:
    """Sent again unchanged, or only smaller: kept (a press never flips its target, so its
    figures do not change); to zero or flipped: dropped; the other axes are untouched."""
    from rbd_ros.control.laws import make_law

    model, _, J, lam = arm
    law = make_law(law_name, model, q0=Q0)
    _drive(law, J, lam, 100, DOWN)
    law.integral[0] = 0.25  # stands for a wound x axis whose target stays 0
    wound = law.integral.copy()
    assert wound[2] < 0.0
    law.set_target_wrench(DOWN, Q0)
    np.testing.assert_array_equal(law.integral, wound)
    law.set_target_wrench(DOWN / 2.0, Q0)
    np.testing.assert_array_equal(law.integral, wound)
    law.set_target_wrench(np.zeros(6), Q0)
    assert law.integral[2] == 0.0 and law.integral[0] == 0.25
    law.integral[2] = wound[2]
    law.set_target_wrench(DOWN, Q0)  # from zero: kept
    assert law.integral[2] == wound[2]
    law.set_target_wrench(UP, Q0)
    assert law.integral[2] == 0.0 and law.integral[0] == 0.25


def test_a_zero_target_stops_the_hybrid_in_free_space(arm) -> None:
    """Target set to zero at the bound: with the integral dropped the hybrid's force axis is
    ``F = 0``, ``a* = -D_f v`` and the tool stops as ``v_k = (1 - D_f dt)^k v_0`` (by hand);
    with the wound integral kept it would go on down at ``k_i I / (Lambda D_f)`` for ever
    (nothing in free space unwinds it)."""
    from rbd_ros.control.laws import make_law

    model, _, J, lam = arm
    law = make_law("hybrid_force_position", model, q0=Q0)
    v0 = _drive(law, J, lam, 400, DOWN)[-1]
    after = _drive(law, J, lam, 100, np.zeros(6), v0=v0)
    fd = law.gains["force_damping"][2]
    oracle = v0 * (1.0 - fd * DT) ** np.arange(1, 101)
    np.testing.assert_allclose(after, oracle, rtol=1e-6, atol=1e-12)
    assert abs(after[-1]) < 1e-3 * abs(v0)


def test_a_lowered_bound_unwinds_the_hybrids_free_space_push(arm) -> None:
    """The guarded approach's step (``contact_task.guard_plan``): at the 5 cm/s bound, pressing
    down in free space, the bound lowered to 1 cm/s.  Past the bound the integral unwinds, so
    the tool settles at the new bound with the push that holds it there, ``F = Lambda D_f
    v_lim`` (by hand: ``r'' = a* + F / Lambda = 0`` with ``a* = -D_f v``), give or take one
    cycle of the integral (``k_i m_d dt``).  Frozen there (the code before) the push stayed
    ``Lambda D_f`` 5 cm/s, the ``10 D_f`` braking held the tool at 1.41 cm/s (about ``(10 +
    5) / 11``), and a contact took the push: 18.7 N on the upside-down UR5's wall at 10 N."""
    from rbd_ros.control.laws import make_law

    model, _, J, lam = arm
    law = make_law("hybrid_force_position", model, q0=Q0)
    v0 = _drive(law, J, lam, 400, DOWN)[-1]
    fd, fi = law.gains["force_damping"][2], law.gains["force_i"][2]
    assert v0 == pytest.approx(-0.05, rel=0.02)
    assert -law.force[2] == pytest.approx(lam * fd * 0.05, rel=0.15)  # the push at 5 cm/s
    law.set_gains(velocity_limit=np.full(6, 0.01))  # ramped over RAMP_TIME
    after = _drive(law, J, lam, 600, DOWN, v0=v0)
    assert np.abs(after[-200:] + 0.01).max() < 0.02 * 0.01, after[-200:]
    push = -law.force[2]
    assert abs(push - lam * fd * 0.01) <= fi * F * DT + 0.05, (push, lam * fd * 0.01)
