"""``jit_cache.register`` types a constant argument of one package kernel to another with its
plain type (``jit_cache._type_constants_plainly``, issue 39): numba's literal dispatch compiled
a callee once per constant value it was handed (the planar base's ABA three times, ~17 s each);
numba's own behaviour stays for kernels outside the registered packages (the oracle that the
test could fail)."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from numba import types

from rbd_ros.algorithm import jit_cache

KERNELS = """
from numba import njit

@njit
def callee(x, flag, k):
    return x * k if flag else -x * k

@njit
def caller(x):
    return callee(x, True, 2) + callee(x, False, 3) + callee(x, flag=True, k=4)
"""


def _package(root: Path, name: str) -> object:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text("")
    (root / name / "kernels.py").write_text(KERNELS)
    sys.path.insert(0, str(root))
    try:
        return importlib.import_module(f"{name}.kernels")
    finally:
        sys.path.remove(str(root))


def test_a_registered_kernel_is_compiled_once_for_its_constant_arguments(tmp_path: Path) -> None:
    jit_cache.register(tmp_path / "plain_pkg")  # before its kernels are decorated, as rbd_ros does
    plain = _package(tmp_path, "plain_pkg")
    assert plain.caller(1.5) == 1.5 * 2 - 1.5 * 3 + 1.5 * 4  # the constants reached the callee
    assert plain.callee.signatures == [(types.float64, types.boolean, types.int64)]


def test_an_unregistered_kernel_keeps_numbas_literal_dispatch(tmp_path: Path) -> None:
    other = _package(tmp_path, "literal_pkg")
    assert other.caller(1.5) == 1.5 * 2 - 1.5 * 3 + 1.5 * 4
    assert len(other.callee.signatures) == 3  # True/2, False/3, True/4: one compilation each
    assert all(isinstance(t, types.Literal) for sig in other.callee.signatures for t in sig[1:])


def test_installed_whichever_is_imported_first() -> None:
    """rbd_ros before numba (the hooks wait for numba's modules) and numba before rbd_ros."""
    check = ("from numba.core.dispatcher import _DispatcherBase as D; "
             "assert getattr(D.get_call_template, 'plain_constants', False)")
    for first in ("import rbd_ros; import numba", "import numba; import rbd_ros"):
        proc = subprocess.run([sys.executable, "-c", f"{first}; {check}"], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, (first, proc.stderr[-2000:])
