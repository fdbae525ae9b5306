"""numba's on-disk cache, keyed on the sources a kernel depends on instead of its one file.

numba stamps a cached kernel with the content hash of the file that defines it only
(``numba.core.caching``; its docs: "cache invalidation fails to recognize changes in functions
defined in a different file", numba issue 1833).  A kernel compiled into a caller's cache
carries its callees and the module constants it read; after an upgrade or an edit of the
callee's module, the caller's stale cache would still load and run the old code.

:func:`register` puts a cache locator in front of numba's own for the files under a package
directory: the same cache places numba would pick (``NUMBA_CACHE_DIR`` when set, else the
``__pycache__`` beside the file when writable, else the user-wide cache directory, e.g.
``~/.cache/numba`` for a read-only install), but a kernel's stamp is :func:`source_digest`
from the file that defines it: that file and every package module it imports, transitively
(:func:`kernel_sources` with ``start``), with their relative paths and the Python, numba and
NumPy versions.  A change to one of them makes the kernels of that file stale (issue 45: an
edit recompiles what it touches, not the whole cache: editing ``rnea.py`` recompiles the
kernels of the modules that import it, editing ``control/tour.py`` none), and each
recompiles once on its next first call (and its cache file is overwritten, so nothing piles
up); while nothing changes, the caches load as before.

``rbd_ros/__init__.py`` registers ``rbd_ros`` itself (its ROS adapters in ``rbd_ros/ros``
excepted: no kernel reads them) before any kernel module can be imported: at once if numba
is already imported, else when ``numba.core.caching`` is first imported, so ``import rbd_ros``
does not import numba.  The locator list ``CacheImpl._locator_classes`` is numba's extension
point (it has no public registration call); a process that sets ``NUMBA_CACHE_LOCATOR_CLASSES``
chooses its own locators instead.

:func:`register` also makes the package's kernels type a constant argument from another kernel
with its plain type, so that each is compiled once, not once per literal value
(:func:`_type_constants_plainly`).

:func:`one_compiler` lets processes that fill one cache at once (``rbd-ros warm --jobs N``)
compile each kernel signature once between them instead of once each.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import re
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy

from rbd_ros.algorithm import import_hooks

_REGISTERED: dict[str, tuple[str, ...]] = {}  # package directory -> excluded subdirectories
_DIGESTS: dict[tuple[str, str], str] = {}  # (package directory, kernel file) -> stamp, per process
_GRAPHS: dict[str, _Graph] = {}  # package directory -> its sources, read once per process


_NUMBA = re.compile(rb"^[ \t]*(?:from|import)[ \t]+numba\b", re.M)
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
                     rb"|import[ \t]+([\w.]+))", re.M)


class _Graph:
    """One snapshot of a package's ``.py`` files (read once per process and package): dotted
    module name -> path and bytes, and each module's imports of package modules."""

    def __init__(self, package_dir: str | os.PathLike[str], exclude: tuple[str, ...] = ()) -> None:
        root = os.path.realpath(package_dir)
        skip = tuple(os.path.join(root, e) for e in exclude)
        files: dict[str, str] = {}  # dotted module name in the package ('' the package) -> path
        for folder, dirs, names in os.walk(root):
            if any(folder == s or folder.startswith(s + os.sep) for s in skip):
                dirs[:] = []
                continue
            rel = os.path.relpath(folder, root)
            prefix = "" if rel == "." else rel.replace(os.sep, ".") + "."
            for n in names:
                if n.endswith(".py"):
                    mod = prefix + n[:-3] if n != "__init__.py" else prefix[:-1]
                    files[mod] = os.path.join(folder, n)
        self.root, self.files = root, files
        self.text = {mod: Path(path).read_bytes() for mod, path in files.items()}
        self.name = os.path.basename(root).encode()
        self._imports: dict[str, list[str]] = {}
        self._closures: dict[str, tuple[str, ...]] = {}

    def imported(self, mod: str) -> list[str]:
        """The package modules ``mod`` imports (anywhere in the file: lazy imports count)."""
        if mod in self._imports:
            return self._imports[mod]
        files, name = self.files, self.name
        package = mod if files[mod].endswith("__init__.py") else mod.rpartition(".")[0]
        out = []
        for m in _IMPORT.finditer(self.text[mod]):
            base, names = (m[1], m[2]) if m[1] else (m[3], b"")
            if base.startswith(b"."):  # relative: from the file's package upward
                level = len(base) - len(base.lstrip(b"."))
                parts = package.split(".") if package else []
                head = parts[:len(parts) - level + 1]
                target = ".".join(head + [x.decode() for x in base.lstrip(b".").split(b".") if x])
            elif base == name or base.startswith(name + b"."):
                target = base[len(name) + 1:].decode()
            else:
                continue
            out.append(target)
            for n in re.findall(rb"\w+", names if b"(" in names else names.split(b" as ")[0]):
                out.append(f"{target}.{n.decode()}" if target else n.decode())  # a submodule
        self._imports[mod] = [t for t in out if t in files]
        return self._imports[mod]

    def closure(self, start: list[str]) -> tuple[str, ...]:
        """``start`` and every package module they import, transitively, in path order."""
        keep, stack = set(start), list(start)
        while stack:
            for found in self.imported(stack.pop()):
                if found not in keep:
                    keep.add(found)
                    stack.append(found)
        return tuple(sorted(keep, key=lambda m: self.files[m]))

    def module_of(self, py_file: str) -> str | None:
        path = os.path.realpath(py_file)
        for mod, p in self.files.items():
            if p == path:
                return mod
        return None

    def sources(self, mods: tuple[str, ...]) -> dict[str, bytes]:
        return {os.path.relpath(self.files[m], self.root).replace(os.sep, "/"): self.text[m]
                for m in mods}

    def digest(self, mods: tuple[str, ...]) -> str:
        """SHA-256 of the modules' relative paths and bytes and of the Python, numba and NumPy
        versions."""
        import numba

        h = hashlib.sha256()
        h.update(f"{sys.version} {platform.machine()} {numba.__version__} {numpy.__version__}".encode())
        for path, source in self.sources(mods).items():
            h.update(b"\0" + path.encode() + b"\0")
            h.update(source)
        return h.hexdigest()


def _closure(package_dir: str | os.PathLike[str], exclude: tuple[str, ...],
             start: str | os.PathLike[str] | None) -> tuple[_Graph, tuple[str, ...]]:
    graph = _Graph(package_dir, exclude)
    if start is None:
        roots = [m for m, source in graph.text.items() if b"numba" in source and _NUMBA.search(source)]
    else:
        mod = graph.module_of(str(start))
        if mod is None:
            raise ValueError(f"{start} is not a module of {package_dir}")
        roots = [mod]
    return graph, graph.closure(roots)


def kernel_sources(package_dir: str | os.PathLike[str], exclude: tuple[str, ...] = (),
                   start: str | os.PathLike[str] | None = None) -> dict[str, bytes]:
    """The ``.py`` files under ``package_dir`` (not under its subdirectories ``exclude``) a
    compiled kernel can depend on, by relative path.  With ``start`` (a file of the package):
    that file and, transitively, every module of the package it imports (anywhere in the file,
    so lazy imports count too): a kernel freezes the code of its callees and the values of the
    globals it reads, and a cached kernel's callees and globals are names of its own module
    (numba refuses to cache a kernel that is handed a function value: "dynamic globals").
    Without ``start``: the union over every module that imports numba.  Modules no kernel
    module reaches (plotting, ROS adapters, ...) are left out, so editing them recompiles
    nothing."""
    graph, mods = _closure(package_dir, exclude, start)
    return graph.sources(mods)


def source_digest(package_dir: str | os.PathLike[str], exclude: tuple[str, ...] = (),
                  start: str | os.PathLike[str] | None = None) -> str:
    """:meth:`_Graph.digest` of :func:`kernel_sources`: with ``start``, the stamp of every
    cached kernel defined in that file."""
    graph, mods = _closure(package_dir, exclude, start)
    return graph.digest(mods)


def _package_of(py_file: str) -> str | None:
    """The registered package directory ``py_file`` belongs to, or None."""
    path = os.path.realpath(py_file)
    for root, exclude in _REGISTERED.items():
        if path.startswith(root + os.sep) and not any(
                path.startswith(os.path.join(root, e) + os.sep) for e in exclude):
            return root
    return None


def _digest(root: str, py_file: str) -> str:
    """The stamp of the kernels defined in ``py_file``: :func:`source_digest` from that file,
    over one snapshot of the package per process (all kernels of one run see the same sources)."""
    key = (root, os.path.realpath(py_file))
    if key not in _DIGESTS:
        graph = _GRAPHS.get(root)
        if graph is None:
            graph = _GRAPHS[root] = _Graph(root, _REGISTERED[root])
        mod = graph.module_of(py_file)
        # a file outside the snapshot (created after it): stamped with the whole package
        mods = graph.closure([mod]) if mod is not None else tuple(graph.files)
        _DIGESTS[key] = graph.digest(mods)
    return _DIGESTS[key]


def _locators() -> list[type]:
    """numba's three file-backed locators, each with the package-wide source stamp."""
    from numba.core import caching

    class _PackageStamp:
        _package: str
        _py_file: str

        def get_source_stamp(self) -> Any:
            return ("rbd_ros.jit_cache", _digest(self._package, self._py_file))

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            package = _package_of(py_file)
            if package is None:
                return None  # not ours: numba's own locators take it
            self = super().from_function(py_func, py_file)  # type: ignore[misc]
            if self is not None:
                self._package, self._py_file = package, py_file
            return self

    bases = [getattr(caching, name, None) or getattr(caching, "_" + name)  # numba < 0.59: _Name
             for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")]
    return [type(f"PackageStamped{base.__name__.lstrip('_')}", (_PackageStamp, base), {})
            for base in bases]


def _install(caching: ModuleType) -> None:
    """Put the package-stamped locators first in numba's list (once); a numba without that
    list or those locators gets one warning, and its own per-file stamps."""
    try:
        impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
        classes = impl._locator_classes
        if not any(getattr(c, "__name__", "").startswith("PackageStamped") for c in classes):
            classes[:0] = _locators()
    except AttributeError as exc:
        warnings.warn(f"rbd_ros.algorithm.jit_cache: this numba's cache has no locator list ({exc}); its "
                      "caches are stamped per file: after editing a kernel module delete the "
                      "*.nbi/*.nbc files", stacklevel=2)


def _type_constants_plainly(dispatcher: ModuleType) -> None:
    """A kernel of a registered package called from another kernel with a constant argument
    (``aba_ground(..., True, a)``, ``rnea_full(..., 0)``) is typed with the constant's plain
    type (``bool``, ``int64``), not its literal type (``Literal[bool](True)``): numba's
    ``_DispatcherBase.get_call_template`` compiles one specialization per literal value
    otherwise, each a full compilation of the callee, cached beside the plain one (before issue
    39's change: 21 kernels with 2-4 signatures each, the planar base's ABA three times at ~17 s
    each).  The call casts the constant to the plain type (numba's literal-to-plain casts), so
    the callee computes the same; numba's own functions and other packages' kernels keep their
    literal dispatch.  Once per process."""
    from numba.core import types

    base = dispatcher._DispatcherBase
    if getattr(base.get_call_template, "plain_constants", False):
        return
    literal_dispatch = base.get_call_template

    def get_call_template(self: Any, args: Any, kws: Any) -> Any:
        code = getattr(getattr(self, "py_func", None), "__code__", None)
        if code is not None and _package_of(code.co_filename) is not None:
            args = tuple(types.unliteral(a) for a in args)
            kws = {k: types.unliteral(v) for k, v in kws.items()}
        return literal_dispatch(self, args, kws)

    get_call_template.plain_constants = True  # type: ignore[attr-defined]
    base.get_call_template = get_call_template


#: what :func:`register` installs into numba, by the numba module it needs, right after that
#: module executes (or at once if numba is already imported)
_HOOKS: dict[str, Any] = {"numba.core.caching": _install,
                          "numba.core.dispatcher": _type_constants_plainly}


def register(package_dir: str | os.PathLike[str], exclude: tuple[str, ...] = ()) -> None:
    """Stamp the numba caches of the kernels defined under ``package_dir`` (but not under its
    subdirectories ``exclude``) with :func:`source_digest` of that directory, and type their
    constant arguments plainly (:func:`_type_constants_plainly`).  Call before the package's
    first kernel is decorated."""
    _REGISTERED[os.path.realpath(package_dir)] = tuple(exclude)
    for name, hook in _HOOKS.items():  # (a hook waiting already reads _REGISTERED when it runs)
        module = sys.modules.get(name)
        if module is not None:
            hook(module)
        else:
            import_hooks.after(name, hook)


def compile_lock(folder: str, py_func: Any, args: tuple) -> str:
    """The lock file in ``folder`` of the kernel ``py_func`` compiled for the argument types
    ``args`` (:func:`one_compiler`)."""
    key = f"{py_func.__module__}.{py_func.__qualname__}{args}"
    return os.path.join(folder, hashlib.sha1(key.encode()).hexdigest()[:20])


@contextmanager
def one_compiler(folder: str, wait: float = 300.0) -> Iterator[SimpleNamespace]:
    """While inside, this process compiles each kernel signature under an exclusive lock file
    of ``folder`` named for the kernel and its argument types: processes sharing ``folder``
    never compile one signature at once, and the one that waited loads it from the cache
    (numba's ``Dispatcher.compile`` looks there first) instead of compiling it again.  A callee
    locks inside its caller's lock; kernels do not call each other in a circle, so no two
    processes wait for each other (after ``wait`` seconds a process compiles anyway: time
    lost, never a wrong result).  Yields ``waited``: the seconds this process has spent
    waiting so far."""

    from numba.core import sigutils
    from numba.core.dispatcher import Dispatcher

    compile_ = Dispatcher.compile
    held: set[str] = set()  # this process's locks (a nested compile of the same one: no lock)
    stats = SimpleNamespace(waited=0.0)

    def compile(self: Any, sig: Any) -> Any:
        args = tuple(sigutils.normalize_signature(sig)[0])
        path = compile_lock(folder, self.py_func, args)
        if args in self.overloads or path in held:
            return compile_(self, sig)
        with open(path, "a") as lock:
            start = time.monotonic()
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > start + wait:
                        break
                    time.sleep(0.1)
            stats.waited += time.monotonic() - start
            held.add(path)
            try:
                return compile_(self, sig)
            finally:
                held.discard(path)  # the lock is released with the file

    Dispatcher.compile = compile  # type: ignore[method-assign]  # the patch is the point (undone below)
    try:
        yield stats
    finally:
        Dispatcher.compile = compile_  # type: ignore[method-assign]  # numba's own method back


def load_cached(prefix: str = "rbd_ros") -> int:
    """Load into their dispatchers every overload the on-disk cache already holds of the
    kernels of the imported modules named ``prefix`` or ``prefix.*``, compiling nothing;
    returns how many were loaded.

    What ``Dispatcher.compile`` does on a cache hit (``numba.core.dispatcher``: the cache's
    ``load_overload``, ``insert_user_function``, ``add_overload``), done only for the index
    entries that match this function's bytecode and this machine's codegen, so a cold or
    stale cache loads nothing and a later first call compiles as before.  The fork server
    calls it before it forks (issue 39): a node's first cache load also pays numba's one-time
    set-up of its CPU target (~0.45 s of CPU, measured on the 2-core machine), which its forks
    then share.  Kernels with ``parallel=True`` are left out: loading one can start numba's
    thread pool, which a fork does not copy.  Best effort: an entry that fails to load is
    skipped (numba's private cache API, pinned by ``requirements.txt``)."""
    from numba.core import sigutils
    from numba.core.caching import FunctionCache
    from numba.core.dispatcher import Dispatcher

    loaded = 0
    for name, module in list(sys.modules.items()):
        if module is None or not (name == prefix or name.startswith(prefix + ".")):
            continue
        for disp in list(vars(module).values()):
            if not isinstance(disp, Dispatcher) or disp.py_func.__module__ != name:
                continue
            cache: Any = getattr(disp, "_cache", None)
            if not isinstance(cache, FunctionCache) or disp.targetoptions.get("parallel"):
                continue
            try:
                target: Any = disp.targetctx
                codegen = target.codegen()
                for key in cache._cache_file._load_index():
                    sig = key[0]  # as the first call's compile was given it
                    if (cache._index_key(sig, codegen) != key
                            or tuple(sigutils.normalize_signature(sig)[0]) in disp.overloads):
                        continue
                    cres = cache.load_overload(sig, disp.targetctx)
                    if cres is None or cres.objectmode:
                        continue
                    disp.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
                    disp.add_overload(cres)
                    loaded += 1
            except Exception:  # noqa: BLE001 - an optimisation: the first call loads or compiles
                continue
    return loaded
