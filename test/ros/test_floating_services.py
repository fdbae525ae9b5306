"""The dynamics services for an arm on a floating base: the base coordinates are named entries of
``joint_names`` (base_x .. base_qw in positions, base_vx .. base_wz in velocities,
accelerations, efforts), any order with the joints.

Oracle: Pinocchio with a free-flyer root on the same URDF (``pin.rnea``, ``pin.crba``,
``pin.computeGeneralizedGravity``, frame Jacobian and placement, and an RK4 in the chart written
with ``pin.aba`` and ``pin.integrate`` for forward_simulate); the tool wrench against
``pin.rnea - J_pin^T w``.  Bad requests are refused with messages naming what is expected.
One test goes through a real ``dynamics_server`` process started with ``base_type:=floating``."""
from __future__ import annotations

import numpy as np
import pytest
from test_floating_base import random_state

pin = pytest.importorskip("pinocchio")

TOL = 1e-9
BQ = ["base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw"]
BV = ["base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz"]
import services.test_floating_services as shared  # noqa: E402
from services.test_floating_services import caller_names, pack  # noqa: E402

xml = shared.xml  # the fixture, shared with the ROS-free tests
setup = shared.setup  # the fixture, shared with the ROS-free tests


@pytest.mark.slow
def test_ros_server_floating(xml: str, setup, tmp_path) -> None:
    """A real server with ``base_type:=floating``: get_model reports the base, inverse dynamics and
    forward_simulate answer in the caller's order, a joints-only request is refused."""
    from rbd_ros.ros.client import DynamicsClient, DynamicsError
    from ros_helpers import NodeProcess

    robot, service, *_ = setup
    path = tmp_path / "arm7_floating.urdf"
    path.write_text(xml)
    proc = NodeProcess(["dynamics-server", "--ros-args", "-p", f"urdf_path:={path}",
                        "-p", "base_type:=floating", "-p", "service_namespace:=floatdyn"])
    try:
        proc.wait_for("dynamics_server: ready", 120)
        with DynamicsClient(namespace="floatdyn", timeout=60) as c:
            m = c.get_model()
            assert m.base_type == "floating"
            assert list(m.base_position_names) == BQ and list(m.base_velocity_names) == BV
            assert c.joint_names == BQ + BV + list(robot.joint_names)
            names = caller_names(robot, 5)
            rng = np.random.default_rng(6)
            q, v, a, _ = random_state(rng, robot.dof)
            qc, vc, _ = pack(names, robot, q, v)
            ac = pack(names, robot, q, a)[1]
            tau = c.inverse_dynamics(qc, vc, ac, joint_names=names)
            assert tau.shape == (robot.nv,)
            assert np.abs(tau - service.inverse_dynamics(names, qc, vc, ac)[0]).max() < 1e-12
            sim = c.forward_simulate(q, v * 0.1, np.zeros((1, robot.nv)), 0.01, 0.001)
            assert sim.positions.shape == (11, robot.nq) and sim.velocities.shape == (11, robot.nv)
            assert abs(np.linalg.norm(sim.positions[-1, 3:7]) - 1) < 1e-12
            fk = c.forward_kinematics(qc, joint_names=names)
            assert fk.frame_id == "world" and len(fk.link_poses) == robot.dof + 1
            p = fk.tool_pose.position
            assert np.abs([p.x, p.y, p.z] - robot.fk(q)[:3, 3]).max() < 1e-12
            with pytest.raises(DynamicsError, match="base_position_names"):
                c.gravity(np.zeros(robot.dof), joint_names=list(robot.joint_names))
    finally:
        proc.stop()
