#!/usr/bin/env python3
"""Operation counts and scaling of the formulations (``rbd_ros.formulations``, issue 14).

    .venv/bin/python bench/bench_formulations.py [--quick]

Writes ``bench/results/formulations.json`` and ``bench/results/formulations.png``.

* **exact operation counts** of RNEA (``algorithm.rnea``) and the dual-quaternion NE
  (``formulations.dual_quaternion``), n = 1..50 revolute joints: the kernels' own source run
  in plain Python on a counting number type (``formulations.counts``); fitted ``a + b n``
  beside 001 Table 3; the direct Lagrange trace count N_tr(n) as the kernel counts it;
* **time per call** (kernel level: preallocated inputs, unchecked, results combined as the
  formulation prescribes, e.g. ``M qdd + h + g``) for n = 2..48, the direct Lagrange until one
  call passes 50 ms (and 64..128 without it); log-log slopes fitted for n = 16..48 and
  48..128; ratios at 6 and 7 DoF beside
  002 §1.4's claims; a log-log plot with the fitted lines.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_core import chain  # noqa: E402

from rbd_ros.formulations import Formulations, counts, gauss, kane, lagrange, silver  # noqa: E402
from rbd_ros.formulations import dual_quaternion as dqne  # noqa: E402
from rbd_ros.formulations.chain import Chain  # noqa: E402
from rbd_ros.model.data import empty_workspace, pack_model  # noqa: E402
from rbd_ros.robot import Robot  # noqa: E402

RESULTS = ROOT / "bench" / "results"
METHODS = ("rnea", "lagrange", "lagrange_recursive", "silver", "dual_quaternion", "kane", "gauss")
EXPECTED_SLOPE = {"rnea": 1, "lagrange": 4, "lagrange_recursive": 1, "silver": 1, "dual_quaternion": 1,
                  "kane": 3, "gauss": 3}


# ---- operation counts ------------------------------------------------------------------------
def operation_counts(ns: list[int]) -> dict:
    rn = counts.pure("rbd_ros.algorithm.rnea")
    dqm = counts.pure("rbd_ros.formulations.dual_quaternion")
    out: dict = {"n": ns, "rnea": [], "dual_quaternion": []}
    for n in ns:
        model = chain(n)
        q = counts.counted(np.linspace(-1, 1, n))
        tau = np.empty(n, dtype=object)
        out["rnea"].append(counts.count(rn.rnea, counts.counted(pack_model(model)),
                                        counts.counted(empty_workspace(n)), q, q, q, tau))
        dp = counts.counted(dqm.pack(Chain.from_model(model)))
        out["dual_quaternion"].append(counts.count(dqm.dqne, dp, q, q, q, counts.counted(np.zeros(6)), False,
                                                   counts.counted(np.zeros((n, dqm.NWS))), tau))
    fits = {}
    for name in ("rnea", "dual_quaternion"):
        for key in ("mul", "add"):
            y = np.array([t[key] for t in out[name]])
            a, b, res = counts.fit_linear(np.array(ns[1:]), y[1:])  # n >= 2
            fits[f"{name}.{key}"] = {"a": a, "b": b, "max_residual": res, "n1": int(y[0])}
    out["fits"] = fits
    n_tr = {}
    for n in (4, 6):
        F = Formulations(chain(n))
        z = np.zeros(n)
        M, h, g, wf = np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)
        n_tr[n] = lagrange.lagrange_direct(F.pk, z + 0.1, z + 0.2, True, np.zeros(6), False, M, h, g, wf)
    out["lagrange_traces"] = {"4": n_tr[4], "6": n_tr[6],
                              "formula": {str(n): lagrange.trace_count(n) for n in (4, 6, 10, 20, 50)}}
    return out


# ---- timing ----------------------------------------------------------------------------------
def callers(model) -> dict:
    """Per method, a zero-argument call at a fixed random state (kernel level)."""
    n = model.dof
    robot = Robot(model)
    F = Formulations(model)
    q, qd, qdd = np.random.default_rng(n).uniform(-1, 1, (3, n))
    z6 = np.zeros(6)
    tau = np.empty(n)
    M, C = np.empty((n, n)), np.empty((n, n))
    a, b, c = np.empty(n), np.empty(n), np.empty(n)
    k = robot.kernels.rnea

    def lag() -> np.ndarray:
        lagrange.lagrange_direct(F.pk, q, qd, True, z6, False, M, a, b, c)
        return M @ qdd + a + b

    def kan() -> np.ndarray:
        kane.kane(F.pk, q, qd, z6, False, M, C, a, b, c)
        return M @ qdd + a - b

    def gau() -> np.ndarray:
        gauss.gauss(F.dp, q, qd, z6, False, M, C, a, b)
        return M @ qdd + C @ qd + a

    return {
        "rnea": lambda: k(q, qd, qdd),
        "lagrange": lag,
        "lagrange_recursive": lambda: lagrange.lagrange_recursive(F.pk, q, qd, qdd, z6, False, tau),
        "silver": lambda: silver.silver(F.pk, q, qd, qdd, z6, False, tau),
        "dual_quaternion": lambda: dqne.dqne(F.dp, q, qd, qdd, z6, False, F.ws, tau),
        "kane": kan,
        "gauss": gau,
    }


def time_call(fn, budget: float = 0.004) -> float:
    """Average seconds per call over ~``budget`` seconds."""
    t0 = time.perf_counter()
    fn()
    one = time.perf_counter() - t0
    reps = max(1, int(budget / max(one, 1e-7)))
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) / reps


def timings(ns: list[int], extra: list[int], rounds: int = 9) -> dict:
    """Per method and n, the best of ``rounds`` interleaved rounds (the machine is shared:
    the minimum is the least disturbed).  ``extra`` sizes (beyond 48) time only the O(n)
    and O(n^3) methods, to show where the cubic term of Kane and Gauss takes over."""
    out: dict = {m: {} for m in METHODS}
    lagrange_done = False
    for n in ns + extra:
        calls = callers(chain(n))
        todo = [m for m in METHODS if not (m == "lagrange" and (lagrange_done or n in extra))]
        for m in todo:
            calls[m]()  # warm up
        for _ in range(rounds):
            for m in todo:
                out[m][n] = min(out[m].get(n, np.inf), time_call(calls[m]))
        if out["lagrange"].get(n, 0.0) > 0.05:
            lagrange_done = True
        print(f"  n = {n:3d}: " + "  ".join(f"{m} {out[m][n] * 1e6:.1f}" for m in METHODS if n in out[m]) + " us",
              flush=True)
    return out


def ratio_dqne_rnea_7dof(rounds: int = 40) -> dict:
    """dqNE / RNEA at 7 DoF (the bundled arm7), kernel level, interleaved rounds: the median
    of the per-round ratios and the ratio of the per-method minima."""
    from rbd_ros.model import MdhModel

    calls = callers(MdhModel.from_yaml(str(ROOT / "config" / "arm7.yaml")))
    r, d = calls["rnea"], calls["dual_quaternion"]
    r()
    d()
    tr, td = [], []
    for _ in range(rounds):
        tr.append(time_call(r, 0.005))
        td.append(time_call(d, 0.005))
    return {"rnea_us": min(tr) * 1e6, "dqne_us": min(td) * 1e6, "ratio_of_minima": min(td) / min(tr),
            "median_ratio": float(np.median(np.array(td) / np.array(tr)))}


def slopes(times: dict, n_min: int = 16, n_max: int = 48) -> dict:
    res = {}
    for m, tn in times.items():
        ns = np.array([n for n in tn if n_min <= n <= n_max], dtype=float)
        if len(ns) < 2:
            continue
        ts = np.array([tn[int(n)] for n in ns])
        b, a = np.polyfit(np.log(ns), np.log(ts), 1)
        res[m] = {"slope": float(b), "log_coeff": float(a), "n_range": [int(ns.min()), int(ns.max())]}
    return res


def plot(times: dict, fits: dict, tail: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    for m in METHODS:
        ns = np.array(sorted(times[m]))
        ts = np.array([times[m][n] for n in ns]) * 1e6
        line, = ax.loglog(ns, ts, "o", ms=4, label=f"{m} (slope {fits[m]['slope']:.2f})")
        nn = np.linspace(fits[m]["n_range"][0], fits[m]["n_range"][1], 20)
        ax.loglog(nn, np.exp(fits[m]["log_coeff"]) * nn ** fits[m]["slope"] * 1e6, "-",
                  color=line.get_color(), lw=1)
        if m in tail and m in ("kane", "gauss"):
            nn = np.linspace(48, 128, 20)
            ax.loglog(nn, np.exp(tail[m]["log_coeff"]) * nn ** tail[m]["slope"] * 1e6, "--",
                      color=line.get_color(), lw=1, label=f"{m} 48..128 (slope {tail[m]['slope']:.2f})")
    ax.set_xlabel("degrees of freedom n")
    ax.set_ylabel("time per inverse-dynamics call [us]")
    ax.set_title("rbd_ros formulations: time per call (lines: log-log fits)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes")
    args = ap.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()

    count_ns = list(range(1, 51)) if not args.quick else list(range(1, 11))
    print("operation counts (source of the kernels on a counting type) ...", flush=True)
    oc = operation_counts(count_ns)
    paper = list(counts.TABLE3.values())
    print(f"\n{'method':<44} {'multiplications':>18} {'additions':>18}  (fit over n = 2..{count_ns[-1]})")
    for name, (pm, pa), label in (("dual_quaternion", paper[0], "001 Table 3: dual quaternion NE"),
                                  ("rnea", paper[1], "001 Table 3: Newton-Euler (Luh/Balafoutis)")):
        fm, fa = oc["fits"][f"{name}.mul"], oc["fits"][f"{name}.add"]
        print(f"{label:<44} {'%dn %+d' % (pm(1) - pm(0), pm(0)):>18} {'%dn %+d' % (pa(1) - pa(0), pa(0)):>18}")
        ours = f"ours: {name}"
        print(f"{ours:<44} {'%.0fn %+.0f' % (fm['b'], fm['a']):>18} {'%.0fn %+.0f' % (fa['b'], fa['a']):>18}"
              f"   residual {max(fm['max_residual'], fa['max_residual']):.1e}")
    print(f"direct Lagrange traces (kernel): n=4 {oc['lagrange_traces']['4']}, n=6 {oc['lagrange_traces']['6']}"
          " (sheet: 130, 532)")

    ns = [2, 3, 4, 6, 7, 8, 12, 16, 24, 32, 48] if not args.quick else [2, 4, 7, 8, 16]
    extra = [64, 96, 128] if not args.quick else []
    print("\ntime per call (kernel level, best of 5 interleaved rounds) ...", flush=True)
    times = timings(ns, extra)
    fits = slopes(times)
    tail = slopes(times, 48, 128) if extra else {}
    print(f"\n{'method':<20} {'slope 16..48':>12} {'expected':>9} {'slope 48..128':>14}")
    for m in METHODS:
        if m in fits:
            t = f"{tail[m]['slope']:.2f}" if m in tail else "-"
            print(f"{m:<20} {fits[m]['slope']:12.2f} {EXPECTED_SLOPE[m]:9d} {t:>14}")
    r7 = ratio_dqne_rnea_7dof()
    print(f"dqNE / RNEA at 7 DoF (arm7, kernels): {r7['dqne_us']:.2f} / {r7['rnea_us']:.2f} us = "
          f"{r7['ratio_of_minima']:.2f} (median of round ratios {r7['median_ratio']:.2f}; target <= 3)")
    ratios = {}
    for n in (6, 7):
        if n in times["rnea"]:
            ratios[n] = {m: times[m][n] / times["rnea"][n] for m in METHODS if n in times[m]}
            if n in times["lagrange"]:
                ratios[n]["lagrange/lagrange_recursive"] = times["lagrange"][n] / times["lagrange_recursive"][n]
    for n, r in ratios.items():
        print(f"n = {n}: ratios to RNEA " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()))
    print("002 §1.4 claims (operation counts): recursive 4x4 ~5x NE; 3x3 ~2.5x NE; (1.2) ~15x recursive 4x4 at 6")
    plot(times, fits, tail, RESULTS / "formulations.png")
    result = {"machine": platform.platform(), "python": platform.python_version(),
              "counts": oc, "times_s": {m: {str(k): v for k, v in d.items()} for m, d in times.items()},
              "slopes": fits, "slopes_48_128": tail, "dqne_rnea_7dof": r7,
              "ratios_to_rnea": {str(k): v for k, v in ratios.items()},
              "runtime_s": time.perf_counter() - t_start}
    (RESULTS / "formulations.json").write_text(json.dumps(result, indent=1))
    print(f"\nwrote {RESULTS / 'formulations.json'} and formulations.png in {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
