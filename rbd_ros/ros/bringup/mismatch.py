"""The simulated arm is not the controller's model (issue 31): the bringup's ``--model``,
``--sim-model``, ``--perturb PERCENT --seed N`` and ``--noise``.

* ``--model FILE.yaml``: the model of the controller and the dynamics services (the tour is
  planned with it too).  Given alone it is the robot for every node, the bridge included.
* the simulated arm: ``--sim-model FILE`` if given, else the ``--robot``/``--urdf`` arm (its
  bundled ``config/NAME.yaml`` with the drives), changed by ``--perturb PERCENT --seed N``
  (``rbd_ros.identification.perturb``: masses, centres of mass, inertias, armature and
  friction, physically consistent).  It is written to a model file that only the bridge loads
  (``model_yaml``): ``DIR/sim_model.yaml`` with ``--record DIR``, else a temporary file.
* ``--noise``: the bridge's sensor noise parameters (``position_noise``, ``velocity_noise``,
  ``effort_noise`` of ``config/schema/mujoco_bridge.yaml``) at ``NOISE``
  (``rbd_ros.sim.simulator.SENSOR_NOISE``), a real arm's order of magnitude.

The run prints what differs between the simulated arm and the controller's model, one line
per joint, and the report (``report.json``) keeps them under ``mismatch``.  With ``--model``
and a mismatched arm, the report also compares the tracking of the same tour on the same
simulated arm with the robot's (URDF) model, with ``--model`` and with the simulated arm itself
(``compare``: ROS-free lockstep runs, ``rbd_ros.sim.model_comparison``) next to this run's own
figure through the nodes: one table in the terminal, ``report.json`` (``model_comparison``)
and the page.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from rbd_ros.identification import differences, perturb
from rbd_ros.model import MdhModel
from rbd_ros.sim.model_comparison import ComparisonRow, compare_models
from rbd_ros.sim.simulator import SENSOR_NOISE as NOISE  # --noise: the bridge parameters
from rbd_ros.urdf import load_model


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model mismatch (the simulated arm is not the controller's model)")
    g.add_argument("--model", default="", metavar="FILE.yaml",
                   help="the controller's and services' model (e.g. rbd-ros identify -o); alone: "
                        "the robot for every node")
    g.add_argument("--sim-model", default="", metavar="FILE",
                   help="the simulated arm: an MDH model YAML or a URDF (default: the --robot/--urdf arm)")
    g.add_argument("--perturb", type=float, default=0.0, metavar="PERCENT",
                   help="change the simulated arm's masses, centres of mass, inertias, armature and "
                        "friction by up to PERCENT %% (physically consistent)")
    g.add_argument("--seed", type=int, default=0, help="the perturbation's seed (default 0)")
    g.add_argument("--noise", action="store_true",
                   help="sensor noise on the simulated arm: " + ", ".join(f"{k} {v:g}" for k, v in NOISE.items()))


def mismatched(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "sim_model", "") or getattr(args, "perturb", 0.0))


def _load(path: str, what: str):

    p = Path(path)
    if not p.is_file():
        raise ValueError(f"{what} {path}: file not found")
    if p.suffix.lower() in (".urdf", ".xacro"):
        return load_model(str(p))
    return MdhModel.from_yaml(str(p))


def control_model(args: argparse.Namespace, default):
    """The controller's model: ``--model`` or ``default`` (the robot's); the joints must be the
    robot's when both are given."""
    if not getattr(args, "model", ""):
        return default
    model = _load(args.model, "--model")
    if (args.robot or args.urdf) and model.joint_names != default.joint_names:
        raise ValueError(f"--model {args.model}: joints {list(model.joint_names)} are not the robot's "
                         f"{list(default.joint_names)}")
    return model


def simulated_model(args: argparse.Namespace, robot, control):
    """The simulated arm (module docstring) and the lines saying how it differs from ``control``;
    ``(None, [])`` when it is the controller's model."""
    if not mismatched(args):
        return None, []
    if args.perturb and not 0.0 < args.perturb < 100.0:
        raise ValueError(f"--perturb must be in (0, 100) %, got {args.perturb:g}")
    sim = _load(args.sim_model, "--sim-model") if args.sim_model else robot
    if sim.joint_names != control.joint_names:
        raise ValueError(f"--sim-model {args.sim_model}: joints {list(sim.joint_names)} are not the "
                         f"controller's {list(control.joint_names)}")
    if args.perturb:
        sim = perturb(sim, args.perturb, args.seed)
    what = (f"simulated arm: {args.sim_model or 'the robot'}"
            + (f", perturbed by up to {args.perturb:g} % (seed {args.seed})" if args.perturb else "")
            + f"; the controller's model: {args.model or 'the robot'}")
    return sim, [what] + differences(control, sim)


def node_parameters(args: argparse.Namespace, sim, record: str) -> tuple[dict[str, Any], str]:
    """The bridge's extra parameters (its ``model_yaml``, the noise) and the simulated model's
    file ('' = none written)."""
    bridge: dict[str, Any] = dict(NOISE) if getattr(args, "noise", False) else {}
    path = ""
    if sim is not None:
        folder = Path(record) if record else Path(tempfile.mkdtemp(prefix="rbd_ros_sim_"))
        folder.mkdir(parents=True, exist_ok=True)
        path = str((folder / "sim_model.yaml").resolve())
        Path(path).write_text("# the simulated arm of a rbd-ros bringup run (mismatch.py)\n"
                              + sim.to_yaml(), encoding="utf-8")
        bridge["model_yaml"] = path
    elif getattr(args, "model", ""):
        bridge["model_yaml"] = str(Path(args.model).resolve())  # --model alone: the robot for all
    return bridge, path


def apply(specs: list, args: argparse.Namespace) -> None:
    """``--model`` into the controller's and the services' parameters (``model_yaml`` wins over
    the URDF; ``rbd_ros.ros.robot_params``)."""
    if not getattr(args, "model", ""):
        return
    path = str(Path(args.model).resolve())
    for spec in specs:
        if spec.name in ("controller", "dynamics_server"):
            spec.parameters["model_yaml"] = path


def check(args: argparse.Namespace) -> None:
    if mismatched(args) and getattr(args, "composed", False):
        raise ValueError("--composed runs the law inside the bridge with the bridge's model: a "
                         "mismatched simulation (--perturb, --sim-model) needs a separate controller")


#: the bridge settings the ROS-free comparison runs copy from the run's bridge
SIM_SETTINGS = ("timestep", "integrator", *NOISE)


def compare(args: argparse.Namespace, robot, control, sim, tour, bridge: dict, report) -> dict | None:
    """The model comparison of the module docstring (``ModelComparison.to_dict``), or ``None``
    when this run has no ``--model`` against a mismatched arm.  ``report``: this run's
    (``Report``), its row."""
    if not (getattr(args, "model", "") and sim is not None):
        return None
    what = (f"{Path(args.sim_model).name if args.sim_model else robot.name}"
            + (f" perturbed {args.perturb:g} % (seed {args.seed})" if args.perturb else ""))
    print(f"[bringup] model comparison: {args.controller} on the same simulated arm with the robot's "
          "model, --model and the arm itself (ROS-free lockstep runs)", flush=True)
    models = {"the robot's model (URDF)": robot, f"--model {Path(args.model).name}": control,
              "the simulated arm itself (the floor)": sim}
    out = compare_models(sim, models, args.controller, tour,
                         bridge={k: bridge[k] for k in SIM_SETTINGS if k in bridge}, simulated=what)
    out.rows.insert(2, ComparisonRow(f"--model {Path(args.model).name}", max(report.rms_error),
                                     max(report.max_error), None, "this run, nodes"))
    return out.to_dict()
