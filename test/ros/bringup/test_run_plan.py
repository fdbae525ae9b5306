"""The bringup as plan, runner and tasks (issue 40, items 1 and 2): a ``RunPlan`` is built and
inspected without ROS (no rclpy module imported: checked in a fresh interpreter, ``sys.modules``),
its task is an object with the runner's small interface, and the robot's URDF is converted once
in the bringup process (``rbd_ros.urdf.convert.convert_tree`` counted: a ``--urdf`` arm's tour
converted it twice before, once for the model and once for the tour's guard points; the press
task twice, once for the model and once for its probe's collision shapes)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from robots_data import REPO, example_robot_urdf

#: a 2-joint arm of example-robot-data no other test names
TWODOF = "asr_twodof_description/urdf/TwoDofs.urdf"
UR10_LIMITED = "ur_description/urdf/ur10_joint_limited_robot.urdf"

#: counts the URDF conversions of this process (every converter path ends in convert_tree)
COUNTER = """
import rbd_ros.urdf.convert as _convert
CONVERSIONS = []
_tree = _convert.convert_tree
def _counted(*a, **k):
    CONVERSIONS.append(1)
    return _tree(*a, **k)
_convert.convert_tree = _counted
"""


def _python(script: str, timeout: float = 300) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                         timeout=timeout, cwd=REPO, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _count_conversions(monkeypatch) -> list:
    import rbd_ros.urdf.convert as convert

    calls: list = []
    tree = convert.convert_tree

    def counted(*a, **k):
        calls.append(a[1:3])
        return tree(*a, **k)

    monkeypatch.setattr(convert, "convert_tree", counted)
    return calls


def test_a_plan_holds_the_robot_its_task_and_nodes_and_converts_once(monkeypatch) -> None:
    from rbd_ros.ros.bringup.cli import make_plan, parse_args
    from rbd_ros.ros.bringup.runner import Runner
    from rbd_ros.ros.bringup.tour_task import ExcitationTask, TourTask

    calls = _count_conversions(monkeypatch)
    urdf = str(example_robot_urdf(TWODOF))
    plan = make_plan(parse_args(["--urdf", urdf, "--controller", "pd_gravity", "--floor", "none", "--quiet"]))
    # one conversion of the URDF for the whole plan (the model and the tour's guard points): two before
    assert len(calls) == 1, calls
    assert type(plan.task) is TourTask and plan.robot.model is plan.model and plan.model.name == "twodofs"
    assert plan.robot.conversion is not None and plan.robot.conversion.model.joint_names == ("J1", "J2")
    specs = {s.name: s.parameters for s in plan.specs}
    assert {"mujoco_bridge", "controller", "dynamics_server"} <= set(specs)
    assert specs["mujoco_bridge"]["initial_positions"] == pytest.approx(plan.tour.start.tolist())
    assert specs["controller"]["urdf_path"] == str(example_robot_urdf(TWODOF).resolve())
    assert all(callable(getattr(plan.task, m)) for m in ("topics", "start", "connect", "drive"))
    runner = Runner(plan)  # built without ROS too: it starts nothing until run()
    assert runner.model is plan.model and runner.procs == [] and runner.specs is plan.specs
    calls.clear()
    exc = make_plan(parse_args(["--robot", "planar2", "--tour", "excitation", "--quiet"]))
    assert type(exc.task) is ExcitationTask and exc.tour.summary() in exc.task.summary()
    assert len(calls) == 1  # a model file: its URDF converted once, for the guard points only
    # --no-services: the same nodes but the dynamics server; its parameters refused by name
    bare = make_plan(parse_args(["--robot", "planar2", "--no-services", "--quiet"]))
    assert [s.name for s in bare.specs] == ["mujoco_bridge", "state_publisher", "controller"]
    with pytest.raises(ValueError, match="node .dynamics_server.: the bringup starts mujoco_bridge, "
                                         "state_publisher, controller"):
        make_plan(parse_args(["--robot", "planar2", "--no-services", "--quiet",
                              "-p", "dynamics_server:max_points:=10"]))


@pytest.mark.slow
def test_a_plan_is_built_and_inspected_without_ros() -> None:
    """In a fresh interpreter (this one may have loaded rclpy for other tests)."""
    urdf = str(example_robot_urdf(TWODOF))
    got = _python(f"""
import json, sys
from rbd_ros.ros.bringup.cli import make_plan, parse_args
from rbd_ros.ros.bringup.runner import Runner

plan = make_plan(parse_args(["--urdf", {urdf!r}, "--controller", "pd_gravity", "--floor", "none", "--quiet"]))
runner = Runner(plan)
print(json.dumps({{"task": type(plan.task).__name__, "nodes": sorted(s.name for s in plan.specs),
                  "ros": sorted(m for m in sys.modules if m.split(".")[0] in
                                ("rclpy", "rosidl_runtime_py", "rcl_interfaces", "sensor_msgs"))}}))
""")
    assert got["ros"] == [], got["ros"]  # nothing of ROS imported to build and inspect a plan
    assert got["task"] == "TourTask" and "mujoco_bridge" in got["nodes"]


@pytest.mark.slow
def test_a_press_plan_converts_the_urdf_once() -> None:
    """The press task's plan (its contact site search takes seconds): the probe's collision
    shapes from the conversion the model came from."""
    urdf = str(example_robot_urdf(UR10_LIMITED))
    got = _python(COUNTER + f"""
import json, sys
from rbd_ros.ros.bringup.cli import make_plan, parse_args

plan = make_plan(parse_args(["--urdf", {urdf!r}, "--task", "press", "--controller", "impedance"]))
bridge = next(s.parameters for s in plan.specs if s.name == "mujoco_bridge")
print(json.dumps({{"task": type(plan.task).__name__, "conversions": len(CONVERSIONS),
                  "scene": bridge["scene"], "initial": bridge["initial_positions"],
                  "above": [float(x) for x in plan.task.site.q_above],
                  "ros": [m for m in sys.modules if m.startswith("rclpy")]}}))
""")
    assert got["task"] == "PressTask" and got["ros"] == [] and got["scene"] == "table"
    assert got["initial"] == pytest.approx(got["above"])
    assert got["conversions"] == 1, got


@pytest.mark.slow
def test_a_bringup_run_converts_the_urdf_once_in_its_process() -> None:
    """A whole short run through the nodes (started, the tour sent, reported): the bringup
    process converts the URDF once (the nodes are processes of their own)."""
    urdf = str(example_robot_urdf(TWODOF))
    got = _python(COUNTER + f"""
import json
from rbd_ros.ros.bringup.cli import main

rc = main(["--urdf", {urdf!r}, "--controller", "pd_gravity", "--floor", "none", "--duration", "0.3", "--quiet"])
print(json.dumps({{"rc": rc, "conversions": len(CONVERSIONS)}}))
""", timeout=600)
    assert got == {"rc": 0, "conversions": 1}


def test_the_bridge_with_a_scene_converts_the_urdf_once(monkeypatch) -> None:
    """The bridge node loads its robot (``robot_model``: one conversion) and hands the
    conversion to the ``Simulator`` for the scene's collision shapes (a second one before)."""
    from rbd_ros.ros.bringup.plan import load_robot
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    urdf = str(example_robot_urdf(UR10_LIMITED))
    calls = _count_conversions(monkeypatch)
    loaded = load_robot({"urdf_path": urdf})
    assert len(calls) == 1
    quiet = lambda level, msg: None  # noqa: E731
    sim = Simulator(loaded.model, BridgeConfig(mode="lockstep", command_timeout=0.0), scene=load_scene("table"),
                    urdf=loaded.urdf, log=quiet, conversion=loaded.conversion)
    assert len(calls) == 1, calls  # the process's one conversion
    again = Simulator(loaded.model, BridgeConfig(mode="lockstep", command_timeout=0.0), scene=load_scene("table"),
                      urdf=loaded.urdf, log=quiet)
    assert len(calls) == 2  # without it, the URDF converted again: the same shapes
    assert [(c.body, c.kind, c.size) for c in sim.collision] == [(c.body, c.kind, c.size) for c in again.collision]
    assert len(sim.collision) > 0 and sim.site.q_above.tolist() == again.site.q_above.tolist()
