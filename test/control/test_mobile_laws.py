"""Mobile manipulator laws (``rbd_ros.control.mobile_laws``, issue 18) against the core's
constrained dynamics (``MobileBaseRobot.forward_dynamics`` / ``simulate``), which the laws do
not call: the efforts they compute must produce the accelerations the law's own derivation
promises (read off the simulated motion, not the law), and in closed loop (zero-order hold,
the core's RK4) the tracking errors -- measured from the reference and the simulated state --
converge; the velocity law respects its limits and brakes after the timeout."""
from __future__ import annotations

import math

import numpy as np
import pytest

from core_oracles import REPO
from rbd_ros import Robot
from rbd_ros.control.mobile_laws import MobileReference, make_mobile_law
from rbd_ros.control.tour import FigureEight

ARM0 = np.array([0.0, 0.3, 0.0, -1.2, 0.0, 1.0, 0.0])


@pytest.fixture(scope="module", params=["mobile_arm7", "omni_arm7"])
def robot(request):
    return Robot.from_yaml(str(REPO / "config" / f"{request.param}.yaml"))


def _rot(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s], [s, c]])


# slow on a fresh cache only: its oracle, the KKT and Gauss formulations of the forward dynamics
# (rbd_ros.formulations, compiled on first use, not by ``rbd-ros warm``), compiles 14 s (diff
# drive) and 9 s (planar) on an idle machine, 31 s in a CI run; 0.1 s once cached
@pytest.mark.slow
def test_feedforward_gives_the_reference_acceleration(robot) -> None:
    """Gains zero: the core's forward dynamics under the law's efforts accelerate the tracked
    point (B, or P = B + b e_x for a diff drive) as ``p_d''``, the heading as ``yaw_d''``
    (planar) and the arm as ``q_d''``."""
    law = make_mobile_law("whole_body_computed_torque", robot, model_actuators=False)
    law.set_gains(kp=0.0, kd=0.0, kp_base=0.0, kd_base=0.0)
    rng = np.random.default_rng(3)
    diff = robot.base_type == "diff_drive"
    b = law.lookahead
    for _ in range(4):
        q = np.r_[rng.uniform(-2, 2, 3), ARM0 + rng.uniform(-0.3, 0.3, 7)]
        v = rng.uniform(-1, 1, robot.nv)
        if diff:
            v[1] = 0.0
        ref = MobileReference(robot.dof)
        ref.base[:] = q[:3]
        ref.base_dd[:] = rng.uniform(-1, 1, 3)
        ref.q[:], ref.qd[:], ref.qdd[:] = q[3:], v[3:], rng.uniform(-2, 2, 7)
        # reference rates equal to the measured ones (the zero-gain law must not care)
        R = _rot(q[2])
        ref.base_d[:2], ref.base_d[2] = R @ v[:2], v[2]
        u = law.compute(0.0, q, v, ref)
        assert not law.fault
        a = robot.forward_dynamics(q, v, u, method="kkt" if diff else "gauss")
        w = v[2]
        S = np.array([[0.0, -1.0], [1.0, 0.0]])
        if diff:  # P'' = R ([v_x', b omega'] + omega S [v_x, b omega])
            P_dd = R @ (np.array([a[0], b * a[2]]) + w * S @ np.array([v[0], b * w]))
            yaw_d, yaw_dd = ref.base[2], 0.0
            P_dd_ref = ref.base_dd[:2] + b * (ref.base_dd[2] * np.array([-math.sin(yaw_d), math.cos(yaw_d)])
                                              - (w ** 2 + yaw_dd) * np.array([math.cos(yaw_d), math.sin(yaw_d)]))
            np.testing.assert_allclose(P_dd, P_dd_ref, atol=1e-8)
            assert abs(a[1]) < 1e-12
        else:  # world acceleration of B
            B_dd = R @ (a[:2] + w * S @ v[:2])
            np.testing.assert_allclose(B_dd, ref.base_dd[:2], atol=1e-8)
            assert a[2] == pytest.approx(ref.base_dd[2], abs=1e-8)
        np.testing.assert_allclose(a[3:], ref.qdd, atol=1e-7)


def _run(robot, law, ref_fn, q, v, T: float, dt: float = 0.002):
    """Closed loop: the law at ``t_k`` on the state, its effort held over the step (core RK4).
    Returns times, states, speeds and efforts."""
    ref = MobileReference(robot.dof)
    out = []
    for k in range(int(round(T / dt))):
        t = k * dt
        ref_fn(t, ref)
        u = law.compute(t, q, v, ref).copy()
        assert not law.fault
        out.append((t, q.copy(), v.copy(), u))
        res = robot.simulate(q, v, u, dt, 1)
        q, v = res.q[-1], res.qd[-1]
    return out


def test_whole_body_tracks_a_figure_eight_from_an_offset(robot) -> None:
    """A figure eight (8 s) and an arm moving sinusoidally, started 5 cm / 0.05 rad / 0.02 rad
    off: the errors (reference minus simulated state) converge to below 0.1 mm and 1e-4 rad.
    (Arm bandwidth 4 Hz: the core has no drive armature, so the bare wrist links would
    saturate their effort limits under 10 Hz gains at this offset.)"""
    law = make_mobile_law("whole_body_computed_torque", robot, model_actuators=False, rate=500.0,
                          bandwidth=4.0)
    eight = FigureEight(np.zeros(3), 0.6, 8.0)

    def ref_fn(t: float, ref: MobileReference) -> None:
        eight.evaluate(t, ref.base, ref.base_d, ref.base_dd)
        w = 1.5
        ref.q[:] = ARM0 + 0.2 * np.sin(w * t)
        ref.qd[:] = 0.2 * w * np.cos(w * t)
        ref.qdd[:] = -0.2 * w * w * np.sin(w * t)

    q0 = np.r_[-0.05, 0.04, 0.05, ARM0 + 0.02]
    log = _run(robot, law, ref_fn, q0, np.zeros(robot.nv), 9.0)
    ref = MobileReference(robot.dof)
    err = []
    for t, q, _, _ in log:
        ref_fn(t, ref)
        yaw_err = math.remainder(ref.base[2] - q[2], 2 * math.pi)
        err.append([np.hypot(*(ref.base[:2] - q[:2])), abs(yaw_err), np.abs(ref.q - q[3:]).max()])
    err = np.array(err)
    assert err[0, 0] > 0.05 and err[0, 2] > 0.015
    late = err[-500:]  # the last second: on the eight's end and at rest
    assert late[:, 0].max() < 1e-4, late[:, 0].max()
    assert late[:, 1].max() < 1e-3, late[:, 1].max()
    assert late[:, 2].max() < 3e-4, late[:, 2].max()
    mid = err[2000:3500]  # mid-eight, at speed (the diff drive's heading settles at v / b)
    assert mid[:, 0].max() < 1e-3 and mid[:, 2].max() < 1e-3  # 2 ms hold at speed
    assert not law.saturated.any()


def test_velocity_law_limits_and_timeout_brake(robot) -> None:
    """A twist command is reached with the acceleration limit respected (speeds read off the
    simulation); when it is older than ``cmd_vel_timeout`` the base decelerates at the limit
    to a stop and stays there."""
    amax = np.array([0.5, 0.5, 1.0])
    law = make_mobile_law("diff_drive_velocity", robot, model_actuators=False, rate=500.0,
                          max_acceleration=amax, max_velocity=[0.6, 0.6, 1.0], cmd_vel_timeout=0.3)
    diff = robot.base_type == "diff_drive"
    cmd = np.array([0.8, 0.0 if diff else -0.3, 0.7])  # v_x above its 0.6 m/s limit

    def ref_fn(t: float, ref: MobileReference) -> None:
        ref.q[:] = ARM0
        if t <= 3.0:  # a fresh command every cycle until t = 3 s, then silence
            ref.twist[:], ref.twist_time = cmd, t

    log = _run(robot, law, ref_fn, np.r_[0.0, 0.0, 0.0, ARM0], np.zeros(robot.nv), 6.0)
    t = np.array([e[0] for e in log])
    V = np.array([e[2][:3] for e in log])
    want = np.array([0.6, cmd[1], 0.7])
    at3 = V[np.searchsorted(t, 2.9)]
    np.testing.assert_allclose(at3, want, atol=2e-3)
    acc = np.abs(np.diff(V, axis=0)) / 0.002
    assert (acc.max(axis=0) <= amax * 1.05 + 0.05).all(), acc.max(axis=0)
    # braking: still moving shortly after the timeout, stopped well after, never reversed
    after = V[t > 3.3]
    assert np.abs(V[np.searchsorted(t, 3.35)][0]) > 0.4
    assert np.abs(after[-250:]).max() < 1e-3
    assert (after[:, 0] > -1e-3).all()
    assert law.braking


def test_refusals(robot) -> None:
    with pytest.raises(ValueError, match="unknown mobile controller"):
        make_mobile_law("computed_torque", robot)
    with pytest.raises(ValueError, match="max_acceleration"):
        make_mobile_law("diff_drive_velocity", robot, max_acceleration=[1.0, -1.0, 1.0])
    fixed = Robot.from_yaml(str(REPO / "config" / "arm7.yaml"))
    with pytest.raises(ValueError, match="planar or diff_drive"):
        make_mobile_law("whole_body_computed_torque", fixed)
    law = make_mobile_law("whole_body_computed_torque", robot)
    q = np.r_[0.0, 0.0, math.nan, ARM0]
    u = law.compute(0.0, q, np.zeros(robot.nv), MobileReference(robot.dof))
    assert law.fault and (u == 0).all()


def test_figure_eight_is_a_rolling_path() -> None:
    """The base tour: rates equal central differences of the pose, no side velocity in the
    heading frame (a diff drive can follow it), starts and ends at rest at the start pose,
    stays inside 2a x a."""
    start = np.array([0.5, -0.2, 0.3])
    eight = FigureEight(start, 0.8, 12.0)
    t = np.linspace(0.0, 12.0, 6001)
    p, pd, pdd = eight.sample(t)
    h = t[1] - t[0]
    np.testing.assert_allclose(np.gradient(p, h, axis=0)[1:-1], pd[1:-1], atol=1e-4)
    np.testing.assert_allclose(np.gradient(pd, h, axis=0)[1:-1], pdd[1:-1], atol=2e-3)
    side = -np.sin(p[:, 2]) * pd[:, 0] + np.cos(p[:, 2]) * pd[:, 1]
    assert np.abs(side).max() < 1e-12
    np.testing.assert_allclose(p[0], start, atol=1e-12)
    np.testing.assert_allclose(p[-1], start, atol=1e-12)
    assert np.abs(pd[[0, -1]]).max() < 1e-12
    assert np.linalg.norm(pd[:, :2], axis=1).max() > 0.5  # it does drive
    assert np.linalg.norm(p[:, :2] - start[:2], axis=1).max() < 0.8 * math.sqrt(2) + 1e-9


def test_loop_reports_the_cmd_vel_timeout_once_at_the_brake(robot) -> None:
    """``MobileControlLoop`` (no ROS): the cycle at which the velocity law starts braking for
    a stale twist logs one line naming that control time and the command's; once per command
    (a new one re-arms it); a refusal logs its own control time and no timeout after it; on
    the whole-body law a path replacing the twist reference is no timeout either."""
    from types import SimpleNamespace as NS

    from rbd_ros.control.mobile_loop import MobileControlLoop
    from rbd_ros.robot.mobile import MobileBaseRobot

    base = MobileBaseRobot(robot.model)
    names = list(robot.model.joint_names)
    zero = NS(x=0.0, y=0.0, z=0.0)
    twist = (NS(x=0.3, y=0.0, z=0.0), NS(x=0.0, y=0.0, z=0.2))

    def run(law_name: str, events: dict) -> tuple[list, list]:
        law = make_mobile_law(law_name, robot, model_actuators=False, rate=500.0, cmd_vel_timeout=0.3)
        lines: list[tuple[float, str, str]] = []
        loop = MobileControlLoop(base, law, log=lambda level, msg: lines.append((t, level, msg)))
        braking = []
        for k in range(2500):  # 5 s at 2 ms
            t = round(k * 0.002, 6)
            loop.joint_state(names, ARM0, np.zeros(7), t)
            loop.odom(zero, NS(x=0.0, y=0.0, z=0.0, w=1.0), zero, zero, t)
            if k in events:
                events[k](loop)
            assert loop.ready()
            loop.cycle(t)
            if law_name == "diff_drive_velocity":
                braking.append((t, law.braking))
        return lines, braking

    def timeouts(lines: list) -> list:
        return [(t, msg) for t, _, msg in lines if "cmd_vel timed out" in msg]

    # velocity law: commands at 0.5 s and 2.0 s, a NaN twist at 3.5 s after one at 3.4 s (the
    # loop's test is the limiter's in floating point: 0.8 - 0.5 > 0.3, 2.3 - 2.0 < 0.3)
    nan = (NS(x=math.nan, y=0.0, z=0.0), NS(x=0.0, y=0.0, z=0.0))
    lines, braking = run("diff_drive_velocity", {250: lambda lp: lp.cmd_vel("", *twist),
                                                 1000: lambda lp: lp.cmd_vel("", *twist),
                                                 1700: lambda lp: lp.cmd_vel("", *twist),
                                                 1750: lambda lp: lp.cmd_vel("", *nan)})
    starts = [t for (t, b), (_, b0) in zip(braking[1:], braking) if b and not b0]
    assert [t for t, _ in timeouts(lines)] == starts[:2] and len(starts) == 3  # the third: the refusal
    for (t_log, msg), t_cmd in zip(timeouts(lines), (0.5, 2.0)):
        assert f"at t = {t_log:.6f} s" in msg and f"came at t = {t_cmd:.6f} s" in msg, msg
        assert 0.3 < t_log - t_cmd < 0.302 + 1e-9 and "braking to rest" in msg  # the first 2 ms cycle past it
    refused = [(t, msg) for t, level, msg in lines if level == "error"]
    assert len(refused) == 1 and refused[0][1].endswith("stopping the base (t = 3.500000 s)"), refused
    assert starts[2] == 3.5  # braking from the refusal's control time, and no timeout line for it
    # whole-body law: a twist times out there too; a path accepted in time does not
    path = NS(header=NS(frame_id="odom", stamp=NS(sec=0, nanosec=0)),
              poses=[NS(header=NS(stamp=NS(sec=1, nanosec=0)),
                        pose=NS(position=NS(x=0.1, y=0.0, z=0.0), orientation=NS(x=0.0, y=0.0, z=0.0, w=1.0)))])
    lines, _ = run("whole_body_computed_torque", {250: lambda lp: lp.cmd_vel("", *twist),
                                                  1000: lambda lp: lp.cmd_vel("", *twist),
                                                  1100: lambda lp: lp.base_path(path)})
    (t_log, msg), = timeouts(lines)  # the command at 2.0 s: replaced by the path at 2.2 s
    assert 0.3 < t_log - 0.5 < 0.302 + 1e-9 and "came at t = 0.500000 s" in msg, msg
    assert any("base path accepted" in msg for _, _, msg in lines)


def test_loop_holds_a_twist_stamped_ahead_until_its_time(robot) -> None:
    """``MobileControlLoop`` (no ROS): a ``cmd_vel`` stamped ahead of the latest state by at
    most ``HOLD_AHEAD`` commands from the first cycle at or past its stamp (its control time
    is that cycle's: the timeout counts from there); one stamped 0, in the past or further
    ahead (another clock) commands at once, the latter said once; a malformed one is refused
    at receipt, and a refusal drops what was held."""
    from types import SimpleNamespace as NS

    from rbd_ros.control.mobile_loop import HOLD_AHEAD, MobileControlLoop

    names = list(robot.model.joint_names)
    zero = NS(x=0.0, y=0.0, z=0.0)
    law = make_mobile_law("diff_drive_velocity", robot, model_actuators=False, rate=500.0, cmd_vel_timeout=0.3)
    lines: list[tuple[str, str]] = []
    loop = MobileControlLoop(robot, law, log=lambda level, msg: lines.append((level, msg)))

    def twist(vx: float) -> tuple:
        return NS(x=vx, y=0.0, z=0.0), NS(x=0.0, y=0.0, z=0.0)

    def step(t: float) -> None:
        loop.joint_state(names, ARM0, np.zeros(7), t)
        loop.odom(zero, NS(x=0.0, y=0.0, z=0.0, w=1.0), zero, zero, t)
        assert loop.ready()
        loop.cycle(t)

    step(0.0)
    assert loop.cmd_vel("", *twist(0.1), 0.0) and loop.mref.twist[0] == 0.1  # unstamped: at once
    assert loop.cmd_vel("", *twist(0.2), 0.1) and loop.cmd_vel("", *twist(0.3), 0.05)  # ahead: held
    assert loop.mref.twist[0] == 0.1
    for k in range(1, 60):  # 2 ms cycles
        t = round(0.002 * k, 6)
        step(t)
        want = 0.1 if t < 0.05 else 0.3 if t < 0.1 else 0.2  # each from its stamp on
        assert loop.mref.twist[0] == want, (t, loop.mref.twist[0])
        if t == 0.05 or t == 0.1:
            assert loop.mref.twist_time == t  # commanded from that cycle: the timeout counts from it
    assert not lines, lines
    # in the past: at once; far ahead (another clock): at once, said once
    assert loop.cmd_vel("", *twist(0.4), 0.05) and loop.mref.twist[0] == 0.4
    far = loop.t + HOLD_AHEAD + 5.0
    assert loop.cmd_vel("", *twist(0.5), far) and loop.cmd_vel("", *twist(0.6), far)
    assert loop.mref.twist[0] == 0.6
    assert [lvl for lvl, m in lines if "ahead of the latest state" in m] == ["warn"], lines
    # a held twist is dropped by a refusal: stop means stop
    t_held = loop.t + 0.02
    assert loop.cmd_vel("", *twist(0.7), t_held)
    assert not loop.cmd_vel("", NS(x=math.nan, y=0.0, z=0.0), zero, t_held)
    assert loop.mref.twist[0] == 0.0
    for _ in range(19):
        step(round(loop.t + 0.002, 6))
        assert loop.mref.twist[0] == 0.0, loop.t
