"""Issue 27, the services' answers: never a non-finite result reported as success, the edge
cases of ``forward_simulate`` and ``inverse_kinematics``, one name per joint in every message,
and IK answers checked against Pinocchio's forward kinematics (a best pose kept over worse
restarts; seeds in the caller's joint order honoured).  ``rbd_ros.services`` directly, and the
overflow case through a real server process."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import BUNDLED_URDF

pin = pytest.importorskip("pinocchio")

URDF = BUNDLED_URDF / "puma560.urdf"
PERM = [3, 0, 5, 2, 4, 1]  # the caller's order: model joint PERM[i] at place i


@pytest.mark.slow
def test_overflow_through_the_server_is_success_false(node_process) -> None:
    pytest.importorskip("rclpy")
    from rbd_ros.ros.client import DynamicsClient, DynamicsError

    node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={URDF}",
                  "-p", "service_namespace:=res27"], ready="dynamics_server: ready", timeout=120)
    with DynamicsClient(namespace="res27", timeout=30) as c:
        c.wait(60)
        with pytest.raises(DynamicsError, match=r"inverse_dynamics: .*\|velocities\| = 1e\+200"):
            c.inverse_dynamics(np.zeros(6), np.full(6, 1e200), np.zeros(6))
        assert np.isfinite(c.inverse_dynamics(np.zeros(6), np.ones(6), np.ones(6))).all()
