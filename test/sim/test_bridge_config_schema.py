"""The bridge's keys written once (issue 28): ``BridgeConfig`` takes its fields, defaults,
ranges and choices from ``config/schema/mujoco_bridge.yaml`` as data
(``rbd_ros.util.schema.settings``), so a key changed in the schema changes the class.

Oracles: the schema file parsed here with ``yaml`` (not through ``rbd_ros``); a schema written
in a temporary folder (``share_dir`` pointed at it), whose keys, defaults and limits the
decorated class must follow."""
from __future__ import annotations

import dataclasses
import math
import re
import textwrap
from pathlib import Path

import pytest
import yaml

from rbd_ros.sim.simulator import MODES, BridgeConfig
from rbd_ros.util import schema

REPO = Path(__file__).resolve().parents[2]


def _bridge_entries() -> dict[str, dict]:
    data = yaml.safe_load((REPO / "config" / "schema" / "mujoco_bridge.yaml").read_text())
    return {k: v for k, v in data["parameters"].items() if v.get("config") == "bridge"}


def test_fields_and_defaults_are_the_schemas() -> None:
    entries = _bridge_entries()
    assert [f.name for f in dataclasses.fields(BridgeConfig)] == list(entries)  # the schema's order
    built = BridgeConfig()
    for name, entry in entries.items():
        value = getattr(built, name)
        assert (list(value) if isinstance(value, tuple) else value) == entry["default"], name
    assert list(MODES) == entries["mode"]["one_of"]


def test_refusals_name_the_key_and_the_limit() -> None:
    cases = [({"timestep": 0.0}, "timestep must be > 0, got 0.0"),
             ({"timestep": math.inf}, "timestep must be > 0, got inf"),
             ({"publish_every": 0}, "publish_every must be >= 1, got 0"),
             ({"brake_damping": math.nan}, "brake_damping must be >= 0, got nan"),
             ({"command_timeout": "soon"}, "command_timeout must be a number, got 'soon'"),
             ({"mode": "fast"}, "mode must be one of realtime, lockstep, max, got 'fast'"),
             ({"command_mode": "current"}, "command_mode must be one of torque, voltage, got 'current'"),
             ({"rt_priority": 100}, "rt_priority"),
             ({"integrator": "leapfrog"}, "integrator must be one of auto, ")]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as err:
            BridgeConfig(**kwargs)
        assert str(err.value).startswith(message), (kwargs, str(err.value))
    assert BridgeConfig(integrator="RK4").integrator == "RK4"  # case-insensitive, by the core's table
    assert BridgeConfig(cpu_affinity=1).cpu_affinity == (1,)  # one CPU as a number


def test_a_schema_change_changes_the_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "config" / "schema"
    folder.mkdir(parents=True)
    (folder / "demo.yaml").write_text(textwrap.dedent("""\
        node: demo
        parameters:
          rate: {type: double, default: 250.0, config: demo, range: [0.0, 1000.0], exclusive_min: true}
          names: {type: string_array, default: [a, b], config: demo}
          kind: {type: string, default: slow, config: demo, one_of: [slow, fast]}
          level: {type: integer, default: 3, config: demo, range: [0, 9], message: must be 0 to 9}
          other: {type: string, default: x}
        """))
    monkeypatch.setattr(schema, "share_dir", lambda: tmp_path)  # the name schema looks up
    schema.config_keys.cache_clear()
    try:
        @schema.settings("demo", "demo")
        class Demo:
            def __post_init__(self) -> None:
                schema.check(self)

        assert [f.name for f in dataclasses.fields(Demo)] == ["rate", "names", "kind", "level"]
        assert Demo() == Demo(rate=250.0, names=("a", "b"), kind="slow", level=3)
        Demo(rate=1000.0, kind="fast", level=9)
        for bad, message in [({"rate": 0.0}, "rate must be in (0, 1000], got 0.0"),
                             ({"rate": 1000.5}, "rate must be in (0, 1000], got 1000.5"),
                             ({"kind": "medium"}, "kind must be one of slow, fast, got 'medium'"),
                             ({"level": -1}, "level must be 0 to 9, got -1")]:
            with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
                Demo(**bad)
        with pytest.raises(dataclasses.FrozenInstanceError):
            Demo().rate = 1.0
        with pytest.raises(ValueError, match="no parameter has 'config: nothing'"):
            schema.config_keys("demo", "nothing")
    finally:
        schema.config_keys.cache_clear()
