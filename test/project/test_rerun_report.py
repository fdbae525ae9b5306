"""A test that failed once and passed on its rerun still names its first failure at the end of
the run (``test/support/rerun_report.py``, loaded by ``test/conftest.py``): CI's output for a
rerun was only ``RERUN nodeid``, and a one-off could not be found from it.  Run through
pytest-xdist, as ``make test`` runs, so the error crosses from the worker to the controller."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from rerun_report import RERUN_LINES, rerun_summary

SUPPORT = Path(__file__).resolve().parents[1] / "support"


@pytest.mark.slow
def test_a_passing_rerun_prints_why_its_first_run_failed(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not the repository's setup.cfg
    (tmp_path / "test_once.py").write_text(textwrap.dedent("""\
        from pathlib import Path

        def test_fails_once(tmp_path_factory):
            mark = Path(__file__).with_name("ran")
            first = not mark.exists()
            mark.touch()
            assert not first, "the first run's own reason: 17 != 42"

        def test_fails_twice():
            assert False, "a failure both times"
        """))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "rerun_report", "-p", "no:cacheprovider", "-p", "no:randomly",
         "-n", "1", "--reruns", "1", "-q", "--rootdir", str(tmp_path), "-c", str(tmp_path / "pytest.ini"),
         str(tmp_path / "test_once.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(SUPPORT)})
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr  # test_fails_twice fails
    section = out[out.index("why the reruns ran"):]
    assert "RERUN test_once.py::test_fails_once: its first failure" in section
    assert "the first run's own reason: 17 != 42" in section
    # the twice-failing test was rerun too: its first failure is named as well
    assert "RERUN test_once.py::test_fails_twice: its first failure" in section


def test_the_summary_keeps_the_end_of_a_long_error() -> None:
    text = "\n".join(f"line {k}" for k in range(100))
    lines = rerun_summary([("t.py::x", text)])
    assert lines[0] == f"RERUN t.py::x: its first failure (last {RERUN_LINES} lines):"
    assert lines[1:] == [f"    line {k}" for k in range(100 - RERUN_LINES, 100)]
