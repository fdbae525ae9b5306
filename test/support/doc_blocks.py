"""The code blocks of README.md and the docs/ guides, as tests run them (issue 33).

A fenced block's info string says how: ```` ```python ```` runs (the blocks of one file in order,
in one namespace, from the repository root), ```` ```python ros ```` runs with a dynamics server
up (``test/ros/test_doc_examples_ros.py``), ```` ```python norun: REASON ```` is not run and must
say why; ```` ```bash ```` lines that call ``rbd-ros`` are parsed by that subcommand's own
parser (node subcommands: their ``--ros-args -p`` names against the node's schema).  Output
is ```` ```text ````.  A placeholder in any python block or rbd-ros line fails."""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
#: what a reader would have to replace before a block runs
PLACEHOLDERS = re.compile(r"my_arm|your_arm|/path/to/|\.\.\./|(?<![\w.])\.\.\.(?![\w.])|<[A-Z_]+>|"
                          r"\bROBOT\.urdf\b|\bFILE\.yaml\b|\bYOUR_")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    info: str  # the rest of the info string ("ros", "norun: reason", "")
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    text = path.read_text()
    return [Block(path, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2).strip(), m.group(3))
            for m in FENCE.finditer(text)]


def placeholder(text: str) -> str | None:
    m = PLACEHOLDERS.search(text)
    return m.group(0) if m else None


def command_lines(block: Block) -> list[list[str]]:
    """The shell commands of a bash block as argument lists (continuations joined, ``$ `` prompts
    and comments dropped, a leading ``VAR=value`` assignment kept as a command of its own)."""
    out = []
    for line in block.code.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        if not line or line.startswith("#"):
            continue
        out.append(shlex.split(line, comments=True))
    return out


def rbd_ros_args(argv: list[str]) -> list[str] | None:
    """``[SUBCOMMAND, ...]`` when ``argv`` calls rbd-ros (``rbd-ros``, ``.venv/bin/rbd-ros``,
    ``python -m rbd_ros.cli``), else None."""
    if argv and argv[0].endswith("rbd-ros"):
        return argv[1:]
    if len(argv) > 2 and argv[0].endswith("python") and argv[1:3] == ["-m", "rbd_ros.cli"]:
        return argv[3:]
    return None
