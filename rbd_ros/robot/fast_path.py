"""``fast_path``: the one home of the single-state fast path of ``Robot``'s dynamics calls.

A public call (``inverse_dynamics``, ``mass_matrix``, ...) first tries the compiled checked
entry point of its kernel (``algorithm.checked``, ``algorithm.floating_base``,
``algorithm.planar_base``: ``entry(dispatcher)``, the compiled function without the
dispatcher's typing).  Those entry points check lengths, strides, alignment and finiteness
themselves, but numba's unboxing only checks "an ndarray with 8-byte items", so every state
argument must first be a **1-D float64 ndarray**; that check is written here, once.  A
non-array raises ``AttributeError`` (no ``ndim``) or, from numba's unboxing, ``TypeError``; an
entry point returning non-zero (an invalid argument or a non-finite result) or raising
``ZeroDivisionError`` (a singular mass matrix) sends the call to the decorated function, the
full validation path, which raises the error naming the cause.

Entry points whose state arguments are typed ``algorithm.f8vector`` check ndim and dtype
while unboxing (in the compiled wrapper, ~7 ns an array): their fast path has no Python check
(``checked_unbox``); a non-array then raises ``TypeError`` there.

Why generated: the check costs tens of nanoseconds inline; a plain helper function costs
+80-110 ns per call (one more Python frame, measured), which is a sixth of a 7-DoF RNEA call.
``fast_path`` writes the check into the public method itself, once per decorated method when
its class is built (as ``dataclasses`` writes ``__init__``): the method is the check, the
entry-point call and, on any miss, one call of the decorated function, with the decorated
function's signature, name and docstring.  The generated source is kept (``__fast_source__``,
and in ``linecache`` for tracebacks).
"""
from __future__ import annotations

import ast
import functools
import inspect
import linecache
import re
from typing import Any, Callable, Sequence

import numpy as np

_F8 = np.dtype(np.float64)
_F8_NAME = "_fast_path_f8"


def _literal(value: Any) -> str:
    """``value`` as source when it reads back as itself, else ``None`` (the real defaults are
    assigned to ``__defaults__`` after the ``exec``)."""
    try:
        return repr(value) if ast.literal_eval(repr(value)) == value else "None"
    except (ValueError, SyntaxError):
        return "None"


def _source(name: str, full: str, sig: inspect.Signature, arrays: Sequence[str], when: str, alloc: str,
            call: str, result: str, checked_unbox: bool = False) -> str:
    """The source of the method ``name`` whose misses call the global ``full``; without the
    Python type check when ``checked_unbox``."""
    params, passed = [], []
    for p in sig.parameters.values():
        if p.kind is not p.POSITIONAL_OR_KEYWORD:
            raise TypeError(f"fast_path: {name}({p}): only plain parameters are supported")
        params.append(p.name if p.default is p.empty else f"{p.name}={_literal(p.default)}")
        passed.append(p.name)
    check = " and ".join([f"{a}.ndim == 1" for a in arrays] + [f"{a}.dtype is {_F8_NAME}" for a in arrays])
    fast = ["try:", f"    if {check}:", f"        {alloc}", f"        if {call} == 0:",
            f"            return {result}", "except (AttributeError, TypeError, ZeroDivisionError):", "    pass"]
    if checked_unbox:
        fast = ["try:", f"    {alloc}", f"    if {call} == 0:", f"        return {result}",
                "except (TypeError, ZeroDivisionError):", "    pass"]
    if when:
        fast = [f"if {when}:", *("    " + line for line in fast)]
    lines = [f"def {name}({', '.join(params)}):", *("    " + line for line in fast),
             f"    return {full}({', '.join(passed)})"]
    return "\n".join(lines) + "\n"


def fast_path(arrays: Sequence[str], call: str, alloc: str = "out = _empty(self.dof)", result: str = "out",
              when: str = "", checked_unbox: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a public single-state call with the fast path (module docstring):

    ``if when: try: if <every name in arrays is a 1-D float64 ndarray>: alloc; if call == 0:
    return result; except (AttributeError, TypeError, ZeroDivisionError): pass``, then the
    decorated function (the full path) with the same arguments.

    ``arrays``: the state arguments checked; ``call``: the entry-point call (an expression over
    the arguments, ``self`` and the decorated function's module globals; 0 = valid);
    ``alloc``: the statement allocating the outputs; ``result``: what is returned; ``when``:
    the condition on the other arguments under which the fast path applies (defaults);
    ``checked_unbox``: the entry point types every state argument ``algorithm.f8vector`` and
    ``f8vector.NATIVE_CHECK`` holds, so its unboxing refuses (``TypeError``) what the Python
    check would, and that check is left out (~0.1 us for three arrays, issue 32).

    The method runs in the module's globals, as the function it replaces would (a closure
    would cost ~15 ns per call): the float64 dtype and the full path are put there under
    reserved names (``_fast_path_f8``, ``_fast_path_full_<qualname>``)."""

    def decorate(full: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(full)
        full_name = "_fast_path_full_" + re.sub(r"\W", "_", full.__qualname__)
        src = _source(full.__name__, full_name, sig, arrays, when, alloc, call, result, checked_unbox)
        filename = f"<fast_path {full.__module__}.{full.__qualname__}>"
        linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
        module = full.__globals__
        module[_F8_NAME], module[full_name] = _F8, full
        ns: dict[str, Any] = {}
        exec(compile(src, filename, "exec"), module, ns)  # our own template
        method = ns[full.__name__]
        method.__defaults__ = full.__defaults__
        functools.update_wrapper(method, full)
        method.__fast_source__ = src
        return method

    return decorate


__all__ = ["fast_path"]
