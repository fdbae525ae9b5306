"""The package's shape (issue 28), measured on the sources with ``ast`` (every import counts,
lazy ones inside functions too): no import circles, floors respected, only ``__init__.py`` and
``cli.py`` at the package top, the core free of rclpy, moved modules still importable.

``python test/core/test_layout.py`` prints the import graph's summary (modules, edges, circles, back
arrows)."""
from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "rbd_ros"

#: floors, lowest first: a module may import from its own floor and the ones below, never above
#: (``rbd_ros`` itself and the ``cli`` modules are the roof: they may import anything)
FLOORS = (
    ("util",),  # validation rules and errors, bundled resources
    ("lie",),  # rotations, SE(2)/SE(3), group integrators
    ("algorithm",),  # the jitted kernels
    ("model",),  # MdhModel, packed data / workspace, physical check, URDF export
    ("formulations", "urdf"),  # independent cross-checks; the URDF converter
    ("bases",),  # the root joints
    ("robot",),  # the Python API
    ("control",),
    ("identification",),  # the regressor, base parameters, estimation, excitation (issue 31)
    ("sim",),
    ("sweep",),  # closed-loop sweeps over robots x laws x perturbations x tours (issue 32)
    ("ros",),  # everything that imports rclpy
)
ROOF = ("rbd_ros",)  # and every ``cli`` module: command lines are entry points over any floor
#: circles to be removed (none left: the bridge's ``_coerce`` moved to ``ros.parameters``, the
#: controllers' shared helpers to ``ros.nodes.controller_common``)
KNOWN_CIRCLES: tuple[set[str], ...] = ()


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root``."""
    out = {}
    for p in sorted(root.rglob("*.py")):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the ``rbd_ros`` modules it imports (``from pkg import mod`` counts as ``mod``;
    ``from mod import name`` as ``mod``)."""
    mods = modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for m, path in mods.items():
        deps: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps |= {resolve(a.name) for a in node.names if a.name.split(".")[0] == "rbd_ros"}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.split(".")[0] == "rbd_ros":
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    deps.add(full if full in mods else resolve(node.module))
        graph[m] = {d for d in deps if d is not None and d != m}
    return graph


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(comp)

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in graph:
        if v not in index:
            visit(v)
    return found


def floor(module: str) -> int:
    """The floor of ``module`` (``FLOORS``), ``len(FLOORS)`` for the roof."""
    if module in ROOF or module.rpartition(".")[2] == "cli":
        return len(FLOORS)
    sub = module.split(".")[1]
    for k, names in enumerate(FLOORS):
        if sub in names:
            return k
    raise AssertionError(f"{module} is on no floor: add rbd_ros.{sub} to FLOORS")


def back_arrows(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports from a lower floor to a higher one."""
    return sorted((a, b) for a, deps in graph.items() for b in deps if floor(b) > floor(a))


GRAPH = import_graph()


def test_no_import_circles() -> None:
    found = circles(GRAPH)
    unknown = [sorted(c) for c in found if c not in KNOWN_CIRCLES]
    assert not unknown, f"import circles: {unknown}"
    core = [sorted(c) for c in found if any(not m.startswith("rbd_ros.ros") for m in c)]
    assert not core, f"import circles in the core: {core}"


def test_circle_finder_finds_a_planted_circle(tmp_path: Path) -> None:
    """The oracle for the check above: two modules importing each other are found."""
    pkg = tmp_path / "rbd_ros"
    (pkg / "robot").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "robot" / "__init__.py").write_text("")
    (pkg / "robot" / "a.py").write_text("def f():\n    from rbd_ros.robot import b\n")
    (pkg / "robot" / "b.py").write_text("from rbd_ros.robot.a import f\n")
    (pkg / "util.py").write_text("from rbd_ros.robot import a\n")
    g = import_graph(pkg)
    assert circles(g) == [{"rbd_ros.robot.a", "rbd_ros.robot.b"}]
    assert back_arrows(g) == [("rbd_ros.util", "rbd_ros.robot.a")]


def test_every_module_is_on_a_floor_and_imports_only_from_below() -> None:
    for m in GRAPH:
        floor(m)  # AssertionError naming a module on no floor
    assert back_arrows(GRAPH) == []


def test_only_init_and_cli_at_the_package_top() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert top == ["__init__.py", "cli.py"], top


def test_the_core_never_imports_rclpy() -> None:
    """Everything outside ``rbd_ros/ros`` (lazy imports included) is ROS-free."""
    offenders = []
    for m, path in modules().items():
        if m.startswith("rbd_ros.ros"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] in ("rclpy", "rosidl_runtime_py", "rbd_ros_interfaces") for n in names):
                offenders.append(m)
    assert offenders == []


@pytest.mark.parametrize("old, new", [
    ("rbd_ros.floating_base", "rbd_ros.robot.floating"),
    ("rbd_ros.validate", "rbd_ros.util.validate"),
    ("rbd_ros.services", "rbd_ros.robot.services"),
])
def test_a_moved_module_warns_once_and_is_the_new_module(old: str, new: str) -> None:
    code = (f"import warnings, importlib\nwarnings.simplefilter('always')\n"
            f"with warnings.catch_warnings(record=True) as w:\n"
            f"    a = importlib.import_module({old!r}); b = importlib.import_module({old!r})\n"
            f"assert a is importlib.import_module({new!r}), a\n"
            f"msgs = [str(x.message) for x in w if x.category is DeprecationWarning]\n"
            f"assert msgs == [{old!r} + ' moved to ' + {new!r} + ' (issue 28); import it from there'], msgs\n")
    env = dict(os.environ, PYTHONPATH=str(PACKAGE.parent))  # this tree's rbd_ros, not an installed one
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-2000:]


def test_in_tree_code_uses_no_moved_module() -> None:
    import rbd_ros

    moved = set(rbd_ros._MOVED)
    users = sorted((m, d) for m, deps in GRAPH.items() for d in deps if d in moved)
    assert users == []
    for path in (PACKAGE.parent / "test").rglob("*.py"):
        if path.name == Path(__file__).name:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert node.module not in moved and not (
                    node.module == "rbd_ros" and {a.name for a in node.names} & {m.split(".")[1] for m in moved}
                ), f"{path.name}: imports {node.module}"


def test_public_names() -> None:
    import rbd_ros

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none of them goes through a moved module
        for name in ("Robot", "FloatingBaseRobot", "MobileBaseRobot", "MdhModel", "RigidBody", "two_link_ik"):
            assert name in dir(rbd_ros) and getattr(rbd_ros, name) is not None
    from rbd_ros.robot.floating import FloatingBaseRobot
    from rbd_ros.robot.mobile import MobileBaseRobot

    assert rbd_ros.FloatingBaseRobot is FloatingBaseRobot and rbd_ros.MobileBaseRobot is MobileBaseRobot
    assert importlib.import_module("rbd_ros.robot").Robot is rbd_ros.Robot


if __name__ == "__main__":
    print(f"modules {len(GRAPH)}, imports {sum(map(len, GRAPH.values()))}")
    print("circles:", [sorted(c) for c in circles(GRAPH)])
    print("back arrows:", back_arrows(GRAPH))
    print("top:", sorted(p.name for p in PACKAGE.glob("*.py")))
