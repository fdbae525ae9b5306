"""Where a sweep's cells run: local processes, or a Ray cluster; the same ``run_cell``.

* ``local(cells, workers)``: ``workers`` processes of this machine
  (``concurrent.futures.ProcessPoolExecutor``, started by ``spawn``: no numba or MuJoCo state
  is forked); ``workers=1`` runs in this process.  Each worker loads numba's cached kernels
  once (~2 s) and a robot once per robot (``cell.load_robot``), then runs cells back to back.
* ``ray(cells, address, workers)``: ``ray.init(address)`` (``"local"`` starts a local Ray,
  as the tests do; ``"auto"`` or ``host:port`` joins a cluster) and one Ray task per cell
  (``num_cpus=1``), at most ``workers`` in flight when given (else the cluster's CPUs).  The
  cluster's nodes need rbd_ros and its requirements installed (``pip install rbd_ros[sweep]``
  on each); nothing else changes.

The tours are planned once in the driver (seconds per robot) and handed to the workers.
Both yield rows as cells finish (``on_row`` sees each), so a long sweep shows progress and a
partial table survives an interruption.

How it divides over N workers (on paper): cells are independent and each is ~1 s of
simulation or more, so the time is ``ceil(cells / N) x cell time`` plus one start-up per worker
(numba's cache, ~2 s); on N cores with nothing else running the throughput grows as N until
the cells run out (a grid smaller than N leaves workers idle) or the slowest cell dominates.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed

from rbd_ros.sweep.cell import plan_all, run_cell, seed_tours
from rbd_ros.sweep.grid import Cell


def local(cells: Iterable[Cell], workers: int = 1) -> Iterator[dict]:
    """Rows of ``cells`` run in ``workers`` local processes (module docstring)."""
    cells = list(cells)
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if workers == 1:
        for cell in cells:
            yield run_cell(cell)
        return
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    tours = plan_all(cells)  # once here, not once per worker (seconds per robot)
    with ProcessPoolExecutor(max_workers=min(workers, len(cells)) or 1, mp_context=ctx,
                             initializer=seed_tours, initargs=(tours,)) as pool:
        futures = [pool.submit(run_cell, cell) for cell in cells]
        for future in as_completed(futures):
            yield future.result()


def ray(cells: Iterable[Cell], address: str, workers: int | None = None,
        on_start: Callable[[dict], None] | None = None) -> Iterator[dict]:
    """Rows of ``cells`` run as Ray tasks on the cluster at ``address`` (module docstring);
    ``on_start`` gets the cluster's resources once connected."""
    try:
        import ray as ray_
    except ImportError:
        raise RuntimeError("--ray needs Ray: pip install 'rbd_ros[sweep]' (or pip install ray)") from None
    cells = list(cells)
    started_here = not ray_.is_initialized()
    if started_here:
        kwargs = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if address == "local":
            kwargs["num_cpus"] = workers  # None: this machine's CPUs
            ray_.init(**kwargs)
        else:
            ray_.init(address=address, **kwargs)
    try:
        if on_start is not None:
            on_start(dict(ray_.cluster_resources()))
        task = ray_.remote(num_cpus=1, max_retries=1)(run_cell)
        tours = ray_.put(plan_all(cells))  # planned once here; each task adopts them
        limit = workers or max(1, int(ray_.cluster_resources().get("CPU", 1)))
        pending, queue = [], list(cells)
        while queue or pending:
            while queue and len(pending) < limit:
                pending.append(task.remote(queue.pop(0), tours))
            done, pending = ray_.wait(pending, num_returns=1)
            for ref in done:
                yield ray_.get(ref)
    finally:
        if started_here:
            ray_.shutdown()
