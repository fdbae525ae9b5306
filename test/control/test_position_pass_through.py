"""``laws.PositionPassThrough`` (issue 43.1): the controller's command on a position interface
is the reference itself, clipped into the URDF's joint limits; a non-finite reference holds the
last command (oracles: the limits and the reference given, not the law's output)."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.control.laws import PositionPassThrough, Reference
from rbd_ros.sim.examples import three_link


def test_command_is_the_clipped_reference_and_a_nan_holds_the_last() -> None:
    model = three_link()
    law = PositionPassThrough(model)
    q = np.zeros(3)
    law.derive_gains(np.array([0.1, 0.2, 0.3]))  # the first state: the command before any
    np.testing.assert_array_equal(law.tau, [0.1, 0.2, 0.3])
    ref = Reference(3)
    inside = (model.lower + model.upper) / 2 + 0.1 * (model.upper - model.lower) / 2
    ref.set_joint(inside)
    np.testing.assert_array_equal(law.compute(0.0, q, q, ref), inside)
    assert not law.fault
    beyond = model.upper + 1.0
    ref.set_joint(beyond)
    np.testing.assert_array_equal(law.compute(0.001, q, q, ref), model.upper)
    ref.set_joint(np.array([np.nan, 0.0, 0.0]))
    np.testing.assert_array_equal(law.compute(0.002, q, q, ref), model.upper)  # held, not 0
    assert law.fault and "held" in law.status
    with pytest.raises(ValueError, match="takes no gains"):
        law.set_gains(kp=1.0)
