"""Node ``controller``: a torque controller of 003 chapter 6 on ros2_control's topics.

    rbd-ros controller --ros-args -p type:=computed_torque [-p model_yaml:=FILE |
        -p urdf_path:=FILE | -p robot_description:=XML] [-p base_link:=L -p tip_link:=L]
        [-p gravity:=[0.0,0.0,-9.81]] [-p kp:=400.0 ...]

The robot parameters are those of every node (``rbd_ros.ros.robot_params``).

A thin adapter (messages and parameters) over the ROS-free ``rbd_ros.control.loop.ControlLoop``
(laws, trajectories, safety), which the MuJoCo bridge also runs in its composed mode.

Topics (``~`` is the node name, ``/controller`` in a bringup):

* subscribes ``/joint_states`` (``sensor_msgs/JointState``, mapped by joint name, extra joints
  ignored; missing velocities are estimated by finite differences);
* subscribes ``~/joint_trajectory`` (``trajectory_msgs/JointTrajectory``): interpolated like
  ros2_control's joint_trajectory_controller (``rbd_ros.control.trajectory``), holding the last
  point; header stamp 0 (or in the past) = start on receipt; joint names must be exactly the
  controlled joints (any order), otherwise the trajectory is refused with a logged reason.
  Before any trajectory the reference holds the first measured position; a trajectory (or
  target pose) received before the first ``/joint_states`` starts with it.  Task-space laws track
  the Cartesian motion of a joint trajectory (``r_d = fk(q_d)`` ...);
* subscribes ``~/target_pose`` (``geometry_msgs/PoseStamped``, frame '' or the model's base
  link): task-space laws make a minimum-jerk Cartesian move of ``pose_duration`` s from the
  current reference pose (0 = a step); joint-space laws solve the pose by IK (``Robot.ik``
  seeded with the current reference, inside the joint limits; an unreachable pose is refused
  with a logged reason) and move there in joint space over ``pose_duration`` s;
* publishes ``/effort_controller/commands`` (``std_msgs/Float64MultiArray``): joint torques
  (N m) in the order of the ``joints`` parameter (default: the model's order);
* publishes ``~/controller_state`` (``sensor_msgs/JointState``) every cycle, same joint order:
  ``position`` = reference ``q_d`` (NaN when tracking a Cartesian target, which has no joint
  reference), ``velocity`` = measured ``q``, ``effort`` = commanded torque; the error is
  ``position - velocity``;
* task-space laws also publish ``~/task_state`` (``std_msgs/Float64MultiArray``, only while
  someone subscribes: building it costs ~50 us):
  ``[p_d (3), quat_d xyzw (4), p (3), quat (4), e (6: p_d - p, orientation error), tau (n)]``.

Real time: ``rt_priority`` (0 = off, 1..99): SCHED_FIFO for the thread that runs the executor,
hence every control cycle (logged; a refusal is a warning and the node runs without it).

Loop: ``trigger: joint_states`` (default) computes and publishes once per incoming
``/joint_states`` — lockstep with the MuJoCo bridge — with the message's header stamp as the
control time; ``trigger: timer`` publishes at ``rate`` Hz (wall clock, also with ``use_sim_time``:
a simulated-time timer would wait for a lockstep simulation waiting for it), each time with the latest
state at *its* stamp as the control time.  One clock in every mode (issue 27): references are
planned and evaluated on the states' stamps (a 2 s move takes 2 s of the states' time, however
fast or slow the simulation runs); unstamped states (stamp 0) get the node clock's time on
arrival (``use_sim_time`` applies).  A trajectory stamped more than an hour after the latest
state is refused (stamped on another clock).

Nothing stalls the cycle (issue 26; ``rbd_ros.control.loop``): references are built in their
callbacks and handed to the next cycle through a one-slot try-lock buffer, IK for
``~/target_pose`` runs on a worker thread (its kernels loaded before "ready"), and the watchdog
does not count time the controller itself was busy.

Diagnostics: ``~/diagnostics`` (``std_msgs/String``, JSON) every ``diagnostics_period`` s (wall;
default 1, 0 = off): ``t`` (control time), ``wall_time`` (``time.monotonic``), ``cycles``,
``joints`` (the ``joints`` order of every list), ``effort_limit`` (N m, null = none), and for
the window since the previous message ``window_cycles``, ``saturated_percent`` (% of its cycles
at the effort limit), ``saturated_flip_percent`` (% at the limit with a sign flip against the
previous cycle's command: chatter), ``peak_effort`` (max ``|tau|``, N m); since the start
``total_cycles``, ``saturated_cycles``, ``saturated_flip_cycles``, ``peak_effort_total``.  A
joint whose window percentage (either) rises above 1 % gets one warning line per crossing.

Safety: torques saturated at the effort limits; a NaN anywhere gives zero torque (logged once
per episode); ``/joint_states`` older than ``state_timeout`` s of wall time (0 = never) →
**one zero-torque command, then silence** until states return (logged once each way).  Zero
rather than silence alone, because ros2_control's forward_command_controller would otherwise
keep applying the last torque with nobody watching the arm.

Gains: the parameters ``kp``, ``kd``, ``ki``, ``i_clamp``, ``k_null``, ``kp_null``,
``effort_limit`` (those the law takes; scalars or arrays) win; then ``config/controllers.yaml``
(or ``gains_file``); every gain given by neither is derived from the model
(``rbd_ros.control.gains.model_gains``) for the read-only parameters ``bandwidth`` (Hz,
default 10) and ``damping_ratio`` (1) at the control ``rate`` (Hz; in lockstep set it to
1/timestep of the bridge), at the first measured pose.  The gains in use, and where each came
from, are logged, and readable as the parameters above (``ros2 param get /controller kp``).
They can be changed at runtime: a bad value (negative, wrong length, NaN) is refused with the
reason in the ``set_parameters`` result.
"""
from __future__ import annotations

import array
import json
import math
import sys
import time
from typing import Any

import numpy as np

from rbd_ros.ros import topics
from rbd_ros.ros.common import NodeConfigError, level_logger, recordable_qos, run_node
from rbd_ros.ros.messages import set_stamp, to_seconds
from rbd_ros.ros.robot_params import robot_from_node
from rbd_ros.sim.realtime import check_priority, harden

TRIGGERS = ("joint_states", "timer")  # and "composed": called by the MuJoCo bridge
WATCHDOG_PERIOD = 0.05  # s (wall)
SWITCH_INTERVAL = 1e-4  # s: the GIL changes hands this often (IK worker beside the executor)


class Controller:
    """All the node's state and callbacks (the node itself is created by ``run_node``): ROS
    parameters and messages around one ``rbd_ros.control.loop.ControlLoop``.

    ``composed=True`` (the MuJoCo bridge's composed mode): no ``/joint_states`` subscription,
    no watchdog and no timer; the bridge calls ``step(t, position, velocity)`` in its stepping
    thread with the state it just produced.  References and gain changes arrive on the
    executor thread and are handed to the next cycle without a lock the cycle waits for
    (``ControlLoop``); IK for a target pose runs on the loop's worker thread."""

    def __init__(self, node: Any, composed: bool = False) -> None:
        from geometry_msgs.msg import PoseStamped
        from rcl_interfaces.msg import ParameterDescriptor
        from rclpy.clock import Clock, ClockType
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray, MultiArrayDimension
        from trajectory_msgs.msg import JointTrajectory

        from rbd_ros.control.gains import DEFAULT_BANDWIDTH, DEFAULT_DAMPING_RATIO, LAWS, gain_names, load_gains
        from rbd_ros.control.laws import make_law
        from rbd_ros.control.loop import ControlLoop
        from rbd_ros.control.trajectory import INTERPOLATIONS

        self.node = node
        self.log = node.get_logger()
        ro = ParameterDescriptor(read_only=True)
        p = node.declare_parameter
        law_type = (node.get_parameter("type") if node.has_parameter("type")
                    else p("type", "computed_torque", ro)).value
        if law_type not in LAWS:
            from rbd_ros.control.mobile_laws import MOBILE_LAWS

            raise NodeConfigError(f"unknown type '{law_type}'; use one of {', '.join(LAWS + MOBILE_LAWS)}")
        joints_param = list(p("joints", [""], ParameterDescriptor(read_only=True, dynamic_typing=True)).value or [])
        gains_file = p("gains_file", "", ro).value
        self.trigger = p("trigger", "joint_states", ro).value
        if self.trigger not in TRIGGERS:
            raise NodeConfigError(f"trigger must be one of {TRIGGERS}, got '{self.trigger}'")
        if composed:
            self.trigger = "composed"
        rate = float(p("rate", 1000.0, ro).value)
        if not rate > 0:
            raise NodeConfigError(f"rate must be positive, got {rate}")
        model_actuators = bool(p("model_actuators", True, ro).value)
        state_timeout = float(p("state_timeout", 0.5).value)
        if not (math.isfinite(state_timeout) and state_timeout >= 0):  # as at runtime
            raise NodeConfigError(f"state_timeout must be >= 0 s (0 = never), got {state_timeout}")
        interpolation = p("interpolation", "auto").value
        if interpolation not in INTERPOLATIONS:
            raise NodeConfigError(f"interpolation must be one of {INTERPOLATIONS}")
        pose_duration = float(p("pose_duration", 2.0).value)
        self.publish_state = bool(p("publish_state", True).value)
        diagnostics_period = float(p("diagnostics_period", 1.0, ro).value)
        if not (math.isfinite(diagnostics_period) and diagnostics_period >= 0):
            raise NodeConfigError(f"diagnostics_period must be >= 0 s (0 = off), got {diagnostics_period}")

        # ---- robot, law, gains -----------------------------------------------------------------
        loaded = robot_from_node(node)  # model_yaml | robot_description | urdf_path, gravity
        model, source, stem = loaded.model, loaded.source, loaded.stem
        if model.base_type != "fixed":
            raise NodeConfigError(f"'{model.name}' has a {model.base_type} base: use type "
                                  "diff_drive_velocity or whole_body_computed_torque (an arm law "
                                  "would leave the base undriven)")
        self.model = model
        n = self.dof = model.dof
        bandwidth = float(p("bandwidth", DEFAULT_BANDWIDTH, ro).value)
        damping_ratio = float(p("damping_ratio", DEFAULT_DAMPING_RATIO, ro).value)
        try:
            load_gains(law_type, robot_names=[model.name, stem], path=gains_file or None)
        except FileNotFoundError as exc:
            raise NodeConfigError(str(exc)) from None
        given: dict[str, Any] = {}  # gain parameters set by the user (they win over the file)
        for name in gain_names(law_type):
            value = p(name, None, ParameterDescriptor(dynamic_typing=True)).value
            if value is not None:
                given[name] = list(value) if isinstance(value, (list, tuple, array.array)) else value
        try:
            self.law = make_law(law_type, model, given, model_actuators=model_actuators,
                                gains_file=gains_file or None, bandwidth=bandwidth,
                                damping_ratio=damping_ratio, rate=rate)
        except ValueError as exc:
            raise NodeConfigError(f"gains: {exc}") from None
        self._publish_gain_parameters({k: v for k, v in self.law.gains.items()
                                       if self.law.gain_source.get(k) != "given"})
        self.law_type = law_type
        self._gain_names = set(gain_names(law_type))
        node.add_on_set_parameters_callback(self._on_set_parameters)

        # ---- joint order, state, references: the ROS-free loop ---------------------------------
        log = level_logger(node)
        try:
            self.loop = ControlLoop(model, self.law, joints_param, log, state_timeout,
                                    interpolation, pose_duration)
        except ValueError as exc:
            raise NodeConfigError(str(exc)) from None
        self.loop.on_first_state = self._derive_gains_at_start
        self.joints = joints = self.loop.joints
        self.cmd_index = self.loop.cmd_index
        self.tau_out = self.loop.tau_out

        # ---- ROS interfaces --------------------------------------------------------------------
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        pub_qos = recordable_qos()  # a slow recorder still gets every sample
        self.cmd_pub = node.create_publisher(Float64MultiArray, topics.COMMANDS, pub_qos)
        self.state_pub = node.create_publisher(JointState, topics.CONTROLLER_STATE, pub_qos)
        self.cmd_msg = Float64MultiArray()
        self.cmd_msg.layout.dim = [MultiArrayDimension(label="joints", size=n, stride=n)]
        self.state_msg = JointState()
        self.state_msg.name = list(joints)
        self.task_pub = None
        if self.law.task_space:
            self.task_pub = node.create_publisher(Float64MultiArray, topics.TASK_STATE, qos)
            self.task_msg = Float64MultiArray()
            self.task_msg.layout.dim = [MultiArrayDimension(
                label="p_d(3),quat_d(4),p(3),quat(4),e(6),tau(n)", size=20 + n, stride=20 + n)]
        self.diag_pub = None
        if diagnostics_period > 0:
            from std_msgs.msg import String

            self._String = String
            self.diag_pub = node.create_publisher(String, topics.DIAGNOSTICS, 10)
            node.create_timer(diagnostics_period, self.publish_diagnostics,
                              clock=Clock(clock_type=ClockType.STEADY_TIME))
        node.create_subscription(PoseStamped, topics.TARGET_POSE, self._on_target_pose, qos)
        node.create_subscription(JointTrajectory, topics.JOINT_TRAJECTORY, self._on_trajectory, qos)
        if not composed:
            node.create_subscription(JointState, topics.JOINT_STATES, self._on_joint_state, qos)
            wall = Clock(clock_type=ClockType.STEADY_TIME)
            if self.trigger == "timer":
                # paced by the wall clock: a sim-time timer would wait for a lockstep simulation
                # that waits for its commands (use_sim_time); the cycle's time is the states'
                node.create_timer(1.0 / rate, self._on_timer, clock=wall)
            node.create_timer(WATCHDOG_PERIOD, self._watchdog, clock=wall)
            # "ready" once the executor runs the callbacks (the first timer tick), not here,
            # before anything spins: whoever waits for it may then send states and trajectories
            self._ready_text = f"controller: ready ({law_type}, {n} joints, {source})"
            self._ready_timer = node.create_timer(0.001, self._announce_ready, clock=wall)
        self.log.info(f"{law_type} on {n} joints from {source}; trigger {self.trigger}; "
                      + self._gains_text())

    # ---- gains from the model ----------------------------------------------------------------
    def _gains_text(self) -> str:
        law = self.law
        text = "gains " + ", ".join(f"{k}={np.round(v, 4).tolist()} ({law.gain_source.get(k, 'given')})"
                                    for k, v in law.gains.items())
        if law.gain_notes and any(src == "model" for src in law.gain_source.values()):
            text += "; " + "; ".join(law.gain_notes)
        return text

    def _publish_gain_parameters(self, gains: dict[str, np.ndarray]) -> None:
        """Make the gains in use readable as parameters (``ros2 param get``)."""
        from rclpy.parameter import Parameter

        self.node.set_parameters([Parameter(k, value=[float(x) for x in v])
                                  for k, v in gains.items()])

    def _derive_gains_at_start(self, q: np.ndarray) -> None:
        """The model's gains at the first measured pose (``ControlLaw.derive_gains``); called
        by the loop at its first state."""
        changed = self.law.derive_gains(q)
        if changed:
            self._publish_gain_parameters(changed)
            self.log.info(f"gains from the model at the start pose {np.round(q, 4).tolist()}: "
                          + self._gains_text())

    def _announce_ready(self) -> None:
        self._ready_timer.cancel()  # once (kept: the lean executor's wait set holds it)
        print(self._ready_text, flush=True)

    # ---- set-up helpers -----------------------------------------------------------------------
    def _on_set_parameters(self, params: list[Any]) -> Any:
        from rcl_interfaces.msg import SetParametersResult

        from rbd_ros.control.gains import validate_gain
        from rbd_ros.control.trajectory import INTERPOLATIONS

        gains: dict[str, Any] = {}
        for prm in params:
            v = prm.value
            if prm.name in self._gain_names:
                if v is None:
                    return SetParametersResult(successful=False, reason=f"{prm.name} cannot be unset")
                try:
                    gains[prm.name] = validate_gain(self.law_type, prm.name,
                                                    list(v) if not np.isscalar(v) else v, self.dof)
                except ValueError as exc:
                    return SetParametersResult(successful=False, reason=str(exc))
            elif prm.name == "state_timeout":
                if not (isinstance(v, (int, float)) and v >= 0):
                    return SetParametersResult(successful=False, reason="state_timeout must be >= 0 s")
            elif prm.name == "pose_duration":
                if not (isinstance(v, (int, float)) and v >= 0):
                    return SetParametersResult(successful=False, reason="pose_duration must be >= 0 s")
            elif prm.name == "interpolation" and v not in INTERPOLATIONS:
                return SetParametersResult(successful=False,
                                           reason=f"interpolation must be one of {INTERPOLATIONS}")
        # every check passed: apply (gains from the next cycle on: never under the cycle)
        loop = self.loop
        for prm in params:
            if prm.name == "state_timeout":
                loop.state_timeout = float(prm.value)
            elif prm.name == "pose_duration":
                loop.pose_duration = float(prm.value)
            elif prm.name == "interpolation":
                loop.interpolation = prm.value
            elif prm.name == "publish_state":
                self.publish_state = bool(prm.value)
        if gains:
            loop.set_gains_later(gains)
        if gains:
            self.log.info("gains changed: " + ", ".join(f"{k}={v.tolist()}" for k, v in gains.items()))
        return SetParametersResult(successful=True)

    # ---- inputs -------------------------------------------------------------------------------
    def _on_joint_state(self, msg: Any) -> None:
        stamp = msg.header.stamp
        t = to_seconds(stamp)
        if t == 0.0:
            t = self.node.get_clock().now().nanoseconds * 1e-9
        if self.loop.joint_state(msg.name, msg.position, msg.velocity, t) \
                and self.trigger == "joint_states":
            self.cycle(t)

    def _on_timer(self) -> None:
        loop = self.loop
        if not loop.have_state or loop.stale:
            return
        self.cycle(loop.t)  # the states' clock (issue 27): the latest state, at its stamp

    def _watchdog(self) -> None:
        if self.loop.watchdog(time.monotonic(), WATCHDOG_PERIOD):
            self._publish_command()

    def _on_trajectory(self, msg: Any) -> None:
        self.loop.trajectory(msg)  # built here, adopted by the next cycle

    def _on_target_pose(self, msg: Any) -> None:
        self.loop.target_pose(msg)  # IK (joint-space laws) on the loop's worker thread

    def publish_diagnostics(self) -> None:
        """``~/diagnostics`` (module docstring), and a warning per joint crossing 1 %."""
        loop = self.loop
        report = loop.saturation_report()
        for line in loop.saturation_warnings(report):
            self.log.warning(line)
        data = {"t": loop.t if math.isfinite(loop.t) else None, "wall_time": time.monotonic(),
                "cycles": loop.cycles, "law": self.law_type, **report}
        try:
            self.diag_pub.publish(self._String(data=json.dumps(data)))
        except Exception:  # noqa: BLE001 - shutting down (Ctrl-C) while in a callback
            if self.node.context.ok():
                raise

    # ---- the cycle ----------------------------------------------------------------------------
    def step(self, t: float, names: list[str], position: np.ndarray,
             velocity: np.ndarray) -> np.ndarray:
        """Composed mode: one cycle on a state in ``names`` order at time ``t``; returns the
        torque (``joints`` order; the bridge checks the orders agree), published as well."""
        self.loop.joint_state(names, position, velocity, t)
        self.cycle(t)
        return self.tau_out

    def cycle(self, t: float) -> None:
        """Reference at ``t``, law, command (and state) publication."""
        self.loop.cycle(t)
        self._publish_command()
        if self.publish_state:
            self._publish_state(t)

    @property
    def cycles(self) -> int:
        return self.loop.cycles

    def _publish_command(self) -> None:
        self.cmd_msg.data = array.array("d", self.tau_out.tobytes())
        try:
            self.cmd_pub.publish(self.cmd_msg)
        except Exception:  # noqa: BLE001 - shutting down (Ctrl-C) while in a callback
            if self.node.context.ok():
                raise

    def _publish_state(self, t: float) -> None:
        msg = self.state_msg
        set_stamp(msg.header.stamp, t)
        msg.position = array.array("d", self.loop.ref_out.tobytes())
        msg.velocity = array.array("d", self.loop.q_out.tobytes())
        msg.effort = array.array("d", self.tau_out.tobytes())
        try:
            self.state_pub.publish(msg)
        except Exception:  # noqa: BLE001 - shutting down (Ctrl-C) while in a callback
            if self.node.context.ok():
                raise
            return
        if self.task_pub is not None and self.task_pub.get_subscription_count() > 0:
            from rbd_ros.lie.so3 import rotation_to_quaternion

            law = self.law
            data = np.concatenate([law.ref_T[:3, 3], rotation_to_quaternion(law.ref_T[:3, :3]),
                                   law.T[:3, 3], rotation_to_quaternion(law.T[:3, :3]), law.error,
                                   self.tau_out])
            self.task_msg.data = array.array("d", data.tobytes())
            self.task_pub.publish(self.task_msg)


def main(argv: list[str] | None = None) -> int:
    holder: dict[str, Any] = {}

    def body(node: Any) -> None:
        from rcl_interfaces.msg import ParameterDescriptor

        from rbd_ros.control.mobile_laws import MOBILE_LAWS

        law_type = node.declare_parameter("type", "computed_torque", ParameterDescriptor(read_only=True)).value
        priority = check_priority(node.declare_parameter("rt_priority", 0, ParameterDescriptor(read_only=True)).value)
        if law_type in MOBILE_LAWS:  # a mobile manipulator: rbd_ros.ros.nodes.mobile_controller
            from rbd_ros.ros.nodes.mobile_controller import MobileController

            holder["controller"] = MobileController(node, law_type)
        else:
            holder["controller"] = Controller(node)
            sys.setswitchinterval(SWITCH_INTERVAL)  # the IK worker yields the GIL to the cycle
        if priority:  # this thread runs the executor, hence every control cycle
            for line in harden(priority):
                if "refused" in line:
                    node.get_logger().warning(f"realtime: {line}; controlling without it")
                else:
                    node.get_logger().info(f"realtime: {line} (the executor thread)")

    from rbd_ros.ros.lean_executor import LeanExecutor

    # ~0.1 ms less per control cycle than rclpy's SingleThreadedExecutor (lean_executor.py)
    return run_node("controller", body, argv, executor_factory=LeanExecutor)


if __name__ == "__main__":
    sys.exit(main())
