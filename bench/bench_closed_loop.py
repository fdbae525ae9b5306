"""The ROS-free closed loop against a hand-written MuJoCo loop on the same model (issue 42 item 4).

    .venv/bin/python bench/bench_closed_loop.py [--robot arm7] [--steps 3000] [--rounds 7]

In this process, on the one MuJoCo model the bridge builds for the bundled ``--robot`` (arm7:
7 DoF at 1 kHz, MuJoCo's RK4), interleaved rounds of ``--steps`` steps each of:

* ``mj_step``: the bare physics step, the floor of any loop on this model;
* ``mj_step + PD``: a hand-written loop, ``d.ctrl[:] = Kp (q_d - qpos) - Kd qvel`` then
  ``mujoco.mj_step`` (the issue's peer);
* the sweep's loop (``rbd_ros.sweep.cell``: ``Simulator.measure`` -> ``ControlLoop.joint_state``
  -> ``ControlLoop.cycle`` -> ``Simulator.command`` -> ``Simulator.step``, lockstep along the
  tour) under computed torque and PD + gravity, what ``rbd-ros sweep`` and the model
  comparison run per cell.

Per loop the median over rounds of the wall and the CPU time per step (``time.process_time``:
the machine's other jobs inflate wall time, not CPU time), the simulated seconds per CPU
second, and the ratio to the hand-written loop.  Writes ``bench/results/closed_loop.json`` with
the CPU, the load and the scheduling floor.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def timed(step: Callable[[], None], steps: int) -> tuple[float, float]:
    """(wall s, CPU s) per step of ``steps`` calls."""
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    return (time.perf_counter() - w0) / steps, (time.process_time() - c0) / steps


def loops(robot: str) -> tuple[dict[str, Callable[[], None]], float]:
    """The four loops (module docstring) and the timestep."""
    import mujoco

    from rbd_ros.sweep.cell import Cell, cell_loop

    loops: dict[str, Callable[[], None]] = {}
    sim, _, _, _ = cell_loop(Cell(robot=robot, law="pd"))
    m, d = sim.mj_model, sim.mj_data
    loops["mj_step"] = lambda: mujoco.mj_step(m, d)
    n = m.nu
    q_d, kp, kd = d.qpos[:n].copy(), 100.0, 10.0
    qpos, qvel, ctrl = d.qpos[:n], d.qvel[:n], d.ctrl

    def pd() -> None:
        ctrl[:] = kp * (q_d - qpos) - kd * qvel
        mujoco.mj_step(m, d)

    loops["mj_step + PD"] = pd
    for law in ("computed_torque", "pd_gravity"):
        sim, loop, _, _ = cell_loop(Cell(robot=robot, law=law))
        names = list(sim.joint_names)

        def ours(sim=sim, loop=loop, names=names) -> None:
            q, qd, _ = sim.measure()
            loop.joint_state(names, q, qd, sim.time)
            sim.command(loop.cycle(sim.time))
            sim.step()

        loops[f"sweep loop, {law}"] = ours
    return loops, float(m.opt.timestep)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--robot", default="arm7")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    runs, dt = loops(args.robot)
    for step in runs.values():  # warm: the kernels loaded, the caches hot
        timed(step, 200)
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in runs}
    for _ in range(args.rounds):
        for name, step in runs.items():
            samples[name].append(timed(step, args.steps))
    peer = "mj_step + PD"
    med = {k: {"wall_us": 1e6 * statistics.median(w for w, _ in v), "cpu_us": 1e6 * statistics.median(c for _, c in v)}
           for k, v in samples.items()}
    print(f"{args.robot}, dt {dt * 1e3:g} ms, {args.rounds} rounds x {args.steps} steps; medians")
    print(f"{'loop':<28} {'wall us':>8} {'CPU us':>8} {'sim s / CPU s':>14} {'CPU / peer':>11}")
    for name, r in med.items():
        r["sim_s_per_cpu_s"] = dt / (r["cpu_us"] * 1e-6)
        r["cpu_ratio_to_peer"] = r["cpu_us"] / med[peer]["cpu_us"]
        print(f"{name:<28} {r['wall_us']:8.1f} {r['cpu_us']:8.1f} {r['sim_s_per_cpu_s']:14.1f} "
              f"{r['cpu_ratio_to_peer']:11.2f}")
    sys.path.insert(0, str(REPO / "bench"))
    import bench_startup

    bench_startup.write_result("closed_loop", load0, robot=args.robot, timestep_s=dt, steps=args.steps,
                               rounds=args.rounds, peer=peer, median=med,
                               samples_s={k: np.asarray(v).tolist() for k, v in samples.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
