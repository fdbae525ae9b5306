"""``rbd-ros bringup`` takes the user's setup (issue 29): ``--params-file FILE`` (a ROS 2
parameter file) and ``-p NODE:NAME:=VALUE`` for the nodes it starts, every node's parameters
passed as a parameter file (any URDF text or path), bad input refused in one line before any
node starts.

Oracles: rcl's own reading of the parameter files (a node started with them answers
``get_parameters``), PyYAML's reading of the file written, and the controller's own log line
of the gains it runs with (end to end on UR3 from a path with ``': '`` and ``' #'``, which
``-p urdf_path:=...`` could not carry).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
import yaml

from rbd_ros.ros.bringup.description import describe
from rbd_ros.ros.bringup.params import (
    ALL_NODES,
    apply_overrides,
    load_params_file,
    node_arguments,
    parse_overrides,
)
from robots_data import example_robot_urdf
from ros_helpers import REPO, NodeProcess

UR3 = "ur_description/urdf/ur3_robot.urdf"


def test_overrides_parse_as_rcl_reads_them(tmp_path) -> None:
    got = parse_overrides(["controller:kp:=[1, 2.5]", "/dynamics_server:max_points:=77",
                           "use_sim_time:=false", "controller:trigger:=timer"])
    assert got == {"controller": {"kp": [1, 2.5], "trigger": "timer"},
                   "dynamics_server": {"max_points": 77}, ALL_NODES: {"use_sim_time": False}}
    f = tmp_path / "p.yaml"
    f.write_text("/**:\n  ros__parameters:\n    gravity: [0.0, 0.0, -9.8]\n"
                 "/controller:\n  ros__parameters:\n    kd: [3, 4]\n    nested: {a: 1}\n")
    assert load_params_file(f) == {ALL_NODES: {"gravity": [0.0, 0.0, -9.8]},
                                   "controller": {"kd": [3, 4], "nested.a": 1}}


@pytest.mark.parametrize("items, message", [
    (["kp=3"], "-p kp=3: not NODE:NAME:=VALUE"),
    (["controller:kp:=[1, 2"], "-p controller:kp:=[1, 2: the value is not YAML"),
    (["robot:kp:=1"], "parameters for node 'robot': the bringup starts mujoco_bridge, state_publisher, "
                      "dynamics_server, controller"),
    (["dynamics_servr:max_points:=3"], "parameters for node 'dynamics_servr': the bringup starts"),
    (["controller:kpp:=1"], "node 'controller' has no parameter 'kpp'"),
    (["controller:tip_link:=x"], "parameter controller:tip_link: the bringup sets it from --tip-link; use that"),
    (["mujoco_bridge:initial_positions:=[0]"], "sets it from --start"),
    (["dynamics_server:max_points:=-3"], "parameter dynamics_server:max_points: max_points must be"),
    (["controller:trigger:=sometimes"], "parameter controller:trigger: "),
    (["controller:use_sim_time:=false"], "sets it from nothing: the bringup's nodes run on the bridge's"),
    (["max_pointz:=3"], "parameter /**:max_pointz: none of the nodes the bringup starts"),
])
def test_bad_overrides_are_one_line(items, message) -> None:
    specs = describe(robot="puma560", controller="computed_torque", mode="lockstep")
    with pytest.raises(ValueError) as info:
        apply_overrides(specs, [parse_overrides(items)])
    assert message in str(info.value) and "\n" not in str(info.value)


def test_bad_files_are_one_line(tmp_path) -> None:
    f = tmp_path / "p.yaml"
    with pytest.raises(ValueError, match="no such file"):
        load_params_file(tmp_path / "none.yaml")
    f.write_text("controller:\n  kp: [1]\n")
    with pytest.raises(ValueError, match="node 'controller' has no 'ros__parameters:' mapping"):
        load_params_file(f)
    f.write_text("controller: [\n")
    with pytest.raises(ValueError, match="not YAML"):
        load_params_file(f)


def test_merge_order_and_composed_routing() -> None:
    specs = describe(robot="puma560", controller="pd", mode="lockstep")
    out = {s.name: s.parameters for s in apply_overrides(specs, [
        {"controller": {"kp": [1.0] * 6, "kd": [2.0] * 6}, ALL_NODES: {"gravity": [0, 0, -9.8]}},
        parse_overrides(["controller:kd:=[3, 3, 3, 3, 3, 3]"])])}
    assert out["controller"]["kp"] == [1.0] * 6 and out["controller"]["kd"] == [3.0] * 6  # -p wins
    assert all(out[n]["gravity"] == [0.0, 0.0, -9.8] for n in out)  # widened to doubles
    # a usual file's "/**: use_sim_time: true" is what the bringup sets: accepted, nothing changed
    same = apply_overrides(specs, [{ALL_NODES: {"use_sim_time": True}}])
    assert [s.parameters for s in same] == [s.parameters for s in specs]
    composed = describe(robot="puma560", controller="pd", mode="lockstep", composed=True)
    routed = apply_overrides(composed, [parse_overrides(["controller:kp:=[5, 5, 5, 5, 5, 5]"])])
    bridge = next(s for s in routed if s.name == "mujoco_bridge")
    assert bridge.parameters["kp"] == [5.0] * 6  # the law runs in the bridge


@pytest.mark.slow
def test_parameter_files_reach_the_node_as_written(tmp_path) -> None:
    """rcl reads the written file: a path with ': ' and ' #' (a -p value could not hold it)
    and a URDF with XML comments arrive byte for byte (the node's get_parameters)."""
    from rcl_interfaces.srv import GetParameters

    from ros_helpers import ros_context

    folder = tmp_path / "my arms: v2 #1"
    folder.mkdir()
    urdf = folder / "ur3 'copy'.urdf"
    shutil.copy(example_robot_urdf(UR3), urdf)
    text = urdf.read_text()
    spec = next(s for s in describe(urdf=str(urdf), controller="none", mode="lockstep",
                                    simulate=False, use_sim_time=False))
    spec = apply_overrides([spec], [parse_overrides(["dynamics_server:max_points:=77",
                                                     "dynamics_server:service_namespace:=paramfile"])])[0]
    args = node_arguments(spec, tmp_path)
    assert yaml.safe_load((tmp_path / "dynamics_server.yaml").read_text())[
        "dynamics_server"]["ros__parameters"]["urdf_path"] == str(urdf)
    proc = NodeProcess(args)
    try:
        proc.wait_for("dynamics_server: ready", 180)
        import rclpy

        with ros_context() as ctx:
            node = rclpy.create_node("param_probe", context=ctx)
            client = node.create_client(GetParameters, "/dynamics_server/get_parameters")
            assert client.wait_for_service(timeout_sec=30)
            future = client.call_async(GetParameters.Request(names=["urdf_path", "max_points"]))
            from rclpy.executors import SingleThreadedExecutor

            executor = SingleThreadedExecutor(context=ctx)
            executor.add_node(node)
            executor.spin_until_future_complete(future, timeout_sec=30)
            values = future.result().values
            assert values[0].string_value == str(urdf) and values[1].integer_value == 77
            executor.shutdown()
            node.destroy_node()
    finally:
        proc.stop()
    assert "<!--" in text


@pytest.mark.slow
def test_bringup_with_params_file_and_p_on_a_path_rcl_could_not_parse(tmp_path) -> None:
    folder = tmp_path / "arms: v2 #1"
    folder.mkdir()
    urdf = folder / "ur3.urdf"
    shutil.copy(example_robot_urdf(UR3), urdf)
    params = tmp_path / "params.yaml"
    kp = [400.0, 400.0, 300.0, 100.0, 100.0, 50.0]
    params.write_text(yaml.safe_dump({"controller": {"ros__parameters": {"kp": kp, "kd": [1.0] * 6}},
                                      "/**": {"ros__parameters": {"use_sim_time": True}},  # as usual files
                                      "move_group": {"ros__parameters": {"x": 1}}}))  # another launch's
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--urdf", str(urdf), "--controller", "pd_gravity",
         "--mode", "lockstep", "--duration", "1.0", "--segment-time", "1.0", "--quiet",
         "--params-file", str(params), "-p", "controller:kd:=[40, 40, 30, 10, 10, 5]",
         "--record", str(out), "--no-video"],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"[bringup] --params-file {params}: node 'move_group' is not started here" in proc.stdout
    page = (out / "index.html").read_text()
    gains = dict(re.findall(r"<td>(k[pd])</td><td>([^<]*)</td>", page))
    assert gains, page[-2000:]
    def values(text: str) -> list[float]:
        return [float(x) for x in text.split("]")[0].strip("[").split(",")]

    assert values(gains["kp"]) == kp and "model" not in gains["kp"]  # the file's
    assert values(gains["kd"]) == [40, 40, 30, 10, 10, 5] and "model" not in gains["kd"]  # -p over the file


@pytest.mark.slow
def test_bringup_refuses_a_bad_parameter_before_starting() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", "puma560", "-p", "controller:kpp:=1"],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "node 'controller' has no parameter 'kpp'" in proc.stderr
    assert "[bringup] t =" not in proc.stdout


def test_launch_files_take_a_params_file(monkeypatch, tmp_path) -> None:
    """``ros2 launch ... params_file:=FILE``: the same merge and checks as the CLI's (with the
    stand-in launch modules of test_bringup_description; the real launch is not installable here)."""
    from test_bringup_description import _load_launch, _run_launch

    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump({"controller": {"ros__parameters": {"kp": [9.0] * 6}},
                                 "dynamics_server": {"ros__parameters": {"max_points": 12}}}))
    module = _load_launch("bringup.launch", monkeypatch)
    declared, nodes = _run_launch(module, {"params_file": str(f)})
    assert "params_file" not in declared  # the description's arguments stay the CLI's
    params = {n.kw["name"]: n.kw["parameters"][0] for n in nodes}
    assert params["controller"]["kp"] == [9.0] * 6 and params["dynamics_server"]["max_points"] == 12
    plain = {s.name: s.parameters for s in describe(**declared)}
    assert {k: v for k, v in params["controller"].items() if k != "kp"} == plain["controller"]
    services = _load_launch("dynamics.launch", monkeypatch)
    _, nodes = _run_launch(services, {"robot": "puma560", "params_file": str(f)})
    assert [n.kw["parameters"][0]["max_points"] for n in nodes] == [12]
    f.write_text(yaml.safe_dump({"move_group": {"ros__parameters": {"x": 1}},  # another launch's: left out
                                 "controller": {"ros__parameters": {"kpp": 1}}}))
    with pytest.raises(ValueError, match="node 'controller' has no parameter 'kpp'"):
        _run_launch(module, {"params_file": str(f)})
