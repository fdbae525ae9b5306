"""The dynamics server's ``model_yaml`` parameter set at runtime (issue 44: ``ros2 param set
/dynamics_server model_yaml FILE``): the same checks and swap as its ``load_model`` service,
from a plain rclpy ``SetParameters`` client against a server process.  The UR3 of
``ur3_joint_limited_robot.urdf`` (example-robot-data) swapped for the same arm 30 % perturbed
(``rbd_ros.identification.perturb``, a model YAML).

Oracles: Pinocchio's ``rnea`` and gravity on the UR3's URDF before, and after on the UR3's URDF
with the new model's inertials written into it (``identification.write_back``: Pinocchio on that
URDF is the new model's rigid-body dynamics); the server answers through ``InverseDynamics`` and
``Gravity``.  Refused with the reason in the result, the parameter and the answers unchanged: a
NaN mass, other joints (arm7), a missing file, an empty value; the other robot parameters stay
read-only."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # a server process

NS = "paramdyn"
NODE = "paramdyn_server"
QD = np.array([0.3, -0.5, 0.7, 0.2, -0.4, 0.6])
QDD = np.array([1.0, -0.8, 0.5, 1.2, -1.5, 0.9])


def _set(node, client, name: str, value: str):
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    from ros_helpers import call

    res = call(node, client, SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()]))
    return res.results[0]


def _get(node, client, name: str):
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    from ros_helpers import call

    return parameter_value_to_python(call(node, client, GetParameters.Request(names=[name])).values[0])


def _pinocchio(urdf: str, q: np.ndarray):
    """Pinocchio's inverse dynamics at (q, QD, QDD) and gravity at q on ``urdf``."""
    import pinocchio as pin

    pm = pin.buildModelFromUrdf(urdf)
    data = pm.createData()
    tau = pin.rnea(pm, data, q, QD, QDD).copy()
    return tau, pin.computeGeneralizedGravity(pm, data, q).copy()


def test_model_yaml_set_on_the_server_swaps_or_refuses(tmp_path) -> None:
    import rclpy
    from rcl_interfaces.srv import GetParameters, SetParameters
    from test_live_model_swap import Q0, REPO, UR3, swap_files

    from rbd_ros.identification.write_back import write_back
    from rbd_ros.ros.client import DynamicsClient
    from ros_helpers import NodeProcess, ros_context, wait_for_service

    model, new_model, new_yaml, bad, _ = swap_files(tmp_path)
    written = tmp_path / "ur3_new.urdf"
    written.write_text(write_back(str(UR3), new_model).text)
    tau_old, g_old = _pinocchio(str(UR3), Q0)
    tau_new, g_new = _pinocchio(str(written), Q0)
    assert np.abs(tau_new - tau_old).max() > 0.2 and np.abs(g_new - g_old).max() > 0.2  # a swap to see
    names = list(model.joint_names)

    proc = NodeProcess(["dynamics-server", "--ros-args", "-r", f"__node:={NODE}", "-p", f"urdf_path:={UR3}",
                        "-p", f"service_namespace:={NS}"])
    try:
        proc.wait_for("dynamics_server: ready", 120)
        with DynamicsClient(namespace=NS, timeout=60) as c, ros_context() as ctx:
            def answers():
                return c.inverse_dynamics(Q0, QD, QDD, joint_names=names), c.gravity(Q0, joint_names=names)

            node = rclpy.create_node("model_yaml_param_test", context=ctx)
            setter = node.create_client(SetParameters, f"/{NODE}/set_parameters")
            getter = node.create_client(GetParameters, f"/{NODE}/get_parameters")
            wait_for_service(setter)
            wait_for_service(getter)
            tau, g = answers()
            np.testing.assert_allclose(tau, tau_old, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(g, g_old, rtol=1e-9, atol=1e-9)

            for value, words in ((str(bad), ("bad.yaml", "mass")), (str(tmp_path / "none.yaml"), ("not found",)),
                                 (str(REPO / "config" / "arm7.yaml"), ("not the running model's", "joint1")),
                                 ("", ("cannot be emptied",))):
                res = _set(node, setter, "model_yaml", value)
                assert not res.successful and res.reason.startswith("model_yaml: "), res.reason
                assert all(w in res.reason for w in words), res.reason
            assert _get(node, getter, "model_yaml") == ""
            tau, g = answers()
            np.testing.assert_allclose(tau, tau_old, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(g, g_old, rtol=1e-9, atol=1e-9)

            res = _set(node, setter, "model_yaml", str(new_yaml))
            assert res.successful, (res.reason, proc.output)
            assert _get(node, getter, "model_yaml") == str(new_yaml)
            tau, g = answers()
            np.testing.assert_allclose(tau, tau_new, rtol=1e-9, atol=1e-9)
            np.testing.assert_allclose(g, g_new, rtol=1e-9, atol=1e-9)
            assert c.get_model().name == new_model.name

            res = _set(node, setter, "urdf_path", str(written))  # the others stay read-only
            assert not res.successful and "read-only" in res.reason, res.reason
            node.destroy_node()
    finally:
        proc.stop()
