"""The planner's inverse dynamics along a path releases the GIL (issue 37's leftover): the
torque check and the retiming (``PathLimits.torques``, ``rnea.rnea_rows_released``) run on the
planning worker while the control cycle's thread goes on.  Oracle for the values: the public
``Robot.inverse_dynamics(..., include_actuators=True)`` (its own validated batch path); for the
release: a second thread that counts while the call runs (the GIL-holding batch kernel lets
it run not once in its whole duration)."""
from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

# the GIL released while planning, measured as pauses of a ticking thread: never on the idle
# lane (test/support/xdist_lanes.py)
pytestmark = pytest.mark.realtime


def _longest_pause_beside(call) -> tuple[float, float]:
    """(duration of ``call()`` on a worker thread, the longest time within it that this thread's
    counting loop did not run)."""
    done = threading.Event()
    span: list[float] = []

    def work() -> None:
        span.append(time.perf_counter())
        call()
        span.append(time.perf_counter())
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)  # the controller node's
    try:
        thread = threading.Thread(target=work)
        ticks = []
        thread.start()
        while not done.is_set():
            ticks.append(time.perf_counter())
        thread.join()
    finally:
        sys.setswitchinterval(old)
    t0, t1 = span
    tk = np.array(ticks)
    return t1 - t0, float(np.diff(np.r_[t0, tk[(tk > t0) & (tk < t1)], t1]).max())


def test_the_path_torques_release_the_gil_and_equal_the_public_inverse_dynamics() -> None:
    from rbd_ros.control.path_limits import PathLimits
    from rbd_ros.model import MdhModel
    from rbd_ros.util.resources import config_file

    limits = PathLimits.from_model(MdhModel.from_yaml(str(config_file("arm7"))))
    robot = limits.robot
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2.0, 2.0, size=(3, 300_000, 7))
    from rbd_ros.algorithm.rnea import rnea_rows
    from rbd_ros.model.data import empty_workspace

    small = q[:8], qd[:8], qdd[:8]
    limits.torques(*small)  # (loaded, not timed)
    held = np.empty_like(q)
    rows = lambda: rnea_rows(robot.data.mp, empty_workspace(7), 0, len(q), q, qd, qdd, np.zeros(6), False,  # noqa: E731
                             True, held)
    rows()
    out: list[np.ndarray] = []
    took, pause = _longest_pause_beside(lambda: out.append(limits.torques(q, qd, qdd)))
    took_held, pause_held = _longest_pause_beside(rows)
    np.testing.assert_array_equal(out[0], robot.inverse_dynamics(q, qd, qdd, include_actuators=True))
    np.testing.assert_array_equal(out[0], held)
    # the same kernel holding the GIL: the counting thread stands still for its whole call; the
    # planner's lets it run: its longest pause is a switch interval or a preemption, not the call
    assert pause_held > 0.5 * took_held, (pause_held, took_held)
    assert pause < 0.5 * took, (pause, took)
    print(f"300 000 states: released {took * 1e3:.0f} ms, longest pause beside it {pause * 1e3:.1f} ms; "
          f"held {took_held * 1e3:.0f} ms, pause {pause_held * 1e3:.1f} ms")


def test_a_non_finite_torque_is_refused_naming_the_sample() -> None:
    import pytest

    from rbd_ros.control.path_limits import PathLimits
    from rbd_ros.model import MdhModel
    from rbd_ros.util.resources import config_file

    limits = PathLimits.from_model(MdhModel.from_yaml(str(config_file("arm7"))))
    q = np.zeros((4, 7))
    qdd = q.copy()
    qdd[2, 3] = np.inf
    with pytest.raises(ValueError, match="not finite.*sample 2"):
        limits.torques(q, q, qdd)
