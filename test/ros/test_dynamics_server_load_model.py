"""The dynamics server takes a new model at runtime through ``/<ns>/load_model`` (issue 44
item 2), without a restart: the UR3 of ``ur3_joint_limited_robot.urdf`` (example-robot-data),
swapped for the same arm 30 % perturbed (``rbd_ros.identification.perturb``, a model YAML).
Oracles: Pinocchio's gravity of the URDF before, the perturbed model's gravity by
``Robot.gravity`` after (in this process, not the server's); refused with the reason, the
served model unchanged: other joints, a NaN mass, two sources.  The ``model_yaml`` parameter
follows each swap: the file swapped in, then '' after a swap back to the URDF as text."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # a server process

REPO = Path(__file__).resolve().parents[2]
NS = "swapdyn"


def _call(node, **request):
    from rclpy.executors import SingleThreadedExecutor

    from rbd_ros_interfaces.srv import LoadModel

    client = node.create_client(LoadModel, f"/{NS}/load_model")
    assert client.wait_for_service(timeout_sec=30.0), "no load_model"
    future = client.call_async(LoadModel.Request(**request))
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    executor.spin_until_future_complete(future, timeout_sec=30.0)
    executor.remove_node(node)
    assert future.done(), "no answer from load_model"
    return future.result()


def _model_yaml(node) -> str:
    """The server's ``model_yaml`` parameter (``GetParameters``)."""
    from rcl_interfaces.srv import GetParameters
    from rclpy.executors import SingleThreadedExecutor

    client = node.create_client(GetParameters, "/dynamics_server/get_parameters")
    assert client.wait_for_service(timeout_sec=30.0), "no /dynamics_server/get_parameters"
    future = client.call_async(GetParameters.Request(names=["model_yaml"]))
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    executor.spin_until_future_complete(future, timeout_sec=30.0)
    executor.remove_node(node)
    node.destroy_client(client)
    assert future.done(), "no answer from get_parameters"
    return future.result().values[0].string_value


def test_dynamics_server_swaps_its_model(tmp_path) -> None:
    import rclpy
    from test_live_model_swap import Q0, UR3, swap_files

    from rbd_ros.robot import Robot
    from ros_helpers import ros_context, served_client

    model, new_model, new_yaml, bad, g_old = swap_files(tmp_path)
    names = list(model.joint_names)
    g_new = Robot(new_model).gravity(Q0)
    assert np.abs(g_new - g_old).max() > 0.2
    with served_client(NS, f"urdf_path:={UR3}") as c, ros_context() as ctx:
        node = rclpy.create_node("load_model_test", context=ctx)
        np.testing.assert_allclose(c.gravity(Q0, joint_names=names), g_old, rtol=1e-9, atol=1e-9)
        for request, words in (({"model_yaml": str(REPO / "config" / "arm7.yaml")}, "not the running model's"),
                               ({"model_yaml": str(bad)}, "mass"),
                               ({"model_yaml": str(new_yaml), "urdf_path": str(UR3)}, "exactly one")):
            res = _call(node, **request)
            assert not res.success and words in res.message, res.message
        np.testing.assert_allclose(c.gravity(Q0, joint_names=names), g_old, rtol=1e-9, atol=1e-9)
        assert _model_yaml(node) == ""  # refused: unchanged
        started = time.monotonic()
        res = _call(node, model_yaml=str(new_yaml))
        assert res.success and "ur3_perturbed" in res.message, res.message
        assert time.monotonic() - started < 10.0
        np.testing.assert_allclose(c.gravity(Q0, joint_names=names), g_new, rtol=1e-9, atol=1e-9)
        assert c.get_model().name == new_model.name
        assert _model_yaml(node) == str(new_yaml)  # the parameter names the model in use
        res = _call(node, robot_description=UR3.read_text())  # back to the URDF, as text
        assert res.success, res.message
        np.testing.assert_allclose(c.gravity(Q0, joint_names=names), g_old, rtol=1e-9, atol=1e-9)
        assert _model_yaml(node) == ""  # '': the model came as URDF
        node.destroy_node()
