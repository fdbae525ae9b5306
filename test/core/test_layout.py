"""The package's shape (issue 28), measured on the sources with ``ast`` (every import counts,
lazy ones inside functions too): no import circles, floors respected, only ``__init__.py`` and
``cli.py`` at the package top, the core free of rclpy, moved modules still importable.

``python test/core/test_layout.py`` prints the import graph's summary (modules, edges, circles, back
arrows)."""
from __future__ import annotations

import ast
import functools
import importlib
import os
import re
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
    ("urdf",),  # the URDF converter
    ("bases",),  # the root joints (the rolling constraint's home)
    ("formulations",),  # independent cross-checks (of the kernels, on every base)
    ("robot",),  # the Python API
    ("services",),  # the dynamics server's ROS-free request rules (issue 40)
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


def _resolve(mods: dict[str, Path], name: str) -> str | None:
    """The longest prefix of the dotted ``name`` that is one of ``mods`` (``None`` if none is)."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the ``rbd_ros`` modules it imports (``from pkg import mod`` counts as ``mod``;
    ``from mod import name`` as ``mod``)."""
    mods = modules(root)
    resolve = functools.partial(_resolve, mods)
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


#: a module named in a string to be imported at run time: ``"rbd_ros.x.y"`` or ``"rbd_ros.x.y:Name"``
_NAMED = re.compile(r"rbd_ros(\.\w+)+(:\w+)?")
#: the calls whose first argument is a module to import: ``importlib.import_module``,
#: ``formulations.counts.pure``; ``KernelCall``'s is a kernel module (``bases.root_joint``)
_IMPORTERS = {"import_module", "pure"}


def string_imports(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the ``rbd_ros`` modules it imports by name at run time (issue 40 item 3): the
    literal first argument of ``import_module(...)`` / ``pure(...)``, a ``KernelCall(module,
    ...)``'s module (``rbd_ros.algorithm.<module>`` unless dotted, as ``KernelCall.path``), and
    every ``"rbd_ros.x.y:Name"`` literal (a registry entry, as ``robot.arm.FRONTS``)."""
    mods = modules(root)
    resolve = functools.partial(_resolve, mods)
    graph: dict[str, set[str]] = {}
    for m, path in mods.items():
        named: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                arg = node.args[0].value
                if func in _IMPORTERS and _NAMED.fullmatch(arg):
                    named.add(arg)
                elif func == "KernelCall":
                    named.add(arg if "." in arg else f"rbd_ros.algorithm.{arg}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value \
                    and _NAMED.fullmatch(node.value):
                named.add(node.value.partition(":")[0])
        graph[m] = {d for d in map(resolve, named) if d is not None and d != m}
    return graph


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
STRING_GRAPH = string_imports()


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


def test_no_upward_import_by_name() -> None:
    """What a module imports by name at run time (``string_imports``: kernels by ``KernelCall``,
    the robot's fronts by ``FRONTS``, ``import_module`` of a literal) respects the floors as its
    import statements do: the root joints never name the robot floor (issue 40 item 3).  Circles
    are the import statements' (``test_no_import_circles``): ``Robot`` loads its root's front by
    name at the first robot on that root, and the fronts extend ``Robot``."""
    for m in STRING_GRAPH:
        floor(m)
    assert back_arrows(STRING_GRAPH) == []
    assert "rbd_ros.robot.floating" in STRING_GRAPH["rbd_ros.robot.arm"]  # FRONTS is read
    assert "rbd_ros.algorithm.floating_base" in STRING_GRAPH["rbd_ros.bases.root_joint"]  # KernelCall


def test_the_name_reader_finds_planted_upward_names(tmp_path: Path) -> None:
    """The oracle for the check above: an ``import_module`` literal, a ``"module:Name"`` entry and
    a ``KernelCall`` module are read; a docstring naming a module is not an import."""
    pkg = tmp_path / "rbd_ros"
    for sub in ("util", "robot", "algorithm"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "robot" / "front.py").write_text("")
    (pkg / "algorithm" / "rnea.py").write_text("")
    (pkg / "util" / "a.py").write_text('"""See rbd_ros.robot.front."""\nimport importlib\n'
                                       'def f():\n    return importlib.import_module("rbd_ros.robot.front")\n')
    (pkg / "util" / "b.py").write_text('REG = {"x": "rbd_ros.robot.front:Front"}\n')
    (pkg / "robot" / "c.py").write_text('"""rbd_ros.robot.front"""\nK = KernelCall("rnea", "rnea")\n')
    g = string_imports(pkg)
    assert back_arrows(g) == [("rbd_ros.util.a", "rbd_ros.robot.front"), ("rbd_ros.util.b", "rbd_ros.robot.front")]
    assert g["rbd_ros.robot.c"] == {"rbd_ros.algorithm.rnea"}  # (down: no arrow)


#: the modules outside ``rbd_ros.formulations`` that may import it: ``Robot``'s ``method=`` (the
#: user's door to the cross-checks) and the command lines that run them (issue 40 item 5)
FORMULATION_USERS = {"rbd_ros.robot.arm", "rbd_ros.robot.mobile"}


def test_the_formulations_are_only_cross_checks() -> None:
    """Production code never runs a formulation: the rolling constraint lives in ``bases``, and
    only ``method=`` and the command lines reach ``rbd_ros.formulations``."""
    users = {m for m, deps in GRAPH.items() if not m.startswith("rbd_ros.formulations")
             and floor(m) < len(FLOORS) and any(d.startswith("rbd_ros.formulations") for d in deps)}
    assert users == FORMULATION_USERS, sorted(users ^ FORMULATION_USERS)


#: the bringup's size rules (issue 40 item 1): a module a reader takes in at one sitting
BRINGUP_MODULE_LINES, BRINGUP_CLASS_LINES = 400, 300


def test_the_bringup_is_small_modules_and_classes() -> None:
    """No module in ``ros/bringup/`` over 400 lines, no class there over 300."""
    big = []
    for path in sorted((PACKAGE / "ros" / "bringup").glob("*.py")):
        text = path.read_text()
        if text.count("\n") > BRINGUP_MODULE_LINES:
            big.append(f"{path.name}: {text.count(chr(10))} lines")
        for node in ast.parse(text).body:
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > BRINGUP_CLASS_LINES:
                big.append(f"{path.name}: class {node.name} {node.end_lineno - node.lineno + 1} lines")
    assert not big, big


def private_imports(root: Path = PACKAGE) -> list[str]:
    """``module: from other import _name`` for every private name one module takes from another
    (lazy imports too; an ``import x as _x`` alias is not a private name of ``x``)."""
    mods, found = modules(root), []
    for m, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.split(".")[0] == "rbd_ros" and node.module != m:
                found += [f"{m}: from {node.module} import {a.name}" for a in node.names
                          if a.name.startswith("_") and f"{node.module}.{a.name}" not in mods]
    return sorted(found)


def test_no_module_imports_another_modules_private_names() -> None:
    """What is shared has a public name (issue 40 item 4): nothing imports a ``_name`` from
    another module of the package."""
    assert private_imports() == []


def test_private_import_finder_finds_a_planted_one(tmp_path: Path) -> None:
    pkg = tmp_path / "rbd_ros"
    (pkg / "sim").mkdir(parents=True)
    for f in ("__init__.py", "sim/__init__.py"):
        (pkg / f).write_text("")
    (pkg / "sim" / "a.py").write_text("def _helper():\n    pass\n")
    (pkg / "sim" / "b.py").write_text("def f():\n    from rbd_ros.sim.a import _helper\n")
    (pkg / "sim" / "c.py").write_text("from rbd_ros.sim import a as _a\n")
    assert private_imports(pkg) == ["rbd_ros.sim.b: from rbd_ros.sim.a import _helper"]


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


@pytest.mark.parametrize("old, new, why", [
    ("rbd_ros.floating_base", "rbd_ros.robot.floating", "issue 28"),
    ("rbd_ros.validate", "rbd_ros.util.validate", "issue 28"),
    ("rbd_ros.robot.services", "rbd_ros.services.requests", "issue 40"),
])
def test_a_moved_module_warns_once_and_is_the_new_module(old: str, new: str, why: str) -> None:
    code = (f"import warnings, importlib\nwarnings.simplefilter('always')\n"
            f"with warnings.catch_warnings(record=True) as w:\n"
            f"    a = importlib.import_module({old!r}); b = importlib.import_module({old!r})\n"
            f"assert a is importlib.import_module({new!r}), a\n"
            f"msgs = [str(x.message) for x in w if x.category is DeprecationWarning]\n"
            f"assert msgs == [{old!r} + ' moved to ' + {new!r} + ' ({why}); import it from there'], msgs\n")
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
