"""The identification core (issue 31) against independent oracles: the regressor times the
standard parameters is Pinocchio's ``rnea`` (plus the drive terms) and our RNEA; its base
parameters count Pinocchio's regressor rank; noise-free data of a perturbed arm no other test
names (Kinova Jaco j2s6s200, Unitree Z1, UR3) give that arm's base parameters to 1e-6, and a
physical model; too little excitation is refused by name."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from identification_data import fourier

from core_oracles import pinocchio_model, random_model
from rbd_ros.identification import (
    NotEnoughExcitation,
    base_parameters,
    identify,
    perturb,
    pseudo_inertia,
    regressor,
    standard_parameters,
    violations,
)
from rbd_ros.identification.regressor import NP
from rbd_ros.robot import Robot
from robots_data import example_robot_urdf

ARMS = {"kinova": "kinova_description/robots/kinova.urdf", "z1": "z1_description/urdf/z1.urdf",
        "ur3": "ur_description/urdf/ur3_robot.urdf"}


def arm(name: str):
    from rbd_ros.urdf import load_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_model(str(example_robot_urdf(ARMS[name])))


@pytest.mark.parametrize("prismatic", [(), (1, 3)])
def test_regressor_times_parameters_is_our_rnea(prismatic) -> None:
    m = random_model(6, 11, prismatic=prismatic)
    q, qd, qdd = np.random.default_rng(0).normal(size=(3, 50, 6))
    tau = regressor(m, q, qd, qdd) @ standard_parameters(m)
    ref = Robot(m).inverse_dynamics(q, qd, qdd, include_actuators=True)
    assert np.abs(tau - ref).max() <= 1e-10 * np.abs(ref).max()


@pytest.mark.parametrize("name", list(ARMS))
def test_regressor_is_pinocchio_rnea_and_base_count_is_its_rank(name) -> None:
    import pinocchio as pin

    m = arm(name)
    pm, pd = pinocchio_model(m.replace(tip_link="oracle_tool"))  # a tip named apart from the links
    rng = np.random.default_rng(3)
    phi = standard_parameters(m)
    rows_ours, rows_pin = [], []
    for _ in range(40):
        q, qd, qdd = rng.normal(size=(3, m.dof))
        Y = regressor(m, q, qd, qdd)
        drive = m.armature * qdd + m.viscous * qd + m.coulomb * np.sign(qd)
        ref = pin.rnea(pm, pd, q, qd, qdd) + drive
        assert np.abs(Y @ phi - ref).max() <= 1e-9 * max(np.abs(ref).max(), 1.0)
        rows_ours.append(Y[:, [NP * i + k for i in range(m.dof) for k in range(10)]])
        rows_pin.append(pin.computeJointTorqueRegressor(pm, pd, q, qd, qdd))
    ours, theirs = np.vstack(rows_ours), np.vstack(rows_pin)
    # the inertial base parameters: as many as Pinocchio's regressor has independent columns
    rank_pin = np.linalg.matrix_rank(theirs, tol=1e-8 * np.linalg.norm(theirs, 2))
    B = base_parameters(m)
    inertial = [k for k in B.independent if k % NP < 10]
    drives_alone = [k for k in B.independent if k % NP >= 10]
    assert len(inertial) == rank_pin == np.linalg.matrix_rank(ours, tol=1e-8 * np.linalg.norm(ours, 2))
    assert B.count == len(inertial) + len(drives_alone)


@pytest.mark.parametrize("name", list(ARMS))
def test_noise_free_identification_recovers_the_perturbed_arm(name) -> None:
    """The simulated arm (30 % perturbed, seed 7) from Pinocchio's torques: base parameters to
    1e-6 relative, a physical model whose torques match to 1e-4 of the RMS torque (the prior,
    unperturbed, is off by several %)."""
    import pinocchio as pin

    prior = arm(name)
    truth = perturb(prior, 30.0, seed=7)
    q, qd, qdd = fourier(prior)
    pm, pd = pinocchio_model(truth.replace(tip_link="oracle_tool"))
    drive = truth.armature * qdd + truth.viscous * qd + truth.coulomb * np.sign(qd)
    tau = np.array([pin.rnea(pm, pd, *x) for x in zip(q, qd, qdd)]) + drive
    half = len(q) // 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = identify(prior, q[:half], qd[:half], qdd[:half], tau[:half],
                       held_out=(q[half:], qd[half:], qdd[half:], tau[half:]))
    true_beta = res.base.beta(standard_parameters(truth))
    rel = np.abs(res.beta - true_beta) / np.abs(true_beta).max()
    assert rel.max() < 1e-6, res.table()
    assert not violations(standard_parameters(res.model))
    for i in range(prior.dof):
        assert np.linalg.eigvalsh(pseudo_inertia(standard_parameters(res.model)[NP * i:NP * i + NP]))[0] > -1e-12
    v = res.validation
    assert v["identified_error_percent"] < 1e-2 < 1.0 < v["prior_error_percent"]


def test_too_little_excitation_is_refused_naming_the_parameters() -> None:
    """Only joint 1 moves: the parameters only the other joints' motion shows are named."""
    prior = arm("ur3")
    q, qd, qdd = fourier(prior)
    for x in (q, qd, qdd):
        x[:, 1:] = x[0, 1:] if x is q else 0.0
    tau = Robot(prior).inverse_dynamics(q, qd, qdd, include_actuators=True)
    with pytest.raises(NotEnoughExcitation, match=r"does not excite \d+ of the \d+ base parameters.*FV2"):
        identify(prior, q, qd, qdd, tau)


def test_perturbation_is_physical_repeatable_and_bounded() -> None:
    prior = arm("z1")
    a, b, c = perturb(prior, 30, 7), perturb(prior, 30, 7), perturb(prior, 30, 8)
    assert np.array_equal(a.mass, b.mass) and not np.array_equal(a.mass, c.mass)
    assert np.all(np.abs(a.mass / prior.mass - 1.0) <= 0.3 + 1e-12)
    assert not violations(standard_parameters(a))
    assert (a.coulomb > 0).all() and (a.viscous > 0).all()  # zero friction gets a stated range
    with pytest.raises(ValueError, match="percent"):
        perturb(prior, 120, 0)
