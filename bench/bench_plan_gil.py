#!/usr/bin/env python3
"""The control cycle while a trajectory is planned (issue 37): the longest gap between cycles of
a ``ControlLoop`` whose cycle runs on its own thread at ~1 kHz (sleep 1 ms, the controller
node's GIL switch interval, 0.1 ms) while its planning worker plans a 3000-point, 7-joint
``~/joint_trajectory`` (the bundled ``arm7``, PD + gravity; a 0.3 rad raised-cosine move of
every joint, positions only).

Two cases: ``check`` (30 s: feasible, the torque check along the path only) and ``retime``
(0.1 s: too fast, retimed by TOPP-RA under the torque limits, then checked), each with the
path's inverse dynamics ``held`` (``Robot.inverse_dynamics``: kernels that hold the GIL, as
before) and ``released`` (``PathLimits.torques``: ``rnea.rnea_rows_released``, ``nogil``),
interleaved repeats in one process, a fresh loop each.

    .venv/bin/python bench/bench_plan_gil.py [--repeats 7]
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rbd_ros.control.laws import make_law  # noqa: E402
from rbd_ros.control.loop import ControlLoop  # noqa: E402
from rbd_ros.control.path_limits import PathLimits  # noqa: E402
from rbd_ros.model import MdhModel  # noqa: E402

POINTS = 3000
CASES = {"check": 30.0, "retime": 0.1}  # the move's duration, s
RELEASED = PathLimits.torques


def held(self: PathLimits, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    return self.robot.inverse_dynamics(q, qd, qdd, include_actuators=True)


def _stamp(t: float) -> NS:
    return NS(sec=int(t), nanosec=int(round((t % 1) * 1e9)))


def one(model: MdhModel, duration: float) -> tuple[float, float, int, str]:
    """(planning s, longest cycle gap s, cycles meanwhile, the answer line)."""
    names, n = list(model.joint_names), model.dof
    q0 = np.clip(np.zeros(n), model.lower + 0.3, model.upper - 0.3)
    lines: list[str] = []
    loop = ControlLoop(model, make_law("pd_gravity", model), log=lambda level, text: lines.append(text))
    loop.warm_planner()
    stamps: list[float] = []
    stop = threading.Event()

    def cycle() -> None:
        base = time.monotonic()
        while not stop.is_set():
            now = time.monotonic()
            stamps.append(now)
            loop.joint_state(names, q0, np.zeros(n), 1.0 + now - base)
            loop.cycle(1.0 + now - base)
            time.sleep(1e-3)

    loop.joint_state(names, q0, np.zeros(n), 1.0)
    loop.cycle(1.0)
    thread = threading.Thread(target=cycle)
    thread.start()
    try:
        time.sleep(0.2)
        s = np.linspace(0.0, 1.0, POINTS + 1)[1:]
        P = q0 + np.outer(0.5 - 0.5 * np.cos(np.pi * s), np.full(n, 0.3))
        msg = NS(header=NS(stamp=_stamp(0.0)), joint_names=names,
                 points=[NS(time_from_start=_stamp(t), positions=list(p), velocities=[], accelerations=[], effort=[])
                         for t, p in zip(duration * s, P)])
        t0 = time.monotonic()
        loop.trajectory(msg)
        while not loop.idle():
            time.sleep(0.002)
        t1 = time.monotonic()
    finally:
        stop.set()
        thread.join()
        loop.close()
    t = np.array([x for x in stamps if x >= t0])
    t = t[t <= t1 + np.diff(t).max(initial=0.0)] if len(t) > 1 else t
    gap = float(np.diff(np.r_[t0, t]).max()) if len(t) else t1 - t0
    return t1 - t0, gap, len(t), next(x for x in reversed(lines) if x.startswith("trajectory "))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    sys.setswitchinterval(1e-4)  # the controller node's (controller_common.SWITCH_INTERVAL)
    model = MdhModel.from_yaml(str(ROOT / "config" / "arm7.yaml"))
    for mode in (held, RELEASED):  # compile both, plan once each
        PathLimits.torques = mode
        for d in CASES.values():
            one(model, d)
    out: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    for _ in range(args.repeats):
        for case, d in CASES.items():
            for name, mode in (("held", held), ("released", RELEASED)):
                PathLimits.torques = mode
                plan, gap, cycles, line = one(model, d)
                assert line.startswith("trajectory accepted"), line
                out.setdefault((case, name), []).append((plan, gap, cycles))
    PathLimits.torques = RELEASED
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"{POINTS} points x 7 joints, {args.repeats} interleaved repeats, load average {' '.join(load)}")
    print("| case | inverse dynamics | planning (median) | longest cycle gap: median / max | cycles meanwhile |")
    print("|---|---|---|---|---|")
    for (case, name), rows in out.items():
        a = np.array(rows)
        print(f"| {case} ({CASES[case]:g} s) | {name} | {np.median(a[:, 0]) * 1e3:.0f} ms | "
              f"{np.median(a[:, 1]) * 1e3:.1f} / {a[:, 1].max() * 1e3:.1f} ms | {np.median(a[:, 2]):.0f} |")


if __name__ == "__main__":
    main()
