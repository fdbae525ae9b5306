"""No allocation per step in the composed loop (issue 20): simulator + ``ControlLoop`` + law,
as the MuJoCo bridge runs them in composed mode, without ROS.

Measured with ``tracemalloc`` (every allocation through Python's and NumPy's allocators):

* nothing accumulates: the traced memory after 2000 more steps is what it was (a per-step
  object kept anywhere would grow it by 2000 times its size), and the garbage collector's
  count of new container objects does not grow either (so no collection pause comes from the
  loop);
* nothing transient: the high-water mark of one kind of call over 1000 calls, above where it
  started, is at most numba's own argument bookkeeping (one ``NRT_MemInfo`` per array
  argument of a kernel, freed on return; calibrated here with ``gather2``'s five arrays and
  with the law's own kernel) plus two Python ints (the step counters).  A temporary NumPy
  array (an object of ~100 B plus its data) would raise it.

The step is ``rbd_ros.sim.closed_loop.composed_loop``'s; its pieces ``sim.measure``,
``loop.joint_state``, ``loop.cycle``, ``sim.command``, ``sim.step``.  Only the joint-space
laws: the task-space laws still make small arrays per cycle (orientation error, Cartesian
reference).
"""
from __future__ import annotations

import gc
import itertools
import tracemalloc

import numpy as np
import pytest

INTS = 2 * 32  # two Python ints above 256 (the step counters), bytes


def _peak_and_net(f, calls: int = 1000) -> tuple[int, int]:
    """``f()`` ``calls`` times under tracemalloc: (high-water mark above the start, net), B."""
    for _ in itertools.repeat(None, 200):
        f()
    gc.collect()
    gc.disable()
    tracemalloc.start(1)
    try:
        for _ in itertools.repeat(None, 50):
            f()
        tracemalloc.reset_peak()
        start, _ = tracemalloc.get_traced_memory()
        for _ in itertools.repeat(None, calls):
            f()
        end, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    return peak - start, end - start


@pytest.fixture(scope="module", params=["puma560", "arm7"])
def robot(request):
    from rbd_ros.model import MdhModel
    from rbd_ros.resources import config_file

    return MdhModel.from_yaml(str(config_file(request.param)))


@pytest.mark.parametrize("law_name", ["computed_torque", "pd", "pd_gravity", "pid"])
def test_composed_loop_allocates_nothing_per_step(robot, law_name) -> None:
    from rbd_ros.algorithm.gather import gather2
    from rbd_ros.sim.closed_loop import composed_loop

    step, sim, loop = composed_loop(robot, law_name)  # the bringup's tour as the reference
    law, names = loop.law, list(sim.joint_names)
    q, qd, _ = sim.measure()
    for _ in range(300):
        step()
    # nothing accumulates
    gc.collect()
    gc.disable()
    try:
        count0 = gc.get_count()[0]
        _, net = _peak_and_net(step, 2000)
        grown = gc.get_count()[0] - count0
    finally:
        gc.enable()
    assert net <= INTS, f"{net} B more after 2000 steps"
    assert grown < 100, f"{grown} new container objects in 2000 steps"

    # nothing transient beyond numba's argument bookkeeping
    floor5, _ = _peak_and_net(lambda: gather2(q, qd, loop.cmd_index, loop.ref_out, loop.q_out))
    ref = loop.ref
    floor_law, _ = _peak_and_net(lambda: law._compute(1.0, loop.q, loop.qd, ref))
    t = sim.time
    pieces = {"sim.measure": sim.measure,
              "loop.joint_state": lambda: loop.joint_state(names, q, qd, t),
              "sim.command": lambda: sim.command(loop.tau_out, t),
              "sim.step": lambda: sim.step(t)}
    for name, f in pieces.items():
        peak, _ = _peak_and_net(f)
        assert peak <= floor5 + INTS, f"{name} allocates: {peak} B transient > {floor5 + INTS}"
    cycle, _ = _peak_and_net(lambda: loop.cycle(t))
    assert cycle <= max(floor_law, floor5) + INTS, f"loop.cycle allocates: {cycle} B"
    whole, _ = _peak_and_net(step)
    assert whole <= max(floor_law, floor5) + INTS, f"the step allocates: {whole} B"
    assert np.isfinite(loop.tau_out).all() and sim.stats.unstable_steps == 0
