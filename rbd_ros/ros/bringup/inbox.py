"""The bringup process's receiving side over ROS (``Inbox``, the base of ``runner.Runner``):
its node ``rbd_bringup`` subscribed to the states, the controller state, the commands, the
bridge's diagnostics and the frames; each callback only stores the serialized message with its
stamp (and writes it to the bag while recording), so this process keeps up with a lockstep loop
at ~1.5 kHz even on a busy machine; and the waits on what arrived."""
from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable, cast

from rbd_ros.ros import topics
from rbd_ros.ros.bringup.processes import REACHED
from rbd_ros.ros.common import recordable_qos
from rbd_ros.ros.dds import use_large_data_profile
from rbd_ros.ros.messages import header_stamp_ns

STATES, COMMANDS = topics.JOINT_STATES, topics.COMMANDS
TOUR = topics.node_topic("controller", topics.JOINT_TRAJECTORY)
CONTROLLER_STATE = topics.node_topic("controller", topics.CONTROLLER_STATE)
BASE_PATH = "/controller/base_path"  # a mobile base's tour (rbd_ros.ros.nodes.mobile_controller)
CMD_VEL = "/controller/cmd_vel"  # diff_drive_velocity: the twist profile (rbd_ros.control.twist_profile)
TOPICS = {  # recorded
    STATES: "sensor_msgs/msg/JointState",
    COMMANDS: "std_msgs/msg/Float64MultiArray",
    TOUR: "trajectory_msgs/msg/JointTrajectory",
    CONTROLLER_STATE: "sensor_msgs/msg/JointState",
    # the state publisher's (rbd_ros.ros.nodes.state_publisher): the latched two once, at the tour
    topics.TF: "tf2_msgs/msg/TFMessage",
    "/tf_static": "tf2_msgs/msg/TFMessage",
    "/robot_description": "std_msgs/msg/String",
}


class Inbox:
    """What this process receives and records (module docstring); ``args`` the run's."""

    # the runner's (``runner.Runner``, the class over this one; declared for the type checker only)
    say: Callable[..., None]
    answer_time: Callable[[float], float]

    def __init__(self, args: Any) -> None:
        self.args = args
        self.lock = threading.Lock()
        # received messages kept serialized with their stamps (s): a callback only stores
        self.last_state: tuple[float, bytes] | None = None  # latest /joint_states
        self.controller_state: list[tuple[float, bytes]] = []  # /controller/controller_state
        self.commands_seen = 0  # the controller's commands received, recorded or not
        #: where the controller commands: /effort_controller/commands, or the position
        #: interface's topic (``--command-interface position``)
        self.command_topic = ("/position_controller/commands"
                              if getattr(args, "command_interface", "effort") == "position" else COMMANDS)
        self.diagnostics: list[dict] = []  # the bridge's JSON diagnostics
        self.recorder: Any = None
        self.ft: Any = None  # the run's F/T recorder (record_ft.FTRecorder), set by the runner
        self.recording = False  # set when the tour is sent: the bag holds the demo, not start-up
        self.collecting = False  # likewise: a mobile base's /odom and wheel rates for the report
        self.last_odom_stamp = -1
        self.record_until = float("inf")  # simulated time of the last state to record
        #: stamp (ns) of the first sample to record: the paused state's (``start_recording``)
        self.record_from_ns = 0
        self.last_stamp = -1  # of the last recorded /joint_states (ns)
        self.odom_raw: list[tuple[float, bytes]] = []  # a mobile base's /odom and /joint_states
        self.state_raw: list[tuple[float, bytes]] = []

    def open_recording(self, recorded_topics: dict[str, str]) -> Path | None:
        """With ``--record DIR``: ``DIR`` made, a bag left there by an earlier run removed and
        the bag recorder opened on the recorded topics (``TOPICS`` and the task's,
        ``recorded_topics``); returns ``DIR`` (``None`` without ``--record``)."""
        record = Path(self.args.record) if self.args.record else None
        if record is not None:
            if (record / "bag").exists():
                shutil.rmtree(record / "bag")
            record.mkdir(parents=True, exist_ok=True)
            from rbd_ros.ros.bringup.recorder import BagRecorder  # lazy: the bag writer (51 ms of import)

            recorded = {self.command_topic if t == COMMANDS else t: kind for t, kind in TOPICS.items()}
            self.recorder = BagRecorder(record / "bag", {**recorded, **recorded_topics})
        return record

    def open_ros(self):
        """This process's ROS node ``rbd_bringup``: subscribed to the states, the controller
        state, the commands, the bridge's diagnostics and the frames (the task adds its own:
        ``Task.connect``); returns the node."""
        import rclpy
        from rclpy.signals import SignalHandlerOptions
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray, String

        use_large_data_profile()  # this process and the nodes it starts (see rbd_ros.ros.dds)
        # signals are this process's (main): rclpy's own handler would stop the executor and
        # leave the run to fail with an executor message instead of stopping cleanly
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        node = rclpy.create_node("rbd_bringup")
        qos = recordable_qos()  # nothing lost while this process lags the lockstep loop
        node.create_subscription(String, topics.node_topic("mujoco_bridge", topics.DIAGNOSTICS),
                                 self.on_diagnostics, 10)
        node.create_subscription(JointState, STATES, self.on_state, qos, raw=True)
        node.create_subscription(JointState, CONTROLLER_STATE, self.on_controller_state,
                                 qos, raw=True)
        node.create_subscription(Float64MultiArray, self.command_topic, self.on_command,
                                 qos, raw=True)
        self.subscribe_frames(node)
        return node

    def subscribe_frames(self, node) -> None:
        """The state publisher's /tf (recorded while recording) and its latched /tf_static and
        /robot_description (kept, written to the bag when recording starts: ``record_frames``)."""
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String
        from tf2_msgs.msg import TFMessage

        self.latched: dict[str, object] = {}
        self.tf_seen = False  # a /tf came (wait_until_connected)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        for topic, kind in (("/tf_static", TFMessage), ("/robot_description", String)):
            node.create_subscription(kind, topic, lambda msg, topic=topic: self.latched.__setitem__(topic, msg),
                                     latched)
        node.create_subscription(TFMessage, topics.TF, self.on_tf, 100)

    def record_frames(self, t_now: float) -> None:
        """The latched /tf_static and /robot_description into the bag, at the tour's start."""
        for topic, msg in dict(self.latched).items():
            self.recorder.write_message(topic, int(t_now * 1e9), msg)

    def on_tf(self, msg) -> None:  # tf2_msgs/TFMessage
        self.tf_seen = True
        if self.recording and msg.transforms:
            stamp = msg.transforms[0].header.stamp
            ns = stamp.sec * 1_000_000_000 + stamp.nanosec
            if self.in_window(ns):
                self.recorder.write_message(topics.TF, ns, msg)

    def on_state(self, raw: bytes) -> None:
        stamp = header_stamp_ns(raw)
        with self.lock:
            self.last_state = (1e-9 * stamp, raw)
            self._keep_state(stamp, raw)

    def _keep_state(self, stamp: int, raw: bytes) -> None:
        """Record (and collect) a state once (the caller holds ``lock``): a paused lockstep
        bridge repeats its last state at 10 Hz."""
        if (self.recording or self.collecting) and 1e-9 * stamp <= self.record_until \
                and stamp > self.last_stamp:
            self.last_stamp = stamp
            if self.in_window(stamp):
                self.recorder.write(STATES, stamp, raw)
            if self.collecting:
                self.state_raw.append((1e-9 * stamp, raw))

    def start_recording(self, t_now: float) -> None:
        """From here the bag records (with ``--record``; and ``collecting`` as the task set it):
        the latched frames at ``t_now``, and the state the bridge paused at, which arrived
        before: its 10 Hz repeat may not come before the task resumes the bridge (a race
        with each topic's own repeat: a press run's bag once had the paused state's
        ``/ft_sensor/wrench`` but not its ``wrench_raw``)."""
        if not self.recorder:
            return
        with self.lock:
            # nothing stamped before the pause: one subscription's queue can lag another's, and
            # a press run's bag began its F/T topics 60 readings before its states (CI)
            self.record_from_ns = header_stamp_ns(self.last_state[1]) if self.last_state else 0
            self.recording = True
            if self.last_state is not None:
                raw = self.last_state[1]
                self._keep_state(header_stamp_ns(raw), raw)
        self.record_frames(t_now)
        if self.ft is not None:
            self.ft.begin()  # and the F/T readings at the pause

    def in_window(self, stamp_ns: int) -> bool:
        """A sample stamped ``stamp_ns`` goes into the bag: recording, and stamped from the
        paused state on (``record_from_ns``) up to ``record_until``."""
        return self.recording and self.record_from_ns <= stamp_ns and 1e-9 * stamp_ns <= self.record_until

    def record_twist(self, raw: bytes) -> None:
        """A twist the player sent (stamped with the simulated time it acts at), into the bag."""
        stamp = header_stamp_ns(raw)
        if self.in_window(stamp):
            self.recorder.write(CMD_VEL, stamp, raw)

    def on_odom(self, raw: bytes) -> None:
        stamp = header_stamp_ns(raw)
        # a paused lockstep bridge repeats its last state and odometry at 10 Hz: kept once
        if self.collecting and 1e-9 * stamp <= self.record_until and stamp > self.last_odom_stamp:
            self.last_odom_stamp = stamp
            with self.lock:
                self.odom_raw.append((1e-9 * stamp, raw))
            if self.in_window(stamp):
                self.recorder.write(topics.ODOM, stamp, raw)

    def on_controller_state(self, raw: bytes) -> None:
        stamp = header_stamp_ns(raw)
        with self.lock:
            self.controller_state.append((1e-9 * stamp, raw))
        if self.in_window(stamp):
            self.recorder.write(CONTROLLER_STATE, stamp, raw)

    def on_command(self, raw: bytes) -> None:
        self.commands_seen += 1
        if self.recording:
            with self.lock:
                t = self.last_state[0] if self.last_state else 0.0
            if t <= self.record_until:
                self.recorder.write(self.command_topic, int(t * 1e9), raw)

    def on_diagnostics(self, msg) -> None:  # std_msgs/String
        diag = json.loads(msg.data)
        with self.lock:
            self.diagnostics.append(diag)

    def wait_for_state_at(self, t: float, limit: float = 60.0) -> None:
        """Until this process has the bridge's state at ``t`` (s, simulated; it may lag the
        bridge), at most ``limit`` s."""
        deadline = time.monotonic() + limit
        # (a state has come: the run pauses only a bridge whose states it has)
        while time.monotonic() < deadline and cast(tuple[float, bytes], self.last_state)[0] < t - 1e-9:
            time.sleep(0.01)

    def wait_for_commands_until(self, t_pause: float, slack: int = 5, limit: float = 10.0) -> None:
        """Before recording starts: every command the controller sent up to the pause has
        arrived.  Commands carry no stamp (the bag stamps each with the latest state), so a
        command queue lagging the states' by a thousand start-up commands (seen on a loaded
        machine) would otherwise be recorded into the tour.  The controller publishes a command
        and then its ``controller_state`` each cycle: once the controller state of the paused
        state has arrived and as many commands as controller states (``slack`` for samples
        lost to discovery at start-up), none is still in flight."""
        deadline = time.monotonic() + limit
        t_last = self.answer_time(t_pause)
        while time.monotonic() < deadline:
            with self.lock:
                cs = self.controller_state
                if cs and cs[-1][0] >= t_last - REACHED and self.commands_seen >= len(cs) - slack:
                    return
            time.sleep(0.01)
        with self.lock:
            behind = len(self.controller_state) - self.commands_seen
        self.say(f"[bringup] warning: {behind} commands from before the tour were still in flight "
                 f"after {limit:g} s; the bag may stamp them into the tour")
