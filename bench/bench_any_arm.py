"""Every law on every arm with default gains (issues 13, 26): the law x robot table of README.md.

    .venv/bin/python bench/bench_any_arm.py [--duration 0] [--robots ur10,panda]

Robots and criteria from ``test/control/test_any_arm.py``: lockstep at 1 kHz in the ROS-free MuJoCo
simulator, the bringup's tour (``plan_tour``, 2 s segments) run to its end plus 0.5 s by
default (``--duration 0``; the test's 3 s stop before e.g. TIAGo Pro's and the xArm 7's
shoulders near their colinear configuration, where issue 26's limit cycle was).  Prints a
Markdown table: per law and robot the largest per-joint RMS error (rad or m), the tool
position RMS (mm, task-space laws), the saturation (max over joints of the % of cycles at the
effort limit) and the chatter (max over joints of the % of cycles at the effort limit with the
command's sign flipped since the previous cycle).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "test" / "control"), str(REPO / "test" / "support")]  # test_any_arm, its helpers


def main(argv: list[str] | None = None) -> int:
    from test_any_arm import BUNDLED, REAL, load

    from rbd_ros.control.gains import LAWS
    from rbd_ros.control.tour import plan_tour
    from rbd_ros.sim.closed_loop import run_tour

    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=0.0, help="s; 0: the whole tour")
    ap.add_argument("--robots", default=",".join(BUNDLED + list(REAL)))
    args = ap.parse_args(argv)
    names = args.robots.split(",")
    cells: dict[tuple[str, str], str] = {}
    t0 = time.perf_counter()
    for name in names:
        model = load(name)
        tour = plan_tour(model, segment_time=2.0)
        for law in LAWS:
            r = run_tour(model, law, tour=tour, duration=args.duration or None)
            cell = f"{r.rms_error.max():.1e}"
            if law in ("task_pd", "resolved_acceleration"):
                cell += f" / {1e3 * r.tool_position_rms:.2f} mm"
            cells[name, law] = cell + (f" / sat {100 * r.saturated_joint.max():.1f} %"
                                      f" / chatter {100 * r.chatter_joint.max():.1f} %")
    print("| law | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for law in LAWS:
        print(f"| {law} | " + " | ".join(cells[n, law] for n in names) + " |")
    print("\ncell: max RMS error / tool RMS (task laws) / max over joints of % cycles at the "
          "effort limit / of % at it with a sign flip")
    what = f"{args.duration:g} s" if args.duration else "the whole tour"
    print(f"{len(names) * len(LAWS)} runs of {what} in "
          f"{time.perf_counter() - t0:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
