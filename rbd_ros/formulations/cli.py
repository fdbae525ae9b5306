"""``rbd-ros formulations URDF [--base-link L] [--tip-link L]``: every formulation against the fast path.

For random states (seed fixed), a random tool wrench and the URDF's gravity, prints each
method's largest difference from RNEA (inverse dynamics), from CRBA (mass matrix) and, for
the Coriolis matrices, of ``C qd`` from RNEA's ``h - g``, relative as
``max |a - b| / max(1, max |b|)``, with its median time per call.  Exit code 1 if any
difference exceeds ``--tol`` (1e-9), 2 on a bad argument or robot (one line
``rbd-ros formulations: error: ...``: ``--tol`` must be a finite number >= 0, ``--states`` a
positive integer, ``--seed`` >= 0).
"""
from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from rbd_ros.formulations import METHODS
from rbd_ros.util.flags import add_chain_flags


def rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    """``max |a - b| / max(1, max |b|)``."""
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def _time(fn, args_list) -> float:
    """Median seconds per call over the states (after one warm-up call each)."""
    for a in args_list:
        fn(*a)
    ts = []
    for a in args_list:
        reps = 3
        t0 = time.perf_counter()
        for _ in range(reps):
            fn(*a)
        ts.append((time.perf_counter() - t0) / reps)
    return float(np.median(ts))


def compare(robot, states: int = 5, seed: int = 0) -> list[tuple[str, str, float, float]]:
    """Rows ``(quantity, method, largest relative difference, seconds per call)``."""
    rng = np.random.default_rng(seed)
    n = robot.dof
    X = rng.uniform(-1.5, 1.5, (states, 3, n))
    W = rng.normal(size=(states, 6))
    rows = []
    ref = [robot.inverse_dynamics(q, qd, qdd, tool_wrench=w) for (q, qd, qdd), w in zip(X, W)]
    for m in METHODS["inverse_dynamics"]:
        err = max(rel_diff(robot.inverse_dynamics(q, qd, qdd, tool_wrench=w, method=m), r)
                  for (q, qd, qdd), w, r in zip(X, W, ref))
        t = _time(lambda q, qd, qdd, w, m=m: robot.inverse_dynamics(q, qd, qdd, tool_wrench=w, method=m),
                  [(*x, w) for x, w in zip(X, W)])
        rows.append(("inverse_dynamics", m, err, t))
    refM = [robot.mass_matrix(x[0]) for x in X]
    for m in METHODS["mass_matrix"]:
        err = max(rel_diff(robot.mass_matrix(x[0], method=m), r) for x, r in zip(X, refM))
        t = _time(lambda q, m=m: robot.mass_matrix(q, method=m), [(x[0],) for x in X])
        rows.append(("mass_matrix", m, err, t))
    refC = [robot.bias(x[0], x[1]) - robot.gravity(x[0]) for x in X]
    for m in METHODS["coriolis_matrix"]:
        err = max(rel_diff(robot.coriolis_matrix(x[0], x[1], method=m) @ x[1], r) for x, r in zip(X, refC))
        t = _time(lambda q, qd, m=m: robot.coriolis_matrix(q, qd, method=m), [(x[0], x[1]) for x in X])
        rows.append(("coriolis_matrix (C qd)", m, err, t))
    return rows


def _check(args: argparse.Namespace) -> str:
    """What is wrong with the options ('' if nothing): a NaN ``--tol`` would fail every row
    (``err <= nan`` is false) and still exit 0; no states has no maximum to report."""
    if not (math.isfinite(args.tol) and args.tol >= 0):
        return f"--tol must be a finite number >= 0 (a relative difference), got {args.tol}"
    if args.states < 1:
        return f"--states must be a positive integer (random states to compare), got {args.states}"
    if args.seed < 0:
        return f"--seed must be an integer >= 0, got {args.seed}"
    return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="rbd-ros formulations", description=__doc__.split("\n\n")[1])
    p.add_argument("urdf", help="robot .urdf (or .xacro) file")
    add_chain_flags(p)  # --base-link, --tip-link (--base, --tip: deprecated)
    p.add_argument("--states", type=int, default=5, help="random states (default 5)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tol", type=float, default=1e-9, help="largest accepted relative difference")
    args = p.parse_args(argv)
    problem = _check(args)
    if problem:
        print(f"rbd-ros formulations: error: {problem}", file=sys.stderr)
        return 2
    from rbd_ros.robot import Robot  # lazy: the robot front (75 ms of import)

    try:
        robot = Robot.from_urdf(args.urdf, base_link=args.base_link, tip_link=args.tip_link)
    except (OSError, ValueError) as exc:
        print(f"rbd-ros formulations: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    print(f"{robot.model.name}: {robot.dof} joints, {args.states} random states with gravity and a tool wrench")
    rows = compare(robot, args.states, args.seed)
    print(f"{'quantity':<24} {'method':<20} {'max rel diff':>13} {'us/call':>10}")
    bad = 0
    for kind, m, err, t in rows:
        flag = "" if err <= args.tol else "  FAIL"
        bad += err > args.tol
        print(f"{kind:<24} {m:<20} {err:13.2e} {t * 1e6:10.1f}{flag}")
    if bad:
        print(f"{bad} method(s) differ by more than {args.tol:g}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
