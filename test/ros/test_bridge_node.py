"""The ``mujoco_bridge`` node in its own process, driven by a test client over ROS topics."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import mujoco
import numpy as np
import pytest
import yaml

from rbd_ros.model import MdhModel
from rbd_ros.sim.examples import SEVEN_DOF_POSE, seven_dof, three_link
from rbd_ros.sim.mujoco_model import build_mujoco_model
from ros_helpers import raise_callback_errors, ros_context, spin_in_background

DT = 0.001


def model_file(tmp_path: Path, model: MdhModel) -> str:
    path = tmp_path / f"{model.name}.yaml"
    model.to_yaml(str(path))
    return str(path)


def bridge_args(path: str, **params) -> list[str]:
    args = ["mujoco-bridge", "--ros-args", "-p", f"model_yaml:={path}"]
    for key, value in params.items():
        if isinstance(value, (list, tuple, np.ndarray)):
            value = "[" + ", ".join(repr(float(v)) for v in value) + "]"
        elif isinstance(value, bool):
            value = str(value).lower()
        args += ["-p", f"{key}:={value}"]
    return args


class Client:
    """Commands out, /joint_states and diagnostics in; spins in a background thread."""

    def __init__(self, ctx) -> None:
        import rclpy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray, String

        from rbd_ros.ros.common import recordable_qos

        self.node = rclpy.create_node("bridge_test_client", context=ctx)
        self.cv = threading.Condition()
        self.states: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]] = []
        self.names: list[str] = []
        self.diagnostics: list[dict] = []
        qos = recordable_qos()  # every sample of a fast lockstep stream, even when behind
        self.node.create_subscription(JointState, "/joint_states", self._on_state, qos)
        self.node.create_subscription(String, "/mujoco_bridge/diagnostics",
                                      lambda m: self.diagnostics.append(json.loads(m.data)), 10)
        self.pub = self.node.create_publisher(Float64MultiArray, "/effort_controller/commands", qos)
        self._msg = Float64MultiArray
        self.executor = spin_in_background(self.node)

    def _on_state(self, msg) -> None:
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        with self.cv:
            self.names = list(msg.name)
            self.states.append((t, np.array(msg.position), np.array(msg.velocity),
                                np.array(msg.effort)))
            self.cv.notify_all()

    def wait_state(self, after: float = -1.0, timeout: float = 10.0):
        """The first state stamped later than ``after``."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while True:
                for s in reversed(self.states):
                    if s[0] > after + 1e-12:
                        return next(x for x in self.states if x[0] > after + 1e-12)
                    break
                raise_callback_errors(self.executor)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no /joint_states after t={after}")
                self.cv.wait(min(left, 0.1))

    def wait_message(self, index: int, timeout: float = 10.0):
        """The ``index``-th state received (0-based)."""
        deadline = time.monotonic() + timeout
        with self.cv:
            while len(self.states) <= index:
                raise_callback_errors(self.executor)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"fewer than {index + 1} /joint_states")
                self.cv.wait(min(left, 0.1))
            return self.states[index]

    def latest(self):
        with self.cv:
            return self.states[-1] if self.states else None

    def wait_connected(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while self.pub.get_subscription_count() == 0 or not self.states:
            if time.monotonic() > deadline:
                raise TimeoutError("bridge not connected")
            time.sleep(0.02)

    def send(self, values) -> None:
        self.pub.publish(self._msg(data=[float(v) for v in values]))

    def step(self, values):
        """Lockstep: one command -> the next state."""
        t = self.latest()[0]
        self.send(values)
        return self.wait_state(after=t)

    def call(self, srv_type, name: str, request, timeout: float = 10.0):
        client = self.node.create_client(srv_type, name)
        if not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError(f"no service {name}")
        future = client.call_async(request)
        deadline = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer from {name}")
            time.sleep(0.01)
        return future.result()

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)


@pytest.fixture
def client():
    with ros_context() as ctx:
        c = Client(ctx)
        yield c
        c.close()


def core_final_states(model: MdhModel, q0, steps: int) -> np.ndarray:
    """``rbd_ros.Robot(model).simulate`` with zero torque, RK4: positions at steps 1..N."""
    from rbd_ros.robot import Robot

    res = Robot(model).simulate(np.asarray(q0, dtype=float), np.zeros(model.dof),
                                np.zeros((steps, model.dof)), DT, integrator="rk4")
    assert res.q.shape == (steps + 1, model.dof)
    return res.q[1:]


def finished(proc, timeout: float = 60.0) -> int:
    """Exit code of a node that ends by itself, once its output has been read to the end."""
    proc.wait(timeout)
    return proc.stop()  # joins the output reader


# ---- lockstep ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_lockstep_zero_torque_fall_matches_the_core_rk4(tmp_path, node_process, client) -> None:
    # without joint limits: the core has none, MuJoCo's would stop joint 4 at step ~300
    model = seven_dof(lower=[-np.inf] * 7, upper=[np.inf] * 7)
    steps = 500
    expected = core_final_states(model, SEVEN_DOF_POSE, steps)
    node_process(bridge_args(model_file(tmp_path, model), mode="lockstep", integrator="RK4",
                             initial_positions=SEVEN_DOF_POSE),
                 ready="mujoco_bridge: ready (7 joints, mode=lockstep")
    client.wait_connected()
    t0, q0, qd0, _ = client.latest()
    assert t0 == 0.0 and np.array_equal(q0, SEVEN_DOF_POSE) and not qd0.any()
    got = np.array([client.step(np.zeros(7))[1] for _ in range(steps)])
    assert client.latest()[0] == pytest.approx(steps * DT, abs=1e-9)
    assert np.abs(got[-1] - SEVEN_DOF_POSE).max() > 0.05  # it did fall
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_lockstep_constant_torque_matches_mujoco_in_process(tmp_path, node_process, client) -> None:
    model = three_link(gear_ratio=[100, 80, 50], rotor_inertia=[2e-5, 3e-5, 1e-5],
                       viscous=[1.0, 2.0, 0.5], coulomb=[0.3, 0.2, 0.1])
    q0 = [0.2, -0.6, 0.9]
    tau = np.array([12.0, -20.0, 4.0])
    node_process(bridge_args(model_file(tmp_path, model), mode="lockstep",
                             initial_positions=q0), ready="mujoco_bridge: ready")
    client.wait_connected()
    m, _ = build_mujoco_model(model)
    d = mujoco.MjData(m)
    d.qpos[:] = q0
    mujoco.mj_forward(m, d)  # as the bridge's reset does (the solver warm-starts from it)
    for k in range(500):
        t, q, qd, effort = client.step(tau)
        d.ctrl[:] = tau
        mujoco.mj_step(m, d)
        assert t == pytest.approx((k + 1) * DT, abs=1e-9)
    np.testing.assert_allclose(q, d.qpos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(qd, d.qvel, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(effort, tau)
    assert client.names == ["j1", "j2", "j3"]


@pytest.mark.slow
def test_bad_commands_are_refused_and_the_bridge_keeps_stepping(tmp_path, node_process,
                                                                 client) -> None:
    proc = node_process(bridge_args(model_file(tmp_path, three_link()), mode="lockstep"),
                        ready="mujoco_bridge: ready")
    client.wait_connected()
    good = [5.0, -3.0, 1.0]
    client.step(good)
    for bad in ([float("nan"), 0.0, 0.0], [1.0, 2.0], [], [0.0, float("inf"), 0.0]):
        t, q, qd, effort = client.step(bad)  # still one step per command
        np.testing.assert_array_equal(effort, good)  # the last safe command
        assert np.isfinite(q).all() and np.isfinite(qd).all()
    assert client.latest()[0] == pytest.approx(5 * DT)
    proc.wait_for("rejected command: effort command has NaN/Inf")
    proc.wait_for("rejected command: effort command has 2 values")
    assert proc.alive()
    assert proc.output.count("rejected command") == 2  # throttled per cause: NaN/Inf, length
    assert proc.stop() == 0
    assert "Traceback" not in proc.output


def test_reset_restores_the_initial_state(tmp_path, node_process, client) -> None:
    from std_srvs.srv import Trigger

    q0 = [0.2, -0.6, 0.9]
    node_process(bridge_args(model_file(tmp_path, three_link()), mode="lockstep",
                             initial_positions=q0, initial_velocities=[0.0, 0.5, 0.0]),
                 ready="mujoco_bridge: ready")
    client.wait_connected()
    for _ in range(50):
        t, q, qd, _ = client.step([10.0, 10.0, 10.0])
    assert np.abs(q - q0).max() > 1e-3
    count = len(client.states)
    answer = client.call(Trigger, "/mujoco_bridge/reset", Trigger.Request())
    assert answer.success, answer.message
    t1, q1, qd1, _ = client.wait_message(count)  # the reset state is published at once
    assert t1 == t  # the clock runs on
    np.testing.assert_array_equal(q1, q0)
    np.testing.assert_array_equal(qd1, [0.0, 0.5, 0.0])
    t2, q2, _, _ = client.step([0.0, 0.0, 0.0])
    assert t2 == pytest.approx(t1 + DT)


# ---- realtime ------------------------------------------------------------------------------------
@pytest.mark.slow
def test_realtime_timeout_brake_pause_and_diagnostics(tmp_path, node_process, client) -> None:
    from std_srvs.srv import SetBool

    planar = three_link(alpha=[0.0, 0.0, 0.0], theta=[0.0, 0.0, 0.0], effort_limit=[5.0] * 3)
    proc = node_process(bridge_args(model_file(tmp_path, planar), mode="realtime",
                                    command_timeout=0.05, brake_damping=20.0,
                                    diagnostics_period=0.5, publish_every=10),
                        ready="mujoco_bridge: ready")
    client.wait_connected()
    proc.wait_for("no command yet")  # stale from the start: braked
    # a controller at ~200 Hz (wall) for 0.6 s of simulated time: progress is waited for in
    # simulated time, with a generous wall-clock deadline, so a loaded machine only slows it
    # (the fastest state seen, and whether 5 N m was applied: a stall of this process over the
    # 50 ms timeout brakes the bridge for a moment, so the last state alone may be braked)
    t_begin = client.latest()[0]
    deadline = time.monotonic() + 60
    qd_spun, applied = np.zeros(3), False
    while client.latest()[0] < t_begin + 0.6:
        assert time.monotonic() < deadline, client.latest()[0]
        client.send([5.0, 0.0, 0.0])
        time.sleep(0.005)
        _, _, qd_now, effort = client.latest()
        applied |= bool(effort[0] == 5.0)
        qd_spun = qd_now if np.abs(qd_now).max() > np.abs(qd_spun).max() else qd_spun
    assert np.abs(qd_spun).max() > 0.5 and applied, (qd_spun, applied, proc.output)
    proc.wait_for("commands resumed")
    t_stop = client.latest()[0]
    while client.latest()[0] < t_stop + 0.6:  # controller gone: zero torque + brake
        assert time.monotonic() < deadline, client.latest()[0]
        time.sleep(0.05)
    t, _, qd, effort = client.latest()
    assert np.abs(qd).max() < 0.01 * np.abs(qd_spun).max() and not effort.any(), qd
    proc.wait_for("last command")
    # at start (no command yet), and once now, after the last resume (a stall of this process
    # over the 50 ms timeout while it sent, as above, brakes and resumes once more in between)
    out = proc.output
    assert "command timeout" in out[:out.index("commands resumed")], out
    assert out[out.rindex("commands resumed"):].count("command timeout") == 1, out
    # pause: the clock stops; resume: it runs again
    assert client.call(SetBool, "/mujoco_bridge/pause", SetBool.Request(data=True)).success
    time.sleep(0.1)
    t_paused = client.latest()[0]
    time.sleep(0.4)
    assert client.latest()[0] == t_paused
    assert client.call(SetBool, "/mujoco_bridge/pause", SetBool.Request(data=False)).success
    deadline = time.monotonic() + 30
    while client.latest()[0] <= t_paused + 0.2:
        assert time.monotonic() < deadline, "the clock did not run again"
        time.sleep(0.05)
    while not any(not d["paused"] and d["rtf"] > 0.05 for d in client.diagnostics):
        assert time.monotonic() < deadline, client.diagnostics
        time.sleep(0.05)
    diag = client.diagnostics[-1]
    for key in ("rate_hz", "rtf", "step_time_p99_us", "missed_steps", "commands_received",
                "commands_rejected", "steps_without_new_command", "stale_steps", "unstable_steps"):
        assert key in diag
    assert diag["commands_received"] > 50 and diag["mode"] == "realtime"
    assert proc.stop() == 0
    assert "Traceback" not in proc.output


# ---- start-up ------------------------------------------------------------------------------------
@pytest.mark.parametrize("params,message", [
    ({"mode": "fast"}, "mode must be one of"),
    ({"timestep": "abc"}, "parameter timestep"),
    ({"integrator": "leapfrog"}, "integrator must be one of"),
    ({"joints": "[j1, j9, j3]"}, "joints must list"),
])
@pytest.mark.slow
def test_bad_parameters_exit_with_a_message(tmp_path, node_process, params, message) -> None:
    args = ["mujoco-bridge", "--ros-args", "-p", f"model_yaml:={model_file(tmp_path, three_link())}"]
    for k, v in params.items():
        args += ["-p", f"{k}:={v}"]
    proc = node_process(args)
    assert finished(proc) == 2
    assert f"mujoco_bridge: error: {message}" in proc.output.replace("\n", " ") or \
        message in proc.output, proc.output
    assert "Traceback" not in proc.output


@pytest.mark.slow
def test_missing_model_file_and_inertia_fixups_are_reported(tmp_path, node_process) -> None:
    proc = node_process(["mujoco-bridge", "--ros-args", "-p", "model_yaml:=/nonexistent.yaml"])
    assert finished(proc) == 2 and "mujoco_bridge: error:" in proc.output
    assert "Traceback" not in proc.output
    data = three_link().replace(name="puma_like").to_dict()
    data["joints"][2]["inertia"] = np.diag([0.066, 0.086, 0.0125]).tolist()  # as a file has it
    path = tmp_path / "puma_like.yaml"
    path.write_text(yaml.safe_dump(data))
    proc = node_process(bridge_args(str(path), mode="lockstep"), ready="mujoco_bridge: ready")
    # the model fixes it when loaded, in one logged line (issue 19 item 5)
    line = proc.wait_for("InertiaWarning")
    assert "link 'link3'" in line and "triangle inequality" in line
    assert "inertia fix-up" not in proc.output  # nothing left for MuJoCo to change


@pytest.mark.slow
def test_config_file_and_voltage_mode(tmp_path, node_process, client) -> None:
    """A ``config_file`` (timestep, initial state, voltage mode), a parameter that wins over it
    (mode), and the motor model of 003 (6.15)-(6.17) through the node: the joint sees
    K v - G^2 K_M K_e / R qdot with K = G K_M / R (the back-EMF as joint damping) and reports
    that torque as its effort."""
    G, km, ke, r = np.array([50.0, 40.0, 30.0]), np.array([0.05, 0.06, 0.04]), \
        np.array([0.05, 0.06, 0.04]), np.array([1.2, 0.9, 1.5])
    model = three_link(gear_ratio=G, torque_constant=km, back_emf_constant=ke, resistance=r,
                       rotor_inertia=[1e-5, 2e-5, 1e-5])
    q0 = [0.1, -0.4, 0.7]
    config = tmp_path / "bridge.yaml"
    config.write_text("timestep: 0.002\nintegrator: RK4\nmode: realtime\ncommand_mode: voltage\n"
                      f"initial_positions: {q0}\ncommand_timeout: 0.0\n")
    node_process(["mujoco-bridge", "--ros-args", "-p", f"model_yaml:={model_file(tmp_path, model)}",
                  "-p", f"config_file:={config}", "-p", "mode:=lockstep"],
                 ready="mujoco_bridge: ready (3 joints, mode=lockstep, integrator=RK4, "
                       "timestep=0.002 s, command_mode=voltage")
    client.wait_connected()
    t0, q_start, _, _ = client.latest()
    np.testing.assert_array_equal(q_start, q0)
    volts = np.array([6.0, -8.0, 3.0])
    k_hat, emf = G * km / r, G**2 * km * ke / r
    m, _ = build_mujoco_model(model)  # torque-mode MuJoCo model with the armature
    m.opt.timestep = 0.002
    m.dof_damping[:] += emf
    d = mujoco.MjData(m)
    d.qpos[:] = q0
    mujoco.mj_forward(m, d)
    for k in range(200):
        t, q, qd, effort = client.step(volts)
        d.ctrl[:] = k_hat * volts
        mujoco.mj_step(m, d)
        assert t == pytest.approx(t0 + (k + 1) * 0.002, abs=1e-9)
        np.testing.assert_allclose(effort, k_hat * volts - emf * qd, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(q, d.qpos, rtol=0, atol=1e-10)
    np.testing.assert_allclose(qd, d.qvel, rtol=0, atol=1e-10)
    assert np.abs(q - q0).max() > 0.05


@pytest.mark.slow
def test_max_mode_steps_freely(tmp_path, node_process, client) -> None:
    """mode:=max: no pacing, a state every ``publish_every`` steps, stamps on the step grid,
    no missed steps; zero torque here so the arm falls as the core's RK4 says."""
    model = seven_dof(lower=[-np.inf] * 7, upper=[np.inf] * 7)
    proc = node_process(bridge_args(model_file(tmp_path, model), mode="max", integrator="RK4",
                                    publish_every=10,
                                    initial_positions=SEVEN_DOF_POSE, command_timeout=0.0,
                                    diagnostics_period=0.2),
                        ready="mujoco_bridge: ready (7 joints, mode=max")
    client.wait_connected()
    deadline = time.monotonic() + 60  # load-proof: only progress is asserted, not a rate
    while client.latest()[0] < 0.5:
        assert time.monotonic() < deadline, client.latest()[0]
        time.sleep(0.05)
    with client.cv:
        states = list(client.states)
    stamps = np.array([s[0] for s in states])
    assert np.all(np.diff(stamps) > 0)
    steps = np.round(stamps / DT)
    np.testing.assert_allclose(stamps, steps * DT, atol=1e-9)
    assert np.all(steps % 10 == 0)
    # no comparison with the core here: unpaced, the bridge is seconds into this 7-DoF arm's
    # chaotic free fall before the client's first state, where round-off has grown to O(1);
    # the same dynamics are compared step by step in lockstep
    # (test_lockstep_zero_torque_fall_matches_the_core_rk4)
    assert np.isfinite(np.array([s[1] for s in states])).all()
    deadline = time.monotonic() + 10
    while not client.diagnostics:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    diag = client.diagnostics[-1]
    assert diag["mode"] == "max" and diag["missed_steps"] == 0
    assert proc.stop() == 0
    assert "Traceback" not in proc.output
