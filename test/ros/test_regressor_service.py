"""``/rbd/regressor`` (issue 31): the dynamics server in its own process, called from this one.
Oracles: the same server's ``/rbd/inverse_dynamics`` with the drives (``efforts = Y p``), and
Pinocchio's ``rnea`` on the URDF; the base regressor times the base parameters gives the same
efforts; rows follow the caller's joint order; bad requests are refused with a message."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from robots_data import example_robot_urdf

pytest.importorskip("rclpy")

Z1 = "z1_description/urdf/z1.urdf"


@pytest.fixture(scope="module")
def client():
    from ros_helpers import served_client

    with served_client("regdyn", f"urdf_path:={example_robot_urdf(Z1)}") as c:
        yield c


@pytest.mark.slow
def test_regressor_times_parameters_is_inverse_dynamics(client) -> None:
    import pinocchio as pin

    from rbd_ros.urdf import load_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_model(str(example_robot_urdf(Z1)))
    rng = np.random.default_rng(5)
    q = rng.uniform(model.lower, model.upper, (4, model.dof))
    qd, qdd = rng.normal(size=(2, 4, model.dof))
    Y, names, p = client.regressor(q, qd, qdd)
    assert Y.shape == (4, model.dof, 13 * model.dof) and names[:3] == ["XX1", "XY1", "XZ1"]
    tau = client.inverse_dynamics(q, qd, qdd, include_actuators=True)
    np.testing.assert_allclose(Y @ p, tau, atol=1e-9 * np.abs(tau).max())
    pm = pin.buildModelFromUrdf(str(example_robot_urdf(Z1)))
    pd = pm.createData()
    for k in range(4):
        drive = model.armature * qdd[k] + model.viscous * qd[k] + model.coulomb * np.sign(qd[k])  # URDF dynamics
        np.testing.assert_allclose(Y[k] @ p, pin.rnea(pm, pd, q[k], qd[k], qdd[k]) + drive, atol=1e-8)
    Yb, labels, beta = client.regressor(q, qd, qdd, base_parameters=True)
    assert Yb.shape[2] == len(labels) == len(beta) < 13 * model.dof
    np.testing.assert_allclose(Yb @ beta, tau, atol=1e-9 * np.abs(tau).max())
    order = list(model.joint_names)[::-1]  # the caller's order: rows and inputs reversed
    Yr, _, _ = client.regressor(q[0, ::-1], qd[0, ::-1], qdd[0, ::-1], joint_names=order)
    np.testing.assert_allclose(Yr, Y[0, ::-1], atol=1e-12)


def test_bad_requests_are_refused(client) -> None:
    from rbd_ros.ros.client import DynamicsError

    n = 7
    with pytest.raises(DynamicsError, match="regressor"):
        client.regressor(np.zeros(n), np.zeros(n), np.full(n, np.nan))
    with pytest.raises(DynamicsError, match="regressor"):
        client.regressor(np.zeros(n), np.zeros(n - 1), np.zeros(n))
