#!/usr/bin/env python3
"""Benchmark of the dynamics derivatives on a moving base against Pinocchio's (issue 42).

    .venv/bin/python bench/bench_root_derivatives.py [--quick]

Prints a table and writes ``bench/results/root_derivatives.json``.  Method as
``bench_derivatives.py``: medians over repeats, our public calls interleaved with Pinocchio's
in the same process (wall and CPU time), on the same URDF: Franka Panda's arm
(example-robot-data, ``panda_link0`` .. ``panda_link8``, 7 joints) with an inertial on
``panda_link0`` on

* a free-flyer root (``base_type="floating"`` against ``pin.JointModelFreeFlyer``, nv = 13);
* a planar root (``base_type="planar"`` against ``pin.JointModelPlanar``, nv = 10);

``Robot.inverse_dynamics_derivatives`` vs ``pin.computeRNEADerivatives``,
``Robot.forward_dynamics_derivatives`` vs ``pin.computeABADerivatives`` (ours validated, fresh
arrays; Pinocchio's its ``data``'s), ``Robot.linearize`` (A, B; no Pinocchio call of its own)
and the kernel alone (``root_derivatives.rnea_derivatives_root`` on prepared arguments: what
the Python layer costs on top).  Also the largest difference to Pinocchio's matrices.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numba  # noqa: E402
from bench_core import interleaved  # noqa: E402
from bench_derivatives import interleaved_cpu  # noqa: E402
from bench_floating import BASE_INERTIAL  # noqa: E402

from rbd_ros.robot import Robot  # noqa: E402


def panda_xml() -> str:
    """The Panda's URDF cut to ``panda_link0`` .. ``panda_link8`` by our converter and
    Pinocchio alike (the fingers locked), ``panda_link0`` given an inertial."""
    import sysconfig

    urdf = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
            / "panda_description/urdf/panda.urdf")
    xml = urdf.read_text()
    if not re.search(r'<link name="panda_link0">\s*<inertial>', xml):
        xml = re.sub(r'<link name="panda_link0">', f'<link name="panda_link0">{BASE_INERTIAL}', xml, count=1)
    return xml


def _pair(xml: str, base_type: str):
    import pinocchio as pin

    robot = Robot.from_urdf(xml, tip_link="panda_link8", base_type=base_type)
    root = pin.JointModelFreeFlyer() if base_type == "floating" else pin.JointModelPlanar()
    full = pin.buildModelFromXML(xml, root)
    lock = [k for k, nm in enumerate(full.names) if k >= 2 and nm not in robot.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    assert list(pm.names[2:]) == list(robot.joint_names)  # the same order: no permutation
    pm.gravity.linear[:] = robot.model.gravity
    return pin, robot, pm, pm.createData()


def _state(robot: Robot, rng: np.random.Generator):
    import pinocchio as pin

    n = robot.dof
    qj = rng.uniform(-1.0, 1.0, n)
    if robot.base_type == "floating":
        quat = pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs()
        q = np.concatenate([rng.normal(size=3), quat, qj])
        pq = q
    else:
        q = np.concatenate([rng.normal(size=2), [0.7], qj])
        pq = np.concatenate([q[:2], [np.cos(q[2]), np.sin(q[2])], qj])
    v, a = rng.normal(size=(2, robot.nv))
    return q, pq, v, a


def run(base_type: str, xml: str, quick: bool) -> dict:
    from rbd_ros.algorithm import root_derivatives as rt

    pin, robot, pm, pd = _pair(xml, base_type)
    q, pq, v, a = _state(robot, np.random.default_rng(7))
    tau = robot.inverse_dynamics(q, v, a)
    number, repeat = (500, 7) if quick else (2000, 15)
    qj, g, _, idx = robot._root_embed(q, v)
    nf = 6 + robot.dof
    V, A = np.zeros(nf), np.zeros(nf)
    V[idx], A[idx] = v, a
    w0, out = np.zeros(6), np.empty((3, nf, nf))
    args = (robot._mp, robot._ws, qj, g, V, A, w0, False, False, out[0], out[1], out[2])
    fns = {"pin.computeRNEADerivatives": lambda: pin.computeRNEADerivatives(pm, pd, pq, v, a),
           "inverse_dynamics_derivatives": lambda: robot.inverse_dynamics_derivatives(q, v, a),
           "kernel rnea_derivatives_root": lambda: rt.rnea_derivatives_root(*args),
           "pin.computeABADerivatives": lambda: pin.computeABADerivatives(pm, pd, pq, v, tau),
           "forward_dynamics_derivatives": lambda: robot.forward_dynamics_derivatives(q, v, tau),
           "linearize": lambda: robot.linearize(q, v, tau)}
    t = interleaved(fns, number, repeat)
    c = interleaved_cpu(fns, number, repeat)
    ours = robot.inverse_dynamics_derivatives(q, v, a)
    theirs = [np.array(x) for x in pin.computeRNEADerivatives(pm, pd, pq, v, a)]
    sym = np.triu(theirs[2]) + np.triu(theirs[2], 1).T
    diff_id = max(float(np.abs(x - y).max()) for x, y in zip(ours, (theirs[0], theirs[1], sym)))
    ours = robot.forward_dynamics_derivatives(q, v, tau)
    theirs = [np.array(x) for x in pin.computeABADerivatives(pm, pd, pq, v, tau)]
    sym = np.triu(theirs[2]) + np.triu(theirs[2], 1).T
    diff_fd = max(float(np.abs(x - y).max()) for x, y in zip(ours, (theirs[0], theirs[1], sym)))
    return {"nv": robot.nv, "us": {k: x * 1e6 for k, x in t.items()}, "cpu_us": {k: x * 1e6 for k, x in c.items()},
            "ratio": {"ID derivatives / pin": t["inverse_dynamics_derivatives"] / t["pin.computeRNEADerivatives"],
                      "ID kernel / pin": t["kernel rnea_derivatives_root"] / t["pin.computeRNEADerivatives"],
                      "FD derivatives / pin": t["forward_dynamics_derivatives"] / t["pin.computeABADerivatives"],
                      "linearize / pin ABA derivatives": t["linearize"] / t["pin.computeABADerivatives"]},
            "cpu_ratio": {"ID derivatives / pin": c["inverse_dynamics_derivatives"] / c["pin.computeRNEADerivatives"],
                          "FD derivatives / pin": c["forward_dynamics_derivatives"] / c["pin.computeABADerivatives"]},
            "max_abs_diff_to_pinocchio": {"ID": diff_id, "FD": diff_fd}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (~1 min)")
    args = ap.parse_args()
    xml = panda_xml()
    t0, load0 = time.time(), os.getloadavg()[0]
    res = {kind: run(kind, xml, args.quick) for kind in ("floating", "planar")}
    load1 = os.getloadavg()[0]
    print(f"\nrbd_ros moving-base derivatives vs Pinocchio (Panda arm, median, "
          f"{platform.processor() or platform.machine()}, load average {load0:.1f} -> {load1:.1f})\n")
    for kind, r in res.items():
        u, k = r["us"], r["ratio"]
        print(f"{kind:>8} (nv {r['nv']})  ID derivatives {u['inverse_dynamics_derivatives']:.2f} us / "
              f"pin {u['pin.computeRNEADerivatives']:.2f} us = {k['ID derivatives / pin']:.2f} (kernel alone "
              f"{u['kernel rnea_derivatives_root']:.2f} us = {k['ID kernel / pin']:.2f});  FD derivatives "
              f"{u['forward_dynamics_derivatives']:.2f} us / pin {u['pin.computeABADerivatives']:.2f} us = "
              f"{k['FD derivatives / pin']:.2f};  linearize {u['linearize']:.2f} us  (CPU time: ID "
              f"{r['cpu_ratio']['ID derivatives / pin']:.2f}, FD {r['cpu_ratio']['FD derivatives / pin']:.2f}; "
              f"max |ours - pin| ID {r['max_abs_diff_to_pinocchio']['ID']:.1e}, "
              f"FD {r['max_abs_diff_to_pinocchio']['FD']:.1e})")
    result = {"quick": args.quick, "machine": platform.platform(), "python": sys.version.split()[0],
              "numba": numba.__version__, "load_average": [load0, load1], "results": res,
              "wall_s": time.time() - t0}
    out = ROOT / "bench" / "results" / "root_derivatives.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
