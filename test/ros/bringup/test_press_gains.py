"""The press task's gains (issue 30): ``rbd-ros bringup --task press`` through the nodes sets
the controller's parameters to the gains the ROS-free ``run_press`` gives its law, for each
force law, on a table and on a wall; and the controller node takes them at runtime.  No ROS
process: ``PressTask.set_press_gains`` against a stand-in for the controller's parameter
services (reading and setting a law's gains), ``Controller._on_set_parameters`` (the node's
``ros2 param set`` callback) on the values sent.  On the xArm 7 (model-derived gains)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from robots_data import example_robot_urdf

TABLE, WALL = (0.0, 0.0, 1.0), (-1.0, 0.0, 0.0)


@pytest.fixture(scope="module")
def xarm7():
    from rbd_ros.urdf import load_model

    return load_model(str(example_robot_urdf("xarm_description/urdf/xarm7.urdf")))


def _law(model, name):
    from rbd_ros.control.laws import make_law

    return make_law(name, model, None, q0=np.zeros(model.dof), rate=1000.0)


@pytest.mark.parametrize("normal", [TABLE, WALL], ids=["table", "wall"])
@pytest.mark.parametrize("law_name", ["hybrid_force_position", "impedance", "admittance"])
def test_the_nodes_set_the_gains_run_press_sets(xarm7, law_name, normal) -> None:
    from rclpy.parameter import Parameter

    from rbd_ros.control.press_gains import DEPTH, press_gains
    from rbd_ros.ros.bringup.press_nodes import PressTask
    from rbd_ros.ros.nodes.controller import Controller

    n, axis, F = np.array(normal), int(np.flatnonzero(normal)[0]), 10.0
    model_gains = {k: v.copy() for k, v in _law(xarm7, law_name).gains.items()}
    # run_press: law.set_gains(**press_gains(...)) on the model's gains
    ros_free = _law(xarm7, law_name)
    ros_free.set_gains(**press_gains(law_name, ros_free.gains, n, F))
    # the nodes: the controller's parameters read (lists of floats, as GetParameters gives)
    node_law, sent = _law(xarm7, law_name), {}
    task = PressTask.__new__(PressTask)
    task.args, task.site = SimpleNamespace(controller=law_name, force=F, composed=False), SimpleNamespace(normal=n)
    task.model, task.specs = xarm7, []  # no user gains (test_press_user_stiffness.py: with)
    task.get_controller = lambda node, name: node_law.gains[name].tolist()
    task.set_controller = lambda node, **values: sent.update(values)
    task.set_press_gains(None)
    assert sent and all(type(x) is float for v in sent.values() for x in v)
    # the controller node's ros2-param-set callback takes them and hands them to its loop
    applied: dict = {}
    fake = SimpleNamespace(law_type=law_name, _gain_names=set(model_gains), dof=xarm7.dof,
                           loop=SimpleNamespace(set_gains_later=applied.update, q=np.zeros(xarm7.dof),
                                                have_state=False),
                           law=node_law, model=xarm7,  # the gain bound (issue 38) at the node's rate
                           node=SimpleNamespace(get_parameter=lambda name: SimpleNamespace(value=1000.0)),
                           log=SimpleNamespace(info=lambda s: None, warning=lambda s: None))
    result = Controller._on_set_parameters(fake, [Parameter(k, value=v) for k, v in sent.items()])
    assert result.successful, result.reason
    assert set(applied) == set(sent)
    node_law.set_gains(**applied)
    for k in ros_free.gains:  # every gain, the ones not sent too, bit for bit
        assert np.array_equal(node_law.gains[k], ros_free.gains[k]), k
    # and what they are (the issue's press along n; contact_task.press_gains' docstring)
    g, m = ros_free.gains, model_gains
    off = np.arange(6) != axis
    if law_name == "hybrid_force_position":
        assert g["selection"][axis] == 0.0 and np.all(g["selection"][:3][off[:3]] == 1.0)
        assert np.array_equal(g["selection"][3:], m["selection"][3:])
    elif law_name == "admittance":
        assert g["stiffness"][axis] == 0.0 and g["mass"][axis] == m["mass"][axis] > 0.0
        assert np.all(g["mass"][off] == 0.0) and np.array_equal(g["stiffness"][off], m["stiffness"][off])
    else:
        assert g["stiffness"][axis] == F / DEPTH and np.array_equal(g["stiffness"][off], m["stiffness"][off])
        assert task.press_depth == pytest.approx(DEPTH, rel=1e-12)
