"""``bringup --task press`` with impedance keeps a stiffness the user gave (issue 30): with
``-p controller:stiffness:=[...]`` (separate or composed), a ``--params-file`` or the
controller's ``gains_file``, the press task through the nodes sends no stiffness of its own,
the controller's law presses with the user's, and the set point goes ``F / K_n`` into the
surface for the user's ``K_n`` (the hand-computed oracle), as the ROS-free ``run_press``
does with the same stiffness given.  Without one, the stiffness along the normal is the
task's ``F / DEPTH``.  No ROS process: the bringup's real parameter merging
(``describe`` + ``apply_overrides``), ``PressTask.set_press_gains`` against a stand-in for the
controller's parameter services, ``Controller._on_set_parameters`` (the node's
``ros2 param set`` callback) on whatever is sent.  On the xArm 7."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from robots_data import example_robot_urdf

URDF = "xarm_description/urdf/xarm7.urdf"
USER_K = [800.0, 900.0, 700.0, 30.0, 31.0, 32.0]
TABLE, WALL = (0.0, 0.0, 1.0), (-1.0, 0.0, 0.0)


@pytest.fixture(scope="module")
def xarm7():
    from rbd_ros.urdf import load_model

    return load_model(str(example_robot_urdf(URDF)))


def _specs(how: str, tmp_path, composed: bool) -> list:
    """The bringup's node specs with the user's stiffness given ``how``."""
    import yaml

    from rbd_ros.ros.bringup.description import describe
    from rbd_ros.ros.bringup.params import apply_overrides, load_params_file, parse_overrides

    specs = describe(urdf=str(example_robot_urdf(URDF)), controller="impedance", mode="lockstep",
                     composed=composed)
    if how == "-p":
        return apply_overrides(specs, [parse_overrides([f"controller:stiffness:={USER_K}"])])
    if how == "params_file":
        f = tmp_path / "params.yaml"
        f.write_text(yaml.safe_dump({"controller": {"ros__parameters": {"stiffness": USER_K}}}))
        return apply_overrides(specs, [load_params_file(f)], other_nodes=True)
    if how == "gains_file":
        f = tmp_path / "gains.yaml"
        f.write_text(yaml.safe_dump({"defaults": {"impedance": {"stiffness": USER_K}}}))
        return apply_overrides(specs, [parse_overrides([f"controller:gains_file:={f}"])])
    return specs


@pytest.mark.parametrize("normal", [TABLE, WALL], ids=["table", "wall"])
@pytest.mark.parametrize(("how", "composed"), [("-p", False), ("-p", True), ("params_file", False),
                                               ("gains_file", False), ("none", False)])
def test_the_nodes_keep_the_users_stiffness(xarm7, tmp_path, how, composed, normal) -> None:
    from rclpy.parameter import Parameter

    from rbd_ros.control.laws import make_law
    from rbd_ros.control.press_gains import DEPTH, press_gains
    from rbd_ros.ros.bringup.press_nodes import PressTask
    from rbd_ros.ros.nodes.controller import Controller

    n, axis, F = np.array(normal), int(np.flatnonzero(normal)[0]), 10.0
    specs = _specs(how, tmp_path, composed)
    ctl = next(s for s in specs if s.name == ("mujoco_bridge" if composed else "controller"))
    # the controller node's law: its gain parameters given, then its gains file (_make_law)
    given = {k: ctl.parameters[k] for k in ("stiffness",) if ctl.parameters.get(k) is not None}
    node_law = make_law("impedance", xarm7, given, q0=np.zeros(xarm7.dof), rate=1000.0,
                        gains_file=ctl.parameters.get("gains_file") or None)
    user = how != "none"
    assert (node_law.gain_source["stiffness"] != "model") == user
    task = PressTask.__new__(PressTask)
    task.args = SimpleNamespace(controller="impedance", force=F, composed=composed)
    task.site, task.model, task.specs = SimpleNamespace(normal=n), xarm7, specs
    sent: dict = {}
    task.get_controller = lambda node, name: node_law.gains[name].tolist()
    task.set_controller = lambda node, **values: sent.update(values)
    task.set_press_gains(None)
    # whatever is sent goes through the node's ros2-param-set callback onto its law
    applied: dict = {}
    fake = SimpleNamespace(law_type="impedance", _gain_names=set(node_law.gains), dof=xarm7.dof,
                           loop=SimpleNamespace(set_gains_later=applied.update, q=np.zeros(xarm7.dof),
                                                have_state=False),
                           law=node_law, model=xarm7,  # the gain bound (issue 38) at the node's rate
                           node=SimpleNamespace(get_parameter=lambda name: SimpleNamespace(value=1000.0)),
                           log=SimpleNamespace(info=lambda s: None, warning=lambda s: None))
    result = Controller._on_set_parameters(fake, [Parameter(k, value=v) for k, v in sent.items()])
    assert result.successful, result.reason
    node_law.set_gains(**applied)
    K = node_law.gains["stiffness"]
    if user:
        assert "stiffness" not in sent
        assert K.tolist() == USER_K
        assert task.press_depth == pytest.approx(F / USER_K[axis], rel=1e-12)
    else:
        assert K[axis] == F / DEPTH and task.press_depth == pytest.approx(DEPTH, rel=1e-12)
    # run_press's rule on a law given the same stiffness (the ROS-free task): the same gains
    ros_free = make_law("impedance", xarm7, given or None, q0=np.zeros(xarm7.dof), rate=1000.0,
                        gains_file=ctl.parameters.get("gains_file") or None)
    mine = [k for k, s in ros_free.gain_source.items() if s != "model"]
    ros_free.set_gains(**press_gains("impedance", ros_free.gains, n, F, given=mine))
    assert np.array_equal(ros_free.gains["stiffness"], K)
