"""Start-up cost (issue 39): each node's time to its ``ready`` line with an empty numba cache
(cold) and again with the cache that run left (warm), and the first-call time of each public
``Robot`` method in a process whose cache is empty.

* **nodes**: ``rbd-ros controller`` (the bundled PUMA 560 under computed torque, its
  defaults), ``rbd-ros dynamics-server`` and ``rbd-ros mujoco-bridge`` (their defaults), each
  started as a process with ``NUMBA_CACHE_DIR`` pointing at a new empty folder (rbd_ros's
  cache locator honours it: ``rbd_ros.algorithm.jit_cache``), timed from ``Popen`` to the
  line containing ``: ready``, stopped, then started again on the same folder (warm).  The
  nodes run one at a time, each on a ROS domain of its own, discovery on localhost only;
* **robot**: one process on an empty cache: ``import rbd_ros``, ``Robot.from_urdf`` (the
  bundled PUMA 560) and the first ``inverse_dynamics`` (the issue's <= 5 s), then the first
  call of every other public method, in the order listed (a method that shares kernels with
  an earlier one pays only for its own); then the same in a second process on that cache.

Beside the figures: the CPU (``/proc/cpuinfo``), the load average before and after, and the
scheduling floor of ``bench_sched_floor.py`` (its bare 1 kHz loop at nice 0, busy 0, 2 s: how
late this machine starts a cycle right now).  Prints a table and writes
``bench/results/startup.json``.  ~2 minutes on the idle 2-core machine (``make bench`` runs it).

``.venv/bin/python bench/bench_startup.py [--nodes controller dynamics-server mujoco-bridge]
[--skip-robot] [--timeout 600]``
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RBD_ROS = [str(REPO / ".venv" / "bin" / "rbd-ros")] if (REPO / ".venv" / "bin" / "rbd-ros").exists() \
    else [sys.executable, "-m", "rbd_ros.cli"]
NODES = ("controller", "dynamics-server", "mujoco-bridge")
#: the nodes that load kernels on a worker after ``ready`` (the dynamics server's services, the
#: controller's IK); the bridge steps all the time (realtime), so it is never idle
WORKERS = ("controller", "dynamics-server")
TARGETS = {"cold": 20.0, "warm": 2.0, "import_from_urdf_inverse_dynamics": 5.0}

#: the first-call script of ``robot`` (run in a fresh process): one line of JSON per step
_ROBOT_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
out = []
def step(name, call):
    t, c = time.perf_counter(), time.process_time()
    call()
    out.append((name, time.perf_counter() - t, time.process_time() - c))
step("import rbd_ros", lambda: __import__("rbd_ros"))
import numpy as np
import rbd_ros
from rbd_ros.util.resources import bundled_urdf
box = {}
step("Robot.from_urdf (puma560)", lambda: box.setdefault("r", rbd_ros.Robot.from_urdf(str(bundled_urdf("puma560")))))
r = box["r"]
n = r.dof
q, v, a = np.full(n, 0.3), np.full(n, 0.1), np.ones(n)
step("inverse_dynamics", lambda: r.inverse_dynamics(q, v, a))
first, first_cpu = time.perf_counter() - t0, time.process_time()
T = r.fk(q)
calls = [
    ("forward_dynamics", lambda: r.forward_dynamics(q, v, a)),
    ("mass_matrix", lambda: r.mass_matrix(q)),
    ("gravity", lambda: r.gravity(q)),
    ("bias", lambda: r.bias(q, v)),
    ("nonlinear_effects", lambda: r.nonlinear_effects(q, v)),
    ("coriolis_matrix", lambda: r.coriolis_matrix(q, v)),
    ("fk", lambda: r.fk(q)),
    ("link_poses", lambda: r.link_poses(q)),
    ("jacobian", lambda: r.jacobian(q)),
    ("jacobian_dot_times_qd", lambda: r.jacobian_dot_times_qd(q, v)),
    ("analytic_jacobian", lambda: r.analytic_jacobian(q)),
    ("kinetic_energy", lambda: r.kinetic_energy(q, v)),
    ("potential_energy", lambda: r.potential_energy(q)),
    ("static_torques", lambda: r.static_torques(q, np.zeros(6))),
    ("joint_wrenches", lambda: r.joint_wrenches(q, np.zeros(6))),
    ("ik", lambda: r.ik(T, seeds=q)),
    ("simulate", lambda: r.simulate(q, v, np.zeros((10, n)), 1e-3)),
    ("inverse_dynamics, a batch of 4", lambda: r.inverse_dynamics(np.tile(q, (4, 1)), np.tile(v, (4, 1)),
                                                                 np.tile(a, (4, 1)))),
    ("forward_dynamics, a batch of 4", lambda: r.forward_dynamics(np.tile(q, (4, 1)), np.tile(v, (4, 1)),
                                                                 np.tile(a, (4, 1)))),
    ("mass_matrix, a batch of 4", lambda: r.mass_matrix(np.tile(q, (4, 1)))),
]
for name, call in calls:
    step(name, call)
print(json.dumps({"steps": out, "import_from_urdf_inverse_dynamics": first,
                  "import_from_urdf_inverse_dynamics_cpu": first_cpu, "total": time.perf_counter() - t0,
                  "total_cpu": time.process_time()}))
"""


def _env(cache: str, domain: int) -> dict[str, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, ROS_DOMAIN_ID=str(domain),
               ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", PYTHONUNBUFFERED="1")
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) process ``pid`` has used so far (``/proc/<pid>/stat``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pid: int, limit: float = 300.0) -> float | None:
    """Wait until process ``pid`` is idle (under 0.05 s of CPU in a second: its workers have
    loaded or compiled what they load after ``ready``), at most ``limit`` s; its CPU seconds."""
    last, until = cpu_seconds(pid), time.monotonic() + limit
    while last is not None and time.monotonic() < until:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        if now is None or now - last < 0.05:
            return now
        last = now
    return last


def time_to_ready(node: str, cache: str, domain: int, timeout: float) -> dict:
    """Seconds from ``Popen`` to the node's ``: ready`` line (None if it exited or timed out),
    the CPU seconds the node had used by then (what the machine's load does not inflate), and
    once idle (``settle``: what its workers compiled after ``ready`` too, so that the warm run
    that follows finds a full cache)."""
    start = time.perf_counter()
    proc = subprocess.Popen([*RBD_ROS, node], env=_env(cache, domain), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, cwd=REPO)
    ready, cpu, idle, tail = None, None, None, []
    try:
        deadline = start + timeout
        assert proc.stdout is not None
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-5:]
            if ": ready" in line:
                ready, cpu = time.perf_counter() - start, cpu_seconds(proc.pid)
                idle = settle(proc.pid) if node in WORKERS else cpu
                break
            if time.perf_counter() > deadline:
                break
    finally:
        proc.send_signal(2)  # SIGINT: the nodes' own shutdown
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    out = {"seconds": ready, "cpu_seconds": cpu, "cpu_seconds_idle": idle}
    if ready is None:
        out["tail"] = tail
    return out


def robot_first_calls(cache: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _ROBOT_SCRIPT], env=_env(cache, 0), capture_output=True,
                          text=True, cwd=REPO, check=False)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def sched_floor() -> dict:
    """``bench_sched_floor``'s bare 1 kHz loop, nice 0, nothing busy beside it, 2 s."""
    sys.path.insert(0, str(REPO / "bench"))
    import bench_sched_floor as floor

    return {"policy": "nice 0", "busy": 0, **floor.loop("nice 0", 2.0, floor.calibrate(200.0))}


def machine() -> dict:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                                capture_output=True, text=True).stdout.strip())
    return {"cpu": cpu, "cpus": os.cpu_count(), "commit": commit, "uncommitted_changes": dirty}


def write_result(name: str, load0: float, **fields: object) -> Path:
    """``bench/results/<name>.json``: the machine, the load at the start (``load0``) and now,
    the scheduling floor, then ``fields``; returns the path."""
    out = {**machine(), "load": [load0, os.getloadavg()[0]], "sched_floor": sched_floor(), **fields}
    path = REPO / "bench" / "results" / f"{name}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path.relative_to(REPO)}")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", nargs="*", default=list(NODES), choices=NODES)
    ap.add_argument("--skip-robot", action="store_true", help="no Robot first-call run")
    ap.add_argument("--timeout", type=float, default=600.0, help="s per node start (default 600)")
    ap.add_argument("--output", default=str(REPO / "bench" / "results" / "startup.json"))
    args = ap.parse_args()
    result: dict = {"machine": machine(), "load_before": list(os.getloadavg()), "sched_floor": sched_floor(),
                    "targets_s": TARGETS, "nodes": {}}
    floor = result["sched_floor"]
    print(f"{result['machine']['cpu']}, {result['machine']['cpus']} CPUs; load {result['load_before']}; "
          f"scheduling floor (nice 0, idle): {floor.get('missed_pct', float('nan')):.2f} % late cycles, "
          f"lag p99 {floor.get('lag_p99_us', float('nan')):.0f} us")
    domain = random.SystemRandom().randint(201, 230)
    with tempfile.TemporaryDirectory(prefix="rbd_ros-startup-") as root:
        for node in args.nodes:
            cache = os.path.join(root, node)
            os.mkdir(cache)
            cold = time_to_ready(node, cache, domain, args.timeout)
            warm = time_to_ready(node, cache, domain, args.timeout)
            result["nodes"][node] = {"cold": cold, "warm": warm}
            fmt = lambda r: ("failed" if r["seconds"] is None  # noqa: E731
                             else f"{r['seconds']:6.1f} s ({r['cpu_seconds']:5.1f} s CPU; "
                                  f"{r['cpu_seconds_idle'] or 0:5.1f} once idle)")
            print(f"{node:<16} cold {fmt(cold)} (target <= {TARGETS['cold']:.0f} s)   "
                  f"warm {fmt(warm)} (target <= {TARGETS['warm']:.0f} s)", flush=True)
            for r in (cold, warm):
                if r["seconds"] is None:
                    print("   " + "\n   ".join(r["tail"]))
        if not args.skip_robot:
            cache = os.path.join(root, "robot")
            os.mkdir(cache)
            cold, warm = robot_first_calls(cache), robot_first_calls(cache)
            result["robot"] = {"cold": cold, "warm": warm}
            if "error" in cold or "error" in warm:
                print("Robot first calls failed:", cold.get("error") or warm.get("error"))
            else:
                key = "import_from_urdf_inverse_dynamics"
                print(f"import rbd_ros; Robot.from_urdf(puma560).inverse_dynamics(...): cold {cold[key]:.2f} s "
                      f"({cold[key + '_cpu']:.2f} s CPU; target <= 5 s), warm {warm[key]:.2f} s")
                print(f"{'first call (empty cache, in this order)':<42} {'cold s':>8} {'CPU s':>8} {'warm s':>8}")
                for (name, c, cc), (_, w, _) in zip(cold["steps"], warm["steps"]):
                    print(f"  {name:<40} {c:8.3f} {cc:8.3f} {w:8.3f}")
                print(f"  {'all of them':<40} {cold['total']:8.3f} {cold['total_cpu']:8.3f} {warm['total']:8.3f}")
    result["load_after"] = list(os.getloadavg())
    Path(args.output).write_text(json.dumps(result, indent=1) + "\n")
    print(f"load after {result['load_after']}; written {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
