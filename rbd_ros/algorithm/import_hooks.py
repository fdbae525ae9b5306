"""Code run around the execution of a third-party module on its first import, the one home of
rbd_ros's import hooks (``jit_cache``'s cache locators, ``numba_start``'s start-up trims).

:func:`around` registers ``hook(run, module)`` for a module name: when that module is first
imported, ``hook`` is called in place of the loader's ``exec_module`` with the real one as
``run`` (it must call ``run(module)`` once), so it can prepare before and finish after.  A
finder in front of ``sys.meta_path`` does it, and leaves once every registered hook has run.
A module already imported gets nothing: the caller decides what to do then (``jit_cache``
runs its hook at once).
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

Hook = Callable[[Callable[[ModuleType], None], ModuleType], None]


class _Around(importlib.abc.MetaPathFinder):
    """Wraps the ``exec_module`` of each pending module's loader in its hook."""

    def __init__(self) -> None:
        self.pending: dict[str, Hook] = {}

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in self.pending:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        hook = self.pending.pop(fullname)
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            hook(run, module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        if not self.pending and self in sys.meta_path:
            sys.meta_path.remove(self)
        return spec


def _finder() -> _Around:
    for f in sys.meta_path:
        if isinstance(f, _Around):
            return f
    f = _Around()
    sys.meta_path.insert(0, f)
    return f


def around(name: str, hook: Hook) -> bool:
    """Run ``hook(run, module)`` in place of module ``name``'s execution on its first import;
    False (nothing registered) when ``name`` is imported already or has a hook waiting."""
    if name in sys.modules:
        return False
    finder = _finder()
    if name in finder.pending:
        return False
    finder.pending[name] = hook
    return True


def after(name: str, hook: Callable[[ModuleType], None]) -> bool:
    """``hook(module)`` right after module ``name`` executes on its first import (``around``)."""

    def run_then(run: Callable[[ModuleType], None], module: ModuleType) -> None:
        run(module)
        hook(module)

    return around(name, run_then)


__all__ = ["after", "around"]
