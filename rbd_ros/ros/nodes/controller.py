"""Node ``controller``: a torque controller of 003 chapter 6 on ros2_control's topics.

    rbd-ros controller --ros-args -p type:=computed_torque [-p model_yaml:=FILE |
        -p urdf_path:=FILE | -p robot_description:=XML] [-p base_link:=L -p tip_link:=L]
        [-p gravity:=[0.0,0.0,-9.81]] [-p kp:=400.0 ...]

The robot parameters are those of every node (``rbd_ros.ros.robot_params``).

A thin adapter over the ROS-free ``rbd_ros.control`` laws and trajectories.

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

Loop: ``trigger: joint_states`` (default) computes and publishes once per incoming
``/joint_states`` — lockstep with the MuJoCo bridge — with the message's header stamp as the
control time; ``trigger: timer`` runs at ``rate`` Hz on the node clock.

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
import math
import sys
import time
from typing import Any

import numpy as np
from numba import njit

from rbd_ros.ros import topics
from rbd_ros.ros.common import NodeConfigError, recordable_qos, run_node
from rbd_ros.ros.messages import from_joint_trajectory, set_stamp, to_seconds
from rbd_ros.ros.robot_params import robot_from_node

TRIGGERS = ("joint_states", "timer")


@njit(cache=True)
def _gather(src: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - jitted
    """``out[i] = src[index[i]]`` (np.take costs ~3x more on 7 entries)."""
    for i in range(index.shape[0]):
        out[i] = src[index[i]]


@njit(cache=True)
def _gather2(a: np.ndarray, b: np.ndarray, index: np.ndarray, out_a: np.ndarray,
             out_b: np.ndarray) -> None:  # pragma: no cover - jitted
    for i in range(index.shape[0]):
        out_a[i] = a[index[i]]
        out_b[i] = b[index[i]]


class Controller:
    """All the node's state and callbacks (the node itself is created by ``run_node``)."""

    def __init__(self, node: Any) -> None:
        from geometry_msgs.msg import PoseStamped
        from rcl_interfaces.msg import ParameterDescriptor
        from rclpy.clock import Clock, ClockType
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray, MultiArrayDimension
        from trajectory_msgs.msg import JointTrajectory

        from rbd_ros.control.gains import DEFAULT_BANDWIDTH, DEFAULT_DAMPING_RATIO, LAWS, gain_names, load_gains
        from rbd_ros.control.laws import Reference, make_law
        from rbd_ros.control.trajectory import INTERPOLATIONS, HoldPosition

        self.node = node
        self.log = node.get_logger()
        ro = ParameterDescriptor(read_only=True)
        p = node.declare_parameter
        law_type = p("type", "computed_torque", ro).value
        if law_type not in LAWS:
            raise NodeConfigError(f"unknown type '{law_type}'; use one of {', '.join(LAWS)}")
        joints_param = list(p("joints", [""], ParameterDescriptor(read_only=True, dynamic_typing=True)).value or [])
        gains_file = p("gains_file", "", ro).value
        self.trigger = p("trigger", "joint_states", ro).value
        if self.trigger not in TRIGGERS:
            raise NodeConfigError(f"trigger must be one of {TRIGGERS}, got '{self.trigger}'")
        rate = float(p("rate", 1000.0, ro).value)
        if not rate > 0:
            raise NodeConfigError(f"rate must be positive, got {rate}")
        model_actuators = bool(p("model_actuators", True, ro).value)
        self.state_timeout = float(p("state_timeout", 0.5).value)
        if not (math.isfinite(self.state_timeout) and self.state_timeout >= 0):  # as at runtime
            raise NodeConfigError(f"state_timeout must be >= 0 s (0 = never), got {self.state_timeout}")
        self.interpolation = p("interpolation", "auto").value
        if self.interpolation not in INTERPOLATIONS:
            raise NodeConfigError(f"interpolation must be one of {INTERPOLATIONS}")
        self.pose_duration = float(p("pose_duration", 2.0).value)
        self.publish_state = bool(p("publish_state", True).value)

        # ---- robot, law, gains -----------------------------------------------------------------
        loaded = robot_from_node(node)  # model_yaml | robot_description | urdf_path, gravity
        model, source, stem = loaded.model, loaded.source, loaded.stem
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
        self._warm_up()
        self._gain_names = set(gain_names(law_type))
        node.add_on_set_parameters_callback(self._on_set_parameters)

        # ---- joint order -----------------------------------------------------------------------
        names = list(model.joint_names)
        joints = [j for j in joints_param if j] or names
        if sorted(joints) != sorted(names):
            raise NodeConfigError(f"joints {joints} must be the model's joints {names} in any order")
        self.joints = joints
        self.cmd_index = np.array([names.index(j) for j in joints], dtype=np.intp)

        # ---- state -----------------------------------------------------------------------------
        self.q = np.zeros(n)
        self.qd = np.zeros(n)
        self.q_prev = np.zeros(n)
        self.t = math.nan  # control time of the latest state
        self.t_prev = math.nan
        self.have_state = False
        self.last_state_wall = 0.0
        self.stale = False
        self._state_names: list[str] | None = None
        self._state_index = np.zeros(n, dtype=np.intp)
        self._missing_warned = False
        self._pending: list[tuple[Any, Any]] = []  # references received before any state
        self._fault_logged = False
        self._no_velocity_warned = False
        self.ref = Reference(n)
        self.reference: Any = None  # joint reference (HoldPosition / JointSpline)
        self.cartesian: Any = None  # CartesianMove for task-space laws
        self._HoldPosition = HoldPosition
        self.tau_out = np.zeros(n)
        self._state_buf = np.zeros((2, n))
        self.cycles = 0

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
        node.create_subscription(PoseStamped, topics.TARGET_POSE, self._on_target_pose, qos)
        node.create_subscription(JointState, topics.JOINT_STATES, self._on_joint_state, qos)
        node.create_subscription(JointTrajectory, topics.JOINT_TRAJECTORY, self._on_trajectory, qos)
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        if self.trigger == "timer":
            node.create_timer(1.0 / rate, self._on_timer)
        node.create_timer(0.05, self._watchdog, clock=wall)
        # "ready" once the executor runs the callbacks (the first timer tick), not here, before
        # anything spins: whoever waits for it may then send states and trajectories at once
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

    def _derive_gains_at_start(self) -> None:
        """The model's gains at the first measured pose (``ControlLaw.derive_gains``)."""
        changed = self.law.derive_gains(self.q)
        if changed:
            self._publish_gain_parameters(changed)
            self.log.info(f"gains from the model at the start pose {np.round(self.q, 4).tolist()}: "
                          + self._gains_text())

    def _announce_ready(self) -> None:
        self._ready_timer.cancel()  # once (kept: the lean executor's wait set holds it)
        print(self._ready_text, flush=True)

    # ---- set-up helpers -----------------------------------------------------------------------
    def _announce_ready(self) -> None:
        self._ready_timer.cancel()  # once (kept: the lean executor's wait set holds it)
        print(self._ready_text, flush=True)

    def _warm_up(self) -> None:
        """Load the jitted kernels now (numba cache), not in the first control cycle."""
        from rbd_ros.control.laws import Reference
        from rbd_ros.control.trajectory import quintic_point_to_point

        n = self.model.dof
        q = np.zeros(n)
        self.law.compute(0.0, q, q, Reference(n).set_joint(q))
        if self.law.task_space:
            self.law.compute(0.0, q, q, Reference(n).set_task(np.eye(4)))
        self.law.reset()
        traj = quintic_point_to_point(q, q + 0.1, 1.0)
        traj.evaluate(0.5, q.copy(), q.copy(), q.copy())
        idx = np.arange(n, dtype=np.intp)
        _gather(q, idx, q.copy())
        _gather2(q, q, idx, q.copy(), q.copy())

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
        # every check passed: apply
        for prm in params:
            if prm.name == "state_timeout":
                self.state_timeout = float(prm.value)
            elif prm.name == "pose_duration":
                self.pose_duration = float(prm.value)
            elif prm.name == "interpolation":
                self.interpolation = prm.value
            elif prm.name == "publish_state":
                self.publish_state = bool(prm.value)
        if gains:
            self.law.set_gains(gains)
            self.log.info("gains changed: " + ", ".join(f"{k}={v.tolist()}" for k, v in gains.items()))
        return SetParametersResult(successful=True)

    # ---- inputs -------------------------------------------------------------------------------
    def _on_joint_state(self, msg: Any) -> None:
        names = msg.name
        if names != self._state_names:
            try:
                index = [names.index(j) for j in self.model.joint_names]
            except ValueError:
                if not self._missing_warned:
                    missing = [j for j in self.model.joint_names if j not in names]
                    self.log.error(f"/joint_states lacks joints {missing}: ignored")
                    self._missing_warned = True
                return
            self._state_names = list(names)
            self._state_index[:] = index
        pos = msg.position
        if len(pos) != len(names):
            return
        t = to_seconds(msg.header.stamp)
        if t == 0.0:
            t = self.node.get_clock().now().nanoseconds * 1e-9
        vel = msg.velocity
        if len(vel) == len(names):
            _gather2(np.frombuffer(pos), np.frombuffer(vel), self._state_index, self.q, self.qd)
        else:
            _gather(np.frombuffer(pos), self._state_index, self.q)
            if not self._no_velocity_warned:
                self.log.warn("/joint_states has no velocities: estimating them by finite differences")
                self._no_velocity_warned = True
            dt = t - self.t
            if self.have_state and dt > 0:
                np.subtract(self.q, self.q_prev, out=self.qd)
                self.qd /= dt
            else:
                self.qd[:] = 0.0
            self.q_prev[:] = self.q
        self.t = t
        self.last_state_wall = time.monotonic()
        if self.stale:
            self.stale = False
            self.log.info("/joint_states fresh again: commanding")
        if not self.have_state:
            self.have_state = True
            self._derive_gains_at_start()
            self.reference = self._HoldPosition(self.q)
            pending, self._pending = self._pending, []
            for handler, early in pending:
                handler(early)
        if self.trigger == "joint_states":
            self.cycle(t)

    def _on_timer(self) -> None:
        if not self.have_state or self.stale:
            return
        self.cycle(self.node.get_clock().now().nanoseconds * 1e-9)

    def _watchdog(self) -> None:
        if (self.have_state and not self.stale and self.state_timeout > 0
                and time.monotonic() - self.last_state_wall > self.state_timeout):
            self.stale = True
            self.log.error(f"/joint_states older than {self.state_timeout} s (after {self.cycles} cycles): "
                           "sent zero torque, commanding nothing until states return")
            self.tau_out[:] = 0.0
            self._publish_command()

    def _current_reference(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, qd, qdd = np.zeros(self.dof), np.zeros(self.dof), np.zeros(self.dof)
        if self.reference is not None:
            self.reference.evaluate(t, q, qd, qdd)
        else:
            q[:] = self.q
        return q, qd, qdd

    def _on_trajectory(self, msg: Any) -> None:
        from rbd_ros.control.trajectory import JointSpline

        if not self.have_state:
            self._pending.append((self._on_trajectory, msg))
            self.log.info("trajectory received before any /joint_states: it starts with the first state")
            return
        try:
            names = list(msg.joint_names)
            if sorted(names) != sorted(self.model.joint_names) or len(set(names)) != len(names):
                raise ValueError(f"joint names {names} do not match the controlled joints "
                                 f"{list(self.model.joint_names)}")
            now = self.t
            if not msg.points:
                self.reference = self._HoldPosition(self.q)
                self.cartesian = None
                self.log.info("empty trajectory: holding the current position")
                return
            cols = [names.index(j) for j in self.model.joint_names]
            m = len(msg.points)
            _, tfs, P, V, A = from_joint_trajectory(msg)
            P, V, A = (None if X is None else X[:, cols] for X in (P, V, A))
            lo, hi = self.model.lower, self.model.upper
            bad = np.flatnonzero(((P < lo - 1e-9) | (P > hi + 1e-9)).any(axis=0))
            if bad.size:
                raise ValueError(f"positions outside the joint limits for "
                                 f"{[self.model.joint_names[i] for i in bad]}")
            stamp = to_seconds(msg.header.stamp)
            t0 = stamp if stamp > now else now
            start = self._current_reference(t0)
            previous = self.reference if t0 > now else None
            traj = JointSpline.from_points(t0, tfs, P, V, A, start=start,
                                           interpolation=self.interpolation, previous=previous)
            why = traj.limit_violation(self.model.joint_names, lo, hi, self.model.velocity_limit)
            if why is not None:  # between the points (issue 19): refused, never clamped silently
                raise ValueError(why)
        except ValueError as exc:
            self.log.error(f"trajectory refused: {exc}")
            return
        self.reference = traj
        self.cartesian = None
        self.log.info(f"trajectory accepted: {m} points, {traj.kind}, "
                      f"{traj.end_time - t0:.3f} s from t = {t0:.3f}")

    def _on_target_pose(self, msg: Any) -> None:
        from rbd_ros.control.trajectory import CartesianMove
        from rbd_ros.lie.so3 import pose_matrix

        if not self.have_state:
            self._pending.append((self._on_target_pose, msg))
            self.log.info("target pose received before any /joint_states: it starts with the first state")
            return
        try:
            frame = msg.header.frame_id
            if frame not in ("", self.model.base_link):
                raise ValueError(f"frame '{frame}' is not the base frame '{self.model.base_link}'")
            p, o = msg.pose.position, msg.pose.orientation
            T1 = pose_matrix([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
            if not np.isfinite(T1).all():
                raise ValueError("pose contains NaN or Inf")
            now = self.t
            if not self.law.task_space:
                self.reference, q1 = self._ik_move(T1, now)
                self.log.info(f"target pose accepted: IK q = {np.round(q1, 4).tolist()}, "
                              f"{self.pose_duration:.3f} s")
                return
            T0 = np.empty((4, 4))
            v, a = np.zeros(6), np.zeros(6)
            if self.cartesian is not None:
                self.cartesian.evaluate(now, T0, v, a)
            else:
                q, qd, qdd = self._current_reference(now)
                self.law.task_reference(self.ref.set_joint(q, qd, qdd))
                T0[:] = self.law.ref_T
            move = CartesianMove(T0, T1, now, self.pose_duration)
        except ValueError as exc:
            self.log.error(f"target pose refused: {exc}")
            return
        self.cartesian = move
        self.log.info(f"target pose accepted: p = {np.round(T1[:3, 3], 4).tolist()}, "
                      f"{self.pose_duration:.3f} s")

    def _ik_move(self, T1: np.ndarray, now: float) -> tuple[Any, np.ndarray]:
        """Joint-space laws: ``T1`` by IK from the current reference, then a rest-to-rest joint
        move of ``pose_duration`` s (a step if 0); ``ValueError`` if no solution inside the
        limits.  Returns the reference and the IK solution."""
        from rbd_ros.control.trajectory import JointSpline
        from rbd_ros.robot import Robot

        robot = self.__dict__.get("_ik_robot") or self.__dict__.setdefault("_ik_robot", Robot(self.model))
        start = self._current_reference(now)
        res = robot.ik(T1, q0=start[0], timeout=0.05)
        if not res.success:
            raise ValueError(f"no joint solution inside the limits (best pose {res.position_error:.3g} m, "
                             f"{res.orientation_error:.3g} rad away)")
        if self.pose_duration <= 0.0:  # a step
            return self._HoldPosition(res.q), res.q
        z = np.zeros((1, self.dof))
        return JointSpline.from_points(now, [self.pose_duration], res.q[None], z, z,
                                       start=start, interpolation=self.interpolation), res.q

    # ---- the cycle ----------------------------------------------------------------------------
    def cycle(self, t: float) -> None:
        """Reference at ``t``, law, command (and state) publication."""
        ref = self.ref
        if self.cartesian is not None:
            self.cartesian.evaluate(t, ref.T, ref.v, ref.a)
            ref.joint, ref.task = False, True
            ref.q[:] = math.nan
        else:
            self.reference.evaluate(t, ref.q, ref.qd, ref.qdd)
            ref.joint, ref.task = True, False
        law = self.law
        tau = law.compute(t, self.q, self.qd, ref)
        if law.fault:
            if not self._fault_logged:
                self.log.error(f"{law.status}")
                self._fault_logged = True
        elif self._fault_logged:
            self.log.info("inputs finite again: control resumed")
            self._fault_logged = False
        _gather(tau, self.cmd_index, self.tau_out)
        self._publish_command()
        self.cycles += 1
        if self.publish_state:
            self._publish_state(t)

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
        idx, buf = self.cmd_index, self._state_buf
        _gather2(self.ref.q, self.q, idx, buf[0], buf[1])
        msg.position = array.array("d", buf[0].tobytes())
        msg.velocity = array.array("d", buf[1].tobytes())
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
    holder: dict[str, Controller] = {}

    def body(node: Any) -> None:
        holder["controller"] = Controller(node)

    from rbd_ros.ros.lean_executor import LeanExecutor

    # ~0.1 ms less per control cycle than rclpy's SingleThreadedExecutor (lean_executor.py)
    return run_node("controller", body, argv, executor_factory=LeanExecutor)


if __name__ == "__main__":
    sys.exit(main())
