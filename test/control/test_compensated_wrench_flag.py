"""``use_compensated_wrench`` (issue 41.3) is a force law's wrench source: a live model swap
(``model_swap.law_for_model``, the controller's ``~/load_model``) keeps it, else the new law
would read ``/ft_sensor/wrench``'s tool-biased reading in composed mode without a word; the
bundled PUMA 560, its payload-free twin the swapped model (heavier last link)."""
from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("flag", [True, False])
def test_a_model_swap_keeps_the_wrench_source(flag: bool) -> None:
    from rbd_ros.control.laws import make_law
    from rbd_ros.control.model_swap import law_for_model
    from rbd_ros.model import MdhModel
    from rbd_ros.util.resources import DEFAULT_ROBOT, config_file

    model = MdhModel.from_yaml(str(config_file(DEFAULT_ROBOT)))
    mass = model.mass.copy()
    mass[-1] += 0.5
    q = np.zeros(model.dof)
    law = make_law("hybrid_force_position", model, q0=q, rate=1000.0, use_compensated_wrench=flag)
    assert law.use_compensated_wrench is flag
    new, _ = law_for_model(law, model.replace(mass=mass), q, bandwidth=10.0, damping_ratio=1.0, rate=1000.0)
    assert new is not law and new.use_compensated_wrench is flag
