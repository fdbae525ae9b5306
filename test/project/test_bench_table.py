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


def test_the_measured_commit_is_recorded_and_in_the_history():
    """The latest run names the commit it measured (and whether the tree was clean), the table
    says so under it, and that commit is one of HEAD's ancestors; how far behind HEAD it is
    shows as a warning in the test summary (a stale table is visible)."""
    import subprocess
    import warnings

    mt = _make_table()
    path = mt.latest()
    run = json.loads(path.read_text())
    commit = run["machine"]["commit"]
    assert len(commit) == 40 and isinstance(run["machine"]["uncommitted_changes"], bool)
    text = mt.table(run, str(path.relative_to(REPO)))
    assert text.splitlines()[-1] == mt.provenance(run) and commit[:12] in text.splitlines()[-1]
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=REPO,
                             capture_output=True, text=True).stdout.strip() == "true"
    if shallow:  # a shallow clone lacks the history to place the commit in
        return
    ancestor = subprocess.run(["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=REPO)
    assert ancestor.returncode == 0, f"{path.name} measured {commit}, not an ancestor of HEAD"
    behind = mt.commits_since(commit)
    assert behind is not None and behind >= 0
    if behind:
        warnings.warn(f"README's performance table measured a commit {behind} commits behind "
                      "HEAD: run `make bench`", stacklevel=1)


def test_record_refuses_a_run_whose_head_moved(tmp_path, monkeypatch):
    """``--start`` notes the commit; ``--record`` takes it, and refuses when HEAD changed
    meanwhile (the results would mix two versions of the code)."""
    import pytest

    mt = _make_table()
    monkeypatch.setattr(mt, "RESULTS", tmp_path)
    monkeypatch.setattr(mt, "code", lambda: {"commit": "a" * 40, "uncommitted_changes": True})
    mt.start()
    for part in mt.PARTS:
        (tmp_path / f"{part}.json").write_text("{}")
    monkeypatch.setattr(mt, "code", lambda: {"commit": "a" * 40, "uncommitted_changes": False})
    run = json.loads(mt.record().read_text())
    assert run["machine"]["commit"] == "a" * 40
    assert run["machine"]["uncommitted_changes"] is True  # changes at the start count
    monkeypatch.setattr(mt, "code", lambda: {"commit": "b" * 40, "uncommitted_changes": False})
    with pytest.raises(SystemExit, match="HEAD moved during the run"):
        mt.record()
