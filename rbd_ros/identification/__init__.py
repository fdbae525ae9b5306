"""Dynamic-parameter identification of an arm (issue 31), ROS-free.

* ``regressor(model, q, qd, qdd)``: ``tau = Y phi``, linear in each link's ten inertial
  parameters and the drives' armature, viscous and Coulomb friction (``regressor``);
* ``base_parameters(model)``: the identifiable combinations by QR (``base``);
* ``identify(prior, q, qd, qdd, tau)``: weighted least squares, standard deviations, a
  physically consistent model (a semidefinite program: ``convex``), held-out validation
  (``estimate``, ``consistency``);
* ``perturb(model, percent, seed)``: a simulated arm that is not its description (``perturb``);
* ``excitation_trajectory``: an optimised finite Fourier series (``excitation``);
* ``load_recording``: samples from a bringup run or a rosbag2 bag (``recording``).
"""
from rbd_ros.identification.base import BaseParameters, base_parameters
from rbd_ros.identification.consistency import pseudo_inertia, violations
from rbd_ros.identification.estimate import (
    Identification,
    IdentificationWarning,
    NotEnoughExcitation,
    identify,
    validate,
)
from rbd_ros.identification.perturb import differences, perturb
from rbd_ros.identification.regressor import (
    PARAMETERS,
    model_with_parameters,
    parameter_names,
    regressor,
    standard_parameters,
)

__all__ = ["PARAMETERS", "BaseParameters", "Identification", "IdentificationWarning", "NotEnoughExcitation",
           "base_parameters", "differences", "identify", "model_with_parameters", "parameter_names",
           "perturb", "pseudo_inertia", "regressor", "standard_parameters", "validate", "violations"]
