"""``rbd_ros.util.yaml_io.safe_load`` (libyaml when present) reads every YAML file the package
ships, and the texts its parameters take, as PyYAML's pure-Python ``safe_load`` does (the
oracle), and refuses what that refuses."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rbd_ros.util import yaml_io

REPO = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p for d in ("config", "rbd_ros", "docs") for p in (REPO / d).rglob("*.y*ml"))


def test_libyaml_is_what_it_runs_on_here():
    assert yaml.__with_libyaml__ and yaml_io.SafeLoader is yaml.CSafeLoader


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_shipped_files_read_as_pure_python_yaml_reads_them(path):
    text = path.read_text(encoding="utf-8")
    assert yaml_io.safe_load(text) == yaml.load(text, Loader=yaml.SafeLoader)


@pytest.mark.parametrize("text", ["1e-3", "1.0e-3", "0x1F", "yes", "off", "~", "2026-12-07", ".inf", "-.nan",
                                  "[1, 2.5, 'a']", "{a: {b: [true, null]}}", "'007'", "1_000"])
def test_scalars_resolve_as_pure_python_yaml_resolves_them(text):
    ours, oracle = yaml_io.safe_load(text), yaml.load(text, Loader=yaml.SafeLoader)
    assert repr(ours) == repr(oracle)  # (NaN: equal by its text)


@pytest.mark.parametrize("text", ["a: [1, 2", "a: b: c", "!!python/object:os.system ls", "a:\n\t- 1"])
def test_what_pure_python_yaml_refuses_is_refused_with_its_line(text):
    with pytest.raises(yaml.YAMLError):
        yaml.load(text, Loader=yaml.SafeLoader)
    with pytest.raises(yaml.YAMLError) as err:
        yaml_io.safe_load(text)
    mark = getattr(err.value, "problem_mark", None) or getattr(err.value, "context_mark", None)
    assert mark is not None and mark.line >= 0
