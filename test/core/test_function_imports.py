"""Imports inside functions (issue 40 item 6): at module level, except where a documented cost
or an optional dependency needs them (docs/architecture.md, "Imports inside functions").

* The standard library, numpy and yaml: never inside a function (each is loaded in every
  process that uses rbd_ros; deferring them defers nothing).
* Another third-party package: only one of ``DEFERRED_PACKAGES`` (its cost or why it may be
  missing), and the ROS packages only under ``rbd_ros/ros/``.
* rbd_ros's own modules: only a module the importing module's top does not already load
  (directly or through what it imports): such an import defers a start-up cost, e.g. the
  controller loads neither the robot front, nor the floating base's kernels, nor the retimer
  until a goal or a parameter asks; one of a module already loaded defers nothing.  Each one
  says why on its line, ``# lazy: <reason>`` (what it keeps off whose import or start-up, and
  what that costs).

Measured on the sources with ``ast``, like test_layout."""
from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

from test_layout import PACKAGE, _resolve, modules

#: third-party packages imported where they are used, not at a module's top, and why (import
#: times: ``python -X importtime`` after numpy and yaml, best of three, idle 2-core machine;
#: docs/architecture.md)
DEFERRED_PACKAGES = {
    "mujoco": "the simulator's engine (0.26 s): the bridge, the simulator and the renderer",
    "matplotlib": "plots only (0.47 s with pyplot): the reports' figures and the identification's plots",
    "toppra": "the retimer's solver (0.93 s; control.retime imports it off the cycle, without its matplotlib)",
    "cvxpy": "an optional extra: the identification's semidefinite program (0.91 s)",
    "ray": "an optional extra: rbd-ros sweep --ray (0.35 s)",
    "numba": "the kernels' compiler (0.31 s): jit_cache and the validation helpers load before any kernel",
    "glfw": "optional: the interactive viewer's window (a display and libglfw)",
    "xacro": "only for a .xacro file, and a one-line error naming the package when it is missing",
    "ament_index_python": "optional outside ROS: package:// paths through a sourced workspace's index",
}
#: ROS 2 packages (rclpy, the message packages, rosidl): imported where a node or a helper uses
#: them, only under rbd_ros/ros/ (the core never imports rclpy: test_layout); no module imports
#: them at its top, so that every module imports without ROS (``rbd-ros --help``, the nodes'
#: schemas, the ROS-free tests) and a node module's import does not pay for rclpy (0.1-0.3 s)
ROS_PREFIXES = ("rclpy", "rosidl", "rcl_interfaces", "builtin_interfaces", "rbd_ros_interfaces",
                "ament_index_python", "rmw", "type_description_interfaces", "service_msgs",
                "unique_identifier_msgs", "rosgraph_msgs")
EAGER = set(sys.stdlib_module_names) | {"numpy", "yaml"}


def _is_ros(top: str) -> bool:
    return top.startswith(ROS_PREFIXES) or top.endswith(("_msgs", "_srvs"))


def function_imports(root: Path = PACKAGE) -> list[tuple[str, int, str, list[str]]]:
    """(module, line, imported module, the rbd_ros modules it loads) of every import statement
    inside a function, nested ones too."""
    mods = modules(root)
    resolve = functools.partial(_resolve, mods)
    out = []
    for m, path in mods.items():
        tree = ast.parse(path.read_text())
        seen: set[int] = set()
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if id(node) in seen or not isinstance(node, (ast.Import, ast.ImportFrom)):
                    continue
                seen.add(id(node))
                if isinstance(node, ast.Import):
                    for a in node.names:
                        own = [resolve(a.name)] if a.name.startswith("rbd_ros") else []
                        out.append((m, node.lineno, a.name, [x for x in own if x]))
                elif node.level == 0 and node.module:
                    own = []
                    if node.module.startswith("rbd_ros"):
                        for a in node.names:  # a submodule of the package, else the package
                            full = f"{node.module}.{a.name}"
                            own.append(full if full in mods else resolve(node.module))
                    out.append((m, node.lineno, node.module, [x for x in own if x]))
    return out


def top_loads(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the rbd_ros modules loaded by importing it: its top-level imports (not those
    under ``if TYPE_CHECKING:``), theirs, and every package above each of them."""
    mods = modules(root)
    resolve = functools.partial(_resolve, mods)
    direct: dict[str, set[str]] = {}
    for m, path in mods.items():
        deps: set[str] = set()
        body = list(ast.parse(path.read_text()).body)
        for node in body:
            if isinstance(node, (ast.If, ast.Try)) and not (isinstance(node, ast.If) and "TYPE_CHECKING"
                                                           in ast.unparse(node.test)):
                body.extend(node.body)
            if isinstance(node, ast.Import):
                deps |= {r for a in node.names if a.name.startswith("rbd_ros") and (r := resolve(a.name))}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.startswith("rbd_ros"):
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    deps.add(full if full in mods else resolve(node.module) or node.module)
        parents = m.split(".")
        deps |= {".".join(parents[:k]) for k in range(1, len(parents))}
        direct[m] = deps

    def loads(m: str) -> set[str]:  # (a package and its modules import each other: a walk, not recursion)
        out, todo = set(), [m]
        while todo:
            for d in direct.get(todo.pop(), ()):
                if d not in out:
                    out.add(d)
                    todo.append(d)
        return out

    return {m: loads(m) for m in mods}


def eager_inside(imports) -> list[str]:
    """The imports of the standard library, numpy or yaml inside functions."""
    return [f"{m}:{line} imports {name}" for m, line, name, _ in imports if name.split(".")[0] in EAGER]


def undocumented_inside(imports) -> list[str]:
    """The imports of other third-party packages inside functions that ``DEFERRED_PACKAGES``
    does not list (ROS packages: allowed under rbd_ros.ros)."""
    bad = []
    for m, line, name, _ in imports:
        top = name.split(".")[0]
        if top == "rbd_ros" or top in EAGER or top in DEFERRED_PACKAGES:
            continue
        if not (_is_ros(top) and m.startswith("rbd_ros.ros")):
            bad.append(f"{m}:{line} imports {name}")
    return bad


def deferring_nothing(imports, loads) -> list[str]:
    """The imports of rbd_ros modules inside functions whose every module the importing
    module's top already loads."""
    return [f"{m}:{line} imports {name}, which its top already loads" for m, line, name, own in imports
            if own and all(o in loads[m] or o == m for o in own)]


#: the reason an rbd_ros module is imported inside a function, on the import's line
LAZY_REASON = re.compile(r"#\s*lazy:\s*\S")


def unexplained_inside(imports, root: Path = PACKAGE) -> list[str]:
    """The imports of rbd_ros modules inside functions without a ``# lazy: <reason>`` on one of
    their lines (a third-party or ROS package's reason is ``DEFERRED_PACKAGES``' or the ROS rule)."""
    mods, bad = modules(root), []
    ends: dict[str, dict[int, int]] = {}
    for m, line, name, _ in imports:
        if name.split(".")[0] != "rbd_ros":
            continue
        text = mods[m].read_text()
        if m not in ends:
            ends[m] = {n.lineno: n.end_lineno or n.lineno for n in ast.walk(ast.parse(text))
                       if isinstance(n, (ast.Import, ast.ImportFrom))}
        if not any(LAZY_REASON.search(x) for x in text.splitlines()[line - 1:ends[m][line]]):
            bad.append(f"{m}:{line} imports {name}")
    return bad


IMPORTS = function_imports()


def test_no_standard_library_numpy_or_yaml_import_inside_a_function() -> None:
    bad = eager_inside(IMPORTS)
    assert not bad, "at the module's top instead:\n" + "\n".join(bad)


def test_third_party_imports_inside_functions_are_the_documented_ones() -> None:
    bad = undocumented_inside(IMPORTS)
    assert not bad, ("inside a function: import at the module's top, or document the package's cost in "
                     "DEFERRED_PACKAGES and docs/architecture.md:\n" + "\n".join(bad))


def test_own_imports_inside_functions_defer_something() -> None:
    bad = deferring_nothing(IMPORTS, top_loads())
    assert not bad, "at the module's top instead (deferring it defers nothing):\n" + "\n".join(bad)


def test_own_imports_inside_functions_say_why() -> None:
    bad = unexplained_inside(IMPORTS)
    assert not bad, ("inside a function without a reason: import it at the module's top, or say why on its "
                     "line (# lazy: <reason>):\n" + "\n".join(bad))


def test_the_reason_rule_finds_a_planted_import(tmp_path: Path) -> None:
    """The oracle for the check above: of the imports inside functions, only the rbd_ros one
    without a ``# lazy:`` reason is reported; one with a reason (on any line of the statement)
    and a package of ``DEFERRED_PACKAGES`` are not."""
    pkg = tmp_path / "rbd_ros"
    pkg.mkdir()
    for name, text in {"__init__.py": "", "low.py": "X = 1\n", "mid.py": "Y = 2\n", "far.py": "Z = 3\n",
                       "top.py": ("def f():\n    from rbd_ros.low import X\n    return X\n\n"
                                  "def g():\n    from rbd_ros.mid import Y  # lazy: planted, 30 ms\n"
                                  "    from rbd_ros.far import (\n        Z,  # lazy: planted too\n    )\n"
                                  "    import mujoco\n    return Y, Z, mujoco\n")}.items():
        (pkg / name).write_text(text)
    found = function_imports(pkg)
    assert [(m, line, name) for m, line, name, _ in found] == [
        ("rbd_ros.top", 2, "rbd_ros.low"), ("rbd_ros.top", 6, "rbd_ros.mid"), ("rbd_ros.top", 7, "rbd_ros.far"),
        ("rbd_ros.top", 10, "mujoco")]
    assert unexplained_inside(found, pkg) == ["rbd_ros.top:2 imports rbd_ros.low"]
    assert undocumented_inside(found) == []  # mujoco: DEFERRED_PACKAGES


def test_the_rules_find_planted_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "rbd_ros"
    (pkg / "ros").mkdir(parents=True)
    for name, text in {"__init__.py": "", "low.py": "X = 1\n", "mid.py": "import rbd_ros.low\n", "other.py": "",
                       "ros/__init__.py": "", "ros/node.py": "def f():\n    import rclpy\n    return rclpy\n",
                       "top.py": ("import rbd_ros.mid\n\n"
                                  "def f():\n    import json\n    from rbd_ros.low import X\n    import somepkg\n"
                                  "    import rclpy\n    import mujoco\n    return X\n\n"
                                  "def g():\n    if True:\n        from rbd_ros import other\n"
                                  "    return other\n")}.items():
        (pkg / name).write_text(text)
    found = function_imports(pkg)
    assert eager_inside(found) == ["rbd_ros.top:4 imports json"]
    # somepkg undocumented; rclpy outside rbd_ros.ros; mujoco documented; rclpy in rbd_ros.ros.node allowed
    assert undocumented_inside(found) == ["rbd_ros.top:6 imports somepkg", "rbd_ros.top:7 imports rclpy"]
    loads = top_loads(pkg)
    assert {"rbd_ros.mid", "rbd_ros.low", "rbd_ros"} <= loads["rbd_ros.top"]
    assert "rbd_ros.other" not in loads["rbd_ros.top"]
    # X's module is loaded through rbd_ros.mid: deferring it defers nothing; g's defers rbd_ros.other
    assert deferring_nothing(found, loads) == ["rbd_ros.top:5 imports rbd_ros.low, which its top already loads"]


def test_every_documented_package_is_still_deferred_somewhere() -> None:
    used = {name.split(".")[0] for _, _, name, _ in IMPORTS}
    assert set(DEFERRED_PACKAGES) <= used, set(DEFERRED_PACKAGES) - used
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    assert "Imports inside functions" in text
    missing = [p for p in DEFERRED_PACKAGES if f"`{p}`" not in text]
    assert not missing, f"docs/architecture.md does not name {missing}"
