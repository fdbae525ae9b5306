"""Deprecated parameter names (issue 33: one spelling per concept): a schema's
``deprecated_names`` (``config/schema/robot.yaml``: ``base`` for ``base_type``) are still
accepted from ``-p``, parameter files, ``set_parameters`` and the bringup's ``-p``/
``--params-file``, each with one warning line naming the new name; the old and the new name
given with different values is refused in one line naming both.  The oracle of what the
old name does is the new name's own result (and ``Robot.from_urdf(base_type=)``)."""
from __future__ import annotations

from pathlib import Path

import pytest

from rbd_ros.ros.common import NodeConfigError
from rbd_ros.ros.parameters import Schema, schema
from rbd_ros.util.resources import bundled_urdf
from ros_helpers import ros_context

OMNI = str(bundled_urdf("omni_arm7"))
#: a writable parameter with an old name (the robot's are read-only): set_parameters renames it
WRITABLE = """node: demo
summary: x
parameters:
  gain_new:
    type: double
    default: 1.0
    range: [0.0, null]
    deprecated_names: [gain_old]
"""


def test_schema_declares_base_as_the_old_name_of_base_type() -> None:
    robot = schema("robot")
    assert "base" not in robot.specs and robot.aliases == {"base": "base_type"}
    assert "deprecated name: `base`" in robot.markdown()


def test_resolve_moves_the_old_name_and_refuses_a_disagreement() -> None:
    robot = schema("robot")
    values, notes = robot.resolve({"base": "planar", "tip_link": "tool0"})
    assert values == {"base_type": "planar", "tip_link": "tool0"}
    assert notes == ["parameter 'base' is deprecated: use 'base_type' (given base:='planar')"]
    assert robot.resolve({"base": "planar", "base_type": "planar"})[0] == {"base_type": "planar"}
    assert robot.resolve({"base": "", "base_type": "planar"}) == ({"base_type": "planar"}, [])  # default = not given
    with pytest.raises(NodeConfigError) as info:
        robot.resolve({"base": "planar", "base_type": "diff_drive"})
    message = str(info.value)
    assert "\n" not in message and "'base'" in message and "'base_type'" in message
    assert "base:='planar'" in message and "base_type:='diff_drive'" in message


def test_robot_model_takes_the_old_key_as_the_new() -> None:
    from rbd_ros import Robot
    from rbd_ros.ros.robot_params import robot_model

    oracle = Robot.from_urdf(OMNI, base_type="planar", tip_link="tool0")
    new = robot_model({"urdf_path": OMNI, "base_type": "planar", "tip_link": "tool0"}).model
    old = robot_model({"urdf_path": OMNI, "base": "planar", "tip_link": "tool0"}).model
    assert old.base_type == new.base_type == oracle.base_type == "planar"
    assert Robot(old).nq == Robot(new).nq == oracle.nq == oracle.dof + 3


def test_bringup_overrides_rename_and_refuse(capsys: pytest.CaptureFixture[str]) -> None:
    from rbd_ros.ros.bringup.params import current_names

    assert current_names("dynamics_server", {"base": "planar", "max_points": 5}) == \
        {"base_type": "planar", "max_points": 5}
    assert "[bringup] warning: dynamics_server: parameter 'base' is deprecated: use 'base_type'" \
        in capsys.readouterr().err
    with pytest.raises(ValueError, match="'base' and 'base_type' are one parameter"):
        current_names("/**", {"base": "planar", "base_type": "fixed"})
    # through the bringup's -p: the old name is the new one, which the bringup sets from a flag
    from rbd_ros.ros.bringup.description import NodeSpec
    from rbd_ros.ros.bringup.params import apply_overrides, parse_overrides

    spec = NodeSpec("dynamics_server", "dynamics-server", "dynamics_server", {"base_type": "planar"})
    same = apply_overrides([spec], [parse_overrides(["base:=planar"])])
    assert same[0].parameters == {"base_type": "planar"}
    with pytest.raises(ValueError, match=r"dynamics_server:base_type: the bringup sets it from --base-type"):
        apply_overrides([spec], [parse_overrides(["dynamics_server:base:=fixed"])])


def _node(ctx: object, args: list[str]):
    from rclpy.node import Node

    return Node("alias_probe", context=ctx, cli_args=["--ros-args", *args])


def test_node_takes_the_old_name_from_p_and_params_file(tmp_path: Path) -> None:
    """In-process nodes (no spinning): ``-p base:=`` and a parameter file's ``base:`` set
    ``base_type``; both given, different, is the one-line refusal; ``set_parameters(base=)``
    is refused as ``base_type`` is (read-only)."""
    from rclpy.parameter import Parameter

    from rbd_ros.ros.robot_params import declare_robot_parameters

    params = tmp_path / "p.yaml"
    params.write_text("alias_probe:\n  ros__parameters:\n    base: diff_drive\n")
    with ros_context() as ctx:
        for args, want in ((["-p", "base:=planar"], "planar"), (["--params-file", str(params)], "diff_drive"),
                           (["-p", "base_type:=planar"], "planar"), ([], "")):
            node = _node(ctx, args)
            try:
                declare_robot_parameters(node)
                assert node.get_parameter("base_type").value == want, args
                assert not node.has_parameter("base")
            finally:
                node.destroy_node()
        node = _node(ctx, ["-p", "base:=planar", "-p", "base_type:=fixed"])
        try:
            with pytest.raises(NodeConfigError, match=r"'base' and 'base_type' .* base:='planar', base_type:='fixed'"):
                declare_robot_parameters(node)
        finally:
            node.destroy_node()
        node = _node(ctx, [])
        try:
            declare_robot_parameters(node)
            result = node.set_parameters([Parameter("base", value="planar")])[0]
            assert not result.successful and "base_type" in result.reason
            assert node.get_parameter("base_type").value == ""
        finally:
            node.destroy_node()


def test_set_parameters_takes_a_writable_old_name(tmp_path: Path) -> None:
    from rclpy.parameter import Parameter

    path = tmp_path / "demo.yaml"
    path.write_text(WRITABLE)
    demo = Schema.from_yaml(path)
    with ros_context() as ctx:
        node = _node(ctx, ["-p", "gain_old:=3.0"])
        try:
            assert demo.declare(node) == {"gain_new": 3.0}
            assert node.set_parameters([Parameter("gain_old", value=4.0)])[0].successful
            assert node.get_parameter("gain_new").value == 4.0
            both = node.set_parameters_atomically([Parameter("gain_old", value=5.0), Parameter("gain_new", value=6.0)])
            assert not both.successful
            assert "'gain_old' and 'gain_new' are one parameter" in both.reason and "\n" not in both.reason
            assert node.get_parameter("gain_new").value == 4.0  # nothing set
            same = node.set_parameters_atomically([Parameter("gain_old", value=7.0), Parameter("gain_new", value=7.0)])
            assert same.successful and node.get_parameter("gain_new").value == 7.0
            assert not node.set_parameters([Parameter("gain_old", value=-1.0)])[0].successful  # the range
        finally:
            node.destroy_node()


def test_settings_class_fields_take_the_old_name(tmp_path: Path) -> None:
    """``declare_settings`` (the bridge's ``BridgeConfig`` fields) adopts an old name too."""
    from dataclasses import dataclass

    from rbd_ros.ros.parameters import declare_settings

    @dataclass
    class Demo:
        gain_new: float = 1.0

    path = tmp_path / "demo.yaml"
    path.write_text(WRITABLE)
    with ros_context() as ctx:
        node = _node(ctx, ["-p", "gain_old:=2.5"])
        try:
            assert declare_settings(node, Demo, Schema.from_yaml(path)) == {"gain_new": 2.5}
        finally:
            node.destroy_node()
