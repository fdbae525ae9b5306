"""The tour run's report from what the runner received (``finish``): tracking errors, torques,
saturation, timing and the mismatch comparison (``report.make_report``, ``mismatch.compare``),
a mobile base's (``mobile.base_report``), printed, written (``--json``, ``--record``: report.json,
plot.png, the video and the page) -- and the run's effective parameters for the page."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rbd_ros.model import PRISMATIC
from rbd_ros.ros.bringup.inbox import CONTROLLER_STATE, STATES
from rbd_ros.ros.bringup.mobile import base_report, video_states
from rbd_ros.ros.bringup.page import video_and_page
from rbd_ros.ros.bringup.processes import within
from rbd_ros.ros.bringup.report import make_report, missed_cycles, plot
from rbd_ros.sim.closed_loop import tool_errors
from rbd_ros.util.resources import DEFAULT_ROBOT


def finish(task: Any, runner: Any, record: Path | None, t_start: float, sim_end: float, rtf: float,
           diag_start: dict | None, diag_end: dict | None) -> int:
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    from rbd_ros.ros.bringup import mismatch  # lazy: the model comparison (0.4 s of import)

    with runner.lock:
        window = [c for c in runner.controller_state if within(c[0], t_start, sim_end)]
    # one sample per stamp: a lockstep bridge paused at the horizon (pause_at) repeats its
    # last state at 10 Hz and the controller answers each repeat with the same stamp
    raws = [c for i, c in enumerate(window) if i == 0 or c[0] != window[i - 1][0]]
    if not raws:
        raise RuntimeError("the controller published no controller_state")
    n = len(runner.joint_names)
    cs = [deserialize_message(raw, JointState) for _, raw in raws]
    t = np.array([c[0] for c in raws]) - t_start
    k = 3 if runner.mobile else 0  # a mobile base's controller state: base_x, base_y, base_yaw first
    ref = np.array([c.position[k:k + n] for c in cs])
    meas = np.array([c.velocity[k:k + n] for c in cs])
    tau = np.array([c.effort[k:k + n] for c in cs])
    position = getattr(runner.args, "command_interface", "effort") == "position"
    if position:  # the controller commanded positions: the torques are the drives' (issue 43)
        tau = drive_efforts(runner, [c[0] for c in raws], runner.joint_names)
    missed = missed_cycles(diag_start, diag_end, runner.args.composed)
    tool = None
    if runner.args.controller in ("task_pd", "resolved_acceleration"):
        tool = tool_errors(runner.model, ref, meas)
    # the commands (one per cycle) against the limits the controller and the bridge
    # saturate at: the model's (the bringup gives neither an effort_limit of its own)
    report = make_report(runner.joint_names, ref, meas, tau, t, rtf, missed, tool=tool,
                         effort_limit=np.abs(runner.model.effort_limit),
                         prismatic=np.asarray(runner.model.joint_type) == PRISMATIC)
    report.mode = f"{'composed' if runner.args.composed else 'separate'}, {runner.args.mode}"
    if position:
        report.mode += (", position interface: the controller sent the reference positions on "
                        "/position_controller/commands; the torques are the bridge's drives' "
                        "(the effort on /joint_states)")
    report.mismatch = runner.plan.mismatch or None
    retimed = getattr(task, "retimed", lambda: None)() is not None
    compared: str = getattr(runner.args, "model", "")  # --model: a comparison run
    if retimed and compared:  # the comparison simulates the planned timing
        runner.say("[bringup] model comparison skipped: the controller retimed the tour, and the "
                   "comparison simulates its planned timing")
    if not runner.mobile and not retimed:
        plan = runner.plan
        report.model_comparison = mismatch.compare(runner.args, plan.robot_model, runner.model, plan.sim_model,
                                                   task.tour, plan.bridge_settings, report)
    base_xy = None
    if runner.mobile:
        base_ref = np.array([c.position[:3] for c in cs])
        base_meas = np.array([c.velocity[:3] for c in cs])
        if task.profile is not None:  # the velocity law: its reference integrates the twists
            # it received; how far that is from the documented profile's path (the twists'
            # delivery to the controller: late or held longer under load)
            dev = np.hypot(*(base_ref[:, :2] - task.profile.path(t + t_start, base_ref[0])[:, :2]).T)
            report.profile_path_max = float(dev.max())
            report.base_path_length = float(np.hypot(*np.diff(base_meas[:, :2], axis=0).T).sum())
            report.mode += ", twist profile on ~/cmd_vel"
        odom, wheels = base_samples(runner, t_start, sim_end)
        for key, value in base_report(base_ref, base_meas, np.array([c.effort[:3] for c in cs]),
                                      odom, wheels, runner.model).items():
            setattr(report, key, value)
        if runner.args.base_model == "ideal":
            report.wheel_slip_max = None  # the ideal model's wheels roll by construction
        report.mode += f", base model {runner.args.base_model}"
        base_xy = (base_ref[:, :2], base_meas[:, :2])
    if diag_end:
        keep = ("period_p50_us", "period_p99_us", "period_max_us", "jitter_p99_us",
                "jitter_max_us", "overruns", "missed_steps", "steps_without_new_command",
                "step_time_p99_us", "realtime", "composed")
        report.timing = {k: diag_end[k] for k in keep if k in diag_end}
    # what ran (issue 38): the robot, the law, its gains, every effective parameter, and
    # how many recorded samples their stamps say were lost
    law = "position (reference pass-through)" if position else runner.args.controller
    report.robot, report.law = runner.model.name, law
    report.gains = runner.gains_used()
    report.parameters = effective_parameters(runner, sim_end - t_start)
    if runner.recorder is not None:
        report.recording = runner.recorder.losses({STATES: None, CONTROLLER_STATE: None,
                                                     **runner.ft.recorded()})
    print(report.table(), flush=True)
    if runner.args.json:
        report.to_json(runner.args.json)
    if record is not None:
        report.to_json(record / "report.json")
        title = f"{runner.model.name}: {law}, {runner.args.mode}"
        plot(record / "plot.png", runner.joint_names, t, ref, meas, tau, title=title, base_xy=base_xy)
        counts = ", ".join(f"{k} {v}" for k, v in runner.recorder.counts.items())
        print(f"recorded {record}/report.json, {record}/plot.png, {record}/bag ({counts})",
              flush=True)
        meas_v, ref_v = meas, ref
        if runner.mobile:  # the renderer draws the base too: its (x, y, yaw) ahead of the arm
            meas_v, ref_v = video_states(base_meas, meas, base_ref, ref)
        for line in video_and_page(record, runner.model, t, meas_v, ref_v, report,
                                   effective_parameters(runner, sim_end - t_start), title,
                                   video=not runner.args.no_video,
                                   robot=runner.specs[0].parameters,
                                   gains=runner.gains_used(), run_lines=runner.said):
            print(line, flush=True)
    return 0

def effective_parameters(runner: Any, horizon: float) -> dict[str, dict]:
    """The run's parameters as they took effect, for the page: the bringup's arguments with
    their defaults filled in (robot, duration, segment time, start, floor; the bridge's
    integrator and timestep as its ready line reports them) and every node's parameters."""
    args = dict(vars(runner.args))
    args["robot"] = args.get("robot") or (None if args.get("urdf") else DEFAULT_ROBOT)
    args["duration"] = round(float(horizon), 6)
    args["segment_time"] = runner.plan.tour.segment_time
    args["start"] = [round(float(x), 6) for x in runner.plan.tour.start]
    args["floor"] = runner.plan.tour.floor if runner.plan.tour.floor is not None else "none"
    task = getattr(runner.plan, "task", None)
    if task is not None and hasattr(task, "timing"):  # issue 37: the controller's planner may retime the tour
        args["tour_timing"] = task.timing()
    bridge = runner.ready_values("mujoco_bridge")
    for key in ("integrator", "timestep"):
        if args.get(key) in (None, "auto") and key in bridge:
            args[key] = bridge[key] if args.get(key) is None else f"auto: {bridge[key]}"
    args = {k: v for k, v in args.items() if v is not None}
    return {"bringup": args, **{s.name: s.parameters for s in runner.specs}}

def drive_efforts(runner: Any, stamps: list[float], names: list[str]) -> np.ndarray:
    """The efforts on ``/joint_states`` (``names`` order) stamped ``stamps`` (s; NaN where no
    state of that stamp was kept): a position arm's drive torques."""
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    with runner.lock:
        by_stamp = {round(ts * 1e9): raw for ts, raw in runner.state_raw}
    out = np.full((len(stamps), len(names)), np.nan)
    for k, ts in enumerate(stamps):
        raw = by_stamp.get(round(ts * 1e9))
        if raw is not None:
            js = deserialize_message(raw, JointState)
            out[k] = np.asarray(js.effort)[[list(js.name).index(j) for j in names]]
    return out


def base_samples(runner: Any, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray | None]:
    """``/odom`` rows ``(t, v_x, v_y, omega)`` and the wheel rates ``(t, left, right)`` of
    ``/joint_states`` (diff drive) within ``[t0, t1]``."""
    from nav_msgs.msg import Odometry
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    with runner.lock:
        odom_raw = [r for r in runner.odom_raw if within(r[0], t0, t1)]
        state_raw = [r for r in runner.state_raw if within(r[0], t0, t1)]
    rows = []
    for ts, raw in odom_raw:
        tw = deserialize_message(raw, Odometry).twist.twist
        rows.append((ts, tw.linear.x, tw.linear.y, tw.angular.z))
    odom = np.array(sorted(rows)) if rows else np.zeros((0, 4))
    wheels = None
    names = list(runner.model.wheel_joints)
    if names and state_raw:
        out = []
        for ts, raw in state_raw:
            js = deserialize_message(raw, JointState)
            idx = [list(js.name).index(w) for w in names]
            out.append((ts, js.velocity[idx[0]], js.velocity[idx[1]]))
        wheels = np.array(out)
    return odom, wheels
