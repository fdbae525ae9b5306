"""Declarative node parameters (issue 28; the idea of ros2_controllers'
generate_parameter_library): one YAML schema per node, ``config/schema/NODE.yaml``, from which
the node declares its parameters (``ParameterDescriptor`` with description, range, read-only),
checks them at start and on ``set_parameters`` (one-line reasons) and the docs are rendered
(``docs/parameters.md``)::

    python -m rbd_ros.ros.parameters controller        # the node's table (Markdown)
    python -m rbd_ros.ros.parameters --write           # docs/parameters.md, every schema

The schema's fields are documented at the top of ``config/schema/controller.yaml``.  Loading
and checking are ROS-free (``Schema.check``, ``Schema.resolve``); only ``declare`` and
``on_set`` touch rclpy.  A renamed parameter lists its old names (``deprecated_names``): they
are still read from ``-p``, parameter files and ``set_parameters`` with a one-line warning
naming the new one (``Schema.adopt_deprecated``, ``accept_deprecated_names``), and an old and
a new name given with different values are refused, naming both.
"""
from __future__ import annotations

import difflib
import math
import sys
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from rbd_ros.ros.common import NodeConfigError
from rbd_ros.util import yaml_io
from rbd_ros.util.resources import share_dir

TYPES = ("string", "double", "integer", "bool", "string_array", "double_array", "any")
_PY = {"string": str, "double": float, "integer": int, "bool": bool}


@dataclass(frozen=True)
class Spec:
    """One parameter of a schema."""

    name: str
    type: str
    default: Any
    description: str = ""
    read_only: bool | tuple[str, ...] = False
    range: tuple[float | None, float | None] | None = None
    exclusive_min: bool = False
    one_of: tuple[Any, ...] = ()
    message: str = ""
    families: tuple[str, ...] = ()
    gain: bool = False
    config: str = ""  # the ROS-free settings class the key belongs to ('' = the node's own)
    deprecated_names: tuple[str, ...] = ()  # old names still accepted, with a warning (resolve)

    def is_read_only(self, family: str = "") -> bool:
        return self.read_only if isinstance(self.read_only, bool) else family in self.read_only

    def applies(self, family: str = "") -> bool:
        return not self.families or not family or family in self.families

    def reason(self, value: Any) -> str | None:
        """Why ``value`` is refused (one line: ``"<name> <what>, got <value>"``), or None."""
        kind = self.type
        ok_type = (kind == "any" or (kind == "double" and isinstance(value, (int, float)))
                   or (kind == "integer" and isinstance(value, int))
                   or (kind in _PY and kind not in ("double", "integer") and isinstance(value, _PY[kind]))
                   or (kind.endswith("_array") and isinstance(value, (list, tuple))))
        what = self.message
        if not ok_type or (kind in ("double", "integer") and isinstance(value, bool)):
            article = "an" if kind[0] in "aeiou" else "a"
            return f"{self.name} {what or f'must be {article} ' + kind.replace('_', ' ')}, got {value!r}"
        if self.range is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
            lo, hi = self.range
            bad = (not math.isfinite(value)
                   or (lo is not None and (value < lo or (self.exclusive_min and value == lo)))
                   or (hi is not None and value > hi))
            if bad:
                return f"{self.name} {what or _range_text(self)}, got {value!r}"
        if self.one_of and value not in self.one_of:
            return f"{self.name} {what or 'must be one of ' + str(tuple(self.one_of))}, got {value!r}"
        return None

    def descriptor(self, family: str = "") -> Any:
        """The rclpy ``ParameterDescriptor`` (description, range, read-only)."""
        from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor

        d = ParameterDescriptor(description=self.description, read_only=self.is_read_only(family),
                                dynamic_typing=self.type == "any" or self.type.endswith("_array"))
        if self.one_of:
            d.additional_constraints = "one of " + ", ".join(map(str, self.one_of))
        if self.range is not None:
            lo, hi = self.range
            if self.type == "integer":
                d.integer_range = [IntegerRange(from_value=int(lo if lo is not None else -2**63),
                                                to_value=int(hi if hi is not None else 2**63 - 1), step=0)]
            elif self.type == "double":
                d.floating_point_range = [FloatingPointRange(
                    from_value=float(lo if lo is not None else -math.inf),
                    to_value=float(hi if hi is not None else math.inf), step=0.0)]
        return d


def coerce(name: str, kind: str, value: Any) -> Any:
    """A ROS parameter value as a settings dataclass field of type ``kind`` (``"bool"``,
    ``"float"``, ``"int"``, ``"str"``, ``"tuple[str, ...]"``, ...) wants it; a
    ``NodeConfigError`` naming the parameter otherwise."""

    try:
        if kind == "bool":
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower() == "true"
            if not isinstance(value, bool):
                raise TypeError
            return value
        if kind == "float":
            if isinstance(value, bool):
                raise TypeError
            return float(value)
        if kind == "int":
            if isinstance(value, bool) or float(value) != int(value):
                raise TypeError
            return int(value)
        if kind == "str":
            return str(value)
        if kind.startswith("tuple"):
            seq = list(value) if not isinstance(value, str) else [value]
            return tuple(str(v) for v in seq) if "str" in kind else tuple(float(v) for v in seq)
        if isinstance(value, (list, tuple, np.ndarray)):
            return [float(v) for v in value]
        if isinstance(value, bool):
            raise TypeError
        return float(value)
    except (TypeError, ValueError):
        raise NodeConfigError(f"parameter {name}: {value!r} is not a valid {kind}") from None


def declare_settings(node: Any, cls: type, node_schema: "Schema") -> dict[str, Any]:
    """Declare every field of the settings dataclass ``cls`` (``BridgeConfig``,
    ``MobileConfig``) as a parameter (any type, unset = the file's or the class's default;
    the schema's description and rules in its descriptor); returns the given ones, coerced to
    the fields' types.  The class's ``__post_init__`` checks them (one place for the core)."""

    hints = typing.get_type_hints(cls)
    guard_parameters(node)  # set_parameters: unknown names refused naming them
    given: dict[str, Any] = {}
    for f in fields(cls):
        spec = node_schema.specs.get(f.name)
        descriptor = spec.descriptor() if spec is not None else None
        if descriptor is None:
            from rcl_interfaces.msg import ParameterDescriptor

            descriptor = ParameterDescriptor()
        descriptor.dynamic_typing, descriptor.read_only = True, False
        descriptor.floating_point_range, descriptor.integer_range = [], []  # the class checks
        if spec is not None and spec.range is not None:
            descriptor.additional_constraints = _range_text(spec).removeprefix("must be ")
        if spec is not None and not node.has_parameter(f.name):
            node_schema.adopt_deprecated(node, spec)
        value = node.declare_parameter(f.name, None, descriptor).value
        if value is None:
            continue
        kind = "Any" if hints[f.name] is Any else str(hints[f.name]).replace("<class '", "").replace("'>", "")
        given[f.name] = coerce(f.name, kind, value)
    return given


def _widen_integer_override(node: Any, spec: Spec) -> None:
    """``-p rate:=500`` for a double parameter: read as 500.0 (rclpy would refuse the type)."""
    overrides = getattr(node, "_parameter_overrides", {})
    given = overrides.get(spec.name)
    if spec.type == "double" and given is not None and given.type_ == given.Type.INTEGER:
        from rclpy.parameter import Parameter

        overrides[spec.name] = Parameter(spec.name, Parameter.Type.DOUBLE, float(given.value))


def _range_text(spec: Spec) -> str:
    lo, hi = spec.range or (None, None)
    if hi is None:
        return f"must be {'>' if spec.exclusive_min else '>='} {lo}"
    if lo is None:
        return f"must be <= {hi}"
    return f"must be in {'(' if spec.exclusive_min else '['}{lo}, {hi}]"


def schema_dir() -> Path:
    return share_dir() / "config" / "schema"


@dataclass(frozen=True)
class Schema:
    """A node's parameters (``config/schema/NODE.yaml``)."""

    node: str
    summary: str
    specs: dict[str, Spec] = field(default_factory=dict)

    @classmethod
    def from_yaml(cls, path: str | Path) -> "Schema":

        data = yaml_io.safe_load(Path(path).read_text())
        specs = {}
        for name, entry in (data.get("parameters") or {}).items():
            if entry.get("type") not in TYPES:
                raise ValueError(f"{path}: parameter {name}: type must be one of {TYPES}")
            ro = entry.get("read_only", False)
            rng = entry.get("range")
            specs[name] = Spec(name=name, type=entry["type"], default=entry.get("default"),
                               description=" ".join(str(entry.get("description", "")).split()),
                               read_only=ro if isinstance(ro, bool) else tuple(ro),
                               range=tuple(rng) if rng is not None else None,
                               exclusive_min=bool(entry.get("exclusive_min", False)),
                               one_of=tuple(entry.get("one_of", ())), message=entry.get("message", ""),
                               families=tuple(entry.get("families", ())), gain=bool(entry.get("gain", False)),
                               config=str(entry.get("config", "")),
                               deprecated_names=tuple(entry.get("deprecated_names", ())))
        return cls(node=data["node"], summary=" ".join(str(data.get("summary", "")).split()), specs=specs)

    def __getitem__(self, name: str) -> Spec:
        return self.specs[name]

    @property
    def aliases(self) -> dict[str, str]:
        """Deprecated name -> its parameter's name (the schema's ``deprecated_names``)."""
        return {old: s.name for s in self.specs.values() for old in s.deprecated_names}

    def resolve(self, values: dict[str, Any], given: Iterable[str] | None = None) -> tuple[dict[str, Any], list[str]]:
        """``values`` with each deprecated name's value under its parameter's name, and the
        one-line deprecation warnings to show.  A deprecated name counts when it is in
        ``given`` (default: when its value is not the default); given with its new name and a
        different value, ``NodeConfigError`` naming both."""
        out, notes = dict(values), []
        for old, new in self.aliases.items():
            if old not in out:
                continue
            value, default = out.pop(old), self.specs[new].default
            if (old not in given) if given is not None else value == default:
                continue
            notes.append(_deprecation_note(old, new, value))
            if new in out and ((new in given) if given is not None else out[new] != default) \
                    and out[new] != value:
                raise NodeConfigError(f"parameters '{old}' and '{new}' are one parameter ('{old}' is "
                                      f"its deprecated name) and disagree: {old}:={value!r}, "
                                      f"{new}:={out[new]!r}; give only '{new}'")
            out[new] = value
        return out, notes

    def defaults(self, family: str = "") -> dict[str, Any]:
        return {n: s.default for n, s in self.specs.items() if s.applies(family)}

    def check(self, values: dict[str, Any]) -> None:
        """``NodeConfigError`` with the first refusal among ``values``."""
        for name, value in values.items():
            reason = self.specs[name].reason(value) if name in self.specs else None
            if reason:
                raise NodeConfigError(reason)

    # ---- rclpy ------------------------------------------------------------------------------
    def declare(self, node: Any, names: Iterable[str] | None = None, family: str = "",
                skip: Callable[[Spec], bool] | None = None) -> dict[str, Any]:
        """Declare ``names`` (default: every parameter of ``family`` but the gains) on ``node``,
        each with its descriptor; returns their values, checked (``NodeConfigError``: the
        schema's one-line reason).  Already declared ones are read, not declared again."""
        from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException

        guard_parameters(node)  # set_parameters: unknown names refused naming them
        wanted = list(names) if names is not None else [
            n for n, s in self.specs.items() if s.applies(family) and not s.gain]
        values: dict[str, Any] = {}
        for name in wanted:
            spec = self.specs[name]
            if skip is not None and skip(spec):
                continue
            if node.has_parameter(name):
                value = node.get_parameter(name).value
            else:
                self.adopt_deprecated(node, spec)
                default = spec.default
                _widen_integer_override(node, spec)
                if spec.type.endswith("_array") and not default:
                    default = [""] if spec.type == "string_array" else [0.0]  # a typed empty list
                try:
                    value = node.declare_parameter(name, default, spec.descriptor(family)).value
                except InvalidParameterValueException as exc:  # out of the descriptor's range
                    given = node._parameter_overrides[name].value if name in getattr(
                        node, "_parameter_overrides", {}) else exc
                    raise NodeConfigError(spec.reason(given) or f"{name}: {exc}") from None
                except InvalidParameterTypeException:
                    given = node._parameter_overrides[name].value
                    raise NodeConfigError(spec.reason(given) or f"{name} must be a {spec.type}, "
                                                                f"got {given!r}") from None
            if spec.type.endswith("_array"):
                value = [v for v in (value or []) if v != ""] if spec.type == "string_array" else list(value or [])
            elif spec.type == "any" and hasattr(value, "tolist"):
                value = value.tolist()
            elif spec.type == "any" and isinstance(value, tuple):
                value = list(value)
            reason = spec.reason(value) if value is not None else None
            if reason:
                raise NodeConfigError(reason)
            values[name] = value
        return values

    def adopt_deprecated(self, node: Any, spec: Spec) -> None:
        """Before ``spec`` is declared on ``node``: a deprecated name of it given (``-p``, a
        parameter file) becomes the new name's value, with a one-line warning; both given and
        different is a ``NodeConfigError`` naming both (``resolve``).  Then ``set_parameters``
        takes the old name too (``accept_deprecated_names``)."""
        if not spec.deprecated_names:
            return
        accept_deprecated_names(node, {old: spec.name for old in spec.deprecated_names})
        overrides = getattr(node, "_parameter_overrides", None)
        if overrides is None:
            return
        given = {n: overrides[n].value for n in (spec.name, *spec.deprecated_names) if n in overrides}
        resolved, notes = self.resolve(given, given=set(given))
        for note in notes:
            node.get_logger().warning(note)
        if spec.name in resolved and spec.name not in overrides:
            from rclpy.parameter import Parameter

            overrides[spec.name] = Parameter(spec.name, value=resolved[spec.name])
        for old in spec.deprecated_names:
            overrides.pop(old, None)

    def refusal(self, params: Iterable[Any]) -> str | None:
        """The one-line reason the first of ``params`` (rclpy ``Parameter``s) is refused by the
        schema, or None: for an ``on_set_parameters`` callback."""
        for prm in params:
            spec = self.specs.get(prm.name)
            if spec is not None and not spec.gain and prm.value is not None:
                reason = spec.reason(prm.value)
                if reason:
                    return reason
        return None

    # ---- docs -------------------------------------------------------------------------------
    def markdown(self) -> str:
        """The schema as a Markdown section: a table of name, type, default, constraints,
        description."""
        lines = [f"## `{self.node}`", "", self.summary, "",
                 "| name | type | default | constraints | description |",
                 "|---|---|---|---|---|"]
        for s in self.specs.values():
            rules = []
            if s.range is not None:
                rules.append(_range_text(s).removeprefix("must be "))
            if s.one_of:
                rules.append("one of " + ", ".join(f"`{v}`" for v in s.one_of))
            if s.read_only is True:
                rules.append("read-only")
            elif s.read_only:
                rules.append("read-only for " + ", ".join(s.read_only))
            if s.families:
                rules.append("laws: " + ", ".join(s.families))
            if s.deprecated_names:
                rules.append("deprecated name: " + ", ".join(f"`{n}`" for n in s.deprecated_names))
            if s.config:
                rules.append({"bridge": "BridgeConfig", "mobile": "MobileConfig (mobile base)"}.get(s.config, s.config))
            default = "—" if s.default is None else f"`{s.default!r}`"
            lines.append(f"| `{s.name}` | {s.type} | {default} | {'; '.join(rules)} | "
                         f"{s.description.replace('|', '/')} |")
        return "\n".join(lines) + "\n"


def _deprecation_note(old: str, new: str, value: Any) -> str:
    """The one-line warning for a deprecated parameter name given (``resolve``, ``renamed``)."""
    return f"parameter '{old}' is deprecated: use '{new}' (given {old}:={value!r})"


def renamed(params: list[Any], table: dict[str, str], warn: Callable[[str], None]) -> list[Any]:
    """``params`` (rclpy ``Parameter``s of a ``set_parameters``) with each deprecated name
    (``table``: old -> new) as its new name, a warning each: a pre-set callback."""
    from rclpy.parameter import Parameter

    out = []
    for prm in params:
        new = table.get(prm.name)
        if new is not None:
            warn(_deprecation_note(prm.name, new, prm.value))
            prm = Parameter(new, prm.type_, prm.value)
        out.append(prm)
    return out


def disagreement(params: list[Any], table: dict[str, str]) -> str | None:
    """The one-line refusal when a name is set twice with different values (an old name and its
    new one, after ``renamed``), or None."""
    seen: dict[str, Any] = {}
    for prm in params:
        if prm.name in seen and seen[prm.name] != prm.value:
            old = ", ".join(f"'{o}'" for o, n in table.items() if n == prm.name)
            return (f"parameters {old} and '{prm.name}' are one parameter ({old} its deprecated "
                    f"name) and disagree: {seen[prm.name]!r} vs {prm.value!r}; give only '{prm.name}'")
        seen[prm.name] = prm.value
    return None


def unknown_parameter_reason(name: str, declared: Iterable[str], node_name: str = "") -> str:
    """The one-line refusal of a parameter ``name`` the node does not declare: the name, the
    node, the closest declared names (rclpy's own text names none: ``Invalid access to
    undeclared parameter(s): []``)."""

    declared = sorted(declared)
    near = difflib.get_close_matches(name, declared, n=3, cutoff=0.5)
    where = f"node '{node_name}'" if node_name else "this node"
    hint = f" (did you mean {', '.join(repr(n) for n in near)}?)" if near else ""
    return (f"parameter '{name}' is not a parameter of {where}{hint}; its parameters: "
            f"{', '.join(declared)}")


def guard_parameters(node: Any) -> dict[str, str]:
    """Install, once per node, the one pre-set callback of ``set_parameters`` (rclpy would
    concatenate the lists of two): deprecated names become their new names (``renamed``, the
    table returned: old -> new, ``accept_deprecated_names`` fills it) and a name the node does
    not declare is refused naming it (``unknown_parameter_reason``; raised as rclpy's
    ``ParameterNotDeclaredException``, which the parameter service turns into the result's
    reason).  Called by ``Schema.declare`` and ``declare_settings``."""
    known = getattr(node, "_rbd_deprecated_names", None)
    if known is not None:
        return known
    from rcl_interfaces.msg import SetParametersResult

    known = node._rbd_deprecated_names = {}

    def pre_set(ps: list[Any]) -> list[Any]:
        ps = renamed(ps, known, node.get_logger().warning)
        unknown = [p.name for p in ps if not node.has_parameter(p.name)]
        if unknown and not getattr(node, "_allow_undeclared_parameters", False):
            from rclpy.exceptions import ParameterNotDeclaredException

            exc = ParameterNotDeclaredException(unknown)
            exc.args = ("; ".join(unknown_parameter_reason(n, node.list_parameters([], 0).names,
                                                          node.get_fully_qualified_name())
                                  for n in unknown),)
            raise exc
        return ps

    node.add_pre_set_parameters_callback(pre_set)

    def refuse(ps: list[Any]) -> Any:
        reason = disagreement(ps, known)
        return SetParametersResult(successful=reason is None, reason=reason or "")

    node.add_on_set_parameters_callback(refuse)
    return known


def accept_deprecated_names(node: Any, table: dict[str, str]) -> None:
    """Make ``set_parameters`` on ``node`` take the deprecated names of ``table`` (old -> new):
    the node's pre-set callback (``guard_parameters``) renames them, its on-set callback
    refuses an old and a new name given together with different values."""
    guard_parameters(node).update(table)


@lru_cache(maxsize=None)
def schema(node: str) -> Schema:
    """The schema of ``node`` (``config/schema/NODE.yaml``)."""
    path = schema_dir() / f"{node}.yaml"
    if not path.is_file():
        names = ", ".join(sorted(p.stem for p in schema_dir().glob("*.yaml")))
        raise FileNotFoundError(f"no parameter schema for '{node}' ({path}); schemas: {names}")
    return Schema.from_yaml(path)


def parameters_markdown() -> str:
    """``docs/parameters.md``: every node's schema."""
    head = ("# Node parameters\n\nGenerated from `config/schema/*.yaml` by "
            "`python -m rbd_ros.ros.parameters --write`; do not edit by hand.  The robot "
            "parameters every node shares (`model_yaml`, `robot_description`, `urdf_path`, "
            "`base_link`, `tip_link`, `base_type`, `gravity`) are described in "
            "`rbd_ros/ros/robot_params.py`.\n\n")
    return head + "\n".join(schema(p.stem).markdown() for p in sorted(schema_dir().glob("*.yaml")))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--write"]:
        out = share_dir() / "docs" / "parameters.md"
        out.write_text(parameters_markdown())
        print(f"wrote {out}")
        return 0
    try:
        print(parameters_markdown() if not args else "\n".join(schema(a).markdown() for a in args))
    except FileNotFoundError as exc:
        print(f"parameters: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
