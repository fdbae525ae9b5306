"""Identification against hand computations and the URDF (issue 45, survivor group 4):

* Gautier's weighting: with one joint's torques 500 times noisier than the others', the
  estimate is the hand-computed weighted least squares (OLS, each joint's residual standard
  deviation ``sigma_j = ||rho_j|| / sqrt(N_j - b / n)``, rows divided by it, solved again), the
  noisy joint counts least, and the estimate is nearer the truth than OLS's;
* the excitation's peak speed, sampled 80 times finer than its planner samples it, stays
  within ``velocity_margin`` of the velocity limits read from the URDF's ``<limit
  velocity=...>`` itself (ElementTree, not the converter), and reaches it on some joint.

The arm: Romeo's left arm (example-robot-data ``romeo_small``, 8 joints, 1.1-4 rad/s)."""
from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from identification_data import fourier

from rbd_ros.identification import base_parameters, identify, regressor, standard_parameters
from rbd_ros.identification.excitation import plan_excitation
from rbd_ros.urdf import load_model
from robots_data import example_robot_urdf

ROMEO = ("romeo_description/urdf/romeo_small.urdf", "body", "l_wrist")


@pytest.fixture(scope="module")
def romeo():
    rel, base, tip = ROMEO
    return load_model(str(example_robot_urdf(rel)), base, tip)


def test_noisiest_joint_counts_least(romeo) -> None:
    m = romeo
    n = m.dof
    q, qd, qdd = fourier(m, N=1500, seed=3, T=6.0)
    base = base_parameters(m)
    Y = regressor(m, q, qd, qdd)[:, :, base.independent]  # (N, n, b)
    beta_true = base.beta(standard_parameters(m))
    noise = np.full(n, 0.002)
    noise[1] = 1.0  # N m: the shoulder's torque sensor is 500 x noisier
    rng = np.random.default_rng(8)
    tau = Y @ beta_true + noise * rng.standard_normal((len(q), n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = identify(m, q, qd, qdd, tau, base=base)
    # by hand: OLS, per joint residual std, rows / sigma_j, WLS
    W, t = Y.reshape(-1, base.count), tau.reshape(-1)
    joint = np.tile(np.arange(n), len(q))
    rho = t - W @ np.linalg.lstsq(W, t, rcond=None)[0]
    sigma = np.array([np.sqrt(rho[joint == j] @ rho[joint == j] / (len(q) - base.count / n)) for j in range(n)])
    assert np.allclose(out.sigma, sigma, rtol=1e-9), (out.sigma, sigma)
    assert np.argmax(sigma) == 1 and sigma[1] > 20 * np.delete(sigma, 1).max()  # OLS spreads some of it
    w = 1.0 / sigma[joint]
    beta_wls = np.linalg.lstsq(W * w[:, None], t * w, rcond=None)[0]
    assert np.abs(out.beta - beta_wls).max() <= 1e-8 * np.abs(beta_wls).max(), np.abs(out.beta - beta_wls).max()
    # the standard deviations: s^2 (Ww^T Ww)^-1 with s^2 the weighted residual over r - b
    Ww = W * w[:, None]
    rw = t * w - Ww @ beta_wls
    s2 = rw @ rw / (len(t) - base.count)
    std = np.sqrt(s2 * np.diag(np.linalg.inv(Ww.T @ Ww)))
    assert np.allclose(out.beta_std, std, rtol=1e-6), np.abs(out.beta_std / std - 1).max()
    beta_ols = np.linalg.lstsq(W, t, rcond=None)[0]
    err_wls = np.abs(out.beta - beta_true).max()
    err_ols = np.abs(beta_ols - beta_true).max()
    assert err_wls < 0.5 * err_ols, (err_wls, err_ols)  # the noisy joint down-weighted: nearer the truth


def _urdf_velocity_limits(path: str, names) -> np.ndarray:
    joints = {j.get("name"): j for j in ET.parse(path).getroot().iter("joint")}
    return np.array([float(joints[name].find("limit").get("velocity")) for name in names])


@pytest.mark.parametrize("margin", [0.8, 0.5])
def test_excitation_peak_speed_within_the_urdf_velocity_limits(romeo, margin) -> None:
    m = romeo
    vmax = _urdf_velocity_limits(str(example_robot_urdf(ROMEO[0])), m.joint_names)
    exc = plan_excitation(m, np.zeros(m.dof), period=8.0, periods=1, evaluations=15, seed=0,
                          velocity_margin=margin)
    t = np.linspace(0.0, exc.duration, 64 * 80 + 1)
    _, qd, _ = exc.sample(t)
    ratio = np.abs(qd).max(axis=0) / vmax
    assert ratio.max() <= margin * 1.02, dict(zip(m.joint_names, np.round(ratio, 3)))  # 2 %: between samples
    assert ratio.max() >= 0.95 * margin, ratio  # the bound is what limits the motion somewhere
    assert np.abs(exc.velocities).max(axis=0).max() <= margin * 1.02 * vmax.max()


def _urdf_limits(path: str, names, key: str) -> np.ndarray:
    joints = {j.get("name"): j for j in ET.parse(path).getroot().iter("joint")}
    return np.array([float(joints[name].find("limit").get(key)) for name in names])


def test_excitation_starts_at_rest_inside_the_limits_within_the_efforts(romeo) -> None:
    """From a start on its limits: the start moved to 20 % of the (inner 90 %) range from them,
    at rest there (``q, qd, qdd`` of the series at 0), every sample inside the URDF's position
    limits, and the torque (Pinocchio's RNEA of the same URDF) within ``effort_margin`` of its
    effort limits (0.18: it binds, the motion would need 0.22 of them)."""
    import pinocchio as pin

    m = romeo
    path = str(example_robot_urdf(ROMEO[0]))
    lo, hi = _urdf_limits(path, m.joint_names, "lower"), _urdf_limits(path, m.joint_names, "upper")
    effort = _urdf_limits(path, m.joint_names, "effort")
    start = lo.copy()  # every joint on its lower limit
    exc = plan_excitation(m, start, period=8.0, periods=1, evaluations=10, seed=1, effort_margin=0.18)
    span = 0.9 * (hi - lo)
    inner_lo, inner_hi = lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo)
    assert np.all(exc.start >= inner_lo + 0.2 * span - 1e-9) and np.all(exc.start <= inner_hi - 0.2 * span + 1e-9)
    q0, qd0, qdd0 = (x[0] for x in exc.sample(np.array([0.0])))
    assert np.allclose(q0, exc.start, atol=1e-12) and np.abs(qd0).max() < 1e-9 and np.abs(qdd0).max() < 1e-9
    t = np.linspace(0.0, exc.duration, 2001)
    q, qd, qdd = exc.sample(t)
    assert np.all(q >= lo) and np.all(q <= hi)
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    idx = [pm.joints[pm.getJointId(name)].idx_q for name in m.joint_names]
    peak = np.zeros(m.dof)
    for k in range(0, len(t), 4):
        x, v, a = (np.zeros(pm.nq) for _ in range(3))
        x[idx], v[idx], a[idx] = q[k], qd[k], qdd[k]
        peak = np.maximum(peak, np.abs(pin.rnea(pm, pd, x, v, a)[idx]))
    assert np.all(peak <= 0.18 * effort * 1.05), dict(zip(m.joint_names, np.round(peak / effort, 3)))
    assert (peak / effort).max() >= 0.95 * 0.18  # the bound is what limits the motion (0.22 without it)


def test_fewer_equations_than_base_parameters_refused_by_count(romeo) -> None:
    from rbd_ros.identification import NotEnoughExcitation

    m = romeo
    b = base_parameters(m).count
    N = b // m.dof  # N n <= b equations
    q, qd, qdd = fourier(m, N=N, seed=2)
    tau = np.zeros((N, m.dof))
    with pytest.raises(NotEnoughExcitation, match=rf"{N * m.dof} equations for {b} base parameters; record longer"):
        identify(m, q, qd, qdd, tau)
