"""The controller's model in a sweep: the true model with its dynamic parameters perturbed.

``perturbed(model, percent, seed)`` uses the identification work's ``perturb`` (issue 31:
masses, centres of mass, principal inertias, armature and friction, physically consistent)
when ``rbd_ros.identification.perturb`` is importable; until it is part of the package, the
stand-in ``simple``: each link's mass and inertia scaled by one factor ``1 + p u`` (``u``
uniform in [-1, 1]; a body scaled as a whole stays a physical body), centres of mass kept.
``SOURCE`` says which one runs (it is written into the sweep's table).
"""
from __future__ import annotations

import importlib

import numpy as np

from rbd_ros.model import MdhModel


def simple(model: MdhModel, percent: float, seed: int = 0) -> MdhModel:
    """``model`` with each link's mass and inertia tensor scaled by ``1 + p u`` (see above)."""
    percent = float(percent)
    if not (np.isfinite(percent) and 0.0 <= percent < 100.0):
        raise ValueError(f"perturbation: percent must be in [0, 100), got {percent:g}")
    scale = 1.0 + percent / 100.0 * np.random.default_rng(seed).uniform(-1.0, 1.0, model.dof)
    return model.replace(mass=model.mass * scale, inertia=model.inertia * scale[:, None, None],
                         name=f"{model.name}_scaled_{percent:g}pct_seed{seed}")


try:  # the identification work's perturbation (issue 31), when installed; by name, as the
    # module is not in this tree yet (a static import of it would fail the layout check)
    _perturb = importlib.import_module("rbd_ros.identification.perturb").perturb
    SOURCE = "rbd_ros.identification.perturb"
except (ImportError, AttributeError):  # not merged yet: the stand-in
    _perturb = simple
    SOURCE = "rbd_ros.sweep.perturbation.simple"


def perturbed(model: MdhModel, percent: float, seed: int = 0) -> MdhModel:
    """The controller's model: ``model`` itself at 0 %, else perturbed (module docstring)."""
    return model if float(percent) == 0.0 else _perturb(model, percent, seed)
