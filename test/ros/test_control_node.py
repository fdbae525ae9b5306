"""The ``controller`` node as a real process: against a stand-in arm (``test/support/control_arm.py``,
the core model in lockstep), against this test posing as the arm, and through the MuJoCo
bridge in lockstep."""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from ros_helpers import REPO, NodeProcess, ros_context, spin_in_background, wait_on

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

ARM7 = str(REPO / "config" / "arm7.yaml")
PLANAR2_URDF = str(REPO / "urdf" / "planar2.urdf")
READY = "controller: ready"


class ScriptProcess(NodeProcess):
    """``python test/support/SCRIPT ARGS`` with NodeProcess's output capture, ``wait_for`` and ``stop``."""

    def __init__(self, script: str, args: list[str]) -> None:  # same as NodeProcess
        import os

        self.args = [script, *args]
        self.echo = None
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "test" / "support" / script), *args], cwd=REPO, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True)
        self.lines = []
        self._cv = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()


@pytest.fixture
def arm_process():
    started: list[ScriptProcess] = []

    def start(args: list[str]) -> ScriptProcess:
        proc = ScriptProcess("control_arm.py", args)
        started.append(proc)
        proc.wait_for("control_arm: ready", 60)
        return proc

    yield start
    for proc in started:
        proc.stop()


class Peer:
    """This test's ROS side: records commands and controller states, publishes references
    (and, posing as the arm, joint states); spins in a background thread."""

    def __init__(self, ctx) -> None:
        import rclpy
        from geometry_msgs.msg import PoseStamped
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray
        from trajectory_msgs.msg import JointTrajectory

        from rbd_ros.ros.common import recordable_qos

        self.node = rclpy.create_node("control_test_peer", context=ctx)
        self.cv = threading.Condition()
        self.commands: list[np.ndarray] = []
        self.states: list[tuple[float, np.ndarray, np.ndarray, np.ndarray]] = []
        self.task: list[np.ndarray] = []
        qos = recordable_qos()  # every sample of a fast lockstep stream, even when behind
        sub = self.node.create_subscription
        self.command_sub = sub(Float64MultiArray, "/effort_controller/commands", self._on_command, qos)
        sub(JointState, "/controller/controller_state", self._on_state, qos)
        sub(Float64MultiArray, "/controller/task_state", lambda m: self._append(self.task, np.array(m.data)), qos)
        self.joint_pub = self.node.create_publisher(JointState, "/joint_states", qos)
        self.traj_pub = self.node.create_publisher(JointTrajectory, "/controller/joint_trajectory", qos)
        self.pose_pub = self.node.create_publisher(PoseStamped, "/controller/target_pose", qos)
        self.executor = spin_in_background(self.node)

    def _append(self, where: list, item) -> None:
        with self.cv:
            where.append(item)
            self.cv.notify_all()

    def _on_command(self, msg) -> None:
        self._append(self.commands, np.array(msg.data))

    def _on_state(self, msg) -> None:
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self._append(self.states, (t, np.array(msg.position), np.array(msg.velocity), np.array(msg.effort)))

    def wait(self, predicate, timeout: float = 30.0, what: str = "condition"):
        wait_on(self.cv, predicate, self.executor, timeout, what)

    def wait_subscribed(self, pub, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while pub.get_subscription_count() == 0:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nobody subscribes {pub.topic_name}")
            time.sleep(0.02)

    def publish_state(self, names, q, qd=None, t: float = 0.0) -> None:
        from sensor_msgs.msg import JointState

        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(round(t * 1e9)), 1_000_000_000)
        msg.name = list(names)
        msg.position = [float(x) for x in q]
        msg.velocity = [float(x) for x in (np.zeros(len(q)) if qd is None else qd)]
        self.joint_pub.publish(msg)

    def send_command_and_wait(self, names, q, qd=None, t: float = 0.0) -> np.ndarray:
        with self.cv:
            k = len(self.commands)
        # the controller's command writer matched to this reader first (10 s at most): a command
        # published before the match is lost (volatile QoS), and this state would be answered
        # by nothing; `wait_subscribed(joint_pub)` matches the other direction only (CI: "timed
        # out waiting for a command" on the first state, once in a suite run)
        deadline = time.monotonic() + 10.0
        while self.command_sub.get_publisher_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
        self.publish_state(names, q, qd, t)
        self.wait(lambda: len(self.commands) > k, 10.0, "a command")
        with self.cv:
            return self.commands[k]

    def set_parameter(self, name: str, value, timeout: float = 10.0):
        from rcl_interfaces.msg import Parameter
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter as P

        client = self.node.create_client(SetParameters, "/controller/set_parameters")
        if not client.wait_for_service(timeout_sec=timeout):
            raise TimeoutError("no /controller/set_parameters")
        req = SetParameters.Request()
        req.parameters = [P(name, value=value).to_parameter_msg()]
        assert isinstance(req.parameters[0], Parameter)
        future = client.call_async(req)
        deadline = time.monotonic() + timeout
        while not future.done():
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from set_parameters")
            time.sleep(0.01)
        return future.result().results[0]

    def close(self) -> None:
        self.executor.shutdown(timeout_sec=1.0)


@pytest.fixture
def peer():
    with ros_context() as ctx:
        p = Peer(ctx)
        yield p
        p.close()


def _trajectory(names, times, positions):
    from rbd_ros.ros.messages import to_joint_trajectory

    return to_joint_trajectory(names, times, positions)


# ---- closed loop through processes ---------------------------------------------------------
def test_computed_torque_node_tracks_a_trajectory_on_the_standin_arm(node_process, arm_process, peer) -> None:
    """Lockstep with the core model: hold the first measured position, then follow a 0.3 s
    spline sent with the joint names in reverse order; error < 3e-4 rad at the end."""
    from rbd_ros.robot import Robot

    robot = Robot.from_yaml(ARM7)
    names = list(robot.joint_names)
    q0 = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])
    arm_process(["--model-yaml", ARM7, "--q0", ",".join(map(str, q0)), "--actuators"])
    node_process(["controller", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p", "type:=computed_torque"],
                 ready=READY)
    peer.wait(lambda: len(peer.states) > 20, 60, "controller_state")
    with peer.cv:
        t_hold, ref, meas, _ = peer.states[-1]
    np.testing.assert_allclose(ref, q0)  # holds the first measured position
    assert np.abs(meas - q0).max() < 1e-4
    target = q0 + np.linspace(0.05, -0.05, 7)
    peer.wait_subscribed(peer.traj_pub)
    peer.traj_pub.publish(_trajectory(names[::-1], [0.3], target[None, ::-1]))
    peer.wait(lambda: peer.states[-1][0] > t_hold + 0.3 and not np.allclose(peer.states[-1][1], q0), 30,
              "the trajectory to start")
    with peer.cv:
        t_start = peer.states[-1][0]
    peer.wait(lambda: peer.states[-1][0] > t_start + 0.4, 30, "0.4 s of simulated time")
    # the commands reach this peer on their own DDS match (once none had arrived by now)
    peer.wait(lambda: len(peer.commands) >= 200, 30, "200 commands on /effort_controller/commands")
    with peer.cv:
        states = list(peer.states)
        commands = np.array(peer.commands[-200:])
    t, ref, meas, tau = states[-1]
    np.testing.assert_allclose(ref, target, atol=1e-12)  # holds the last point
    assert np.abs(ref - meas).max() < 3e-4
    moving = [s for s in states if s[0] > t_start]
    # measured 2e-4 while moving, 7e-5 at the end: bounds near that
    assert max(np.abs(s[1] - s[2]).max() for s in moving) < 1e-3  # tracking while moving
    assert np.isfinite(commands).all() and (np.abs(commands) <= robot.model.effort_limit + 1e-9).all()


def test_task_space_node_reaches_a_target_pose(node_process, arm_process, peer) -> None:
    """Resolved acceleration: ~/target_pose, a 0.2 s Cartesian move, ~/task_state error."""
    from geometry_msgs.msg import PoseStamped

    from rbd_ros.lie.so3 import rotation_to_quaternion
    from rbd_ros.robot import Robot

    robot = Robot.from_yaml(ARM7)
    q0 = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])
    T1 = robot.fk(q0 + 0.08)
    arm_process(["--model-yaml", ARM7, "--q0", ",".join(map(str, q0)), "--actuators"])
    node_process(["controller", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p", "type:=resolved_acceleration",
                  "-p", "pose_duration:=0.2"], ready=READY)
    peer.wait(lambda: len(peer.task) > 20, 60, "task_state")
    msg = PoseStamped()
    msg.header.frame_id = "base_link"
    p, o = T1[:3, 3], rotation_to_quaternion(T1[:3, :3])
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = map(float, p)
    msg.pose.orientation.x, msg.pose.orientation.y, msg.pose.orientation.z, msg.pose.orientation.w = map(float, o)
    peer.wait_subscribed(peer.pose_pub)
    peer.pose_pub.publish(msg)
    peer.wait(lambda: np.allclose(peer.task[-1][:3], p, atol=1e-9), 30, "the target to be adopted")
    with peer.cv:
        t0 = peer.states[-1][0]
    peer.wait(lambda: peer.states[-1][0] > t0 + 0.5, 30, "0.5 s of simulated time")
    with peer.cv:
        data, (_, q_ref, _, _) = peer.task[-1], peer.states[-1]
    n = robot.dof
    assert data.shape == (20 + n,)
    e = data[14:20]
    assert np.linalg.norm(e[:3]) < 1e-3 and np.linalg.norm(e[3:]) < 0.01
    np.testing.assert_allclose(data[7:10], robot.fk(q0 + 0.08)[:3, 3], atol=1e-3)
    assert np.isnan(q_ref).all()  # a Cartesian target has no joint reference


def test_joint_space_node_reaches_a_target_pose_through_ik(node_process, arm_process, peer) -> None:
    """Computed torque (a joint-space law): ~/target_pose solved by IK, a 0.2 s joint move;
    the final joint reference puts the tool at the pose and the arm follows it.  An
    unreachable pose is refused with a reason and the reference stays."""
    from geometry_msgs.msg import PoseStamped

    from rbd_ros.lie.so3 import rotation_to_quaternion
    from rbd_ros.robot import Robot

    robot = Robot.from_yaml(ARM7)
    q0 = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])
    T1 = robot.fk(q0 + 0.08)
    arm_process(["--model-yaml", ARM7, "--q0", ",".join(map(str, q0)), "--actuators"])
    proc = node_process(["controller", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p", "type:=computed_torque",
                         "-p", "pose_duration:=0.2"], ready=READY)
    peer.wait(lambda: len(peer.states) > 20, 60, "controller_state")

    def pose(T: np.ndarray) -> PoseStamped:
        msg = PoseStamped()
        p, o = T[:3, 3], rotation_to_quaternion(T[:3, :3])
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = map(float, p)
        msg.pose.orientation.x, msg.pose.orientation.y, msg.pose.orientation.z, msg.pose.orientation.w = map(float, o)
        return msg

    peer.wait_subscribed(peer.pose_pub)
    peer.pose_pub.publish(pose(T1))
    line = proc.wait_for("target pose accepted: IK q", 30)
    # the move starts at the simulated time the IK finished (logged), not when this test read
    # the line (a loaded machine's peer lags the arm): wait for its end plus 0.5 s to settle
    t_move = float(re.search(r"from t = ([-\d.]+)", line).group(1))
    peer.wait(lambda: peer.states[-1][0] > t_move + 0.2 + 0.5, 30, "the move's end + 0.5 s of simulated time")
    with peer.cv:
        _, q_ref, q_meas, _ = peer.states[-1]
    np.testing.assert_allclose(robot.fk(q_ref), T1, atol=1e-5)
    assert np.abs(q_ref - q_meas).max() < 1e-3
    far = np.eye(4)
    far[:3, 3] = [5.0, 0.0, 0.0]
    peer.pose_pub.publish(pose(far))
    proc.wait_for("target pose refused: no joint solution inside the limits", 30)
    with peer.cv:
        np.testing.assert_allclose(peer.states[-1][1], q_ref, atol=1e-12)


# ---- this test as the arm -------------------------------------------------------------------
def test_node_safety_and_runtime_gains(node_process, peer) -> None:
    """planar2 from its URDF, commands in the `joints` order: name mapping, refused
    trajectory, NaN -> zero torque, gain validation through set_parameters, stale states."""
    from rbd_ros.robot import Robot

    robot = Robot.from_urdf(PLANAR2_URDF)
    proc = node_process(["controller", "--ros-args", "-p", f"urdf_path:={PLANAR2_URDF}", "-p", "type:=pd_gravity",
                         "-p", "kp:=[100.0, 50.0]", "-p", "kd:=10.0", "-p", "joints:=[joint2, joint1]",
                         "-p", "state_timeout:=0.3"], ready=READY)
    peer.wait_subscribed(peer.joint_pub)
    names = ["gripper", "joint2", "joint1"]  # extra joint, another order
    q = np.array([0.3, -0.2])  # model order (joint1, joint2)
    qd = np.array([0.1, 0.2])
    cmd = peer.send_command_and_wait(names, [0.7, q[1], q[0]], [0.0, qd[1], qd[0]], t=1.0)
    # first state: the reference is q itself, so tau = -kd qd + g(q), in joints order (2, 1)
    want = -10.0 * qd + robot.gravity(q)
    np.testing.assert_allclose(cmd, want[::-1], rtol=1e-9, atol=1e-9)

    peer.wait_subscribed(peer.traj_pub)
    peer.traj_pub.publish(_trajectory(["joint1", "elbow"], [1.0], [[0.1, 0.2]]))
    proc.wait_for("trajectory refused: joint names ['joint1', 'elbow'] do not match", 10)

    cmd = peer.send_command_and_wait(names, [0.7, math.nan, q[0]], [0.0, 0.0, 0.0], t=1.001)
    assert not cmd.any()
    proc.wait_for("non-finite state or reference: zero torque", 10)

    res = peer.set_parameter("kp", [-1.0, 2.0])
    assert not res.successful and "non-negative" in res.reason
    res = peer.set_parameter("kd", [1.0, 2.0, 3.0])
    assert not res.successful and "1 or 2 values" in res.reason
    res = peer.set_parameter("type", "pd")
    assert not res.successful  # read-only
    res = peer.set_parameter("kp", [200.0, 80.0])
    assert res.successful, res.reason
    cmd = peer.send_command_and_wait(names, [0.7, q[1] + 0.01, q[0] + 0.02], [0.0, 0.0, 0.0], t=1.002)
    e = q - (q + [0.02, 0.01])  # the reference still holds the first measured position
    want = np.array([200.0, 80.0]) * e + robot.gravity(q + [0.02, 0.01])
    np.testing.assert_allclose(cmd, want[::-1], rtol=1e-9, atol=1e-9)

    with peer.cv:
        k = len(peer.commands)
    # this episode's "stale" line (on a loaded machine the calls above can take longer than
    # 0.3 s, so an earlier episode may have logged one already)
    stale = "/joint_states older than 0.3 s"
    seen = proc.output.count(stale)
    deadline = time.monotonic() + 10
    while proc.output.count(stale) == seen:
        assert time.monotonic() < deadline, proc.output[-1500:]
        time.sleep(0.02)
    peer.wait(lambda: len(peer.commands) > k, 10, "the zero command")
    time.sleep(0.3)
    with peer.cv:
        after = peer.commands[k:]
    assert len(after) == 1 and not after[0].any()  # one zero command, then silence


def test_timer_trigger_runs_at_its_rate_and_stops_on_stale_states(node_process, peer) -> None:
    proc = node_process(["controller", "--ros-args", "-p", f"urdf_path:={PLANAR2_URDF}", "-p", "type:=pd",
                         "-p", "trigger:=timer", "-p", "rate:=200.0", "-p", "state_timeout:=0.4"], ready=READY)
    peer.wait_subscribed(peer.traj_pub)
    peer.traj_pub.publish(_trajectory(["joint2", "joint1"], [5.0], [[0.3, 0.4]]))
    proc.wait_for("trajectory received before any /joint_states", 10)
    peer.wait_subscribed(peer.joint_pub)
    peer.publish_state(["joint1", "joint2"], [0.1, 0.2])
    proc.wait_for("trajectory accepted: 1 points", 10)  # kept until the first state
    peer.wait(lambda: len(peer.commands) > 0, 10, "a command")
    t0 = time.monotonic()
    proc.wait_for("/joint_states older than 0.4 s", 5)
    elapsed = time.monotonic() - t0
    time.sleep(0.2)
    with peer.cv:
        count = len(peer.commands)
        assert not peer.commands[-1].any()  # the zero command on going stale
    # at most the rate allows (a loaded machine only makes it fewer)
    assert 1 <= count <= 1.5 * 200 * (elapsed + 0.3) + 5
    time.sleep(0.3)
    with peer.cv:
        assert len(peer.commands) == count  # then silence


def test_bad_parameters_exit_with_a_one_line_error() -> None:
    for extra, message in ((["-p", "type:=lqr"], "unknown type 'lqr'"),
                           (["-p", "kp:=-1.0"], "kp must be non-negative"),
                           (["-p", "joints:=[joint1]"], "must be the model's joints"),
                           (["-p", "rt_priority:=100"], "rt_priority must be 0 (off) to 99, got 100")):
        res = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "controller", "--ros-args", "-p",
                              f"urdf_path:={PLANAR2_URDF}", *extra], cwd=REPO, capture_output=True, text=True,
                             timeout=60)
        assert res.returncode == 2, res.stderr
        assert message in res.stderr and res.stderr.count("\n") == 1, res.stderr


# ---- through the MuJoCo bridge --------------------------------------------------------------------
def test_computed_torque_through_the_mujoco_bridge_in_lockstep(node_process, peer) -> None:
    q0 = [0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3]
    node_process(["mujoco-bridge", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p", "mode:=lockstep",
                  "-p", f"initial_positions:={q0}"], ready="mujoco_bridge: ready")
    ctl = node_process(["controller", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p", "type:=computed_torque",
                        "-p", "rt_priority:=3"], ready=READY)
    line = ctl.wait_for("realtime: SCHED_FIFO 3", 10)  # the executor thread (the process's main one)
    if line.rstrip().endswith("(the executor thread)"):
        assert os.sched_getscheduler(ctl.proc.pid) == os.SCHED_FIFO
        assert os.sched_getparam(ctl.proc.pid).sched_priority == 3
    else:
        assert "refused" in line and os.sched_getscheduler(ctl.proc.pid) == os.SCHED_OTHER, line
    peer.wait(lambda: len(peer.states) > 20, 60, "controller_state")
    with peer.cv:
        t_hold = peer.states[-1][0]
    target = np.array(q0) + 0.05
    peer.wait_subscribed(peer.traj_pub)
    peer.traj_pub.publish(_trajectory([f"joint{i}" for i in range(1, 8)], [0.3], target[None]))
    peer.wait(lambda: peer.states[-1][0] > t_hold and not np.allclose(peer.states[-1][1], q0), 30,
              "the trajectory to start")
    with peer.cv:
        t_start = peer.states[-1][0]
    peer.wait(lambda: peer.states[-1][0] > t_start + 0.4, 60, "0.4 s of simulated time")
    with peer.cv:
        states = [s for s in peer.states if s[0] > t_start]
    err = np.array([s[1] - s[2] for s in states])
    print(f"bridge lockstep: RMS {np.sqrt(np.mean(err**2)):.2e} rad, max {np.abs(err).max():.2e} rad over "
          f"{len(states)} cycles")
    # measured 3e-5 to 7e-5 RMS, 1.1e-4 max: bounds near that, not 1e-3
    assert np.sqrt(np.mean(err**2)) < 3e-4
    assert np.abs(err).max() < 5e-4


# ---- node options: gains_file, robot_description, model_actuators, interpolation, pid, task_pd --
def _commands_for_two_states(peer, names, q1, qd1, q2, qd2) -> tuple[np.ndarray, np.ndarray]:
    """The node's commands for two states (the reference holds the first measured position)."""
    peer.wait_subscribed(peer.joint_pub)
    c1 = peer.send_command_and_wait(names, q1, qd1, t=1.0)
    c2 = peer.send_command_and_wait(names, q2, qd2, t=1.002)
    return c1, c2


def _law_commands(law_type, model, gains, q1, qd1, q2, qd2, **kw) -> tuple[np.ndarray, np.ndarray]:
    """The same two cycles on the ROS-free law in this process, configured explicitly."""
    from rbd_ros.control.laws import Reference, make_law

    law = make_law(law_type, model, gains, **kw)
    ref = Reference(model.dof).set_joint(np.asarray(q1, float))
    c1 = law.compute(1.0, np.asarray(q1, float), np.asarray(qd1, float), ref).copy()
    c2 = law.compute(1.002, np.asarray(q2, float), np.asarray(qd2, float), ref).copy()
    return c1, c2


@pytest.mark.parametrize("law_type, gains", [
    ("pid", {"kp": 150.0, "kd": 12.0, "ki": 300.0, "i_clamp": 20.0}),
    ("task_pd", {"kp": [900.0, 900.0, 900.0, 40.0, 40.0, 40.0], "kd": 4.0}),
], ids=["pid", "task_pd"])
def test_law_node_with_robot_description_and_gains_file(tmp_path, node_process, peer, law_type,
                                                         gains) -> None:
    """The URDF as ``robot_description`` text (a parameters file, as launch passes it) and the
    gains from ``gains_file``: the node's commands are those of the law configured with exactly
    these gains, and not those of the default gains."""
    import yaml

    from rbd_ros.robot import Robot

    urdf = (REPO / "urdf" / "puma560.urdf").read_text()
    gains_file = tmp_path / "gains.yaml"
    gains_file.write_text(yaml.safe_dump({"defaults": {law_type: gains}}))
    params = tmp_path / "controller.yaml"
    params.write_text(yaml.safe_dump({"controller": {"ros__parameters": {
        "robot_description": urdf, "type": law_type, "gains_file": str(gains_file)}}}))
    node_process(["controller", "--ros-args", "--params-file", str(params)],
                 ready="controller: ready (" + law_type)
    model = Robot.from_urdf(urdf).model
    names = list(model.joint_names)
    rng = np.random.default_rng(40)
    q1 = rng.uniform(-1, 1, 6)
    qd1 = rng.uniform(-0.5, 0.5, 6)
    q2, qd2 = q1 + rng.uniform(-0.02, 0.02, 6), qd1 + 0.1
    got = _commands_for_two_states(peer, names, q1, qd1, q2, qd2)
    limit = {"effort_limit": list(model.effort_limit)}
    want = _law_commands(law_type, model, {**gains, **limit}, q1, qd1, q2, qd2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-9)
    default = _law_commands(law_type, model, None, q1, qd1, q2, qd2)
    assert np.abs(default[1] - got[1]).max() > 1e-3  # the file's gains, not the defaults


def test_model_actuators_off_and_interpolation(node_process, peer) -> None:
    """``model_actuators:=false``: computed torque without the drives' armature and friction
    (the law's commands with ``model_actuators=False``, which differ); ``interpolation:=cubic``:
    a point with zero velocity is reached along q0 + (q1 - q0)(3 s^2 - 2 s^3) from the stamp."""
    from rbd_ros.model import MdhModel

    proc = node_process(["controller", "--ros-args", "-p", f"model_yaml:={ARM7}", "-p",
                         "type:=computed_torque", "-p", "model_actuators:=false", "-p",
                         "interpolation:=cubic"], ready=READY)
    model = MdhModel.from_yaml(ARM7)
    names = list(model.joint_names)
    rng = np.random.default_rng(41)
    q1 = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])
    qd1 = rng.uniform(-0.5, 0.5, 7)
    q2, qd2 = q1 + rng.uniform(-0.02, 0.02, 7), qd1 + 0.1
    got = _commands_for_two_states(peer, names, q1, qd1, q2, qd2)
    want = _law_commands("computed_torque", model, None, q1, qd1, q2, qd2, model_actuators=False)
    with_drives = _law_commands("computed_torque", model, None, q1, qd1, q2, qd2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-9)
    assert np.abs(with_drives[1] - got[1]).max() > 1e-2

    # a one-point trajectory, zero velocity at the point, stamped at t = 1.1, 0.2 s long
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    target = q1 + np.linspace(0.1, -0.1, 7)
    msg = JointTrajectory(joint_names=names)
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1, 100_000_000
    msg.points = [JointTrajectoryPoint(positions=target.tolist(), velocities=[0.0] * 7,
                                       time_from_start=Duration(sec=0, nanosec=200_000_000))]
    peer.wait_subscribed(peer.traj_pub)
    peer.traj_pub.publish(msg)
    proc.wait_for("trajectory accepted", 30)  # before any state past its stamp
    for t in (1.05, 1.15, 1.2, 1.35):
        with peer.cv:
            k = len(peer.states)
        peer.publish_state(names, q2, qd2, t=t)
        peer.wait(lambda: len(peer.states) > k, 30, f"the controller state at t = {t}")  # noqa: B023
        with peer.cv:
            stamp, ref = peer.states[k][0], peer.states[k][1]
        assert stamp == pytest.approx(t, abs=1e-9)
        s = min(max((t - 1.1) / 0.2, 0.0), 1.0)
        np.testing.assert_allclose(ref, q1 + (target - q1) * (3 * s**2 - 2 * s**3), atol=1e-9,
                                   err_msg=f"t = {t}")
