"""A pytest plugin (``test/conftest.py``'s ``pytest_plugins``): the first failure of each test
that was rerun (``pytest-rerunfailures``; the tests under ``test/ros/`` get one rerun), its
error's last lines printed at the end of the run under "why the reruns ran".  A rerun that
passed still names why the first run failed, so that a one-off can be found and fixed rather
than hidden by the rerun (CI's output shows only ``RERUN nodeid`` otherwise).  With xdist the
controller gets every worker's reports, the error as text."""
from __future__ import annotations

#: lines of each first failure's error printed (its end: the assertion and its message)
RERUN_LINES = 30
_reruns: list[tuple[str, str]] = []


def rerun_summary(reports: list[tuple[str, str]], lines: int = RERUN_LINES) -> list[str]:
    """The summary's lines for ``reports`` (``(nodeid, error text)`` of each rerun): the
    nodeid, then the last ``lines`` lines of the error, indented."""
    out: list[str] = []
    for nodeid, text in reports:
        out.append(f"RERUN {nodeid}: its first failure (last {lines} lines):")
        out.extend("    " + line for line in text.rstrip().splitlines()[-lines:])
    return out


def pytest_runtest_logreport(report) -> None:
    if report.outcome == "rerun":
        _reruns.append((report.nodeid, report.longreprtext or "(no error text)"))


def pytest_terminal_summary(terminalreporter) -> None:
    if _reruns:
        terminalreporter.section("why the reruns ran")
        for line in rerun_summary(_reruns):
            terminalreporter.write_line(line)
