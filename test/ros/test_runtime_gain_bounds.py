"""Runtime gain changes (``set_parameters`` from a plain rclpy client) go through the
discrete-time stability bound and the URDF's effort limits (issue 38): the controller node on
Kinova's j2s6s200 (example-robot-data), this test posing as the arm.  Oracles: the URDF's
effort limits, Jury's bound computed here from Pinocchio's mass matrix, and the command a PD +
gravity law with the old gains gives (Pinocchio's gravity)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_control_node import READY, peer  # noqa: F401 - the fixture: this test as the arm

pytestmark = pytest.mark.slow  # a controller process

KINOVA = (Path(__file__).resolve().parents[2] / ".venv" / "lib" / "python3.11" / "site-packages"
          / "cmeel.prefix" / "share" / "example-robot-data" / "robots" / "kinova_description"
          / "robots" / "kinova.urdf")
JOINTS = [f"j2s6s200_joint_{i}" for i in range(1, 7)]
KP, KD = 20.0, 1.0


def _kinova_path() -> str:
    try:
        import example_robot_data

        return example_robot_data.getModelPath("kinova_description") + "/robots/kinova.urdf"
    except ImportError:
        if not KINOVA.is_file():
            pytest.skip("example-robot-data is not installed")
        return str(KINOVA)


def test_runtime_gains_past_the_bound_or_the_urdf_are_refused(node_process, peer) -> None:  # noqa: F811
    import pinocchio as pin

    urdf = _kinova_path()
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    node_process(["controller", "--ros-args", "-p", f"urdf_path:={urdf}", "-p", "type:=pd_gravity",
                  "-p", f"kp:={KP}", "-p", f"kd:={KD}", "-p", "state_timeout:=0.0"], ready=READY)
    peer.wait_subscribed(peer.joint_pub)
    q = np.array([0.1, 2.0, 1.5, 0.2, 2.5, 0.3])  # inside the limits (joints 2, 3, 5 are bounded)
    peer.send_command_and_wait(JOINTS, q, t=1.0)  # the reference holds this pose

    res = peer.set_parameter("kp", 1e300)
    assert not res.successful and "kp of joint 'j2s6s200_joint_1'" in res.reason, res.reason
    assert "stability bound" in res.reason and "1000 Hz" in res.reason, res.reason
    # Jury's a/2 < b for kd = 1, D = 0 at 1 kHz: kp < 2 kd / dt = 2000
    assert "2000" in res.reason, res.reason

    # the arm does not move: the command is the old law's, kp = 20 (not 1e300)
    dq = np.array([0.01, -0.02, 0.015, 0.0, 0.01, -0.01])
    cmd = peer.send_command_and_wait(JOINTS, q + dq, t=1.001)
    g = pin.computeGeneralizedGravity(model, data, _pin_q(model, q + dq))
    np.testing.assert_allclose(cmd, -KP * dq + g, rtol=1e-6, atol=1e-6)

    # kd past b < 2 on the light wrist: 2 m_min / dt with m_min = 1 / (M^-1)_66 at q (Pinocchio)
    M = pin.crba(model, data, _pin_q(model, q))
    M = np.triu(M) + np.triu(M, 1).T + np.diag(model.armature)
    bound = 2.0 / (1e-3 * np.diag(np.linalg.inv(M)))
    res = peer.set_parameter("kd", [float(b) * 1.05 for b in bound])
    assert not res.successful and "kd of joint 'j2s6s200_joint_1'" in res.reason, res.reason
    ok = peer.set_parameter("kd", [float(b) * 0.5 for b in bound])
    assert ok.successful, ok.reason  # inside the bound: taken

    res = peer.set_parameter("effort_limit", 1e9)
    assert not res.successful, res.reason
    assert "j2s6s200_joint_1" in res.reason and "URDF" in res.reason and "40 N m" in res.reason, res.reason
    res = peer.set_parameter("effort_limit", [30.0, 60.0, 30.0, 25.0, 15.0, 15.0])  # joint 4: 25 > 20
    assert not res.successful and "j2s6s200_joint_4" in res.reason and "20 N m" in res.reason, res.reason
    ok = peer.set_parameter("effort_limit", [30.0, 60.0, 30.0, 15.0, 15.0, 15.0])
    assert ok.successful, ok.reason

    res = peer.set_parameter("kq", 1.0)
    assert not res.successful and "'kq'" in res.reason and "'kp'" in res.reason, res.reason
    assert "[]" not in res.reason


def _pin_q(model, q: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration of the joint angles ``q`` (a continuous joint is cos, sin)."""
    out = []
    for i, angle in enumerate(q):
        if model.joints[i + 1].nq == 2:
            out += [np.cos(angle), np.sin(angle)]
        else:
            out.append(angle)
    return np.array(out)
