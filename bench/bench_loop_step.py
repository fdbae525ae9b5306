"""Per-step time of the composed loop without ROS (issue 20): ``sim.measure`` ->
``ControlLoop.joint_state`` -> ``ControlLoop.cycle`` (the law) -> ``sim.command`` ->
``sim.step``, what the MuJoCo bridge's stepping thread does each step in composed mode minus
publishing.  Prints mean, p50, p99 and max per step (us) and the transient allocation of a step
(tracemalloc high-water mark above the start, B) for PUMA 560 and arm7, computed torque.

``.venv/bin/python bench/bench_loop_step.py [--steps 20000] [--robots puma560 arm7]
[--law computed_torque]`` (the step: ``rbd_ros.sim.closed_loop.composed_loop``).  Not run by CI.
"""
from __future__ import annotations

import argparse
import gc
import itertools
import sys
import time
import tracemalloc

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--robots", nargs="+", default=["puma560", "arm7", "mobile_arm7"])
    ap.add_argument("--law", default="computed_torque")
    ap.add_argument("--mobile-law", default="whole_body_computed_torque")
    args = ap.parse_args()
    print(f"{'robot':<12} {'mean us':>8} {'p50 us':>8} {'p99 us':>8} {'max us':>8} {'transient B':>12}")
    from rbd_ros.model import MdhModel
    from rbd_ros.sim.closed_loop import composed_loop, mobile_composed_loop
    from rbd_ros.util.resources import config_file

    for robot in args.robots:
        model = MdhModel.from_yaml(str(config_file(robot)))
        if model.base_type in ("planar", "diff_drive"):
            step, _, _ = mobile_composed_loop(model, args.mobile_law)
        else:
            step, _, _ = composed_loop(model, args.law)
        for _ in range(2000):
            step()
        gc.collect()
        durations = np.empty(args.steps)
        clock = time.perf_counter
        for k in range(args.steps):
            t0 = clock()
            step()
            durations[k] = clock() - t0
        tracemalloc.start(1)
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        for _ in itertools.repeat(None, 1000):
            step()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        us = durations * 1e6
        print(f"{robot:<12} {us.mean():8.1f} {np.percentile(us, 50):8.1f} "
              f"{np.percentile(us, 99):8.1f} {us.max():8.1f} {peak - start:12d}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
