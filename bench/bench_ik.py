#!/usr/bin/env python3
"""Inverse-kinematics benchmark: ``Robot.ik`` against Robotics Toolbox for Python and a
Pinocchio damped-least-squares loop, same targets, same seeds, same run.

    .venv/bin/python bench/bench_ik.py [--n 1000] [--quick]

For every bundled robot and five real arms of example-robot-data: ``n`` random reachable
poses (FK of uniformly random configurations inside the joint limits; ``[-pi, pi]`` for
unbounded joints), each solved from another random in-limit configuration (not the answer).
Success = position error <= 1e-6 m and orientation error <= 1e-6 rad (angle of
``R_target R^T``), measured by one metric for every solver (our FK, itself checked against
Pinocchio in the tests), with the solution inside the joint limits.

* ours, single: ``robot.ik(T, seeds=q0)`` from Python, one target per call (defaults);
* ours, batch: ``robot.ik(all T, seeds=all q0)``, one jitted call, ``prange`` over targets;
  also its CPU time on one thread (the machine is shared: wall times depend on the load,
  which the JSON records);
* rtb ``ikine_LM``: ``DHRobot`` of the same MDH table (``RevoluteMDH``), defaults
  (Chan's damping, 30 iterations x 100 searches, joint limits on), ``tol`` = 5e-13
  (its ``E = e^T e / 2``, so ``|e| <= 1e-6``); also rtb's C++ ``ik_LM`` with the same settings;
* pinocchio DLS: the loop of Pinocchio's IK example (``log6`` error, frame Jacobian times
  ``Jlog6``, ``v = -J^T (J J^T + damp I)^{-1} e``, ``q += v``), clamped to the limits, at most
  100 iterations per attempt and 10 attempts (random restarts inside the limits).

Writes ``bench/results/ik.json`` and prints a table (times are per target; medians and
means over the targets).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test" / "support"))  # urdf_oracles

import numba  # noqa: E402

from rbd_ros.robot import Robot  # noqa: E402
from rbd_ros.util.resources import bundled_robots, bundled_urdf  # noqa: E402

ERD = "/cmeel.prefix/share/example-robot-data/robots/"
REAL_ARMS = [  # (name, path under example-robot-data, base link, tip link)
    ("panda", "panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
    ("kinova_j2s6s200", "kinova_description/robots/kinova.urdf", "j2s6s200_link_base",
     "j2s6s200_end_effector"),
    ("z1", "z1_description/urdf/z1.urdf", "link00", "link06"),
    ("xarm7", "xarm_description/urdf/xarm7.urdf", "link_base", "link_eef"),
]
TOL = 1e-6


def robots() -> list[tuple[str, Robot]]:
    import sysconfig

    out = [(name, Robot.from_urdf(str(bundled_urdf(name)))) for name in bundled_robots()]
    root = sysconfig.get_paths()["purelib"] + ERD
    for name, rel, base, tip in REAL_ARMS:
        if Path(root + rel).exists():
            out.append((name, Robot.from_urdf(root + rel, base_link=base, tip_link=tip)))
    return out


def box(r: Robot) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = r.model.lower.copy(), r.model.upper.copy()
    lo[~np.isfinite(lo)] = -np.pi
    hi[~np.isfinite(hi)] = np.pi
    return lo, hi


def errors(r: Robot, T: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Position error (m) and rotation angle of R_t R^T (rad) of each solution."""
    F = r.fk(q)
    pe = np.linalg.norm(F[:, :3, 3] - T[:, :3, 3], axis=1)
    Re = T[:, :3, :3] @ F[:, :3, :3].transpose(0, 2, 1)
    v = np.stack([Re[:, 2, 1] - Re[:, 1, 2], Re[:, 0, 2] - Re[:, 2, 0], Re[:, 1, 0] - Re[:, 0, 1]], 1)
    oe = np.arctan2(0.5 * np.linalg.norm(v, axis=1), 0.5 * (np.trace(Re, axis1=1, axis2=2) - 1))
    return pe, oe


def score(r: Robot, T: np.ndarray, q: np.ndarray, times: np.ndarray) -> dict:
    ok_q = np.isfinite(q).all(axis=1)
    qq = np.where(ok_q[:, None], q, 0.0)
    pe, oe = errors(r, T, qq)
    lo, hi = r.model.lower - 1e-9, r.model.upper + 1e-9
    inside = np.all((qq >= lo) & (qq <= hi), axis=1)
    ok = ok_q & inside & (pe <= TOL) & (oe <= TOL)
    return {"success": float(ok.mean()), "median_ms": float(np.median(times) * 1e3),
            "mean_ms": float(np.mean(times) * 1e3), "p99_ms": float(np.percentile(times, 99) * 1e3)}


def ours(r: Robot, T: np.ndarray, Q0: np.ndarray) -> tuple[dict, dict]:
    """Single calls (wall and CPU time per call), then the batch on all threads (wall) and on
    one thread (CPU time: what the batch costs when the machine is not shared)."""
    r.ik(T[0], seeds=Q0[0])  # compile / warm
    N = len(T)
    q = np.empty((N, r.dof))
    t = np.empty(N)
    c = np.empty(N)
    for k in range(N):
        c0 = time.process_time()
        t0 = time.perf_counter()
        q[k] = r.ik(T[k], seeds=Q0[k]).positions
        t[k] = time.perf_counter() - t0
        c[k] = time.process_time() - c0
    single = score(r, T, q, t)
    single["cpu_median_ms"] = float(np.median(c) * 1e3)
    single["cpu_mean_ms"] = float(np.mean(c) * 1e3)
    r.ik(T[:4], seeds=Q0[:4])
    t0 = time.perf_counter()
    res = r.ik(T, seeds=Q0)
    dt = time.perf_counter() - t0
    batch = score(r, T, res.positions, np.full(N, dt / N))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    c0 = time.process_time()
    one = r.ik(T, seeds=Q0)
    batch["cpu_1thread_ms"] = (time.process_time() - c0) / N * 1e3
    numba.set_num_threads(threads)
    assert np.array_equal(one.positions, res.positions), "batch result depends on the thread count"
    batch["iterations_mean"] = float(res.iterations.mean())
    batch["attempts_mean"] = float(res.attempts.mean())
    return single, batch


def rtb_robot(r: Robot):
    import roboticstoolbox as rtb
    from spatialmath import SE3

    m = r.model
    lo, hi = box(r)
    links = [rtb.RevoluteMDH(a=m.a[i], alpha=m.alpha[i], d=m.d[i], offset=m.theta[i],
                             qlim=[lo[i], hi[i]]) for i in range(r.dof)]
    rr = rtb.DHRobot(links, base=SE3(m.base, check=False), tool=SE3(m.tool, check=False))
    q = np.random.default_rng(0).uniform(lo, hi, r.dof)
    assert np.abs(rr.fkine(q).A - r.fk(q)).max() < 1e-9, "rtb model differs from ours"
    return rr


def rtb(r: Robot, T: np.ndarray, Q0: np.ndarray, fast: bool) -> dict:
    rr = rtb_robot(r)
    ets = rr.ets()
    N = len(T)
    q = np.empty((N, r.dof))
    t = np.empty(N)
    for k in range(N):
        t0 = time.perf_counter()
        if fast:
            sol = ets.ik_LM(T[k], q0=Q0[k], tol=5e-13)
            q[k] = sol[0]
        else:
            sol = rr.ikine_LM(T[k], q0=Q0[k], tol=5e-13, seed=k)
            q[k] = sol.q
        t[k] = time.perf_counter() - t0
    return score(r, T, q, t)


def pin_dls(r: Robot, T: np.ndarray, Q0: np.ndarray, iters: int = 100, attempts: int = 10,
            damp: float = 1e-12) -> dict:
    import pinocchio as pin

    from urdf_oracles import pin_from_mdh

    m = pin_from_mdh(r.model)
    tool = r.model.tool
    fid = m.addFrame(pin.Frame("tool", m.njoints - 1, pin.SE3(tool[:3, :3], tool[:3, 3]),
                               pin.FrameType.OP_FRAME))
    d = m.createData()
    lo, hi = r.model.lower, r.model.upper
    blo, bhi = box(r)
    rng = np.random.default_rng(123)
    eye6 = np.eye(6)
    N = len(T)
    q_out = np.empty((N, r.dof))
    t = np.empty(N)
    for k in range(N):
        t0 = time.perf_counter()
        oMdes = pin.SE3(T[k, :3, :3], T[k, :3, 3])
        best, qbest = np.inf, Q0[k]
        for a in range(attempts):
            q = Q0[k].copy() if a == 0 else rng.uniform(blo, bhi)
            done = False
            for _ in range(iters):
                pin.framesForwardKinematics(m, d, q)
                iMd = d.oMf[fid].actInv(oMdes)
                err = pin.log(iMd).vector
                nerr = np.linalg.norm(err)
                if nerr < best:
                    best, qbest = nerr, q.copy()
                if np.linalg.norm(err[:3]) <= TOL and np.linalg.norm(err[3:]) <= TOL:
                    done = True
                    break
                J = pin.computeFrameJacobian(m, d, q, fid)  # LOCAL frame
                J = -pin.Jlog6(iMd.inverse()) @ J
                v = -J.T @ np.linalg.solve(J @ J.T + damp * eye6, err)
                q = np.clip(q + v, lo, hi)
            if done:
                break
        q_out[k] = qbest
        t[k] = time.perf_counter() - t0
    return score(r, T, q_out, t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="100 targets, for a smoke run")
    ap.add_argument("--out", default=str(ROOT / "bench/results/ik.json"))
    args = ap.parse_args()
    n = 100 if args.quick else args.n
    try:
        import roboticstoolbox
        rtb_version = roboticstoolbox.__version__
    except ImportError:
        rtb_version = None
    import pinocchio

    results = {"load_average_start": list(os.getloadavg()), "n_targets": n, "tolerance": TOL,
               "threads": numba.get_num_threads(),
               "machine": platform.processor() or platform.machine(),
               "python": platform.python_version(), "rtb": rtb_version,
               "pinocchio": pinocchio.__version__, "robots": {}}
    cols = ["ours", "ours_batch", "rtb_ikine_LM", "rtb_ik_LM_cpp", "pin_dls"]
    print(f"{n} targets per robot, success at {TOL} m / {TOL} rad, threads={results['threads']}")
    print(f"{'robot':16s} {'dof':>3s}  " + "  ".join(f"{c:>24s}" for c in cols))
    for name, r in robots():
        rng = np.random.default_rng(2024)
        lo, hi = box(r)
        T = r.fk(rng.uniform(lo, hi, (n, r.dof)))
        Q0 = rng.uniform(lo, hi, (n, r.dof))
        row = {}
        row["ours"], row["ours_batch"] = ours(r, T, Q0)
        if rtb_version is not None:
            row["rtb_ikine_LM"] = rtb(r, T, Q0, fast=False)
            row["rtb_ik_LM_cpp"] = rtb(r, T, Q0, fast=True)
        row["pin_dls"] = pin_dls(r, T, Q0)
        results["robots"][name] = {"dof": r.dof, **row}
        cells = [f"{row[c]['success'] * 100:6.1f}% {row[c]['median_ms']:7.3f}/{row[c]['mean_ms']:7.3f}"
                 if c in row else f"{'-':>24s}" for c in cols]
        print(f"{name:16s} {r.dof:3d}  " + "  ".join(f"{c:>24s}" for c in cells), flush=True)
    print("cells: success, median/mean ms per target (wall)")
    results["load_average_end"] = list(os.getloadavg())
    for name, row in results["robots"].items():
        print(f"{name:16s} ours CPU ms: single median {row['ours']['cpu_median_ms']:.3f} mean "
              f"{row['ours']['cpu_mean_ms']:.3f}; batch on 1 thread {row['ours_batch']['cpu_1thread_ms']:.3f}"
              f" per target ({row['ours_batch']['iterations_mean']:.1f} steps, "
              f"{row['ours_batch']['attempts_mean']:.2f} attempts)")
    print(f"load average {results['load_average_start']} -> {results['load_average_end']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
