"""The optimised excitation (issue 44.3, ``plan_excitation(optimise=True)``) against oracles
outside the planner, on the UR3 (example-robot-data; 6 joints, no drive terms in its URDF):

* its criterion, the expected mean relative standard deviation of the base parameters under
  torque noise proportional to each joint's RMS torque (Swevers et al. 1997; Gautier & Khalil's
  weighted least squares), computed here by the explicit inverse of the weighted information
  matrix, is lower than the default excitation's (the unit-norm condition number's) of the
  same length, and so is the weighted regressor's condition number;
* the whole sent path (``spline()``, sampled 4 ms apart) stays inside the URDF's position
  limits (ElementTree), 0.8 of its velocity limits, and its torque (Pinocchio's ``rnea`` on
  the URDF) inside ``effort_margin`` of its effort limits (0.7, and 0.02 where it binds);
* a short identification from exact samples of each excitation, torques of a 30 %-perturbed
  truth (our RNEA with the truth's parameters) with 5 % noise of each joint's RMS torque, the
  same noise seeds for both: the optimised excitation's base parameters are nearer the truth's
  on average (noise-free, both are exact to round-off: shown too)."""
from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from rbd_ros.identification import base_parameters, identify, perturb, regressor, standard_parameters
from rbd_ros.identification.excitation import plan_excitation
from rbd_ros.robot import Robot
from robots_data import example_robot_urdf

UR3 = "ur_description/urdf/ur3_robot.urdf"
PLAN = {"period": 6.0, "periods": 1, "evaluations": 150, "seed": 0}


@pytest.fixture(scope="module")
def planned():
    from rbd_ros.urdf import load_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = load_model(str(example_robot_urdf(UR3)))
    return m, plan_excitation(m, np.zeros(m.dof), **PLAN), plan_excitation(m, np.zeros(m.dof), optimise=True, **PLAN)


def _weighted(m, exc, beta: np.ndarray, rows: int = 600) -> np.ndarray:
    """The base regressor, each joint's rows over its RMS torque and each column times the
    prior's ``max(|beta_i|, 1e-3 max|beta|)``: relative parameters, unit relative noise."""
    B = base_parameters(m)
    q, qd, qdd = exc.sample(np.linspace(0.0, exc.duration, rows, endpoint=False))
    Y = regressor(m, q, qd, qdd)[:, :, B.independent]
    rms = np.sqrt(np.mean(np.einsum("kjb,b->kj", Y, beta) ** 2, axis=0))
    scale = np.maximum(np.abs(beta), 1e-3 * np.abs(beta).max())
    return (Y * scale / rms[None, :, None]).reshape(-1, B.count)


@pytest.mark.slow
def test_optimised_excitation_lowers_the_expected_relative_error(planned) -> None:
    m, default, optimal = planned
    beta = base_parameters(m).beta(standard_parameters(m))
    std, cond = [], []
    for exc in (default, optimal):
        A = _weighted(m, exc, beta)
        std.append(np.mean(np.sqrt(np.diag(np.linalg.inv(A.T @ A)))))
        cond.append(np.linalg.cond(A))
    assert std[1] < 0.85 * std[0], std  # 49 against 68 when written
    assert cond[1] < cond[0], cond


def _urdf_limits(path: str, names, key: str) -> np.ndarray:
    joints = {j.get("name"): j for j in ET.parse(path).getroot().findall("joint")}  # (not <transmission>s)
    return np.array([float(joints[name].find("limit").get(key)) for name in names])


@pytest.mark.parametrize("effort_margin", [0.7, 0.02])
def test_optimised_excitation_within_every_limit_along_the_whole_path(planned, effort_margin) -> None:
    """With 0.02 of the effort limits, upright, the torque binds (the 0.7 plan needs 0.06 on the
    shoulder lift); with 0.7 the speed does (0.8 of the limits)."""
    import pinocchio as pin

    m, _, exc = planned
    if effort_margin != 0.7:
        up = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])  # upright: little gravity torque
        exc = plan_excitation(m, up, optimise=True, effort_margin=effort_margin,
                              **{**PLAN, "evaluations": 20})
    path = str(example_robot_urdf(UR3))
    lo, hi = _urdf_limits(path, m.joint_names, "lower"), _urdf_limits(path, m.joint_names, "upper")
    vmax, effort = _urdf_limits(path, m.joint_names, "velocity"), _urdf_limits(path, m.joint_names, "effort")
    spline = exc.spline()
    t = np.arange(0.0, exc.duration, 0.004)
    q, qd, qdd = spline.sample(t)
    assert np.all(q >= lo) and np.all(q <= hi)
    assert np.all(np.abs(qd) <= 0.8 * vmax * (1 + 1e-6)), (np.abs(qd).max(axis=0) / vmax).round(3)
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    idx = [pm.joints[pm.getJointId(name)].idx_q for name in m.joint_names]
    peak = np.zeros(m.dof)
    for k in range(len(t)):
        x, v, a = (np.zeros(pm.nq) for _ in range(3))
        x[idx], v[idx], a[idx] = q[k], qd[k], qdd[k]
        peak = np.maximum(peak, np.abs(pin.rnea(pm, pd, x, v, a)[idx]))
    assert np.all(peak <= effort_margin * effort * (1 + 1e-6)), (peak / effort).round(3)
    speed = (np.abs(qd).max(axis=0) / vmax).max() / 0.8
    binding = (peak / effort).max() / effort_margin if effort_margin < 0.7 else speed
    assert binding > 0.85, binding  # the limit is what bounds the motion
    assert np.abs(q[0] - exc.start).max() < 1e-9  # from rest at its start


@pytest.mark.slow
def test_optimised_excitation_identifies_the_base_parameters_better(planned) -> None:
    m, default, optimal = planned
    truth = perturb(m, 30.0, seed=3)
    B = base_parameters(m)
    beta = B.beta(standard_parameters(truth))
    scale = np.maximum(np.abs(beta), 1e-3 * np.abs(beta).max())
    errors = []
    for exc in (default, optimal):
        q, qd, qdd = exc.sample(np.linspace(0.0, exc.duration, 1200, endpoint=False))
        tau = Robot(truth).inverse_dynamics(q, qd, qdd, include_actuators=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exact = identify(m, q, qd, qdd, tau, base=B)
            assert np.abs(exact.beta - beta).max() < 1e-8 * np.abs(beta).max()
            rms = np.sqrt(np.mean(tau**2, axis=0))
            errors.append(np.mean([np.mean(np.abs(identify(m, q, qd, qdd, tau + rng.normal(size=tau.shape) * 0.05 * rms,
                                                           base=B).beta - beta) / scale)
                                   for rng in (np.random.default_rng(s) for s in range(3))]))
    assert errors[1] < errors[0], errors  # 14 % against 17 % when written


def test_bringup_excitation_optimal_plans_the_optimised_series() -> None:
    """``rbd-ros bringup --tour excitation --excitation optimal`` reaches ``optimise=True``: the
    same series as ``plan_excitation(optimise=True)`` from the tour's start; the default flag
    gives the condition-number series, a different one; a wrong value is refused by name."""
    import argparse

    from core_oracles import bundled
    from rbd_ros.control.tour import plan_tour
    from rbd_ros.ros.bringup import excitation as bringup_excitation

    p = argparse.ArgumentParser()
    bringup_excitation.add_arguments(p)
    m = bundled("planar2")
    tour = plan_tour(m)
    plans = {}
    for flag in ("optimal", "condition"):
        args = p.parse_args(["--tour", "excitation", "--excitation", flag])
        args.segment_time = 2.0
        plans[flag] = bringup_excitation.plan(args, m, tour, ())
    direct = plan_excitation(m, tour.start, period=2.0, floor=tour.floor, optimise=True)
    assert np.allclose(plans["optimal"].a, direct.a) and np.allclose(plans["optimal"].b, direct.b)
    assert not np.allclose(plans["condition"].a, direct.a)
    with pytest.raises(SystemExit):
        p.parse_args(["--excitation", "best"])
