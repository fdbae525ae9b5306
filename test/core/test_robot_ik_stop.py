"""``Robot.request_ik_stop`` / ``clear_ik_stop`` / ``ik_stop_requested`` (issue 28: the public
form of the stop flag the dynamics service used to reach through ``Robot._ik_buf``)."""
import threading
import time

import numpy as np
import pytest

from rbd_ros.robot import Robot
from rbd_ros.util.resources import bundled_urdf

# a stop from another thread ends a solve within 10 s of wall time: never on the idle lane (test/support/xdist_lanes.py)
pytestmark = pytest.mark.realtime


def test_a_raised_flag_ends_ik_unsolved_and_clearing_it_solves_again() -> None:
    robot = Robot.from_urdf(str(bundled_urdf("arm7")))
    assert not robot.ik_stop_requested()
    robot.request_ik_stop()  # before any solve: nothing to stop, no error
    target = robot.fk(np.full(robot.dof, 0.3))
    free = robot.ik(target, seed=1)
    assert free.success and np.allclose(robot.fk(free.q), target, atol=1e-5)  # the oracle: fk of the answer
    robot.request_ik_stop()
    assert robot.ik_stop_requested()
    stopped = robot.ik(target, seed=1)
    assert not stopped.success  # ended by the flag, not by the target
    robot.clear_ik_stop()
    assert not robot.ik_stop_requested()
    assert robot.ik(target, seed=1).success


def test_a_stop_from_another_thread_ends_an_unreachable_solve_early() -> None:
    robot = Robot.from_urdf(str(bundled_urdf("arm7")))
    far = np.eye(4)
    far[:3, 3] = [50.0, 0.0, 0.0]  # out of reach: without the flag it runs all its restarts
    robot.ik(far, max_iterations=5, max_restarts=1)  # compile outside the clock
    threading.Timer(0.2, robot.request_ik_stop).start()
    t0 = time.monotonic()
    res = robot.ik(far, max_iterations=2**31 - 1, max_restarts=2**31 - 1, timeout=60.0)
    assert time.monotonic() - t0 < 10.0 and not res.success
    assert robot.ik_stop_requested()
