"""docs/architecture.md names only what exists (issue 40 item 7): a reader follows it file by
file, so every repository path it gives (``rbd_ros/robot/arm.py``, ``test/core/test_layout.py``)
is a file or folder, every dotted name in backticks (``plan.build_plan``,
``rbd_ros.algorithm.checked``, ``Robot.inverse_dynamics``, ``Runner.run``) resolves to a
module, a module-level name or a class attribute of ``rbd_ros``, and its floor table lists the
floors of the layout test (``test/core/test_layout.py``'s ``FLOORS``), lowest first.

Names are looked up in the sources with ``ast`` (nothing imported: no numba, no rclpy): a
module's top-level functions, classes, assignments and imports; a class's methods, class-level
assignments and the ``self.NAME`` it assigns, its bases' too.  A short name resolves when the
dotted module path ends with its first parts (``checked.rnea_checked`` is
``rbd_ros.algorithm.checked.rnea_checked``) or its first part is a class of the package."""
from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "architecture.md"
#: repository paths a reader may be sent to
PATH = re.compile(r"(?<![\w./-])((?:rbd_ros|test|docs|config|scripts|bench|launch|urdf)/[\w./-]*\w)")
DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
#: a backticked dotted token ending so is a file name, not a Python name
FILE_ENDINGS = {"py", "md", "yaml", "json", "html", "png", "csv", "txt", "xml", "urdf", "rst"}
#: names of other packages the page may mention (numpy's, Pinocchio's, numba's)
FOREIGN = {"np", "numpy", "pin", "numba", "mujoco", "rclpy", "dataclasses"}


class Index:
    """Modules, their top-level names and their classes' attributes, from the sources."""

    def __init__(self, package: Path) -> None:
        self.names: dict[str, set[str]] = {}
        self.classes: dict[str, dict[str, tuple[set[str], list[str]]]] = {}  # module -> class -> (attrs, bases)
        for path in sorted(package.rglob("*.py")):
            parts = list(path.relative_to(package.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            module = ".".join(parts)
            tree = ast.parse(path.read_text())
            names: set[str] = set()
            classes: dict[str, tuple[set[str], list[str]]] = {}
            for node in tree.body:
                names |= _bound(node)
                if isinstance(node, ast.ClassDef):
                    attrs: set[str] = set()
                    for item in node.body:
                        attrs |= _bound(item)
                    for sub in ast.walk(node):
                        if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                            for t in sub.targets if isinstance(sub, ast.Assign) else [sub.target]:
                                for e in ast.walk(t):
                                    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) \
                                            and e.value.id == "self":
                                        attrs.add(e.attr)
                    bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                             for b in node.bases]
                    classes[node.name] = (attrs, bases)
            self.names[module] = names
            self.classes[module] = classes

    def class_attr(self, cls: str, attr: str, seen: frozenset = frozenset()) -> bool:
        """Whether a class named ``cls`` anywhere in the package has ``attr`` (bases included)."""
        for classes in self.classes.values():
            if cls in classes and cls not in seen:
                attrs, bases = classes[cls]
                if attr in attrs or any(self.class_attr(b, attr, seen | {cls}) for b in bases if b):
                    return True
        return False

    def in_module(self, module: str, rest: list[str]) -> bool:
        if not rest:
            return True
        if rest[0] not in self.names[module]:
            return False
        if len(rest) == 1:
            return True
        return len(rest) == 2 and self.class_attr(rest[0], rest[1])

    def resolves(self, dotted: str) -> bool:
        parts = dotted.split(".")
        for k in range(len(parts), 0, -1):
            suffix = ".".join(parts[:k])
            for module in self.names:
                if (module == suffix or module.endswith("." + suffix)) and self.in_module(module, parts[k:]):
                    return True
        return len(parts) == 2 and self.class_attr(parts[0], parts[1])


def _bound(node: ast.stmt) -> set[str]:
    """The names a statement binds at its level."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {e.id for t in node.targets for e in ast.walk(t) if isinstance(e, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    if isinstance(node, (ast.If, ast.Try)):  # names bound under a top-level if / try
        out: set[str] = set()
        for child in [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                      *[s for h in getattr(node, "handlers", []) for s in h.body]]:
            out |= _bound(child)
        return out
    return set()


@cache
def index() -> Index:
    return Index(REPO / "rbd_ros")


def dotted_names(text: str) -> list[str]:
    """The backticked dotted Python names of ``text`` (a call's arguments dropped)."""
    out = []
    for span in re.findall(r"`([^`\n]+)`", text):
        token = span.split("(", 1)[0].strip()
        if not DOTTED.match(token) or token.rsplit(".", 1)[1] in FILE_ENDINGS or token.split(".")[0] in FOREIGN:
            continue
        out.append(token)
    return out


def missing(text: str) -> tuple[list[str], list[str]]:
    """The paths that do not exist and the dotted names that do not resolve."""
    paths = sorted({p for p in PATH.findall(text) if not (REPO / p).exists()})
    names = sorted({n for n in dotted_names(text) if not index().resolves(n)})
    return paths, names


def test_every_path_and_name_of_the_architecture_page_exists() -> None:
    text = PAGE.read_text()
    assert len(PATH.findall(text)) >= 20 and len(dotted_names(text)) >= 40  # the page was read
    paths, names = missing(text)
    assert not paths, f"docs/architecture.md names files that do not exist: {paths}"
    assert not names, f"docs/architecture.md names what rbd_ros does not define: {names}"


def test_the_checker_finds_planted_mistakes() -> None:
    """The oracle for the check above: names that exist pass, a misspelt file, module,
    function or method is found."""
    good = ("`rbd_ros/robot/arm.py` `Robot.inverse_dynamics` `checked.rnea_checked` "
            "`rbd_ros.algorithm.checked` `plan.build_plan(args)` `Runner.open_recording`")
    assert missing(good) == ([], [])
    bad = ("`rbd_ros/robot/armz.py` `Robot.inverse_dynamicz` `checked.rnea_checkd` "
           "`rbd_ros.algorithm.checkd` `plan.build_plans` `Runner.run_all`")
    assert missing(bad) == (["rbd_ros/robot/armz.py"],
                            sorted(["Robot.inverse_dynamicz", "checked.rnea_checkd", "rbd_ros.algorithm.checkd",
                                    "plan.build_plans", "Runner.run_all"]))


def test_the_floor_table_is_the_layout_tests() -> None:
    """The page's floor table, row by row, is ``FLOORS`` of ``test/core/test_layout.py``."""
    layout = ast.parse((REPO / "test" / "core" / "test_layout.py").read_text())
    floors = next(ast.literal_eval(n.value) for n in layout.body
                  if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "FLOORS" for t in n.targets))
    section = PAGE.read_text().split("\n## Floors", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"^\| \d+ ", line)]
    table = [tuple(re.findall(r"`(\w+)`", row.split("|")[2])) for row in rows]
    assert table == [tuple(f) for f in floors], f"docs/architecture.md's floors {table} != test_layout's {floors}"
