#!/usr/bin/env python3
"""Mobile manipulators (issue 17): the recursive path and the formulations side by side.

    .venv/bin/python bench/bench_mobile.py [--quick]

Writes ``bench/results/mobile.json``.  The bundled ``omni_arm7`` (planar base) and
``mobile_arm7`` (diff drive) against the same URDFs in Pinocchio on ``pin.JointModelPlanar``
with the wheel joints locked (3 + 7 DoF).  Time per call, median of interleaved rounds, one run:

* **whole-body inverse dynamics**: ``MobileBaseRobot.inverse_dynamics`` (recursive, the
  default; planar and diff drive), ``robot.kernels.rnea``, and the formulations at kernel
  level in world rates (Silver's recursive NE, the recursive 4x4 Lagrangian, dqNE on the
  3-joint chain, dqNE with the holonomic base 001 §3.2.2, Kane 000 (35), Gauss 001 (46)),
  against ``pin.rnea``;
* **constrained forward dynamics** of the diff drive: ``forward_dynamics`` /
  ``constrained_dynamics`` (recursive: ABA on the 2-DoF root), ``robot.kernels``, the
  formulations' routes (Kane in generalized speeds, Udwadia-Kalaba, KKT; ``method=``) and the UK
  core (``gauss`` + ``udwadia_kalaba`` kernels), and the planar ABA, against ``pin.aba``;
* mass matrix and bias against ``pin.crba`` and ``pin.rnea(q, v, 0)``.
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

from rbd_ros.formulations import diff_drive as dd  # noqa: E402
from rbd_ros.formulations import dual_quaternion as dqne  # noqa: E402
from rbd_ros.formulations import gauss, kane, lagrange, silver  # noqa: E402
from rbd_ros.formulations import planar_base as pb  # noqa: E402
from rbd_ros.formulations.chain import Chain  # noqa: E402
from rbd_ros.formulations.udwadia_kalaba import udwadia_kalaba  # noqa: E402
from rbd_ros.robot import Robot  # noqa: E402

RESULTS = ROOT / "bench" / "results"
OMNI = str(ROOT / "urdf" / "omni_arm7.urdf")
DIFF = str(ROOT / "urdf" / "mobile_arm7.urdf")


def pin_reduced(path: str, gravity: np.ndarray) -> tuple:
    """The URDF on ``pin.JointModelPlanar``, wheel joints locked (as test_mobile_base_robot)."""
    full = pin.buildModelFromUrdf(path, pin.JointModelPlanar())
    lock = [full.getJointId(j) for j in full.names[2:] if "wheel" in j]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full))
    pm.gravity.linear[:] = gravity
    return pm, pm.createData()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    number, repeat = (500, 5) if args.quick else (3000, 15)
    ro = Robot.from_urdf(OMNI, base_type="planar", tip_link="tool0")
    rd = Robot.from_urdf(DIFF, base_type="diff_drive", tip_link="tool0")
    pm, pd = pin_reduced(OMNI, ro.model.gravity)
    pmd, pdd = pin_reduced(DIFF, rd.model.gravity)
    F = ro._F  # the formulations of the same whole body (planar_base.formulations)
    arm = Chain.from_model(ro.model)
    base = pb.PlanarBase.from_model(ro.model)
    n = F.n
    rng = np.random.default_rng(0)
    q, v, vd = rng.uniform(-1, 1, (3, n))
    v[1] = vd[1] = 0.0  # a rolling state, valid for both bases
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
        "robot.inverse_dynamics (recursive, planar)": lambda: ro.inverse_dynamics(q, v, vd),
        "robot.inverse_dynamics (recursive, diff drive)": lambda: rd.inverse_dynamics(q, v, vd),
        "robot.kernels.rnea (planar)": lambda: ro.kernels.rnea(q, v, vd),
        "silver (recursive NE, kernel)": lambda: silver.silver(F.pk, q, qd, qdd, w6, False, tau),
        "lagrange_recursive (kernel)": lambda: lagrange.lagrange_recursive(F.pk, q, qd, qdd, w6, False, tau),
        "dqne (3-joint chain, kernel)": lambda: dqne.dqne(F.dp, q, qd, qdd, w6, False, wsf, tau),
        "dqne_planar (001 §3.2.2, kernel)": lambda: pb.dqne_planar(bp, dpa, arm.gravity, q, qd, qdd, w6, False,
                                                                   ws, tau),
        "kane (kernel + M a)": kan,
        "gauss (kernel + M a)": gau,
    }
    for m in ("silver", "dual_quaternion", "kane"):
        inv[f"robot.inverse_dynamics(method={m!r})"] = (lambda m=m: ro.inverse_dynamics(q, v, vd, method=m))
    ref = pin.rnea(pm, pd, qp, v, vd)
    assert np.abs(ro.inverse_dynamics(q, v, vd) - ref).max() < 1e-9 * max(1.0, np.abs(ref).max())
    pb.dqne_planar(bp, dpa, arm.gravity, q, qd, qdd, w6, False, ws, tau)
    assert np.abs(pb.base_rates(q, tau) - ref).max() < 1e-9 * max(1.0, np.abs(ref).max())
    t_inv = interleaved(inv, number, repeat)

    u = np.concatenate([[1.0, 2.0], rng.normal(size=arm.dof)])  # wheel torques, arm torques
    f = dd.generalized_force(rd.wheels, u[:2], u[2:])
    fw = pb.world_rates(q, f)
    A, bb = dd.constraint(q, qd)
    Qc, out = np.empty(n), np.empty(n)
    Fd = rd._F

    def uk_core() -> None:
        gauss.gauss(Fd.dp, q, qd, w6, False, M, C, h, a)
        udwadia_kalaba(M, fw - C @ qd - h, A, bb, out, Qc)

    fwd = {"pin.aba": lambda: pin.aba(pmd, pdd, qp, v, f),
           "robot.forward_dynamics (recursive, diff drive)": lambda: rd.forward_dynamics(q, v, u),
           "robot.constrained_dynamics (recursive, + lam)": lambda: rd.constrained_dynamics(q, v, u),
           "robot.kernels.forward_dynamics (diff drive)": lambda: rd.kernels.forward_dynamics(q, v, u),
           "robot.forward_dynamics (recursive, planar ABA)": lambda: ro.forward_dynamics(q, v, f),
           "UK core (gauss + udwadia_kalaba kernels)": uk_core}
    for m in dd.METHODS:
        fwd[f"robot.constrained_dynamics(method={m!r})"] = (lambda m=m: rd.constrained_dynamics(q, v, u, method=m))
    t_fwd = interleaved(fwd, max(number // 5, 20), repeat)

    z = np.zeros(n)
    oth = {"pin.crba": lambda: pin.crba(pm, pd, qp),
           "robot.mass_matrix (recursive)": lambda: ro.mass_matrix(q),
           "pin.rnea(q, v, 0) (bias)": lambda: pin.rnea(pm, pd, qp, v, z),
           "robot.bias (recursive)": lambda: ro.bias(q, v)}
    t_oth = interleaved(oth, number, repeat)

    # simulation per step (diff drive, RK4 at 1 kHz): held input, feedback laws, Kane's route
    import time

    from numba import njit

    def law(t: float, qq: np.ndarray, vv: np.ndarray, out: np.ndarray) -> None:
        out[0] = out[1] = 2.0 * (0.5 - vv[0])
        for i in range(2, out.shape[0]):
            out[i] = -2.0 * vv[i + 1]

    jlaw = njit(law)
    q0, v0 = q.copy(), v.copy()
    sims = {"robot.simulate recursive, held input": (lambda k: rd.simulate(q0, v0, u, 1e-3, k), 2000),
            "robot.simulate recursive, @njit feedback law": (lambda k: rd.simulate(q0, v0, jlaw, 1e-3, k), 2000),
            "robot.simulate recursive, Python feedback law": (lambda k: rd.simulate(q0, v0, law, 1e-3, k), 500),
            "robot.simulate(method='kane'), held input": (lambda k: rd.simulate(q0, v0, u, 1e-3, k, method="kane"),
                                                         20)}
    t_sim = {}
    for k, (f, steps) in sims.items():
        f(2)
        best = float("inf")
        for _ in range(3 if args.quick else 5):
            t0 = time.perf_counter()
            f(steps)
            best = min(best, (time.perf_counter() - t0) / steps)
        t_sim[k] = best

    res = {"machine": platform.processor() or platform.machine(), "dof": n,
           "simulate_us_per_step": {k: 1e6 * t for k, t in t_sim.items()},
           "inverse_dynamics_us": {k: 1e6 * t for k, t in t_inv.items()},
           "constrained_forward_us": {k: 1e6 * t for k, t in t_fwd.items()},
           "mass_bias_us": {k: 1e6 * t for k, t in t_oth.items()}}
    for title, key, refkey in (("inverse dynamics (3 + 7)", "inverse_dynamics_us", "pin.rnea"),
                               ("forward dynamics (3 + 7; diff drive constrained)", "constrained_forward_us",
                                "pin.aba"),
                               ("mass matrix and bias", "mass_bias_us", None)):
        print(f"{title}:")
        r0 = res[key][refkey] if refkey else None
        for k, t in res[key].items():
            if r0 is None and k.startswith("pin."):
                rk, ref_name = t, k
            print(f"  {k:50s} {t:9.2f} us  {t / (r0 or rk):6.2f}x {refkey or ref_name}")
    print("simulation, diff drive, RK4 (4 forward dynamics per step), best of rounds:")
    for k, t in res["simulate_us_per_step"].items():
        print(f"  {k:50s} {t:9.2f} us/step")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mobile.json").write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
