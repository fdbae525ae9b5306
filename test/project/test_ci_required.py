"""Under ``CI=true`` a test that skips for a missing test peer (Pinocchio, MuJoCo,
example-robot-data, the Robotics Toolbox, Xvfb, Chromium, offscreen OpenGL) fails naming the
package (conftest.py); elsewhere it skips.  Oracle: pytest's own outcome counts of a
throw-away test file run with this suite's conftest as a plugin."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def _outcomes(tmp_path: Path, ci: str | None, source: str = FAKE) -> tuple[dict[str, int], str]:
    (tmp_path / "test_fake.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-q", "-rA",
                          "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    summary = out.stdout.strip().splitlines()[-1]
    counts = {}
    for part in summary.strip("= ").split(" in ")[0].split(", "):
        n, kind = part.split(" ", 1)
        counts[kind.rstrip("s") if kind != "passed" else kind] = int(n)
    return counts, out.stdout


def test_skips_for_missing_peers_fail_under_ci(tmp_path: Path) -> None:
    counts, text = _outcomes(tmp_path, "true")
    assert counts == {"failed": 3, "skipped": 1}, text[-3000:]
    assert "CI=true: pin (pip" in text and "xvfb (Debian" in text and "chromium (Debian" in text


def test_module_level_importorskip_is_a_collection_error_under_ci(tmp_path: Path) -> None:
    """(pytest then stops: CI's one line names the package.)"""
    counts, text = _outcomes(tmp_path, "true", FAKE_MODULE)
    assert counts == {"error": 1}, text[-3000:]
    assert "CI=true: example-robot-data (pip" in text


def test_skips_stand_outside_ci(tmp_path: Path) -> None:
    assert _outcomes(tmp_path, None)[0] == {"skipped": 4}
    assert _outcomes(tmp_path, None, FAKE_MODULE)[0] == {"skipped": 1}


def test_ci_failure_names_the_package() -> None:
    ci = {"CI": "true"}
    assert "pin (pip" in ci_failure("could not import 'pinocchio': No module named", ci)
    assert "example-robot-data" in ci_failure("example-robot-data (TIAGo's URDF) is not "
                                              "installed", ci)
    assert "libosmesa6" in ci_failure("offscreen OpenGL (libosmesa6): no backend", ci)
    assert ci_failure("needs Linux /proc", ci) is None
    assert ci_failure("could not import 'pinocchio'", {"CI": "false"}) is None
