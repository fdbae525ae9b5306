"""The controller node on a mobile manipulator (``rbd-ros controller`` with ``type`` one of
``diff_drive_velocity``, ``whole_body_computed_torque``; issue 18).

    rbd-ros controller --ros-args -p type:=whole_body_computed_torque -p model_yaml:=config/mobile_arm7.yaml

A thin adapter over ``rbd_ros.control.mobile_loop.MobileControlLoop`` (laws:
``rbd_ros.control.mobile_laws``).  Topics (``~`` the node's name):

* subscribes ``/joint_states`` (the arm's joints; base entries ignored) and ``/odom``
  (``nav_msgs/Odometry``: pose in ``odom_frame``, twist in ``base_frame``); a cycle runs when
  both of one stamp are in (``sync: stamp``; ``latest``: on every ``/joint_states``);
* subscribes ``~/cmd_vel`` (``geometry_msgs/TwistStamped``, frame '' or ``base_frame``;
  diff_drive_controller's interface since Jazzy; ``linear.y`` for a planar base only; a
  stamp up to 1 s ahead of the states acts from then, ``rbd_ros.control.mobile_loop``),
  ``~/base_path`` (``nav_msgs/Path`` in ``odom_frame``; whole-body law) and
  ``~/joint_trajectory`` (the arm, as for an arm controller: subscribed raw, deserialized and
  planned on the loop's worker, off the cycle's executor; a path is subscribed raw and read on
  a reader thread too, in arrival order).  These callbacks only write a
  buffer; the next cycle reads it, or a 20 ms wall timer while no cycle ran for 0.1 s (a
  command is stamped with the latest state's control time; the timer never holds the lock a
  composed step would wait for while cycles run).  One clock: the states' stamps, as for an
  arm (a path stamped more than an hour after the latest state is refused).  Malformed
  twists and paths (NaN/Inf, wrong frame, empty) are refused with one logged line and the base
  stops (brakes at ``max_acceleration``);
* publishes ``/effort_controller/commands`` (wheel torques or base force/moment, then the arm,
  in the ``joints`` order; the MuJoCo bridge's order) and ``~/controller_state``
  (``sensor_msgs/JointState``: names ``base_x, base_y, base_yaw`` and the arm; ``position`` the
  reference (base pose in the odom frame, arm ``q_d``), ``velocity`` the measurement, ``effort``
  the generalized effort ``[F_x, F_y, M_z, arm torques]``).

Parameters: those of ``config/schema/controller.yaml`` with ``families`` mobile or none
(``docs/parameters.md``), declared and checked by ``rbd_ros.ros.parameters``.

Composed mode (``controller_type`` of the MuJoCo bridge): no ``/joint_states``/``/odom``
subscriptions; the bridge calls ``step`` with the state it just produced and the base's ground
truth (``odom_source`` does not apply).
"""
from __future__ import annotations

import array
import math
import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from types import SimpleNamespace as NS
from typing import Any

import numpy as np

from rbd_ros.ros import topics
from rbd_ros.ros.common import NodeConfigError, level_logger, recordable_qos
from rbd_ros.ros.messages import set_stamp, to_seconds
from rbd_ros.ros.nodes.controller_common import (
    make_outputs,
    node_parameters,
    publish_quietly,
    reliable_qos,
    robot_for,
    subscribe_trajectory,
    wall_clock,
)

CMD_VEL = "~/cmd_vel"
BASE_PATH = "~/base_path"
#: messages the subscriptions may buffer between two drains (each cycle drains, and a 20 ms
#: timer while no cycle runs): a full inbox refuses the newest, logged, and keeps the order
MAX_INBOX = 1000
RESEND_AFTER = 0.25  # s: a repeat of the answered first state this long after it resends (lockstep)


class MobileController:
    """The node's state and callbacks (see the module docstring)."""

    # the command and state publishers and their messages, set by
    # ``controller_common.make_outputs`` (declared for the type checker only)
    cmd_pub: Any
    cmd_msg: Any
    state_pub: Any
    state_msg: Any

    def __init__(self, node: Any, law_type: str, composed: bool = False,
                 base_state: Any = None) -> None:
        from rbd_ros.control import mobile_laws as ml  # lazy: the mobile laws (0.2 s of import)
        from rbd_ros.control.mobile_loop import MobileControlLoop  # lazy: the mobile loop (0.3 s of import)
        from rbd_ros.robot import Robot  # lazy: the robot front (0.3 s of import)

        self.node = node
        self.log = node.get_logger()
        self.law_type = law_type
        self.active = True  # commands are published (a managed node: between activate and deactivate)
        prm = node_parameters(node, "mobile", composed)
        loaded = robot_for(node, "mobile", law_type)
        model = loaded.model
        robot = Robot(model)
        kw = {k: prm[k] for k in ("bandwidth", "base_bandwidth", "damping_ratio", "rate", "model_actuators",
                                  "lookahead", "base_force_limit", "cmd_vel_timeout", "max_velocity",
                                  "max_acceleration")}
        try:
            self.law = ml.make_mobile_law(law_type, robot, wheel_effort_limit=float(prm["wheel_effort_limit"]), **kw)
            self.loop = MobileControlLoop(
                robot, self.law, prm["joints"], level_logger(node), prm["state_timeout"], prm["interpolation"],
                odom_frame=prm["odom_frame"], base_frame=prm["base_frame"], sync=prm["sync"],
                path_speed=prm["path_speed"])
        except (ValueError, TypeError) as exc:
            raise NodeConfigError(str(exc)) from None
        self.publish_state = bool(prm["publish_state"])
        self.joints = self.loop.joints
        self.tau_out = self.loop.tau_out
        self.inbox: deque = deque()  # (loop method, message) written by the callbacks (_buffer)
        self.dropped = 0  # messages refused by a full inbox
        self._reader: Any = None  # the thread that reads raw ~/base_path messages (_on_path)
        self.lock = threading.RLock()  # composed: the bridge's stepping thread and the executor's drain
        self.composed = composed
        self.base_state = base_state  # composed: the simulator's ground truth (position, quaternion, linear, angular)
        make_outputs(self, self.joints, self.loop.state_names)
        self._make_subscriptions(composed)
        g = self.law.gains
        self._ready_text = (f"controller: ready ({law_type}, {model.base_type} base + {model.dof} joints, "
                            f"{loaded.source})")
        if not composed:
            self._ready_timer = node.create_timer(0.001, self._announce_ready, clock=wall_clock())
        self.log.info(f"{law_type} on a {model.base_type} base + {model.dof} joints from {loaded.source}; "
                      f"commands in the order {self.joints}; gains kp={g['kp'][0]:.4g} kd={g['kd'][0]:.4g} "
                      f"(arm), kp_base={g['kp_base'][0]:.4g} kd_base={g['kd_base'][0]:.4g} "
                      f"kv_base={g['kv_base'][0]:.4g}; " + "; ".join(self.law.gain_notes))

    def _make_subscriptions(self, composed: bool) -> None:
        """State (not composed), references (callbacks only buffer), the idle drain, the watchdog."""
        from geometry_msgs.msg import TwistStamped
        from nav_msgs.msg import Odometry, Path
        from sensor_msgs.msg import JointState

        node, qos, wall = self.node, reliable_qos(), wall_clock()
        if not composed:
            node.create_subscription(JointState, topics.JOINT_STATES, self._on_joint_state, recordable_qos())
            node.create_subscription(Odometry, topics.ODOM, self._on_odom, recordable_qos())
        # raw: deserialized on the loop's planning worker (a callable in the inbox), not here
        subscribe_trajectory(node, self._on_trajectory)
        node.create_subscription(TwistStamped, CMD_VEL, lambda msg: self._buffer(self._cmd_vel, msg), qos)
        node.create_subscription(Path, BASE_PATH, self._on_path, qos, raw=True)  # read off the executor
        self._last_cycle = -math.inf  # time.monotonic() of the latest cycle
        node.create_timer(0.02, self._drain_idle, clock=wall)  # references while no state comes (a paused bridge)
        if not composed:
            node.create_timer(0.05, self._watchdog, clock=wall)

    def _on_path(self, msg: Any) -> None:
        """A raw ``~/base_path``: deserialized and read (``mobile_loop.read_path``) on a reader
        thread of its own, in arrival order, never on this executor, which runs the cycle (10 000
        poses: ~0.4 s of rclpy's deserialization and ~0.2 s of reading); its place in the inbox
        is kept by the reading's future (``_drain``)."""
        if not isinstance(msg, bytes | bytearray | memoryview):  # (a message given in-process)
            self._buffer(self.loop.base_path, msg)
            return
        from nav_msgs.msg import Path
        from rclpy.serialization import deserialize_message

        from rbd_ros.control.mobile_loop import read_path  # lazy: the mobile loop (0.3 s of import)

        if self._reader is None:
            self._reader = ThreadPoolExecutor(1, thread_name_prefix="rbd_ros-read-path")
        raw = bytes(msg)
        if self._room("base path"):
            reading = self._reader.submit(lambda: read_path(deserialize_message(raw, Path)))
            self.inbox.append((self.loop.base_path, reading))

    def _on_trajectory(self, msg: Any) -> None:
        """A trajectory, or a callable deserializing one (``subscribe_trajectory``): buffered;
        the drain hands it to the loop, which reads and plans it on its worker."""
        self._buffer(self.loop.trajectory, msg)

    def _buffer(self, handler: Any, msg: Any) -> None:
        """A subscription's message kept for the drain (``handler(msg)`` there), unless the
        inbox is full (``_room``)."""
        if self._room(getattr(handler, "__name__", "message").lstrip("_")):
            self.inbox.append((handler, msg))

    def _room(self, what: str) -> bool:
        """Whether the inbox takes one more; if not, the refusal logged (the first and every
        hundredth), never a silent drop of an older message."""
        if len(self.inbox) < MAX_INBOX:
            return True
        self.dropped += 1
        if self.dropped % 100 == 1:
            self.log.error(f"{what} dropped: {MAX_INBOX} messages already wait for the control cycle "
                           f"(is the executor blocked?); {self.dropped} dropped so far")
        return False

    def _announce_ready(self) -> None:
        self._ready_timer.cancel()
        print(self._ready_text, flush=True)

    # ---- inputs: state ------------------------------------------------------------------------
    def _cmd_vel(self, msg: Any) -> bool:
        return self.loop.cmd_vel(msg.header.frame_id, msg.twist.linear, msg.twist.angular,
                                 to_seconds(msg.header.stamp))

    def _on_joint_state(self, msg: Any) -> None:
        t = to_seconds(msg.header.stamp)
        if t == 0.0 and self.loop.sync == "latest":  # unstamped (stamp sync pairs the stamps as they are)
            t = self.node.get_clock().now().nanoseconds * 1e-9
        self.loop.joint_state(msg.name, msg.position, msg.velocity, t)
        self._maybe_cycle()

    def _on_odom(self, msg: Any) -> None:
        pose, twist = msg.pose.pose, msg.twist.twist
        if self.loop.odom(pose.position, pose.orientation, twist.linear, twist.angular,
                          to_seconds(msg.header.stamp), msg.header.frame_id, msg.child_frame_id):
            self._maybe_cycle()

    def _watchdog(self) -> None:
        if self.loop.watchdog(time.monotonic(), 0.05):
            self._publish_command()

    # ---- the cycle ----------------------------------------------------------------------------
    def _maybe_cycle(self) -> None:
        loop = self.loop
        self._drain()
        if not loop.ready() or not self.active:  # a managed node cycles only while active
            self._resend_first_command()
            return
        t = loop.t
        self._last_cycle = time.monotonic()
        loop.cycle(t)
        self._publish_command()
        if self.publish_state:
            msg = self.state_msg
            set_stamp(msg.header.stamp, t)
            msg.position = array.array("d", loop.ref_out.tobytes())
            msg.velocity = array.array("d", loop.q_out.tobytes())
            msg.effort = array.array("d", loop.effort_out.tobytes())
            publish_quietly(self, self.state_pub, msg)

    def step(self, t: float, names: list[str], position: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """Composed mode (the MuJoCo bridge's loop): one cycle on the arm state in ``names``
        order and the simulator's base ground truth at ``t``; returns the efforts (``joints``
        order), published as well."""

        pos, quat, lin, ang = self.base_state()
        loop = self.loop
        with self.lock:
            loop.joint_state(names, position, velocity, t)
            loop.odom(NS(x=pos[0], y=pos[1], z=pos[2]), NS(x=quat[0], y=quat[1], z=quat[2], w=quat[3]),
                      NS(x=lin[0], y=lin[1], z=lin[2]), NS(x=ang[0], y=ang[1], z=ang[2]), t)
            self._maybe_cycle()
        return self.tau_out

    def _drain_idle(self) -> None:
        """The timer's drain: only while no cycle ran for 0.1 s (cycles drain themselves), and
        never waiting for the lock."""
        if time.monotonic() - self._last_cycle < 0.1 or not self.inbox:
            return
        if self.lock.acquire(blocking=False):
            try:
                self._drain()
            finally:
                self.lock.release()

    def _drain(self) -> None:
        """What the subscriptions buffered, in arrival order: before each cycle, and every 20 ms
        of wall time (stamped with the latest state's time, as in a cycle)."""
        with self.lock:
            while self.inbox:
                handler, msg = self.inbox[0]
                if isinstance(msg, Future):  # a path read on the reader thread (_on_path)
                    if not msg.done():
                        return  # what came after it waits behind it (arrival order); never waited for
                    try:
                        msg = msg.result()
                    except Exception as exc:  # noqa: BLE001 - a message rclpy could not read
                        self.inbox.popleft()
                        self.log.error(f"base path refused: unreadable ({exc!r})")
                        continue
                self.inbox.popleft()
                handler(msg)

    def close(self) -> None:
        """Join the path reader and the loop's workers (the process's end: before rclpy shuts
        down, as the arm controller's ``close``)."""
        if self._reader is not None:
            self._reader.shutdown(wait=True, cancel_futures=True)
        self.loop.close()

    @property
    def cycles(self) -> int:
        return self.loop.cycles

    def _resend_first_command(self) -> None:
        """Lockstep's first exchange: the bridge repeats its initial state and odometry (10 Hz)
        until a command reaches it, then steps once per command.  A command published before
        the bridge's subscription matched this publisher is lost (volatile QoS), and with
        ``sync: stamp`` the repeats of the answered stamp start no cycle: the run would stall
        at its start.  So a repeat of the one pair answered (one cycle, no newer state), at
        least ``RESEND_AFTER`` s after the answer, sends that command again (the arm
        controller answers each repeat of an initial state anew, re-stamped by its clock).
        The wait keeps an answer still in flight from becoming a second step."""
        loop = self.loop
        if (loop.cycles == 1 and self.active and loop.t == loop.t_cycled == loop.t_odom
                and time.monotonic() - self._last_cycle >= RESEND_AFTER):
            self._last_cycle = time.monotonic()
            self._publish_command()

    def _publish_command(self) -> None:
        if not self.active:  # a managed node outside "active": no commands
            return
        self.cmd_msg.data = array.array("d", np.ascontiguousarray(self.tau_out).tobytes())
        publish_quietly(self, self.cmd_pub, self.cmd_msg)
