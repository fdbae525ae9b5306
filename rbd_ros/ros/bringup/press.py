"""``rbd-ros bringup --task press``: the contact task of issue 30, and its report.

    rbd-ros bringup (--robot NAME | --urdf PATH) --task press [--scene FILE] [--force N]
                    --controller impedance|hybrid_force_position|admittance
                    [--record DIR] [--json FILE] [--integrator ...] [--timestep S]

Places the scene (default the bundled table) where the arm reaches it from above with room to
slide (``rbd_ros.sim.contact_site``; a scene file that fixes its poses is refused: the task
needs the site), approaches, presses ``--force`` N, slides 0.1 m along the surface holding
it, and retreats: ``rbd_ros.sim.contact_task.run_press``, the simulator and the law the bridge
and the controller node run, here in one process in lockstep (no nodes start: the numbers are
the same as a lockstep bringup's, without DDS).  For ``impedance`` the reference goes
``--force / K_n`` into the surface, ``K_n = force / 0.04 m`` along the normal.

The report (terminal; ``--json FILE``; ``--record DIR``: ``report.json`` and ``plot.png`` of
the normal force, MuJoCo's beside the F/T sensor's and the joint-torque estimate's, and the
position error along the free axes): force error RMS and max over the slide, the impact peak
(largest force before the slide over the set force), the cycles without contact during the
slide, the position error along the surface, the sensor's and the estimate's difference from
MuJoCo's contact force.  Not yet: the video, the rosbag and the page of a tour run.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def check_press_law(law: str) -> None:
    from rbd_ros.sim.contact_task import PRESS_LAWS

    if law not in PRESS_LAWS:
        raise ValueError(f"--task press needs a force law: --controller {' | '.join(PRESS_LAWS)} "
                         f"(not {law})")


def run_press_task(args: Any, model: Any) -> int:
    """The task for parsed bringup ``args`` on ``model`` (module docstring; the caller has
    checked the law, the timestep and loaded the model as the nodes would); 0 when it ran."""
    from rbd_ros.sim.contact_task import run_press

    bridge: dict[str, Any] = {}
    if args.integrator:
        bridge["integrator"] = args.integrator
    if args.timestep is not None:
        bridge["timestep"] = float(args.timestep)
    print(f"bringup: press task, {model.name} ({model.dof} joints), {args.controller}, "
          f"{args.force:g} N on '{args.scene or 'table'}' (lockstep, in process)", flush=True)
    r = run_press(model, args.controller, float(args.force), scene=args.scene or "table",
                  bridge=bridge)
    report = r.report()
    for line in report_lines(report):
        print(line, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    if args.record:
        out = Path(args.record)
        (out / "report.json").write_text(json.dumps(report, indent=2))
        plot(r, out / "plot.png")
        print(f"bringup: wrote {out / 'report.json'} and {out / 'plot.png'}", flush=True)
    return 0


def report_lines(rep: dict[str, Any]) -> list[str]:
    f = rep["force_N"]
    return [
        f"  force error over the slide: RMS {rep['force_error_rms_N']:.3f} N "
        f"({100 * rep['force_error_rms_N'] / f:.1f} %), max {rep['force_error_max_N']:.3f} N",
        f"  impact peak: {rep['impact_peak_ratio']:.2f} x the set force",
        f"  contact lost during the slide: {rep['contact_lost_cycles']} cycles",
        f"  position error along the surface: RMS {1e3 * rep['position_error_rms_m']:.2f} mm, "
        f"max {1e3 * rep['position_error_max_m']:.2f} mm",
        f"  F/T sensor vs MuJoCo's contact force: {rep['sensor_vs_mujoco_rms_N']:.3g} N RMS; "
        f"joint-torque estimate: {rep['estimate_vs_mujoco_rms_N']:.3g} N RMS",
        f"  unstable steps: {rep['unstable_steps']}",
    ]


def plot(r: Any, path: Path) -> None:
    """The normal forces and the free-axis position error over time, phases marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = r.series
    fig, (a, b) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    a.plot(s["t"], s["f_n"], label="MuJoCo contact force", lw=1.2)
    a.plot(s["t"], s["f_sensor"], "--", label="F/T sensor (compensated)", lw=0.9)
    a.plot(s["t"], s["f_estimate"], ":", label="from joint torques", lw=0.9)
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

