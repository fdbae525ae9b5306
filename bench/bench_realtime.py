"""Realtime at 1 kHz on a busy machine: the law in the bridge's loop vs a controller process
(issue 20).

For PUMA 560 and arm7, computed torque, ``rbd-ros bringup --mode realtime`` for ``--seconds``
simulated seconds (default 30), composed (``--composed``) and separate processes, with 0, 1
and 2 CPU-bound processes (``while True: pass``) beside them, without real-time priority, and
with ``--rt-priority`` (SCHED_FIFO, reported when refused) under 2 busy processes.  Per run:
missed cycles (composed: steps started more than a period late; separate: steps without a
fresh command), their share of the run's 1 kHz wall-clock slots, RTF, step-period jitter p99 (the bridge's diagnostics
at the end: ``|period - 1 ms|`` over the last ~16 s), and the tracking error (largest per-joint
RMS) divided by a composed lockstep run's (target: within 2x).

Targets of the issue: composed < 0.5 % missed with two busy processes on 2 cores without
real-time priority, < 0.05 % with it; the separate-process numbers beside them.

Prints a table and writes ``bench/results/realtime.json``.  Not run by CI.

``.venv/bin/python bench/bench_realtime.py [--seconds 30] [--robots puma560 arm7] [--busy 0 1 2]``
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUSY = [sys.executable, "-c", "while True: pass"]


def bringup(robot: str, mode: str, composed: bool, seconds: float, rt_priority: int = 0) -> dict:
    """One ``rbd-ros bringup`` run; its JSON report."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", robot, "--controller",
               "computed_torque", "--mode", mode, "--duration", str(seconds), "--quiet",
               "--json", str(out)]
        if composed:
            cmd.append("--composed")
        if rt_priority:
            cmd += ["--rt-priority", str(rt_priority)]
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False,
                              timeout=20 * seconds + 300)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}")
        return json.loads(out.read_text())


def with_busy(n: int, fn, *args, **kwargs):
    """``fn(*args)`` while ``n`` CPU-bound processes run."""
    busy = [subprocess.Popen(BUSY) for _ in range(n)]
    try:
        time.sleep(0.5 if n else 0.0)
        return fn(*args, **kwargs)
    finally:
        for p in busy:
            p.kill()
            p.wait()


def row(report: dict, seconds: float, lockstep_rms: float) -> dict:
    tm = report.get("timing", {})
    missed = int(report["missed_cycles"])
    rms = max(report["rms_error"])
    slots = 1000.0 * seconds / max(report["rtf"], 1e-9)  # 1 kHz slots of the run's wall time
    return {"missed": missed, "missed_pct": 100.0 * missed / slots,
            "rtf": report["rtf"], "jitter_p99_us": tm.get("jitter_p99_us", float("nan")),
            "period_p99_us": tm.get("period_p99_us", float("nan")),
            "period_max_us": tm.get("period_max_us", float("nan")),
            "overruns": tm.get("overruns", 0), "rms_error": rms,
            "rms_vs_lockstep": rms / lockstep_rms if lockstep_rms > 0 else float("nan"),
            "realtime": tm.get("realtime", []), "mode": report.get("mode", "")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="simulated seconds per run")
    ap.add_argument("--robots", nargs="+", default=["puma560", "arm7"])
    ap.add_argument("--busy", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--rt-priority", type=int, default=80,
                    help="SCHED_FIFO priority of the extra runs under the most busy processes "
                         "(0 = skip them)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "realtime.json"))
    args = ap.parse_args()
    os.environ.setdefault("PYTHONPATH", str(REPO))
    # a ROS domain of its own: no other bringup's tour or states on this machine cross in
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    results: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                 "load_before": os.getloadavg()},
                     "seconds": args.seconds, "runs": []}
    lines = [f"{'robot':<8} {'mode':<9} {'busy':>4} {'rt':>3} {'missed':>7} {'%':>7} "
             f"{'RTF':>6} {'jit p99 us':>10} {'per max us':>10} {'rms/lockstep':>12}"]
    for robot in args.robots:
        ref = bringup(robot, "lockstep", True, args.seconds)
        lockstep_rms = max(ref["rms_error"])
        results["runs"].append({"robot": robot, "mode": "composed lockstep", "busy": 0,
                                "rms_error": lockstep_rms})
        print(f"{robot}: composed lockstep rms {lockstep_rms:.3e}", flush=True)
        plan = [(composed, busy, 0) for busy in args.busy for composed in (True, False)]
        if args.rt_priority:
            plan += [(composed, max(args.busy), args.rt_priority) for composed in (True, False)]
        for composed, busy, rt in plan:
            rep = with_busy(busy, bringup, robot, "realtime", composed, args.seconds, rt)
            r = {"robot": robot, "composed": composed, "busy": busy, "rt_priority": rt,
                 **row(rep, args.seconds, lockstep_rms)}
            results["runs"].append(r)
            line = (f"{robot:<8} {'composed' if composed else 'separate':<9} {busy:>4} "
                    f"{rt:>3} {r['missed']:>7} {r['missed_pct']:>6.2f}% {r['rtf']:>6.3f} "
                    f"{r['jitter_p99_us']:>10.0f} {r['period_max_us']:>10.0f} "
                    f"{r['rms_vs_lockstep']:>12.2f}")
            lines.append(line)
            print(line, (f"[{'; '.join(r['realtime'])}]" if r["realtime"] else ""), flush=True)
    print("\n".join(lines))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
