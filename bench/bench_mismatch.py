"""Every law under model mismatch (issue 31): the table of bench/README.md.

    .venv/bin/python bench/bench_mismatch.py [--robots arm7,puma560,planar2] [--seed 7]

Each bundled robot simulated as itself and 10 % and 30 % perturbed (``rbd_ros.identification.
perturb``: masses, centres of mass, inertias, armature, friction; ``--seed``), each law driving it
with the unperturbed model along the bringup's tour (``plan_tour``, 2 s segments, to its end plus
0.5 s), lockstep at 1 kHz in the ROS-free MuJoCo simulator (``sim.closed_loop.run_tour`` with
``sim_model``).  Prints a Markdown table: per law and robot the largest per-joint RMS tracking
error (rad or m) at 0 / 10 / 30 %.
"""
from __future__ import annotations

import argparse
import time
import warnings


def main(argv: list[str] | None = None) -> int:
    from rbd_ros.control.gains import LAWS
    from rbd_ros.control.tour import plan_tour
    from rbd_ros.identification import perturb
    from rbd_ros.model import MdhModel
    from rbd_ros.sim.closed_loop import run_tour
    from rbd_ros.util.resources import config_file

    ap = argparse.ArgumentParser()
    ap.add_argument("--robots", default="arm7,puma560,planar2")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--laws", default=",".join(LAWS))
    args = ap.parse_args(argv)
    names, laws = args.robots.split(","), args.laws.split(",")
    cells: dict[tuple[str, str], str] = {}
    t0 = time.perf_counter()
    warnings.simplefilter("ignore")
    for name in names:
        model = MdhModel.from_yaml(str(config_file(name)))
        tour = plan_tour(model, segment_time=2.0)
        sims = [None] + [perturb(model, p, args.seed) for p in (10.0, 30.0)]
        for law in laws:
            errs = [run_tour(model, law, tour=tour, sim_model=s).rms_error.max() for s in sims]
            cells[name, law] = " / ".join(f"{e:.1e}" for e in errs)
            print(f"{name} {law}: {cells[name, law]}", flush=True)
    print("\n| law | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for law in laws:
        print(f"| {law} | " + " | ".join(cells[n, law] for n in names) + " |")
    print(f"\ncell: max over joints of the RMS tracking error (rad or m), simulated arm exact / 10 % / "
          f"30 % perturbed (seed {args.seed}); {len(names) * len(laws) * 3} runs in "
          f"{time.perf_counter() - t0:.0f} s wall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
