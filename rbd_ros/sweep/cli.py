"""``rbd-ros sweep``: the ROS-free closed loop over robots x laws x perturbations x tours.

    rbd-ros sweep --robots arm7,puma560 --laws pd_gravity,computed_torque \\
        --perturb 0,10,30 --seeds 3 --tours default,fast [--duration 5] \\
        [--gains-from nominal|perturbed] [--workers 2 | --ray ADDRESS] [-o sweep_out]

Writes ``OUT/sweep.csv``, ``OUT/sweep.json`` (the settings, the machine, throughput and every
row) and ``OUT/sweep.png``; prints one line per finished cell and the throughput: closed-loop
seconds simulated per wall second.  A perturbed cell's law keeps the nominal model's gains
(column ``gains``: ``nominal``); ``--gains-from perturbed`` derives them from each perturbed
model (``per-model``).  Ctrl-C writes the rows finished, says how many are missing and exits
130 (``backends.Interrupt``); a row whose result is NaN is a failed row with its reason.
``--ray local`` starts a local Ray; ``--ray auto`` or ``--ray HOST:PORT`` joins a cluster
(``pip install 'rbd_ros[sweep]'``).  The package's modules: ``rbd_ros.sweep``.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from rbd_ros.sweep import backends, table
from rbd_ros.sweep.cell import load_robot
from rbd_ros.sweep.grid import TOURS, Cell, cells
from rbd_ros.util.flags import NewSpelling, add_deprecated


def _list(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _floats(text: str) -> list[float]:
    try:
        return [float(t) for t in _list(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated percentages, got '{text}'") from None


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rbd-ros sweep", description=__doc__.splitlines()[0])
    ap.add_argument("--robots", type=_list, default=["arm7"],
                    help="bundled robot names or .urdf/.yaml files, comma-separated (default arm7)")
    ap.add_argument("--laws", type=_list, default=["computed_torque"],
                    help="control laws, comma-separated (default computed_torque)")
    ap.add_argument("--perturb", type=_floats, default=[0.0],
                    help="percentages the controller's model is perturbed by, comma-separated (default 0)")
    ap.add_argument("--seeds", type=int, default=1, help="perturbed models per percentage (default 1)")
    ap.add_argument("--tours", type=_list, default=["default"], help=f"tours: {', '.join(TOURS)} (default default)")
    ap.add_argument("--duration", type=float, default=0.0,
                    help="s per run, at least one control period; 0: the whole tour (default)")
    ap.add_argument("--gains-from", choices=("nominal", "perturbed"), default="nominal",
                    help="a perturbed cell's gains: the nominal model's (default: the table shows the "
                         "mismatch alone) or each perturbed model's")
    ap.add_argument("--workers", type=int, default=1, help="local processes, or Ray tasks in flight (default 1)")
    ap.add_argument("--ray", metavar="ADDRESS", default=None,
                    help="run on Ray: 'local', 'auto' or HOST:PORT (needs the sweep extra)")
    ap.add_argument("-o", "--output", default="sweep_out", action=NewSpelling,
                    help="output folder (default sweep_out)")
    add_deprecated(ap, "--out", "--output", "output")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        grid = cells(args.robots, args.laws, args.perturb, args.seeds, args.tours, args.duration,
                     gains="nominal" if args.gains_from == "nominal" else "per-model")
        if args.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {args.workers}")
        for robot in args.robots:
            load_robot(robot)  # an unknown robot is refused before any worker starts
    except (ValueError, FileNotFoundError) as exc:
        print(f"rbd-ros sweep: {exc}", file=sys.stderr)
        return 2
    where = f"Ray at {args.ray}" if args.ray else f"{args.workers} local process(es)"
    print(f"sweep: {len(grid)} cells on {where}", flush=True)
    meta: dict = {"settings": vars(args), "machine": {"python": platform.python_version(),
                                                      "cpus": os.cpu_count(), "load_avg": os.getloadavg()}}
    t0 = time.perf_counter()
    rows: list[dict] = []
    shown = 0  # rows whose progress line was printed
    interrupt = backends.Interrupt("sweep: interrupted: stopping, the finished rows are written "
                                   "(Ctrl-C again to stop at once)")
    try:
        with interrupt as stop:
            if args.ray:
                rows_iter = backends.ray(grid, args.ray, args.workers, stop=stop,
                                         on_start=lambda res: meta.update(ray_resources=res))
            else:
                rows_iter = backends.local(grid, args.workers, stop=stop)
            for row in rows_iter:
                rows.append(row)
                _print_row(row, len(rows), len(grid))
                shown = len(rows)
    except RuntimeError as exc:  # Ray missing or unreachable
        print(f"rbd-ros sweep: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the second Ctrl-C: what has finished is still written
        interrupt.event.set()
    for k in range(shown, len(rows)):  # a row kept as a second SIGINT cut its line short
        _print_row(rows[k], k + 1, len(grid))
    wall = time.perf_counter() - t0
    interrupted = interrupt.event.is_set() and len(rows) < len(grid)
    if interrupted:
        meta["interrupted"] = {"finished": len(rows), "missing": len(grid) - len(rows), "cells": len(grid)}
    order = {c: i for i, c in enumerate(grid)}
    rows.sort(key=lambda r: order.get(_cell_of(r), 0))
    simulated = sum(r.get("sim_s", 0.0) for r in rows if not r["error"])
    meta["throughput"] = {"cells": len(rows), "wall_s": wall, "simulated_s": simulated,
                          "simulated_per_wall_s": simulated / wall if wall > 0 else float("nan")}
    paths = table.write(rows, Path(args.output), meta)
    failed = sum(1 for r in rows if r["error"])
    print(f"sweep: {len(rows)} cells, {simulated:.1f} s simulated in {wall:.1f} s wall = "
          f"{meta['throughput']['simulated_per_wall_s']:.2f} simulated s per wall s"
          f"{f'; {failed} failed (see the error column)' if failed else ''}")
    print(f"wrote {paths['csv']}, {paths['json']}, {paths['png']}")
    if interrupted:
        print(f"sweep: interrupted: {len(rows)} of {len(grid)} cells finished and written, "
              f"{len(grid) - len(rows)} missing", file=sys.stderr)
        return 130
    return 1 if failed == len(rows) else 0


def _print_row(row: dict, k: int, total: int) -> None:
    """One progress line: the cell, its error or its numbers."""
    status = row["error"] or (f"rms {row['rms_error']:.2e}  sat {100 * row['saturated']:.1f} %"
                              f"{'  DIVERGED' if row['diverged'] else ''}")
    print(f"[{k}/{total}] {row['robot']} {row['law']} {row['perturb']:g} % seed {row['seed']} "
          f"{row['tour']} gains {row.get('gains', 'nominal')}: {status} ({row['wall_s']:.1f} s)", flush=True)


def _cell_of(row: dict):

    return Cell(row["robot"], row["law"], row["perturb"], row["seed"], row["tour"], row["duration"],
                row.get("gains", "nominal"))


if __name__ == "__main__":
    sys.exit(main())
