"""``rbd-ros bringup``: an arm in MuJoCo, the dynamics services and a controller, a demo
trajectory, and a report.

    rbd-ros bringup (--robot NAME | --urdf PATH [--base-link L] [--tip-link L] [--base-type T])
                    --controller TYPE [--duration S] [--mode lockstep|realtime] [--composed]
                    [--record DIR [--no-video]] [--json FILE] [--start JOINT=VALUE|POSE ...]
                    [--floor Z|none] [--integrator auto|Euler|RK4|implicit|implicitfast]
                    [--timestep S] [--tour demo|excitation] [--model FILE.yaml]
                    [--sim-model FILE] [--perturb PERCENT [--seed N]] [--noise]

Starts the nodes of ``rbd_ros.ros.bringup.description.describe`` as processes (the launch files
start the same ones), sends a smooth quintic tour to the controller -- planned for the arm
before anything starts (``rbd_ros.control.tour``: from where the arm is, inside the position,
velocity and effort limits and above the floor, moved or shrunk until it fits, or refused with
the reason; ``--start`` keeps a given start exactly) --, shows a progress line, and at the end
prints RMS and maximum tracking error per joint, peak torques, the % of cycles at the effort
limit and chattering there, the achieved real-time factor and missed cycles. With ``--record DIR`` it writes
``DIR/report.json``, ``DIR/plot.png``, a rosbag2 recording ``DIR/bag/`` of
``/joint_states``, the commands, the reference and the controller state, and (``page.py``)
the video ``DIR/video.mp4`` / ``DIR/preview.gif`` rendered after the run (not with
``--no-video``) and the page ``DIR/index.html``.  ``--composed`` runs the control law inside
the MuJoCo bridge's loop (as ros2_control's controller_manager does) instead of a controller
process; the report says which ran.  Issue 31: ``--tour excitation`` (``excitation.py``) and a
simulated arm other than the controller's model, ``--model``, ``--sim-model``, ``--perturb``,
``--noise`` (``mismatch.py``).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import threading
import time
from pathlib import Path

import numpy as np

from rbd_ros.model import PRISMATIC
from rbd_ros.ros import topics
from rbd_ros.ros.bringup.description import CONTROLLER_TYPES, MODES, describe
from rbd_ros.ros.bringup.processes import REACHED, STALL_SECONDS, StallWatch, within
from rbd_ros.ros.bringup.report import real_time_factor
from rbd_ros.ros.messages import header_stamp_ns
from rbd_ros.util.flags import NewSpelling, add_chain_flags, add_deprecated
from rbd_ros.util.resources import DEFAULT_ROBOT

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


def _positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero (so no node starts for a
    run that cannot be done)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def _positive_newtons(text: str) -> float:
    """An argparse type: a finite force above zero, N."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of newtons") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive force in N, got {text}")
    return value


def check_record_dir(path: Path) -> None:
    """Fail before any node starts when ``--record DIR`` cannot be written: ``DIR`` is a
    file, or cannot be created, or refuses a file (``OSError`` with the reason)."""
    import tempfile

    if path.exists() and not path.is_dir():
        raise FileExistsError(f"--record {path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise OSError(f"--record {path}: cannot write there ({exc.strerror or exc})") from None


#: the bridge's timesteps the bringup runs (s): a control cycle of at most 10 ms (a coarser one
#: samples a 2 s tour segment too coarsely to follow it; at 1 s no cycle falls in the window)
TIMESTEP_RANGE = (1e-5, 0.01)


def check_timestep(timestep: float | None) -> None:
    """``--timestep`` inside ``TIMESTEP_RANGE`` (``ValueError`` naming it otherwise)."""
    if timestep is None:
        return
    lo, hi = TIMESTEP_RANGE
    if not (np.isfinite(timestep) and lo <= timestep <= hi):
        raise ValueError(f"--timestep {timestep:g}: must be between {lo:g} and {hi:g} s (the bridge's "
                         f"step and the controller's cycle; the default is 0.001 s)")


def parse_floor(text: str | float | None) -> float | str | None:
    """``--floor``: 'auto' (default), 'none' or a height in m."""
    if text is None or isinstance(text, float):
        return text
    t = str(text).strip().lower()
    if t in ("auto", "none"):
        return None if t == "none" else "auto"
    try:
        value = float(t)
    except ValueError:
        raise ValueError(f"--floor must be a height in m, 'auto' or 'none', got '{text}'") from None
    if not np.isfinite(value):
        raise ValueError(f"--floor must be a finite height in m, got '{text}'")
    return value


def check_json_file(path: Path) -> None:
    """Fail before any node starts when ``--json FILE`` cannot be written: ``FILE`` is a
    directory, or its directory cannot be created, or the file cannot be opened for writing
    (``OSError`` with the reason); a file that was not there is not left behind."""
    if path.is_dir():
        raise IsADirectoryError(f"--json {path}: is a directory, not a file")
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a"):
            pass
    except OSError as exc:
        raise OSError(f"--json {path}: cannot write there ({exc.strerror or exc})") from None
    if not existed:
        path.unlink(missing_ok=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="rbd-ros bringup", description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group()
    src.add_argument("--robot", default=None, help=f"bundled robot (default {DEFAULT_ROBOT})")
    src.add_argument("--urdf", default="", help="a .urdf/.xacro file")
    add_chain_flags(p, default="", old_base_link=False)  # --tip: deprecated
    p.add_argument("--base-type", dest="base", default="", action=NewSpelling,
                   choices=["", "fixed", "planar", "diff_drive"],
                   help="a --urdf robot's base (default: the file's, a URDF's fixed), as the nodes' "
                        "'base_type' parameter: diff_drive finds the wheel joints in the URDF")
    add_deprecated(p, "--base", "--base-type", "base", choices=["", "fixed", "planar", "diff_drive"])
    p.add_argument("--controller", default="computed_torque",
                   choices=[c for c in CONTROLLER_TYPES if c != "none"])
    p.add_argument("--duration", type=_positive_seconds, default=None,
                   help="simulated seconds to run (default: the tour plus 0.5 s)")
    p.add_argument("--mode", default="lockstep", choices=[m for m in MODES if m != "max"],
                   help="lockstep (default: every control cycle gets its step, deterministic) "
                        "or realtime (wall-clock paced)")
    p.add_argument("--composed", action="store_true",
                   help="the control law inside the MuJoCo bridge's loop, no controller process "
                        "(references and monitoring on the same topics)")
    p.add_argument("--rt-priority", type=int, default=0, metavar="N",
                   help="SCHED_FIFO priority of the bridge's stepping thread and of a separate "
                        "controller's executor thread (0 = off; reported when refused)")
    p.add_argument("--record", default="", metavar="DIR",
                   help="write report.json, plot.png, bag/, video.mp4, index.html")
    p.add_argument("--no-video", action="store_true", help="with --record: no video")
    p.add_argument("--json", default="", metavar="FILE", help="write the report as JSON")
    p.add_argument("--segment-time", type=_positive_seconds, default=None,
                   help="seconds per tour segment (default 2; with a mobile base 4: its figure eight "
                        "takes the 3 segments)")
    p.add_argument("--start", nargs="+", default=None, metavar="JOINT=VALUE",
                   help="the tour's start, kept exactly: JOINT=VALUE pairs (rad or m) and/or a named "
                        "pose of the robot (its SRDF's group_state); joints not given keep the default "
                        "start; refused when outside the limits, below the floor or too heavy to hold")
    p.add_argument("--floor", default="auto", metavar="Z",
                   help="height (m, base link frame) that no link origin or tool point may come "
                        "within 2 cm of along the tour; default: the base link's xy-plane for an arm "
                        "standing above it (table-mounted), none for one hanging below it; 'none': no floor")
    p.add_argument("--base-model", default="wheels", choices=["wheels", "ideal"],
                   help="a mobile base in the bridge: wheels on a floor (default) or the core's "
                        "ideal rolling model")
    p.add_argument("--integrator", default=None,
                   choices=["auto", "Euler", "RK4", "implicit", "implicitfast"],
                   help="the bridge's MuJoCo integrator (default: config/bridge.yaml, auto = RK4 "
                        "unless a joint's damping needs implicitfast)")
    p.add_argument("--timestep", type=_positive_seconds, default=None,
                   help="the bridge's timestep in s (default: config/bridge.yaml, 0.001); the "
                        "controller's rate follows")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--params-file", action="append", default=[], metavar="FILE",
                   help="a ROS 2 parameter file (NODE: ros__parameters: ...; /** for every node) for "
                        "the nodes the bringup starts (repeatable; later files win)")
    p.add_argument("-p", dest="param", action="append", default=[], metavar="NODE:NAME:=VALUE",
                   help="a parameter of a node the bringup starts, as --ros-args -p (NAME:=VALUE: "
                        "every node that has it); wins over --params-file")
    p.add_argument("--scene", default="", metavar="FILE",
                   help="objects the arm touches (a scene YAML or a bundled name: table, wall; "
                        "rbd_ros.sim.scene), given to the bridge")
    p.add_argument("--task", default="tour", choices=["tour", "press"],
                   help="tour (default) or press: approach the scene's surface, press --force N, "
                        "slide 0.1 m, retreat (rbd_ros.ros.bringup.press)")
    p.add_argument("--force", type=_positive_newtons, default=10.0, metavar="N",
                   help="with --task press: the force to press with, N (default 10)")
    from rbd_ros.ros.bringup import excitation, mismatch

    excitation.add_arguments(p)
    mismatch.add_arguments(p)
    return p.parse_args(argv)


class Bringup:
    """Runs the nodes and the demo; see the module docstring."""

    def __init__(self, args: argparse.Namespace) -> None:
        from rbd_ros.control.mobile_laws import MOBILE_LAWS
        from rbd_ros.control.tour import plan_mobile_tour, plan_tour
        from rbd_ros.model import MOBILE_BASES
        from rbd_ros.ros.bringup import mismatch
        from rbd_ros.ros.bringup.description import robot_parameters

        self.args = args
        check_timestep(args.timestep)
        robot = self.load_model(robot_parameters(args.robot or DEFAULT_ROBOT, args.urdf,
                                                 args.base_link, args.tip_link, args.base))
        mismatch.check(args)  # issue 31: the controller's model and the simulated arm
        self.model = mismatch.control_model(args, robot)
        self.robot_model = robot  # the URDF's, for the model comparison (mismatch.compare)
        self.sim_model, self.mismatch = mismatch.simulated_model(args, robot, self.model)
        self.mobile = self.model.base_type in MOBILE_BASES
        if self.mobile != (args.controller in MOBILE_LAWS):
            raise ValueError(f"'{self.model.name}' has a {self.model.base_type} base: use --controller "
                             + (" or ".join(MOBILE_LAWS) if self.mobile else "with an arm law (not "
                                f"{args.controller}, which drives a mobile base)"))
        self.profile = None  # diff_drive_velocity: the twist profile sent on ~/cmd_vel
        # checked before anything starts: inside the limits and the effort limits (or refused)
        self.eight = None
        bridge: dict = {}
        controller: dict = {}
        floor = parse_floor(getattr(args, "floor", "auto"))
        urdf_path = robot_parameters(args.robot or DEFAULT_ROBOT, args.urdf)["urdf_path"]
        points = self.guard_points(urdf_path) if not self.mobile else ()
        if self.mobile:
            def planner(q_start=None):  # noqa: ANN001, ANN202
                return plan_mobile_tour(self.model, q_start, segment_time=args.segment_time or 4.0,
                                        floor=floor)
        else:
            def planner(q_start=None):  # noqa: ANN001, ANN202
                return plan_tour(self.model, q_start, segment_time=args.segment_time or 2.0,
                                 floor=floor, points=points)
        given = getattr(args, "start", None)
        if given:
            self.tour = planner(self.start_from(given, planner))
        else:
            self.tour = planner()
        if self.mobile:
            if getattr(args, "tour", "demo") == "excitation":
                raise ValueError("--tour excitation identifies fixed-base arms; a mobile base runs the demo tour")
            self.tour, self.eight = self.tour
            if args.controller == "diff_drive_velocity":  # a twist profile instead of the eight
                from rbd_ros.control.twist_profile import TwistProfile

                self.eight = None
                self.profile = TwistProfile(self.tour.segment_time, self.model.base_type == "planar")
                self.tour.notes[:] = [n for n in self.tour.notes if not n.startswith("base: figure eight")]
                self.tour.notes.append(f"base: twist profile on ~/cmd_vel, 3 segments of "
                                       f"{self.tour.segment_time:g} s (rbd_ros.control.twist_profile)")
            base = [0.0] * (2 if self.model.base_type == "diff_drive" else 3)
            bridge["base_model"] = args.base_model
            controller["model_actuators"] = args.base_model != "ideal"  # the ideal base has no drives
        else:
            from rbd_ros.ros.bringup import excitation

            self.tour = excitation.plan(args, self.model, self.tour, points)  # --tour excitation
            base = []
        bridge["initial_positions"] = base + [float(x) for x in self.tour.start]
        if args.integrator:
            bridge["integrator"] = args.integrator
        if args.timestep is not None:
            bridge["timestep"] = float(args.timestep)
            controller["rate"] = 1.0 / float(args.timestep)
        bridge.update(mismatch.node_parameters(args, self.sim_model, args.record)[0])
        self.bridge_settings = bridge
        if getattr(args, "scene", ""):
            bridge["scene"] = args.scene
        self.specs = describe(robot=args.robot or DEFAULT_ROBOT, urdf=args.urdf,
                              base_link=args.base_link, tip_link=args.tip_link,
                              base=args.base, controller=args.controller, mode=args.mode, bridge=bridge,
                              controller_parameters=controller, composed=args.composed,
                              rt_priority=args.rt_priority)
        self.specs = self.user_parameters(self.specs)
        mismatch.apply(self.specs, args)
        self.procs = []
        self.lock = threading.Lock()
        # received messages kept serialized with their stamps (s): a callback only stores, so
        # the recorder keeps up with a lockstep loop at ~1.5 kHz even on a busy machine
        self.last_state: tuple[float, bytes] | None = None  # latest /joint_states
        self.controller_state: list[tuple[float, bytes]] = []  # /controller/controller_state
        self.commands_seen = 0  # /effort_controller/commands received, recorded or not
        self.joint_names: list[str] = []
        self.diagnostics: list[dict] = []  # the bridge's JSON diagnostics
        self.recorder = None
        self.recording = False  # set when the tour is sent: the bag holds the demo, not start-up
        self.collecting = False  # likewise: a mobile base's /odom and wheel rates for the report
        self.last_odom_stamp = -1
        self.record_until = float("inf")  # simulated time of the last state to record
        self.last_stamp = -1  # of the last recorded /joint_states (ns)
        # the controller's log lines from sending the tour on, and the last one looked at
        self.answers_from = self.answers_seen = 0
        self.tour_stamp = float("nan")  # s, the tour's header stamp
        self.said: list[str] = []  # the run's own lines (tour, warnings), for the page too
        self.path_poses = -1  # poses of the base path sent (mobile)
        self.player = None  # diff_drive_velocity: plays the twist profile (twist_player)
        for line in self.mismatch:
            self.say(f"[bringup] {line}")

    def say(self, line: str, show: bool = True) -> None:
        """Print one of the run's lines (``show``) and keep it for the page."""
        self.said.append(line)
        if show:
            print(line, flush=True)

    def start_from(self, pairs: list[str], planner) -> np.ndarray:  # noqa: ANN001
        """``--start`` over the default start (the planned one; zero clipped into the limits
        where none fits): ``JOINT=VALUE`` pairs, each joint once, a finite number each, and
        at most one named pose of the robot (its SRDF's ``group_state``, ``named_poses``; its
        joints outside the arm's chain are ignored), which the pairs override."""
        from rbd_ros.ros.bringup.description import named_poses, robot_parameters

        names = list(self.model.joint_names)
        values: dict[str, float] = {}
        pose: dict[str, float] = {}
        for pair in pairs:
            name, sep, text = pair.partition("=")
            name = name.strip()
            if not sep:
                params = robot_parameters(self.args.robot or DEFAULT_ROBOT, self.args.urdf)
                poses = named_poses(params["urdf_path"])
                if name not in poses:
                    known = (f"its named poses are {', '.join(poses)}" if poses else
                             "it has no named poses (no group_state in an SRDF beside its URDF)")
                    raise ValueError(f"--start {pair}: not JOINT=VALUE, nor a named pose of "
                                     f"'{self.model.name}': {known}")
                if pose:
                    raise ValueError(f"--start: one named pose at most, got a second: '{name}'")
                pose = {j: v for j, v in poses[name].items() if j in names}
                if not pose:
                    raise ValueError(f"--start {pair}: the named pose sets none of the arm's joints "
                                     f"({', '.join(names)})")
                continue
            if name not in names:
                raise ValueError(f"--start: '{self.model.name}' has no joint '{name}'; its joints "
                                 f"are {', '.join(names)}")
            if name in values:
                raise ValueError(f"--start: joint '{name}' given twice")
            try:
                values[name] = float(text)
            except ValueError:
                raise ValueError(f"--start {pair}: '{text}' is not a number") from None
            if not np.isfinite(values[name]):
                raise ValueError(f"--start {pair}: must be a finite number")
        given = {**pose, **values}
        q = np.clip(np.zeros(self.model.dof), self.model.lower, self.model.upper)
        if len(given) < len(names):  # the rest from the default start
            try:
                planned = planner()
                q = np.array((planned[0] if self.mobile else planned).start, dtype=float)
            except ValueError:
                pass
        for name, value in given.items():
            q[names.index(name)] = value
        return q

    def guard_points(self, urdf_path: str) -> list[tuple[str, int, np.ndarray]]:
        """The URDF's link origins (``(link, MDH frame, offset)``), kept above the floor with
        the MDH frame origins and the tool: of a ``--urdf`` arm, or of a bundled robot's URDF
        where its kinematics are the model file's (frames equal to 1e-9 m at random poses)."""
        from rbd_ros.robot import Robot
        from rbd_ros.urdf import load_conversion

        args = self.args
        try:
            conv = load_conversion(urdf_path, args.base_link or None, args.tip_link or None)
        except Exception:  # noqa: BLE001 - the bundled URDF only lends points; the model loaded
            return []
        if not args.urdf:
            m, robot = self.model, Robot(self.model)
            if conv.model.dof != m.dof or conv.model.joint_names != m.joint_names:
                return []
            rng = np.random.default_rng(0)
            lo, hi = np.clip(m.lower, -np.pi, np.pi), np.clip(m.upper, -np.pi, np.pi)
            for q in (lo + rng.random(m.dof) * (hi - lo) for _ in range(5)):
                if np.abs(conv.frames(q) - robot.link_poses(q)).max() > 1e-9:
                    return []
        return [(name, i, off[:3, 3]) for name, (i, off) in conv.link_offsets.items()]

    def user_parameters(self, specs: list) -> list:
        """The nodes' parameters with the user's ``--params-file`` files and ``-p`` items
        merged in (``rbd_ros.ros.bringup.params``: checked against the schemas first)."""
        from rbd_ros.ros.bringup.params import apply_overrides, load_params_file, parse_overrides

        files = [load_params_file(f) for f in getattr(self.args, "params_file", None) or []]
        started = {s.name for s in specs} | {"controller"}  # composed: the law's, to the bridge
        for f, values in zip(self.args.params_file or [], files):
            for node in sorted(set(values) - started - {"/**"}):
                print(f"[bringup] --params-file {f}: node '{node}' is not started here: its "
                      "parameters are not used", flush=True)
        specs = apply_overrides(specs, files, other_nodes=True)
        return apply_overrides(specs, [parse_overrides(getattr(self.args, "param", None) or [])])

    @staticmethod
    def load_model(params: dict):
        """The model every node loads from these parameters (their one loader,
        ``rbd_ros.ros.robot_params``)."""
        from rbd_ros.model import MOBILE_BASES
        from rbd_ros.ros.robot_params import robot_model

        model = robot_model(params).model
        if model.base_type != "fixed" and model.base_type not in MOBILE_BASES:
            raise ValueError(f"'{model.name}' has a {model.base_type} base: the bridge, the "
                             "controllers and the bringup drive fixed-base arms and mobile (planar, "
                             "diff_drive) bases")
        return model

    # ---- processes --------------------------------------------------------------------------
    def start_nodes(self) -> None:
        import os

        from rbd_ros.ros.bringup.processes import STOP_WITH_PARENT, NodeProcess

        env = {STOP_WITH_PARENT: str(os.getpid())}  # even a SIGKILL of this process stops them
        import tempfile

        from rbd_ros.ros.bringup.params import node_arguments

        # every node's parameters in a file (any URDF text or path; rbd_ros.ros.bringup.params)
        self.params_dir = tempfile.TemporaryDirectory(prefix="rbd_ros-bringup-")
        for spec in self.specs:
            self.procs.append(NodeProcess(node_arguments(spec, self.params_dir.name), env=env))
        for spec, proc in zip(self.specs, self.procs):
            proc.wait_for(f"{spec.executable}: ready", timeout=180)

    def stop_nodes(self) -> None:
        from rbd_ros.ros.dds import remove_zombie_segments

        for proc in reversed(self.procs):
            proc.stop()
        # a node that had to be killed (or crashed) leaves its Fast DDS segment in /dev/shm
        removed, freed = remove_zombie_segments()
        if removed:
            print(f"[bringup] removed {removed} Fast DDS shared-memory segment(s) of killed processes "
                  f"({freed / 1e6:.0f} MB of /dev/shm)", flush=True)
        if getattr(self, "params_dir", None) is not None:
            self.params_dir.cleanup()
        if getattr(self, "player", None) is not None:
            self.player.stop()

    # ---- ROS side ---------------------------------------------------------------------------
    def run(self) -> int:
        """The run in stages: the bag opened and the tour said, this process's ROS node, the
        nodes started and connected, the bridge paused and the tour sent, followed to its
        horizon, paused again and drained, then the report (``finish``).  Whatever happens,
        the ROS side is shut down, every node stopped and the bag closed."""

        from rbd_ros.ros.lean_executor import LeanExecutor, spin_in_thread

        record = self.open_recording()
        self.say_tour()
        node, traj_pub, path_pub = self.open_ros()
        # single-threaded: a MultiThreadedExecutor adds ~0.2 ms per callback, too much for three
        # topics at the lockstep rate (messages were lost on a loaded machine); and lean: rclpy's
        # SingleThreadedExecutor spent ~0.1 ms per message here, CPU the bridge and controller
        # need on two cores (lean_executor.py)
        executor = LeanExecutor()
        executor.add_node(node)
        spin = spin_in_thread(executor, "bringup_ros")
        try:
            self.start_nodes()
            self.wait_until_connected(node, traj_pub, path_pub)
            diag_start, t_pause, t_now = self.pause_for_tour(node)
            t_start = self.send_tour(node, traj_pub, path_pub, t_pause, t_now)
            # the bridge pauses itself at the horizon: not past it by as much as this process lags
            self.set_parameters(node, "mujoco_bridge", pause_at=t_start + self.horizon())
            self.set_paused(node, False)
            sim_end = self.follow_tour(spin, t_start, t_now)
            diag_end, rtf = self.pause_after_tour(node, diag_start, t_start, sim_end)
            self.stop_controller_and_drain(sim_end)
            return self.finish(record, t_start, sim_end, rtf, diag_start, diag_end)
        finally:
            self.shut_down(executor, node)

    def shut_down(self, executor, node) -> None:  # noqa: ANN001
        """Whatever happened: this process's ROS side shut down, every node stopped, the bag
        closed (the tour's ``run`` and the press task's)."""
        import rclpy

        executor.shutdown(timeout_sec=2.0)
        node.destroy_node()
        rclpy.shutdown()
        self.stop_nodes()
        if self.recorder:
            self.recorder.close()

    def check_executor_and_nodes(self, spin) -> None:  # noqa: ANN001
        """An error when this process's ROS executor (``spin``) stopped or a node exited (named
        with its exit status and last output lines)."""
        if not spin.is_alive():
            raise RuntimeError("the bringup's ROS executor stopped")
        if any(not p.alive() for p in self.procs):
            dead = [f"{s.name} (exit {p.proc.returncode}: {' | '.join(x.strip() for x in p.lines[-3:])})"
                    for s, p in zip(self.specs, self.procs) if not p.alive()]
            raise RuntimeError(f"node(s) {', '.join(dead)} exited during the run")

    def open_recording(self) -> Path | None:
        """With ``--record DIR``: ``DIR`` made, a bag left there by an earlier run removed and
        the bag recorder opened on the recorded topics (and a mobile base's ``/odom`` and base
        path); returns ``DIR`` (``None`` without ``--record``)."""
        record = Path(self.args.record) if self.args.record else None
        if record is not None:
            if (record / "bag").exists():
                shutil.rmtree(record / "bag")
            record.mkdir(parents=True, exist_ok=True)
            from rbd_ros.ros.bringup.recorder import BagRecorder

            recorded = dict(TOPICS)
            if self.mobile:
                recorded.update({topics.ODOM: "nav_msgs/msg/Odometry", BASE_PATH: "nav_msgs/msg/Path"}
                                if self.profile is None else
                                {topics.ODOM: "nav_msgs/msg/Odometry", CMD_VEL: "geometry_msgs/msg/TwistStamped"})
            self.recorder = BagRecorder(record / "bag", recorded)
        return record

    def say_tour(self) -> None:
        """The tour's line (not with ``--quiet``) and its notes (always)."""
        model = self.model
        self.joint_names = list(model.joint_names)
        amp = ", ".join(f"{a:.3g}" for a in self.tour.amplitude)
        if hasattr(self.tour, "summary"):  # --tour excitation
            self.say(f"[bringup] tour: {self.tour.summary()}", show=not self.args.quiet)
        else:
            self.say(f"[bringup] tour: 3 segments of {self.tour.segment_time:g} s from "
                     f"{np.round(self.tour.start, 3).tolist()}, amplitude [{amp}], "
                     + (f"above the floor z = {self.tour.floor:g} m" if self.tour.floor is not None
                        else "no floor"), show=not self.args.quiet)
        for note in self.tour.notes:  # what was moved or shrunk to fit: said even when quiet
            self.say(f"[bringup] tour: {note}")

    def open_ros(self):  # noqa: ANN201
        """This process's ROS node ``rbd_bringup``: subscribed to the states, the controller
        state, the commands, the bridge's diagnostics (and a mobile base's ``/odom``), with the
        tour's publisher (and the base path's); returns ``(node, traj_pub, path_pub)``."""
        import rclpy
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rclpy.signals import SignalHandlerOptions
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray, String
        from trajectory_msgs.msg import JointTrajectory

        from rbd_ros.ros.common import recordable_qos
        from rbd_ros.ros.dds import use_large_data_profile

        use_large_data_profile()  # this process and the nodes it starts (see rbd_ros.ros.dds)
        # signals are this process's (main): rclpy's own handler would stop the executor and
        # leave the run to fail with an executor message instead of stopping cleanly
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        node = rclpy.create_node("rbd_bringup")
        qos = recordable_qos()  # nothing lost while this process lags the lockstep loop
        self.odom_raw: list[tuple[float, bytes]] = []  # a mobile base's /odom and /joint_states
        self.state_raw: list[tuple[float, bytes]] = []
        node.create_subscription(String, topics.node_topic("mujoco_bridge", topics.DIAGNOSTICS),
                                 self.on_diagnostics, 10)
        node.create_subscription(JointState, STATES, self.on_state, qos, raw=True)
        node.create_subscription(JointState, CONTROLLER_STATE, self.on_controller_state,
                                 qos, raw=True)
        node.create_subscription(Float64MultiArray, COMMANDS, self.on_command,
                                 qos, raw=True)
        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        traj_pub = node.create_publisher(JointTrajectory, TOUR, reliable)
        self.subscribe_frames(node)
        path_pub = None
        if self.mobile:
            from nav_msgs.msg import Odometry
            from nav_msgs.msg import Path as PathMsg

            node.create_subscription(Odometry, topics.ODOM, self.on_odom, qos, raw=True)
            if self.profile is not None:  # the twists, on the simulated clock (twist_player)
                from geometry_msgs.msg import TwistStamped

                self.start_player()
                node.create_subscription(TwistStamped, CMD_VEL, self.record_twist, qos, raw=True)
            else:
                path_pub = node.create_publisher(PathMsg, BASE_PATH, reliable)
        return node, traj_pub, path_pub

    def subscribe_frames(self, node) -> None:  # noqa: ANN001
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

    def on_tf(self, msg) -> None:  # noqa: ANN001 - tf2_msgs/TFMessage
        self.tf_seen = True
        if self.recording and msg.transforms:
            stamp = msg.transforms[0].header.stamp
            t = stamp.sec + 1e-9 * stamp.nanosec
            if t <= self.record_until:
                self.recorder.write_message(topics.TF, stamp.sec * 1_000_000_000 + stamp.nanosec, msg)

    # the subscriptions' callbacks: each only stores (and records), see __init__
    def on_state(self, raw: bytes) -> None:
        stamp = header_stamp_ns(raw)
        with self.lock:
            self.last_state = (1e-9 * stamp, raw)
        # a paused lockstep bridge repeats its last state at 10 Hz: recorded once
        if (self.recording or self.collecting) and 1e-9 * stamp <= self.record_until \
                and stamp > self.last_stamp:
            self.last_stamp = stamp
            if self.recording:
                self.recorder.write(STATES, stamp, raw)
            if self.collecting:
                self.state_raw.append((1e-9 * stamp, raw))

    def start_player(self) -> None:
        """``diff_drive_velocity``: the process that plays the twist profile on ``~/cmd_vel``
        on the simulated clock from the tour's stamp (``rbd_ros.ros.bringup.twist_player``)."""
        import os

        from rbd_ros.ros.bringup.processes import STOP_WITH_PARENT, NodeProcess

        args = ["--segment-time", repr(self.profile.segment_time), "--topic", CMD_VEL,
                "--tour-topic", TOUR] + (["--planar"] if self.profile.planar else [])
        self.player = NodeProcess(args, env={STOP_WITH_PARENT: str(os.getpid())},
                                  module="rbd_ros.ros.bringup.twist_player")
        self.player.wait_for("twist_player: ready", timeout=120)

    def record_twist(self, raw: bytes) -> None:
        """A twist the player sent (stamped with its simulated time), into the bag."""
        stamp = header_stamp_ns(raw)
        if self.recording and 1e-9 * stamp <= self.record_until:
            self.recorder.write(CMD_VEL, stamp, raw)

    def on_odom(self, raw: bytes) -> None:
        stamp = header_stamp_ns(raw)
        # a paused lockstep bridge repeats its last state and odometry at 10 Hz: kept once
        if self.collecting and 1e-9 * stamp <= self.record_until and stamp > self.last_odom_stamp:
            self.last_odom_stamp = stamp
            with self.lock:
                self.odom_raw.append((1e-9 * stamp, raw))
            if self.recording:
                self.recorder.write(topics.ODOM, stamp, raw)

    def on_controller_state(self, raw: bytes) -> None:
        stamp = header_stamp_ns(raw)
        with self.lock:
            self.controller_state.append((1e-9 * stamp, raw))
        if self.recording and 1e-9 * stamp <= self.record_until:
            self.recorder.write(CONTROLLER_STATE, stamp, raw)

    def on_command(self, raw: bytes) -> None:
        self.commands_seen += 1
        if self.recording:
            with self.lock:
                t = self.last_state[0] if self.last_state else 0.0
            if t <= self.record_until:
                self.recorder.write(COMMANDS, int(t * 1e9), raw)

    def on_diagnostics(self, msg) -> None:  # noqa: ANN001 - std_msgs/String
        diag = json.loads(msg.data)
        with self.lock:
            self.diagnostics.append(diag)

    def wait_until_connected(self, node, traj_pub, path_pub) -> None:  # noqa: ANN001
        """Block until the bridge publishes states, the controller's subscriptions and
        publishers have matched this process's and it has published a controller state (one
        deadline of 60 s for all: an error if no state came)."""
        deadline = time.monotonic() + 60
        while self.last_state is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if self.last_state is None:
            raise RuntimeError("no /joint_states from the bridge within 60 s")
        # the controller's subscription to the tour and its publishers matched here, so the
        # recording is complete from the first message (on a loaded machine discovery can
        # take seconds while the lockstep loop already runs)
        while (time.monotonic() < deadline
               and (traj_pub.get_subscription_count() == 0
                    or (path_pub is not None and path_pub.get_subscription_count() == 0)
                    or node.count_publishers(COMMANDS) == 0
                    or node.count_publishers(CONTROLLER_STATE) == 0)):
            time.sleep(0.01)
        # the tour starts at a stated simulated time (the header stamp, as for ros2_control's
        # joint_trajectory_controller): the bridge pauses, the controller accepts the tour
        # stamped just ahead of the paused clock, the bridge resumes; so the tour starts at
        # exactly its stamp however far the controller had stepped the simulation while
        # this process lagged, and the report's window [t_start, sim_end] is exact
        while time.monotonic() < deadline and not self.controller_state:
            time.sleep(0.01)  # the controller receives states and acts on them
        if any(spec.name == "state_publisher" for spec in self.specs):
            # the state publisher's /tf and latched frames reached this process, so the bag holds
            # them from the tour's start (a loaded machine's discovery once outlasted a 0.8 s run)
            while time.monotonic() < deadline and not (self.tf_seen and len(self.latched) == 2):
                time.sleep(0.01)

    def pause_for_tour(self, node) -> tuple[dict, float, float]:  # noqa: ANN001
        """Pause the bridge and wait for its state at the pause and the commands sent up to
        it; returns the diagnostics at the pause, its simulated time and the latest state's."""
        diag_start = self.set_paused(node, True)
        t_pause = diag_start["sim_time"]
        self.wait_for_state_at(t_pause)
        self.wait_for_commands_until(t_pause)
        with self.lock:
            t_now = self.last_state[0]
        return diag_start, t_pause, t_now

    def send_tour(self, node, traj_pub, path_pub, t_pause: float, t_now: float) -> float:  # noqa: ANN001
        """Start recording, publish the tour (and a mobile base's figure eight) stamped just
        after the pause, record them, and wait until the controller accepted them; returns
        the tour's start ``t_start`` (s, simulated)."""
        from rbd_ros.ros.messages import set_stamp, to_joint_trajectory

        # no point at time 0: the controller starts the tour from its own reference
        # (holding the bridge's initial pose, the tour's start), so the reference never jumps
        t_start = t_pause + 0.1
        from rbd_ros.ros.bringup.excitation import rates

        waypoints, times = self.tour.waypoints, self.tour.times
        traj = to_joint_trajectory(self.joint_names, times, waypoints, *rates(self.tour, waypoints))
        set_stamp(traj.header.stamp, t_start)
        self.recording = self.recorder is not None
        if self.recorder:
            self.record_frames(t_now)
        self.collecting = self.mobile  # /odom and /joint_states kept for the base's report
        self.answers_from = len(self.law_process().lines)  # the controller's answers from here
        if self.player is not None:  # the player too takes the tour (its stamp starts the profile)
            deadline = time.monotonic() + 30
            while ((traj_pub.get_subscription_count() < 2 or node.count_publishers(CMD_VEL) < 1)
                   and time.monotonic() < deadline):
                time.sleep(0.01)
        self.tour_stamp = t_start
        traj_pub.publish(traj)
        if self.recorder:
            self.recorder.write_message(TOUR, int(t_now * 1e9),
                                        traj)
        if self.profile is not None:  # the player starts the twist profile with the tour's stamp
            self.profile.t0 = t_start
        elif path_pub is not None:  # the base's figure eight from the same stamp
            from rbd_ros.ros.bringup.mobile import base_path_message

            path = base_path_message(self.eight, t_start)
            self.path_poses = len(path.poses)
            path_pub.publish(path)
            if self.recorder:
                self.recorder.write_message(BASE_PATH, int(t_now * 1e9), path)
        self.wait_for_tour_accepted(
            others=lambda kind: node.count_publishers(TOUR if kind == "trajectory" else BASE_PATH) - 1)
        return t_start

    def horizon(self) -> float:
        """The run's simulated length from the tour's start (s): ``--duration`` or the tour's
        end plus 0.5 s."""
        return self.args.duration or float(self.tour.times[-1] + 0.5)

    def follow_tour(self, spin, t_start: float, t_now: float) -> float:  # noqa: ANN001
        """The resumed run until the simulated time reaches the horizon, with the progress
        line (not with ``--quiet``); an error when the ROS executor (``spin``) stopped, a
        node exited or the simulation stalled.  Returns the horizon's end ``sim_end`` (s)."""
        horizon = self.horizon()
        controller = self.law_process()
        wall0 = time.monotonic()
        sim0 = t_now  # simulated time when the bridge resumed
        sim_end = t_start + horizon
        # realtime: the bridge steps on until paused, states and commands after the horizon
        # stay out of the bag (set before the loop: this process sees the horizon late).
        # Lockstep: commands carry no stamp and their queue may lag the states'
        # differently, so the bag keeps every pair up to the pause (past the horizon by as
        # much as this process lagged) rather than cut the two streams apart
        if self.args.mode == "realtime":
            self.record_until = sim_end + REACHED  # (processes.within)
        tty = sys.stdout.isatty()
        last_print = 0.0
        watch = StallWatch()  # stalled = no simulated progress for STALL_SECONDS of wall
        while True:
            with self.lock:
                t_now = self.last_state[0]
            now = time.monotonic()
            if not self.args.quiet and (now - last_print >= (0.2 if tty else 2.0)):
                last_print = now
                # the factor only once there is a meaningful wall-clock interval
                rtf = (f"{(t_now - sim0) / (now - wall0):5.2f}" if now - wall0 >= 0.5
                       else "    -")
                line = (f"[bringup] t = {max(t_now - t_start, 0.0):6.2f} / {horizon:.2f} s   "
                        f"real-time factor {rtf}")
                print("\r" + line if tty else line, end="" if tty else "\n", flush=True)
            self.check_executor_and_nodes(spin)
            self.report_foreign_answers(controller)  # the tour was accepted: not its
            if t_now >= sim_end - REACHED:
                break
            if watch.stalled(t_now, now):
                raise RuntimeError(f"the simulation stalled: no simulated time passed in "
                                   f"{STALL_SECONDS:.0f} s (at t = {max(t_now - t_start, 0.0):.2f} "
                                   f"of {horizon:.2f} s)")
            time.sleep(0.05)
        if not self.args.quiet and tty:
            print(flush=True)
        return sim_end

    def pause_after_tour(self, node, diag_start: dict, t_start: float,  # noqa: ANN001
                         sim_end: float) -> tuple[dict, float]:
        """Pause the bridge at the end; returns its diagnostics then and the real-time factor
        over the reported window ``[t_start, sim_end]``."""
        diag_end = self.set_paused(node, True)  # its counters stopped at the pause
        with self.lock:
            i0 = next(i for i, d in enumerate(self.diagnostics) if d is diag_start)
            samples = [(d["wall_time"], d["sim_time"]) for d in self.diagnostics[i0:]]
        # the bridge's own clocks over exactly the reported window (this process reads
        # the states late, on a busy machine by seconds: its own clock would measure that)
        rtf = real_time_factor(samples, t_start, sim_end)
        return diag_end, rtf

    def set_parameters(self, node, target: str, **values) -> None:  # noqa: ANN001, ANN003
        """Set node ``target``'s parameters (its ``set_parameters`` service), all accepted or an
        error naming the refusals."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        req = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg()
                                                for k, v in values.items()])
        res = self.call_service(node, SetParameters, f"/{target}/set_parameters", req)
        bad = [r.reason for r in res.results if not r.successful]
        if bad:
            raise RuntimeError(f"{target} refused {sorted(values)}: {'; '.join(bad)}")

    def call_service(self, node, kind, service: str, request, timeout: float = 30.0):  # noqa: ANN001, ANN201
        """One call of ``service`` on a helper node of its own that no executor spins; the
        response, or an error when the service is absent or does not answer in ``timeout`` s."""
        import rclpy

        from rbd_ros.ros.lean_executor import call_once

        helper = rclpy.create_node("rbd_bringup_call", context=node.context,
                                   start_parameter_services=False, enable_rosout=False)
        try:
            client = helper.create_client(kind, service)
            if not client.wait_for_service(timeout_sec=timeout):
                raise RuntimeError(f"no {service} service")
            res = call_once(helper, client, request, timeout)
        finally:
            helper.destroy_node()
        if res is None:
            raise RuntimeError(f"{service}: no answer within {timeout:g} s")
        return res

    def wait_for_state_at(self, t: float, limit: float = 60.0) -> None:
        """Until this process has the bridge's state at ``t`` (s, simulated; it may lag the
        bridge), at most ``limit`` s."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and self.last_state[0] < t - 1e-9:
            time.sleep(0.01)

    def set_paused(self, node, paused: bool, timeout: float = 30.0) -> dict:
        """``/mujoco_bridge/pause`` (no more steps, or resume) and the bridge's diagnostics
        published at that moment (its ``sim_time`` and ``wall_time`` of the pause).  Called on
        a helper node of its own that no executor spins (``call_service``)."""
        from std_srvs.srv import SetBool

        with self.lock:
            seen = len(self.diagnostics)
        self.call_service(node, SetBool, topics.node_topic("mujoco_bridge", topics.PAUSE),
                          SetBool.Request(data=paused), timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                fresh = [d for d in self.diagnostics[seen:] if d["paused"] == paused]
            if fresh:
                return fresh[0]
            time.sleep(0.01)
        raise RuntimeError(f"no diagnostics from the bridge within {timeout} s of "
                           f"{'pausing' if paused else 'resuming'} it")

    def law_process(self):
        """The process that runs the control law and logs what it accepts or refuses: the
        controller node's, or composed, the bridge's."""
        name = "mujoco_bridge" if self.args.composed else "controller"
        return next(p for s, p in zip(self.specs, self.procs) if s.executable == name)

    #: the controller's answers to a reference (rbd_ros.control.loop, mobile_loop): one line each
    ANSWERS = ("trajectory accepted", "trajectory refused", "base path accepted", "base path refused",
               "target pose accepted", "target pose refused")

    def our_acceptance(self, kind: str, line: str) -> bool:
        """Whether ``line`` is the controller accepting the bringup's own ``kind`` ('trajectory':
        its point count and stamp; 'base path': its pose count)."""
        if kind == "trajectory":
            return (f"trajectory accepted: {len(self.tour.waypoints)} points," in line
                    and f"from t = {self.tour_stamp:.3f}" in line)
        return f"base path accepted: {self.path_poses} poses," in line

    def wait_for_tour_accepted(self, timeout: float = 30.0, others=None, grace: float = 3.0) -> None:  # noqa: ANN001
        """Block until the controller logged that it accepted the tour (and the base path)
        the bringup sent: only lines after sending count (``answers_from``), and an acceptance
        must carry the tour's point count and stamp.  A refusal is the tour's when nobody else
        publishes that kind (``others(kind)``: the number of other publishers) -- an error
        with the controller's reason; with other publishers it may be theirs: an error only
        when the tour's acceptance has not come ``grace`` s later, a warning when it has."""
        proc = self.law_process()
        others = others or (lambda kind: 0)
        kinds = ["trajectory"] + (["base path"] if self.eight is not None else [])
        deadline = time.monotonic() + timeout
        refused_at: dict[str, float] = {}
        while time.monotonic() < deadline:
            lines = list(proc.lines)[self.answers_from:]
            accepted = {k: any(self.our_acceptance(k, line) for line in lines) for k in kinds}
            for kind in kinds:
                refusals = [line for line in lines if f"{kind} refused" in line]
                if accepted[kind] or not refusals:
                    continue
                reason = refusals[0].split("refused:", 1)[-1].strip()
                n_others = others(kind)
                if n_others <= 0:
                    raise RuntimeError(f"the controller refused the tour: {reason}")
                refused_at.setdefault(kind, time.monotonic())
                if time.monotonic() - refused_at[kind] > grace:
                    raise RuntimeError(f"the controller refused a {kind} and has not accepted the tour's "
                                       f"within {grace:g} s ({n_others} other publisher(s) of {kind}s, so "
                                       f"the refusal may be theirs): {reason}")
            if all(accepted.values()):
                self.answers_seen = self.answers_from
                self.report_foreign_answers(proc)
                return
            if not proc.alive():
                raise RuntimeError("the controller exited before accepting the tour")
            time.sleep(0.01)
        tail = "\n".join(proc.lines[-5:])
        raise RuntimeError(f"the controller did not accept the tour within {timeout} s; its last lines:\n{tail}")

    def report_foreign_answers(self, proc) -> None:  # noqa: ANN001
        """One warning line per answer of the controller (since ``answers_seen``) to a reference
        that is not the bringup's own: another publisher's trajectory refused (the run goes
        on) or accepted (it replaced the tour: the report covers it)."""
        lines = list(proc.lines)
        for line in lines[self.answers_seen:]:
            if not any(a in line for a in self.ANSWERS):
                continue
            if any(self.our_acceptance(k, line) for k in ("trajectory", "base path")):
                continue
            what = line.split("]: ", 1)[-1].strip()
            effect = ("the run goes on with the tour" if "refused" in what
                      else "it replaced the tour, the report covers what the arm did")
            self.say(f"[bringup] warning: not the tour's: the controller logged '{what}' for a "
                     f"reference from another publisher; {effect}")
        self.answers_seen = len(lines)

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

    def stop_controller_and_drain(self, sim_end: float, quiet_for: float = 0.3,
                                  limit: float = 10.0) -> None:
        """End the run without losing what is still queued (on a busy machine one
        subscription's queue lags another's): after ``set_paused``, wait until the controller
        has answered (lockstep: every recorded state has its command and controller state;
        realtime, where missed cycles never get one: a controller state at or past
        ``sim_end`` arrived), stop the controller, then wait until nothing has arrived for
        ``quiet_for`` seconds."""
        def received() -> tuple[int, ...]:  # not /joint_states: a paused bridge repeats its state
            with self.lock:
                counts = (len(self.controller_state),)
            return counts + tuple(self.recorder.counts.values() if self.recorder else ())

        t_last = self.answer_time(sim_end)

        def answered() -> bool:
            if self.args.mode == "realtime" or self.recorder is None:
                with self.lock:
                    return bool(self.controller_state) and self.controller_state[-1][0] >= t_last - REACHED
            counts = self.recorder.counts
            return (counts[COMMANDS] >= counts[STATES] and
                    counts[CONTROLLER_STATE] >= counts[COMMANDS])

        deadline = time.monotonic() + limit
        # all delivered before the controller stops: samples still in its writer's history
        # (not yet acknowledged by this process) would die with it
        wait = 8.0
        wait_until = time.monotonic() + wait
        while not answered() and time.monotonic() < wait_until:
            time.sleep(0.02)
        if not answered():  # the report (and bag) end short of the pause: said, never silent
            with self.lock:
                latest = self.controller_state[-1][0] if self.controller_state else float("nan")
            self.say(f"[bringup] warning: the controller's answers up to the pause at t = {t_last:.3f} s "
                     f"had not all arrived {wait:g} s after it (its latest state: t = {latest:.3f} s); "
                     "the report ends with what arrived")
        for spec, proc in zip(self.specs, self.procs):
            if spec.executable == "controller":
                proc.stop()
        last, since = received(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = received()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet_for:
                break

    def answer_time(self, t_pause: float) -> float:
        """The stamp of the controller's last state when the bridge paused at ``t_pause``: that
        of the paused state (a separate controller answers it), composed one timestep earlier
        (the law runs on each state before its step, and no step follows the pause; waiting for
        ``t_pause`` there cost 10 s before the tour and 8 s after it)."""
        if not self.args.composed:
            return t_pause
        return t_pause - float(self.ready_values("mujoco_bridge").get("timestep", 0.0))

    def finish(self, record: Path | None, t_start: float, sim_end: float, rtf: float,
               diag_start: dict | None, diag_end: dict | None) -> int:
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        from rbd_ros.ros.bringup import mismatch
        from rbd_ros.ros.bringup.report import make_report, plot

        with self.lock:
            window = [c for c in self.controller_state if within(c[0], t_start, sim_end)]
        # one sample per stamp: a lockstep bridge paused at the horizon (pause_at) repeats its
        # last state at 10 Hz and the controller answers each repeat with the same stamp
        raws = [c for i, c in enumerate(window) if i == 0 or c[0] != window[i - 1][0]]
        if not raws:
            raise RuntimeError("the controller published no controller_state")
        n = len(self.joint_names)
        cs = [deserialize_message(raw, JointState) for _, raw in raws]
        t = np.array([c[0] for c in raws]) - t_start
        k = 3 if self.mobile else 0  # a mobile base's controller state: base_x, base_y, base_yaw first
        ref = np.array([c.position[k:k + n] for c in cs])
        meas = np.array([c.velocity[k:k + n] for c in cs])
        tau = np.array([c.effort[k:k + n] for c in cs])
        missed = self.missed_cycles(diag_start, diag_end, self.args.composed)
        tool = None
        if self.args.controller in ("task_pd", "resolved_acceleration"):
            from rbd_ros.sim.closed_loop import tool_errors

            tool = tool_errors(self.model, ref, meas)
        # the commands (one per cycle) against the limits the controller and the bridge
        # saturate at: the model's (the bringup gives neither an effort_limit of its own)
        report = make_report(self.joint_names, ref, meas, tau, t, rtf, missed, tool=tool,
                             effort_limit=np.abs(self.model.effort_limit),
                             prismatic=np.asarray(self.model.joint_type) == PRISMATIC)
        report.mode = f"{'composed' if self.args.composed else 'separate'}, {self.args.mode}"
        report.mismatch = self.mismatch or None
        if not self.mobile:
            report.model_comparison = mismatch.compare(self.args, self.robot_model, self.model, self.sim_model,
                                                       self.tour, self.bridge_settings, report)
        base_xy = None
        if self.mobile:
            from rbd_ros.ros.bringup.mobile import base_report

            base_ref = np.array([c.position[:3] for c in cs])
            base_meas = np.array([c.velocity[:3] for c in cs])
            if self.profile is not None:  # the velocity law: its reference integrates the twists
                # it received; how far that is from the documented profile's path (the twists'
                # delivery to the controller: late or held longer under load)
                dev = np.hypot(*(base_ref[:, :2] - self.profile.path(t + t_start, base_ref[0])[:, :2]).T)
                report.profile_path_max = float(dev.max())
                report.base_path_length = float(np.hypot(*np.diff(base_meas[:, :2], axis=0).T).sum())
                report.mode += ", twist profile on ~/cmd_vel"
            odom, wheels = self.base_samples(t_start, sim_end)
            for key, value in base_report(base_ref, base_meas, np.array([c.effort[:3] for c in cs]),
                                          odom, wheels, self.model).items():
                setattr(report, key, value)
            if self.args.base_model == "ideal":
                report.wheel_slip_max = None  # the ideal model's wheels roll by construction
            report.mode += f", base model {self.args.base_model}"
            base_xy = (base_ref[:, :2], base_meas[:, :2])
        if diag_end:
            keep = ("period_p50_us", "period_p99_us", "period_max_us", "jitter_p99_us",
                    "jitter_max_us", "overruns", "missed_steps", "steps_without_new_command",
                    "step_time_p99_us", "realtime", "composed")
            report.timing = {k: diag_end[k] for k in keep if k in diag_end}
        print(report.table(), flush=True)
        if self.args.json:
            report.to_json(self.args.json)
        if record is not None:
            report.to_json(record / "report.json")
            title = (f"{self.specs[0].parameters['urdf_path'].rsplit('/', 1)[-1]}: "
                     f"{self.args.controller}, {self.args.mode}")
            plot(record / "plot.png", self.joint_names, t, ref, meas, tau, title=title, base_xy=base_xy)
            counts = ", ".join(f"{k} {v}" for k, v in self.recorder.counts.items())
            print(f"recorded {record}/report.json, {record}/plot.png, {record}/bag ({counts})",
                  flush=True)
            from rbd_ros.ros.bringup.page import video_and_page

            meas_v, ref_v = meas, ref
            if self.mobile:  # the renderer draws the base too: its (x, y, yaw) ahead of the arm
                from rbd_ros.ros.bringup.mobile import video_states

                meas_v, ref_v = video_states(base_meas, meas, base_ref, ref)
            for line in video_and_page(record, self.model, t, meas_v, ref_v, report,
                                       self.effective_parameters(sim_end - t_start), title,
                                       video=not self.args.no_video,
                                       robot=self.specs[0].parameters,
                                       gains=self.gains_used(), run_lines=self.said):
                print(line, flush=True)
        return 0

    def effective_parameters(self, horizon: float) -> dict[str, dict]:
        """The run's parameters as they took effect, for the page: the bringup's arguments with
        their defaults filled in (robot, duration, segment time, start, floor; the bridge's
        integrator and timestep as its ready line reports them) and every node's parameters."""
        args = dict(vars(self.args))
        args["robot"] = args.get("robot") or (None if args.get("urdf") else DEFAULT_ROBOT)
        args["duration"] = round(float(horizon), 6)
        args["segment_time"] = self.tour.segment_time
        args["start"] = [round(float(x), 6) for x in self.tour.start]
        args["floor"] = self.tour.floor if self.tour.floor is not None else "none"
        bridge = self.ready_values("mujoco_bridge")
        for key in ("integrator", "timestep"):
            if args.get(key) in (None, "auto") and key in bridge:
                args[key] = bridge[key] if args.get(key) is None else f"auto: {bridge[key]}"
        args = {k: v for k, v in args.items() if v is not None}
        return {"bringup": args, **{s.name: s.parameters for s in self.specs}}

    def ready_values(self, executable: str) -> dict[str, str]:
        """``key=value`` pairs of a node's ready line (the bridge's integrator, timestep ...)."""
        import re

        for spec, proc in zip(self.specs, self.procs):
            if spec.executable == executable:
                line = next((x for x in proc.lines if f"{executable}: ready" in x), "")
                return {k: v.rstrip(" s") for k, v in re.findall(r"(\w+)=([^,;()]+)", line)}
        return {}

    def gains_used(self) -> dict[str, str]:
        """The gains the control law ran with, from its last log line that lists them
        (``gains kp=[...] (model), ...``: the node derives them at the first state)."""
        import re

        try:
            lines = list(self.law_process().lines)
        except StopIteration:
            return {}
        for line in reversed(lines):
            if "gains " in line:
                text = line.split("gains ", 1)[1].split("; ", 1)[0]
                return {k: f"{v} ({src})" for k, v, src in
                        re.findall(r"(\w+)=(\[[^\]]*\]|[^ ,]+) \((\w+)\)", text)}
        return {}

    def base_samples(self, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray | None]:
        """``/odom`` rows ``(t, v_x, v_y, omega)`` and the wheel rates ``(t, left, right)`` of
        ``/joint_states`` (diff drive) within ``[t0, t1]``."""
        from nav_msgs.msg import Odometry
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        with self.lock:
            odom_raw = [r for r in self.odom_raw if within(r[0], t0, t1)]
            state_raw = [r for r in self.state_raw if within(r[0], t0, t1)]
        rows = []
        for ts, raw in odom_raw:
            tw = deserialize_message(raw, Odometry).twist.twist
            rows.append((ts, tw.linear.x, tw.linear.y, tw.angular.z))
        odom = np.array(sorted(rows)) if rows else np.zeros((0, 4))
        wheels = None
        names = list(self.model.wheel_joints)
        if names and state_raw:
            out = []
            for ts, raw in state_raw:
                js = deserialize_message(raw, JointState)
                idx = [list(js.name).index(w) for w in names]
                out.append((ts, js.velocity[idx[0]], js.velocity[idx[1]]))
            wheels = np.array(out)
        return odom, wheels

    @staticmethod
    def missed_cycles(diag_start: dict | None, last: dict | None, composed: bool = False) -> int:
        """Bridge steps taken without a fresh command from the controller between two
        diagnostics messages (``steps_without_new_command``): from before the tour to its end.
        Composed, where every step computes its command: the steps the loop started more than
        one period late (``missed_steps``)."""
        if last is None:
            return 0
        key = "missed_steps" if composed else "steps_without_new_command"
        first = diag_start[key] if diag_start else 0
        return int(last[key]) - int(first)


class Interrupted(KeyboardInterrupt):
    """A termination signal (SIGTERM, SIGHUP, SIGQUIT) raised in the main thread, so the run
    unwinds like Ctrl-C: the nodes stopped, the bag closed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signals() -> None:
    """Every termination signal (Ctrl-C included) becomes an exception in the main thread;
    once one arrived, later ones are ignored so the clean-up (stopping every node, closing
    the bag) runs to its end.  The nodes run in sessions of their own, so closing the
    terminal (SIGHUP) reaches only this process: it must stop them."""
    import signal

    def handler(signum: int, _frame) -> None:  # noqa: ANN001
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_IGN)
        raise KeyboardInterrupt if signum == signal.SIGINT else Interrupted(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    import signal

    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    if threading.current_thread() is threading.main_thread():
        _on_signals()
    try:
        if args.record:
            check_record_dir(Path(args.record))
        if args.json:
            check_json_file(Path(args.json))
        if getattr(args, "task", "tour") == "press":
            from rbd_ros.ros.bringup.press import check_press_law
            from rbd_ros.ros.bringup.press_nodes import PressTask

            check_press_law(args.controller)
            check_timestep(args.timestep)
            press = type("PressRun", (PressTask, Bringup), {"recorded_topics": TOPICS})
            return press(args).run()
        return Bringup(args).run()
    except (ValueError, RuntimeError, OSError) as exc:  # TimeoutError, FileExistsError ...
        print(f"\nrbd-ros bringup: error: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        kept = f"; the bag in {args.record}/bag keeps what was recorded" if args.record else ""
        print(f"\nrbd-ros bringup: interrupted ({signal.Signals(signum).name}): every node "
              f"stopped{kept}", file=sys.stderr, flush=True)
        return 128 + signum


if __name__ == "__main__":
    sys.exit(main())
