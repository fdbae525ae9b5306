"""Where a sweep's cells run: local processes, or a Ray cluster; the same ``run_cell``.

* ``local(cells, workers)``: ``workers`` processes of this machine (``multiprocessing.Pool``,
  started by ``spawn``: no numba or MuJoCo state is forked); ``workers=1`` runs in this
  process.  Each worker loads numba's cached kernels once (~2 s) and a robot once per robot
  (``cell.load_robot``), then runs cells back to back.
* ``ray(cells, address, workers)``: ``ray.init(address)`` (``"local"`` starts a local Ray,
  as the tests do; ``"auto"`` or ``host:port`` joins a cluster) and one Ray task per cell
  (``num_cpus=1``), at most ``workers`` in flight when given (else the cluster's CPUs).  The
  cluster's nodes need rbd_ros and its requirements installed (``pip install rbd_ros[sweep]``
  on each); nothing else changes.

The tours are planned once in the driver (seconds per robot) and handed to the workers.
Both yield rows as cells finish (``on_row`` sees each), so a long sweep shows progress and a
partial table survives an interruption.

**Interruption** (``Interrupt``): while a sweep runs, Ctrl-C (SIGINT) sets a flag instead of
raising in the middle of a lock wait (which left ``release unlocked lock`` and a
``KeyboardInterrupt`` traceback per worker); the backends poll it between results, drop the
cells not finished (local workers terminated, Ray tasks cancelled) and return the rows they
have.  The workers ignore SIGINT from their start (the terminal sends it to the whole process
group): no worker prints a traceback.  In one process (``workers=1``) the running cell
finishes first; a second Ctrl-C stops at once (``KeyboardInterrupt``).

How it divides over N workers (on paper): cells are independent and each is ~1 s of
simulation or more, so the time is ``ceil(cells / N) x cell time`` plus one start-up per worker
(numba's cache, ~2 s); on N cores with nothing else running the throughput grows as N until
the cells run out (a grid smaller than N leaves workers idle) or the slowest cell dominates.
"""
from __future__ import annotations

import multiprocessing
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from rbd_ros.sweep.cell import plan_all, run_cell, seed_tours
from rbd_ros.sweep.grid import Cell

POLL = 0.2  # s between looks at the interrupt flag while waiting for a result


class Interrupt:
    """A SIGINT flag for the duration of a sweep (module docstring): ``with Interrupt() as
    stop: ... stop.is_set()``; the first Ctrl-C sets it (and prints ``message``), the second
    raises ``KeyboardInterrupt``.  Outside the main thread it only holds a flag nobody sets."""

    def __init__(self, message: str = "") -> None:
        self.event = threading.Event()
        self.message = message
        self._old: Callable[[int, FrameType | None], Any] | int | None = None  # the SIGINT handler before

    def __enter__(self) -> threading.Event:
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._on_sigint)
        return self.event

    def __exit__(self, *exc: object) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)

    def _on_sigint(self, signum: int, frame: object) -> None:
        if self.event.is_set():
            raise KeyboardInterrupt
        self.event.set()
        if self.message:
            print(self.message, file=sys.stderr, flush=True)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while child processes start: they inherit it (an ignored signal stays
    ignored across ``exec``, and Python then installs no KeyboardInterrupt handler)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _worker_start(tours: dict) -> None:
    """A local worker's initializer: SIGINT ignored (the driver stops the sweep), tours adopted."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    seed_tours(tours)


def local(cells: Iterable[Cell], workers: int = 1, stop: threading.Event | None = None) -> Iterator[dict]:
    """Rows of ``cells`` run in ``workers`` local processes (module docstring); ``stop`` set:
    the rows finished so far, the rest dropped.  ``ValueError`` at once for ``workers < 1``."""
    cells = list(cells)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer of at least 1, got {workers!r}")
    stop = stop if stop is not None else threading.Event()
    return _in_process(cells, stop) if workers == 1 else _in_pool(cells, workers, stop)


def _in_process(cells: list[Cell], stop: threading.Event) -> Iterator[dict]:
    for cell in cells:
        if stop.is_set():
            return
        yield run_cell(cell)


def _in_pool(cells: list[Cell], workers: int, stop: threading.Event) -> Iterator[dict]:

    ctx = multiprocessing.get_context("spawn")
    tours = plan_all(cells)  # once here, not once per worker (seconds per robot)
    done: queue.Queue = queue.Queue()
    with _sigint_ignored():
        pool = ctx.Pool(min(workers, len(cells)) or 1, initializer=_worker_start, initargs=(tours,))
    finished = False
    try:
        for cell in cells:
            def failed(exc: BaseException, c: Cell = cell) -> None:
                done.put(_failed(c, exc))

            pool.apply_async(run_cell, (cell,), callback=done.put, error_callback=failed)
        pool.close()
        for _ in cells:
            row = _next(done, stop)
            if row is None:
                return
            yield row
        finished = True
    finally:
        if finished:
            pool.join()
        else:  # interrupted (or the consumer stopped): the running cells are dropped
            pool.terminate()
            pool.join()


def _next(done: queue.Queue, stop: threading.Event) -> dict | None:
    """The next finished row, or None once ``stop`` is set."""
    while not stop.is_set():
        try:
            return done.get(timeout=POLL)
        except queue.Empty:
            continue
    return None


def _failed(cell: Cell, exc: BaseException) -> dict:
    """The row of a cell whose worker failed outside ``run_cell`` (it never raises itself)."""
    return {**cell.as_dict(), "error": f"{type(exc).__name__}: {exc}".splitlines()[0], "wall_s": 0.0}


def ray(cells: Iterable[Cell], address: str, workers: int | None = None,
        on_start: Callable[[dict], None] | None = None, stop: threading.Event | None = None) -> Iterator[dict]:
    """Rows of ``cells`` run as Ray tasks on the cluster at ``address`` (module docstring);
    ``on_start`` gets the cluster's resources once connected; ``stop`` set: the rows finished
    so far, the tasks in flight cancelled.  At most ``workers`` tasks in flight."""
    try:
        import ray as ray_
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'rbd_ros[sweep]' (or pip install ray)") from None
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an integer of at least 1 (or None), got {workers!r}")
    return _on_ray(ray_, list(cells), address, workers, on_start,
                   stop if stop is not None else threading.Event())


def _on_ray(ray_, cells: list[Cell], address: str, workers: int | None,
            on_start: Callable[[dict], None] | None, stop: threading.Event) -> Iterator[dict]:
    started_here = not ray_.is_initialized()
    if started_here:
        kwargs = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        with _sigint_ignored():  # Ray's processes ignore the terminal's Ctrl-C
            if address == "local":
                ray_.init(num_cpus=workers, **kwargs)  # None: this machine's CPUs
            else:
                ray_.init(address=address, **kwargs)
    pending: list = []
    try:
        if on_start is not None:
            on_start(dict(ray_.cluster_resources()))
        task = ray_.remote(num_cpus=1, max_retries=1)(run_cell)
        tours = ray_.put(plan_all(cells))  # planned once here; each task adopts them
        limit = workers or max(1, int(ray_.cluster_resources().get("CPU", 1)))
        todo = list(cells)
        while todo or pending:
            while todo and len(pending) < limit:
                pending.append(task.remote(todo.pop(0), tours))
            done, pending = ray_.wait(pending, num_returns=1, timeout=POLL)
            for ref in done:
                yield ray_.get(ref)
            if stop.is_set():
                return
    finally:
        for ref in pending:  # interrupted: what is in flight is dropped
            ray_.cancel(ref, force=True)
        if started_here:
            ray_.shutdown()
