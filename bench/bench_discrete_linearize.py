#!/usr/bin/env python3
"""Benchmark of the discrete-time linearization (issue 42 item 1; ``Robot.linearize(..., dt,
integrator)``) against the same thing built from Pinocchio, in the same process.

    .venv/bin/python bench/bench_discrete_linearize.py [--quick]

Prints a table and writes ``bench/results/discrete_linearize.json``.  Franka Panda's arm (7 DoF,
example-robot-data; the Pinocchio model from the URDF ``model_to_urdf`` writes of the same
model), one RK4 step of ``dt = 1 ms``, ``tau`` held (the step ``Robot.simulate`` runs):

* ``ours``: ``Robot.linearize(q, v, tau, dt=1e-3, integrator="rk4")`` (``robot.discrete``: the
  chain rule through the four stages, our ``forward_dynamics_derivatives`` at each);
* ``pin chain rule``: the same chain rule in numpy with ``pin.computeABADerivatives`` at each
  stage (what an MPC user writes with Pinocchio's analytical derivatives);
* ``pin central differences``: central differences of a Pinocchio RK4 step (``pin.aba`` at its
  four stages) over the 3 n inputs (``q``, ``v``, ``tau``): what issue 42 says a user does today;
* a batch of N states per state (one batch call of the dynamics and its derivatives per stage)
  against one ``pin chain rule`` call.

Medians over interleaved repeats, in wall and in CPU time (``bench_derivatives.interleaved_cpu``:
the other jobs on the shared machine disturb it far less); ratios to each Pinocchio peer.  Also
the largest difference of our ``(A_d, B_d)`` to each peer's (a check, not a timing).
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench_derivatives.py

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

from bench_core import interleaved, panda  # noqa: E402
from bench_derivatives import interleaved_cpu  # noqa: E402

from rbd_ros.model.urdf_export import model_to_urdf  # noqa: E402
from rbd_ros.robot import Robot  # noqa: E402

DT = 1e-3
_C, _W = (0.5, 0.5, 1.0), (1.0, 2.0, 2.0, 1.0)


def pin_rk4_step(pin, pm, pd, q, v, u, h):
    """One RK4 step of ``[q; v]`` with ``pin.aba`` (``algorithm.integrators.step``'s stages)."""
    ks, qs, vs = [], q, v
    for s in range(4):
        a = pin.aba(pm, pd, qs, vs, u).copy()
        ks.append((vs, a))
        if s < 3:
            qs, vs = q + _C[s] * h * vs, v + _C[s] * h * a
    return (q + h / 6 * sum(w * k[0] for w, k in zip(_W, ks)),
            v + h / 6 * sum(w * k[1] for w, k in zip(_W, ks)))


def pin_central(pin, pm, pd, q, v, u, h, eps=1e-6):
    """``(A_d, B_d)`` by central differences of ``pin_rk4_step``."""
    n = q.size
    J = np.empty((2 * n, 3 * n))
    for j in range(3 * n):
        e = np.zeros(3 * n)
        e[j] = eps
        p = pin_rk4_step(pin, pm, pd, q + e[:n], v + e[n:2 * n], u + e[2 * n:], h)
        m = pin_rk4_step(pin, pm, pd, q - e[:n], v - e[n:2 * n], u - e[2 * n:], h)
        J[:, j] = np.concatenate([p[0] - m[0], p[1] - m[1]]) / (2 * eps)
    return J[:, :2 * n], J[:, 2 * n:]


def pin_chain(pin, pm, pd, q, v, u, h):
    """``(A_d, B_d)`` by the RK4 chain rule with ``pin.computeABADerivatives`` at each stage."""
    n = q.size
    m = 2 * n
    I0 = np.hstack([np.eye(m), np.zeros((m, n))])
    y = np.concatenate([q, v])
    ys, dys = y, I0
    acc = np.zeros((m, m + n))
    J = np.zeros((m, m))
    J[:n, n:] = np.eye(n)
    for s in range(4):
        dq, dv, Minv = pin.computeABADerivatives(pm, pd, ys[:n], ys[n:], u)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        J[n:, :n], J[n:, n:] = dq, dv
        dk = J @ dys
        dk[n:, m:] += Minv
        acc += _W[s] * dk
        if s < 3:
            c = h * _C[s]
            ys, dys = y + c * np.concatenate([ys[n:], pd.ddq]), I0 + c * dk
    out = I0 + h / 6 * acc
    return out[:, :m], out[:, m:]


def main() -> None:
    import pinocchio as pin

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    args = ap.parse_args()
    number, repeat = (100, 5) if args.quick else (300, 11)
    model = panda()
    robot = Robot(model)
    pm = pin.buildModelFromXML(model_to_urdf(model))
    pm.gravity.linear[:] = model.gravity
    pd = pm.createData()
    n = model.dof
    rng = np.random.default_rng(7)
    q, v = rng.uniform(-1, 1, (2, n))
    u = 5.0 * rng.normal(size=n)
    t0, load0 = time.time(), os.getloadavg()[0]
    ours = robot.linearize(q, v, u, dt=DT, integrator="rk4")
    peers = {"pin chain rule": pin_chain(pin, pm, pd, q, v, u, DT),
             "pin central differences": pin_central(pin, pm, pd, q, v, u, DT)}
    diff = {k: max(float(np.abs(a - b).max()) for a, b in zip(ours, p)) for k, p in peers.items()}
    fns = {"ours": lambda: robot.linearize(q, v, u, dt=DT, integrator="rk4"),
           "pin chain rule": lambda: pin_chain(pin, pm, pd, q, v, u, DT),
           "pin central differences": lambda: pin_central(pin, pm, pd, q, v, u, DT)}
    t = interleaved(fns, number, repeat)
    cpu = interleaved_cpu(fns, number, repeat)
    from rbd_ros.algorithm.rnea import PARALLEL_MIN

    N = 256 if args.quick else PARALLEL_MIN  # from PARALLEL_MIN states the batch runs on the threads
    threads = robot._chunks(N) if N >= PARALLEL_MIN else 1
    Q, V = rng.uniform(-1, 1, (2, N, n))
    U = 5.0 * rng.normal(size=(N, n))
    batch = lambda: robot.linearize(Q, V, U, dt=DT, integrator="rk4")  # noqa: E731
    batch()
    runs, pins = [], []
    for _ in range(3 if args.quick else 7):  # interleaved: ours (per state), then one Pinocchio call
        runs.append(timeit.timeit(batch, number=1) / N)
        pins.append(timeit.timeit(fns["pin chain rule"], number=50) / 50)
    per_state, t_pin = statistics.median(runs), statistics.median(pins)
    load1 = os.getloadavg()[0]
    ratio = {k: t["ours"] / t[k] for k in peers}
    cpu_ratio = {k: cpu["ours"] / cpu[k] for k in peers}
    print(f"\ndiscrete-time linearization, one RK4 step of {DT * 1e3:g} ms, Panda {n} DoF (median, "
          f"{platform.processor() or platform.machine()}, load average {load0:.1f} -> {load1:.1f})\n")
    print(f"  ours {t['ours'] * 1e6:.1f} us;  pin chain rule {t['pin chain rule'] * 1e6:.1f} us (ratio "
          f"{ratio['pin chain rule']:.2f});  pin central differences {t['pin central differences'] * 1e6:.1f} us "
          f"(ratio {ratio['pin central differences']:.3f})")
    print(f"  CPU time: ours {cpu['ours'] * 1e6:.1f} us;  pin chain rule {cpu['pin chain rule'] * 1e6:.1f} us "
          f"(ratio {cpu_ratio['pin chain rule']:.2f});  pin central differences "
          f"{cpu['pin central differences'] * 1e6:.1f} us (ratio {cpu_ratio['pin central differences']:.3f})")
    print(f"  batch N={N}: {per_state * 1e6:.1f} us per state on {threads} thread(s), ratio "
          f"{per_state / t_pin:.2f} to one pin chain-rule call")
    print(f"  max |ours - peer|: chain rule {diff['pin chain rule']:.1e}, central differences "
          f"{diff['pin central differences']:.1e}")
    result = {"quick": args.quick, "machine": platform.platform(), "dof": n, "dt": DT,
              "us": {k: x * 1e6 for k, x in t.items()}, "ratio": ratio,
              "cpu_us": {k: x * 1e6 for k, x in cpu.items()}, "cpu_ratio": cpu_ratio,
              "batch": {"N": N, "threads": threads, "per_state_us": per_state * 1e6,
                        "pin_chain_us": t_pin * 1e6, "ratio": per_state / t_pin},
              "max_abs_diff": diff, "load_average": [load0, load1], "wall_s": time.time() - t0}
    out = ROOT / "bench" / "results" / "discrete_linearize.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
