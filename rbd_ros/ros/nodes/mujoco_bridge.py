"""Node ``mujoco_bridge``: a MuJoCo arm standing in for motor hardware, on ros2_control's topics.

``rbd-ros mujoco-bridge --ros-args -p urdf_path:=arm.urdf -p tip_link:=tool0 -p mode:=lockstep``

A thin adapter over ``rbd_ros.sim.Simulator`` (ROS-free; physics, motor model of 003 §6.1,
sensors, safety).  The MuJoCo model is built from the converter's ``MdhModel``, so the bridge
simulates exactly what the dynamics core computes with.

Parameters
  robot:  ``model_yaml`` (an MDH model file) | ``robot_description`` (URDF XML) |
          ``urdf_path`` (.urdf/.xacro); none -> the bundled default robot.  ``base_link``,
          ``tip_link`` ('' = inferred); ``gravity`` (parameter > model file > [0, 0, -9.81]).
          The loader of every node: ``rbd_ros.ros.robot_params``.
  viewer: ``true`` opens MuJoCo's interactive viewer on the simulation where there is a
          display (``rbd_ros.ros.nodes.viewer.attach``; otherwise one warning line).
  bridge: ``config_file`` (default ``config/bridge.yaml``) and every setting of
          ``rbd_ros.sim.BridgeConfig`` as a parameter of the same name, which wins: each
          written once, with type, default, range and meaning, in
          ``config/schema/mujoco_bridge.yaml`` (the table: ``docs/parameters.md``).
  composed: ``controller_type`` (one of the controller node's ``type``s; '' = off, the default)
          hosts the control law in this process, as ros2_control's controller_manager does:
          see *Composed mode* below.  The controller's own parameters (``kp``, ``gains_file``,
          ``state_timeout``, ``interpolation``, ...) are given to this process as well.

Mobile bases (a model with ``base_type`` diff_drive or planar, e.g. ``model_yaml:=
config/mobile_arm7.yaml`` or ``omni_arm7.yaml``, or a URDF with ``base_type:=diff_drive|planar``
as for the dynamics server (wheels found by ``rbd_ros.urdf.wheels``); ``rbd_ros.sim.mobile_sim``,
``rbd_ros.ros.mobile_bridge``)
  joints:  diff_drive: the wheel joints (``left_wheel_joint``, ``right_wheel_joint``: the
          model's ``wheel_joints``) then the arm's; planar: ``base_x``, ``base_y``,
          ``base_yaw`` then the arm's.  ``joints`` orders them for /joint_states and
          /effort_controller/commands alike: wheel torques (N m), or for a planar base the
          base force and moment in the base frame (F_x, F_y N, M_z N m); the planar entries'
          positions are the base pose in the world (x, y, yaw), their velocities the base
          twist in the base frame (v_x, v_y, omega).
  base_model  wheels (default: a free base on two rolling, slipping wheels, frictionless
          casters and a floor with friction; a planar base on planar joints) | ideal (the
          core integrates every step, rolling constraint exact: equals
          ``MobileBaseRobot.simulate`` to round-off).
  odom_source  ground_truth (default) | wheel_odometry (diff drive: integrates the wheel
          angles as diff_drive_controller does).  Also ``initial_base_pose`` [x, y, yaw],
          ``wheel_effort_limit``, ``base_effort_limit``, ``wheel_armature``,
          ``wheel_viscous``, ``wheel_coulomb``, ``floor_friction``, ``base_height``,
          ``odom_frame`` (odom), ``base_frame`` (the model's base_link).
  /odom (nav_msgs/Odometry, out): odom_frame -> base_frame, pose and base-frame twist, with
          every /joint_states.  /tf (odom -> the URDF's root link, every link) is
          ``rbd-ros state-publisher``'s, from this /odom.

Modes
  realtime  one step per ``timestep`` of wall clock (absolute deadlines, catching up when
            late; a step that starts more than one period late is a *missed step*; more than
            0.1 s behind, the schedule slips and the skipped steps count as missed too).
  lockstep  publishes the initial state (10 Hz) until the first command arrives; then each
            received command gives exactly one step followed by one /joint_states
            (deterministic; ``publish_every`` and ``command_timeout`` do not apply).
  max       steps as fast as it can, publishing every ``publish_every`` steps.

Composed mode (``controller_type`` set)
  A node named ``controller`` in this process runs the controller node's own code
  (``rbd_ros.ros.nodes.controller.Controller`` over ``rbd_ros.control.loop.ControlLoop``: the
  same parameters, gains rule, limits, reference, stale-reference and fault behaviour).  Every
  step the stepping thread calls it on the state it just measured, applies the torque and
  steps: state -> law -> command -> step, with no message in the loop.  References arrive on
  ``/controller/joint_trajectory``, ``/controller/target_pose`` and the action
  ``/controller/follow_joint_trajectory`` (its own thread: ``rbd_ros.ros.follow_action``),
  which builds them (IK on the controller's worker thread) and hands them to the next step
  without a lock the stepping thread would wait for (``rbd_ros.control.handoff``);
  ``/joint_states``, ``/controller/controller_state``, ``/controller/diagnostics`` and
  ``/effort_controller/commands`` are still published (monitoring, recording); commands from
  elsewhere are not read.  realtime paces the loop on the wall clock; lockstep and max step
  back to back (deterministic).

Real-time hygiene (each optional, each reported in the log, in the ready line and in
``~/diagnostics`` ``realtime``, "refused" with the reason when the platform says no):
``rt_priority`` (SCHED_FIFO of the stepping thread; the process's other Python threads, which
share its GIL, get the priority just below), ``sched_slice_us`` (without ``rt_priority``: the
stepping thread's EEVDF request size, Linux >= 6.12, no privilege needed: a short slice gets it a
CPU sooner beside busy processes), ``cpu_affinity``, ``lock_memory``
(mlockall), ``gc_freeze`` (gc.freeze after start-up).  ``publish_thread`` (default true):
in composed mode the stepping loop only serializes its messages; a thread of its own publishes
them with the GIL released (``rbd_ros.ros.publish_thread``), so a publish
that waits on a slow subscriber process never delays a step; realtime drops (and counts, as
``publish_dropped`` in the diagnostics and stats) what a full queue cannot take, the other
modes wait for room.

Topics
  /joint_states (sensor_msgs/JointState, out): ``joints`` order; position, velocity and the
      measured effort; stamped with simulation time.
      With ``gripper`` (``rbd_ros.sim.gripper``: the URDF's gripper as a mechanism) its joints
      follow the arm's (their true state; the effort the servo's, 0 on a mimic joint).
  /gripper_controller/gripper_cmd (control_msgs/action/GripperCommand, with ``gripper``):
      position and max_effort in; position, effort, stalled, reached_goal out, as
      ros2_controllers' gripper_action_controller (``rbd_ros.ros.gripper_action``).
  /clock (rosgraph_msgs/Clock, out): simulation time, with every /joint_states.
  /effort_controller/commands (std_msgs/Float64MultiArray, in): one value per joint in
      ``joints`` order (N m or N; volts in voltage mode).  With ``command_interface``
      position or velocity (one for all or per joint: ``rbd_ros.sim.drives``, a servo in the
      joint's MuJoCo actuator, clamped to the URDF's effort limits, the applied torque on
      /joint_states), ``/position_controller/commands`` (rad or m) and
      ``/velocity_controller/commands`` (rad/s or m/s), as ros2_control's forward command
      controllers: each topic one value per joint of its interface, in ``joints`` order.  A
      command on a topic no joint uses, of the wrong length or with NaN/Inf is refused (logged
      at most once a second per cause) and not applied.  Lockstep steps once every interface in use has
      had a command since the last step (one interface: every command); composed mode needs
      effort for every joint.
  ~/diagnostics (std_msgs/String, out): JSON every ``diagnostics_period`` s and on each
      pause/resume: mode, paused, sim_time, wall_time (``time.monotonic()``), steps, rate_hz
      and rtf (over the last period), step_time_p99_us /
      step_time_mean_us (step + publish, wall), missed_steps, commands_received,
      commands_rejected, steps_without_new_command, stale_steps, braking, saturated_steps,
      inertia_fixups, unstable_steps (steps undone because the state blew up: the arm is held
      at its last positions, the clock keeps going; ``rbd_ros.sim.simulator``), integrator
      (the one in use: ``auto`` picks RK4 or implicitfast); the loop's timing over the last
      ~16 k steps: period_p50_us, period_p99_us, period_max_us, jitter_p99_us / jitter_max_us
      (``|period - timestep|``), overruns (steps whose work took longer than a timestep; since
      start; in lockstep and max the period is just the stepping rate, unpaced); composed (the
      law's type or ''), realtime (the hygiene report); a mobile base adds wheel_slip_max and
      lateral_velocity_max (m/s, ground truth since the start or the last reset:
      ``MobileSimulator.base_slip``) and base_upset_steps (a wheeled base tipped over or off
      the floor; warned in the log, as slipping wheels are).
  MuJoCo's own warnings go to this node's log (not to ``MUJOCO_LOG.TXT``); initial positions
  outside the joint limits are clamped onto them, with a warning.
Services
  ~/reset (std_srvs/Trigger): initial positions/velocities, zero command; the clock runs on.
  ~/pause (std_srvs/SetBool): true pauses stepping, false resumes.
  ``pause_at`` (parameter, s of simulated time; 0 = never): set at runtime, before a resume, the
      bridge pauses itself after the first step at or past it (then as ``~/pause``: diagnostics
      at once, the log line ``simulation paused at t = ... s (pause_at)``), so a run ends
      exactly there however late its client sees the clock (the bringup's tour and press phases).

The log prints ``mujoco_bridge: ready (...)`` when serving and a stats line (``rtf=...
missed_steps=N ...``) every ``stats_period`` s and at exit.  A bad parameter prints one line
``mujoco_bridge: error: ...`` and exits with status 2.
"""
from __future__ import annotations

import array
import json
import math
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from rbd_ros.control.gains import LAWS
from rbd_ros.model import MOBILE_BASES
from rbd_ros.ros import topics
from rbd_ros.ros.common import NodeConfigError, level_logger, recordable_qos, run_node
from rbd_ros.ros.contact_topics import BridgeContact  # F/T topics, ~/apply_wrench
from rbd_ros.ros.lean_executor import take_waiting
from rbd_ros.ros.messages import set_stamp
from rbd_ros.ros.mobile_bridge import OdomPublisher, mobile_config, refuse_mobile_parameters
from rbd_ros.ros.parameters import declare_settings, schema
from rbd_ros.ros.robot_params import robot_from_node
from rbd_ros.sim.drives import TOPICS
from rbd_ros.sim.realtime import LoopTiming, freeze_garbage, harden, set_slice, share_priority
from rbd_ros.util.resources import config_file

if TYPE_CHECKING:
    from rbd_ros.ros.publish_thread import PublishThread
    from rbd_ros.sim.mobile_sim import MobileSimulator

PAUSE_AT_TOLERANCE = 1e-9  # s: the clock sums timesteps; a pause_at on the grid is reached there
NAME = "mujoco_bridge"
MAX_LAG = 0.1  # s behind schedule before realtime mode gives up catching up
SWITCH_INTERVAL = 1e-4  # s, Python's GIL switch interval in realtime and max modes


# ---- parameters ---------------------------------------------------------------------------------
def bridge_config(node) -> tuple[Any, str]:
    """``BridgeConfig`` from ``config_file`` then the node's parameters (which win)."""
    from rbd_ros.sim.simulator import BridgeConfig  # lazy: the simulator, at start, not at import

    path = schema(NAME).declare(node, ["config_file"])["config_file"]
    if not path:
        try:
            path = str(config_file("bridge"))
        except FileNotFoundError:
            path = ""
    base = BridgeConfig.from_yaml(path) if path else BridgeConfig()
    changes = declare_settings(node, BridgeConfig, schema(NAME))
    return base.replace(**changes), path or "built-in defaults"


# ---- the node -----------------------------------------------------------------------------------
def topic_remaps(argv: list[str] | None, node_name: str) -> list[str]:
    """The ``-r from:=to`` topic rules of the command line (not ``__node`` and the like), as
    ``--ros-args`` for the inbox node, which ignores the global arguments."""
    args = list(sys.argv[1:] if argv is None else argv)
    rules: list[str] = []
    for flag, rule in zip(args, args[1:]):
        if flag not in ("-r", "--remap") or ":=" not in rule:
            continue
        src = rule.split(":=", 1)[0]
        if ":" in src:  # node-specific: 'name:from:=to'
            target, _, src = src.partition(":")
            if target != node_name:
                continue
            rule = src + ":=" + rule.split(":=", 1)[1]
        if not src.startswith("__"):
            rules += ["-r", rule]
    return ["--ros-args", *rules] if rules else []


class CommandInbox:
    """The command subscriptions (one per command interface: ``rbd_ros.sim.drives.TOPICS``),
    read by the stepping thread itself rather than by the executor: at 1 kHz the executor's
    per-message Python overhead would compete with the stepping loop for the GIL and the CPU.
    They live on a hidden helper node that no executor spins, so nothing else takes their
    messages (the rclpy pattern of ``wait_for_message``).  The topics of interfaces no joint
    uses (``in_use``) are read every ``RARE``-th ``take_all`` only: their commands are refused
    anyway, and each empty subscription costs ~5 us a step (3 topics: 15.7 us, 1: 4.9 us at
    load 9)."""

    RARE = 64

    def __init__(self, node, topics_of: dict[str, str], qos, argv: list[str] | None,
                 in_use: frozenset[str] = frozenset(("effort",))) -> None:
        import rclpy
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        from std_msgs.msg import Float64MultiArray

        self.node = rclpy.create_node(
            f"_{node.get_name()}_commands", context=node.context, namespace=node.get_namespace(),
            cli_args=topic_remaps(argv, node.get_name()), use_global_arguments=False,
            enable_rosout=False, start_parameter_services=False)
        self.subs = [(interface, self.node.create_subscription(
            Float64MultiArray, topic, lambda _: None, qos)) for interface, topic in topics_of.items()]
        self.used = [(i, sub) for i, sub in self.subs if i in in_use]
        self.calls = 0
        self.wait_set = _rclpy.WaitSet(len(self.subs), 0, 0, 0, 0, 0, node.context.handle)

    def take_all(self, every_topic: bool = False) -> list:
        """Every command waiting, ``(interface, message)``, each topic's oldest first (never
        blocks); the unused interfaces' topics too with ``every_topic`` or every ``RARE``-th
        call."""
        self.calls += 1
        subs = self.subs if every_topic or self.calls % self.RARE == 0 else self.used
        out = []
        for interface, sub in subs:
            for msg in take_waiting(sub):
                out.append((interface, msg))
        return out

    def wait(self, timeout: float) -> None:
        """Block (GIL released) until a command arrives or ``timeout`` s pass."""
        self.wait_set.clear_entities()
        for _, sub in self.subs:
            self.wait_set.add_subscription(sub.handle)
        self.wait_set.wait(int(timeout * 1e9))

    def destroy(self) -> None:
        self.node.destroy_node()


class MujocoBridge:
    """Publishers, subscription, services and the stepping loop around one ``Simulator``."""

    viewer: Any  # MuJoCo's viewer, set by ``main`` with viewer:=true (declared for the type checker)

    def __init__(self, node, sim, config, argv: list[str] | None = None,
                 controller: Any = None) -> None:
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray, String
        from std_srvs.srv import SetBool, Trigger

        self.node, self.sim, self.cfg = node, sim, config
        self.mode = config.mode
        self.lock = threading.Lock()
        self.paused = False
        self._pause_at = math.inf  # armed by the pause_at parameter (_on_set_parameters)
        self.got_command = False
        # lockstep steps once every command interface in use has a fresh command
        self._in_use = frozenset(sim.interfaces)
        self._pending: set[str] = set()
        self.missed_steps = 0
        self.steps_since_publish = 0
        self.controller = controller  # composed mode: the controller node's Controller
        self.timing = LoopTiming(config.timestep)
        self.hygiene: list[str] = []
        self._stop = threading.Event()
        self._hardened = threading.Event()
        self._thread: threading.Thread | None = None
        self._String = String
        self._state_msg, self._clock_msg = JointState(), Clock()
        self._names = list(sim.joint_names)
        self._gripper = getattr(sim, "gripper_servo", None)  # its joints after the arm's (issue 43)
        self._state_msg.name = self._names + (list(sim.gripper.names) if self._gripper else [])
        self.odom = None  # a mobile base's /odom (+ /tf): rbd_ros.ros.mobile_bridge
        if hasattr(sim, "base_state"):
            self.odom = OdomPublisher(node, sim, *getattr(sim, "odom_frames", ("odom", "base_link")))
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        pub_qos = recordable_qos()  # a slow recorder still gets every sample
        self.pub_state = node.create_publisher(JointState, topics.JOINT_STATES, pub_qos)
        self.pub_clock = node.create_publisher(Clock, topics.CLOCK, pub_qos)
        self.pub_diag = node.create_publisher(String, topics.DIAGNOSTICS, 10)
        self.inbox: CommandInbox | None = None
        if controller is None:  # composed: the commands come from the law in this process
            try:
                self.inbox = CommandInbox(node, TOPICS, qos, argv, self._in_use)
            except Exception as exc:  # noqa: BLE001 - rclpy internals changed: use the executor
                node.get_logger().warning(f"commands through the executor (slower): {exc}")
                self.subs = [node.create_subscription(
                    Float64MultiArray, topic, lambda msg, i=interface: self.on_command(msg, i), qos)
                    for interface, topic in TOPICS.items()]
        self.contact = BridgeContact(node, sim, self.lock, schema(NAME).declare(
            node, ["apply_wrench_duration"])["apply_wrench_duration"], pub_qos)
        self.srv_reset = node.create_service(Trigger, topics.RESET, self.on_reset)
        self.srv_pause = node.create_service(SetBool, topics.PAUSE, self.on_pause)
        schema(NAME).declare(node, ["pause_at"])
        self.gripper_action = None
        if self._gripper is not None:  # /gripper_controller/gripper_cmd (rbd_ros.ros.gripper_action)
            from rbd_ros.ros.gripper_action import (  # lazy: the gripper action, not at the default start
                GripperActionServer,
            )

            self.gripper_action = GripperActionServer(self)
        node.add_on_set_parameters_callback(self._on_set_parameters)
        self._start = (time.monotonic(), sim.time, 0)
        self._diag_window = self._stats_window = self._start
        self.publisher_thread: PublishThread | None = None
        if config.publish_thread and controller is not None:
            self._offload_publishers()
        self.timers = []
        if config.diagnostics_period > 0:
            self.timers.append(node.create_timer(config.diagnostics_period, self.publish_diagnostics))
        if config.stats_period > 0:
            self.timers.append(node.create_timer(config.stats_period, self.print_stats))
        if self.mode == "lockstep" and controller is None:
            if self.inbox is None:
                self.timers.append(node.create_timer(0.1, self._idle_publish))
            self.publish_state()

    # ---- publishing ---------------------------------------------------------------------------
    def _offload_publishers(self) -> None:
        """Composed mode: every publisher the stepping loop uses (the state, /clock, /odom and
        /tf, the controller's) through one ``PublishThread``: realtime drops when full, lockstep
        and max wait.  Not with a separate controller: there the thread's hop would delay the
        state the controller waits for (measured: 1.0 % missed vs 0.5 %)."""
        from rbd_ros.ros.publish_thread import PublishThread  # lazy: the publish thread, not at the default start

        pt = self.publisher_thread = PublishThread(f"{NAME}_publish", block=self.mode != "realtime",
                                                   batched=True)  # the stepping loop flushes
        self.pub_state, self.pub_clock = pt.wrap(self.pub_state), pt.wrap(self.pub_clock)
        if self.odom is not None:
            self.odom.pub = pt.wrap(self.odom.pub)
            if getattr(self.odom, "tf", None) is not None:  # (an OdomPublisher has none today)
                self.odom.tf = pt.wrap(self.odom.tf)  # type: ignore[attr-defined]
        ctrl = self.controller
        if ctrl is not None:
            for name in ("cmd_pub", "state_pub", "task_pub"):
                if getattr(ctrl, name, None) is not None:
                    setattr(ctrl, name, pt.wrap(getattr(ctrl, name)))

    def publish_state(self, measured: tuple | None = None) -> None:
        """One /joint_states (and /clock) of the current state (``measured``: what
        ``sim.measure()`` just gave); caller holds the lock or owns the simulator."""
        q, qd, effort = self.sim.measure() if measured is None else measured
        msg, clock = self._state_msg, self._clock_msg  # reused: publish() copies them out
        if self._gripper is not None:  # the gripper's joints after the arm's
            gq, gqd, geffort = self.sim.gripper_state()
            q, qd, effort = np.concatenate([q, gq]), np.concatenate([qd, gqd]), np.concatenate([effort, geffort])
        set_stamp(msg.header.stamp, self.sim.time)
        msg.position = array.array("d", q.tobytes())  # buffer copies, not Python lists
        msg.velocity = array.array("d", qd.tobytes())
        msg.effort = array.array("d", effort.tobytes())
        self.pub_state.publish(msg)
        if self.odom is not None:
            self.odom.publish(self.sim.time, q)
        clock.clock.sec, clock.clock.nanosec = msg.header.stamp.sec, msg.header.stamp.nanosec
        self.pub_clock.publish(clock)
        self.contact.publish()

    def _idle_publish(self) -> None:
        """Lockstep: the state at 10 Hz until the first command (and while paused)."""
        if not self.got_command or self.paused:
            with self.lock:
                self.publish_state()

    def _record_step_time(self, seconds: float, start: float | None = None) -> None:
        self.timing.record(time.monotonic() if start is None else start, seconds)

    # ---- callbacks ----------------------------------------------------------------------------
    def _lockstep_due(self, interface: str) -> bool:
        """Lockstep, after a command on ``interface``: whether every interface in use has had
        one since the last step (then counted afresh); one interface: every command."""
        if interface in self._in_use:
            self._pending.add(interface)
        if self._pending < self._in_use or not self._pending:
            return False
        self._pending.clear()
        return True

    def on_command(self, msg, interface: str = "effort") -> None:
        data = msg.data
        if self.mode == "lockstep":
            reached = False
            with self.lock:
                self.got_command = True
                self.sim.command(data, None, interface)
                if not self.paused and self._lockstep_due(interface):
                    t0 = time.perf_counter()
                    self.sim.step(None)
                    self.publish_state()
                    self._record_step_time(time.perf_counter() - t0)
                    reached = self._reached_pause_at()
            if reached:
                self._announce_pause_at()
        else:
            now = time.monotonic()
            with self.lock:
                self.got_command = True
                self.sim.command(data, now, interface)

    def on_reset(self, request, response):
        with self.lock:
            self.sim.reset()
            if self.odom is not None:
                self.odom.reset()
            self.publish_state()
            if self.publisher_thread is not None:
                self.publisher_thread.flush()
        response.success = True
        response.message = f"reset to the initial state at t = {self.sim.time:.6f} s"
        self.node.get_logger().info(response.message)
        return response

    def _on_set_parameters(self, params: list[Any]) -> Any:
        """``pause_at``: armed (s of simulated time, after the current one), or 0 = disarmed."""
        from rcl_interfaces.msg import SetParametersResult

        for prm in params:
            if prm.name != "pause_at":
                continue
            reason = schema(NAME).refusal([prm])
            if reason is None:
                t = float(prm.value)
                with self.lock:
                    if 0.0 < t <= self.sim.time + PAUSE_AT_TOLERANCE:
                        reason = f"pause_at {t:g} s is not after the simulated time {self.sim.time:.6f} s"
                    else:
                        self._pause_at = t if t > 0.0 else math.inf
            if reason is not None:
                return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _reached_pause_at(self) -> bool:
        """After a step (caller holds the lock): paused when the armed ``pause_at`` is reached
        (disarmed then); True if this step reached it."""
        if self.sim.time < self._pause_at - PAUSE_AT_TOLERANCE:
            return False
        self.paused, self._pause_at = True, math.inf
        return True

    def _announce_pause_at(self) -> None:
        """As ``on_pause``'s answer: the diagnostics at once, one log line (lock released; the
        composed loop flushed its publisher thread first)."""
        self.publish_diagnostics()
        self.node.get_logger().info(f"simulation paused at t = {self.sim.time:.6f} s (pause_at)")

    def on_pause(self, request, response):
        with self.lock:  # no step after the answer: the diagnostics below hold the last one
            resume = self.paused and not request.data
            self.paused = bool(request.data)
            if resume and self.mode == "lockstep" and self.controller is None and self.got_command:
                # the controller answered the state at the pause (repeated while paused) and
                # waits for the next: step on that answer, else the loop would restart only
                # on the controller's watchdog, a zero-torque step (a 3 N blip pressing 10 N)
                self.sim.step(None)
                self.publish_state()
            # at once, under the lock: the sim_time and wall_time of the pause (or resume) agree
            # (taken after it, a resumed realtime loop had stepped on for tens of ms under load:
            # a report's real-time factor over its window read 1.07)
            self.publish_diagnostics()
        response.success = True
        response.message = "paused" if self.paused else "running"
        self.node.get_logger().info(f"simulation {response.message} at t = {self.sim.time:.6f} s")
        return response

    # ---- stepping loop (realtime, max) --------------------------------------------------------
    def start(self) -> None:
        if self.mode != "lockstep" or self.inbox is not None or self.controller is not None:
            # the stepping thread must get the GIL back soon after its deadline, not after
            # Python's default 5 ms switch interval while the executor thread runs callbacks
            sys.setswitchinterval(SWITCH_INTERVAL)
            self._thread = threading.Thread(target=self._loop, name="mujoco_bridge_step",
                                            daemon=True)
            self._thread.start()
            self._hardened.wait(5.0)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
        if self.gripper_action is not None:
            self.gripper_action.close()
        if self.publisher_thread is not None:  # before the nodes (their publishers) go
            self.publisher_thread.stop()
        if self.inbox is not None:
            self.inbox.destroy()

    def _loop(self) -> None:
        cfg = self.cfg
        report = harden(cfg.rt_priority, cfg.cpu_affinity, cfg.lock_memory)  # this thread
        if cfg.sched_slice_us > 0 and not cfg.rt_priority:
            report.append(set_slice(cfg.sched_slice_us))  # this thread
        if cfg.rt_priority and os.sched_getscheduler(0) == os.SCHED_FIFO:  # granted
            # the threads that share this one's GIL (the executor, the publishing thread) just
            # below it: one preempted by a busy process while holding the GIL stalls this thread
            # whatever its priority (two busy processes: 0.07-0.13 % of steps missed without,
            # 0.00-0.01 % with; CHANGELOG.rst, "Benchmark history", "The threads that share the GIL")
            others = [t for t in threading.enumerate() if t is not threading.current_thread()]
            report += share_priority(others, max(1, cfg.rt_priority - 1))
        self.hygiene = report + self.hygiene
        for line in report:
            log = self.node.get_logger()
            if "refused" in line:
                log.warning(f"realtime: {line}; stepping without it")
            else:
                log.info(f"realtime: {line}")
        self._hardened.set()
        try:
            if self.mode == "lockstep" and self.controller is None:
                self._run_lockstep()
            else:
                self._run_loop()
        except Exception as exc:  # noqa: BLE001 - only at shutdown (publisher gone)
            if not self._stop.is_set():
                print(f"{NAME}: stepping stopped: {exc}", file=sys.stderr, flush=True)

    def _run_loop(self) -> None:
        """realtime and max; composed: also lockstep (back to back, no wall clock)"""
        dt = self.cfg.timestep
        realtime = self.mode == "realtime"
        every = self.cfg.publish_every
        sim, ctrl, names = self.sim, self.controller, self._names
        pt = self.publisher_thread  # batched: woken once per step, after it (flush below)
        wall_clock = self.mode != "lockstep"  # command ages: lockstep never times out
        with self.lock:
            measured = sim.measure() if ctrl is not None else None
        deadline = time.monotonic()
        k = 0
        resumed = False
        while not self._stop.is_set():
            if self.paused:
                time.sleep(0.005)
                deadline = time.monotonic()
                resumed = True
                continue
            if resumed:  # the pause is no step period
                self.timing.reset_window()
                resumed = False
            now = time.monotonic()
            if realtime:
                wait = deadline - now
                if wait > 0:
                    time.sleep(wait)
                    now = time.monotonic()
                lag = now - deadline
                if lag > MAX_LAG:  # give up catching up: the schedule slips
                    skipped = int(lag / dt)
                    self.missed_steps += skipped
                    deadline += skipped * dt
                elif lag > dt:
                    self.missed_steps += 1
            t0 = time.perf_counter()
            stamp = now if wall_clock else None
            with self.lock:
                if ctrl is not None:  # composed: the law on the state just measured
                    q, qd, _ = cast(tuple, measured)  # measured with a controller
                    self.contact.feed(getattr(ctrl, "law", None))
                    sim.command(ctrl.step(sim.time, names, q, qd), stamp)
                    self.got_command = True
                elif self.inbox is not None:
                    for interface, msg in self.inbox.take_all():
                        self.got_command = True
                        sim.command(msg.data, now, interface)
                sim.step(stamp)
                k += 1
                if ctrl is not None:
                    measured = sim.measure()
                reached = self._reached_pause_at()
                if k % every == 0 or reached:
                    self.publish_state(measured)
            if pt is not None:
                pt.flush()  # one wake per step, after it: the publisher runs while we sleep
            if reached:
                self._announce_pause_at()
            self._record_step_time(time.perf_counter() - t0, now)
            deadline += dt
            if not realtime and k % 200 == 0:
                time.sleep(0)  # let the executor thread take commands

    def _run_lockstep(self) -> None:
        """Each command: one step, one /joint_states; the state at 10 Hz while idle before the
        first command (and while paused)."""
        assert self.inbox is not None
        last_idle = time.monotonic()
        while not self._stop.is_set():
            self.inbox.wait(0.1)
            msgs = self.inbox.take_all(every_topic=True)
            reached = False
            with self.lock:
                for interface, msg in msgs:
                    self.got_command = True
                    self.sim.command(msg.data, None, interface)
                    if not self.paused and self._lockstep_due(interface):
                        t0 = time.perf_counter()
                        self.sim.step(None)
                        self.publish_state()
                        self._record_step_time(time.perf_counter() - t0)
                        reached = self._reached_pause_at() or reached
                if (not self.got_command or self.paused) and time.monotonic() - last_idle >= 0.1:
                    self.publish_state()
                    last_idle = time.monotonic()
            if reached:
                self._announce_pause_at()

    # ---- diagnostics --------------------------------------------------------------------------
    def snapshot(self, since: tuple[float, float, int]) -> dict[str, Any]:
        """Counters, plus rate and real-time factor since the (wall, sim time, steps) ``since``."""
        wall, sim_t, steps = time.monotonic(), self.sim.time, self.sim.stats.steps
        w0, s0, k0 = since
        elapsed = wall - w0
        st = self.sim.stats
        return {
            "mode": self.mode, "paused": self.paused, "sim_time": sim_t, "steps": steps,
            "wall_time": wall,  # time.monotonic(): one clock for every process of the host
            "rate_hz": (steps - k0) / elapsed if elapsed > 0 else 0.0,
            "rtf": (sim_t - s0) / elapsed if elapsed > 0 else 0.0,
            **self.timing.summary(),
            "missed_steps": self.missed_steps,
            "commands_received": st.commands_received, "commands_rejected": st.commands_rejected,
            "steps_without_new_command": st.steps_without_new_command,
            "stale_steps": st.stale_steps, "braking": self.sim.braking,
            "saturated_steps": st.saturated_steps, "inertia_fixups": len(self.sim.warnings),
            "unstable_steps": st.unstable_steps, "integrator": self.sim.integrator,
            "composed": self.controller.law_type if self.controller is not None else "",
            "realtime": list(self.hygiene),
            **(self.publisher_thread.stats() if self.publisher_thread is not None else {}),
            **({"wheel_slip_max": self.sim.slip_max, "lateral_velocity_max": self.sim.lateral_max,
                "base_upset_steps": getattr(self.sim, "upset_steps", 0)}
               if self.odom is not None else {}),
            "_now": (wall, sim_t, steps),
        }

    def publish_diagnostics(self) -> None:
        snap = self.snapshot(self._diag_window)
        self._diag_window = snap.pop("_now")
        self.pub_diag.publish(self._String(data=json.dumps(snap)))

    def stats_line(self, since_start: bool = False) -> str:
        s = self.snapshot(self._start if since_start else self._stats_window)
        self._stats_window = s["_now"]
        return (f"{NAME}: stats t={s['sim_time']:.3f}s steps={s['steps']} rtf={s['rtf']:.4f} "
                f"rate={s['rate_hz']:.1f}Hz step_p99={s['step_time_p99_us']:.0f}us "
                f"period_p99={s.get('period_p99_us', 0.0):.0f}us "
                f"jitter_p99={s.get('jitter_p99_us', 0.0):.0f}us overruns={s['overruns']} "
                f"missed_steps={s['missed_steps']} commands={s['commands_received']} "
                f"rejected={s['commands_rejected']} "
                f"steps_without_new_command={s['steps_without_new_command']} "
                f"stale_steps={s['stale_steps']} unstable_steps={s['unstable_steps']}"
                + (f" publish_dropped={s['publish_dropped']}" if "publish_dropped" in s else ""))

    def print_stats(self) -> None:
        print(self.stats_line(), flush=True)


def composed_controller(node, sim, argv: list[str] | None) -> Any:
    """Composed mode (``controller_type`` set): a node ``controller`` in this process, with
    this process's parameters (the robot, the gains ...) and ``type = controller_type``,
    running the controller node's ``Controller``; None when ``controller_type`` is ''."""
    import rclpy
    from rclpy.parameter import Parameter

    from rbd_ros.control.mobile_laws import MOBILE_LAWS  # lazy: the mobile laws (10 ms), at start, not at import
    from rbd_ros.ros.nodes.controller import make_controller  # lazy: the controller (47 ms), at start, not at import

    law_type = schema(NAME).declare(node, ["controller_type"])["controller_type"]
    if not law_type:
        return None
    if law_type not in LAWS + MOBILE_LAWS:
        raise NodeConfigError(f"controller_type '{law_type}' is not one of {', '.join(LAWS + MOBILE_LAWS)}")
    if set(sim.interfaces) != {"effort"}:
        raise NodeConfigError(f"composed mode: the law's output is a torque, so every joint's "
                              f"command_interface must be effort (got {sim.interfaces_summary()})")
    # the parameters given to this process (command line, parameter files), not the global
    # '__node:=mujoco_bridge' rename, which would name this node too
    overrides = getattr(node, "_parameter_overrides", {})
    given = [p for name, p in overrides.items() if name not in ("controller_type", "type")]
    if "rate" not in overrides:  # the control rate is the stepping rate (model-derived gains)
        given.append(Parameter("rate", Parameter.Type.DOUBLE, 1.0 / sim.config.timestep))
    cnode = rclpy.create_node(
        "controller", context=node.context, namespace=node.get_namespace(),
        cli_args=topic_remaps(argv, "controller"), use_global_arguments=False,
        parameter_overrides=[*given, Parameter("type", Parameter.Type.STRING, law_type)])
    try:  # the law registry's controller; a mobile law reads the base's ground truth
        controller = make_controller(cnode, composed=True, base_state=getattr(sim, "base_state", None))
    except Exception:
        cnode.destroy_node()
        raise
    if list(controller.joints) != list(sim.joint_names):
        raise NodeConfigError(f"composed: the controller's joints {controller.joints} and the "
                              f"bridge's {list(sim.joint_names)} must be the same order")
    return controller


def main(argv: list[str] | None = None) -> int:
    import rclpy

    from rbd_ros.sim.simulator import Simulator  # lazy: the simulator, at start, not at import

    def body(node) -> None:
        log = level_logger(node)
        try:
            config, config_source = bridge_config(node)
            loaded = robot_from_node(node)  # the robot parameters, "base_type" among them
            model, source = loaded.model, loaded.source
            if model.base_type in MOBILE_BASES:
                from rbd_ros.sim.mobile_sim import (  # lazy: the mobile simulator, at start, not at import
                    MobileSimulator,
                )

                mobile, odom_frame, base_frame = mobile_config(node, model)
                sim: Simulator = MobileSimulator(model, config, mobile, log=log)
                # read back by MujocoBridge (getattr: a fixed base's Simulator has none); not
                # declared by MobileSimulator (sim/)
                sim.odom_frames = (odom_frame, base_frame)  # type: ignore[attr-defined]
            elif model.base_type != "fixed":
                raise NodeConfigError(f"'{model.name}' has a {model.base_type} base: the bridge "
                                      f"simulates fixed, planar and diff_drive bases")
            else:
                refuse_mobile_parameters(node, model)
                # a URDF's collision shapes touch a scene (a model file: the capsules)
                sim = Simulator(model, config, log=log, urdf=loaded.urdf, conversion=loaded.conversion)
                touching = sim.scene_touching_links()
                if touching:
                    log("warn", f"at the initial positions the scene touches {touching} besides "
                                "the probe: the F/T sensor does not see those contacts (collision "
                                "shapes too large for the scene, or a start inside an object?)")
        except (NodeConfigError, ValueError, FileNotFoundError):
            raise
        except Exception as exc:  # noqa: BLE001 - any start-up failure is a config error
            raise NodeConfigError(f"{type(exc).__name__}: {exc}") from None
        controller = composed_controller(node, sim, argv)
        bridge = MujocoBridge(node, sim, config, argv, controller)
        if schema(NAME).declare(node, ["viewer"])["viewer"]:
            from rbd_ros.ros.nodes.viewer import attach  # lazy: the viewer, not at the default start

            bridge.viewer = attach(node, sim.mj_model, sim.mj_data, bridge.lock, model.name)
        executor = rclpy.executors.SingleThreadedExecutor()
        executor.add_node(node)
        if controller is not None:
            executor.add_node(controller.node)
        if config.gc_freeze:
            bridge.hygiene.append(freeze_garbage())
        bridge.start()
        composed = (f"composed controller {controller.law_type}" if controller is not None
                    else "separate controller")
        is_mobile = model.base_type in MOBILE_BASES
        mob: Any = cast("MobileSimulator", sim).mobile if is_mobile else None  # a mobile base: its simulator
        base = (f"{model.base_type} base ({mob.base_model}, odom "
                f"{mob.odom_source}), " if is_mobile else "")
        print(f"{NAME}: ready ({base}{len(sim.joint_names)} joints, mode={config.mode}, "
              f"integrator={sim.integrator}, timestep={config.timestep:g} s, "
              f"command_mode={config.command_mode}, command_interface="
              f"{sim.interfaces_summary()}, model {model.name!r} from {source}, "
              f"settings from {config_source}; {composed}; "
              f"realtime: {'; '.join(bridge.hygiene) or 'none'})",
              flush=True)
        try:
            executor.spin()
        finally:
            bridge.stop()
            print(bridge.stats_line(since_start=True), flush=True)
            executor.shutdown(timeout_sec=0.5)
            if hasattr(controller, "close"):  # its threads joined before rclpy shuts down (issue 37)
                controller.close()

    return run_node(NAME, body, argv, spin=False)


if __name__ == "__main__":
    sys.exit(main())
