"""The type check (issue 40 item 6): ``make test`` and ``make test-fast`` run mypy (over
``rbd_ros/``, ``mypy.ini``) before pytest, and no module's errors are ignored (the ratchet
of modules still to fix, emptied this release, stays empty).  Oracles: make's own
reading of the Makefile (``make -n``: the commands it would run) and the files on disk."""
from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("target", ["test", "test-fast"])
def test_make_target_runs_the_type_checker_before_pytest(target: str) -> None:
    if shutil.which("make") is None:
        pytest.skip("make is not installed here")
    out = subprocess.run(["make", "-n", "-s", target], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    mypy = [k for k, line in enumerate(out) if line.split()[1:3] == ["-m", "mypy"]]
    tests = [k for k, line in enumerate(out) if line.split()[1:3] == ["-m", "pytest"]]
    assert mypy and tests and mypy[0] < tests[0], out


def test_every_module_of_the_package_is_checked() -> None:
    """mypy checks all of rbd_ros/ and no module's errors are ignored (issue 40 item 6: the
    ratchet of modules still to fix is empty; a module of the package may not be switched off)."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "mypy.ini")
    assert cfg.get("mypy", "files") == "rbd_ros"
    off = [s for s in cfg.sections()
           if s.startswith("mypy-rbd_ros.") and cfg.getboolean(s, "ignore_errors", fallback=False)]
    assert not off, f"mypy.ini ignores the errors of {off}: fix them instead"
    assert not cfg.getboolean("mypy", "ignore_errors", fallback=False)
