"""What ``import numba`` loads that a process of rbd_ros does not need (issue 39: a node ready
in seconds), trimmed without changing what numba computes.

Measured on the 2-core machine, CPU time of a warm node's start (``rbd-ros dynamics-server``
to ``ready``: ~1.0-1.1 s, 1 090 modules):

* **scipy.linalg, 0.23 s, 85 modules.**  ``numba.np.arraymath`` sets its ``_HAVE_BLAS`` flag
  on import by calling ``numba.np.linalg.ensure_blas()``, which imports
  ``scipy.linalg.cython_blas`` and with it the whole ``scipy.linalg`` package, then checks
  that scipy's BLAS integer width is the one numba was built for
  (``_check_lapack_int_width``).  No kernel of ours calls BLAS on the cycle, so while
  ``arraymath`` executes, ``ensure_blas`` is a probe that finds the ``cython_blas`` extension
  beside ``scipy/linalg`` without importing it and runs numba's own width check
  (``scipy.__config__`` only); then the real ``ensure_blas`` is put back.  A kernel that uses
  BLAS still gets it: numba calls the real ``ensure_blas`` when it compiles one, and its
  runtime imports ``scipy.linalg.cython_blas`` by name on the first BLAS call.  A missing
  scipy or extension reads as "no BLAS", as numba's own check would.
* **coverage.py, 0.06 s, 65 modules.**  ``numba.misc.coverage_support`` imports ``coverage``
  when it is installed (colcon brings it into the venv) to report jitted lines to a running
  coverage measurement.  While it executes, ``coverage`` reads as not installed unless
  coverage is in use: imported already, started by ``COVERAGE_PROCESS_START`` /
  ``COVERAGE_PROCESS_CONFIG`` (coverage's subprocess measurement), or asked of numba with
  ``NUMBA_JIT_COVERAGE``.  ``import coverage`` works as before afterwards; only a coverage
  measurement started later inside the same process misses numba's jitted lines.

``RBD_ROS_FULL_NUMBA_IMPORT=1`` turns both off.  :func:`trim` registers them
(``rbd_ros/__init__.py``, before anything imports numba); a process that imported numba first
keeps numba's own imports.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from rbd_ros.algorithm import import_hooks

Run = Callable[[ModuleType], None]


def blas_available() -> bool:
    """Whether scipy ships ``scipy/linalg/cython_blas`` (an extension module file), found
    without importing ``scipy.linalg``; numba's BLAS width check run when it does."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.submodule_search_locations:
        return False
    folders = [Path(p) / "linalg" for p in spec.submodule_search_locations]
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    if not any(f.name.startswith("cython_blas.") and f.name.endswith(suffixes)
               for d in folders if d.is_dir() for f in d.iterdir()):
        return False
    from numba.np import linalg

    linalg._check_lapack_int_width()  # RuntimeError on a BLAS width numba was not built for
    return True


def _probed_blas(run: Run, module: ModuleType) -> None:
    """Execute ``numba.np.arraymath`` with ``ensure_blas`` the probe, then the real one."""
    from numba.np import linalg

    real = linalg.ensure_blas

    def probe() -> None:
        if not blas_available():
            raise ImportError("scipy 0.16+ is required for linear algebra")  # numba's own words

    linalg.ensure_blas = probe
    try:
        run(module)
    finally:
        linalg.ensure_blas = real
        if getattr(module, "ensure_blas", None) is probe:  # arraymath's own name for it
            module.ensure_blas = real  # type: ignore[attr-defined]


def _flag(name: str) -> bool:
    """An environment switch: set, and neither empty nor ``0``."""
    return os.environ.get(name, "0") not in ("", "0")


def coverage_in_use() -> bool:
    """Whether this process measures coverage (or asks numba to): then numba keeps it."""
    return ("coverage" in sys.modules or bool(os.environ.get("COVERAGE_PROCESS_START"))
            or bool(os.environ.get("COVERAGE_PROCESS_CONFIG")) or _flag("NUMBA_JIT_COVERAGE"))


def _without_coverage(run: Run, module: ModuleType) -> None:
    """Execute ``numba.misc.coverage_support`` with ``coverage`` reading as not installed."""
    if coverage_in_use():
        run(module)
        return
    sys.modules["coverage"] = None  # type: ignore[assignment]  # import coverage -> ImportError
    try:
        run(module)
    finally:
        if sys.modules.get("coverage", 0) is None:
            del sys.modules["coverage"]


def trim() -> None:
    """Register both trims of the module docstring (nothing if numba is imported already or
    ``RBD_ROS_FULL_NUMBA_IMPORT`` is set)."""
    if _flag("RBD_ROS_FULL_NUMBA_IMPORT") or "numba" in sys.modules:
        return
    import_hooks.around("numba.np.arraymath", _probed_blas)
    import_hooks.around("numba.misc.coverage_support", _without_coverage)


__all__ = ["blas_available", "coverage_in_use", "trim"]
