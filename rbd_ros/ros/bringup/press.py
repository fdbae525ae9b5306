"""``rbd-ros bringup --task press``: the contact task of issue 30, its report, plot and page.

    rbd-ros bringup (--robot NAME | --urdf PATH) --task press [--scene FILE] [--force N]
                    --controller impedance|hybrid_force_position|admittance [--composed]
                    [--record DIR [--no-video]] [--json FILE] [--integrator ...] [--timestep S]

Places the scene (default the bundled table) where the arm reaches it from above with room to
slide (``rbd_ros.sim.contact_site``; a scene file that fixes its poses is refused: the task
needs the site), approaches, presses ``--force`` N, slides 0.1 m along the surface holding
it, and retreats, through the nodes (the bridge with the scene, the controller or the law
composed into the bridge; ``press_nodes.PressTask``: the references, the phases).  For
``impedance`` the reference goes ``--force / K_n`` into the surface, ``K_n = force / 0.04 m``
along the normal.  ``rbd_ros.sim.contact_task.run_press`` runs the same task in one process
without ROS, measured against MuJoCo's own contact forces.

The report (terminal; ``--json FILE``; ``--record DIR``: ``report.json``, ``plot.png`` of the
normal force and the position error along the free axes, the bag ``bag/`` with
``/ft_sensor/wrench``, ``/ft_sensor/wrench_raw``, the references and the tour run's topics,
``video.mp4`` with the table drawn, ``index.html``): force error RMS and max over the slide,
the impact peak (largest force before the slide over the set force), the cycles without
contact during the slide, the position error along the surface.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from rbd_ros.control.press_gains import PRESS_LAWS
from rbd_ros.ros.bringup.inbox import CONTROLLER_STATE, STATES
from rbd_ros.ros.bringup.page import write_press_page
from rbd_ros.ros.bringup.processes import within
from rbd_ros.ros.bringup.report import missed_cycles, recording_lines

#: the phases (m, s; ``press_nodes``' docstring): the probe's start above the surface, settle,
#: approach, press, slide and retreat times
APPROACH, SETTLE, APPROACH_TIME, PRESS_TIME, SLIDE_TIME, RETREAT_TIME = 0.08, 0.3, 1.5, 0.7, 3.0, 1.1
LOST_FRACTION = 0.01  # a slide cycle with f_n under this fraction of the force: contact lost


def check_press_law(law: str) -> None:
    if law not in PRESS_LAWS:
        raise ValueError(f"--task press needs a force law: --controller {' | '.join(PRESS_LAWS)} "
                         f"(not {law})")


def report_lines(rep: dict[str, Any]) -> list[str]:
    f = rep["force_N"]
    lines = [
        f"  force error over the slide: RMS {rep['force_error_rms_N']:.3f} N "
        f"({100 * rep['force_error_rms_N'] / f:.1f} %), max {rep['force_error_max_N']:.3f} N",
        f"  impact peak: {rep['impact_peak_ratio']:.2f} x the set force",
        f"  contact lost during the slide: {rep['contact_lost_cycles']} cycles",
        f"  position error along the surface: RMS {1e3 * rep['position_error_rms_m']:.2f} mm, "
        f"max {1e3 * rep['position_error_max_m']:.2f} mm",
    ]
    if "sensor_vs_mujoco_rms_N" in rep:  # in process: MuJoCo's contact force is at hand
        lines.append(f"  F/T sensor vs MuJoCo's contact force: {rep['sensor_vs_mujoco_rms_N']:.3g} N "
                     f"RMS; joint-torque estimate: {rep['estimate_vs_mujoco_rms_N']:.3g} N RMS")
    if "unstable_steps" in rep:
        lines.append(f"  unstable steps: {rep['unstable_steps']}")
    if "missed_cycles" in rep:
        lines.append(f"  {rep['mode']}: missed cycles {rep['missed_cycles']}; forces from {rep['source']}")
    return lines


def plot(r: Any, path: Path) -> None:
    """The normal forces and the free-axis position error over time, phases marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = r.series
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    if "f_sensor" in s:  # in process: MuJoCo's own contact force beside the readings
        a.plot(s["t"], s["f_n"], label="MuJoCo contact force", lw=1.2)
        a.plot(s["t"], s["f_sensor"], "--", label="F/T sensor (compensated)", lw=0.9)
        a.plot(s["t"], s["f_estimate"], ":", label="from joint torques", lw=0.9)
    else:
        a.plot(s["t"], s["f_n"], label="/ft_sensor/wrench (compensated)", lw=1.0)
    a.axhline(r.force, color="k", lw=0.6)
    a.set_ylabel("normal force, N")
    a.legend(loc="upper left", fontsize=8)
    b.plot(s["t"], 1e3 * s["e_free"], lw=1.0)
    b.set_ylabel("error along the surface, mm")
    b.set_xlabel("t, s")
    for ax in (a, b):
        for name, t in r.phases.items():
            ax.axvline(t, color="grey", lw=0.5)
            if ax is a:
                ax.text(t, ax.get_ylim()[1], name, fontsize=7, va="top")
    fig.suptitle(f"press task: {r.robot}, {r.law}, {r.force:g} N")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)



def press_video_and_page(record: Path, run: Any, t0: float, t1: float, report: dict[str, Any],
                         lines: list[str], title: str) -> list[str]:
    """The run's video (the arm at its measured states, the scene drawn) and ``index.html``:
    the press lines, the video, the plot, the parameters; returns the lines to print."""
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    from rbd_ros.sim.render import Recording, render_recording  # lazy: the renderer (0.3 s of import)

    with run.lock:
        cs = [c for c in run.controller_state if within(c[0], t0, t1)]
    t = np.array([c[0] for c in cs]) - t0
    q = np.array([deserialize_message(raw, JointState).velocity for _, raw in cs])
    out: list[str] = []
    for stale in ("video.mp4", "preview.gif"):
        (record / stale).unlink(missing_ok=True)
    robot = run.specs[0].parameters
    run.model.to_yaml(str(record / "model.yaml"))
    Recording(t, q, None, urdf=str(robot.get("urdf_path", "")), base_link=str(robot.get("base_link", "")),
              tip_link=str(robot.get("tip_link", "")), scene=run.args.scene or "table"
              ).save(record / "recording.npz")
    if run.args.no_video:
        note = "no video (--no-video)"
    else:
        result = render_recording(record, caption=title)
        note = result.message if result.ok else f"rbd-ros bringup: {result.message}"
        out.append(note)
    params = {"bringup": {k: v for k, v in vars(run.args).items() if v not in (None, "", [])},
              **{s.name: s.parameters for s in run.specs}}
    page = write_press_page(record, lines, params, title, note, run.said)
    out.append(f"page {page}")
    return out


# ---- the report of the run through the nodes (press_nodes.PressTask) ------------------------
def series(task: Any, t0: float, t1: float) -> dict[str, np.ndarray]:
    """Per F/T sample in ``[t0, t1]``: time, the normal force (world axes by the measured
    pose's kinematics) and the probe's error along the surface against the slide's plan."""
    from geometry_msgs.msg import WrenchStamped
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    from rbd_ros.robot import Robot  # lazy: the robot front (0.3 s of import)

    with task.runner.lock:
        cs = [c for c in task.runner.controller_state if within(c[0], t0 - 0.01, t1)]
        ft = sorted((c for c in task.ft_raw if within(c[0], t0, t1)), key=lambda c: c[0])
    tq = np.array([c[0] for c in cs])
    qs = np.array([deserialize_message(raw, JointState).velocity for _, raw in cs])
    robot, site, n = Robot(task.probe), task.site, task.site.normal
    t3 = task.phases["slide"]
    rows = []
    for ts, raw in ft:
        w = deserialize_message(raw, WrenchStamped).wrench.force
        k = min(int(np.searchsorted(tq, ts - 1e-7)), len(tq) - 1)
        T = robot.fk(qs[k])
        f = T[:3, :3] @ np.array([w.x, w.y, w.z])
        x = min(max((ts - t3) / SLIDE_TIME, 0.0), 1.0) if ts >= t3 else 0.0
        sig = x**3 * (10 - 15 * x + 6 * x * x)
        e = site.tool_pose(sig * site.length)[:3, 3] - T[:3, 3]
        rows.append((ts, -(n @ f), np.linalg.norm(e - (e @ n) * n)))
    arr = np.array(rows).reshape(-1, 3)
    return {"t": arr[:, 0], "f_n": arr[:, 1], "e_free": arr[:, 2]}

def press_report(task: Any, s: dict[str, np.ndarray], sim_end: float) -> dict[str, Any]:
    F, p = float(task.args.force), task.phases
    t = s["t"]
    # the slide's planned time (a phase may run on past it: the pause comes when this
    # process sees the time, late when the bridge runs fast, composed)
    t3 = p["slide"]
    t4 = min(p["retreat"], t3 + SLIDE_TIME)
    span = t4 - t3
    mid = (t >= t3 + 0.1 * span) & (t < t4 - 0.1 * span)
    whole = (t >= t3) & (t < t4)
    if not mid.any():
        raise RuntimeError("no F/T readings arrived over the slide")
    err = s["f_n"][mid] - F
    before = t < t3
    return {"law": task.args.controller, "robot": task.model.name, "force_N": F,
            "force_error_rms_N": float(np.sqrt(np.mean(err**2))),
            "force_error_max_N": float(np.abs(err).max()),
            "impact_peak_ratio": float(s["f_n"][before].max() / F) if before.any() else 0.0,
            "contact_lost_cycles": int(np.sum(s["f_n"][whole] < LOST_FRACTION * F)),
            "slide_cycles": int(whole.sum()),
            "position_error_rms_m": float(np.sqrt(np.mean(s["e_free"][mid] ** 2))),
            "position_error_max_m": float(s["e_free"][mid].max()),
            "phases_s": {k: round(v - p["settle"], 6) for k, v in p.items()},
            "mode": f"{'composed' if task.args.composed else 'separate'}, {task.args.mode}",
            "source": "/ft_sensor/wrench and /controller/controller_state"}

def finish_press(task: Any, record: Any, t_start: float, sim_end: float, diag_start: dict,
                 diag_end: dict) -> int:


    s = series(task, t_start, sim_end)
    report = press_report(task, s, sim_end)
    report["missed_cycles"] = missed_cycles(diag_start, diag_end, task.args.composed)
    lines = report_lines(report)
    if task.runner.recorder is not None:  # what the stamps say the bag lost (report.recording_lines)
        report["recording"] = task.runner.recorder.losses({STATES: None, CONTROLLER_STATE: None,
                                                            **task.runner.ft.recorded()})
        lines += recording_lines(report["recording"])
    for line in lines:
        print(line, flush=True)
    if task.args.json:
        Path(task.args.json).write_text(json.dumps(report, indent=2))
    if record is None:
        return 0
    (record / "report.json").write_text(json.dumps(report, indent=2))
    title = f"press: {task.model.name}, {task.args.controller}, {task.args.force:g} N"
    plot(SimpleNamespace(series={**s, "t": s["t"] - t_start}, force=float(task.args.force),
                         robot=task.model.name, law=task.args.controller,
                         phases={k: v - t_start for k, v in task.phases.items() if k != "settle"}),
         record / "plot.png")
    counts = ", ".join(f"{k} {v}" for k, v in task.runner.recorder.counts.items())
    print(f"recorded {record}/report.json, {record}/plot.png, {record}/bag ({counts})", flush=True)
    for line in press_video_and_page(record, task.runner, t_start, sim_end, report, lines, title):
        print(line, flush=True)
    return 0
