#!/usr/bin/env python3
"""Mobile-manipulator formulations side by side (issue 17): arm7 on a planar base (3 + 7).

    .venv/bin/python bench/bench_mobile.py [--quick]

Writes ``bench/results/mobile.json``.  Time per call, median of interleaved rounds, same run:

* **whole-body inverse dynamics** (world rates, kernel level, preallocated): Silver's
  recursive NE (002, the O(n) recursion on the whole-body chain), the recursive 4x4 Lagrangian,
  the dqNE on the 3-joint chain and dqNE with the holonomic base (001 §3.2.2), Kane (000 (35)),
  Gauss (001 (46)), against ``pin.rnea`` on the planar-root Pinocchio model;
* **constrained forward dynamics** of the differential drive (``diff_drive.constrained_dynamics``,
  the public Python-level routes: Kane in generalized speeds, Udwadia-Kalaba, KKT) and the
  UK core (``gauss`` + ``udwadia_kalaba`` kernels only), against ``pin.aba`` (unconstrained).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_core import interleaved  # noqa: E402

from rbd_ros.formulations import Formulations, gauss, kane, lagrange, silver  # noqa: E402
from rbd_ros.formulations import diff_drive as dd  # noqa: E402
from rbd_ros.formulations import dual_quaternion as dqne  # noqa: E402
from rbd_ros.formulations import planar_base as pb  # noqa: E402
from rbd_ros.formulations.chain import Chain  # noqa: E402
from rbd_ros.formulations.udwadia_kalaba import udwadia_kalaba  # noqa: E402
from rbd_ros.robot import Robot  # noqa: E402

RESULTS = ROOT / "bench" / "results"
URDF = str(ROOT / "urdf" / "arm7.urdf")


def setup() -> tuple:
    arm = Chain.from_model(Robot.from_urdf(URDF).model)
    mount = np.eye(4)
    mount[:3, 3] = [0.2, 0.0, 0.35]
    base = pb.PlanarBase(40.0, np.array([-0.08, 0.0, 0.18]), np.diag([1.2, 1.6, 2.1]), mount)
    F = Formulations(pb.whole_body_chain(base, arm))
    pm = pin.buildModelFromUrdf(URDF, pin.JointModelPlanar())
    pm.inertias[1] = pin.Inertia(base.mass, base.com, base.inertia)
    pm.jointPlacements[2] = pin.SE3(mount) * pm.jointPlacements[2]
    pm.gravity.linear[:] = arm.gravity
    return arm, base, F, pm, pm.createData()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    number, repeat = (200, 5) if args.quick else (2000, 15)
    arm, base, F, pm, pd = setup()
    n = F.n
    rng = np.random.default_rng(0)
    q, v, vd = rng.uniform(-1, 1, (3, n))
    v[1] = 0.0
    qp = np.concatenate([q[:2], [np.cos(q[2]), np.sin(q[2])], q[3:]])
    qd, qdd = pb.world_rates(q, v), pb.world_accelerations(q, v, vd)
    tau = np.empty(n)
    w6 = np.zeros(6)
    M, C, h, a, b = np.empty((n, n)), np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)
    bp, dpa, ws = base.packed(), pb.pack_arm(base, arm), pb.dqne_workspace(arm.dof)
    wsf = np.empty((n, dqne.NWS))

    def kan() -> np.ndarray:
        kane.kane(F.pk, q, qd, w6, False, M, C, h, a, b)
        return M @ qdd + h - a

    def gau() -> np.ndarray:
        gauss.gauss(F.dp, q, qd, w6, False, M, C, h, a)
        return M @ qdd + C @ qd + h

    inv = {
        "pin.rnea": lambda: pin.rnea(pm, pd, qp, v, vd),
        "silver (recursive NE)": lambda: silver.silver(F.pk, q, qd, qdd, w6, False, tau),
        "lagrange_recursive": lambda: lagrange.lagrange_recursive(F.pk, q, qd, qdd, w6, False, tau),
        "dqne (3-joint chain)": lambda: dqne.dqne(F.dp, q, qd, qdd, w6, False, wsf, tau),
        "dqne_planar (001 §3.2.2)": lambda: pb.dqne_planar(bp, dpa, arm.gravity, q, qd, qdd, w6, False, ws, tau),
        "kane": kan,
        "gauss": gau,
    }
    ref = pin.rnea(pm, pd, qp, v, vd)
    pb.dqne_planar(bp, dpa, arm.gravity, q, qd, qdd, w6, False, ws, tau)
    assert np.abs(pb.base_rates(q, tau) - ref).max() < 1e-9 * max(1.0, np.abs(ref).max())
    t_inv = interleaved(inv, number, repeat)

    wheels = dd.Wheels(0.08, 0.45)
    f = dd.generalized_force(wheels, np.array([1.0, 2.0]), rng.normal(size=arm.dof))
    fw = pb.world_rates(q, f)
    A, bb = dd.constraint(q, qd)
    Qc, out = np.empty(n), np.empty(n)

    def uk_core() -> None:
        gauss.gauss(F.dp, q, qd, w6, False, M, C, h, a)
        udwadia_kalaba(M, fw - C @ qd - h, A, bb, out, Qc)

    fwd = {"pin.aba (unconstrained)": lambda: pin.aba(pm, pd, qp, v, f),
           "UK core (gauss + udwadia_kalaba kernels)": uk_core}
    for m in dd.METHODS:
        fwd[f"constrained_dynamics({m})"] = (lambda m=m: dd.constrained_dynamics(F, q, v, f, m))
    t_fwd = interleaved(fwd, max(number // 10, 20), repeat)

    res = {"machine": platform.processor() or platform.machine(), "dof": n,
           "inverse_dynamics_us": {k: 1e6 * t for k, t in t_inv.items()},
           "constrained_forward_us": {k: 1e6 * t for k, t in t_fwd.items()}}
    for title, key, refkey in (("inverse dynamics (3 + 7)", "inverse_dynamics_us", "pin.rnea"),
                               ("constrained forward dynamics (3 + 7, diff drive)", "constrained_forward_us",
                                "pin.aba (unconstrained)")):
        print(f"{title}:")
        r0 = res[key][refkey]
        for k, t in res[key].items():
            print(f"  {k:45s} {t:9.2f} us  {t / r0:6.2f}x {refkey}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mobile.json").write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
