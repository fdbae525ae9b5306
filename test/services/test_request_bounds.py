"""The ROS-free half of ``test/ros/test_request_bounds.py`` (its docstring says what both halves check):
``rbd_ros.services.DynamicsService`` called directly, in the ROS-free run."""
from __future__ import annotations

import time

import numpy as np
import pytest

from rbd_ros.robot import Robot
from rbd_ros.services import CHUNK_STEPS, DynamicsService, RequestError
from robots_data import BUNDLED_URDF

URDF = BUNDLED_URDF / "puma560.urdf"
INT32_MAX = 2**31 - 1
BOUND = 2.0


# ---- without ROS ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot.from_urdf(str(URDF))


def test_simulation_past_the_bound_is_refused(robot: Robot) -> None:
    service = DynamicsService(Robot(robot.model), max_points=10**6, max_request_seconds=0.2)
    names = list(robot.joint_names)
    service.forward_simulate(names, np.zeros(6), np.zeros(6), np.zeros(6), effort_period=1.0,
                             dt=1e-3, duration=0.01)  # compiled before the clock starts
    t0 = time.monotonic()
    with pytest.raises(RequestError) as info:
        service.forward_simulate(names, np.zeros(6), np.zeros(6), np.zeros(6), effort_period=1.0,
                                 dt=1e-4, duration=100.0)  # 10^6 RK4 steps: seconds of work
    took = time.monotonic() - t0
    assert "hit the server's bound of 0.2 s" in str(info.value) and "max_request_seconds" in str(info.value)
    assert str(info.value).startswith("stopped at t = ")
    assert took < 0.2 + 1.0, took


def test_chunked_simulation_is_the_one_call_simulation(robot: Robot) -> None:
    """The horizon runs in chunks; the integrators are one-step methods, so the answer is the
    core's single run to the last bit (accelerations at the seams included)."""
    service = DynamicsService(Robot(robot.model), max_points=10**6)
    rng = np.random.default_rng(3)
    q0, qd0 = rng.uniform(-1, 1, 6), rng.uniform(-0.5, 0.5, 6)
    tau = rng.uniform(-3, 3, (7, 6))
    steps = 2 * CHUNK_STEPS + 123
    dt = 1e-4
    # rows of 1200 steps (dt divides effort_period: one integration step per dt, issue 38)
    out = service.forward_simulate(list(robot.joint_names), q0, qd0, tau.ravel(),
                                   effort_period=1200 * dt, dt=dt, duration=steps * dt)
    rows = np.minimum(np.arange(steps) // 1200, 6)
    q, qd, qdd = robot.simulate(q0, qd0, tau[rows], dt)
    assert out.positions.shape == (steps + 1, 6)
    np.testing.assert_array_equal(out.positions, q)
    np.testing.assert_array_equal(out.velocities, qd)
    np.testing.assert_array_equal(out.accelerations, qdd)


def test_stop_and_a_dead_context_end_a_batch(robot: Robot) -> None:
    """``alive()`` turning False (the server's rclpy context after SIGTERM) stops a batch at its
    next chunk; after ``stop()`` every request is refused as shutting down."""
    from rbd_ros.services import CHUNK_STATES

    calls = []

    def alive() -> bool:
        calls.append(1)
        return len(calls) < 2  # dies after the first chunk

    service = DynamicsService(Robot(robot.model), max_points=10**6, alive=alive)
    q = np.zeros((3 * CHUNK_STATES, 6))
    with pytest.raises(RequestError, match=f"stopped at state {2 * CHUNK_STATES} of .*: the server is shutting down"):
        service.gravity(list(robot.joint_names), q.ravel())
    with pytest.raises(RequestError, match="the server is shutting down"):
        service.inverse_kinematics([], robot.fk(np.zeros(6)).ravel())
    g = DynamicsService(Robot(robot.model), max_points=10**6).gravity(list(robot.joint_names), q.ravel())
    np.testing.assert_allclose(g, np.tile(robot.gravity(np.zeros(6)), (len(q), 1)), atol=1e-12)
