#!/usr/bin/env python3
"""Planning benchmark (issue 37): a FollowJointTrajectory goal of 1 000 and 10 000 points x 7
joints, planned by ``rbd_ros.control.follow_trajectory.plan_goal`` (ROS-free), against peers
measured in the same run.

    .venv/bin/python bench/bench_planning.py [--quick]

The arm: Romeo's left arm from its torso (example-robot-data ``romeo.urdf``, 7 DoF).  The goal:
a slow 30 s ramp from the arm (positions only, as a planner sends them; a message-shaped object
with one ``JointTrajectoryPoint``-like object per point), feasible, so that every row plans the
same reference:

* **plan**: validation, reading the points, the C2 spline through them, position and velocity
  limits along it (``PathLimits`` without a robot: no torque);
* **plan + torque check**: the same, with the effort of the whole interpolated trajectory by the
  batch RNEA (``path_limits.check_path``): the target is under 0.2 s for 10 000 points;
* **plan + retime**: ``retime: always`` (TOPP-RA on every grid point of the path: the knots,
  then the check of the retimed reference);
* peers: ``scipy.interpolate.CubicSpline`` through the same points (clamped) and evaluated at
  the samples of our check (what a plain spline costs), and toppra's own pipeline for the same
  retiming: its ``SplineInterpolator`` over the same knots, ``JointVelocityConstraint``,
  ``JointTorqueConstraint`` fed by ``pin.rnea`` on the same URDF (toppra calls it three times
  per grid point), ``TOPPRA(...).compute_parameterization`` on the knots as its grid.

Wall time and CPU time (``time.process_time``: the machine is shared) of each, medians over the
repeats, interleaved (each repeat runs every row once).  Writes ``bench/results/planning.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test" / "support"))  # robots_data, urdf_oracles

from rbd_ros.control import follow_trajectory as ft  # noqa: E402
from rbd_ros.control.path_limits import PathLimits, check_path  # noqa: E402
from rbd_ros.control.trajectory import HoldPosition  # noqa: E402

ROMEO = ("romeo_description/urdf/romeo.urdf", "torso", "l_wrist")
RESULTS = ROOT / "bench" / "results"


def _dur(t: float) -> NS:
    sec, nsec = divmod(int(round(t * 1e9)), 10**9)
    return NS(sec=sec, nanosec=nsec)


def goal_of(names, times, P) -> NS:
    pts = [NS(time_from_start=_dur(t), positions=list(p), velocities=[], accelerations=[], effort=[])
           for t, p in zip(times, P)]
    return NS(trajectory=NS(header=NS(stamp=_dur(0.0)), joint_names=list(names), points=pts),
              multi_dof_trajectory=NS(joint_names=[], points=[]), path_tolerance=[], goal_tolerance=[],
              component_path_tolerance=[], component_goal_tolerance=[], goal_time_tolerance=_dur(0.0))


def timed(fn) -> tuple[float, float, object]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 000 points only, 3 repeats")
    args = ap.parse_args()
    import pinocchio as pin
    import toppra
    import toppra.algorithm as algo
    import toppra.constraint as tc
    from scipy.interpolate import CubicSpline

    from rbd_ros.urdf import load_model
    from robots_data import example_robot_urdf
    from urdf_oracles import pin_reference

    path = str(example_robot_urdf(ROMEO[0]))
    model = load_model(path, base_link=ROMEO[1], tip_link=ROMEO[2])
    names, n = list(model.joint_names), model.dof
    q0 = np.clip(np.zeros(n), model.lower, model.upper)
    hold = HoldPosition(q0)
    full = PathLimits.from_model(model)
    no_torque = PathLimits.from_model(model, robot=None)
    oracle = pin_reference(open(path).read(), model, {})
    pm, pd = oracle.model, oracle.data

    def reference_at(t: float):
        return q0.copy(), np.zeros(n), np.zeros(n)

    def inv_dyn(q, qd, qdd):  # toppra's callback, Pinocchio's RNEA
        return oracle.unvector(pin.rnea(pm, pd, oracle.config(q), oracle.vector(qd), oracle.vector(qdd)))

    sizes = [1000] if args.quick else [1000, 10000]
    repeats = {1000: 3 if args.quick else 7, 10000: 3}
    rows: dict[str, dict] = {}
    for m in sizes:
        t = np.linspace(30.0 / m, 30.0, m)
        ramp = 0.3 * (1 - np.cos(np.pi * t / 30.0))[:, None] / 2
        P = np.clip(q0 + ramp * np.array([1, 1, 1, -1, -1, 1, 1]), model.lower, model.upper)
        goal = goal_of(names, t, P)
        ex = ft.plan_goal(goal, model, 0.0, reference_at, hold, limits=full, retime="never")
        samples = check_path(ex.spline, full, keep_samples=True).t
        tau_lim = np.c_[-full.effort, full.effort]

        def plan(limits: PathLimits, retime: str = "never"):
            return ft.plan_goal(goal, model, 0.0, reference_at, hold, limits=limits, retime=retime)

        def scipy_spline():
            s = CubicSpline(np.r_[0.0, t], np.vstack([q0, P]), bc_type="clamped")
            return s(samples), s(samples, 1), s(samples, 2)

        def toppra_own():
            ss = np.r_[0.0, t]
            p = toppra.SplineInterpolator(ss, np.vstack([q0, P]), bc_type="clamped")
            cons = [tc.JointVelocityConstraint(np.c_[-full.velocity, full.velocity]),
                    tc.JointTorqueConstraint(inv_dyn, tau_lim, np.zeros(n),
                                             discretization_scheme=tc.DiscretizationType.Interpolation)]
            inst = algo.TOPPRA(cons, p, gridpoints=ss, solver_wrapper="seidel")
            return inst.compute_parameterization(0.0, 0.0)

        cases = {"plan": lambda: plan(no_torque), "plan + torque check": lambda: plan(full),
                 "plan + retime": lambda: plan(full, "always"), "scipy CubicSpline": scipy_spline,
                 "toppra (pin.rnea callback)": toppra_own}
        for f in cases.values():  # warm: numba caches, imports
            f()
        got: dict[str, list] = {k: [] for k in cases}
        out: dict[str, object] = {}
        for _ in range(repeats[m]):
            for k, f in cases.items():
                w, c, out[k] = timed(f)
                got[k].append((w, c))
        res = {k: {"wall_s": float(np.median([x[0] for x in v])), "cpu_s": float(np.median([x[1] for x in v]))}
               for k, v in got.items()}
        retimed = out["plan + retime"]
        res["plan + retime"]["duration_s"] = retimed.plan.duration
        sd = out["toppra (pin.rnea callback)"][1]
        if sd is not None:
            ss = np.r_[0.0, t]
            res["toppra (pin.rnea callback)"]["duration_s"] = float(np.sum(2 * np.diff(ss) / (sd[:-1] + sd[1:])))
        res["samples_checked"] = int(len(samples))
        res["ratios"] = {"plan + torque check / scipy CubicSpline": res["plan + torque check"]["wall_s"]
                         / res["scipy CubicSpline"]["wall_s"],
                         "plan + retime / toppra (pin.rnea callback)": res["plan + retime"]["wall_s"]
                         / res["toppra (pin.rnea callback)"]["wall_s"]}
        rows[str(m)] = res
        print(f"\n{m} points x {n} joints ({len(samples)} samples checked), median of {repeats[m]}:")
        for k in cases:
            r = res[k]
            extra = f"  (duration {r['duration_s']:.3f} s)" if "duration_s" in r else ""
            print(f"  {k:30s} {1e3 * r['wall_s']:9.1f} ms wall {1e3 * r['cpu_s']:9.1f} ms CPU{extra}")
        for k, v in res["ratios"].items():
            print(f"  {k}: {v:.2f}")
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    doc = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": {"platform": platform.platform(), "cpu": cpu, "cpus": os.cpu_count(),
                       "load_avg": list(os.getloadavg())},
           "arm": "romeo left arm (example-robot-data), 7 DoF", "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "planning.json").write_text(json.dumps(doc, indent=2))
    print(f"\nwrote {RESULTS / 'planning.json'} (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
