"""The standard deviations ``identify`` reports with the parallel filter (``window > 1``) are
those of its estimates: the oracle is the spread of the estimates themselves over independent
noise draws (Monte Carlo), not a formula.  The planar 2-link arm with viscous and Coulomb
friction along an exact Fourier trajectory, 5 % white torque noise, an 81-sample filter.  The
formula for independent rows was 4-9x optimistic there (the filter correlates neighbouring
rows); the filter's sandwich (``estimate.filtered_std``) is not."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from identification_data import fourier

from rbd_ros.identification import standard_parameters
from rbd_ros.identification.estimate import identify
from rbd_ros.identification.regressor import regressor
from rbd_ros.model import MdhModel

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_reported_std_is_the_spread_of_the_estimates() -> None:
    model = MdhModel.from_yaml(str(REPO / "config" / "planar2.yaml"))
    model = model.replace(viscous=np.array([0.3, 0.1]), coulomb=np.array([0.2, 0.05]))
    q, qd, qdd = fourier(model, N=3000, seed=3, T=6.0)
    tau = regressor(model, q, qd, qdd) @ standard_parameters(model)
    rms = np.sqrt(np.mean(tau**2, axis=0))
    rng = np.random.default_rng(11)
    betas, stds = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(24):
            noisy = tau + 0.05 * rms * rng.normal(size=tau.shape)
            res = identify(model, q, qd, qdd, noisy, mask=np.abs(qd) > 0.02, window=81)
            betas.append(res.beta)
            stds.append(res.beta_std)
    spread = np.std(betas, axis=0, ddof=1)
    ratio = spread / np.mean(stds, axis=0)
    # 24 draws: a sample std within about +-15 % (1 sigma) of the true one
    assert 0.75 < np.median(ratio) < 1.3, ratio
    assert ratio.min() > 0.5 and ratio.max() < 2.0, ratio
