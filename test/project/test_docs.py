"""The documentation site builds with no warning (issue 33): ``make docs``'s Sphinx build
(MyST pages, furo, autodoc over the ROS-free core) with ``-W`` in a temporary directory, and
the API reference names every module of the core (a new module without a page fails here).

The build differs from ``make docs`` in one setting, ``toc_object_entries=0``: the API pages'
"On this page" panel then lists the modules, not every function and attribute as well.  Those
entries cost 60% of an html build (furo copies the whole site's toctree, ~5,000 nodes with them,
for each of the 154 pages, viewcode's source pages included: ~60 s -> ~37 s of CPU here, ~25 s
with ``docs/_ext/memo_python_lookup.py``) and no warning comes from them.  It stays an html
build: the ``dummy`` builder (~20 s) would also read, autodoc, resolve every reference and
check the toctrees, but it highlights no code block, so an unknown fence language (``Pygments
lexer name ... is not known``) would pass, and it writes no viewcode page."""
from __future__ import annotations

import html
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def core_modules() -> list[str]:
    """Every module of ``rbd_ros`` outside ``rbd_ros.ros`` (the ROS adapters) and the CLIs."""
    out = []
    for path in sorted((REPO / "rbd_ros").rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        if len(parts) < 2 or parts[1] in ("ros", "cli") or rel.name == "__main__":
            continue
        out.append(".".join(parts))
    return out


def test_api_reference_lists_every_core_module() -> None:
    pages = "".join(p.read_text() for p in (DOCS / "api").glob("*.md"))
    documented = {line.split("::", 1)[1].strip() for line in pages.splitlines()
                  if line.startswith(".. automodule::")}
    mods = core_modules()
    assert len(mods) > 100  # the walk found the package
    missing = sorted(set(mods) - documented)
    assert not missing, f"modules without an API page entry (docs/api/*.md): {missing}"
    assert not documented - set(mods), "docs/api names a module that does not exist"


def test_every_docs_page_is_in_the_toctree_and_links_resolve() -> None:
    """What Sphinx would only warn about, checked without a build: every page under docs/ is
    reachable, and every relative Markdown link of a guide names an existing file."""
    index = (DOCS / "index.md").read_text() + (DOCS / "api.md").read_text()
    for page in DOCS.rglob("*.md"):
        rel = page.relative_to(DOCS).with_suffix("").as_posix()
        if rel != "index":
            assert rel in index, f"docs/{rel}.md is in no toctree (docs/index.md)"


@pytest.mark.slow
def test_sphinx_build_has_no_warning(tmp_path: Path) -> None:
    pytest.importorskip("sphinx", reason="pip install -r requirements-test.txt")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-D", "toc_object_entries=0",  # see the module docstring
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"make docs failed (warnings are errors):\n{proc.stderr[-4000:]}"
    page = (tmp_path / "html" / "api" / "robot.html").read_text()
    # autodoc documented the members, with the signature and docstring Python reports
    from rbd_ros.robot.arm import Robot
    for name in ("inverse_dynamics", "link_names"):
        assert f'id="rbd_ros.robot.arm.Robot.{name}"' in page, f"no API entry for Robot.{name}"
    entry, body = page.split('id="rbd_ros.robot.arm.Robot.inverse_dynamics"', 1)[1].split("</dt>", 1)
    for param in inspect.signature(Robot.inverse_dynamics).parameters:
        if param != "self":
            assert f'<span class="pre">{param}</span>' in entry, f"signature lacks {param}"
    summary = " ".join(inspect.getdoc(Robot.inverse_dynamics).split("\n\n")[0].replace("``", "").split())
    assert summary in " ".join(html.unescape(re.sub(r"<[^>]+>", "", body[:3000])).split())
    # viewcode's source page, linked from the entry
    assert "_modules/rbd_ros/robot/arm.html#Robot.inverse_dynamics" in entry
    assert (tmp_path / "html" / "_modules" / "rbd_ros" / "robot" / "arm.html").exists()
    assert (tmp_path / "html" / "guides" / "bringup.html").exists()
