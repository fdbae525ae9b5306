"""The bringup description, for every bundled robot and controller, and the launch files that
read it (with stand-in launch modules where ROS 2's launch is not installed)."""
from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest

from rbd_ros.ros.bringup.description import ARGUMENTS, CONTROLLER_TYPES, NodeSpec, describe, format_parameter
from rbd_ros.util.resources import bundled_robots, bundled_urdf

REPO = Path(__file__).resolve().parents[3]


def test_bundled_robots_are_there():
    assert {"planar2", "puma560", "arm7"} <= set(bundled_robots())


@pytest.mark.parametrize("robot", ["planar2", "puma560", "arm7"])
@pytest.mark.parametrize("controller", CONTROLLER_TYPES)
def test_every_robot_and_controller(robot, controller):
    nodes = describe(robot=robot, controller=controller, mode="lockstep")
    names = [n.name for n in nodes]
    expected = ["mujoco_bridge", "state_publisher", "dynamics_server"] + (
        [] if controller == "none" else ["controller"])
    assert names == expected
    for n in nodes:
        assert n.parameters["urdf_path"] == str(bundled_urdf(robot))
        assert Path(n.parameters["urdf_path"]).is_file()
    assert nodes[0].parameters["mode"] == "lockstep"
    if controller != "none":
        assert nodes[-1].parameters["type"] == controller
        assert nodes[-1].parameters["use_sim_time"] is True


def test_the_nodes_exist_as_subcommands_and_executables():
    from rbd_ros.cli import SUBCOMMANDS

    setup_py = (REPO / "setup.py").read_text()
    for spec in describe(controller="pd"):
        assert spec.subcommand in SUBCOMMANDS
        assert f'"{spec.executable} = ' in setup_py


def test_urdf_argument_and_chain_ends(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(bundled_urdf("planar2").read_text())
    nodes = describe(urdf=str(urdf), base_link="base_link", tip_link="tool0", controller="pd")
    for n in nodes:
        assert n.parameters["urdf_path"] == str(urdf.resolve())
        assert n.parameters["base_link"] == "base_link" and n.parameters["tip_link"] == "tool0"


def test_services_only_description():
    nodes = describe(robot="arm7", controller="none", simulate=False, use_sim_time="true")
    assert [n.name for n in nodes] == ["dynamics_server"]
    assert nodes[0].parameters["use_sim_time"] is False  # no simulator, no /clock


@pytest.mark.parametrize("kwargs, message", [
    ({"robot": "r2d2"}, "unknown robot 'r2d2'; bundled robots: "),
    ({"urdf": "/nonexistent.urdf"}, "urdf '/nonexistent.urdf' does not exist"),
    ({"controller": "lqr"}, "unknown controller 'lqr'"),
    ({"mode": "slow"}, "unknown mode 'slow'"),
    ({"use_sim_time": "maybe"}, "use_sim_time must be true or false"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        describe(**kwargs)


def test_ros_args_formatting():
    spec = NodeSpec("x", "x", "n", {"a": True, "b": [1.0, 2.5], "c": "s", "d": 3})
    assert spec.ros_args() == ["--ros-args", "-r", "__node:=n", "-p", "a:=true", "-p",
                               "b:=[1.0, 2.5]", "-p", "c:=s", "-p", "d:=3"]
    assert format_parameter(0.1) == "0.1"


# ---- launch files -------------------------------------------------------------------------
def _fake_launch_modules() -> dict[str, types.ModuleType]:
    """Minimal stand-ins for launch / launch_ros recording what the launch file builds."""
    launch = types.ModuleType("launch")
    actions = types.ModuleType("launch.actions")
    subs = types.ModuleType("launch.substitutions")
    launch_ros = types.ModuleType("launch_ros")
    ros_actions = types.ModuleType("launch_ros.actions")

    class LaunchDescription(list):
        pass

    class DeclareLaunchArgument:
        def __init__(self, name, default_value="", description=""):
            self.name, self.default_value, self.description = name, default_value, description

    class OpaqueFunction:
        def __init__(self, function):
            self.function = function

    class LaunchConfiguration:
        def __init__(self, name):
            self.name = name

        def perform(self, context):
            return context[self.name]

    class Node:
        def __init__(self, **kw):
            self.kw = kw

    launch.LaunchDescription = LaunchDescription
    actions.DeclareLaunchArgument, actions.OpaqueFunction = DeclareLaunchArgument, OpaqueFunction
    subs.LaunchConfiguration = LaunchConfiguration
    ros_actions.Node = Node
    return {"launch": launch, "launch.actions": actions, "launch.substitutions": subs,
            "launch_ros": launch_ros, "launch_ros.actions": ros_actions}


def _load_launch(name: str, monkeypatch, real: bool = False):
    """The launch file as a module; with stand-in launch modules (recording what the file
    asks for) unless ``real``, also where ROS 2's launch is installed."""
    if not real:
        for mod, fake in _fake_launch_modules().items():
            monkeypatch.setitem(sys.modules, mod, fake)
    spec = importlib.util.spec_from_file_location(name, REPO / "launch" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_launch(module, overrides: dict[str, str]):
    ld = module.generate_launch_description()
    declared = {a.name: a.default_value for a in ld if hasattr(a, "default_value")}
    context = {**declared, **overrides}
    nodes = []
    for action in ld:
        if hasattr(action, "function"):
            nodes += action.function(context)
    return declared, nodes


@pytest.mark.parametrize("overrides", [
    {"robot": "arm7", "controller": "pid", "mode": "lockstep"},
    {},  # every default
    {"robot": "planar2", "controller": "none", "use_sim_time": "false"},
    {"urdf": str(REPO / "urdf" / "puma560.urdf"), "base_link": "base_link",
     "controller": "task_pd", "mode": "max"},
], ids=["arm7-pid-lockstep", "defaults", "no-controller", "urdf-task_pd-max"])
def test_bringup_launch_file_follows_the_description(monkeypatch, overrides):
    """The nodes the launch file starts (executable, name, package, parameters, in order) are
    exactly those of ``describe`` for the same arguments, which ``rbd-ros bringup`` starts."""
    module = _load_launch("bringup.launch", monkeypatch)
    declared, nodes = _run_launch(module, overrides)
    assert declared == {k: v[0] for k, v in ARGUMENTS.items()}
    expected = describe(**{**declared, **overrides})
    assert [n.kw["executable"] for n in nodes] == [s.executable for s in expected]
    assert [n.kw["name"] for n in nodes] == [s.name for s in expected]
    assert [n.kw["parameters"] for n in nodes] == [[s.parameters] for s in expected]
    assert all(n.kw["package"] == "rbd_ros" for n in nodes)
    wanted = ["mujoco_bridge", "state_publisher", "dynamics_server"]
    if overrides.get("controller", "computed_torque") != "none":
        wanted.append("controller")
    assert [n.kw["executable"] for n in nodes] == wanted


@pytest.mark.parametrize("overrides", [
    {"composed": "true", "mode": "realtime", "rt_priority": "80"},
    {"composed": "true", "robot": "arm7", "controller": "resolved_acceleration", "mode": "lockstep"},
    {"composed": "false", "rt_priority": "50"},
], ids=["composed-rt80", "composed-arm7-lockstep", "separate-rt50"])
def test_launch_composed_and_rt_priority_reach_the_description(monkeypatch, overrides):
    """``composed:=true`` / ``rt_priority:=N`` (text, as launch gives them) make the same nodes as
    the CLI's ``--composed --rt-priority N``: no controller process, the law and the priority
    in the bridge's parameters."""
    from rbd_ros.ros.bringup.cli import build_plan, parse_args

    module = _load_launch("bringup.launch", monkeypatch)
    declared, nodes = _run_launch(module, overrides)
    args = {**declared, **overrides}
    expected = describe(**args)
    assert [(n.kw["executable"], n.kw["name"]) for n in nodes] == \
        [(s.executable, s.name) for s in expected]
    assert [n.kw["parameters"] for n in nodes] == [[s.parameters] for s in expected]
    bridge = nodes[0].kw["parameters"][0]
    composed = overrides["composed"] == "true"
    assert ("controller" in [n.kw["name"] for n in nodes]) is not composed
    assert bridge.get("controller_type") == (args["controller"] if composed else None)
    assert bridge.get("rt_priority") == (int(overrides["rt_priority"]) if "rt_priority" in overrides else None)
    if not composed:  # the separate controller's cycles run at the same priority
        ctl = next(n.kw["parameters"][0] for n in nodes if n.kw["name"] == "controller")
        assert ctl.get("rt_priority") == bridge.get("rt_priority")
    # the CLI with the same choices asks describe() for the same bridge
    argv = ["--robot", args["robot"], "--controller", args["controller"], "--mode", args["mode"]]
    argv += ["--composed"] if composed else []
    argv += ["--rt-priority", overrides["rt_priority"]] if "rt_priority" in overrides else []
    cli = {s.name: s.parameters for s in build_plan(parse_args(argv)).specs}
    assert set(cli) == {n.kw["name"] for n in nodes}
    for key in ("controller_type", "rt_priority", "mode", "urdf_path", "model_yaml"):
        assert cli["mujoco_bridge"].get(key) == bridge.get(key), key
    if not composed:
        assert cli["controller"].get("rt_priority") == bridge.get("rt_priority")


@pytest.mark.parametrize("value", ["100", "-1", "high", "2.5"])
def test_bad_rt_priority(value):
    with pytest.raises(ValueError, match="rt_priority must be"):
        describe(rt_priority=value)


def test_dynamics_launch_file_starts_only_the_services(monkeypatch):
    module = _load_launch("dynamics.launch", monkeypatch)
    declared, nodes = _run_launch(module, {"robot": "puma560"})
    assert set(declared) == {"robot", "urdf", "base_link", "tip_link", "use_sim_time"}
    expected = describe(robot="puma560", use_sim_time="false", controller="none",
                        simulate=False)
    assert [n.kw["executable"] for n in nodes] == ["dynamics_server"]
    assert [n.kw["parameters"] for n in nodes] == [[s.parameters] for s in expected]
    assert nodes[0].kw["parameters"][0]["urdf_path"] == str(bundled_urdf("puma560"))


def test_launch_files_with_real_launch():
    """With ROS 2's launch installed, the launch files declare the description's arguments."""
    pytest.importorskip("launch_ros", reason="launch/launch_ros are not installable from PyPI here")
    for name, expected in (("bringup.launch", set(ARGUMENTS)),
                           ("dynamics.launch", {"robot", "urdf", "base_link", "tip_link",
                                                "use_sim_time"})):
        module = _load_launch(name, pytest.MonkeyPatch(), real=True)
        ld = module.generate_launch_description()
        assert {a.name for a in ld.get_launch_arguments()} == expected
