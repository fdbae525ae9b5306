"""The user's parameters for the nodes ``rbd-ros bringup`` starts, and the parameter files that
carry every node's parameters (issue 29).

* ``--params-file FILE``: a ROS 2 parameter file, ``NODE: {ros__parameters: {name: value}}``
  (``/NODE`` and the wildcard ``/**`` too; nested mappings are dotted names, as rcl reads them);
* ``-p NODE:NAME:=VALUE`` (``--ros-args`` style; ``-p NAME:=VALUE`` for every node that has
  the parameter), VALUE read as YAML as rcl reads it.

``-p`` wins over the file, both over what the bringup derives; the launch files take the file
as ``params_file:=FILE`` (``launch_parameters``).  A file's sections for nodes not started are
left out (a file shared with other launches); ``-p`` for one is refused.  Each name is checked against
the node's schema (``config/schema``; a deprecated name as its new one, with a warning)
before anything starts: an unknown node or parameter, a
value of the wrong type or out of range, or a parameter the bringup sets from one of its own
flags (the robot, the law, the clock, the start) is refused in one line naming the fix.

Every node then gets its parameters as a parameter file (``write_parameter_file``), never as
``-p`` strings: rcl parses a ``-p`` value as YAML, so a URDF with XML comments or a path with
``': '`` in it died inside rcl; a file written by a YAML dumper holds any text.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from rbd_ros.ros.parameters import schema, schema_dir
from rbd_ros.util import yaml_io

#: parameters the bringup sets from its own flags (and keeps consistent across the nodes)
FROM_FLAGS: dict[str, str] = {
    "model_yaml": "--robot (or the model file flag)", "robot_description": "--urdf",
    "urdf_path": "--urdf", "base_link": "--base-link", "tip_link": "--tip-link",
    "base_type": "--base-type", "type": "--controller", "controller_type": "--controller",
    "mode": "--mode", "initial_positions": "--start", "integrator": "--integrator",
    "timestep": "--timestep", "rate": "--timestep (the controller's rate follows the bridge's step)",
    "use_sim_time": "nothing: the bringup's nodes run on the bridge's simulated clock",
    "rt_priority": "--rt-priority", "base_model": "--base-model",
}

ALL_NODES = "/**"


def parse_overrides(items: list[str]) -> dict[str, dict[str, Any]]:
    """``-p NODE:NAME:=VALUE`` / ``-p NAME:=VALUE`` items as ``{node: {name: value}}``
    (``ALL_NODES`` for the latter); ``ValueError`` naming the item otherwise."""

    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, text = item.partition(":=")
        if not sep or not key.strip():
            raise ValueError(f"-p {item}: not NODE:NAME:=VALUE (or NAME:=VALUE for every node)")
        node, _, name = key.strip().rpartition(":")
        node = node.strip().lstrip("/") or ALL_NODES
        if not name:
            raise ValueError(f"-p {item}: the parameter name is empty")
        try:
            value = yaml_io.safe_load(text) if text.strip() else ""
        except yaml.YAMLError as exc:
            raise ValueError(f"-p {item}: the value is not YAML ({' '.join(str(exc).split())}); "
                             "quote it, or put it in a --params-file") from None
        out.setdefault(node, {})[name] = value
    return out


def _flatten(values: dict, prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted names (``a: {b: 1}`` is ``a.b``), as rcl reads them."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def load_params_file(path: str | Path) -> dict[str, dict[str, Any]]:
    """A ROS 2 parameter file as ``{node: {name: value}}`` (``ALL_NODES`` for ``/**``);
    ``ValueError`` with the file and what is wrong."""

    path = Path(path).expanduser()
    if not path.is_file():
        raise ValueError(f"--params-file {path}: no such file")
    try:
        data = yaml_io.safe_load(path.read_text())
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ValueError(f"--params-file {path}: not YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict):
        raise ValueError(f"--params-file {path}: expected 'NODE: {{ros__parameters: {{name: value}}}}' "
                         "mappings at the top")
    out: dict[str, dict[str, Any]] = {}
    for node, body in data.items():
        params = body.get("ros__parameters") if isinstance(body, dict) else None
        if not isinstance(params, dict):
            raise ValueError(f"--params-file {path}: node '{node}' has no 'ros__parameters:' mapping")
        name = str(node).strip()
        name = ALL_NODES if name in ("/**", "**") else name.lstrip("/")
        out.setdefault(name, {}).update(_flatten(params))
    return out


def _known(executable: str) -> tuple[set[str], Any]:
    """The parameter names a node declares (its schema's and the robot's) and its schema
    (None when it has no schema: its names are then not checked)."""
    try:
        own = schema(executable)
    except FileNotFoundError:
        return set(), None
    return set(own.specs) | set(schema("robot").specs), own


def apply_overrides(specs: list, overrides: list[dict[str, dict[str, Any]]],
                    other_nodes: bool = False) -> list:
    """``specs`` (``NodeSpec``) with the user's parameters merged in, in the order given (later
    wins); composed, the controller's go to the bridge, which runs the law.  ``ValueError``
    for an unknown node or parameter, a refused value or a parameter set from a flag (the
    same value as the bringup's is accepted: ``/**: use_sim_time: true`` of a usual file).
    ``other_nodes``: sections for nodes not started are left out (a parameter file shared with
    other launches), not refused (``-p``: a misspelt node)."""

    by_name = {s.name: s for s in specs}
    composed = "controller" not in by_name and any(
        "controller_type" in s.parameters for s in specs)
    merged = {s.name: dict(s.parameters) for s in specs}
    for source in overrides:
        for node, values in source.items():
            values = current_names(node, values)
            targets = list(by_name) if node == ALL_NODES else [node]
            if node == "controller" and composed:
                targets = ["mujoco_bridge"]
            used: set[str] = set()
            if other_nodes and node != ALL_NODES and targets[0] not in by_name:
                continue
            for target in targets:
                if target not in by_name:
                    raise ValueError(f"parameters for node '{node}': the bringup starts "
                                     f"{', '.join(by_name)}")
                executable = "controller" if node == "controller" else by_name[target].executable
                for name, value in values.items():
                    value = _checked(node, executable, name, value, merged[target])
                    if value is not _SKIP:
                        merged[target][name] = value
                        used.add(name)
            unused = [n for n in values if n not in used and n not in FROM_FLAGS]
            if node == ALL_NODES and unused:
                raise ValueError(f"parameter /**:{unused[0]}: none of the nodes the bringup starts "
                                 f"({', '.join(by_name)}) has it")
    return [replace(s, parameters=merged[s.name]) for s in specs]


def current_names(node: str, values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with each deprecated parameter name (a schema's ``deprecated_names``:
    ``base`` for ``base_type``) as its current one, a one-line warning each on stderr;
    ``ValueError`` naming both when both are given, different."""

    out = dict(values)
    for stem in sorted(p.stem for p in schema_dir().glob("*.yaml")):
        out, notes = schema(stem).resolve(out, given=set(out))
        for note in notes:
            print(f"[bringup] warning: {node}: {note}", file=sys.stderr, flush=True)
    return out


_SKIP = object()  # _checked: not a parameter of this node (a wildcard's) or already the bringup's


def _checked(node: str, executable: str, name: str, value: Any, current: dict[str, Any]) -> Any:
    """``value`` for ``name`` of a node (``current``: its parameters so far), widened to the
    schema's type; ``_SKIP``; or ``ValueError`` (module docstring)."""
    known, own = _known(executable)
    spec = None if own is None or name not in known else (
        own if name in own.specs else schema("robot")).specs[name]
    if spec is not None:
        value = _widened(spec.type, value)
    if name in FROM_FLAGS:
        if current.get(name, _SKIP) == value or (node == ALL_NODES and name not in current):
            return _SKIP
        raise ValueError(f"parameter {node}:{name}: the bringup sets it from {FROM_FLAGS[name]}; use that")
    if own is not None and spec is None:
        if node == ALL_NODES:
            return _SKIP  # a wildcard parameter for the nodes that have it
        raise ValueError(f"node '{node}' has no parameter '{name}' (its parameters: "
                         f"docs/parameters.md, config/schema/{executable}.yaml)")
    reason = spec.reason(value) if spec is not None else None
    if reason:
        raise ValueError(f"parameter {node}:{name}: {reason}")
    return value


def _widened(kind: str, value: Any) -> Any:
    """An integer (or integers) where the schema wants a double: as floats (rcl would type
    ``5`` as an integer, and the node refuse it for a double parameter)."""
    if kind == "double" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if kind == "double_array" and isinstance(value, list) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return [float(v) for v in value]
    return value


def write_parameter_file(folder: str | Path, spec: Any) -> Path:
    """``FOLDER/NAME.yaml``: ``NAME: {ros__parameters: ...}`` of a ``NodeSpec``, written by a
    YAML dumper (any text: XML comments, quotes, newlines)."""

    path = Path(folder) / f"{spec.name}.yaml"
    values = {k: (list(v) if isinstance(v, tuple) else v) for k, v in spec.parameters.items()}
    path.write_text(yaml.safe_dump({spec.name: {"ros__parameters": values}}, sort_keys=False))
    return path


def launch_parameters(context: Any, specs: list) -> list:
    """The launch files' ``params_file:=FILE`` (not a declared argument, so the description's
    arguments stay the CLI's; read from the launch configurations): ``specs`` with the file's
    parameters merged in after the same checks as ``rbd-ros bringup --params-file``."""
    path = getattr(context, "launch_configurations", context).get("params_file", "")
    return apply_overrides(specs, [load_params_file(path)], other_nodes=True) if path else specs


def node_arguments(spec: Any, folder: str | Path) -> list[str]:
    """``SUBCOMMAND --ros-args -r __node:=NAME --params-file FOLDER/NAME.yaml`` for a node
    process (its parameters written by ``write_parameter_file``)."""
    path = write_parameter_file(folder, spec)
    return [spec.subcommand, "--ros-args", "-r", f"__node:={spec.name}", "--params-file", str(path)]
