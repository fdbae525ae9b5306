"""The suite's time rule (issue 39): a test not marked ``slow`` that takes over 30 s (its call,
or its setup: the fixtures it starts) is named in a ``SlowUnmarkedWarning`` (test/conftest.py),
and ``make test`` prints the 20 slowest durations."""
from __future__ import annotations

import configparser
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import UNMARKED_LIMIT, slow_unmarked

REPO = Path(__file__).resolve().parents[2]


def _item(slow: bool) -> SimpleNamespace:
    return SimpleNamespace(nodeid="test/x.py::test_y",
                           get_closest_marker=lambda name: object() if slow and name == "slow" else None)


@pytest.mark.parametrize(("when", "duration", "slow", "warned"), [
    ("call", UNMARKED_LIMIT + 0.1, False, True), ("setup", 45.0, False, True),
    ("call", UNMARKED_LIMIT + 0.1, True, False), ("call", UNMARKED_LIMIT - 0.1, False, False),
    ("teardown", 60.0, False, False)])
def test_an_unmarked_test_over_the_limit_is_named(when: str, duration: float, slow: bool, warned: bool) -> None:
    message = slow_unmarked(_item(slow), SimpleNamespace(when=when, duration=duration))
    assert (message is not None) == warned
    if warned:
        assert "test/x.py::test_y" in message and f"{duration:.1f} s" in message and "slow" in message


def test_the_suite_prints_the_20_slowest() -> None:
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    assert "--durations=20" in cfg["tool:pytest"]["addopts"].split()
    makefile = (REPO / "Makefile").read_text()
    assert "test-fast:" in makefile and '-m "not slow"' in makefile
