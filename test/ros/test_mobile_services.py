"""The dynamics services for an arm on a ground base (issue 17, "ROS 2 services"): the base
coordinates are named entries of ``joint_names`` (positions base_x, base_y, base_yaw; velocities,
accelerations, mass-matrix and gravity rows base_vx, base_vy, base_wz), any order with the
joints; a diff_drive base's efforts are its wheel torques (the wheel joints' names) and the arm
torques, and InverseDynamics answers its lateral ground force on request (``base_lateral_force``).

Oracles: Pinocchio with a planar root (``pin.JointModelPlanar``, q = (x, y, cos, sin), wheels
locked: ``test_mobile_base_robot.pin_reduced``) for the planar base; for the diff drive the KKT
solve with Pinocchio's M and h plus the rolling constraint and the wheels' spin inertia
(``test_mobile_base_robot._pin_kkt``); forward_simulate against an RK4 written here on
``pin.aba`` resp. that KKT solve.  Bad requests and bad name parameters are refused with one
line saying what is expected.  Two real ``dynamics_server`` processes (diff drive from the
bundled YAML, planar from the URDF with renamed base coordinates) and one refused start."""
from __future__ import annotations

import numpy as np
import pytest
from test_mobile_base_robot import OMNI, pin_q

from core_oracles import REPO, rel_err

pin = pytest.importorskip("pinocchio")
from rbd_ros.robot import Robot  # noqa: E402
from rbd_ros.services import LATERAL_FORCE, DynamicsService  # noqa: E402

TOL = 1e-9
BQ = ["base_x", "base_y", "base_yaw"]
BV = ["base_vx", "base_vy", "base_wz"]
WHEELS = ["left_wheel_joint", "right_wheel_joint"]
import services.test_mobile_services as shared  # noqa: E402
from services.test_mobile_services import random_states  # noqa: E402

omni = shared.omni  # the fixture, shared with the ROS-free tests
diff = shared.diff  # the fixture, shared with the ROS-free tests


# ---- real server processes ----------------------------------------------------------------------
@pytest.mark.slow
def test_ros_server_diff_drive(diff, node_process) -> None:
    """``rbd-ros dynamics-server --ros-args -p model_yaml:=config/mobile_arm7.yaml``: GetModel
    reports the base and wheels, the client's default names work, the answers are the
    in-process service's (linearize too: its state and input names), a sliding base_vy is
    refused with the message."""
    from rbd_ros.model import MdhModel
    from rbd_ros.ros.client import DynamicsClient, DynamicsError

    node_process(["dynamics-server", "--ros-args", "-p", f"model_yaml:={REPO / 'config' / 'mobile_arm7.yaml'}",
                  "-p", "service_namespace:=mobdiff"], ready="dynamics_server: ready", timeout=180)
    r = Robot.from_yaml(str(REPO / "config" / "mobile_arm7.yaml"))
    service = DynamicsService(r)
    joints = list(r.joint_names)
    with DynamicsClient(namespace="mobdiff", timeout=120) as c:
        m = c.get_model()
        assert m.base_type == "diff_drive"
        assert list(m.base_position_names) == BQ and list(m.base_velocity_names) == BV
        assert MdhModel.from_yaml(m.model_yaml).wheel_joints == tuple(WHEELS)
        assert c.joint_names == BQ + BV + WHEELS + joints
        Q, V, A = random_states(r, 2, 10, rolling=True)
        names = c.joint_names + [LATERAL_FORCE]
        eff = c.inverse_dynamics(Q, V, A, joint_names=names)
        assert eff.shape == (2, 2 + r.dof + 1)
        assert np.abs(eff - service.inverse_dynamics(names, Q, V, A)).max() < 1e-12
        assert c.inverse_dynamics(Q[0], V[0], A[0]).shape == (2 + r.dof,)
        M = c.mass_matrix(Q[0])
        assert M.shape == (r.nv, r.nv) and np.abs(M - r.mass_matrix(Q[0])).max() < 1e-12
        assert np.abs(c.gravity(Q) - service.gravity(c.joint_names, Q)).max() < 1e-12
        st = c.static_torques(Q, [1.0, -2.0, 3.0, 0.1, 0.2, -0.3], include_gravity=True, joint_names=names)
        assert st.shape == (2, 2 + r.dof + 1)
        assert np.abs(st - service.static_torques(names, Q, [1.0, -2.0, 3.0, 0.1, 0.2, -0.3],
                                                  include_gravity=True)).max() < 1e-12
        assert np.abs(c.jacobian(Q[0]) - r.jacobian(Q[0])).max() < 1e-12
        fk = c.forward_kinematics(Q[0])
        p = fk.tool_pose.position
        assert fk.frame_id == "world" and np.abs([p.x, p.y, p.z] - r.fk(Q[0])[:3, 3]).max() < 1e-12
        sim = c.forward_simulate(Q[0], 0.1 * V[0], np.zeros((1, r.nu)), 0.01, 0.001)
        assert sim.positions.shape == (11, r.nq) and np.all(sim.velocities[:, 1] == 0.0)
        U = np.random.default_rng(4).normal(size=r.nu)  # /mobdiff/linearize: [dq; ds], wheel inputs
        lin, ref = c.linearize(Q[0], V[0], U, dt=1e-3), service.linearize(c.joint_names, Q[0], V[0], U, dt=1e-3)
        assert lin.state_names == ref.state_names and lin.input_names == ref.input_names == WHEELS + joints
        assert lin.a.shape == (2 * r.nv - 1,) * 2 and np.abs(lin.a - ref.a).max() < 1e-12
        assert np.abs(lin.b - ref.b).max() < 1e-12
        V[1, 1] = 0.2
        with pytest.raises(DynamicsError, match="velocities state 1: base_vy = 0.2, but a diff_drive base"):
            c.inverse_dynamics(Q, V, A)
        with pytest.raises(DynamicsError, match="efforts are its wheel torques"):
            c.gravity(Q[0], joint_names=BQ + BV + joints)


@pytest.mark.slow
def test_ros_server_planar_urdf_renamed(omni, node_process) -> None:
    """The URDF bringup path (``base:=planar``: the deprecated name of ``base_type``, still
    accepted) with the base coordinates renamed by the server's parameters; a wrong parameter
    stops the server with one line."""
    from rbd_ros.ros.client import DynamicsClient

    r, service, pm, pd = omni
    proc = node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={OMNI}", "-p", "base:=planar",
                         "-p", "tip_link:=tool0", "-p", "service_namespace:=mobomni",
                         "-p", "base_position_names:=['x', 'y', 'theta']", "-p", "base_velocity_names:=[vx, vy, wz]"],
                        ready="dynamics_server: ready", timeout=180)
    bad = node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={OMNI}", "-p", "base:=planar",
                        "-p", "tip_link:=tool0", "-p", "service_namespace:=mobomni_bad",
                        "-p", "wheel_joint_names:=[a, b]"])
    joints = list(r.joint_names)
    with DynamicsClient(namespace="mobomni", timeout=120) as c:
        m = c.get_model()
        assert m.base_type == "planar" and list(m.base_position_names) == ["x", "y", "theta"]
        assert c.joint_names == ["x", "y", "theta", "vx", "vy", "wz", *joints]
        Q, V, A = random_states(r, 2, 11, rolling=False)
        tau = c.inverse_dynamics(Q, V, A)
        for k in range(2):
            assert rel_err(tau[k], pin.rnea(pm, pd, pin_q(Q[k]), V[k], A[k])) < TOL
    assert proc.alive()
    assert bad.wait(180) == 2
    errors = [line for line in bad.output.splitlines() if line.startswith("dynamics_server: error:")]
    assert len(errors) == 1 and "wheel_joint_names is for a 'diff_drive' base; this one is 'planar'" in errors[0]
    assert "parameter 'base' is deprecated: use 'base_type'" in bad.output  # the one warning line


def test_bringup_base_parameter_switches_a_model_file() -> None:
    """``base:=planar`` on the diff-drive file drops its wheels (as ``Robot.from_yaml``);
    ``base:=diff_drive`` on a file without wheels is one line saying what is needed."""
    from rbd_ros.ros.common import NodeConfigError
    from rbd_ros.ros.robot_params import robot_model

    model = robot_model({"model_yaml": str(REPO / "config" / "mobile_arm7.yaml")}, "planar").model
    assert model.base_type == "planar" and model.wheel_joints == () and model.wheel_radius == 0.0
    with pytest.raises(NodeConfigError, match="base 'diff_drive' needs the wheels \\(radius, separation\\) of a "
                                              "diff_drive model file or URDF; this model's base is 'planar'"):
        robot_model({"model_yaml": str(REPO / "config" / "omni_arm7.yaml")}, "diff_drive")
