"""Kernels compiled for one signature on their first use, not when their module is imported.

``@njit(signature)`` compiles (or loads from the cache) at the decorator, so importing a module
of such kernels costs every process all of them: before issue 39 the thirteen checked entry
points of ``algorithm.checked``, ``algorithm.floating_base`` and ``algorithm.planar_base`` cost
a fixed-base controller 70 s of its 86 s cold start (empty cache, loaded machine), ten of them
for bases it never drives, and 1-3 s of cache loading when warm.  ``@one_signature(signature,
...)`` keeps the Python function and compiles it for that one signature (the same numba
options, the same cache files) the first time it is called or its ``dispatcher()`` is asked
for, once per process whatever the threads.

``entry`` is the compiled function itself of a single-signature kernel (what ``Robot``'s fast
path calls: no dispatcher typing); ``on_first_call(kernel, namespace, name)`` is a stand-in
for ``namespace[name] = entry(kernel)`` that compiles on its first call and then puts the
entry there: code that reads ``name`` from ``namespace`` (a module's globals, as the fast path's
generated methods do) calls the stand-in once and the compiled function from then on, at the
same cost as before.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from numba import njit


class OneSignature:
    """A kernel compiled for ``signature`` with numba's ``options`` on first use (module
    docstring); calling it calls the compiled dispatcher."""

    def __init__(self, py_func: Callable[..., Any], signature: Any, options: dict[str, Any]) -> None:
        self.py_func, self.signature, self.options = py_func, signature, options
        self._dispatcher: Any = None
        self._lock = threading.Lock()
        functools.update_wrapper(self, py_func)

    def dispatcher(self) -> Any:
        """numba's dispatcher, compiled (or loaded from the cache) for the one signature."""
        if self._dispatcher is None:
            with self._lock:
                if self._dispatcher is None:
                    self._dispatcher = njit(self.signature, **self.options)(self.py_func)
        return self._dispatcher

    @property
    def compiled(self) -> bool:
        """Whether this process has compiled (or loaded) it yet."""
        return self._dispatcher is not None

    def __call__(self, *args: Any) -> Any:
        return self.dispatcher()(*args)


def one_signature(signature: Any, **options: Any) -> Callable[[Callable[..., Any]], OneSignature]:
    """``@njit(signature, **options)``, compiled on first use (module docstring)."""
    return lambda py_func: OneSignature(py_func, signature, options)


def njit_no_nrt(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``@njit(**options, _nrt=False)``: a kernel without numba's runtime (the row kernels:
    no MemInfo incref/decref per row view, ``rnea.rnea_rows``); numba's stubs have no ``_nrt``
    (a private option), so it is passed through a dict."""
    return njit(**{**options, "_nrt": False})


def entry(dispatcher: Any) -> Any:
    """The compiled entry point of a single-signature ``dispatcher`` (a ``OneSignature`` is
    compiled first): ``CompileResult.entry_point``, or the dispatcher itself if this numba has
    none.  Callers must check argument types themselves (``algorithm.checked``)."""
    if isinstance(dispatcher, OneSignature):
        dispatcher = dispatcher.dispatcher()
    try:
        (sig,) = dispatcher.signatures
        ep = dispatcher.overloads[sig].entry_point
    except (AttributeError, KeyError, ValueError):
        return dispatcher
    return ep if callable(ep) else dispatcher


def on_first_call(kernel: OneSignature, namespace: dict[str, Any], name: str) -> Callable[..., Any]:
    """A stand-in for ``namespace[name] = entry(kernel)``: its first call compiles ``kernel``,
    puts the entry point in ``namespace[name]`` and calls it; a copy of the stand-in kept
    elsewhere keeps working (one Python call more)."""
    found: list[Any] = []

    def first_call(*args: Any) -> Any:
        if not found:
            found.append(entry(kernel))
            namespace[name] = found[0]
        return found[0](*args)

    first_call.__name__ = first_call.__qualname__ = name
    first_call.__doc__ = f"{kernel.py_func.__qualname__}'s entry point, compiled on this first call"
    return first_call


__all__ = ["OneSignature", "entry", "njit_no_nrt", "on_first_call", "one_signature"]
