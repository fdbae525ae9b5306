"""``set_target_wrench``'s effort check against a hand computation (issue 45, survivor 5): a
target wrench ``F`` needs ``tau = g(q) + J(q)^T F`` held at the pose; refused when some
``|tau_j|`` exceeds the joint's effort limit, naming the joint and ``tau_j``, else accepted.
``g`` is Pinocchio's generalized gravity and ``J`` its tool-frame Jacobian (world-aligned, the
tool origin), so the check is against an independent oracle.  Two wrenches on Romeo's left arm
(example-robot-data ``romeo_small``, 8 joints, effort limits 0.6-81 N m): one that ``J^T F``
alone keeps inside every limit but that gravity pushes over one (refused), and one that
``J^T F`` alone takes over a limit but gravity brings back inside (accepted): a check that left
out gravity would answer both the wrong way."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.control.laws import make_law
from rbd_ros.model.urdf_export import model_to_urdf
from rbd_ros.urdf import load_model
from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")

ROMEO = ("romeo_description/urdf/romeo_small.urdf", "body", "l_wrist")
LAWS = ("hybrid_force_position", "impedance", "admittance")


@pytest.fixture(scope="module")
def romeo():
    rel, base, tip = ROMEO
    model = load_model(str(example_robot_urdf(rel)), base, tip)
    pm = pin.buildModelFromXML(model_to_urdf(model))
    pm.gravity.linear[:] = model.gravity
    return model, pm, pm.createData()


def _hand(model, pm, pd, q):
    """``(g, J)`` from Pinocchio at ``q``."""
    g = pin.computeGeneralizedGravity(pm, pd, q)
    pin.computeJointJacobians(pm, pd, q)
    pin.framesForwardKinematics(pm, pd, q)
    J = pin.getFrameJacobian(pm, pd, pm.getFrameId(model.tip_link), pin.LOCAL_WORLD_ALIGNED)
    return g, J


def _cases(model, pm, pd):
    """Two refused wrenches (the torque over the limit positive, then negative) and an accepted
    one (module docstring), found by a seeded search: ``(q, wrench, joint)`` each, ``joint`` the
    one gravity decides."""
    lim = np.abs(model.effort_limit)
    rng = np.random.default_rng(4)
    refused: dict[float, tuple] = {}  # by the sign of the torque over the limit
    accepted = None
    for _ in range(400):
        q = rng.uniform(np.maximum(model.lower, -1.5), np.minimum(model.upper, 1.5))
        g, J = _hand(model, pm, pd, q)
        d = np.concatenate([rng.normal(size=3), 0.02 * rng.normal(size=3)])
        c = J.T @ d  # N m per unit of the wrench
        s = 0.97 * np.min(lim / np.maximum(np.abs(c), 1e-12))  # J^T F alone inside every limit
        over = np.abs(g + s * c) > lim
        if over.sum() == 1:
            j = int(np.flatnonzero(over)[0])
            refused.setdefault(float(np.sign(g[j] + s * c[j])), (q, s * d, j))
        # over one limit by J^T F alone, the gravity pulling it back inside every one
        for j in np.flatnonzero(np.sign(c) == -np.sign(g)):
            s2 = 1.03 * lim[j] / abs(c[j])
            if np.all(np.abs(g + s2 * c) < 0.97 * lim) and np.sum(np.abs(s2 * c) > lim) >= 1:
                accepted = accepted or (q, s2 * d, int(j))
        if len(refused) == 2 and accepted is not None:
            return refused[1.0], refused[-1.0], accepted
    raise AssertionError("no case found")


@pytest.mark.parametrize("law_name", LAWS)
def test_effort_check_holds_gravity_and_the_wrench(romeo, law_name) -> None:
    model, pm, pd = romeo
    *refused, (q2, w2, j2) = _cases(model, pm, pd)
    lim = np.abs(model.effort_limit)
    law = make_law(law_name, model, q0=q2)
    for q1, w1, j1 in refused:  # one over its upper limit, one under its lower
        g1, J1 = _hand(model, pm, pd, q1)
        need = g1 + J1.T @ w1
        assert np.all(np.abs(J1.T @ w1) <= lim) and abs(need[j1]) > lim[j1]  # gravity decides
        with pytest.raises(ValueError, match="needs more than the effort limits") as err:
            law.set_target_wrench(w1, q1)
        text = str(err.value)
        assert f"'{model.joint_names[j1]}' {need[j1]:.4g} N m" in text, (text, need[j1])
        assert sum(f"'{name}'" in text for name in model.joint_names) == 1  # that joint alone
        assert np.all(law.wrench_target == 0.0)  # refused: nothing set
    g2, J2 = _hand(model, pm, pd, q2)
    assert abs((J2.T @ w2)[j2]) > lim[j2] and np.all(np.abs(g2 + J2.T @ w2) < lim)  # gravity helps
    law.set_target_wrench(w2, q2)
    assert np.array_equal(law.wrench_target, w2)


@pytest.mark.parametrize("bad", [[0, 0, np.nan, 0, 0, 0], [0, 0, -np.inf, 0, 0, 0], [1.0] * 5, [[1.0] * 6] * 2])
def test_nan_or_misshapen_wrench_refused(romeo, bad) -> None:
    model, _, _ = romeo
    q = np.clip(np.zeros(model.dof), model.lower, model.upper)
    law = make_law("hybrid_force_position", model, q0=q)
    with pytest.raises(ValueError, match="6 finite numbers"):
        law.set_target_wrench(bad, q)
    assert np.all(law.wrench_target == 0.0)
