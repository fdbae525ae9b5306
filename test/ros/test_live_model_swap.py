"""A new model swapped into a running controller node through ``~/load_model`` (issue 44
item 2), from a plain rclpy client, this test posing as the arm (``test_control_node.peer``).

The controller: computed torque on the UR3 of example-robot-data's
``ur3_joint_limited_robot.urdf``, holding a gravity-loaded pose, states at rest there.  The new
model: the same arm 30 % perturbed (``rbd_ros.identification.perturb``), as a model YAML.

* before the swap the command is the URDF's gravity at the pose (Pinocchio, the oracle);
* the swap is answered at once, and the command then moves to the new model's gravity
  (``Robot(new).gravity``: at rest the computed torque is gravity) over ``SWAP_CYCLES`` cycles,
  each step at most ``1.05 |g_new - g_old| / SWAP_CYCLES`` (the bound: at rest the feedback's
  own change is zero), never in one step of the whole difference;
* refused with the reason, the command unchanged: other joints (arm7), a bad file (a NaN mass),
  a missing file, two sources at once;
* the ``model_yaml`` parameter follows: the file swapped in, then '' after a swap back to the
  URDF as text (and the command back at the URDF's gravity).
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from test_control_node import READY, peer  # noqa: F401 - the fixture: this test as the arm

pytestmark = pytest.mark.slow  # a controller process

REPO = Path(__file__).resolve().parents[2]
UR3 = (REPO / ".venv" / "lib" / "python3.11" / "site-packages" / "cmeel.prefix" / "share" / "example-robot-data"
       / "robots" / "ur_description" / "urdf" / "ur3_joint_limited_robot.urdf")
Q0 = np.array([0.4, -1.1, 1.3, -0.8, 0.6, 0.2])


def _load_model(peer, **request):  # noqa: F811
    from rbd_ros_interfaces.srv import LoadModel

    client = peer.node.create_client(LoadModel, "/controller/load_model")
    assert client.wait_for_service(timeout_sec=10.0), "no /controller/load_model"
    future = client.call_async(LoadModel.Request(**request))
    deadline = time.monotonic() + 30.0
    while not future.done():
        assert time.monotonic() < deadline, "no answer from load_model"
        time.sleep(0.01)
    return future.result()


def swap_files(tmp_path):
    """The UR3, its 30 %-perturbed model, that model as YAML, the same with a NaN mass, and
    Pinocchio's gravity of the URDF at ``Q0`` (the ROS tests' shared set-up)."""
    import pinocchio as pin

    from rbd_ros.identification.perturb import perturb
    from rbd_ros.urdf import load_conversion

    if not UR3.is_file():
        pytest.skip("example-robot-data is not installed")
    model = load_conversion(str(UR3)).model
    new_model = perturb(model, 30.0, seed=4)
    new_yaml = tmp_path / "ur3_identified.yaml"
    new_model.to_yaml(str(new_yaml))
    bad = tmp_path / "bad.yaml"
    bad.write_text(new_yaml.read_text().replace("mass: ", "mass: .nan #", 1))
    pm = pin.buildModelFromUrdf(str(UR3))
    return model, new_model, new_yaml, bad, pin.computeGeneralizedGravity(pm, pm.createData(), Q0)


def hold_under_controller(node_process, peer, names, g_old, cycles: int = 5):  # noqa: F811
    """A computed-torque controller process on the UR3, this test holding the arm at ``Q0``
    for ``cycles`` cycles; its command there checked against Pinocchio's gravity ``g_old``.
    Returns the process, the last command and the next state's time."""
    proc = node_process(["controller", "--ros-args", "-p", f"urdf_path:={UR3}", "-p", "type:=computed_torque",
                         "-p", "kp:=400.0", "-p", "kd:=40.0", "-p", "state_timeout:=0.0"], ready=READY)
    peer.wait_subscribed(peer.joint_pub)
    t = 1.0
    for _ in range(cycles):
        cmd = peer.send_command_and_wait(names, Q0, t=t)
        t += 0.001
    np.testing.assert_allclose(cmd, g_old, rtol=1e-6, atol=1e-6)
    return proc, cmd, t


def test_load_model_swaps_without_a_step(node_process, peer, tmp_path) -> None:  # noqa: F811
    from rbd_ros.control.loop import SWAP_CYCLES
    from rbd_ros.robot import Robot

    model, new_model, new_yaml, bad, g_old = swap_files(tmp_path)
    names = list(model.joint_names)
    proc, cmd, t = hold_under_controller(node_process, peer, names, g_old)

    # refusals first: nothing changes
    arm7 = str(REPO / "config" / "arm7.yaml")
    res = _load_model(peer, model_yaml=arm7)
    assert not res.success and "not the running model's" in res.message and "joint1" in res.message, res.message
    res = _load_model(peer, model_yaml=str(bad))
    assert not res.success and "bad.yaml" in res.message and "mass" in res.message, res.message
    res = _load_model(peer, model_yaml=str(tmp_path / "none.yaml"))
    assert not res.success and "not found" in res.message, res.message
    res = _load_model(peer, model_yaml=str(new_yaml), urdf_path=str(UR3))
    assert not res.success and "exactly one" in res.message, res.message
    cmd = peer.send_command_and_wait(names, Q0, t=t)
    t += 0.001
    np.testing.assert_allclose(cmd, g_old, rtol=1e-6, atol=1e-6)

    try:
        res = _load_model(peer, model_yaml=str(new_yaml))
    except AssertionError:
        print(proc.output)
        raise
    assert res.success and "kept" in res.message, res.message
    cmds = [cmd]
    for _ in range(SWAP_CYCLES + 10):
        cmds.append(peer.send_command_and_wait(names, Q0, t=t))
        t += 0.001
    g_new = Robot(new_model).gravity(Q0)
    diff = float(np.abs(g_new - g_old).max())
    assert diff > 0.2, diff  # a step worth measuring
    steps = np.abs(np.diff(cmds, axis=0)).max(axis=1)
    assert steps.max() <= 1.05 * diff / SWAP_CYCLES + 1e-9, (steps.max(), diff)
    np.testing.assert_allclose(cmds[-1], g_new, rtol=1e-6, atol=1e-6)
    from test_model_yaml_parameter import _get

    assert _get(peer, "model_yaml") == str(new_yaml)  # the parameter names the model in use
    res = _load_model(peer, robot_description=UR3.read_text())  # back to the URDF, as text
    assert res.success, res.message
    assert _get(peer, "model_yaml") == ""  # '': the model came as URDF
    for _ in range(SWAP_CYCLES + 2):
        cmd = peer.send_command_and_wait(names, Q0, t=t)
        t += 0.001
    np.testing.assert_allclose(cmd, g_old, rtol=1e-6, atol=1e-6)
