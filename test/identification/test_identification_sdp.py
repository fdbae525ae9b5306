"""Physical consistency by the semidefinite program (Wensing et al. 2017's LMIs, cvxpy +
Clarabel) on the SO-100 arm, which no other test names, 30 % perturbed (seed 7):

* noisy identification (torques of Pinocchio's ``rnea`` plus 5 % white noise): the
  unconstrained WLS model is not a body; the SDP's is (every pseudo-inertia's least eigenvalue
  by numpy >= -1e-9, drives >= 0), and its torque prediction on held-out samples (Pinocchio's
  noise-free torques of the simulated arm) is no worse than the alternating projections' (its
  peer, 100x worse here) nor than the unconstrained WLS's;
* deliberately inconsistent data (a link of negative mass): still physical, and it fits the
  data in the WLS metric at least as well as the projections;
* without cvxpy: a warning names it and the alternating projections stand in.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from identification_data import fourier

from core_oracles import pinocchio_model
from rbd_ros.identification import consistency, identify, perturb, pseudo_inertia, regressor, standard_parameters
from rbd_ros.identification.consistency import IdentificationWarning
from rbd_ros.identification.regressor import NP
from robots_data import example_robot_urdf

SO100 = "so_arm_description/urdf/so100.urdf"


@pytest.fixture(scope="module")
def so100():
    """``(prior, truth, held-out (q, qd, qdd, tau))``, the torques from Pinocchio."""
    import pinocchio as pin

    from rbd_ros.urdf import load_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prior = load_model(str(example_robot_urdf(SO100)))
    truth = perturb(prior, 30.0, seed=7)
    pm, pd = pinocchio_model(truth.replace(tip_link="oracle_tool"))

    def torques(q, qd, qdd):
        drive = truth.armature * qdd + truth.viscous * qd + truth.coulomb * np.sign(qd)
        return np.array([pin.rnea(pm, pd, *x) for x in zip(q, qd, qdd)]) + drive

    held = fourier(prior, N=1000, seed=5)
    return prior, truth, torques, (*held, torques(*held))


def least_eigenvalues(phi: np.ndarray) -> np.ndarray:
    return np.array([np.linalg.eigvalsh(pseudo_inertia(b))[0] for b in phi.reshape(-1, NP)])


def held_out_error(prior, phi, held) -> float:
    """RMS torque error on the held-out samples, % of their RMS torque."""
    q, qd, qdd, tau = held
    return 100.0 * np.sqrt(np.mean((regressor(prior, q, qd, qdd) @ phi - tau) ** 2) / np.mean(tau**2))


def unconstrained_and_projected(res, prior):
    """The WLS model nearest the prior (not constrained) and the alternating projections'."""
    B, phip = res.base.matrix(), standard_parameters(prior)
    wls = consistency.nearest_exact(B, res.beta, phip, consistency.parameter_scale(phip))
    return wls, consistency.alternating_projections(B, res.beta, wls, phip)


@pytest.mark.slow
def test_noisy_identification_is_physical_and_predicts_no_worse(so100) -> None:
    pytest.importorskip("cvxpy")
    prior, _, torques, held = so100
    q, qd, qdd = fourier(prior, N=600)
    tau = torques(q, qd, qdd)
    tau += 0.05 * np.random.default_rng(0).normal(size=tau.shape) * np.sqrt(np.mean(tau**2, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = identify(prior, q, qd, qdd, tau)
    phi = standard_parameters(res.model)
    wls, proj = unconstrained_and_projected(res, prior)
    assert res.consistency == "sdp"
    assert least_eigenvalues(wls).min() < -1.0  # the data alone give no body
    assert least_eigenvalues(phi).min() >= -1e-9 and phi.reshape(-1, NP)[:, 10:].min() >= 0.0
    e_sdp, e_proj, e_wls = (held_out_error(prior, p, held) for p in (phi, proj, wls))
    print(f"held-out torque error: SDP {e_sdp:.3g} %, projections {e_proj:.3g} %, unconstrained WLS "
          f"{e_wls:.3g} %, URDF {held_out_error(prior, standard_parameters(prior), held):.3g} %")
    assert e_sdp <= e_proj and e_sdp <= e_wls
    assert e_sdp < 1.0


def test_inconsistent_data_give_the_best_physical_fit(so100) -> None:
    pytest.importorskip("cvxpy")
    prior, truth, _, held = so100
    bad = standard_parameters(truth).reshape(-1, NP).copy()
    bad[2, :10] *= -1.0  # link 3: negative mass and inertia
    bad = bad.reshape(-1)
    q, qd, qdd = fourier(prior, N=600)
    Y = regressor(prior, q, qd, qdd)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = identify(prior, q, qd, qdd, Y @ bad)
    phi = standard_parameters(res.model)
    _, proj = unconstrained_and_projected(res, prior)
    assert res.consistency == "sdp" and res.gap > 1e-3  # no body gives these torques
    assert least_eigenvalues(phi).min() >= -1e-9 and phi.reshape(-1, NP)[:, 10:].min() >= 0.0
    fit = lambda p: np.linalg.norm(Y.reshape(-1, len(p)) @ p - (Y @ bad).reshape(-1))  # noqa: E731
    assert fit(phi) <= fit(proj) * (1.0 + 1e-6)
    held_bad = (*held[:3], regressor(prior, *held[:3]) @ bad)
    assert held_out_error(prior, phi, held_bad) <= held_out_error(prior, proj, held_bad) * (1.0 + 1e-6)


def test_without_cvxpy_the_projections_stand_in_with_a_warning(so100, monkeypatch) -> None:
    prior, truth, _, _ = so100
    from rbd_ros.identification.base import base_parameters

    base = base_parameters(prior)
    phi_true, phip = standard_parameters(truth), standard_parameters(prior)
    beta = base.beta(phi_true)
    monkeypatch.setitem(sys.modules, "cvxpy", None)  # import cvxpy raises ImportError
    with pytest.warns(IdentificationWarning, match="cvxpy is not installed.*alternating projections"):
        phi, how, gap = consistency.consistent_parameters(base.matrix(), beta, phip)
    assert how == "projected" and least_eigenvalues(phi).min() >= -1e-9 and gap < 1e-4
