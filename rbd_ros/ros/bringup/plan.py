"""A bringup run as a plan, ROS-free: ``build_plan(args)`` loads the robot once, plans the tour
(or the press task: ``press_nodes.press_plan``) and describes the nodes with their parameters;
``rbd_ros.ros.bringup.runner.Runner`` then starts and supervises them over ROS and runs the
plan's task (``RunPlan.task``: ``tour_task.TourTask``, ``ExcitationTask``, ``MobileTourTask``,
``press_nodes.PressTask``, ``identify_loop.IdentifyLoopTask``).  Nothing here imports rclpy: a
test builds and inspects a plan without ROS.

The robot is loaded once per process (``load_robot``: ``rbd_ros.ros.robot_params.robot_model``,
the loader every node uses) and its URDF converted at most once: the conversion the model came
from (``LoadedRobot.conversion``) lends the tour's guard points, a bundled robot's URDF is
converted once for them (``guard_points``)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rbd_ros.control.mobile_laws import MOBILE_LAWS
from rbd_ros.control.tour import plan_mobile_tour, plan_tour
from rbd_ros.control.twist_profile import TwistProfile
from rbd_ros.model import MOBILE_BASES
from rbd_ros.robot import Robot
from rbd_ros.ros.bringup import excitation, identify_loop, mismatch, tour_task
from rbd_ros.ros.bringup.args import check_timestep, parse_floor
from rbd_ros.ros.bringup.description import describe, named_poses, robot_parameters
from rbd_ros.ros.bringup.params import apply_overrides, load_params_file, parse_overrides
from rbd_ros.ros.robot_params import robot_model
from rbd_ros.urdf import load_conversion
from rbd_ros.util.resources import DEFAULT_ROBOT


@dataclass
class RunPlan:
    """What a run does, decided before any node starts: the arguments, the robot as loaded
    (``robot``: ``LoadedRobot``; ``robot_model`` its model, ``model`` the controller's,
    ``sim_model`` a mismatched simulated arm or None, ``mismatch`` the lines saying how), the
    nodes (``specs``: ``description.NodeSpec`` with their parameters; ``bridge_settings`` the
    bridge's as planned, for the model comparison) and the task (``task``: its tour or
    phases, how it runs and reports)."""

    args: argparse.Namespace
    robot: Any  # rbd_ros.ros.robot_params.LoadedRobot
    model: Any
    robot_model: Any
    sim_model: Any
    mismatch: list[str]
    mobile: bool
    specs: list
    bridge_settings: dict[str, Any]
    task: Any = None
    said: list[str] = field(default_factory=list)  # the run's own lines, for the page too

    @property
    def tour(self):
        """The task's tour (the press task: ``press_nodes.NoTour``)."""
        return self.task.tour

    def say(self, line: str, show: bool = True) -> None:
        """Print one of the run's lines (``show``) and keep it for the page."""
        self.said.append(line)
        if show:
            print(line, flush=True)


def robot_params_of(args: argparse.Namespace) -> dict[str, Any]:
    """The robot parameters every node gets from the arguments (``description.robot_parameters``)."""
    return robot_parameters(args.robot or DEFAULT_ROBOT, args.urdf, args.base_link, args.tip_link, args.base)


def load_robot(params: dict):
    """The robot every node loads from these parameters (their one loader,
    ``rbd_ros.ros.robot_params``), as a ``LoadedRobot``: loaded once, handed down."""
    loaded = robot_model(params)
    model = loaded.model
    if model.base_type != "fixed" and model.base_type not in MOBILE_BASES:
        raise ValueError(f"'{model.name}' has a {model.base_type} base: the bridge, the "
                         "controllers and the bringup drive fixed-base arms and mobile (planar, "
                         "diff_drive) bases")
    return loaded


def build_plan(args: argparse.Namespace) -> RunPlan:
    """The tour run's plan (the module docstring): checked before anything starts, inside the
    limits and the effort limits (or refused)."""
    check_timestep(args.timestep)
    loaded = load_robot(robot_params_of(args))
    robot = loaded.model
    mismatch.check(args)  # issue 31: the controller's model and the simulated arm
    identify = getattr(args, "task", "tour") == "identify"
    if identify:  # issue 44: the identification loop (its checks; the excitation as its tour)
        identify_loop.check(args)
    model = mismatch.control_model(args, robot)
    sim_model, lines = mismatch.simulated_model(args, robot, model)
    mobile = model.base_type in MOBILE_BASES
    if mobile != (args.controller in MOBILE_LAWS):
        raise ValueError(f"'{model.name}' has a {model.base_type} base: use --controller "
                         + (" or ".join(MOBILE_LAWS) if mobile else "with an arm law (not "
                            f"{args.controller}, which drives a mobile base)"))
    interface = getattr(args, "command_interface", "effort")
    if interface != "effort" and (mobile or args.composed or getattr(args, "task", "tour") != "tour"):
        raise ValueError(f"--command-interface {interface} runs a fixed-base arm's tour with a "
                         "separate controller (not --composed, a mobile base or --task "
                         f"{getattr(args, 'task', 'tour')})")
    profile = None  # diff_drive_velocity: the twist profile sent on ~/cmd_vel
    eight = None
    bridge: dict = {}
    controller: dict = {}
    if interface != "effort":  # issue 43: the bridge's drives and a position-interface controller
        bridge["command_interface"] = [interface]
        controller["command_interface"] = interface
    floor = parse_floor(getattr(args, "floor", "auto"))
    urdf_path = robot_parameters(args.robot or DEFAULT_ROBOT, args.urdf)["urdf_path"]
    points = guard_points(args, model, loaded, urdf_path) if not mobile else ()
    if mobile:
        def planner(q_start=None):
            return plan_mobile_tour(model, q_start, segment_time=args.segment_time or 4.0, floor=floor)
    else:
        def planner(q_start=None):
            return plan_tour(model, q_start, segment_time=args.segment_time or 2.0,
                             floor=floor, points=points)
    given = getattr(args, "start", None)
    if given:
        tour = planner(start_from(args, model, mobile, given, planner))
    else:
        tour = planner()
    task: tour_task.TourTask
    if mobile:
        if getattr(args, "tour", "demo") == "excitation":
            raise ValueError("--tour excitation identifies fixed-base arms; a mobile base runs the demo tour")
        tour, eight = tour
        if args.controller == "diff_drive_velocity":  # a twist profile instead of the eight
            eight = None
            profile = TwistProfile(tour.segment_time, model.base_type == "planar")
            tour.notes[:] = [n for n in tour.notes if not n.startswith("base: figure eight")]
            tour.notes.append(f"base: twist profile on ~/cmd_vel, 3 segments of "
                              f"{tour.segment_time:g} s (rbd_ros.control.twist_profile)")
        base = [0.0] * (2 if model.base_type == "diff_drive" else 3)
        bridge["base_model"] = args.base_model
        controller["model_actuators"] = args.base_model != "ideal"  # the ideal base has no drives
        task = tour_task.MobileTourTask(tour, eight, profile)
    else:

        tour = excitation.plan(args, model, tour, points)  # --tour excitation
        base = []
        task = (identify_loop.IdentifyLoopTask if identify else
                tour_task.ExcitationTask if hasattr(tour, "summary") else tour_task.TourTask)(tour)
    bridge["initial_positions"] = base + [float(x) for x in tour.start]
    if args.integrator:
        bridge["integrator"] = args.integrator
    if args.timestep is not None:
        bridge["timestep"] = float(args.timestep)
        controller["rate"] = 1.0 / float(args.timestep)
    bridge.update(mismatch.node_parameters(args, sim_model, args.record)[0])
    bridge_settings = bridge
    if getattr(args, "scene", ""):
        bridge["scene"] = args.scene
    specs = node_specs(args, bridge, controller)
    mismatch.apply(specs, args)
    plan = RunPlan(args, loaded, model, robot, sim_model, lines, mobile, specs, bridge_settings, task)
    for line in lines:
        plan.say(f"[bringup] {line}")
    return plan


def node_specs(args: argparse.Namespace, bridge: dict, controller: dict) -> list:
    """The nodes of ``description.describe`` for these arguments, with the user's parameters
    merged in (``user_parameters``)."""
    specs = describe(robot=args.robot or DEFAULT_ROBOT, urdf=args.urdf,
                     base_link=args.base_link, tip_link=args.tip_link,
                     base=args.base, controller=args.controller, mode=args.mode, bridge=bridge,
                     controller_parameters=controller, composed=args.composed,
                     rt_priority=args.rt_priority, services=not args.no_services)
    return user_parameters(args, specs)


def start_from(args: argparse.Namespace, model: Any, mobile: bool, pairs: list[str],
               planner) -> np.ndarray:
    """``--start`` over the default start (the planned one; zero clipped into the limits
    where none fits): ``JOINT=VALUE`` pairs, each joint once, a finite number each, and
    at most one named pose of the robot (its SRDF's ``group_state``, ``named_poses``; its
    joints outside the arm's chain are ignored), which the pairs override."""
    names = list(model.joint_names)
    values: dict[str, float] = {}
    pose: dict[str, float] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep:
            params = robot_parameters(args.robot or DEFAULT_ROBOT, args.urdf)
            poses = named_poses(params["urdf_path"])
            if name not in poses:
                known = (f"its named poses are {', '.join(poses)}" if poses else
                         "it has no named poses (no group_state in an SRDF beside its URDF)")
                raise ValueError(f"--start {pair}: not JOINT=VALUE, nor a named pose of "
                                 f"'{model.name}': {known}")
            if pose:
                raise ValueError(f"--start: one named pose at most, got a second: '{name}'")
            pose = {j: v for j, v in poses[name].items() if j in names}
            if not pose:
                raise ValueError(f"--start {pair}: the named pose sets none of the arm's joints "
                                 f"({', '.join(names)})")
            continue
        if name not in names:
            raise ValueError(f"--start: '{model.name}' has no joint '{name}'; its joints "
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
    q = np.clip(np.zeros(model.dof), model.lower, model.upper)
    if len(given) < len(names):  # the rest from the default start
        try:
            planned = planner()
            q = np.array((planned[0] if mobile else planned).start, dtype=float)
        except ValueError:
            pass
    for name, value in given.items():
        q[names.index(name)] = value
    return q


def guard_points(args: argparse.Namespace, model: Any, loaded: Any,
                 urdf_path: str) -> list[tuple[str, int, np.ndarray]]:
    """The URDF's link origins (``(link, MDH frame, offset)``), kept above the floor with
    the MDH frame origins and the tool: of a ``--urdf`` arm (the conversion its model came
    from, ``loaded.conversion``), or of a bundled robot's URDF where its kinematics are the
    model file's (frames equal to 1e-9 m at random poses)."""
    try:
        conv = loaded.conversion if getattr(loaded, "conversion", None) is not None else \
            load_conversion(urdf_path, args.base_link or None, args.tip_link or None)
    except Exception:  # noqa: BLE001 - the bundled URDF only lends points; the model loaded
        return []
    if not args.urdf:
        m, robot = model, Robot(model)
        if conv.model.dof != m.dof or conv.model.joint_names != m.joint_names:
            return []
        rng = np.random.default_rng(0)
        lo, hi = np.clip(m.lower, -np.pi, np.pi), np.clip(m.upper, -np.pi, np.pi)
        for q in (lo + rng.random(m.dof) * (hi - lo) for _ in range(5)):
            if np.abs(conv.frames(q) - robot.link_poses(q)).max() > 1e-9:
                return []
    return [(name, i, off[:3, 3]) for name, (i, off) in conv.link_offsets.items()]


def user_parameters(args: argparse.Namespace, specs: list) -> list:
    """The nodes' parameters with the user's ``--params-file`` files and ``-p`` items
    merged in (``rbd_ros.ros.bringup.params``: checked against the schemas first)."""
    files = [load_params_file(f) for f in getattr(args, "params_file", None) or []]
    started = {s.name for s in specs} | {"controller"}  # composed: the law's, to the bridge
    for f, values in zip(args.params_file or [], files):
        for node in sorted(set(values) - started - {"/**"}):
            print(f"[bringup] --params-file {f}: node '{node}' is not started here: its "
                  "parameters are not used", flush=True)
    specs = apply_overrides(specs, files, other_nodes=True)
    return apply_overrides(specs, [parse_overrides(getattr(args, "param", None) or [])])
