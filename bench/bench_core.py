#!/usr/bin/env python3
"""Benchmark of the jitted dynamics core against Pinocchio and MuJoCo (same machine, same run).

    .venv/bin/python bench/bench_core.py [--quick]

Prints a table and writes ``bench/results/core.json``.  All times are medians over repeats
(calls interleaved ours/theirs to share the machine's load).  Ratios < 1 mean we are faster.

* single call from Python, per DoF in (6, 7, 12, 24, 48) and for Franka Panda's arm (7 DoF,
  example-robot-data: the ``panda`` rows): ours through the public ``Robot``
  API (validated, fresh result arrays) and through ``robot.kernels`` (unchecked, preallocated
  buffers: the same contract as Pinocchio's ``pin.rnea(model, data, ...)``), as ratios to
  pin.rnea / pin.aba / pin.crba / pin.computeGeneralizedGravity;
* the two forward-dynamics algorithms (Cholesky vs ABA) at kernel level;
* batch inverse dynamics per state (N states, prange) on 1 and 2 threads, ratio to pin.rnea;
* 10 s at 1 kHz RK4 (7 DoF, zero-order-hold torques) vs a Python loop of MuJoCo mj_step
  with its RK4 integrator over the same horizon;
* numba compile time: cold (empty cache dir) and cached, in fresh subprocesses.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402

from rbd_ros.algorithm import aba as aba_mod  # noqa: E402
from rbd_ros.algorithm import forward_dynamics as fd_mod  # noqa: E402
from rbd_ros.model import MdhModel  # noqa: E402
from rbd_ros.model.urdf_export import model_to_urdf  # noqa: E402
from rbd_ros.robot import Robot  # noqa: E402


def chain(n: int, seed: int = 0) -> MdhModel:
    """A random revolute chain with physical inertias (as in the tests)."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0.01, 0.15, (n, 3))
    inertia = np.array([np.diag([b + c, a + c, a + b]) for a, b, c in s])
    return MdhModel(name=f"chain{n}", joint_names=[f"j{i}" for i in range(n)], joint_type=[0] * n,
                    a=rng.uniform(-0.4, 0.4, n), alpha=rng.uniform(-np.pi, np.pi, n),
                    d=rng.uniform(-0.3, 0.3, n), theta=np.zeros(n), mass=rng.uniform(0.2, 5, n),
                    com=rng.uniform(-0.15, 0.15, (n, 3)), inertia=inertia,
                    base_link="base_link", tip_link="tool0")


def panda() -> MdhModel:
    """Franka Panda's 7-DoF arm from example-robot-data (``panda_link0`` .. ``panda_link8``):
    issue 32's targets are stated for a 7-DoF arm from there."""
    import sysconfig

    urdf = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
            / "panda_description/urdf/panda.urdf")
    return Robot.from_urdf(str(urdf), base_link="panda_link0", tip_link="panda_link8").model


def robots(quick: bool) -> dict[int | str, MdhModel]:
    """Keyed by DoF; ``"panda"``: the 7-DoF arm from example-robot-data."""
    out = {6: MdhModel.from_yaml(str(ROOT / "config" / "puma560.yaml")),
           7: MdhModel.from_yaml(str(ROOT / "config" / "arm7.yaml")), "panda": panda()}
    for n in (12, 24, 48):
        out[n] = chain(n, n)
    if quick:
        out = {k: out[k] for k in (7, "panda", 48)}
    return out


def interleaved(fns: dict, number: int, repeat: int) -> dict[str, float]:
    """Median seconds per call of each function, measured in alternation."""
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for f in fns.values():
        f()
    for _ in range(repeat):
        for k, f in fns.items():
            samples[k].append(timeit.timeit(f, number=number) / number)
    return {k: statistics.median(v) for k, v in samples.items()}


def single_calls(models: dict[int, MdhModel], quick: bool) -> dict:
    import pinocchio as pin

    number, repeat = (2000, 7) if quick else (5000, 15)
    res = {}
    for key, model in models.items():
        robot = Robot(model)
        n = model.dof
        pm = pin.buildModelFromXML(model_to_urdf(model))
        pm.gravity.linear[:] = model.gravity
        pd = pm.createData()
        rng = np.random.default_rng(n)
        q, qd, qdd = rng.uniform(-1, 1, (3, n))
        tau = robot.inverse_dynamics(q, qd, qdd)
        k = robot.kernels
        out = np.empty(n)
        mp, ws = robot._mp, robot._ws
        t = interleaved({
            "pin.rnea": lambda: pin.rnea(pm, pd, q, qd, qdd),
            "pin.aba": lambda: pin.aba(pm, pd, q, qd, tau),
            "pin.crba": lambda: pin.crba(pm, pd, q),
            "pin.gravity": lambda: pin.computeGeneralizedGravity(pm, pd, q),
            "id": lambda: robot.inverse_dynamics(q, qd, qdd),
            "fd": lambda: robot.forward_dynamics(q, qd, tau),
            "M": lambda: robot.mass_matrix(q),
            "g": lambda: robot.gravity(q),
            "k.id": lambda: k.rnea(q, qd, qdd),
            "k.fd": lambda: k.forward_dynamics(q, qd, tau),
            "k.M": lambda: k.crba(q),
            "k.g": lambda: k.gravity(q),
            "fd.cholesky": lambda: fd_mod.fd_cholesky(mp, ws, q, qd, tau, False, out),
            "fd.aba": lambda: aba_mod.aba(mp, ws, q, qd, tau, False, out),
        }, number, repeat)
        res[key] = {"us": {k: v * 1e6 for k, v in t.items()},
                  "ratio": {
                      "ID/rnea": t["id"] / t["pin.rnea"], "kernels ID/rnea": t["k.id"] / t["pin.rnea"],
                      "FD/aba": t["fd"] / t["pin.aba"], "kernels FD/aba": t["k.fd"] / t["pin.aba"],
                      "M/crba": t["M"] / t["pin.crba"], "kernels M/crba": t["k.M"] / t["pin.crba"],
                      "g/gravity": t["g"] / t["pin.gravity"],
                      "kernels g/gravity": t["k.g"] / t["pin.gravity"],
                      "cholesky/aba (ours)": t["fd.cholesky"] / t["fd.aba"]}}
    return res


def batch_id(models: dict[int, MdhModel], quick: bool) -> dict:
    import pinocchio as pin

    N = 5000 if quick else 20000
    res = {}
    for key, model in models.items():
        robot = Robot(model)
        n = model.dof
        pm = pin.buildModelFromXML(model_to_urdf(model))
        pd = pm.createData()
        rng = np.random.default_rng(n)
        Q, QD, QDD = rng.uniform(-1, 1, (3, N, n))
        q, qd, qdd = Q[0], QD[0], QDD[0]
        row = {}
        for threads in (1, 2):
            if threads > numba.config.NUMBA_NUM_THREADS:
                continue
            numba.set_num_threads(threads)
            robot.inverse_dynamics(Q, QD, QDD)
            pin.rnea(pm, pd, q, qd, qdd)
            runs, pins = [], []
            for _ in range(5 if quick else 11):  # interleaved: ours, then Pinocchio, repeated
                runs.append(timeit.timeit(lambda: robot.inverse_dynamics(Q, QD, QDD), number=1))
                pins.append(timeit.timeit(lambda: pin.rnea(pm, pd, q, qd, qdd), number=2000) / 2000)
            t_pin = statistics.median(pins)
            per_state, best = statistics.median(runs) / N, min(runs) / N
            row[f"{threads}thread"] = {"per_state_us": per_state * 1e6, "best_us": best * 1e6,
                                       "pin_rnea_us": t_pin * 1e6, "ratio": per_state / t_pin,
                                       "best_ratio": best / t_pin}
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        res[key] = row
    return res


def rk4_vs_mujoco(quick: bool) -> dict:
    import mujoco

    model = MdhModel.from_yaml(str(ROOT / "config" / "arm7.yaml"))
    robot = Robot(model)
    steps, dt = 10_000, 1e-3
    rng = np.random.default_rng(0)
    q0 = rng.uniform(-1, 1, 7)
    tau = np.repeat(rng.uniform(-3, 3, (100, 7)), 100, axis=0)
    spec = mujoco.MjSpec.from_string(model_to_urdf(model).replace(
        "</robot>", '<mujoco><compiler discardvisual="true" balanceinertia="false"/></mujoco></robot>'))
    spec.option.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT
                                 | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    spec.option.gravity = model.gravity
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.timestep = dt
    m = spec.compile()
    d = mujoco.MjData(m)
    for j in m.jnt_dofadr:  # URDF <dynamics> damping is zero for arm7 already; be explicit
        m.dof_damping[j] = 0.0

    def ours() -> None:
        robot.simulate(q0, np.zeros(7), tau, dt)

    def theirs() -> None:
        mujoco.mj_resetData(m, d)
        d.qpos[:] = q0
        step, applied = mujoco.mj_step, d.qfrc_applied
        for k in range(steps):
            applied[:] = tau[k]
            step(m, d)

    t = interleaved({"ours": ours, "mujoco": theirs}, number=1, repeat=3 if quick else 7)
    # same trajectory? (over 0.2 s: the arm is chaotic, 10 s apart amplifies round-off)
    q_ours = robot.simulate(q0, np.zeros(7), tau[:200], dt).q[-1]
    mujoco.mj_resetData(m, d)
    d.qpos[:] = q0
    for k in range(200):
        d.qfrc_applied[:] = tau[k]
        mujoco.mj_step(m, d)
    return {"steps": steps, "dt": dt, "ours_s": t["ours"], "mujoco_loop_s": t["mujoco"],
            "ratio": t["ours"] / t["mujoco"],
            "q_diff_after_0.2s": float(np.abs(q_ours - d.qpos).max())}


COMPILE_SNIPPET = """
import time, numpy as np
t0 = time.perf_counter()
from rbd_ros.robot import Robot
from rbd_ros.model import MdhModel
r = Robot(MdhModel.from_yaml('config/arm7.yaml'))
q = np.zeros(7); Q = np.zeros((4, 7))
r.inverse_dynamics(q, q, q); r.forward_dynamics(q, q, q); r.mass_matrix(q); r.gravity(q)
r.inverse_dynamics(Q, Q, Q); r.forward_dynamics(Q, Q, Q); r.mass_matrix(Q)
r.jacobian(q); r.fk(q); r.simulate(q, q, np.zeros((10, 7)), 1e-3)
print(time.perf_counter() - t0)
"""


def compile_times() -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = {}
        for label in ("cold", "cached"):
            r = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], cwd=ROOT, env=env,
                               capture_output=True, text=True, check=True)
            out[f"{label}_s"] = float(r.stdout.strip().splitlines()[-1])
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats (~1 min)")
    args = ap.parse_args()
    models = robots(args.quick)
    t0 = time.time()
    single = single_calls(models, args.quick)
    batch = batch_id(models, args.quick)
    rk4 = rk4_vs_mujoco(args.quick)
    comp = compile_times()

    print(f"\nrbd_ros core vs Pinocchio / MuJoCo  (median, {platform.processor() or platform.machine()}, "
          f"{numba.config.NUMBA_NUM_THREADS} numba threads)\n")
    cols = ["ID/rnea", "kernels ID/rnea", "FD/aba", "kernels FD/aba", "M/crba", "kernels M/crba",
            "g/gravity", "kernels g/gravity", "cholesky/aba (ours)"]
    print(f"{'dof':>4} " + " ".join(f"{c:>17}" for c in cols))
    for n, r in single.items():
        print(f"{n:>4} " + " ".join(f"{r['ratio'][c]:>17.2f}" for c in cols))
    print("\nper-call microseconds (ours public / kernels / Pinocchio):")
    for n, r in single.items():
        u = r["us"]
        print(f"{n:>4}  ID {u['id']:.2f}/{u['k.id']:.2f}/{u['pin.rnea']:.2f}   FD {u['fd']:.2f}/"
              f"{u['k.fd']:.2f}/{u['pin.aba']:.2f}   M {u['M']:.2f}/{u['k.M']:.2f}/{u['pin.crba']:.2f}"
              f"   g {u['g']:.2f}/{u['k.g']:.2f}/{u['pin.gravity']:.2f}   FD chol {u['fd.cholesky']:.2f}"
              f" aba {u['fd.aba']:.2f}")
    print("\nbatch inverse dynamics, per state / pin.rnea:")
    for n, r in batch.items():
        print(f"{n:>4}  " + "   ".join(f"{k}: median {v['ratio']:.3f} best {v['best_ratio']:.3f} "
                                       f"({v['per_state_us']:.3f} us)" for k, v in r.items()))
    print(f"\nRK4 10 s @ 1 kHz, 7 DoF: ours {rk4['ours_s'] * 1e3:.1f} ms, MuJoCo mj_step loop "
          f"{rk4['mujoco_loop_s'] * 1e3:.1f} ms, ratio {rk4['ratio']:.3f} "
          f"(|q_ours - q_mujoco| after 0.2 s: {rk4['q_diff_after_0.2s']:.1e})")
    print(f"numba compile + first calls: cold {comp['cold_s']:.1f} s, cached {comp['cached_s']:.2f} s")
    result = {"quick": args.quick, "machine": platform.platform(), "python": sys.version.split()[0],
              "numba": numba.__version__, "threads": numba.config.NUMBA_NUM_THREADS,
              "single": {str(k): v for k, v in single.items()},
              "batch_id": {str(k): v for k, v in batch.items()}, "rk4_vs_mujoco": rk4,
              "compile": comp, "wall_s": time.time() - t0}
    out = ROOT / "bench" / "results" / "core.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
