"""``rbd-ros bringup`` with a simulated arm that is not the controller's model (issue 31):
``--perturb``, ``--seed``, ``--sim-model``, ``--model``, ``--noise`` and ``--tour excitation``
reach the right nodes (the bridge alone simulates the perturbed arm; the controller and the
services load ``--model``); end to end on planar2, the excitation is recorded, identified and
the identified model tracks the same mismatched arm better than the URDF model."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rbd_ros.model import MdhModel
from robots_data import REPO

pytest.importorskip("rclpy")


def bringup(argv: list[str]):
    from rbd_ros.ros.bringup.cli import build_plan, parse_args

    return build_plan(parse_args(argv))


def params(b, name: str) -> dict:
    return next(s.parameters for s in b.specs if s.name == name)


def test_perturbed_arm_goes_to_the_bridge_alone(tmp_path: Path) -> None:
    from rbd_ros.ros.bringup.mismatch import NOISE

    model_file = tmp_path / "ctrl.yaml"
    ctrl = MdhModel.from_yaml(str(REPO / "config" / "planar2.yaml"))
    ctrl.replace(mass=ctrl.mass * 1.1).to_yaml(str(model_file))
    rec = tmp_path / "run"
    b = bringup(["--robot", "planar2", "--perturb", "30", "--seed", "7", "--noise", "--model", str(model_file),
                 "--record", str(rec), "--quiet"])
    bridge, controller, services = (params(b, n) for n in ("mujoco_bridge", "controller", "dynamics_server"))
    assert bridge["model_yaml"] == str((rec / "sim_model.yaml").resolve())
    assert controller["model_yaml"] == services["model_yaml"] == str(model_file.resolve())
    assert all(bridge[k] == v for k, v in NOISE.items()) and "position_noise" not in controller
    sim = MdhModel.from_yaml(str(rec / "sim_model.yaml"))
    robot = MdhModel.from_yaml(str(REPO / "config" / "planar2.yaml"))  # perturbed: the robot, not --model
    ratio = sim.mass / robot.mass
    assert np.all(np.abs(ratio - 1.0) <= 0.3) and np.any(np.abs(ratio - 1.0) > 0.01)
    assert (sim.viscous > 0).all() and (sim.coulomb > 0).all()  # planar2 has none: the stated range
    assert b.model.mass == pytest.approx(ctrl.mass * 1.1)  # the tour is planned with --model
    said = "\n".join(b.said)
    assert "perturbed by up to 30 % (seed 7)" in said and "joint1: mass" in said and "joint2: mass" in said
    again = bringup(["--robot", "planar2", "--perturb", "30", "--seed", "7", "--quiet"])
    assert MdhModel.from_yaml(params(again, "mujoco_bridge")["model_yaml"]).mass.tolist() == sim.mass.tolist()


def test_model_alone_is_every_nodes_robot(tmp_path: Path) -> None:
    model_file = tmp_path / "m.yaml"
    MdhModel.from_yaml(str(REPO / "config" / "planar2.yaml")).to_yaml(str(model_file))
    b = bringup(["--model", str(model_file), "--quiet"])
    assert {params(b, n)["model_yaml"] for n in ("mujoco_bridge", "controller", "dynamics_server")} \
        == {str(model_file.resolve())}
    assert b.mismatch == [] and b.model.name == "planar2"


def test_excitation_tour_starts_where_the_arm_starts() -> None:
    b = bringup(["--robot", "planar2", "--tour", "excitation", "--quiet"])
    assert params(b, "mujoco_bridge")["initial_positions"] == pytest.approx(b.tour.start.tolist())
    q, qd, qdd = b.tour.sample(np.array([0.0, b.tour.duration]))
    assert np.abs(qd).max() < 1e-9 and np.abs(qdd).max() < 1e-9 and np.abs(q - b.tour.start).max() < 1e-9
    assert np.abs(b.tour.velocities).max() > 0.1 and b.tour.condition < 100


@pytest.mark.parametrize("argv,message", [
    (["--robot", "planar2", "--perturb", "30", "--composed"], "--composed runs the law inside the bridge"),
    (["--robot", "planar2", "--perturb", "130"], "--perturb must be in (0, 100)"),
    (["--robot", "planar2", "--sim-model", "/nonexistent.yaml"], "--sim-model /nonexistent.yaml: file not found"),
    (["--robot", "planar2", "--model", str(REPO / "config" / "arm7.yaml")], "are not the robot's"),
    (["--robot", "mobile_arm7", "--controller", "whole_body_computed_torque", "--tour", "excitation"],
     "--tour excitation identifies fixed-base arms"),
])
def test_bad_mismatch_arguments_are_one_line(argv, message, capsys) -> None:
    from rbd_ros.ros.bringup.cli import main

    assert main(argv + ["--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.slow
def test_excite_identify_and_control_the_mismatched_arm(tmp_path: Path) -> None:
    """planar2 30 % perturbed with sensor noise: excitation recorded, identified (held-out error
    below 5 % of the RMS torque), then the demo tour by computed torque with the identified
    model through the nodes against the same simulated arm, noise off: >= 10x better than the
    URDF model's run in the report's model comparison (ROS-free, the same arm and tour)."""
    def run(*argv: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "rbd_ros.cli", *argv], cwd=REPO, capture_output=True,
                              text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        return proc

    mismatch = ["--robot", "planar2", "--perturb", "30", "--seed", "7"]
    # 6 s of the 16.6 s excitation (CI time): held-out 0.23 % identified vs 16 % prior measured
    run("bringup", "--no-services", *mismatch, "--noise", "--tour", "excitation", "--duration", "6", "--record",
        str(tmp_path / "exc"), "--no-video", "--quiet")
    run("identify", str(tmp_path / "exc"), "--robot", "planar2", "-o", str(tmp_path / "id.yaml"),
        "--json", str(tmp_path / "id.json"))
    v = json.loads((tmp_path / "id.json").read_text())["validation"]
    assert v["identified_error_percent"] < 5.0 < v["prior_error_percent"]
    # the tour's first 3 s (its first segment and a half): 633x better measured
    run("bringup", "--no-services", *mismatch, "--model", str(tmp_path / "id.yaml"), "--duration", "3", "--json",
        str(tmp_path / "run.json"), "--quiet")
    report = json.loads((tmp_path / "run.json").read_text())
    rows = {r["label"] + r["note"]: r["max_rms"] for r in report["model_comparison"]["rows"]}
    urdf, nodes = rows["the robot's model (URDF)"], rows["--model id.yamlthis run, nodes"]
    print(f"planar2 30 %: held-out {v['prior_error_percent']:.2f} % (URDF) vs {v['identified_error_percent']:.2f} %;"
          f" CT max RMS {urdf:.3g} (URDF, ROS-free) vs {nodes:.3g} rad (identified, nodes); "
          f"{report['model_comparison']['rows']}")
    assert nodes == max(report["rms_error"]) and nodes * 10.0 <= urdf, rows
