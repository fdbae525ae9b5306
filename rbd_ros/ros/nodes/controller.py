"""Node ``controller``: a torque controller of 003 chapter 6 on ros2_control's topics.

    rbd-ros controller --ros-args -p type:=computed_torque [-p model_yaml:=FILE |
        -p urdf_path:=FILE | -p robot_description:=XML] [-p base_link:=L -p tip_link:=L]
        [-p gravity:=[0.0,0.0,-9.81]] [-p kp:=400.0 ...]

The robot parameters are those of every node (``rbd_ros.ros.robot_params``); the node's own
are declared, checked and documented from ``config/schema/controller.yaml`` (the table:
``docs/parameters.md``; ``rbd_ros.ros.parameters``).  One node for every law: ``type`` picks
the law from the registry (``law_registry``): an arm law runs ``Controller`` on a fixed-base
arm (below), a mobile law ``rbd_ros.ros.nodes.mobile_controller.MobileController`` (whole-body
laws on a diff-drive or planar base).  ``managed:=true`` makes it a lifecycle node
(``rbd_ros.ros.nodes.managed``: configure, activate, deactivate, cleanup); the default starts
commanding at once (bringup).

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
* serves ``~/follow_joint_trajectory`` (``control_msgs/action/FollowJointTrajectory``) with
  joint_trajectory_controller's semantics, for MoveIt and every ros2_control client
  (``rbd_ros.ros.follow_action``; parameters ``action_monitor_rate``, ``path_tolerance``,
  ``goal_tolerance``, ``stopped_velocity_tolerance``, ``goal_time``);
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
from rbd_ros.ros.common import NodeConfigError, level_logger, run_node
from rbd_ros.ros.lean_executor import take_waiting
from rbd_ros.ros.messages import set_stamp, to_seconds
from rbd_ros.ros.nodes.controller_common import (
    SWITCH_INTERVAL,
    WATCHDOG_PERIOD,
    declare_gains,
    harden_node,
    law_family,
    make_outputs,
    node_parameters,
    publish_quietly,
    reliable_qos,
    robot_for,
    wall_clock,
)
from rbd_ros.ros.parameters import schema


def make_controller(node: Any, composed: bool = False, base_state: Any = None) -> Any:
    """The controller of the node's ``type``: ``Controller`` (arm laws) or
    ``MobileController`` (mobile laws; composed: ``base_state`` the simulator's ground
    truth)."""
    law_type, family = law_family(node)
    if family == "mobile":
        from rbd_ros.ros.nodes.mobile_controller import MobileController

        if composed and base_state is None:
            raise NodeConfigError(f"controller_type {law_type} drives a mobile base; this robot has none")
        return MobileController(node, law_type, composed=composed, base_state=base_state)
    return Controller(node, composed=composed)


class Controller:
    """All the node's state and callbacks (the node itself is created by ``run_node``): ROS
    parameters and messages around one ``rbd_ros.control.loop.ControlLoop``.

    ``composed=True`` (the MuJoCo bridge's composed mode): no ``/joint_states`` subscription,
    no watchdog and no timer; the bridge calls ``step(t, position, velocity)`` in its stepping
    thread with the state it just produced.  References and gain changes arrive on the
    executor thread and are handed to the next cycle without a lock the cycle waits for
    (``ControlLoop``); IK for a target pose runs on the loop's worker thread."""

    def __init__(self, node: Any, composed: bool = False) -> None:
        from rbd_ros.control.gains import gain_names

        self.node = node
        self.log = node.get_logger()
        self.active = True  # commands are published (a managed node: between activate and deactivate)
        prm = node_parameters(node, "arm", composed)
        self.law_type = law_type = prm["type"]
        self.trigger = "composed" if composed else prm["trigger"]
        self.publish_state = bool(prm["publish_state"])
        loaded = robot_for(node, "arm", law_type)
        self.model, n = loaded.model, loaded.model.dof
        self.dof = n
        self.law = self._make_law(prm, loaded)
        self._gain_names = set(gain_names(law_type))
        node.add_on_set_parameters_callback(self._on_set_parameters)
        self.loop = self._make_loop(prm)
        self.joints, self.cmd_index, self.tau_out = self.loop.joints, self.loop.cmd_index, self.loop.tau_out
        self._make_interfaces(prm["diagnostics_period"], composed)
        from rbd_ros.ros.follow_action import make_server

        self.action = make_server(self, prm)  # ~/follow_joint_trajectory (own node and thread)

        from rbd_ros.ros.contact_topics import attach_controller  # ~/target_wrench (force laws)

        self.wrench_inputs = attach_controller(self, composed)
        if not composed:
            self._make_cycle_sources(prm["rate"])
            # "ready" once the executor runs the callbacks (the first timer tick), not here,
            # before anything spins: whoever waits for it may then send states and trajectories
            self._ready_text = f"controller: ready ({law_type}, {n} joints, {loaded.source})"
            self._ready_timer = node.create_timer(0.001, self._announce_ready, clock=wall_clock())
        self.log.info(f"{law_type} on {n} joints from {loaded.source}; trigger {self.trigger}; "
                      + self._gains_text())

    def _make_law(self, prm: dict[str, Any], loaded: Any) -> Any:
        """The law with its gains: parameters > gains file > model (module docstring); the
        gains not given are published as parameters."""
        from rbd_ros.control.gains import load_gains
        from rbd_ros.control.laws import make_law

        law_type, gains_file = prm["type"], prm["gains_file"] or None
        try:
            load_gains(law_type, robot_names=[loaded.model.name, loaded.stem], path=gains_file)
        except FileNotFoundError as exc:
            raise NodeConfigError(str(exc)) from None
        given = {k: v for k, v in declare_gains(self.node, law_type).items() if v is not None}
        try:
            law = make_law(law_type, loaded.model, given, model_actuators=prm["model_actuators"],
                           gains_file=gains_file, bandwidth=prm["bandwidth"],
                           damping_ratio=prm["damping_ratio"], rate=prm["rate"])
        except ValueError as exc:
            raise NodeConfigError(f"gains: {exc}") from None
        self.law = law
        self._publish_gain_parameters({k: v for k, v in law.gains.items() if law.gain_source.get(k) != "given"})
        return law

    def _make_loop(self, prm: dict[str, Any]) -> Any:
        """The ROS-free loop: joint order, state, references, safety."""
        from rbd_ros.control.loop import ControlLoop

        try:
            loop = ControlLoop(self.model, self.law, prm["joints"], level_logger(self.node),
                               prm["state_timeout"], prm["interpolation"], prm["pose_duration"])
        except ValueError as exc:
            raise NodeConfigError(str(exc)) from None
        loop.on_first_state = self._derive_gains_at_start
        return loop

    def _make_interfaces(self, diagnostics_period: float, composed: bool) -> None:
        """Publishers and the reference subscriptions (module docstring)."""
        from geometry_msgs.msg import PoseStamped
        from std_msgs.msg import Float64MultiArray, MultiArrayDimension
        from trajectory_msgs.msg import JointTrajectory

        node, n = self.node, self.dof
        make_outputs(self, self.joints, self.joints)
        self.task_pub = None
        if self.law.task_space:
            self.task_pub = node.create_publisher(Float64MultiArray, topics.TASK_STATE, reliable_qos())
            self.task_msg = Float64MultiArray()
            self.task_msg.layout.dim = [MultiArrayDimension(
                label="p_d(3),quat_d(4),p(3),quat(4),e(6),tau(n)", size=20 + n, stride=20 + n)]
        self.diag_pub = None
        if diagnostics_period > 0:
            from std_msgs.msg import String

            self._String = String
            self.diag_pub = node.create_publisher(String, topics.DIAGNOSTICS, 10)
            node.create_timer(diagnostics_period, self.publish_diagnostics, clock=wall_clock())
        node.create_subscription(PoseStamped, topics.TARGET_POSE, self._on_target_pose, reliable_qos())
        node.create_subscription(JointTrajectory, topics.JOINT_TRAJECTORY, self._on_trajectory, reliable_qos())

    def _make_cycle_sources(self, rate: float) -> None:
        """/joint_states, the timer (``trigger: timer``) and the watchdog (not composed)."""
        from sensor_msgs.msg import JointState

        node, wall = self.node, wall_clock()
        self._state_sub = node.create_subscription(JointState, topics.JOINT_STATES, self._on_joint_state,
                                                   reliable_qos())
        if self.trigger == "timer":
            # paced by the wall clock: a sim-time timer would wait for a lockstep simulation
            # that waits for its commands (use_sim_time); the cycle's time is the states'
            node.create_timer(1.0 / rate, self._on_timer, clock=wall)
        node.create_timer(WATCHDOG_PERIOD, self._watchdog, clock=wall)

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
        """Check every changed parameter (the schema's rules; gains by the law's), then apply."""
        from rcl_interfaces.msg import SetParametersResult

        from rbd_ros.control.gains import validate_gain

        reason = schema("controller").refusal(params)
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        gains: dict[str, Any] = {}
        for prm in params:
            if prm.name not in self._gain_names:
                continue
            if prm.value is None:
                return SetParametersResult(successful=False, reason=f"{prm.name} cannot be unset")
            try:
                gains[prm.name] = validate_gain(self.law_type, prm.name, list(prm.value)
                                                if not np.isscalar(prm.value) else prm.value, self.dof)
            except ValueError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
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
        self._take_waiting_states()
        loop = self.loop
        if not loop.have_state or loop.stale:
            return
        self.cycle(loop.t)  # the states' clock (issue 27): the latest state, at its stamp

    def _take_waiting_states(self) -> None:
        """The states that arrived with the tick, taken before its cycle: the executor wakes
        for both at once and calls timers first, so the cycle would otherwise run on the state
        before them -- against a lockstep bridge a second command on an answered state, one more
        step the controller never sees (2 loaded cores: a median 27 % of the cycles, 11 % with
        this).  The executor finds nothing left to take.  Through rclpy's subscription handle
        (``lean_executor.RCLPY_INTERNALS``); without it, the executor's order."""
        try:
            waiting = take_waiting(self._state_sub)
        except AttributeError:  # an rclpy without the handle's take_message
            return
        for msg in waiting:
            self._on_joint_state(msg)

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
        """Reference at ``t``, law, command (and state) publication; nothing while a managed
        node is not active."""
        if not self.active:
            return
        self.loop.cycle(t)
        self._publish_command()
        if self.publish_state:
            self._publish_state(t)

    @property
    def cycles(self) -> int:
        return self.loop.cycles

    def _publish_command(self) -> None:
        if not self.active:  # a managed node outside "active": no commands
            return
        self.cmd_msg.data = array.array("d", self.tau_out.tobytes())
        publish_quietly(self, self.cmd_pub, self.cmd_msg)

    def _publish_state(self, t: float) -> None:
        msg = self.state_msg
        set_stamp(msg.header.stamp, t)
        msg.position = array.array("d", self.loop.ref_out.tobytes())
        msg.velocity = array.array("d", self.loop.q_out.tobytes())
        msg.effort = array.array("d", self.tau_out.tobytes())
        if not self.active or not publish_quietly(self, self.state_pub, msg):
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
    """``rbd-ros controller``: the law of ``type`` from the registry; ``managed:=true`` makes
    a lifecycle node (``rbd_ros.ros.nodes.managed``)."""
    from rbd_ros.ros.lean_executor import LeanExecutor

    args = list(sys.argv[1:] if argv is None else argv)
    if any(a.replace(" ", "") in ("managed:=true", "managed:=True") for a in args):
        from rbd_ros.ros.nodes.managed import main as managed_main

        return managed_main(args, make_controller)

    def body(node: Any) -> None:
        prm = schema("controller").declare(node, ["type", "rt_priority", "managed"])
        if isinstance(make_controller(node), Controller):
            sys.setswitchinterval(SWITCH_INTERVAL)  # the IK worker yields the GIL to the cycle
        if prm["rt_priority"]:  # this thread runs the executor, hence every control cycle
            harden_node(node, prm["rt_priority"])

    # ~0.1 ms less per control cycle than rclpy's SingleThreadedExecutor (lean_executor.py)
    return run_node("controller", body, argv, executor_factory=LeanExecutor)


if __name__ == "__main__":
    sys.exit(main())
