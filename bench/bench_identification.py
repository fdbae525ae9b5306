"""Identification against a known truth (issue 44.3): parameter errors, not only torque errors.

    .venv/bin/python bench/bench_identification.py [--arms finger_edu,human_right,simple_humanoid_right]
                                                   [--percent 30] [--noise 0.05] [--json FILE]
                                                   [--excitation optimal|optimal_30s|optimal_wide|default]
                                                   [--window 81|0] [--draws K]

For each arm: the URDF model (the prior) perturbed by ``--percent`` (``identification.perturb``,
seed 7) is the truth (each link's inertial as MuJoCo takes it: ``as_simulated``), simulated
in MuJoCo (the bridge's ``Simulator``, lockstep, 1 kHz) under computed torque with the prior
along one excitation (``--excitation optimal``, the default: ``plan_excitation(optimise=True)``,
4 periods of 7.5 s, 30 s, the base parameters' expected
relative standard deviation minimised; ``default``: its unit-norm condition number, 2 periods of
8 s, 16 s, the first row of bench/README.md; ``optimal_30s``: one 30 s period, 10 harmonics;
``optimal_wide``: ``optimal`` at 90 % of the effort and 95 % of the velocity limits, not 70 and
80 %), its measured efforts with Gaussian noise of ``--noise`` times each joint's RMS torque
added, written as a bag and identified as ``rbd-ros identify`` does (the parallel filter of
``--window`` samples, 81 by default; 0: as ``identify`` picks it, 1 here, where the states are
exact and only the torques noisy; the last 25 % held out); ``--draws K``: K noise draws on
each arm's one simulated run (draw 0 the noise of the earlier rows), a row each, then their
means.  Printed per arm:

* **base parameters**: the mean over base parameters of ``|beta_hat - beta| / max(|beta|, 1e-3
  max|beta|)`` against the truth's own base parameters (and the largest), and the same over
  the well-excited ones (identified standard deviation under 1 % of the value); those under
  the noise floor (identified standard deviation over 1 % of the metric's denominator) are
  counted and named (``under_noise_floor`` in the JSON), with the mean over the others;
* **link masses**: those the base parameters determine (``e_m`` in the row space of the
  base-parameter map: the excitation and the kinematics make them identifiable), each one's
  relative error; the others are named as not identifiable;
* **held-out torque NRMSE** per joint: the identified model's torque on the held-out states
  against the truth's noise-free torque there, in % of its RMS (the noisy measurement's own
  NRMSE would be the noise level);
* **physical**: every link of the identified model checked (``consistency.physical_checks``:
  positive semidefinite pseudo-inertia, mass > 0, the principal moments' triangle inequalities).

Figures of one run on this machine are in bench/README.md ("Identification against a known truth").
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "test" / "support")]  # identification_data, robots_data

ARMS = {  # name: (URDF under example-robot-data's robots/, base_link, tip_link)
    "finger_edu": ("finger_edu_description/robots/finger_edu.urdf", None, None),
    "human_right": ("human_description/robots/human.urdf", "middle_thorax", "right_hand"),
    "simple_humanoid_right": ("simple_humanoid_description/urdf/simple_humanoid.urdf", "torso", "r_wrist"),
}


def identifiable(B, index: int) -> tuple[bool, np.ndarray]:
    """Whether standard parameter ``index`` is a combination ``w . beta`` of the base
    parameters (``B.beta`` linear: its matrix's row space holds ``e_index``), and ``w``."""
    n = len(B.names)
    Bm = np.array([B.beta(e) for e in np.eye(n)]).T  # (b, 13 n)
    e = np.zeros(n)
    e[index] = 1.0
    w, *_ = np.linalg.lstsq(Bm.T, e, rcond=None)
    return bool(np.abs(Bm.T @ w - e).max() < 1e-8), w


EXCITATIONS = {  # --excitation: plan_excitation's arguments
    "default": {"period": 8.0, "periods": 2, "evaluations": 30},  # 16 s, the unit-norm condition number
    "optimal": {"period": 7.5, "periods": 4, "harmonics": 6, "evaluations": 120, "optimise": True},  # 30 s
    # 30 s too, one period of 30 s with 10 harmonics: more distinct frequencies, no repetition
    "optimal_30s": {"period": 30.0, "periods": 1, "harmonics": 10, "evaluations": 120, "optimise": True},
    # the optimal series closer to the limits: 90 % of the effort and 95 % of the velocity limits
    "optimal_wide": {"period": 7.5, "periods": 4, "harmonics": 6, "evaluations": 120, "optimise": True,
                     "effort_margin": 0.9, "velocity_margin": 0.95},
}


_RUNS: dict = {}  # (arm, percent, seed, excitation) -> the simulated run, for more noise draws


def run_arm(name: str, percent: float, noise: float, seed: int = 7, excitation: str = "default",
            window: int = 81, draw: int = 0) -> dict:
    from identification_data import as_simulated, simulate, write_bag

    from rbd_ros.control.tour import plan_tour
    from rbd_ros.identification import perturb, standard_parameters
    from rbd_ros.identification.base import base_parameters
    from rbd_ros.identification.consistency import physical_checks
    from rbd_ros.identification.estimate import identify, parallel_window
    from rbd_ros.identification.excitation import plan_excitation
    from rbd_ros.identification.recording import load_recording
    from rbd_ros.identification.regressor import PARAMETERS, regressor
    from rbd_ros.urdf import load_model
    from robots_data import example_robot_urdf

    rel, base, tip = ARMS[name]
    key = (name, percent, seed, excitation)
    if key not in _RUNS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            prior = load_model(str(example_robot_urdf(rel)), base_link=base, tip_link=tip)
            truth = as_simulated(perturb(prior, percent, seed=seed))  # as MuJoCo steps it (min mass ...)
            t0 = time.process_time()
            exc = plan_excitation(prior, plan_tour(prior, floor=None).start, floor=None,
                                  **EXCITATIONS[excitation])
            plan_s = time.process_time() - t0

            def reference(t: float):
                return tuple(x[0] for x in exc.sample([t]))

            t0 = time.perf_counter()
            _RUNS[key] = (prior, truth, exc, plan_s, simulate(truth, prior, reference, exc.duration),
                          time.perf_counter() - t0)
    prior, truth, exc, plan_s, (t, q, qd, effort, commands), sim_s = _RUNS[key]
    rng = np.random.default_rng(seed + draw)  # draw 0: the noise of the rows before 2026-12-02
    rms = np.sqrt(np.mean(effort ** 2, axis=0))
    noisy = effort + rng.normal(size=effort.shape) * noise * rms
    with tempfile.TemporaryDirectory() as tmp:
        bag = write_bag(Path(tmp) / "bag", prior.joint_names, t, q, qd, noisy, commands)
        samples = load_recording(bag, prior)
        clean = load_recording(write_bag(Path(tmp) / "clean", prior.joint_names, t, q, qd, effort, commands),
                               prior)
    fit, held = samples.split(0.25)
    _, held_clean = clean.split(0.25)
    window = parallel_window(samples.qd, window)  # 0: as rbd-ros identify picks it (1: exact states)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = identify(prior, **fit.equations(), window=window)
    id_s = time.perf_counter() - t0
    B = base_parameters(prior)
    beta_true = B.beta(standard_parameters(truth))
    beta_hat = res.beta
    scale = np.maximum(np.abs(beta_true), 1e-3 * np.abs(beta_true).max())
    err = np.abs(beta_hat - beta_true) / scale
    well = np.abs(res.beta_std) < 0.01 * np.abs(beta_hat)  # excited: their own std under 1 %
    masses = {}
    m_index = PARAMETERS.index("m") if "m" in PARAMETERS else 9
    for i, joint in enumerate(prior.joint_names):
        ok, w = identifiable(B, 13 * i + m_index)
        masses[joint] = (abs(float(w @ beta_hat) - truth.mass[i]) / truth.mass[i]) if ok else None
    Yh = regressor(prior, held_clean.q, held_clean.qd, held_clean.qdd)
    pred = np.einsum("kjp,p->kj", Yh, standard_parameters(res.model))
    ref_tau = np.einsum("kjp,p->kj", Yh, standard_parameters(truth))
    nrmse = 100 * np.sqrt(np.mean((pred - ref_tau) ** 2, axis=0)) / np.sqrt(np.mean(ref_tau ** 2, axis=0))
    checks = physical_checks(res.model)
    poor = np.argsort(-err)[:5]
    labels = B.labels()
    return {"arm": name, "dof": prior.dof, "excitation": excitation, "window": window,
            "duration_s": float(exc.duration),
            "condition": float(exc.condition), "plan_cpu_s": plan_s, "base_parameters": B.count,
            "worst": [(labels[i], float(err[i]), float(res.beta_std[i] / scale[i]), float(beta_true[i])) for i in poor],
            "poor": int(np.sum(res.beta_std > 0.01 * scale)),  # identified std over 1 % of the scale
            "poor_share_of_error": float(err[res.beta_std > 0.01 * scale].sum() / max(err.sum(), 1e-300)),
            "poor_median_size": float(np.median(np.abs(beta_true[res.beta_std > 0.01 * scale]))
                                      / np.abs(beta_true).max()) if np.any(res.beta_std > 0.01 * scale) else 0.0,
            "under_noise_floor": [labels[i] for i in np.flatnonzero(res.beta_std > 0.01 * scale)],
            "beta_identifiable_mean_rel_err": float(err[res.beta_std <= 0.01 * scale].mean())
            if np.any(res.beta_std <= 0.01 * scale) else float("nan"),
            "beta_mean_rel_err": float(err.mean()), "beta_max_rel_err": float(err.max()),
            "well_excited": int(well.sum()),
            "beta_well_mean_rel_err": float(err[well].mean()) if well.any() else float("nan"),
            "mass_rel_err": masses, "nrmse_percent": nrmse.tolist(),
            "physical": all(c["physical"] for c in checks), "checks": checks,
            "simulate_s": sim_s, "identify_s": id_s}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arms", default=",".join(ARMS))
    ap.add_argument("--percent", type=float, default=30.0)
    ap.add_argument("--noise", type=float, default=0.05, help="torque noise std / each joint's RMS torque")
    ap.add_argument("--excitation", default="optimal", choices=tuple(EXCITATIONS),
                    help="default: plan_excitation's own (16 s, condition number); optimal: optimise=True, 30 s")
    ap.add_argument("--window", type=int, default=81,
                    help="the parallel filter's samples (81, the rows before 2026-12-02); 0: as rbd-ros "
                         "identify picks it (1 here: the states are exact, the noise is the torques')")
    ap.add_argument("--draws", type=int, default=1,
                    help="noise draws on each arm's one simulated run (a row each, then their means)")
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    rows = [run_arm(a, args.percent, args.noise, excitation=args.excitation, window=args.window, draw=d)
            for a in args.arms.split(",") for d in range(args.draws)]
    print("| arm (DoF, excitation) | base params: mean / max rel. error | std < 1 %: count, mean rel. "
          "error | link masses identifiable: "
          "max rel. error | not identifiable | held-out NRMSE max per joint | physical |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        known = {j: e for j, e in r["mass_rel_err"].items() if e is not None}
        unknown = [j for j, e in r["mass_rel_err"].items() if e is None]
        worst = f"{100 * max(known.values()):.2f} % ({len(known)})" if known else "none"
        print(f"| {r['arm']} ({r['dof']}, {r['excitation']} {r['duration_s']:.0f} s, window {r['window']}, "
              f"cond {r['condition']:.3g}, "
              f"planned in {r['plan_cpu_s']:.1f} s CPU) | {100 * r['beta_mean_rel_err']:.3f} % / "
              f"{100 * r['beta_max_rel_err']:.2f} % | {r['well_excited']} of {r['base_parameters']}, "
              f"{100 * r['beta_well_mean_rel_err']:.3f} % | {worst} | {', '.join(unknown) or '-'} | "
              f"{max(r['nrmse_percent']):.2f} % | {'yes' if r['physical'] else 'NO'} |")
    for r in rows:
        print(f"{r['arm']}: {r['poor']} base parameters with an identified std over 1 % of their scale (under "
              f"the noise floor) carry {100 * r['poor_share_of_error']:.0f} % of the summed error (median |beta| "
              f"{r['poor_median_size']:.2g} of the largest); mean rel. error over the other "
              f"{r['base_parameters'] - r['poor']}: {100 * r['beta_identifiable_mean_rel_err']:.3f} %; "
              "largest errors: " + "; ".join(
                  f"{lab} {100 * e:.3g} % (std {100 * sd:.3g} % of its scale, value {v:.3g})"
                  for lab, e, sd, v in r["worst"]))
    if args.draws > 1:
        for arm in dict.fromkeys(r["arm"] for r in rows):
            mine = [r for r in rows if r["arm"] == arm]
            print(f"{arm}, mean of {len(mine)} noise draws: base params mean rel. error "
                  f"{100 * np.mean([r['beta_mean_rel_err'] for r in mine]):.2f} % (all), "
                  f"{100 * np.nanmean([r['beta_identifiable_mean_rel_err'] for r in mine]):.3f} % over those "
                  f"above the noise floor ({np.mean([r['base_parameters'] - r['poor'] for r in mine]):.1f} "
                  f"of {mine[0]['base_parameters']})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
