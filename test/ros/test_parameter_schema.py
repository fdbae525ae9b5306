"""Declarative node parameters (``rbd_ros.ros.parameters``, ``config/schema/*.yaml``; issue
28), ROS-free: the schema's defaults and choices are the core's own constants (the ROS-free
modules the nodes hand them to), its refusals are the one-line messages the nodes gave by
hand, and ``docs/parameters.md`` is what the schemas render."""
from __future__ import annotations

import math

import pytest

from rbd_ros.ros.parameters import parameters_markdown, schema
from ros_helpers import REPO


def test_controller_defaults_are_the_core_constants() -> None:
    from rbd_ros.control import mobile_laws as ml
    from rbd_ros.control.gains import DEFAULT_BANDWIDTH, DEFAULT_DAMPING_RATIO, DEFAULT_RATE, LAWS, gain_names
    from rbd_ros.control.mobile_loop import DEFAULT_PATH_SPEED, SYNCS
    from rbd_ros.control.trajectory import INTERPOLATIONS

    s = schema("controller")
    assert s["bandwidth"].default == DEFAULT_BANDWIDTH and s["damping_ratio"].default == DEFAULT_DAMPING_RATIO
    assert s["rate"].default == DEFAULT_RATE
    assert s["base_bandwidth"].default == ml.DEFAULT_BASE_BANDWIDTH
    assert s["lookahead"].default == ml.DEFAULT_LOOKAHEAD
    assert s["cmd_vel_timeout"].default == ml.DEFAULT_CMD_VEL_TIMEOUT
    assert tuple(s["max_velocity"].default) == ml.DEFAULT_MAX_VELOCITY
    assert tuple(s["max_acceleration"].default) == ml.DEFAULT_MAX_ACCELERATION
    assert s["path_speed"].default == DEFAULT_PATH_SPEED
    assert s["sync"].one_of == SYNCS and s["interpolation"].one_of == INTERPOLATIONS
    assert s["wheel_effort_limit"].default == math.inf
    # every gain a law takes has its (gain) entry; nothing else is a gain
    every_gain = {g for law in LAWS for g in gain_names(law)}
    assert every_gain == {n for n, spec in s.specs.items() if spec.gain}


def test_dynamics_server_and_robot_defaults_are_the_core_constants() -> None:
    from rbd_ros.services import DEFAULT_MAX_POINTS, DEFAULT_MAX_REQUEST_SECONDS

    s = schema("dynamics_server")
    assert s["max_points"].default == DEFAULT_MAX_POINTS
    assert s["max_request_seconds"].default == DEFAULT_MAX_REQUEST_SECONDS
    assert schema("robot").defaults() == {"model_yaml": "", "robot_description": "", "urdf_path": "",
                                          "package_paths": [], "base_link": "", "tip_link": "",
                                          "base_type": "", "inertia_fix": True, "gravity": None}


@pytest.mark.parametrize("name, value, reason", [
    ("state_timeout", -1.0, "state_timeout must be >= 0 s (0 = never), got -1.0"),
    ("state_timeout", math.nan, "state_timeout must be >= 0 s (0 = never), got nan"),
    ("rate", 0.0, "rate must be positive, got 0.0"),
    ("rt_priority", 100, "rt_priority must be 0 (off) to 99, got 100"),
    ("rt_priority", True, "rt_priority must be 0 (off) to 99, got True"),
    ("trigger", "x", "trigger must be one of ('joint_states', 'timer'), got 'x'"),
    ("interpolation", "linear", "interpolation must be one of ('auto', 'cubic', 'quintic'), got 'linear'"),
    ("rate", "fast", "rate must be positive, got 'fast'"),
    ("trigger", 5, "trigger must be a string, got 5"),
])
def test_refusals_are_one_line_and_name_the_parameter(name, value, reason) -> None:
    assert schema("controller")[name].reason(value) == reason


@pytest.mark.parametrize("name, value", [("state_timeout", 0.0), ("rate", 1e-3), ("rt_priority", 99),
                                         ("rt_priority", 0), ("trigger", "timer"), ("rate", 500)])
def test_edge_values_are_accepted(name, value) -> None:
    assert schema("controller")[name].reason(value) is None


def test_rt_priority_range_is_check_priority() -> None:
    """The schema's range and the realtime module's check (bridge, bringup) agree on 0..99."""
    from rbd_ros.sim.realtime import check_priority

    spec = schema("controller")["rt_priority"]
    for value in (-1, 0, 1, 99, 100):
        try:
            check_priority(value)
            core = None
        except ValueError as exc:
            core = str(exc)
        assert spec.reason(value) == core


def test_docs_parameters_md_is_generated() -> None:
    assert (REPO / "docs" / "parameters.md").read_text() == parameters_markdown(), \
        "docs/parameters.md is stale: python -m rbd_ros.ros.parameters --write"


def test_unknown_schema_is_one_line() -> None:
    with pytest.raises(FileNotFoundError, match="no parameter schema for 'nope'"):
        schema("nope")


@pytest.mark.parametrize("cls_name, tag", [("BridgeConfig", "bridge"), ("MobileConfig", "mobile")])
def test_bridge_schema_is_the_settings_classes(cls_name, tag) -> None:
    """The bridge's schema lists exactly the fields of the ROS-free settings class with their
    defaults, and each range and choice it documents is what the class accepts and refuses."""
    import dataclasses

    from rbd_ros.sim.mobile_sim import MobileConfig
    from rbd_ros.sim.simulator import BridgeConfig

    cls = {"BridgeConfig": BridgeConfig, "MobileConfig": MobileConfig}[cls_name]
    specs = {n: s for n, s in schema("mujoco_bridge").specs.items() if s.config == tag}
    assert set(specs) == {f.name for f in dataclasses.fields(cls)}
    built = cls()
    for name, spec in specs.items():
        default = spec.default
        value = getattr(built, name)
        assert (list(value) if isinstance(value, tuple) else value) == default, name
        for choice in spec.one_of:
            cls(**{name: choice})  # accepted
        if spec.one_of:
            with pytest.raises(ValueError, match=name):
                cls(**{name: "no_such_choice"})
        if spec.range is not None and spec.type in ("double", "integer"):
            lo, hi = spec.range
            cls(**{name: lo if not spec.exclusive_min else lo + (1 if spec.type == "integer" else 1e-3)})
            with pytest.raises(ValueError, match=name):
                cls(**{name: lo if spec.exclusive_min else lo - 1})
            if hi is not None:
                cls(**{name: hi})
                with pytest.raises(ValueError, match=name):
                    cls(**{name: hi + 1})
