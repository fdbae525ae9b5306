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
  point; header stamp 0 (or in the past) = start when planned; joint names must be exactly the
  controlled joints (any order), otherwise the trajectory is refused with a logged reason.
  Planned on the loop's worker through the action's planner (whole path, effort included;
  refused or retimed by ``retime``, keeping its start: ``ControlLoop.trajectory``).
  Before any trajectory the reference holds the first measured position; a trajectory (or
  target pose) received before the first ``/joint_states`` starts with it.  Task-space laws track
  the Cartesian motion of a joint trajectory (``r_d = fk(q_d)`` ...);
* serves ``~/follow_joint_trajectory`` (``control_msgs/action/FollowJointTrajectory``) with
  joint_trajectory_controller's semantics, for MoveIt and every ros2_control client
  (``rbd_ros.ros.follow_action``; parameters ``action_monitor_rate``, ``path_tolerance``,
  ``goal_tolerance``, ``stopped_velocity_tolerance``, ``goal_time``, ``retime``,
  ``acceleration_limits``): goals are planned off the control cycle, checked along their whole
  path and retimed under the limits (``rbd_ros.control.follow_trajectory``);
* subscribes ``~/target_pose`` (``geometry_msgs/PoseStamped``, frame '' or the model's base
  link): task-space laws make a minimum-jerk Cartesian move of ``pose_duration`` s from the
  current reference pose (0 = a step); joint-space laws solve the pose by IK (``Robot.ik``
  seeded with the current reference, inside the joint limits; an unreachable pose is refused
  with a logged reason) and move there in joint space over ``pose_duration`` s;
* publishes ``/effort_controller/commands`` (``std_msgs/Float64MultiArray``): joint torques
  (N m) in the order of the ``joints`` parameter (default: the model's order); with
  ``command_interface: position`` instead ``/position_controller/commands``: the reference
  positions (rad, m), clipped into the joint limits -- a position-interface joint trajectory
  controller, as joint_trajectory_controller with ``command_interfaces: [position]``
  (``rbd_ros.control.laws.PositionPassThrough``, whatever ``type``: no gains; a stale state
  sends nothing, so the drive holds its last position; ``~/controller_state``'s effort is NaN);
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

Model swap (issue 44): the service ``~/load_model`` (``rbd_ros_interfaces/srv/LoadModel``: one
of ``model_yaml`` (a file), ``robot_description`` (URDF text) or ``urdf_path``) replaces the
model at runtime, without a restart: the new model is loaded and checked in the service's
callback (the running model's joints, finite and physically consistent inertias:
``rbd_ros.control.model_swap``), its law built there, then adopted between two control cycles
and its torque blended in over ``loop.SWAP_CYCLES`` cycles (``ControlLoop.swap_model``); a
refusal names the reason and changes nothing.  Setting the ``model_yaml`` parameter on the
running node (``ros2 param set /controller model_yaml FILE``) does the same, the reason of a
refusal in the ``set_parameters`` result (the other robot parameters stay read-only; composed,
``model_yaml`` is the bridge's); after a swap through ``~/load_model`` the parameter names the
model in use, the file given or ``''`` when it came as URDF.  The running gains are kept, except those derived
from the model, which are derived again from the new model at the latest pose (the response's
message says which; the parameters then show them).  Not for the force laws (their wrench input
holds the law) yet.

Gains: the parameters ``kp``, ``kd``, ``ki``, ``i_clamp``, ``k_null``, ``kp_null``,
``effort_limit`` (those the law takes; scalars or arrays) win; then ``config/controllers.yaml``
(or ``gains_file``); every gain given by neither is derived from the model
(``rbd_ros.control.gains.model_gains``) for the read-only parameters ``bandwidth`` (Hz,
default 10) and ``damping_ratio`` (1) at the control ``rate`` (Hz; in lockstep set it to
1/timestep of the bridge), at the first measured pose.  The gains in use, and where each came
from, are logged, and readable as the parameters above (``ros2 param get /controller kp``).
They can be changed at runtime: a bad value (negative, wrong length, NaN), a gain past the
discrete-time stability bound at the latest pose and ``rate``, or an ``effort_limit`` above the
URDF's is refused with the reason in the ``set_parameters`` result
(``rbd_ros.control.gains.gain_bound_refusal``; ``docs/guides/gains.md``); so is a parameter the
node does not declare, naming it (``rbd_ros.ros.parameters.guard_parameters``).
"""
from __future__ import annotations

import array
import json
import math
import sys
import threading
import time
from typing import Any

import numpy as np

from rbd_ros.control.gains import gain_bound_refusal, gain_names, load_gains, validate_gain
from rbd_ros.control.laws import PositionPassThrough, make_law
from rbd_ros.control.loop import SWAP_CYCLES, ControlLoop
from rbd_ros.lie.so3 import rotation_to_quaternion
from rbd_ros.ros import topics
from rbd_ros.ros.common import NodeConfigError, level_logger, run_node
from rbd_ros.ros.contact_topics import attach_controller  # ~/target_wrench (force laws)
from rbd_ros.ros.lean_executor import LeanExecutor, take_waiting
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
    subscribe_trajectory,
    wall_clock,
)
from rbd_ros.ros.parameters import schema
from rbd_ros.ros.robot_params import (
    ROBOT_PARAMETERS,
    declare_swappable_model,
    follow_swapped_model,
    following_swap,
    robot_model,
)

LOAD_MODEL = "~/load_model"  # rbd_ros_interfaces/srv/LoadModel (module docstring)


def make_controller(node: Any, composed: bool = False, base_state: Any = None) -> Any:
    """The controller of the node's ``type``: ``Controller`` (arm laws) or
    ``MobileController`` (mobile laws; composed: ``base_state`` the simulator's ground
    truth)."""
    law_type, family = law_family(node)
    if family == "mobile":
        from rbd_ros.ros.nodes.mobile_controller import (  # lazy: the mobile controller, not at the default start
            MobileController,
        )

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

    # the command and state publishers and their messages, set by
    # ``controller_common.make_outputs`` (declared for the type checker only)
    cmd_pub: Any
    cmd_msg: Any
    state_pub: Any
    state_msg: Any

    def __init__(self, node: Any, composed: bool = False) -> None:

        self.node = node
        self.log = node.get_logger()
        self.active = True  # commands are published (a managed node: between activate and deactivate)
        prm = node_parameters(node, "arm", composed)
        self.law_type = law_type = prm["type"]
        self.command_interface = prm["command_interface"]  # effort | position (module docstring)
        self.trigger = "composed" if composed else prm["trigger"]
        self.publish_state = bool(prm["publish_state"])
        if not composed:  # composed: the bridge's model_yaml is the simulated arm's, read-only
            declare_swappable_model(node, LOAD_MODEL)
        loaded = robot_for(node, "arm", law_type)
        self.model, n = loaded.model, loaded.model.dof
        self.dof = n
        self.law = self._make_law(prm, loaded)
        self._gain_names = set(gain_names(law_type)) if self.command_interface == "effort" else set()
        node.add_on_set_parameters_callback(self._on_set_parameters)
        self.loop = self._make_loop(prm)
        self.loop.on_swap = self._on_model_swapped
        self.joints, self.cmd_index, self.tau_out = self.loop.joints, self.loop.cmd_index, self.loop.tau_out
        self._no_torque = np.full(n, math.nan)  # ~/controller_state's effort on a position interface
        self._make_interfaces(prm["diagnostics_period"], composed)
        from rbd_ros.ros.follow_action import make_server  # lazy: the action's planner (7 ms), at start

        self.action = make_server(self, prm)  # ~/follow_joint_trajectory (own node and thread)
        self.wrench_inputs = attach_controller(self, composed)
        if not composed:
            self._make_cycle_sources(prm["rate"])
            # "ready" once the executor runs the callbacks (the first timer tick), not here,
            # before anything spins: whoever waits for it may then send states and trajectories
            self._ready_text = f"controller: ready ({self.law_name}, {n} joints, {loaded.source})"
            self._ready_timer = node.create_timer(0.001, self._announce_ready, clock=wall_clock())
        self.log.info(f"{self.law_name} on {n} joints from {loaded.source}; trigger {self.trigger}; "
                      + self._gains_text())

    @property
    def law_name(self) -> str:
        """``type``, or what runs instead on a position interface."""
        if self.command_interface == "position":
            return f"position interface: reference positions on {self._command_topic} ({self.law_type} not used)"
        return self.law_type

    @property
    def _command_topic(self) -> str:
        return "/position_controller/commands" if self.command_interface == "position" else topics.COMMANDS

    def _make_law(self, prm: dict[str, Any], loaded: Any) -> Any:
        """The law with its gains: parameters > gains file > model (module docstring); the
        gains not given are published as parameters."""

        law_type, gains_file = prm["type"], prm["gains_file"] or None
        if prm["command_interface"] == "position":

            self.law = PositionPassThrough(loaded.model)
            return self.law
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

        try:
            loop = ControlLoop(self.model, self.law, prm["joints"], level_logger(self.node),
                               prm["state_timeout"], prm["interpolation"], prm["pose_duration"],
                               ik_warm_up_on_worker=True)  # "ready" does not wait for the IK (issue 39)
        except ValueError as exc:
            raise NodeConfigError(str(exc)) from None
        loop.retime = prm["retime"]  # FollowJointTrajectory goals (rbd_ros.control.follow_trajectory)
        accel = list(prm["acceleration_limits"] or [])
        loop.acceleration_limits = None if not accel else accel[0] if len(accel) == 1 else tuple(accel)
        try:
            loop.plan_limits()  # checked now: one value or one per joint, >= 0
        except ValueError as exc:
            raise NodeConfigError(f"acceleration_limits: {exc}") from None
        if not self.law.task_space and self.model.dof:  # the first goal at full speed
            self._warm = threading.Thread(target=self._warm_planner, args=(loop,), name="rbd_ros-plan-warm",
                                          daemon=True)
            self._warm.start()
        loop.on_first_state = self._derive_gains_at_start
        return loop

    def _warm_planner(self, loop: Any) -> None:
        try:
            loop.warm_planner()
        except Exception as exc:  # noqa: BLE001 - a goal then loads what it needs itself
            self.log.warning(f"follow_joint_trajectory: planner warm-up failed ({exc!r})")

    def _make_interfaces(self, diagnostics_period: float, composed: bool) -> None:
        """Publishers and the reference subscriptions (module docstring)."""
        from geometry_msgs.msg import PoseStamped
        from std_msgs.msg import Float64MultiArray, MultiArrayDimension

        node, n = self.node, self.dof
        make_outputs(self, self.joints, self.joints, self._command_topic)
        self.task_pub = None
        if self.law.task_space:
            self.task_pub = node.create_publisher(Float64MultiArray, topics.TASK_STATE, reliable_qos())
            self.task_msg = Float64MultiArray()
            self.task_msg.layout.dim = [MultiArrayDimension(
                label="p_d(3),quat_d(4),p(3),quat(4),e(6),tau(n)", size=20 + n, stride=20 + n)]
        self.diag_pub: Any = None  # a publisher with diagnostics_period > 0 (its timer the only reader)
        if diagnostics_period > 0:
            from std_msgs.msg import String

            self._String = String
            self.diag_pub = node.create_publisher(String, topics.DIAGNOSTICS, 10)
            node.create_timer(diagnostics_period, self.publish_diagnostics, clock=wall_clock())
        node.create_subscription(PoseStamped, topics.TARGET_POSE, self._on_target_pose, reliable_qos())
        from rbd_ros_interfaces.srv import LoadModel

        self._load_srv = node.create_service(LoadModel, LOAD_MODEL, self._on_load_model)
        subscribe_trajectory(node, self._on_trajectory)  # deserialized on the loop's planning worker

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

    def close(self) -> None:
        """Join this controller's threads (the action server's executor and its goals, the IK
        worker) before the node is destroyed and rclpy shuts down: SIGINT and SIGTERM then end
        the process with status 0 (a thread still inside rclpy at the interpreter's end
        aborted it: ``terminate called without an active exception``)."""
        if self.action is not None:
            self.action.close()
        self.loop.close()
        warm = getattr(self, "_warm", None)
        if warm is not None:
            warm.join(5.0)

    def _announce_ready(self) -> None:
        self._ready_timer.cancel()  # once (kept: the lean executor's wait set holds it)
        print(self._ready_text, flush=True)

    # ---- set-up helpers -----------------------------------------------------------------------
    def _on_set_parameters(self, params: list[Any]) -> Any:
        """Check every changed parameter (the schema's rules; gains by the law's, then with the
        other gains in use against the discrete-time stability bound at the current pose and
        the model's effort limits: ``gains.gain_bound_refusal``), then apply."""
        from rcl_interfaces.msg import SetParametersResult


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
        law = self.law
        # the gains in use set again (the node publishes the model's: _publish_gain_parameters)
        # change nothing and are never refused
        new = tuple(k for k, v in gains.items() if k not in law.gains or not np.array_equal(law.gains[k], v))
        if new:
            q = self.loop.q.copy()  # the latest measured pose (else the model's zero)
            try:
                reason = gain_bound_refusal(self.law_type, self.model, {**law.gains, **gains},
                                            float(self.node.get_parameter("rate").value),
                                            q=q if self.loop.have_state and np.isfinite(q).all() else None,
                                            scheduled=law.schedule, names=new)
            except ValueError as exc:  # a massless chain: the start refused it already
                reason = str(exc)
            if reason:
                self.log.warning(f"set_parameters refused: {reason}")
                return SetParametersResult(successful=False, reason=reason)
        swap = next((p for p in params if p.name == "model_yaml"), None)
        if swap is not None and not following_swap():  # a new model: ~/load_model's checks and swap,
            # last (refused: nothing set); following_swap: ~/load_model's swap names its file
            done, message = (self.load_model(model_yaml=swap.value) if swap.value else
                             (False, "refused: model_yaml cannot be emptied at runtime (give a model file)"))
            if not done:
                self.log.warning(f"set_parameters model_yaml: {message}")
                return SetParametersResult(successful=False, reason=f"model_yaml: {message}")
            self.log.info(f"set_parameters model_yaml: {message}")
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

    # ---- a new model at runtime (module docstring) -------------------------------------------
    def _on_load_model(self, request: Any, response: Any) -> Any:
        response.success, response.message = self.load_model(
            request.model_yaml, request.robot_description, request.urdf_path)
        if response.success:  # (one severity per call site: rclpy's logger refuses two)
            self.log.info(f"load_model: {response.message}")
            follow_swapped_model(self.node, request.model_yaml)  # names the model in use ('': URDF)
        else:
            self.log.warning(f"load_model: {response.message}")
        return response

    def load_model(self, model_yaml: str = "", robot_description: str = "",
                   urdf_path: str = "") -> tuple[bool, str]:
        """Load, check and hand over a new model (``~/load_model``); ``(done, message)``."""
        from rbd_ros.control.model_swap import (  # lazy: the model swap, not at the default start
            law_for_model,
            swap_refusal,
        )

        sources = {"model_yaml": model_yaml, "robot_description": robot_description, "urdf_path": urdf_path}
        given = [k for k, v in sources.items() if v]
        if len(given) != 1:
            return False, f"refused: give exactly one of {', '.join(sources)} (got {len(given)})"
        if hasattr(self.law, "set_target_wrench"):
            return False, f"refused: the {self.law_type} law's model cannot be swapped live (a force law)"
        params = {k: self.node.get_parameter(k).value for k in ROBOT_PARAMETERS}
        params.update(sources)
        try:
            loaded = robot_model(params)
        except (NodeConfigError, ValueError) as exc:
            return False, f"refused: {exc}"
        reason = swap_refusal(self.model, loaded.model)  # before a law is built on it
        if reason is not None:
            return False, f"refused: {reason}"
        loop, get = self.loop, self.node.get_parameter
        q = loop.q.copy() if loop.have_state and np.isfinite(loop.q).all() else None
        if q is None:
            q = np.clip(np.zeros(self.dof), self.model.lower, self.model.upper)
        try:
            law, text = law_for_model(self.law, loaded.model, q, bandwidth=get("bandwidth").value,
                                      damping_ratio=get("damping_ratio").value, rate=get("rate").value,
                                      gains_file=get("gains_file").value or None)
        except ValueError as exc:
            return False, f"refused: the running gains do not fit the new model: {exc}"
        reason = loop.swap_model(loaded.model, law)
        if reason is not None:
            return False, f"refused: {reason}"
        return True, (f"model '{loaded.model.name}' from {loaded.source} handed to the next cycle "
                      f"(torque blended over {SWAP_CYCLES} cycles); {text}")

    def _on_model_swapped(self, model: Any, law: Any) -> None:
        """In the cycle that adopted a swapped model: the node's references follow, and the
        gains derived from the new model are published as parameters."""
        self.model, self.law = model, law
        derived = {k: v for k, v in law.gains.items() if law.gain_source.get(k) == "model"}
        if derived:
            self._publish_gain_parameters(derived)

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
        if self.loop.watchdog(time.monotonic(), WATCHDOG_PERIOD) and self.command_interface == "effort":
            self._publish_command()  # zero torque; a position drive holds with no command

    def _on_trajectory(self, msg: Any) -> None:
        """A trajectory, or a callable deserializing one (``subscribe_trajectory``): read and
        planned on the loop's worker, adopted by the next cycle."""
        self.loop.trajectory(msg)

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
        except Exception:  # shutting down (Ctrl-C) while in a callback
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
        msg.effort = array.array("d", (self.tau_out if self.command_interface == "effort"
                                       else self._no_torque).tobytes())
        if not self.active or not publish_quietly(self, self.state_pub, msg):
            return
        if self.task_pub is not None and self.task_pub.get_subscription_count() > 0:

            law = self.law
            data = np.concatenate([law.ref_T[:3, 3], rotation_to_quaternion(law.ref_T[:3, :3]),
                                   law.T[:3, 3], rotation_to_quaternion(law.T[:3, :3]), law.error,
                                   self.tau_out])
            self.task_msg.data = array.array("d", data.tobytes())
            self.task_pub.publish(self.task_msg)


def main(argv: list[str] | None = None) -> int:
    """``rbd-ros controller``: the law of ``type`` from the registry; ``managed:=true`` makes
    a lifecycle node (``rbd_ros.ros.nodes.managed``)."""

    args = list(sys.argv[1:] if argv is None else argv)
    if any(a.replace(" ", "") in ("managed:=true", "managed:=True") for a in args):
        from rbd_ros.ros.nodes.managed import main as managed_main  # lazy: the lifecycle node, not at the default start

        return managed_main(args, make_controller)

    made: list[Any] = []

    def body(node: Any) -> None:
        prm = schema("controller").declare(node, ["type", "rt_priority", "managed"])
        made.append(make_controller(node))
        if isinstance(made[0], Controller):
            sys.setswitchinterval(SWITCH_INTERVAL)  # the IK worker yields the GIL to the cycle
        if prm["rt_priority"]:  # this thread runs the executor, hence every control cycle
            harden_node(node, prm["rt_priority"])

    def cleanup() -> None:  # (SIGINT, SIGTERM: the threads joined before rclpy shuts down)
        for ctl in made:
            if hasattr(ctl, "close"):
                ctl.close()

    # ~0.1 ms less per control cycle than rclpy's SingleThreadedExecutor (lean_executor.py)
    return run_node("controller", body, argv, executor_factory=LeanExecutor, cleanup=cleanup)


if __name__ == "__main__":
    sys.exit(main())
