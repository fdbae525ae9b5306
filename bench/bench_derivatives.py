#!/usr/bin/env python3
"""Benchmark of the analytical dynamics derivatives against Pinocchio's (issue 42, item 2).

    .venv/bin/python bench/bench_derivatives.py [--quick]

Prints a table and writes ``bench/results/derivatives.json``.  Same method as
``bench_core.py``: medians over repeats, our calls interleaved with Pinocchio's in the same
process, on a Pinocchio model built from the URDF ``model_to_urdf`` writes of the same model.

* single call from Python, Franka Panda's arm (7 DoF, example-robot-data) and a random 48-joint
  chain: ``Robot.inverse_dynamics_derivatives`` vs ``pin.computeRNEADerivatives`` and
  ``Robot.forward_dynamics_derivatives`` vs ``pin.computeABADerivatives`` (our public calls:
  validated, fresh result arrays; Pinocchio's return its ``data``'s);
* batches of N states per state on 1 and 2 threads against one Pinocchio call (issue 42's
  "<= 0.1x per state on 2 threads"), interleaved per repeat;
* each also in CPU time (``interleaved_cpu``; for 2 threads the CPU time of both, so not a
  speed-up figure), which the other jobs on the shared machine disturb far less than wall time;
* the largest difference to Pinocchio's matrices on the benchmark's states (a check, not a
  timing).

dynibo (issue 42's other peer) is not installed in this environment, so it is not measured.
OpenBLAS runs on one thread (``OPENBLAS_NUM_THREADS=1`` unless set): the forward dynamics'
derivatives of long chains multiply by BLAS (``rnea_derivatives.BLAS_FROM``); Pinocchio
(Eigen) is single-threaded too.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: rnea_derivatives.BLAS_FROM

import argparse
import json
import platform
import statistics
import sys
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numba  # noqa: E402
from bench_core import chain, interleaved, panda  # noqa: E402

from rbd_ros.model.urdf_export import model_to_urdf  # noqa: E402
from rbd_ros.robot import Robot  # noqa: E402


def interleaved_cpu(fns: dict, number: int, repeat: int) -> dict[str, float]:
    """As ``bench_core.interleaved``, in this process's CPU time (``time.process_time``): on the
    shared 2-core machine (load 5-17 during issue 42) wall time mostly measures the other jobs'
    preemption; CPU time does not (it still pays for their cache and memory traffic)."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            t = time.process_time()
            for _ in range(number):
                f()
            samples[k].append((time.process_time() - t) / number)
    return {k: statistics.median(v) for k, v in samples.items()}


def _pinocchio(model):
    import pinocchio as pin

    pm = pin.buildModelFromXML(model_to_urdf(model))
    pm.gravity.linear[:] = model.gravity
    return pin, pm, pm.createData()


def single_calls(models: dict, quick: bool) -> dict:
    number, repeat = (500, 7) if quick else (2000, 15)
    res = {}
    for key, model in models.items():
        robot = Robot(model)
        pin, pm, pd = _pinocchio(model)
        rng = np.random.default_rng(model.dof)
        q, qd, qdd = rng.uniform(-1, 1, (3, model.dof))
        tau = robot.inverse_dynamics(q, qd, qdd)
        n = number if model.dof < 20 else max(50, number // 10)
        fns = {"pin.computeRNEADerivatives": lambda: pin.computeRNEADerivatives(pm, pd, q, qd, qdd),
               "inverse_dynamics_derivatives": lambda: robot.inverse_dynamics_derivatives(q, qd, qdd),
               "pin.computeABADerivatives": lambda: pin.computeABADerivatives(pm, pd, q, qd, tau),
               "forward_dynamics_derivatives": lambda: robot.forward_dynamics_derivatives(q, qd, tau)}
        t = interleaved(fns, n, repeat)
        c = interleaved_cpu(fns, n, repeat)
        ours_id = robot.inverse_dynamics_derivatives(q, qd, qdd)
        theirs_id = [np.array(x) for x in pin.computeRNEADerivatives(pm, pd, q, qd, qdd)]
        ours_fd = robot.forward_dynamics_derivatives(q, qd, tau)
        theirs_fd = [np.array(x) for x in pin.computeABADerivatives(pm, pd, q, qd, tau)]
        full = [np.triu(m) + np.triu(m, 1).T for m in (theirs_id[2], theirs_fd[2])]
        diff_id = max(float(np.abs(a - b).max()) for a, b in zip(ours_id, (*theirs_id[:2], full[0])))
        diff_fd = max(float(np.abs(a - b).max()) for a, b in zip(ours_fd, (*theirs_fd[:2], full[1])))
        res[key] = {"dof": model.dof, "us": {k: v * 1e6 for k, v in t.items()},
                    "cpu_us": {k: v * 1e6 for k, v in c.items()},
                    "ratio": {"ID derivatives / pin": t["inverse_dynamics_derivatives"]
                              / t["pin.computeRNEADerivatives"],
                              "FD derivatives / pin": t["forward_dynamics_derivatives"]
                              / t["pin.computeABADerivatives"]},
                    "cpu_ratio": {"ID derivatives / pin": c["inverse_dynamics_derivatives"]
                                  / c["pin.computeRNEADerivatives"],
                                  "FD derivatives / pin": c["forward_dynamics_derivatives"]
                                  / c["pin.computeABADerivatives"]},
                    "max_abs_diff_to_pinocchio": {"ID": diff_id, "FD": diff_fd}}
    return res


def batches(models: dict, quick: bool) -> dict:
    res = {}
    for key, model in models.items():
        robot = Robot(model)
        pin, pm, pd = _pinocchio(model)
        n = model.dof
        N = (8192 if quick else 16384) if n < 20 else 4096
        rng = np.random.default_rng(n)
        Q, QD, X = rng.uniform(-1, 1, (3, N, n))
        q, qd, x = Q[0], QD[0], X[0]
        row = {}
        for threads in (1, 2):
            if threads > numba.config.NUMBA_NUM_THREADS:
                continue
            numba.set_num_threads(threads)
            calls = {"ID": (lambda: robot.inverse_dynamics_derivatives(Q, QD, X),
                            lambda: pin.computeRNEADerivatives(pm, pd, q, qd, x)),
                     "FD": (lambda: robot.forward_dynamics_derivatives(Q, QD, X),
                            lambda: pin.computeABADerivatives(pm, pd, q, qd, x))}
            for name, (ours, theirs) in calls.items():
                ours()
                theirs()
                runs, pins, cpus, cpins = [], [], [], []
                for _ in range(3 if quick else 7):  # interleaved: ours, then Pinocchio, repeated
                    c0 = time.process_time()
                    runs.append(timeit.timeit(ours, number=1) / N)
                    c1 = time.process_time()
                    pins.append(timeit.timeit(theirs, number=200) / 200)
                    cpus.append((c1 - c0) / N)
                    cpins.append((time.process_time() - c1) / 200)
                t_pin = statistics.median(pins)
                per_state = statistics.median(runs)
                row[f"{name} {threads}thread"] = {"per_state_us": per_state * 1e6, "best_us": min(runs) * 1e6,
                                                  "pin_us": t_pin * 1e6, "ratio": per_state / t_pin,
                                                  "best_ratio": min(runs) / t_pin,
                                                  "cpu_per_state_us": statistics.median(cpus) * 1e6,
                                                  "cpu_ratio": statistics.median(cpus) / statistics.median(cpins)}
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        res[key] = {"N": N, **row}
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (~1 min)")
    args = ap.parse_args()
    models = {"panda": panda(), 48: chain(48, 48)}
    t0 = time.time()
    load0 = os.getloadavg()[0]
    single = single_calls(models, args.quick)
    batch = batches(models, args.quick)
    load1 = os.getloadavg()[0]
    print(f"\nrbd_ros dynamics derivatives vs Pinocchio (median, {platform.processor() or platform.machine()}, "
          f"{numba.config.NUMBA_NUM_THREADS} numba threads, load average {load0:.1f} -> {load1:.1f})\n")
    for key, r in single.items():
        u = r["us"]
        print(f"{str(key):>6} ({r['dof']} DoF)  inverse_dynamics_derivatives {u['inverse_dynamics_derivatives']:.2f} us"
              f" / pin.computeRNEADerivatives {u['pin.computeRNEADerivatives']:.2f} us = "
              f"{r['ratio']['ID derivatives / pin']:.2f};  forward_dynamics_derivatives "
              f"{u['forward_dynamics_derivatives']:.2f} us / pin.computeABADerivatives "
              f"{u['pin.computeABADerivatives']:.2f} us = {r['ratio']['FD derivatives / pin']:.2f}  "
              f"(max |ours - pin| ID {r['max_abs_diff_to_pinocchio']['ID']:.1e}, "
              f"FD {r['max_abs_diff_to_pinocchio']['FD']:.1e})")
        cr, cu = r["cpu_ratio"], r["cpu_us"]
        print(f"{'':>6}   CPU time: ID {cu['inverse_dynamics_derivatives']:.2f} / "
              f"{cu['pin.computeRNEADerivatives']:.2f}"
              f" us = {cr['ID derivatives / pin']:.2f};  FD {cu['forward_dynamics_derivatives']:.2f} / "
              f"{cu['pin.computeABADerivatives']:.2f} us = {cr['FD derivatives / pin']:.2f}")
    print("\nbatches, per state / one Pinocchio call:")
    for key, r in batch.items():
        cells = [f"{k}: {v['ratio']:.3f} (best {v['best_ratio']:.3f}, {v['per_state_us']:.2f} us; CPU time "
                 f"{v['cpu_ratio']:.3f})" for k, v in r.items() if k != "N"]
        print(f"{str(key):>6} N={r['N']}  " + "   ".join(cells))
    result = {"quick": args.quick, "machine": platform.platform(), "python": sys.version.split()[0],
              "numba": numba.__version__, "threads": numba.config.NUMBA_NUM_THREADS,
              "load_average": [load0, load1], "single": {str(k): v for k, v in single.items()},
              "batch": {str(k): v for k, v in batch.items()}, "wall_s": time.time() - t0}
    out = ROOT / "bench" / "results" / "derivatives.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
