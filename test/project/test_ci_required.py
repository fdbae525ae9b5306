"""Under ``CI=true`` a test that skips for a missing test peer (Pinocchio, MuJoCo,
example-robot-data, the Robotics Toolbox, Xvfb, Chromium, offscreen OpenGL) fails naming the
package (conftest.py); elsewhere it skips.  Oracle: pytest's own outcome counts of a
throw-away test file run with this suite's conftest as a plugin."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ci_failure

HERE = Path(__file__).resolve().parents[1]  # test/, where conftest.py is

FAKE = '''\
import pytest

def test_pinocchio_missing():
    pytest.importorskip("pinocchio_missing_for_this_test")

def test_xvfb_missing():
    pytest.skip("Xvfb is not installed here (Debian package xvfb)")

def test_chromium_missing():
    pytest.skip("Debian's chromium is not installed here")

def test_unrelated_skip():
    pytest.skip("needs Linux /proc")
'''
FAKE_MODULE = 'import pytest\npytest.importorskip("example_robot_data_missing_for_this_test")\n'


def _run(tmp_path: Path, ci: str | None) -> tuple[dict[str, int], str]:
    """One pytest run over both throw-away files (``--continue-on-collection-errors``: the
    module-level skip's collection error would otherwise stop the run before the tests)."""
    (tmp_path / "test_fake.py").write_text(FAKE)
    (tmp_path / "test_fake_module.py").write_text(FAKE_MODULE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-q", "-rA",
                          "-p", "no:cacheprovider", "--continue-on-collection-errors",
                          "--rootdir", str(tmp_path), str(tmp_path)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    summary = out.stdout.strip().splitlines()[-1]
    counts = {}
    for part in summary.strip("= ").split(" in ")[0].split(", "):
        n, kind = part.split(" ", 1)
        counts[kind.rstrip("s") if kind != "passed" else kind] = int(n)
    return counts, out.stdout


@pytest.fixture(scope="module")
def under_ci(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, int], str]:
    return _run(tmp_path_factory.mktemp("ci"), "true")


def _outcome_lines(text: str, kind: str) -> set[str]:
    """The ``-rA`` summary's ``KIND nodeid`` lines, as node ids."""
    return {line.split(" ")[1] for line in text.splitlines() if line.startswith(kind + " ")}


def test_skips_for_missing_peers_fail_under_ci(under_ci: tuple[dict[str, int], str]) -> None:
    counts, text = under_ci
    assert counts == {"failed": 3, "skipped": 1, "error": 1}, text[-3000:]
    missing = ("pinocchio", "xvfb", "chromium")
    assert _outcome_lines(text, "FAILED") == {f"test_fake.py::test_{k}_missing" for k in missing}
    assert "CI=true: pin (pip" in text and "xvfb (Debian" in text and "chromium (Debian" in text


def test_module_level_importorskip_is_a_collection_error_under_ci(under_ci: tuple[dict[str, int], str]) -> None:
    """(without ``--continue-on-collection-errors`` pytest then stops: CI's one line names the
    package.)"""
    counts, text = under_ci
    assert _outcome_lines(text, "ERROR") == {"test_fake_module.py"}, text[-3000:]
    assert "CI=true: example-robot-data (pip" in text


def test_skips_stand_outside_ci(tmp_path: Path) -> None:
    counts, text = _run(tmp_path, None)
    assert counts == {"skipped": 5}, text[-3000:]


def test_ci_failure_names_the_package() -> None:
    ci = {"CI": "true"}
    assert "pin (pip" in ci_failure("could not import 'pinocchio': No module named", ci)
    assert "example-robot-data" in ci_failure("example-robot-data (TIAGo's URDF) is not "
                                              "installed", ci)
    assert "libosmesa6" in ci_failure("offscreen OpenGL (libosmesa6): no backend", ci)
    assert ci_failure("needs Linux /proc", ci) is None
    assert ci_failure("could not import 'pinocchio'", {"CI": "false"}) is None
