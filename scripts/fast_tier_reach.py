"""Whether the fast tier (``make test-fast``: ``pytest -m "not slow"``) reaches every module of
``rbd_ros`` (issue 39 item 3), measured, not guessed from imports.

    .venv/bin/python scripts/fast_tier_reach.py [--workers 3] [-- extra pytest arguments]

Runs the tier under coverage.py with ``patch = subprocess`` (the node processes the tests start
are measured too) and, in every process, a ``sitecustomize`` that writes at exit which
``rbd_ros`` modules were imported and which of their numba dispatchers hold a compiled
signature: a kernel loaded from numba's cache runs no Python line, so line coverage alone
misses it.  A module counts as reached when

* a line of one of its function bodies ran (coverage.py's per-function data), or
* one of its dispatchers was compiled or loaded for a call, or
* it is a jitted helper imported by such a kernel module (inlined into its callers), or
* its functions have no statements (type stubs) and it was imported.

Prints the count, the line coverage of the tier, and each module not reached; exit status 1
when one is not.  Takes about 2.5 minutes on 2 cores (the tier alone about 2).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_SITECUSTOMIZE = '''\
import atexit, os, sys
def _dump():
    try:
        kernels = set()
        for name, mod in list(sys.modules.items()):
            if not name.startswith("rbd_ros") or mod is None:
                continue
            for v in list(vars(mod).values()):
                if (getattr(v, "signatures", None) and getattr(v, "__module__", None) == name
                        and type(v).__name__.endswith("Dispatcher")):
                    kernels.add(name)
                    break
        loaded = sorted(n for n in sys.modules if n.startswith("rbd_ros"))
        with open(os.path.join(os.environ["RBD_REACH_DIR"], f"{os.getpid()}.txt"), "w") as f:
            f.write("K " + " ".join(sorted(kernels)) + "\\n")
            f.write("L " + " ".join(loaded) + "\\n")
    except Exception:
        pass
atexit.register(_dump)
'''


def reached(cov: dict, reach_dir: Path) -> tuple[list[tuple[str, str]], int, int]:
    """``(not reached: [(module, why not)], covered lines, statements)``."""
    kernels: set[str] = set()
    loaded: set[str] = set()
    for f in glob.glob(str(reach_dir / "*.txt")):
        for line in Path(f).read_text().splitlines():
            tag, *names = line.split()
            (kernels if tag == "K" else loaded).update(names)
    modules = {}
    for p in sorted((REPO / "rbd_ros").rglob("*.py")):
        name = ".".join(p.relative_to(REPO).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = p
    files = cov["files"]
    missed = []
    for name, path in modules.items():
        d = files.get(str(path))
        fns = {k: v for k, v in (d or {}).get("functions", {}).items() if k}
        if any(v["summary"]["covered_lines"] > 0 for v in fns.values()) or name in kernels:
            continue
        source = path.read_text()
        if "njit" in source and any(f"from {name} import" in modules[k].read_text()
                                    for k in kernels if k != name):
            continue  # a jitted helper of a kernel that ran
        imported = d is not None or name in loaded
        if imported and all(v["summary"]["num_statements"] == 0 for v in fns.values()):
            continue  # no function with a statement: importing it is all there is
        missed.append((name, "imported, no function run" if imported else "not imported"))
    total = cov["totals"]
    return missed, total["covered_lines"], total["num_statements"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="rbd_reach_") as tmp:
        tmp_path = Path(tmp)
        (tmp_path / "site").mkdir()
        (tmp_path / "reach").mkdir()
        (tmp_path / "site" / "sitecustomize.py").write_text(_SITECUSTOMIZE)
        rc = tmp_path / "coveragerc"
        rc.write_text(f"[run]\nsource = {REPO / 'rbd_ros'}\nparallel = true\npatch = subprocess\n"
                      f"data_file = {tmp_path / '.coverage'}\n")
        env = dict(os.environ, RBD_REACH_DIR=str(tmp_path / "reach"), TEST_WORKERS=str(args.workers),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path / "site"), os.environ.get("PYTHONPATH")])))
        cov = [sys.executable, "-m", "coverage"]
        run = subprocess.run([*cov, "run", f"--rcfile={rc}", "-m", "pytest", "-n", str(args.workers),
                              "--dist", "loadgroup", "--idle-lane", "-m", "not slow", "-q",
                              "-p", "no:cacheprovider", *args.pytest_args], cwd=REPO, env=env)
        if run.returncode != 0:
            print(f"fast_tier_reach: the tier failed (exit {run.returncode}): no reach measured", file=sys.stderr)
            return 2
        subprocess.run([*cov, "combine", f"--rcfile={rc}", "-q"], cwd=tmp, env=env, check=True)
        subprocess.run([*cov, "json", f"--rcfile={rc}", "-q", "-o", str(tmp_path / "cov.json")], cwd=tmp,
                       env=env, check=True)
        missed, covered, statements = reached(json.loads((tmp_path / "cov.json").read_text()), tmp_path / "reach")
    count = sum(1 for _ in (REPO / "rbd_ros").rglob("*.py"))
    print(f"fast tier: {count - len(missed)} of {count} rbd_ros modules reached; "
          f"line coverage {covered} / {statements} = {100 * covered / max(statements, 1):.1f} %")
    for name, why in missed:
        print(f"  not reached: {name} ({why})")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
