"""A robot that is not its description: the model's dynamic parameters changed at random by up
to a given percentage, physically consistently, and what differs between two models.

``perturb(model, percent, seed)``, with ``u`` uniform in [-1, 1] drawn for each quantity:

* mass ``m (1 + p u)``;
* centre of mass moved by up to ``p |c|`` in a random direction (at least 5 mm * p / 10 %
  for a centre at the frame origin, so ``p`` is never a no-op);
* inertia: principal moments each ``(1 + p u)``, same axes, then the triangle inequality
  restored (``rbd_ros.model.physical.balance_moments``), so the tensor stays a body's;
* armature (as ``rotor_inertia``), viscous and Coulomb friction ``(1 + p u)``; a zero one gets
  an absolute value uniform in ``[0, p * ZERO_RANGE]`` (``ZERO_RANGE`` below: at p = 30 %,
  up to 0.3 N m s/rad viscous, 0.3 N m Coulomb and 0.015 kg m^2 armature), a Coulomb torque
  capped at 5 % of a finite effort limit.

Kinematics, limits and the motor's electrical constants are not changed.
"""
from __future__ import annotations

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.model.physical import balance_moments

#: absolute range per unit of ``p`` (p = percent / 100) for a drive term that is zero
ZERO_RANGE = {"viscous": 1.0, "coulomb": 1.0, "armature": 0.05}


def perturb(model: MdhModel, percent: float, seed: int = 0) -> MdhModel:
    """``model`` with masses, centres of mass, inertias, armature and friction changed by up to
    ``percent`` % (module docstring); ``seed`` makes it repeatable."""
    percent = float(percent)
    if not (np.isfinite(percent) and 0.0 <= percent < 100.0):
        raise ValueError(f"perturb: percent must be in [0, 100), got {percent:g}")
    p = percent / 100.0
    rng = np.random.default_rng(seed)
    n = model.dof

    def u(*shape: int) -> np.ndarray:
        return rng.uniform(-1.0, 1.0, shape)

    mass = model.mass * (1.0 + p * u(n))
    com = model.com.copy()
    for i in range(n):
        d = rng.normal(size=3)
        reach = max(float(np.linalg.norm(com[i])), 0.05)
        com[i] += p * reach * rng.uniform(0.0, 1.0) * d / np.linalg.norm(d)
    inertia = model.inertia.copy()
    for i in range(n):
        w, V = np.linalg.eigh(inertia[i])
        s = np.maximum(w, 0.0) * (1.0 + p * u(3))  # principal moments scaled
        idx = np.argsort(s)
        w = np.empty(3)
        w[idx] = balance_moments(s[idx])  # I1 + I2 >= I3 again
        inertia[i] = (V * w) @ V.T
        inertia[i] = 0.5 * (inertia[i] + inertia[i].T)
    gear = np.where(model.gear_ratio != 0.0, model.gear_ratio, 1.0)

    def drive(values: np.ndarray, key: str) -> np.ndarray:
        fresh = rng.uniform(0.0, p * ZERO_RANGE[key], n)
        return np.where(values > 0.0, values * (1.0 + p * u(n)), fresh)

    coulomb = drive(model.coulomb, "coulomb")
    limit = np.abs(model.effort_limit)
    coulomb = np.where(np.isfinite(limit) & (model.coulomb == 0.0), np.minimum(coulomb, 0.05 * limit), coulomb)
    armature = drive(model.armature, "armature")
    return model.replace(mass=mass, com=com, inertia=inertia, viscous=drive(model.viscous, "viscous"),
                         coulomb=coulomb, gear_ratio=gear, rotor_inertia=armature / gear**2,
                         name=f"{model.name}_perturbed_{percent:g}pct_seed{seed}")


def differences(reference: MdhModel, other: MdhModel) -> list[str]:
    """What differs between two models of the same arm, one line per joint: mass %, centre of
    mass (mm), inertia (% of the Frobenius norm), armature, viscous and Coulomb friction."""
    if reference.joint_names != other.joint_names:
        return [f"different joints: {list(reference.joint_names)} vs {list(other.joint_names)}"]
    out = []
    for i, name in enumerate(reference.joint_names):
        m0, m1 = reference.mass[i], other.mass[i]
        dm = 100.0 * (m1 - m0) / m0 if m0 > 0 else float("inf") if m1 != m0 else 0.0
        dc = 1000.0 * np.linalg.norm(other.com[i] - reference.com[i])
        nI = np.linalg.norm(reference.inertia[i])
        dI = 100.0 * np.linalg.norm(other.inertia[i] - reference.inertia[i]) / nI if nI > 0 else 0.0
        out.append(f"{name}: mass {m0:.4g} -> {m1:.4g} kg ({dm:+.1f} %), com moved {dc:.1f} mm, "
                   f"inertia {dI:.1f} %, armature {reference.armature[i]:.4g} -> {other.armature[i]:.4g}, "
                   f"viscous {reference.viscous[i]:.4g} -> {other.viscous[i]:.4g}, "
                   f"Coulomb {reference.coulomb[i]:.4g} -> {other.coulomb[i]:.4g}")
    return out
