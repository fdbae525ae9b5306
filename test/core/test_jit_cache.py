"""numba's disk cache keyed on a package's sources (rbd_ros/jit_cache.py).

Oracle: a two-module jitted package copied to a temporary directory and run in fresh
processes; the caller's result after the callee's source changed must be the new one (numba
alone returns the old one: the control test shows the setup reproduces that), and an unchanged
package must load every kernel from the cache instead of compiling it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import rbd_ros
from rbd_ros.algorithm import jit_cache

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(rbd_ros.__file__).resolve().parent

INIT = """\
import os
if os.environ.get("STAMP") == "1":
    from rbd_ros.algorithm import jit_cache
    jit_cache.register(os.path.dirname(os.path.abspath(__file__)))
"""
CALLEE = """\
from numba import njit


@njit(cache=True)
def step():
    return 1
"""
CALLER = """\
from numba import njit

from pkg.callee import step


@njit(cache=True)
def total():
    return step() + 10
"""
RUN = """\
import os
if os.environ.get("READ_ONLY_TREE") == "1":  # as if installed where __pycache__ is not writable
    from numba.core import caching

    def refuse(self):
        raise OSError("read-only")
    caching.InTreeCacheLocator.ensure_cache_path = refuse
import pkg.caller as c
value = c.total()
print(value, sum(c.total.stats.cache_hits.values()), sum(c.total.stats.cache_misses.values()),
      c.total._cache.cache_path)
"""


def _make(tmp: Path) -> Path:
    pkg = tmp / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "callee.py").write_text(CALLEE)
    (pkg / "caller.py").write_text(CALLER)
    (tmp / "run.py").write_text(RUN)
    return pkg


def _run(tmp: Path, **env: str) -> tuple[int, int, int, str]:
    """(total(), cache hits, cache misses, cache directory) from a fresh process."""
    full = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    full.update(PYTHONPATH=f"{tmp}{os.pathsep}{ROOT}", **env)
    out = subprocess.run([sys.executable, str(tmp / "run.py")], env=full, cwd=tmp,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    value, hits, misses, path = out.stdout.split()
    return int(value), int(hits), int(misses), path


def _edit_callee(pkg: Path) -> None:
    (pkg / "callee.py").write_text(CALLEE.replace("return 1", "return 2"))


@pytest.mark.parametrize("where", ["in_tree", "numba_cache_dir", "read_only_tree"])
@pytest.mark.slow
def test_changed_callee_recompiles_caller(tmp_path: Path, where: str) -> None:
    env = {"STAMP": "1", "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    if where == "numba_cache_dir":
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    if where == "read_only_tree":
        env["READ_ONLY_TREE"] = "1"
    pkg = _make(tmp_path)
    assert _run(tmp_path, **env)[:3] == (11, 0, 1)  # compiled
    value, hits, misses, path = _run(tmp_path, **env)
    assert (value, hits, misses) == (11, 1, 0), "an unchanged package must load from the cache"
    expected = {"in_tree": str(pkg / "__pycache__"), "numba_cache_dir": env.get("NUMBA_CACHE_DIR"),
                "read_only_tree": env["XDG_CACHE_HOME"]}[where]
    assert path.startswith(str(expected)), path
    assert any(Path(path).glob("caller.total-*.nbi"))
    _edit_callee(pkg)
    assert _run(tmp_path, **env)[:3] == (12, 0, 1), "the caller must recompile with the new callee"
    assert _run(tmp_path, **env)[:3] == (12, 1, 0)


@pytest.mark.slow
def test_numba_alone_keeps_the_stale_callee(tmp_path: Path) -> None:
    """Control: without the package stamp numba loads the caller's cache with the old callee
    (numba issue 1833).  If this fails, numba now tracks callees and jit_cache may go."""
    pkg = _make(tmp_path)
    assert _run(tmp_path, STAMP="0")[:3] == (11, 0, 1)
    _edit_callee(pkg)
    assert _run(tmp_path, STAMP="0")[:3] == (11, 1, 0)


def test_digest_changes_with_any_kernel_source(tmp_path: Path) -> None:
    """A copy of rbd_ros's sources: editing a kernel module, or a module whose constants kernels
    read (model.py), changes the digest; editing modules no kernel module imports (the video,
    the ROS adapters) does not, so they recompile nothing."""
    copy = tmp_path / "rbd_ros"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    base = jit_cache.source_digest(copy, ("ros",))
    assert base == jit_cache.source_digest(PACKAGE, ("ros",))
    sources = jit_cache.kernel_sources(copy, ("ros",))
    for rel in ("algorithm/rnea.py", "lie/so3.py", "model/mdh_model.py", "algorithm/__init__.py",
                "sim/simulator.py"):
        assert rel in sources, rel
        f = copy / rel
        text = f.read_text()
        f.write_text(text + "\n# edited\n")
        assert jit_cache.source_digest(copy, ("ros",)) != base, rel
        f.write_text(text)
    assert jit_cache.source_digest(copy, ("ros",)) == base
    for rel in ("ros/__init__.py", "sim/render.py", "sim/viewer.py"):
        assert rel not in sources, rel
        (copy / rel).write_text("# edited\n")
        assert jit_cache.source_digest(copy, ("ros",)) == base, rel


def test_kernel_sources_follow_imports(tmp_path: Path) -> None:
    """A module reached only through a plain module (absolute, relative, lazy, ``from package
    import module``) counts; one no kernel module reaches does not."""
    pkg = tmp_path / "pk"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "kern.py": "from numba import njit\nfrom pk.consts import A\nfrom . import helpers\n",
        "consts.py": "from .sub.deep import B\nA = B + 1\n",
        "helpers.py": "def f():\n    from pk.sub import lazy\n",
        "sub/__init__.py": "",
        "sub/deep.py": "B = 1\n",
        "sub/lazy.py": "C = 2\n",
        "plot.py": "import pk.kern\n",  # imports a kernel module, but none imports it
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    assert set(jit_cache.kernel_sources(pkg)) == set(files) - {"plot.py"}


def test_rbd_ros_kernels_carry_their_dependency_stamp() -> None:
    """Every cached kernel of rbd_ros (here RNEA's and a Lie-group one) is stamped with the digest
    of its own file and the rbd_ros modules that file imports, not with its own file's hash nor
    with all of rbd_ros (issue 45: an edit recompiles what it touches)."""
    from numba.core.registry import CPUDispatcher

    import rbd_ros.algorithm.rnea as rnea
    import rbd_ros.lie.so3 as so3

    for m in (rnea, so3):
        want = ("rbd_ros.jit_cache", jit_cache.source_digest(PACKAGE, ("ros",), m.__file__))
        kernels = [v for v in vars(m).values()
                   if isinstance(v, CPUDispatcher) and v._cache.__class__.__name__ == "FunctionCache"
                   and v.py_func.__module__ == m.__name__]
        assert len(kernels) >= 2, m
        for k in kernels:
            assert k._cache._cache_file._source_stamp == want, k.py_func.__qualname__
    rnea_deps = jit_cache.kernel_sources(PACKAGE, ("ros",), rnea.__file__)
    assert "algorithm/rnea.py" in rnea_deps and "control/tour.py" not in rnea_deps
    assert "robot/arm.py" not in rnea_deps, "a kernel module's stamp must not reach up the floors"


OTHER = """\
from numba import njit


@njit(cache=True)
def alone():
    return 100
"""
PLAIN = "def helper():\n    return 'not a kernel'\n"
RUN_BOTH = """\
import pkg.caller as c
import pkg.other as o
c.total(), o.alone()
print(sum(c.total.stats.cache_misses.values()), sum(o.alone.stats.cache_misses.values()))
"""


@pytest.mark.slow
def test_an_edit_recompiles_only_the_kernels_that_depend_on_it(tmp_path: Path) -> None:
    """Issue 45: editing a module no kernel imports recompiles nothing; editing a callee
    recompiles its callers and nothing else (numba's own miss counts are the oracle)."""
    pkg = _make(tmp_path)
    (pkg / "other.py").write_text(OTHER)
    (pkg / "plain.py").write_text(PLAIN)
    (tmp_path / "both.py").write_text(RUN_BOTH)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}", STAMP="1",
               XDG_CACHE_HOME=str(tmp_path / "user-cache"))

    def misses() -> tuple[int, int]:
        out = subprocess.run([sys.executable, str(tmp_path / "both.py")], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        caller, other = out.stdout.split()
        return int(caller), int(other)

    assert misses() == (1, 1)  # both compiled
    assert misses() == (0, 0)
    (pkg / "plain.py").write_text(PLAIN + "# edited\n")
    assert misses() == (0, 0), "an edit of a module no kernel imports must recompile nothing"
    _edit_callee(pkg)
    assert misses() == (1, 0), "the callee's caller recompiles, the unrelated kernel does not"


def test_import_rbd_ros_does_not_import_numba() -> None:
    code = textwrap.dedent("""\
        import sys
        import rbd_ros
        assert "numba" not in sys.modules, "import rbd_ros imported numba"
        import numba
        from numba.core.caching import CacheImpl
        assert CacheImpl._locator_classes[0].__name__.startswith("PackageStamped")
        """)
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


PARALLEL = """\
from numba import njit, prange


@njit(cache=True, parallel=True)
def spread(n):
    s = 0
    for i in prange(n):
        s += i
    return s
"""
LOAD = """\
import sys
import numba
import pkg.caller as c, pkg.parallel as p
from rbd_ros.algorithm import jit_cache
loaded = jit_cache.load_cached("pkg")
ready = [len(c.total.overloads), len(c.step.overloads), len(p.spread.overloads)]
value = c.total() + p.spread(4)
print(loaded, *ready, value, sum(c.total.stats.cache_misses.values()))
"""


@pytest.mark.slow
def test_load_cached_loads_what_is_cached_and_compiles_nothing(tmp_path: Path) -> None:
    """The fork server's kernel preload (issue 39): an empty cache loads nothing (and writes
    no cache file: nothing compiled); a filled one loads the caller and its callee but not the
    ``parallel=True`` kernel, and the loaded caller runs without a compile (numba's miss count,
    and the value of the edited source, are the oracles); after the callee's edit the stale
    caller is not loaded and recompiles to the new value."""
    pkg = _make(tmp_path)
    (pkg / "parallel.py").write_text(PARALLEL)
    (tmp_path / "load.py").write_text(LOAD.replace("c.total() + p.spread(4)", "0")
                                      .replace(", sum(c.total.stats.cache_misses.values())", ""))
    (tmp_path / "run.py").write_text(LOAD)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}", STAMP="1",
               NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run(script: str) -> list[int]:
        out = subprocess.run([sys.executable, str(tmp_path / script)], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        return [int(x) for x in out.stdout.split()]

    assert run("load.py") == [0, 0, 0, 0, 0], "an empty cache must load nothing"
    assert not any((tmp_path / "cache").rglob("*.nb*")), "load_cached compiled something"
    assert run("run.py") == [0, 0, 0, 0, 17, 1]  # compiled: 11 + (0+1+2+3)
    assert run("run.py") == [2, 1, 1, 0, 17, 0], "the cached caller and callee, not the parallel kernel"
    _edit_callee(pkg)
    assert run("run.py") == [0, 0, 0, 0, 18, 1], "a stale caller must not be loaded"
