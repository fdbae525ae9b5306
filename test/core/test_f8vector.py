"""``algorithm.f8vector`` (issue 32): the checked entry points' state arguments are unboxed only
from 1-D native float64 ndarrays (anything else is a ``TypeError`` before the kernel runs,
never a misread or an overflow), so ``Robot``'s fast path drops its Python type check; every
other input still reaches the full path and gives Pinocchio's answer or a ``ValueError``."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros import Robot
from rbd_ros.algorithm import checked
from rbd_ros.algorithm.f8vector import NATIVE_CHECK
from rbd_ros.model.urdf_export import model_to_urdf
from robots_data import PANDA, example_robot_urdf

pin = pytest.importorskip("pinocchio")


@pytest.fixture(scope="module")
def panda():
    robot = Robot.from_urdf(str(example_robot_urdf(PANDA)), base_link="panda_link0", tip_link="panda_link8")
    pm = pin.buildModelFromXML(model_to_urdf(robot.model))
    pm.gravity.linear[:] = robot.model.gravity
    return robot, pm, pm.createData()


def _not_1d_float64(n: int) -> list:
    return [np.zeros((1, n)), np.zeros((n, n)), np.zeros((2, 2, 2, n)), np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=np.float32), np.zeros(n, dtype=">f8"), np.zeros(n, dtype=np.complex128)[:0],
            np.float64(1.0), np.array(1.0), [0.0] * n, None, "q"]


def test_offsets_verified_here() -> None:
    assert NATIVE_CHECK  # CPython 3.11 / NumPy on x86-64 or aarch64: the fields the unboxing reads


def test_entry_refuses_everything_but_1d_float64(panda) -> None:
    robot, pm, pd = panda
    n = robot.dof
    rnea = checked.entry(checked.rnea_checked)
    grav = checked.entry(checked.gravity_checked)
    ok = np.linspace(-1, 1, n)
    out = np.zeros(n)
    for bad in _not_1d_float64(n):
        for args in ((bad, ok, ok), (ok, bad, ok), (ok, ok, bad)):
            out[:] = 7.0
            with pytest.raises(TypeError):
                rnea(robot._mw, *args, out)
            assert np.all(out == 7.0)  # refused before the kernel ran
        with pytest.raises(TypeError):
            grav(robot._mw, bad, out)
    assert rnea(robot._mw, ok, ok, ok, out) == 0
    assert np.abs(out - pin.rnea(pm, pd, ok, ok, ok)).max() < 1e-12
    assert rnea(robot._mw, np.linspace(-1, 1, 2 * n)[::2], ok, ok, out) == 1  # strided: refused by the kernel's check


def test_public_calls_take_every_other_input_through_the_full_path(panda) -> None:
    robot, pm, pd = panda
    n = robot.dof
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2, 2, (3, n))
    ref = pin.rnea(pm, pd, q, qd, qdd)
    assert np.abs(robot.inverse_dynamics(q, qd, qdd) - ref).max() < 1e-12
    for x in (list(q), q.astype(">f8"), np.repeat(q, 2)[::2], q.astype(np.float32).astype(np.float64)):
        want = pin.rnea(pm, pd, np.asarray(x, dtype=float), qd, qdd)
        assert np.abs(robot.inverse_dynamics(x, qd, qdd) - want).max() < 1e-12
        want = pin.rnea(pm, pd, qd, np.asarray(x, dtype=float), qdd)
        assert np.abs(robot.inverse_dynamics(qd, x, qdd) - want).max() < 1e-10
        g = pin.computeGeneralizedGravity(pm, pd, np.asarray(x, dtype=float))
        assert np.abs(robot.gravity(x) - g).max() < 1e-12
    qi = np.arange(n) - 3
    assert np.abs(robot.gravity(qi) - pin.computeGeneralizedGravity(pm, pd, qi.astype(float))).max() < 1e-12
    batch = robot.inverse_dynamics(q[None], qd[None], qdd[None])  # (1, n): a batch of one, not a misread row
    assert batch.shape == (1, n) and np.abs(batch[0] - ref).max() < 1e-12
    with pytest.raises(ValueError, match="qd"):
        robot.inverse_dynamics(q, np.zeros((n, n)), qdd)
    with pytest.raises(ValueError, match="q"):
        robot.gravity(np.array(1.0))
    with pytest.raises(ValueError, match="qdd"):
        robot.inverse_dynamics(q, qd, np.full(n, np.inf))
    with pytest.raises((TypeError, ValueError)):
        robot.inverse_dynamics(None, qd, qdd)
    h = pin.rnea(pm, pd, q, qd, np.zeros(n))
    assert np.abs(robot.bias(list(q), qd) - h).max() < 1e-12
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    assert np.abs(robot.mass_matrix(q.astype(">f8")) - M).max() < 1e-12
    assert np.abs(robot.forward_dynamics(list(q), qd, ref) - qdd).max() < 1e-9


def test_kernels_take_the_entry_points_and_fall_back_to_the_kernels(panda) -> None:
    robot, pm, pd = panda
    n = robot.dof
    k = robot.kernels
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-2, 2, (3, n))
    ref = pin.rnea(pm, pd, q, qd, qdd)
    assert np.array_equal(k.rnea(q, qd, qdd), robot.inverse_dynamics(q, qd, qdd))
    assert np.abs(k.rnea(q, qd, qdd) - ref).max() < 1e-12
    ro = q.copy()
    ro.flags.writeable = False
    for x in (np.repeat(q, 2)[::2], ro, np.repeat(q, 2).reshape(n, 2)[:, 0]):  # strided, read-only: the kernel
        assert np.abs(k.rnea(x, qd, qdd) - ref).max() < 1e-12
        assert np.abs(k.gravity(x) - pin.computeGeneralizedGravity(pm, pd, q)).max() < 1e-12
        assert np.abs(k.crba(x) - robot.mass_matrix(q)).max() == 0.0
        assert np.abs(k.forward_dynamics(x, qd, ref) - qdd).max() < 1e-9
        assert np.array_equal(k.jacobian(x), robot.jacobian(q))  # the fallback: as the contiguous call
