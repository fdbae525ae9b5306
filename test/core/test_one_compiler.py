"""``jit_cache.one_compiler`` (``rbd-ros warm --jobs N``): a kernel signature another holder of
its lock is compiling is not compiled again until that holder is done (then numba's cache has
it); a holder that never finishes delays the compilation by ``wait`` seconds, never stops it."""
from __future__ import annotations

import fcntl
import threading
import time

from numba import njit
from numba.core import event, types
from numba.core.dispatcher import Dispatcher

from rbd_ros.algorithm import jit_cache


def _kernel():  # a new dispatcher each time: nothing compiled or cached yet
    @njit
    def twice(x):
        return 2.0 * x

    return twice


def test_a_signature_being_compiled_elsewhere_waits_for_it(tmp_path) -> None:
    twice = _kernel()
    lock = jit_cache.compile_lock(str(tmp_path), twice.py_func, (types.float64,))
    out: list[float] = []
    with event.install_recorder("numba:compile") as compiles, open(lock, "a") as other, \
            jit_cache.one_compiler(str(tmp_path)) as waits:
        fcntl.flock(other, fcntl.LOCK_EX)  # as another warm process compiling twice(float64)
        caller = threading.Thread(target=lambda: out.append(twice(1.5)))
        held = time.time()
        caller.start()
        caller.join(1.0)
        released = time.time()
        fcntl.flock(other, fcntl.LOCK_UN)
        caller.join(120.0)
        assert not caller.is_alive()
    assert out == [3.0]
    (started, _), _ = compiles.buffer  # the compilation's start and end events
    assert started >= released  # it began only once the other holder let go
    assert 0.0 < waits.waited <= time.time() - held  # and said how long it waited
    assert twice.signatures == [(types.float64,)]
    assert "one_compiler" not in Dispatcher.compile.__qualname__  # numba's own again


def test_a_holder_that_never_finishes_costs_wait_seconds_only(tmp_path) -> None:
    twice = _kernel()
    lock = jit_cache.compile_lock(str(tmp_path), twice.py_func, (types.int64,))
    with open(lock, "a") as other, jit_cache.one_compiler(str(tmp_path), wait=0.3):
        fcntl.flock(other, fcntl.LOCK_EX)  # held for the whole call
        assert twice(2) == 4.0
    assert twice.signatures == [(types.int64,)]
