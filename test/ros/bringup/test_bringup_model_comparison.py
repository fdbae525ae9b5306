"""The bringup's model comparison (issue 31: ``--model`` against a mismatched arm), without
starting nodes: ``bringup.mismatch.compare`` runs the tour with the robot's (URDF) model,
``--model`` and the simulated arm itself (ROS-free), adds this run's own row, and the report
prints it (terminal), keeps it (``report.json``, strict JSON) and shows it as a table on the
page; with the sensor noise on, the ROS-free rows are measured against the true state too.  SO-101
(no other bringup test names it), 30 % perturbed (seed 7); ``--model`` is the simulated arm's
own model here (what a perfect identification gives), so it must track >= 10x better."""
from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pytest

from robots_data import example_robot_urdf


def test_report_compares_the_urdf_and_the_given_model(tmp_path) -> None:
    from rbd_ros.control.tour import plan_tour
    from rbd_ros.identification import perturb
    from rbd_ros.ros.bringup import mismatch
    from rbd_ros.ros.bringup.page import write_page
    from rbd_ros.ros.bringup.report import Report, make_report
    from rbd_ros.urdf import load_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        urdf = load_model(str(example_robot_urdf("so_arm_description/urdf/so101.urdf")))
    sim = perturb(urdf, 30.0, seed=7)
    tour = plan_tour(urdf, segment_time=0.2, floor=None)
    args = argparse.Namespace(model=str(tmp_path / "so101_identified.yaml"), sim_model="", perturb=30.0,
                              seed=7, controller="computed_torque")
    t = np.linspace(0.0, 1.0, 11)
    run = make_report(list(urdf.joint_names), np.zeros((11, urdf.dof)), np.full((11, urdf.dof), 1e-5),
                      np.ones((11, urdf.dof)), t, 1.0, 0)  # this run through the nodes: 1e-5 rad
    assert mismatch.compare(argparse.Namespace(model="", controller="pd"), urdf, urdf, sim, tour, {}, run) is None
    noise = {"position_noise": 5e-5, "velocity_noise": 2e-3, "effort_noise": 0.05}  # bringup --noise
    run.model_comparison = mismatch.compare(args, urdf, sim, sim, tour, {"timestep": 0.001, "kp": 1, **noise},
                                            run)
    rows = run.model_comparison["rows"]
    assert [r["label"] for r in rows] == ["the robot's model (URDF)", "--model so101_identified.yaml",
                                          "--model so101_identified.yaml", "the simulated arm itself (the floor)"]
    assert rows[2]["note"] == "this run, nodes" and rows[2]["max_rms"] == pytest.approx(1e-5)
    assert rows[0]["true_max_rms"] >= 10.0 * rows[1]["true_max_rms"]  # URDF vs the arm's own model
    assert rows[1]["true_max_rms"] == rows[3]["true_max_rms"]  # --model is the simulated arm here
    assert rows[2]["true_max_rms"] is None  # the nodes' run: measured only
    table = run.table()
    assert f"model comparison: computed_torque on {urdf.name} perturbed 30 % (seed 7)" in table
    assert "(this run, nodes)" in table
    run.to_json(tmp_path / "report.json")
    data = json.loads((tmp_path / "report.json").read_text(), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    ratios = data["model_comparison"]["ratio_to_first"]
    assert ratios[0] >= 10.0 and ratios[1] is None  # strict JSON: no NaN
    page = write_page(tmp_path, Report(**data), {}).read_text()
    assert "id='model_comparison'" in page and page.count("<tr><td>--model so101_identified.yaml") == 2
    assert "true-state rms" in page and "nan" not in page.lower()
