"""A bringup's CPU with its nodes forked from the fork server against fresh interpreters (issue 39).

    .venv/bin/python bench/bench_fork_server.py [--repeats 3] [--duration 1.2]

Runs ``rbd-ros bringup --duration D --no-video`` (the bundled PUMA 560 under computed torque,
lockstep) ``repeats`` times each way, interleaved: ``RBD_ROS_FORK_SERVER=1`` (the default: the
bringup's nodes forked from its server) and ``=0`` (each node a fresh ``python -m``).  This
process is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every process of the run, the
server and its children included, is reaped here and counted: the whole tree's CPU seconds
(``RUSAGE_CHILDREN``), which the machine's load does not inflate, and the wall time.  Writes
the medians, their ratio, the CPU and the load to ``bench/results/fork_server.json``.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PR_SET_CHILD_SUBREAPER = 36


def tree_run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s of the whole process tree) of ``cmd``; exits if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    while True:  # the orphans re-parented here (a fork server's children, the server)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        sys.exit(f"bringup failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--duration", type=float, default=1.2)
    args = ap.parse_args(argv)
    if ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1) != 0:
        sys.exit("needs Linux's PR_SET_CHILD_SUBREAPER")
    cmd = [sys.executable, "-m", "rbd_ros.cli", "bringup", "--duration", str(args.duration),
           "--no-video", "--quiet"]
    domain = os.environ.get("ROS_DOMAIN_ID", "0")
    runs: dict[str, list[tuple[float, float]]] = {"forked": [], "fresh": []}
    load0 = os.getloadavg()[0]
    for _ in range(args.repeats):
        for name, switch in (("forked", "1"), ("fresh", "0")):
            env = {**os.environ, "RBD_ROS_FORK_SERVER": switch, "ROS_DOMAIN_ID": domain}
            wall, cpu = tree_run(cmd, env)
            runs[name].append((wall, cpu))
            print(f"{name:7s} wall {wall:6.2f} s  tree CPU {cpu:6.2f} s", flush=True)
    med = {k: {"wall_s": statistics.median(w for w, _ in v), "cpu_s": statistics.median(c for _, c in v)}
           for k, v in runs.items()}
    ratio = med["forked"]["cpu_s"] / med["fresh"]["cpu_s"]
    print(f"median tree CPU: forked {med['forked']['cpu_s']:.2f} s, fresh {med['fresh']['cpu_s']:.2f} s "
          f"(ratio {ratio:.2f}); wall {med['forked']['wall_s']:.2f} / {med['fresh']['wall_s']:.2f} s")
    sys.path.insert(0, str(REPO / "bench"))
    import bench_startup

    bench_startup.write_result("fork_server", load0, duration_s=args.duration, repeats=args.repeats,
                               median=med, cpu_ratio_forked_to_fresh=ratio, runs=runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
