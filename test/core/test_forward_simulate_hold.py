"""Issue 38, item 2: ForwardSimulate holds each effort row for ``effort_period`` whatever
``dt`` is.  With ``dt`` 4 ms and ``effort_period`` 1 ms only every 4th row was applied, with
``success`` and no message.

Oracle: an independent integration, Pinocchio's ``aba`` inside a classical RK4 written here,
one step per effort row (h = 1 ms), on UR5's own URDF (example-robot-data); the service's
states at its output times (every ``dt``) must be those states.  A ``dt`` that does not divide
``effort_period`` (3 ms, 2 ms: a 1 ms grid) is held exactly too; periods with no common step
are refused, naming both."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rbd_ros.robot import Robot
from rbd_ros.services import DynamicsService, RequestError, hold_substeps
from robots_data import UR5, example_robot_urdf


@pytest.fixture(scope="module")
def ur5() -> tuple[DynamicsService, pin.Model]:
    path = str(example_robot_urdf(UR5))
    robot = Robot.from_urdf(path, tip_link="tool0")
    pm = pin.buildModelFromUrdf(path)
    assert list(pm.names)[1:] == list(robot.joint_names)
    return DynamicsService(robot), pm


def rk4_pinocchio(pm: pin.Model, q: np.ndarray, v: np.ndarray, rows: np.ndarray, h: float) -> np.ndarray:
    """Positions after each row, each held over one RK4 step h (003 (5.3)-(5.4))."""
    pd = pm.createData()

    def f(x: np.ndarray, tau: np.ndarray) -> np.ndarray:
        n = len(x) // 2
        return np.concatenate([x[n:], pin.aba(pm, pd, x[:n], x[n:], tau)])

    x = np.concatenate([q, v])
    out = [q.copy()]
    for tau in rows:
        k1 = f(x, tau)
        k2 = f(x + 0.5 * h * k1, tau)
        k3 = f(x + 0.5 * h * k2, tau)
        k4 = f(x + h * k3, tau)
        x = x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(x[:len(q)].copy())
    return np.array(out)


def _request(service: DynamicsService, rows: np.ndarray, period: float, dt: float):
    q0 = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])
    g = service.robot.gravity(q0)
    tau = g + rows  # around holding still: each row's difference shows in the motion
    out = service.forward_simulate(list(service.robot.joint_names), q0, np.zeros(6), tau.ravel(),
                                   effort_period=period, dt=dt)
    return q0, tau, out


@pytest.mark.parametrize("dt, period", [(4e-3, 1e-3), (3e-3, 2e-3), (1e-3, 1e-3)])
def test_every_effort_row_is_held_for_its_period(ur5, dt: float, period: float) -> None:
    service, pm = ur5
    rng = np.random.default_rng(38)
    rows = rng.uniform(-40.0, 40.0, (12, 6)) * np.array([1, 1, 1, 0.2, 0.2, 0.2])
    q0, tau, out = _request(service, rows, period, dt)
    h = 1e-3  # the common step of the three cases; the oracle holds each row over period / h steps
    per_row = int(round(period / h))
    ref = rk4_pinocchio(pm, q0, np.zeros(6), np.repeat(tau, per_row, axis=0), h)
    horizon = 12 * period
    assert out.times[-1] == pytest.approx(horizon)  # the whole horizon: no row dropped at the end
    k = np.rint(out.times / h).astype(int)
    np.testing.assert_allclose(out.times, k * h, atol=1e-12)
    assert np.abs(out.positions - ref[k]).max() < 1e-9
    assert np.abs(ref[-1] - ref[0]).max() > 1e-3  # the rows moved the arm: the test can see a dropped one


def test_periods_with_no_common_step_are_refused_naming_both(ur5) -> None:
    service, _ = ur5
    rows = np.zeros((3, 6))
    with pytest.raises(RequestError, match=r"dt 0\.001 s and effort_period 0\.0014142\d* s have no common step"):
        _request(service, rows, 1e-3 * np.sqrt(2.0), 1e-3)


@pytest.mark.parametrize("dt, period, m", [(1e-3, 1e-2, 1), (4e-3, 1e-3, 4), (3e-3, 1e-2, 3), (0.01, 1 / 30, 3),
                                           (1e-3, 1e-3 * np.sqrt(2.0), None)])
def test_hold_substeps(dt: float, period: float, m: int | None) -> None:
    assert hold_substeps(dt, period) == m
