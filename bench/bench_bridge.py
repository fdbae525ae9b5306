"""Benchmark of the MuJoCo bridge with a 7-DoF arm (``rbd_ros.sim.examples.seven_dof``).

1. realtime at 1 kHz for ``--duration`` s (default 60) with the echo controller
   (``bench/echo_controller.py``, another process) closing the loop: achieved real-time
   factor (target >= 0.99) and missed steps (target < 1 %), step-time p99, from the bridge's
   own stats lines (one a second) over the measured window, after a 3 s warm-up;
2. lockstep: steps per second with the echo controller in another process (one step per
   command, one command per state), for ``--lockstep-duration`` s.

Prints a table and writes ``bench/results/bridge.json``.  Not run by CI.

``.venv/bin/python bench/bench_bridge.py [--duration 60] [--lockstep-duration 10]``
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WARMUP = 3.0  # s after the controller starts before the measured window
sys.path.insert(0, str(REPO))

from rbd_ros.ros.bringup.processes import NodeProcess  # noqa: E402
from rbd_ros.sim.examples import SEVEN_DOF_POSE, seven_dof  # noqa: E402


def stats_lines(output: str) -> list[dict[str, float]]:
    """Every ``mujoco_bridge: stats`` line as numbers (rtf, rate: over the line's window;
    steps, missed_steps, commands: cumulative; the line at exit covers the whole run)."""
    lines = [ln for ln in output.splitlines() if "mujoco_bridge: stats" in ln]
    if not lines:
        raise RuntimeError(f"no stats line from the bridge:\n{output}")
    return [{k: float(v) for k, v in re.findall(r"(\w+)=([-\d.]+)", ln)} for ln in lines]


def window(stats: list[dict[str, float]], first: int) -> dict[str, float]:
    """Totals over the periodic lines from ``first`` on (the warm-up before is left out)."""
    periodic = stats[:-1]  # the last line is the whole-run line printed at exit
    if len(periodic) - first < 2:
        return stats[-1]
    a, b = periodic[first], periodic[-1]
    part = periodic[first + 1:]
    return {"steps": b["steps"] - a["steps"], "missed_steps": b["missed_steps"] - a["missed_steps"],
            "commands": b["commands"] - a["commands"],
            "rtf": sum(s["rtf"] for s in part) / len(part),
            "step_p99": max(s["step_p99"] for s in part)}


def run(mode: str, duration: float, model_yaml: str, rt_priority: int = 0) -> dict[str, float]:
    params = ["--ros-args", "-p", f"model_yaml:={model_yaml}", "-p", f"mode:={mode}",
              "-p", f"rt_priority:={rt_priority}",
              "-p", "initial_positions:=[" + ", ".join(map(str, SEVEN_DOF_POSE)) + "]",
              "-p", "stats_period:=1.0"]
    bridge = NodeProcess(["mujoco-bridge", *params])
    echo = None
    try:
        bridge.wait_for("mujoco_bridge: ready", 60)
        echo = subprocess.Popen([sys.executable, str(REPO / "bench" / "echo_controller.py"), "2.0"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        assert echo.stdout is not None
        while "echo_controller: ready" not in echo.stdout.readline():
            if echo.poll() is not None:
                raise RuntimeError("the echo controller did not start")
        time.sleep(WARMUP)
        first = len(stats_lines(bridge.output)) - 1 if "stats" in bridge.output else 0
        time.sleep(duration)
    finally:
        if echo is not None:
            echo.send_signal(subprocess.signal.SIGINT)
            echo_out = echo.communicate(timeout=20)[0]
        code = bridge.stop()
    if code not in (0, None):
        raise RuntimeError(f"bridge exited with {code}:\n{bridge.output}")
    stats = window(stats_lines(bridge.output), first)
    stats["rt_priority_refused"] = "SCHED_FIFO refused" in bridge.output
    m = re.search(r"rate=([\d.]+) Hz", echo_out or "")
    stats["controller_rate"] = float(m.group(1)) if m else float("nan")
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=60.0, help="realtime run, s (wall)")
    ap.add_argument("--lockstep-duration", type=float, default=10.0, help="lockstep run, s")
    ap.add_argument("--rt-priority", type=int, default=0,
                    help="the bridge's rt_priority (SCHED_FIFO) in realtime mode; 0 = off")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "bridge.json"))
    args = ap.parse_args(argv)
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    with tempfile.TemporaryDirectory() as tmp:
        model_yaml = str(Path(tmp) / "seven_dof.yaml")
        seven_dof().to_yaml(model_yaml)
        rt = run("realtime", args.duration, model_yaml, args.rt_priority)
        ls = run("lockstep", args.lockstep_duration, model_yaml)
    steps = rt["steps"]
    missed_pct = 100.0 * rt["missed_steps"] / steps if steps else float("nan")
    result = {
        "robot": "seven_dof (Panda MDH table, 7 DoF)", "timestep": 0.001, "integrator": "RK4",
        "machine": {"cpus": os.cpu_count(), "load_average_at_end": os.getloadavg(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "realtime": {"duration_s": args.duration, "rt_priority": args.rt_priority,
                     "rt_priority_refused": bool(rt["rt_priority_refused"]), "steps": int(steps),
                     "rtf": rt["rtf"],
                     "missed_steps": int(rt["missed_steps"]), "missed_pct": missed_pct,
                     "step_time_p99_us": rt["step_p99"], "commands": int(rt["commands"]),
                     "controller_rate_hz": rt["controller_rate"],
                     "pass": bool(rt["rtf"] >= 0.99 and missed_pct < 1.0)},
        "lockstep": {"duration_s": args.lockstep_duration, "steps": int(ls["steps"]),
                     "steps_per_s": ls["controller_rate"],
                     "step_time_p99_us": ls["step_p99"]},
    }
    print(f"{'bridge benchmark (7 DoF, 1 kHz, RK4)':<44}{'value':>14}{'target':>12}")
    rows = [("realtime: real-time factor", f"{rt['rtf']:.4f}", ">= 0.99"),
            ("realtime: missed steps", f"{int(rt['missed_steps'])} ({missed_pct:.3f} %)", "< 1 %"),
            ("realtime: step + publish p99", f"{rt['step_p99']:.0f} us", ""),
            ("realtime: commands from the controller", f"{int(rt['commands'])}", ""),
            ("lockstep: steps/s with a controller process", f"{ls['controller_rate']:.0f}", ""),
            ("lockstep: step + publish p99", f"{ls['step_p99']:.0f} us", "")]
    for name, value, target in rows:
        print(f"{name:<44}{value:>14}{target:>12}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0 if result["realtime"]["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
