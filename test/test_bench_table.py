"""README's performance table is the one ``bench/make_table.py`` generates from the latest
recorded benchmark run (``bench/results/run-*.json``): no figure from another run or by hand."""
from __future__ import annotations

import importlib.util
import json

from robots_data import REPO


def _make_table():
    spec = importlib.util.spec_from_file_location("make_table", REPO / "bench" / "make_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_table_is_generated_from_the_latest_run():
    mt = _make_table()
    path = mt.latest()
    run = json.loads(path.read_text())
    assert {"date", "machine", "results"} <= set(run)
    assert set(run["results"]) == set(mt.PARTS)
    assert run["machine"]["cpus"] and run["machine"]["commit"]
    text = mt.table(run, str(path.relative_to(REPO)))
    readme = (REPO / "README.md").read_text()
    assert mt.BEGIN + "\n" + text + "\n" + mt.END in readme, "run bench/make_table.py"
    assert "nan" not in text.lower()
