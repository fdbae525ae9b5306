"""Every law works on the user's own arm out of the box (issue 13): default gains derived from
the model, a tour that fits the arm, a bridge that simulates it stably.

The table: all six laws with default gains, lockstep at 1 kHz in the ROS-free MuJoCo
``Simulator`` (``rbd_ros.sim.closed_loop.run_tour``, what ``rbd-ros bringup`` does without
ROS), 3 s of the bringup's tour (2 s segments), on the bundled robots (full models
``config/NAME.yaml``) and on real arms from example-robot-data that are not bundled.
Criteria: no chatter (< 1 % of cycles in which a joint's command flips sign at its effort
limit), no unstable step, and per-joint RMS error: computed torque < 1e-3 rad,
pd_gravity / pid / resolved_acceleration < 2e-2, pd < 0.1; task-space laws: tool position
RMS < 5 mm and orientation RMS < 30 mrad (the position alone hid the xArm 7's wrist 0.53 rad off
under task PD: dry friction on light wrists, now fed forward).  The measured table is in
README.md ("Any arm") and bench/README.md.

End to end: ``rbd-ros bringup --urdf`` on the 7-DoF arm with stiff joint damping (it used to
blow up in MuJoCo and restart from t = 0 for 150 s).
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rbd_ros.control.gains import LAWS, model_gains
from rbd_ros.control.laws import Reference, make_law
from rbd_ros.control.tour import plan_tour
from rbd_ros.model import MdhModel
from rbd_ros.sim.closed_loop import chatter_fraction, run_tour
from rbd_ros.sim.simulator import BridgeConfig, Simulator
from rbd_ros.util.resources import config_file
from robots_data import REPO, example_robot_urdf

BUNDLED = ["planar2", "puma560", "arm7"]
#: real arms, not bundled: (example-robot-data path, base link, tip link)
REAL = {
    "ur10": ("ur_description/urdf/ur10_robot.urdf", None, None),  # 6-DoF industrial
    "panda": ("panda_description/urdf/panda.urdf", None, "panda_link8"),
    "baxter_left": ("baxter_description/urdf/baxter.urdf", "torso", "left_wrist"),  # dual-arm torso
    "tiago": ("tiago_description/robots/tiago.urdf", "base_link", "arm_7_link"),  # prismatic torso
    "xarm7": ("xarm_description/urdf/xarm7.urdf", None, None),  # joint damping 2-10 N m s/rad
    # joints 1 and 3 colinear at joint 2 = 0; 1 N m dry friction on every joint (issue 26)
    "tiago_pro": ("tiago_pro_description/robots/tiago_pro.urdf", "torso_lift_link", "arm_left_7_link"),
}
RMS_LIMIT = {"computed_torque": 1e-3, "pd_gravity": 2e-2, "pid": 2e-2,
             "resolved_acceleration": 2e-2, "pd": 0.1}
TOOL_LIMIT = 5e-3  # m, task-space laws
TOOL_ANGLE_LIMIT = 3e-2  # rad, task-space laws


def load(name: str) -> MdhModel:
    if name in BUNDLED:
        return MdhModel.from_yaml(str(config_file(name)))
    from rbd_ros.urdf import load_model

    rel, base, tip = REAL[name]
    return load_model(str(example_robot_urdf(rel)), base, tip)


@pytest.fixture(scope="module")
def models() -> dict[str, MdhModel]:
    return {}


def model_of(models: dict[str, MdhModel], name: str) -> MdhModel:
    if name not in models:
        models[name] = load(name)
    return models[name]


# ---- the table ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BUNDLED + list(REAL))
@pytest.mark.slow
def test_every_law_with_default_gains_tracks_without_chatter(models, name: str) -> None:
    model = model_of(models, name)
    tour = plan_tour(model, segment_time=2.0)
    for law in LAWS:
        r = run_tour(model, law, tour=tour, duration=3.0)
        where = f"{name}/{law}"
        assert r.chatter < 0.01, (where, r.chatter)
        assert r.unstable_steps == 0, where
        if law in RMS_LIMIT:
            assert r.rms_error.max() < RMS_LIMIT[law], (where, r.rms_error.tolist())
        if law in ("task_pd", "resolved_acceleration"):
            assert r.tool_position_rms < TOOL_LIMIT, (where, r.tool_position_rms)
            assert r.tool_orientation_rms < TOOL_ANGLE_LIMIT, (where, r.tool_orientation_rms)


# ---- gains from the model -----------------------------------------------------------------------
def _discrete_radius(m: float, kp: float, kd: float, dt: float) -> float:
    """Spectral radius of the exact zero-order-hold map of ``m e'' = -kp e - kd e'`` (an
    independent oracle for the Jury criterion of ``gains.model_gains``)."""
    Ad = np.array([[1.0, dt], [0.0, 1.0]])  # exact for the double integrator
    Bd = np.array([[0.5 * dt * dt / m], [dt / m]])
    K = np.array([[kp, kd]])
    return float(np.abs(np.linalg.eigvals(Ad - Bd @ K)).max())


def test_model_gains_follow_the_rule_and_keep_the_sampled_loop_stable(models) -> None:
    from rbd_ros.robot import Robot

    model = model_of(models, "ur10").replace(viscous=np.zeros(6), coulomb=np.zeros(6))
    q0 = np.array([0.1, -1.0, 1.2, -0.5, 0.8, 0.3])
    g, notes = model_gains("pd", model, q0, bandwidth=4.0, damping_ratio=0.9, rate=1000.0)
    M = Robot(model).mass_matrix(q0, include_actuators=True)
    w = 2 * np.pi * 4.0
    free = ~np.array([any(f"'{j}'" in n for n in notes) for j in model.joint_names])
    np.testing.assert_allclose(g["kp"][free], np.diag(M)[free] * w**2, rtol=1e-12)
    np.testing.assert_allclose(g["kd"][free], 2 * 0.9 * np.diag(M)[free] * w, rtol=1e-12)
    # a rate so low that the bandwidth would be unstable: capped, and the sampled loop of
    # every joint, at its smallest inertia 1 / (M^-1)_ii, is stable
    m_min = 1.0 / np.diag(np.linalg.inv(M))
    for rate in (1000.0, 100.0, 20.0):
        g, notes = model_gains("pd", model, q0, bandwidth=10.0, rate=rate)
        for i in range(6):
            assert _discrete_radius(m_min[i], g["kp"][i], g["kd"][i], 1 / rate) < 1.0, (rate, i)
    uncapped = 2 * np.pi * 10.0
    assert _discrete_radius(m_min[5], np.diag(M)[5] * uncapped**2, 2 * np.diag(M)[5] * uncapped,
                            1 / 20.0) > 1.0  # the cap was needed
    assert any("capped" in n for n in notes)
    # computed torque: the error dynamics (6.46) with the requested poles
    g, _ = model_gains("computed_torque", model, q0, bandwidth=3.0, damping_ratio=0.7)
    np.testing.assert_allclose(g["kp"], (2 * np.pi * 3.0) ** 2)
    np.testing.assert_allclose(g["kd"], 2 * 0.7 * 2 * np.pi * 3.0)
    with pytest.raises(ValueError, match="bandwidth"):
        model_gains("pd", model, q0, bandwidth=-1.0)


def test_yaml_and_given_gains_win_over_the_model(models, tmp_path: Path) -> None:
    model = model_of(models, "panda")
    f = tmp_path / "g.yaml"
    f.write_text("defaults: {}\nrobots:\n  panda:\n    pd: {kp: 123.0}\n")
    law = make_law("pd", model, {"kd": 4.0}, gains_file=str(f))
    assert law.gain_source == {"kp": "file", "kd": "given"}
    np.testing.assert_array_equal(law.gains["kp"], 123.0)
    np.testing.assert_array_equal(law.gains["kd"], 4.0)
    auto = make_law("pd", model)
    assert set(auto.gain_source.values()) == {"model"}
    q = np.array([0.3, -0.2, 0.1, -1.5, 0.2, 1.0, 0.4])
    changed = auto.derive_gains(q)  # the node does this with the first measured state
    np.testing.assert_allclose(changed["kp"], model_gains("pd", model, q)[0]["kp"])


def test_planar_arm_leaves_the_axes_it_cannot_move_free(models) -> None:
    g, _ = model_gains("resolved_acceleration", model_of(models, "planar2").replace(name="p"))
    np.testing.assert_array_equal(g["kp"] == 0, [False, True, False, True, False, True])


def _get_parameters(node, names: list[str], timeout: float = 10.0) -> list:
    import time

    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    client = node.create_client(GetParameters, "/controller/get_parameters")
    assert client.wait_for_service(timeout_sec=timeout)
    future = client.call_async(GetParameters.Request(names=names))
    deadline = time.monotonic() + timeout
    while not future.done():
        assert time.monotonic() < deadline, "no answer from get_parameters"
        time.sleep(0.01)
    return [parameter_value_to_python(v) for v in future.result().values]


@pytest.mark.ros
@pytest.mark.slow
def test_controller_node_derives_logs_and_shows_its_gains(node_process, models) -> None:
    """No gains given for a UR10: the node derives them at the first measured pose for its
    ``bandwidth``, logs them with their source, and a parameter read returns them; a gain
    given as a parameter wins."""
    from test_control_node import READY, Peer

    from ros_helpers import ros_context

    model = model_of(models, "ur10")
    proc = node_process(["controller", "--ros-args", "-p", f"urdf_path:={example_robot_urdf(REAL['ur10'][0])}",
                         "-p", "type:=pd_gravity", "-p", "bandwidth:=5.0", "-p", "kd:=3.0"], ready=READY)
    q = np.array([0.1, -1.0, 1.2, -0.5, 0.8, 0.3])
    with ros_context() as ctx:
        peer = Peer(ctx)
        try:
            peer.wait_subscribed(peer.joint_pub)
            peer.send_command_and_wait(list(model.joint_names), q, t=1.0)
            line = proc.wait_for("gains from the model at the start pose", 10)
            assert "(model)" in line and "(given)" in line
            kp, kd, bw = _get_parameters(peer.node, ["kp", "kd", "bandwidth"])
        finally:
            peer.close()
    want, _ = model_gains("pd_gravity", model, q, bandwidth=5.0)
    np.testing.assert_allclose(kp, want["kp"], rtol=1e-12)
    assert kd == 3.0 and bw == 5.0


# ---- the tour -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["baxter_left", "tiago", "ur10"])
def test_tour_starts_at_its_start_and_fits_every_limit(models, name: str) -> None:
    from rbd_ros.robot import Robot

    model = model_of(models, name)
    tour = plan_tour(model, segment_time=2.0)
    robot = Robot(model)
    t = np.linspace(0, tour.duration, 2001)
    q, qd, qdd = tour.spline().sample(t)
    np.testing.assert_allclose(q[0], tour.start, atol=1e-12)  # no jump at the start
    np.testing.assert_allclose(qd[0], 0.0, atol=1e-12)
    assert np.all(q >= model.lower - 1e-12) and np.all(q <= model.upper + 1e-12)
    assert np.all(np.abs(qd) <= model.velocity_limit)
    tau = np.abs(robot.inverse_dynamics(q, qd, qdd, include_actuators=True))
    assert np.all(tau <= 0.7 * model.effort_limit + 1e-9)
    assert np.all(tour.amplitude > 0)
    if name == "baxter_left":  # holding the stretched arm needs 56 N m > 50: moved, said so
        assert np.abs(robot.gravity(np.zeros(7))).max() > model.effort_limit[1]
        assert any("start moved" in n for n in tour.notes)


def test_a_tour_that_cannot_fit_is_refused_with_the_reason(models) -> None:
    weak = model_of(models, "ur10").replace(effort_limit=np.full(6, 0.5))
    with pytest.raises(ValueError, match="no tour fits"):
        plan_tour(weak)


# ---- the bridge: stable on every arm ------------------------------------------------------------
def test_stiff_joint_damping_gets_an_implicit_integrator_and_a_warning_for_rk4(models) -> None:
    model = model_of(models, "xarm7")
    log: list[tuple[str, str]] = []
    sim = Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0),
                    log=lambda lvl, msg: log.append((lvl, msg)))
    assert sim.integrator == "implicitfast"  # auto: joint7 has b dt / m = 14.6
    assert sim.damping_ratio_dt()[6] == pytest.approx(14.6, rel=0.02)  # at the start pose
    log.clear()
    rk4 = Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0, integrator="RK4"),
                    log=lambda lvl, msg: log.append((lvl, msg)))
    assert rk4.integrator == "RK4"
    assert any(lvl == "warn" and "cannot be stable" in msg and "joint7" in msg for lvl, msg in log)
    # the torque that drives RK4 unstable is harmless under implicitfast
    tau = np.r_[np.zeros(6), 3.0]
    for s in (sim, rk4):
        for _ in range(300):
            s.command(tau)
            s.step()
    assert sim.stats.unstable_steps == 0 and np.isfinite(sim.q).all()
    assert rk4.stats.unstable_steps > 0


def test_an_unstable_step_is_undone_counted_and_time_moves_on(tmp_path: Path, models,
                                                                monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # MuJoCo would write MUJOCO_LOG.TXT here
    model = model_of(models, "xarm7")
    log: list[tuple[str, str]] = []
    q0 = [0.1, -0.2, 0.1, 0.5, 0.0, 0.2, 0.0]
    sim = Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0, integrator="RK4",
                                        saturation=False, initial_positions=q0),
                    log=lambda lvl, msg: log.append((lvl, msg)))
    times, qs = [], []
    for _ in range(50):
        sim.command(np.r_[np.zeros(6), 1e3])
        sim.step()
        times.append(sim.time)
        qs.append(sim.q)
    assert sim.stats.unstable_steps > 0
    assert np.all(np.diff(times) > 0)  # never backwards, never back to 0
    assert np.all(np.isfinite(qs))
    assert not np.any(np.all(np.array(qs) == 0.0, axis=1))  # no silent reset to q = 0
    assert any(lvl == "error" and "unstable" in msg for lvl, msg in log)
    # a state MuJoCo itself flags: its warning comes through our log, not MUJOCO_LOG.TXT
    t, n = sim.time, sim.stats.unstable_steps
    sim.mj_data.qvel[0] = 1e12
    sim.step()
    assert sim.stats.unstable_steps == n + 1 and sim.time > t and np.isfinite(sim.q).all()
    assert any(lvl == "warn" and msg.startswith("MuJoCo: Nan, Inf or huge value") for lvl, msg in log)
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()


def test_initial_positions_outside_the_limits_are_clamped_and_said(models) -> None:
    model = model_of(models, "panda")
    log: list[tuple[str, str]] = []
    q0 = [0.0, 0.0, 0.0, 0.5, 0.0, 1.0, 0.0]  # joint 4's range is [-3.07, -0.07]
    sim = Simulator(model, BridgeConfig(initial_positions=q0), log=lambda lvl, msg: log.append((lvl, msg)))
    assert sim.q[3] == pytest.approx(model.upper[3])
    assert any(lvl == "warn" and "panda_joint4" in msg and "clamped" in msg for lvl, msg in log)


def test_computed_torque_feeds_stiff_drive_damping_forward(models) -> None:
    """Only where ``D dt / m_min > 5`` (xArm 7 joint 7) the viscous term is ``D q_d'``."""
    from rbd_ros.control.laws import stiff_damping
    from rbd_ros.robot import Robot

    model = model_of(models, "xarm7")
    # b dt / m_min at q = 0: joint1 10 N m s/rad on 9.7e-3 kg m^2 -> 1.03, joint7 14.6
    np.testing.assert_array_equal(stiff_damping(model, None, 1000.0), [0, 0, 0, 0, 0, 0, 1])
    law = make_law("computed_torque", model, {"kp": 100.0, "kd": 20.0})
    rng = np.random.default_rng(4)
    q, qd, qr, qdr, qddr = (rng.uniform(-0.5, 0.5, 7) for _ in range(5))
    tau = law.compute(0.0, q, qd, Reference(7).set_joint(qr, qdr, qddr))
    robot = Robot(model)
    qdd = qddr + 20.0 * (qdr - qd) + 100.0 * (qr - q)
    v = np.where([0, 0, 0, 0, 0, 0, 1], qdr, qd)
    want = (robot.mass_matrix(q, include_actuators=True) @ qdd + robot.bias(q, qd)
            + model.viscous * v + model.coulomb * np.clip((qdr + 100.0 / 20.0 * (qr - q)) / 1e-3, -1, 1))
    np.testing.assert_allclose(tau, np.clip(want, -model.effort_limit, model.effort_limit),
                               rtol=1e-9, atol=1e-9)


def test_chatter_fraction_counts_sign_flips_at_the_limit() -> None:
    tau = np.array([[5.0, 1.0], [-5.0, 1.0], [5.0, -1.0], [4.0, 1.0], [-4.0, 1.0]])
    assert chatter_fraction(tau, np.array([5.0, 10.0])) == pytest.approx(2 / 4)


# ---- end to end ---------------------------------------------------------------------------------
@pytest.mark.ros
@pytest.mark.slow
def test_bringup_on_the_damped_7dof_arm_runs_and_reports_the_tool_error(tmp_path: Path) -> None:
    urdf = example_robot_urdf(REAL["xarm7"][0])
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", "--urdf", str(urdf),
                          "--controller", "resolved_acceleration", "--duration", "2",
                          "--integrator", "auto", "--timestep", "0.001", "--quiet",
                          "--json", str(tmp_path / "report.json")],  # no bag, video or page: not checked here
                         capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert max(report["rms_error"]) < 2e-2
    assert report["tool_position_rms"] < TOOL_LIMIT
    assert report["tool_position_max"] >= report["tool_position_rms"]
    assert 0 <= report["tool_orientation_rms"] <= report["tool_orientation_max"] < math.pi
    assert report["duration"] > 1.9
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
