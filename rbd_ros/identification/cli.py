"""``rbd-ros identify``: the dynamic parameters of an arm from a recording of it.

Usage::

    rbd-ros identify RUN_DIR|BAG (--robot NAME | --urdf PATH [--base-link L] [--tip-link L]
                     | --model FILE.yaml) -o arm_identified.yaml [--plot PNG] [--json FILE]
                     [--held-out FRACTION] [--window SAMPLES] [--min-velocity V]

The robot given is the prior: its kinematics define the regressor, its inertial parameters fill
what the recording cannot see.  Prints the base parameters (identified, standard deviation,
prior), the held-out torque prediction error of the prior and the identified model, and writes
the identified model (``MdhModel`` YAML under ``model:``, the figures under ``identification:``),
which ``rbd-ros bringup --model``, the nodes' ``model_yaml`` parameter and ``Robot.from_yaml``
load.  Bad input exits 2 with one line ``rbd-ros identify: error: ...``.
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rbd-ros identify", description=__doc__.split("\n\n")[0])
    p.add_argument("recording", help="a run directory of rbd-ros bringup --record, or a rosbag2 bag")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--robot", default=None, help="bundled robot (its config/NAME.yaml)")
    src.add_argument("--urdf", default="", help="a .urdf/.xacro file")
    src.add_argument("--model", default="", help="an MDH model YAML (rbd-ros urdf2mdh -o, config/NAME.yaml)")
    p.add_argument("--base-link", default="")
    p.add_argument("--tip-link", default="")
    p.add_argument("-o", "--output", required=True, metavar="OUT.yaml", help="the identified model")
    p.add_argument("--plot", default="", metavar="PNG", help="measured vs predicted torques (held-out part)")
    p.add_argument("--json", default="", metavar="FILE", help="the figures as JSON")
    p.add_argument("--held-out", type=float, default=0.25, metavar="FRACTION",
                   help="the last part of the recording kept for validation (default 0.25)")
    p.add_argument("--window", type=int, default=0, metavar="SAMPLES",
                   help="width of the parallel low-pass filter on the regressor and the torques (estimate.lowpass) "
                        "(default: 1 for a noise-free recording, else 81)")
    p.add_argument("--min-velocity", type=float, default=0.02, metavar="V",
                   help="leave out equations of a joint slower than this (rad/s; default 0.02)")
    return p


def load_prior(args: argparse.Namespace):  # noqa: ANN201
    """The robot given: ``--model`` file, ``--urdf`` file or bundled ``--robot``."""
    from rbd_ros.model import MdhModel
    from rbd_ros.urdf import load_model
    from rbd_ros.util.resources import DEFAULT_ROBOT, bundled_robots, config_file

    if args.model:
        if not Path(args.model).is_file():
            raise ValueError(f"--model {args.model}: file not found")
        return MdhModel.from_yaml(args.model)
    if args.urdf:
        if not Path(args.urdf).is_file():
            raise ValueError(f"--urdf {args.urdf}: file not found")
        return load_model(args.urdf, base_link=args.base_link or None, tip_link=args.tip_link or None)
    robot = args.robot or DEFAULT_ROBOT
    if robot not in bundled_robots():
        raise ValueError(f"unknown robot '{robot}'; bundled robots: {', '.join(bundled_robots())}")
    return MdhModel.from_yaml(str(config_file(robot)))


def run(args: argparse.Namespace) -> int:
    from rbd_ros.identification.estimate import identify
    from rbd_ros.identification.recording import load_recording

    if not 0.0 < args.held_out < 0.9:
        raise ValueError(f"--held-out must be in (0, 0.9), got {args.held_out}")
    prior = load_prior(args)
    window = args.window
    samples = load_recording(args.recording, prior, min_velocity=args.min_velocity)
    if window <= 0:  # noise shows as a jagged velocity: median second difference / peak speed is
        # ~1.6e-6 on a noise-free 1 kHz recording, 4e-4..6e-3 with the bridge's --noise
        rough = np.median(np.abs(np.diff(samples.qd, 2, axis=0)), axis=0)
        window = 1 if np.all(rough <= 3e-5 * np.maximum(np.abs(samples.qd).max(axis=0), 1e-9)) else 81
    window |= 1
    fit, held = samples.split(args.held_out)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = identify(prior, fit.q, fit.qd, fit.qdd, fit.tau, mask=fit.mask, window=window,
                       held_out=(held.q, held.qd, held.qdd, np.where(held.mask, held.tau, np.nan)))
    print(res.table())
    v = res.validation
    print(f"{res.samples} samples ({window}-sample parallel filter), {res.base.count} base parameters, "
          f"condition number {res.condition:.3g}; physical model: {res.consistency} "
          f"(base parameters within {res.gap:.2g} relative)")
    print(f"held-out torque error ({v['samples']} samples): prior {v['prior_error_percent']:.2f} % "
          f"of the RMS torque, identified {v['identified_error_percent']:.2f} %")
    for w in caught:
        if not issubclass(w.category, DeprecationWarning):
            print(f"warning: {w.message}", file=sys.stderr)
    write_model(res, args.output, args.recording)
    print(f"wrote {args.output}")
    if args.json:
        import json

        Path(args.json).write_text(json.dumps(res.summary(), indent=1))
    if args.plot:
        plot_torques(args.plot, prior, res, held)
        print(f"wrote {args.plot}")
    return 0


def write_model(res, path: str, source: str) -> None:  # noqa: ANN001
    """The identified ``MdhModel`` under ``model:``, the figures under ``identification:``."""
    import yaml

    body = yaml.safe_dump({"model": res.model.to_dict(), "identification": res.summary()},
                          sort_keys=False, default_flow_style=None, width=120)
    head = (f"# {res.model.name}: identified by rbd-ros identify from {source} (prior: {res.prior.name}).\n"
            f"# Load with rbd-ros bringup --model {Path(path).name}, the nodes' model_yaml parameter or\n"
            f"# rbd_ros.Robot.from_yaml.  Held-out torque error: prior "
            f"{res.validation.get('prior_error_percent', float('nan')):.2f} %, identified "
            f"{res.validation.get('identified_error_percent', float('nan')):.2f} % of the RMS torque.\n")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(head + body, encoding="utf-8")


def plot_torques(path: str, prior, res, held) -> None:  # noqa: ANN001
    """Measured torque and the two models' predictions per joint on the held-out samples."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rbd_ros.identification.regressor import regressor, standard_parameters

    Y = regressor(prior, held.q, held.qd, held.qdd)
    n = prior.dof
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.8 * n + 0.8), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(held.t, held.tau[:, j], "k", lw=1.2, label="measured (commanded)")
        ax.plot(held.t, Y[:, j] @ standard_parameters(prior), "C3", lw=0.9, label="URDF / prior model")
        ax.plot(held.t, Y[:, j] @ standard_parameters(res.model), "C0--", lw=0.9, label="identified")
        ax.set_ylabel(f"{prior.joint_names[j]}\nN m", fontsize=8)
    axes[0, 0].legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("time (s)")
    v = res.validation
    fig.suptitle(f"held-out torques: prior {v['prior_error_percent']:.1f} %, identified "
                 f"{v['identified_error_percent']:.2f} % RMS error", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except (ValueError, FileNotFoundError, OSError, RuntimeError) as exc:
        print(f"rbd-ros identify: error: {exc}", file=sys.stderr)
        return 2
