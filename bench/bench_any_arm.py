"""Every law on every arm with default gains (issue 13): the law x robot table of README.md.

    .venv/bin/python bench/bench_any_arm.py [--duration 3] [--robots ur10,panda]

Same runs as ``test/test_any_arm.py`` (robots and criteria from there): lockstep at 1 kHz in
the ROS-free MuJoCo simulator, 3 s of the bringup's tour.  Prints a Markdown table: per law
and robot the largest per-joint RMS error (rad or m), the tool position RMS (mm, task-space
laws) and the chatter (% of cycles with a sign flip at an effort limit).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test"))


def main(argv: list[str] | None = None) -> int:
    from test_any_arm import BUNDLED, REAL, load

    from rbd_ros.control.gains import LAWS
    from rbd_ros.control.tour import plan_tour
    from rbd_ros.sim.closed_loop import run_tour

    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--robots", default=",".join(BUNDLED + list(REAL)))
    args = ap.parse_args(argv)
    names = args.robots.split(",")
    cells: dict[tuple[str, str], str] = {}
    t0 = time.perf_counter()
    for name in names:
        model = load(name)
        tour = plan_tour(model, segment_time=2.0)
        for law in LAWS:
            r = run_tour(model, law, tour=tour, duration=args.duration)
            cell = f"{r.rms_error.max():.1e}"
            if law in ("task_pd", "resolved_acceleration"):
                cell += f" / {1e3 * r.tool_position_rms:.2f} mm"
            cells[name, law] = cell + f" / {100 * r.chatter:.0f} %"
    print("| law | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for law in LAWS:
        print(f"| {law} | " + " | ".join(cells[n, law] for n in names) + " |")
    print(f"\n{len(names) * len(LAWS)} runs of {args.duration:g} s in "
          f"{time.perf_counter() - t0:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
