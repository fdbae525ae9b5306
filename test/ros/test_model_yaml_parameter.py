"""The controller's ``model_yaml`` parameter set at runtime (issue 44: ``ros2 param set
/controller model_yaml FILE``): the same checks and swap as ``~/load_model``, from a plain rclpy
``SetParameters`` client against the controller node process (``test_control_node.peer``: this
test poses as the arm, holding the UR3 still at a gravity-loaded pose).

* before: the command is the URDF's gravity at the pose (Pinocchio on the URDF);
* refused with the reason in the ``set_parameters`` result, the parameter and the command
  unchanged: a NaN mass, a missing file, other joints (arm7), an empty value;
* accepted: the parameter reads the new file, the command moves to the new model's gravity
  (Pinocchio on the UR3's URDF with the new model's inertials written into it:
  ``identification.write_back``) in ``SWAP_CYCLES`` steps, each at most ``1.05 / SWAP_CYCLES``
  of the difference (at rest the feedback's own change is zero)."""
from __future__ import annotations

import time

import numpy as np
import pytest
from test_control_node import peer  # noqa: F401 - the fixture: this test as the arm
from test_live_model_swap import Q0, REPO, UR3, hold_under_controller, swap_files

pytestmark = pytest.mark.slow  # a controller process


def _get(peer, name: str):  # noqa: F811
    from rcl_interfaces.srv import GetParameters
    from rclpy.parameter import parameter_value_to_python

    client = peer.node.create_client(GetParameters, "/controller/get_parameters")
    assert client.wait_for_service(timeout_sec=10.0), "no /controller/get_parameters"
    future = client.call_async(GetParameters.Request(names=[name]))
    deadline = time.monotonic() + 10.0
    while not future.done():
        assert time.monotonic() < deadline, "no answer from get_parameters"
        time.sleep(0.01)
    return parameter_value_to_python(future.result().values[0])


def test_model_yaml_set_at_runtime_swaps_or_refuses(node_process, peer, tmp_path) -> None:  # noqa: F811
    import pinocchio as pin

    from rbd_ros.control.loop import SWAP_CYCLES
    from rbd_ros.identification.write_back import write_back

    model, new_model, new_yaml, bad, g_old = swap_files(tmp_path)
    written = tmp_path / "ur3_new.urdf"
    written.write_text(write_back(str(UR3), new_model).text)
    pm = pin.buildModelFromUrdf(str(written))
    g_new = pin.computeGeneralizedGravity(pm, pm.createData(), Q0)
    names = list(model.joint_names)
    proc, cmd, t = hold_under_controller(node_process, peer, names, g_old, cycles=3)

    for value, words in ((str(bad), ("bad.yaml", "mass")), (str(tmp_path / "none.yaml"), ("not found",)),
                         (str(REPO / "config" / "arm7.yaml"), ("not the running model's", "joint1")),
                         ("", ("cannot be emptied",))):
        res = peer.set_parameter("model_yaml", value)
        assert not res.successful and res.reason.startswith("model_yaml: "), res.reason
        assert all(w in res.reason for w in words), res.reason
    assert _get(peer, "model_yaml") == ""
    cmd = peer.send_command_and_wait(names, Q0, t=t)
    t += 0.001
    np.testing.assert_allclose(cmd, g_old, rtol=1e-6, atol=1e-6)

    res = peer.set_parameter("model_yaml", str(new_yaml))
    assert res.successful, (res.reason, proc.output)
    assert _get(peer, "model_yaml") == str(new_yaml)
    cmds = [cmd]
    for _ in range(SWAP_CYCLES + 5):
        cmds.append(peer.send_command_and_wait(names, Q0, t=t))
        t += 0.001
    diff = float(np.abs(g_new - g_old).max())
    assert diff > 0.2, diff  # a step worth measuring
    steps = np.abs(np.diff(cmds, axis=0)).max(axis=1)
    assert steps.max() <= 1.05 * diff / SWAP_CYCLES + 1e-9, (steps.max(), diff)
    np.testing.assert_allclose(cmds[-1], g_new, rtol=1e-6, atol=1e-6)
    # the other robot parameters stay read-only
    res = peer.set_parameter("urdf_path", str(UR3))
    assert not res.successful and "read-only" in res.reason, res.reason
