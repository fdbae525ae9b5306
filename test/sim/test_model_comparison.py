"""Tracking with the URDF's model vs another against one mismatched simulated arm (issue 31,
``rbd_ros.sim.model_comparison``), on the SO-101 arm (no other test names it) 30 % perturbed
(seed 7), computed torque, 1 s of the tour, the bridge's sensor noise on:

* the error against the simulator's true state excludes the sensor noise: per joint,
  ``rms_measured^2 - rms_true^2`` is the position noise's variance (the oracle: the bridge's
  ``position_noise``, 5e-5 rad), and without noise the two are the same numbers;
* the simulated arm's own model tracks >= 10x better than the URDF's (the table's ratio is the
  rows' quotient), the table survives ``report.json`` (``to_dict``/``from_dict``), another
  arm's model is refused in one line.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from rbd_ros.sim.simulator import SENSOR_NOISE as NOISE  # bringup --noise
from robots_data import example_robot_urdf

SO101 = "so_arm_description/urdf/so101.urdf"


@pytest.fixture(scope="module")
def so101():
    from rbd_ros.control.tour import plan_tour
    from rbd_ros.identification import perturb
    from rbd_ros.urdf import load_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        urdf = load_model(str(example_robot_urdf(SO101)))
    return urdf, perturb(urdf, 30.0, seed=7), plan_tour(urdf, segment_time=0.5, floor=None)


def test_true_state_error_excludes_the_sensor_noise(so101) -> None:
    from rbd_ros.sim.closed_loop import run_tour

    _, truth, tour = so101
    noisy = run_tour(truth, "computed_torque", tour=tour, duration=1.0, bridge=NOISE, sim_model=truth)
    noise = np.sqrt(noisy.rms_error**2 - noisy.true_rms_error**2)
    assert np.all(np.abs(noise / NOISE["position_noise"] - 1.0) < 0.25), noise
    clean = run_tour(truth, "computed_torque", tour=tour, duration=0.3, sim_model=truth)
    assert np.array_equal(clean.rms_error, clean.true_rms_error)


def test_the_arms_own_model_tracks_10x_better_in_one_table(so101) -> None:
    from rbd_ros.sim.model_comparison import ModelComparison, compare_models

    urdf, truth, tour = so101
    comp = compare_models(truth, {"URDF": urdf, "exact": truth}, "computed_torque", tour, bridge=NOISE,
                          duration=1.0)
    first, exact = comp.rows
    assert comp.noise and exact.true_max_rms < exact.max_rms  # the noise is out of the true state
    assert comp.ratio(1) == pytest.approx(first.true_max_rms / exact.true_max_rms) and comp.ratio(1) >= 10.0
    lines = comp.lines()
    print("\n".join(lines))
    assert "true-state rms" in lines[1] and lines[3].startswith("exact") and lines[3].endswith("x")
    assert ModelComparison.from_dict(comp.to_dict()).lines() == lines
    with pytest.raises(ValueError, match="has joints .* the simulated arm"):
        compare_models(truth, {"other": urdf.replace(joint_names=tuple(f"j{k}" for k in range(urdf.dof)))},
                       "computed_torque", tour, duration=0.01)
