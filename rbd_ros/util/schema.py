"""The ROS-free view of a node's parameter schema (``config/schema/NODE.yaml``): the keys a
settings class of the core takes, as data.

A schema entry tagged ``config: TAG`` is a field of the ROS-free settings class ``TAG`` names
(``mujoco_bridge.yaml``: ``bridge`` = ``rbd_ros.sim.BridgeConfig``).  ``settings(node, tag)``
makes such a class a frozen dataclass whose fields, types and defaults are the schema's (each
key written once, in the schema), and ``check(config)`` refuses what the schema's ``range``,
``exclusive_min`` and ``one_of`` refuse, in one line naming the key.  The class keeps its own
``__post_init__`` for what the schema cannot say (coercions, cross-key rules).

The ROS side (``rbd_ros.ros.parameters``: descriptors, ``set_parameters``, the docs) reads the
same files; this module is what the lower floors may use (no rclpy).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Callable, Mapping

from rbd_ros.util import yaml_io
from rbd_ros.util.resources import share_dir

#: schema type -> field annotation (evaluated in the settings class's module)
FIELD_TYPES = {"double": "float", "integer": "int", "bool": "bool", "string": "str",
               "string_array": "tuple[str, ...]", "double_array": "tuple[float, ...]", "any": "Any"}


@lru_cache(maxsize=None)
def config_keys(node: str, tag: str) -> Mapping[str, Mapping[str, Any]]:
    """The entries of ``config/schema/NODE.yaml`` tagged ``config: TAG``, in file order."""


    path = share_dir() / "config" / "schema" / f"{node}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no parameter schema for '{node}' ({path})")
    params = (yaml_io.safe_load(path.read_text(encoding="utf-8")) or {}).get("parameters") or {}
    keys = {name: MappingProxyType(dict(entry)) for name, entry in params.items() if entry.get("config") == tag}
    if not keys:
        raise ValueError(f"{path}: no parameter has 'config: {tag}'")
    return MappingProxyType(keys)


def _frozen(value: Any) -> Any:
    """A schema default as a field default: lists become tuples (hashable, immutable)."""
    return tuple(value) if isinstance(value, list) else value


def reason(name: str, entry: Mapping[str, Any], value: Any) -> str | None:
    """Why the schema refuses ``value`` for key ``name`` (one line), or None."""
    choices = entry.get("one_of")
    if choices and value not in choices:
        return f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}"
    bounds = entry.get("range")
    if bounds is None:
        return None
    lo, hi = bounds
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{name} must be a number, got {value!r}"
    strict = bool(entry.get("exclusive_min"))
    if (math.isfinite(value) and (lo is None or value > lo or (value == lo and not strict))
            and (hi is None or value <= hi)):
        return None
    if entry.get("message"):
        return f"{name} {entry['message']}, got {value!r}"
    if hi is None:
        return f"{name} must be {'>' if strict else '>='} {lo:g}, got {value!r}"
    return f"{name} must be in {'(' if strict else '['}{lo:g}, {hi:g}], got {value!r}"


def check(config: Any, skip: tuple[str, ...] = ()) -> None:
    """``ValueError`` with the first key of ``config`` (a ``settings`` class) its schema
    refuses; keys in ``skip`` are checked by the class itself."""
    for name, entry in type(config).SCHEMA.items():
        if name not in skip:
            why = reason(name, entry, getattr(config, name))
            if why is not None:
                raise ValueError(why)


def settings(node: str, tag: str) -> Callable[[type], type]:
    """Class decorator: the keys of ``node``'s schema tagged ``config: tag`` become the
    fields of a frozen dataclass (schema order, type and default); ``cls.SCHEMA`` holds the
    entries for ``check``."""

    def make(cls: type) -> type:
        keys = config_keys(node, tag)
        cls.__annotations__ = {name: FIELD_TYPES[entry["type"]] for name, entry in keys.items()}
        for name, entry in keys.items():
            setattr(cls, name, _frozen(entry.get("default")))
        setattr(cls, "SCHEMA", keys)  # noqa: B010 (a class attribute the type ``type`` does not declare)
        return dataclass(frozen=True)(cls)

    return make


__all__ = ["FIELD_TYPES", "check", "config_keys", "reason", "settings"]
