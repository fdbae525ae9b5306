#!/usr/bin/env python3
"""Benchmark of the force laws (issue 30): compute time per control cycle beside computed torque.

    .venv/bin/python bench/bench_force_laws.py [--quick]

``law.compute(t, q, qd, ref)`` alone (the measured wrench set each cycle as the controller
does: ``set_measured_wrench``, a rotation into world axes), for ``impedance``,
``hybrid_force_position`` and ``admittance`` next to ``computed_torque`` (joint reference)
and ``resolved_acceleration`` (the same task reference), on the PUMA 560 (6) and arm7 (7
DoF) of ``config/NAME.yaml`` and the UR3 of example-robot-data.  Medians over repeats,
interleaved law by law.  Prints a table and writes ``bench/results/force_laws.json``.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import rbd_ros.control  # noqa: E402,F401 - registers the force laws
from rbd_ros.control.laws import Reference, make_law  # noqa: E402
from rbd_ros.model import MdhModel  # noqa: E402
from rbd_ros.robot import Robot  # noqa: E402

LAWS = ("computed_torque", "resolved_acceleration", "impedance", "hybrid_force_position", "admittance")


def robots() -> dict[str, MdhModel]:
    import sysconfig

    from rbd_ros.urdf import load_model

    out = {name: MdhModel.from_yaml(str(ROOT / "config" / f"{name}.yaml")) for name in ("puma560", "arm7")}
    ur3 = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
           / "ur_description/urdf/ur3_robot.urdf")
    if ur3.is_file():
        out["ur3"] = load_model(str(ur3))
    return out


def bench(quick: bool) -> dict:
    number, repeat = (300, 3) if quick else (2000, 7)
    out: dict = {}
    for name, model in robots().items():
        n = model.dof
        rng = np.random.default_rng(0)
        lo, hi = np.clip(model.lower, -2, 2), np.clip(model.upper, -2, 2)
        q = lo + rng.uniform(0.3, 0.7, n) * (hi - lo)
        qd = rng.normal(size=n) * 0.3
        T = Robot(model).fk(q)
        wrench = np.array([0.5, -0.2, -10.0, 0.01, 0.02, 0.0])
        row: dict = {}
        calls = {}
        for law_name in LAWS:
            law = make_law(law_name, model, q0=q)
            ref = Reference(n).set_joint(q + 0.01) if law_name == "computed_torque" else \
                Reference(n).set_task(T)
            if law_name in ("impedance", "hybrid_force_position", "admittance"):
                def cycle(law=law, ref=ref) -> None:
                    law.set_measured_wrench(wrench)
                    law.compute(0.001, q, qd, ref)
            else:
                def cycle(law=law, ref=ref) -> None:
                    law.compute(0.001, q, qd, ref)
            cycle()
            assert not law.fault, (name, law_name, law.status)
            calls[law_name] = cycle
        times: dict[str, list[float]] = {k: [] for k in LAWS}
        for _ in range(repeat):  # interleaved: one block of each law per repeat
            for law_name, fn in calls.items():
                times[law_name].append(1e6 * min(timeit.repeat(fn, number=number, repeat=1)) / number)
        for law_name in LAWS:
            row[law_name] = statistics.median(times[law_name])
        out[name] = {"dof": n, "us_per_cycle": row}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    res = bench(args.quick)
    print(f"{'robot':8s} {'dof':>3s} " + " ".join(f"{k:>22s}" for k in LAWS))
    for name, r in res.items():
        ct = r["us_per_cycle"]["computed_torque"]
        cells = " ".join(f"{v:9.1f} us ({v / ct:4.1f}x)" .rjust(22) for v in r["us_per_cycle"].values())
        print(f"{name:8s} {r['dof']:3d} {cells}")
    path = ROOT / "bench" / "results" / "force_laws.json"
    path.write_text(json.dumps({"machine": platform.platform(), "quick": args.quick, "results": res},
                               indent=2))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
