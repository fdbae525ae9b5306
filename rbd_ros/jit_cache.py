"""numba's on-disk cache, keyed on the sources of the whole package instead of one file.

numba stamps a cached kernel with the content hash of the file that defines it only
(``numba.core.caching``; its docs: "cache invalidation fails to recognize changes in functions
defined in a different file", numba issue 1833).  A kernel compiled into a caller's cache
carries its callees and the module constants it read; after an upgrade or an edit of the
callee's module, the caller's stale cache would still load and run the old code.

:func:`register` puts a cache locator in front of numba's own for the files under a package
directory: the same cache places numba would pick (``NUMBA_CACHE_DIR`` when set, else the
``__pycache__`` beside the file when writable, else the user-wide cache directory, e.g.
``~/.cache/numba`` for a read-only install), but every kernel's stamp is :func:`source_digest`
of the package (all its ``.py`` files, their relative paths, and the Python, numba and NumPy
versions).  Any change to any of them makes every cached kernel of the package stale, and each
recompiles once on its next first call (and its cache file is overwritten, so nothing piles
up); while nothing changes, the caches load as before.

``rbd_ros/__init__.py`` registers ``rbd_ros`` itself (its ROS adapters in ``rbd_ros/ros``
excepted: no kernel reads them) before any kernel module can be imported: at once if numba
is already imported, else when ``numba.core.caching`` is first imported, so ``import rbd_ros``
does not import numba.  The locator list ``CacheImpl._locator_classes`` is numba's extension
point (it has no public registration call); a process that sets ``NUMBA_CACHE_LOCATOR_CLASSES``
chooses its own locators instead.
"""
from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import os
import platform
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

_REGISTERED: dict[str, tuple[str, ...]] = {}  # package directory -> excluded subdirectories
_DIGESTS: dict[str, str] = {}  # package directory -> digest, computed once per process


def source_digest(package_dir: str | os.PathLike[str], exclude: tuple[str, ...] = ()) -> str:
    """SHA-256 of every ``.py`` file under ``package_dir`` (relative path and bytes, sorted)
    except those under the subdirectories ``exclude``, and of the Python, numba and NumPy
    versions."""
    import numba
    import numpy

    root = Path(package_dir).resolve()
    skip = tuple(root / e for e in exclude)
    h = hashlib.sha256()
    h.update(f"{sys.version} {platform.machine()} {numba.__version__} {numpy.__version__}".encode())
    for path in sorted(root.rglob("*.py")):
        if any(path.is_relative_to(s) for s in skip):
            continue
        h.update(b"\0" + path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def _package_of(py_file: str) -> str | None:
    """The registered package directory ``py_file`` belongs to, or None."""
    path = os.path.realpath(py_file)
    for root, exclude in _REGISTERED.items():
        if path.startswith(root + os.sep) and not any(
                path.startswith(os.path.join(root, e) + os.sep) for e in exclude):
            return root
    return None


def _digest(root: str) -> str:
    if root not in _DIGESTS:  # once per process: all kernels of one run share one snapshot
        _DIGESTS[root] = source_digest(root, _REGISTERED[root])
    return _DIGESTS[root]


def _locators() -> list[type]:
    """numba's three file-backed locators, each with the package-wide source stamp."""
    from numba.core import caching

    class _PackageStamp:
        _package: str

        def get_source_stamp(self) -> Any:
            return ("rbd_ros.jit_cache", _digest(self._package))

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            package = _package_of(py_file)
            if package is None:
                return None  # not ours: numba's own locators take it
            self = super().from_function(py_func, py_file)  # type: ignore[misc]
            if self is not None:
                self._package = package
            return self

    return [type(f"PackageStamped{base.__name__}", (_PackageStamp, base), {})
            for base in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                         caching.UserWideCacheLocator)]


def _install(caching: ModuleType) -> None:
    """Put the package-stamped locators first in numba's list (once)."""
    classes = caching.CacheImpl._locator_classes
    if not any(getattr(c, "__name__", "").startswith("PackageStamped") for c in classes):
        classes[:0] = _locators()


class _AfterCachingImport(importlib.abc.MetaPathFinder):
    """Installs the locators right after ``numba.core.caching`` executes, then leaves."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "numba.core.caching":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _install(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        return spec


def register(package_dir: str | os.PathLike[str], exclude: tuple[str, ...] = ()) -> None:
    """Stamp the numba caches of the kernels defined under ``package_dir`` (but not under its
    subdirectories ``exclude``) with :func:`source_digest` of that directory.  Call before the
    package's first kernel is decorated."""
    _REGISTERED[os.path.realpath(package_dir)] = tuple(exclude)
    caching = sys.modules.get("numba.core.caching")
    if caching is not None:
        _install(caching)
    elif not any(isinstance(f, _AfterCachingImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterCachingImport())
