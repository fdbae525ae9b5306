"""Every source citation in ``rbd_ros/`` resolves in ``docs/references.md``: document keys
(``003 (4.35)``, ``002 §2.4``...) are in its table of documents, misprint citations
(``misprint 003 (5.3)``) are in its list of misprints, and nothing points to the long file
names or to an errata file outside the repository."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCES = REPO / "docs" / "references.md"
LOCATOR = (r"(?:\([\w.-]+\)(?:\s*-\s*\([\w.-]+\))?|§\d+(?:\.\d+)*(?: step \d+)?|chapter \d+|ch\. ?\d+"
           r"|(?:Remark|Table|Theorem|Corollary|footnote) \d+(?:\.\d+)?|App\. [A-Z])")
CITATION = re.compile(r"(?<![\w.])(\d{3})\s+(" + LOCATOR + r")")
MISPRINT = re.compile(r"misprints?\s+(?:of\s+)?(\d{3})(?:\s+(" + LOCATOR + r"))?")


def comments_and_strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and string literal (docstrings included) of a module."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        if tok.type in (tokenize.COMMENT, tokenize.STRING):
            out.append((tok.start[0], " ".join(tok.string.split())))  # one line: wrapped text
    return out


def documents() -> dict[str, str]:
    """key -> table row of the Documents section."""
    text = REFERENCES.read_text(encoding="utf-8")
    section = text.split("## Documents", 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| (\d{3}) \|.*$", section, re.M)}


def misprint_labels() -> list[str]:
    text = REFERENCES.read_text(encoding="utf-8")
    section = text.split("## Misprints", 1)[1]
    return re.findall(r"^- \*\*(.+?)\*\*", section, re.M)


def test_the_five_documents_have_full_entries() -> None:
    docs = documents()
    assert sorted(docs) == ["000", "001", "002", "003", "004"]
    for key, row in docs.items():
        assert re.search(r"\b(19|20)\d\d\b", row), f"{key}: no year"
        assert row.count("*") >= 2, f"{key}: no title"
    for author in ("Parsa", "Silva", "Silver", "Yamamoto", "From"):
        assert author in "".join(docs.values())


def test_every_citation_in_the_package_resolves() -> None:
    keys = set(documents())
    labels = misprint_labels()
    assert len(labels) >= 8
    bad, cited, misprints = [], 0, 0
    for path in sorted((REPO / "rbd_ros").rglob("*.py")):
        where = path.relative_to(REPO)
        for line, text in comments_and_strings(path):
            if re.search(r"\b00\d_[0-9a-f]{16}", text):
                bad.append(f"{where}:{line}: cites a file name; use its key (docs/references.md)")
            if re.search(r"\bsheet\b.{0,3}§|formulations\.md|formulations §", text):
                bad.append(f"{where}:{line}: cites the formulations sheet (not in the repository); "
                           "use docs/references.md")
            if "ERRATA" in text:
                bad.append(f"{where}:{line}: cites ERRATA; use 'misprint KEY (eq.)' (docs/references.md)")
            for m in CITATION.finditer(text):
                cited += 1
                if m.group(1) not in keys:
                    bad.append(f"{where}:{line}: unknown document key {m.group(1)} in {m.group(0)!r}")
            for m in MISPRINT.finditer(text):
                misprints += 1
                key, locator = m.group(1), m.group(2)
                if key not in keys:
                    bad.append(f"{where}:{line}: misprint of unknown key {key}")
                elif locator and not any(f"{key} {' '.join(locator.split())}" in label for label in labels):
                    bad.append(f"{where}:{line}: misprint {key} {locator} is not listed in docs/references.md")
    assert not bad, "\n".join(bad)
    assert cited > 50 and misprints >= 10  # the scan sees the citations at all


def test_the_scan_would_catch_bad_citations(tmp_path) -> None:
    """The patterns themselves: an unknown key, a long file name, an unlisted misprint."""
    sample = tmp_path / "m.py"
    sample.write_text('"""From 007 (4.35), 003' + '_871da85b02213601.txt §1.6; misprint 003 (9.99)."""\n'
                      "# see ERRATA.md\n")
    texts = " ".join(t for _, t in comments_and_strings(sample))
    assert [m.group(1) for m in CITATION.finditer(texts)] == ["007", "003"]
    assert [(m.group(1), m.group(2)) for m in MISPRINT.finditer(texts)] == [("003", "(9.99)")]
    assert not any("003 (9.99)" in label for label in misprint_labels())
    assert "ERRATA" in texts and re.search(r"\b00\d_[0-9a-f]{16}", texts)
