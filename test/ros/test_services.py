"""Dynamics services: the node in its own process, called from this one.

Oracle: the core library on the same model in this process (results equal to 1e-12), plus
Pinocchio for the inverse-dynamics values themselves. Every bad input gets success=false with a
specific message while the node keeps serving.
"""
from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import pinocchio as pin  # (a test requirement: requirements-test.txt)
import pytest

from rbd_ros.robot import Robot
from rbd_ros.ros.client import DynamicsClient, DynamicsError
from rbd_ros.ros.messages import from_joint_trajectory, to_joint_trajectory
from robots_data import BUNDLED_URDF, REPO
from ros_helpers import ros_context

URDF = BUNDLED_URDF / "puma560.urdf"


@pytest.fixture(scope="module")
def server():
    from ros_helpers import NodeProcess

    proc = NodeProcess(["dynamics-server", "--ros-args", "-p", f"urdf_path:={URDF}",
                        "-p", "service_namespace:=dyn"])
    try:
        proc.wait_for("dynamics_server: ready", 120)
        yield proc
    finally:
        proc.stop()


@contextlib.contextmanager
def _served(ros_args: list[str], namespace: str):
    """A dynamics server process (``--ros-args`` ``ros_args``) serving under ``namespace``, and
    a client of it."""
    from ros_helpers import NodeProcess

    proc = NodeProcess(["dynamics-server", "--ros-args", *ros_args,
                        "-p", f"service_namespace:={namespace}"])
    try:
        proc.wait_for("dynamics_server: ready", 120)
        with DynamicsClient(namespace=namespace, timeout=60) as c:
            yield proc, c
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def small_client():
    """A second server that accepts at most 10 states per request."""
    with _served(["-p", f"urdf_path:={URDF}", "-p", "max_points:=10"], "small") as (_, c):
        yield c


@pytest.fixture(scope="module")
def robot():
    return Robot.from_urdf(str(URDF))


@pytest.fixture(scope="module")
def client(server):
    with DynamicsClient(namespace="dyn", timeout=60) as c:
        c.wait()
        yield c


def _random_states(robot, n_states, seed=0):
    rng = np.random.default_rng(seed)
    shape = (n_states, robot.dof)
    return rng.uniform(-1.5, 1.5, shape), rng.uniform(-2, 2, shape), rng.uniform(-5, 5, shape)


@pytest.mark.slow
def test_get_model_round_trips_the_model(client, robot):
    from rbd_ros.model import MdhModel

    res = client.get_model()
    assert list(res.joint_names) == list(robot.joint_names)
    model = MdhModel.from_yaml(res.model_yaml)
    for key in ("a", "alpha", "d", "theta", "mass", "com", "inertia", "base", "tool"):
        np.testing.assert_array_equal(getattr(model, key), getattr(robot.model, key), err_msg=key)
    assert [j.name for j in res.joints] == list(robot.joint_names)
    np.testing.assert_array_equal([j.a for j in res.joints], robot.model.a)
    assert res.gravity.z == pytest.approx(-9.81)


def test_inverse_dynamics_batch_matches_core_and_pinocchio(client, robot):
    q, qd, qdd = _random_states(robot, 50)
    tau = client.inverse_dynamics(q, qd, qdd)
    np.testing.assert_allclose(tau, robot.inverse_dynamics(q, qd, qdd), rtol=0, atol=1e-12)
    pm = pin.buildModelFromXML(URDF.read_text())
    pd = pm.createData()
    ref = np.array([pin.rnea(pm, pd, q[k], qd[k], qdd[k]) for k in range(len(q))])
    np.testing.assert_allclose(tau, ref, rtol=1e-9, atol=1e-9)
    # one state, the model's order: the server's single-call path (services.one_state_inverse_dynamics)
    for k in range(3):
        np.testing.assert_allclose(client.inverse_dynamics(q[k], qd[k], qdd[k]), ref[k],
                                   rtol=1e-9, atol=1e-9)


def test_joint_order_follows_the_request(client, robot):
    q, qd, qdd = _random_states(robot, 3, seed=1)
    perm = np.random.default_rng(2).permutation(robot.dof)
    names = [robot.joint_names[i] for i in perm]
    tau = client.inverse_dynamics(q[:, perm], qd[:, perm], qdd[:, perm], joint_names=names)
    np.testing.assert_allclose(tau, robot.inverse_dynamics(q, qd, qdd)[:, perm], atol=1e-12)
    one = client.inverse_dynamics(q[0, perm], qd[0, perm], qdd[0, perm], joint_names=names)
    np.testing.assert_allclose(one, robot.inverse_dynamics(q[0], qd[0], qdd[0])[perm], atol=1e-12)
    M = client.mass_matrix(q[0, perm], joint_names=names)
    np.testing.assert_allclose(M, robot.mass_matrix(q[0])[np.ix_(perm, perm)], atol=1e-12)


def test_tool_wrench_and_actuators(client, robot):
    q, qd, qdd = _random_states(robot, 4, seed=3)
    w = np.array([10.0, -5.0, 20.0, 1.0, 2.0, -3.0])
    tau = client.inverse_dynamics(q, qd, qdd, tool_wrench=w, include_actuators=True)
    ref = robot.inverse_dynamics(q, qd, qdd, tool_wrench=w, include_actuators=True)
    np.testing.assert_allclose(tau, ref, atol=1e-12)
    assert np.abs(tau - robot.inverse_dynamics(q, qd, qdd)).max() > 1e-3


def test_model_queries_match_core(client, robot):
    q = _random_states(robot, 2, seed=4)[0]
    np.testing.assert_allclose(client.mass_matrix(q), robot.mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(client.gravity(q), robot.gravity(q), atol=1e-12)
    np.testing.assert_allclose(client.jacobian(q[0]), robot.jacobian(q[0]), atol=1e-12)
    fk = client.forward_kinematics(q[0])
    T = robot.fk(q[0])
    p = fk.tool_pose.position
    np.testing.assert_allclose([p.x, p.y, p.z], T[:3, 3], atol=1e-12)
    from rbd_ros.lie.so3 import quaternion_to_rotation

    o = fk.tool_pose.orientation
    np.testing.assert_allclose(quaternion_to_rotation([o.x, o.y, o.z, o.w]), T[:3, :3], atol=1e-12)
    assert len(fk.link_poses) == robot.dof + 1


def _pose_matrix(pose) -> np.ndarray:
    """4x4 from a geometry_msgs/Pose, through Pinocchio's quaternion (an independent
    conversion)."""
    o, p = pose.orientation, pose.position
    T = np.eye(4)
    T[:3, :3] = pin.Quaternion(o.w, o.x, o.y, o.z).toRotationMatrix()
    T[:3, 3] = [p.x, p.y, p.z]
    return T


def test_forward_kinematics_every_link_pose(client, robot):
    """Every frame the service returns (base frame0 .. frame n), its names and frame_id,
    against the core's link poses, and the tool against Pinocchio's placement of the URDF's
    tip link."""
    q = np.random.default_rng(12).uniform(-1.5, 1.5, robot.dof)
    fk = client.forward_kinematics(q)
    assert fk.frame_id == robot.model.base_link
    assert list(fk.link_names) == ["frame0", *robot.model.link_names]
    expected = robot.link_poses(q)
    assert len(fk.link_poses) == len(expected) == robot.dof + 1
    for k, (pose, T) in enumerate(zip(fk.link_poses, expected)):
        np.testing.assert_allclose(_pose_matrix(pose), T, atol=1e-12, err_msg=f"link {k}")
    moved = [np.abs(_pose_matrix(p) - np.eye(4)).max() for p in fk.link_poses[1:]]
    assert min(moved) > 1e-3  # no frame is left at the identity
    pm = pin.buildModelFromXML(URDF.read_text())
    pd = pm.createData()
    pin.framesForwardKinematics(pm, pd, q)
    tip = pd.oMf[pm.getFrameId(robot.model.tip_link)].homogeneous
    np.testing.assert_allclose(_pose_matrix(fk.tool_pose), tip, atol=1e-9)


def test_forward_simulate_matches_core(client, robot):
    rng = np.random.default_rng(5)
    q0 = rng.uniform(-1, 1, robot.dof)
    qd0 = np.zeros(robot.dof)
    torques = rng.uniform(-5, 5, (10, robot.dof))  # 10 samples held 10 ms each
    sim = client.forward_simulate(q0, qd0, torques, effort_period=0.01, dt=0.001,
                                  output_period=0.005)
    assert sim.positions.shape == (21, robot.dof)
    np.testing.assert_allclose(sim.times, np.arange(21) * 0.005, atol=1e-15)
    q, qd, qdd = robot.simulate(q0, qd0, np.repeat(torques, 10, axis=0), 0.001)
    np.testing.assert_allclose(sim.positions, q[::5], atol=1e-12)
    np.testing.assert_allclose(sim.velocities, qd[::5], atol=1e-12)
    assert sim.compute_time > 0


def test_forward_simulate_against_pinocchio_and_its_own_positions(client, robot):
    """Oracles other than the core: the velocities are the time derivative of the returned
    positions (central differences, O(h^2)), and the accelerations are Pinocchio's ABA at the
    returned states under the torque held at that time."""
    rng = np.random.default_rng(13)
    q0 = rng.uniform(-1, 1, robot.dof)
    qd0 = rng.uniform(-1, 1, robot.dof)
    # held 50 ms each; the wrist's small inertia takes small torques
    torques = rng.uniform(-1, 1, (4, robot.dof)) * [40.0, 40.0, 20.0, 0.5, 0.5, 0.2]
    h = 0.001
    sim = client.forward_simulate(q0, qd0, torques, effort_period=0.05, dt=h)
    assert sim.positions.shape == (201, robot.dof)
    P = sim.positions  # fourth-order central differences, error O(h^4)
    central = (P[:-4] - 8 * P[1:-3] + 8 * P[3:-1] - P[4:]) / (12 * h)
    k = np.arange(2, 199)
    smooth = np.abs((k + 25) % 50 - 25) > 2  # not across a switch of the torque (qdd jumps)
    np.testing.assert_allclose(sim.velocities[2:-2][smooth], central[smooth], rtol=1e-4,
                               atol=1e-4)
    assert np.abs(sim.velocities[-1] - qd0).max() > 0.1  # the arm accelerates
    np.testing.assert_allclose(sim.velocities[0], qd0, atol=0)
    pm = pin.buildModelFromXML(URDF.read_text())
    pd = pm.createData()
    for k in range(0, 200, 7):  # not at a switch of the torque (row k // 50 held there)
        tau = torques[k // 50]
        ref = pin.aba(pm, pd, sim.positions[k], sim.velocities[k], tau)
        np.testing.assert_allclose(sim.accelerations[k], ref, rtol=1e-9, atol=1e-8,
                                   err_msg=f"sample {k}")


def test_forward_simulate_integrator_option(client, robot):
    """'euler' (semi-implicit) is the core's semi-implicit Euler, and not RK4."""
    rng = np.random.default_rng(14)
    q0, torques = rng.uniform(-1, 1, robot.dof), rng.uniform(-10, 10, (5, robot.dof))
    qd0 = np.zeros(robot.dof)
    euler = client.forward_simulate(q0, qd0, torques, effort_period=0.002, dt=0.002,
                                    integrator="euler")
    q, qd, _ = robot.simulate(q0, qd0, torques, 0.002, integrator="semi_implicit_euler")
    np.testing.assert_allclose(euler.positions, q, atol=1e-12)
    np.testing.assert_allclose(euler.velocities, qd, atol=1e-12)
    rk4 = client.forward_simulate(q0, qd0, torques, effort_period=0.002, dt=0.002)
    assert np.abs(rk4.positions - euler.positions).max() > 1e-6


@pytest.mark.parametrize("mutate, message", [
    (lambda r: setattr(r, "joint_names", ["nope", *r.joint_names[1:]]), "unknown joint names ['nope']"),
    (lambda r: setattr(r, "joint_names", r.joint_names[:-1]), "lacks"),
    (lambda r: setattr(r, "positions", list(r.positions)[:-1]), "not a multiple of 6"),
    (lambda r: setattr(r, "velocities", list(r.velocities) * 2), "velocities has 2 states"),
    (lambda r: setattr(r, "accelerations", [float("nan")] * 6), "accelerations contains NaN"),
    (lambda r: setattr(r, "positions", [float("inf")] * 6), "positions contains NaN or Inf"),
    (lambda r: (setattr(r, "positions", []), setattr(r, "velocities", []),
                setattr(r, "accelerations", [])), "positions is empty"),
    (lambda r: setattr(r.tool_wrench.torque, "y", float("nan")), "tool_wrench must be 6 finite"),
])
def test_bad_inverse_dynamics_requests_are_refused(client, robot, mutate, message):
    from rbd_ros_interfaces.srv import InverseDynamics

    req = InverseDynamics.Request(joint_names=list(robot.joint_names), positions=[0.1] * 6,
                                  velocities=[0.0] * 6, accelerations=[0.0] * 6)
    mutate(req)
    res = _raw_call(client, "inverse_dynamics", req)
    assert not res.success
    assert message in res.message
    # and the node still serves
    assert client.gravity(np.zeros(robot.dof)).shape == (robot.dof,)


@pytest.mark.parametrize("field, value, message", [
    ("integrator", "leapfrog", "integrator 'leapfrog' unknown"),
    ("dt", 0.0, "dt must be a positive number"),
    ("effort_period", float("nan"), "effort_period must be a positive number"),
    ("duration", 2000.0, "2000000 integration steps requested"),
])
def test_bad_simulation_requests_are_refused(client, robot, field, value, message):
    from rbd_ros_interfaces.srv import ForwardSimulate

    req = ForwardSimulate.Request(joint_names=list(robot.joint_names),
                                  initial_positions=[0.0] * 6, initial_velocities=[0.0] * 6,
                                  efforts=[0.0] * 6, effort_period=0.01, dt=0.001)
    setattr(req, field, value)
    res = _raw_call(client, "forward_simulate", req)
    assert not res.success and message in res.message


@pytest.mark.slow
def test_too_many_points_are_refused(small_client, robot):
    q = np.zeros((11, robot.dof))
    with pytest.raises(DynamicsError, match="positions has 11 states; this server accepts at most 10"):
        small_client.inverse_dynamics(q, q, q)
    with pytest.raises(DynamicsError, match="20 integration steps requested; .* at most 10"):
        small_client.forward_simulate(q[0], q[0], q[:1], effort_period=0.001, dt=0.001, duration=0.02)
    assert small_client.inverse_dynamics(q[:10], q[:10], q[:10]).shape == (10, robot.dof)


def test_unknown_jacobian_link_is_refused(client, robot):
    with pytest.raises(DynamicsError, match="unknown link 'nowhere'"):
        client.jacobian(np.zeros(robot.dof), link="nowhere")


def _raw_call(client, name, req):
    c = client._clients[name]
    future = c.call_async(req)
    client._executor.spin_until_future_complete(future, timeout_sec=30)
    return future.result()


@pytest.mark.slow
def test_concurrent_clients(server, robot):
    """8 clients x 1000 calls, all succeed with the right answer."""
    q, qd, qdd = _random_states(robot, 1, seed=6)
    expected = robot.inverse_dynamics(q, qd, qdd)[0]
    errors: list[str] = []
    counts = [0] * 8

    def worker(k: int) -> None:
        try:
            with DynamicsClient(namespace="dyn", timeout=60) as c:
                names = list(robot.joint_names)
                for _ in range(1000):
                    tau = c.inverse_dynamics(q[0], qd[0], qdd[0], joint_names=names)
                    if np.abs(tau - expected).max() > 1e-12:
                        errors.append(f"client {k}: wrong answer {tau}")
                        return
                    counts[k] += 1
        except Exception as exc:  # noqa: BLE001
            errors.append(f"client {k}: {exc!r}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, (errors[:3], counts)
    assert counts == [1000] * 8


@pytest.mark.slow
def test_long_simulation_does_not_block_other_services(client, robot):
    """While a 400 s RK4 simulation (400,000 steps) runs, gravity calls keep being answered."""
    from rbd_ros_interfaces.srv import ForwardSimulate

    with ros_context() as ctx:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        node = rclpy.create_node("sim_caller", context=ctx)
        c = node.create_client(ForwardSimulate, "/dyn/forward_simulate")
        assert c.wait_for_service(timeout_sec=30)
        req = ForwardSimulate.Request(joint_names=list(robot.joint_names),
                                      initial_positions=[0.0] * 6, initial_velocities=[0.0] * 6,
                                      efforts=[0.0] * 6, effort_period=0.001, dt=0.001,
                                      duration=400.0, output_period=1.0)
        ex = SingleThreadedExecutor(context=ctx)
        ex.add_node(node)
        future = c.call_async(req)
        answered_during = 0
        t0 = time.perf_counter()
        while not future.done() and time.perf_counter() - t0 < 120:
            ex.spin_once(timeout_sec=0.0)
            client.gravity(np.zeros(robot.dof))
            ex.spin_once(timeout_sec=0.0)
            if not future.done():
                answered_during += 1
        ex.spin_until_future_complete(future, timeout_sec=120)
        res = future.result()
        ex.shutdown()
        node.destroy_node()
    assert res.success, res.message
    assert len(res.times) == 401
    assert res.compute_time > 0.05  # long enough for the check below to mean something
    assert answered_during >= 3, f"only {answered_during} gravity calls answered during the simulation"


def test_joint_trajectory_conversion_round_trip(robot):
    t = np.array([0.0, 0.5, 1.25])
    q, qd, qdd = _random_states(robot, 3, seed=7)
    traj = to_joint_trajectory(list(robot.joint_names), t, q, qd, qdd)
    names, t2, q2, qd2, qdd2 = from_joint_trajectory(traj)
    assert names == list(robot.joint_names)
    np.testing.assert_allclose(t2, t, atol=1e-9)
    np.testing.assert_array_equal(q2, q)
    np.testing.assert_array_equal(qdd2, qdd)


@pytest.mark.parametrize("own_node", [True, False], ids=["own node", "caller's node"])
def test_client_resends_and_ignores_the_late_answer_to_a_resent_request(own_node):
    """A server that takes 1.5 s for the first request: DynamicsClient sends it again after
    1 s, returns the first answer, and its next call returns its own answer, not the late
    answer to the resent request (matched by sequence number on its own node, by future on a
    caller's node). The server is in this process, on its own context, numbering its
    answers."""
    import rclpy

    from rbd_ros_interfaces.srv import InverseDynamics
    from ros_helpers import spin_in_background

    answered: list[int] = []

    def handler(req, res):
        k = len(answered)
        answered.append(k)
        if k == 0:
            time.sleep(1.5)
        res.efforts = [float(k)] * len(req.joint_names)
        res.success, res.message = True, "ok"
        return res

    with ros_context() as ctx:
        node = rclpy.create_node("slow_server", context=ctx)
        node.create_service(InverseDynamics, "/slow/inverse_dynamics", handler)
        executor = spin_in_background(node)
        caller = None if own_node else rclpy.create_node("slow_caller", context=ctx)
        with DynamicsClient(namespace="slow", node=caller, timeout=20) as c:
            names = ["a", "b"]
            first = c.inverse_dynamics([0.0, 0.0], [0.0, 0.0], [0.0, 0.0], joint_names=names)
            second = c.inverse_dynamics([0.0, 0.0], [0.0, 0.0], [0.0, 0.0], joint_names=names)
        executor.shutdown()
    np.testing.assert_array_equal(first, [0.0, 0.0])
    assert answered == [0, 1, 2]  # the original, the resend, the second call
    np.testing.assert_array_equal(second, [2.0, 2.0])


def test_client_on_a_node_of_the_callers(server, robot):
    """DynamicsClient(node=...) calls through that node (call_async) and leaves the node to
    its owner when closed."""
    import rclpy
    from std_msgs.msg import Float64

    q, qd, qdd = _random_states(robot, 2, seed=11)
    with ros_context() as ctx:
        node = rclpy.create_node("callers_node", context=ctx)
        with DynamicsClient(namespace="dyn", node=node, timeout=60) as c:
            np.testing.assert_allclose(c.inverse_dynamics(q[0], qd[0], qdd[0]),
                                       robot.inverse_dynamics(q[0], qd[0], qdd[0]), atol=1e-12)
            np.testing.assert_allclose(c.inverse_dynamics(q, qd, qdd),
                                       robot.inverse_dynamics(q, qd, qdd), atol=1e-12)
            with pytest.raises(DynamicsError, match="contains NaN"):
                c.gravity(np.full(robot.dof, np.nan))
        node.create_publisher(Float64, "/still_alive", 1)  # the node was not destroyed
        node.destroy_node()


# ---- start-up options: robot_description + gravity, model_yaml --------------------------------
WALL_GRAVITY = [0.0, 9.81, 0.0]  # an arm mounted on a wall


@pytest.fixture(scope="module")
def wall_client(tmp_path_factory):
    """A server given the URDF as ``robot_description`` text (in a parameters file, as a
    launch file passes it) and a non-default ``gravity``."""
    import yaml

    params = tmp_path_factory.mktemp("params") / "server.yaml"
    params.write_text(yaml.safe_dump({"wall": {"ros__parameters": {
        "robot_description": URDF.read_text(), "gravity": WALL_GRAVITY}}}))
    with _served(["-r", "__node:=wall", "--params-file", str(params)], "wall") as (proc, c):
        assert "from robot_description" in proc.output
        yield c


@pytest.fixture(scope="module")
def yaml_client():
    """A server from the bundled model file, actuators (gear ratios, rotor inertias) included."""
    with _served(["-p", f"model_yaml:={REPO / 'config' / 'puma560.yaml'}"], "fromyaml") as (_, c):
        yield c


@pytest.mark.slow
def test_gravity_parameter_and_robot_description(wall_client, robot):
    q = np.random.default_rng(15).uniform(-1.5, 1.5, (3, robot.dof))
    pm = pin.buildModelFromXML(URDF.read_text())
    pm.gravity.linear = np.array(WALL_GRAVITY)
    pd = pm.createData()
    ref = np.array([pin.computeGeneralizedGravity(pm, pd, qk) for qk in q])
    np.testing.assert_allclose(wall_client.gravity(q), ref, rtol=1e-9, atol=1e-9)
    assert np.abs(ref - robot.gravity(q)).max() > 1.0  # not the default gravity
    g = wall_client.get_model().gravity
    assert [g.x, g.y, g.z] == WALL_GRAVITY


@pytest.mark.slow
def test_model_yaml_start_up_and_actuator_option(yaml_client):
    """The model file's actuators: include_actuators adds the reflected rotor inertia and the
    joint friction, G^2 Jm qdd + B qd + Tc sign(qd) (003 (6.16)-(6.17)), to inverse dynamics
    and to the simulation."""
    from rbd_ros.model import MdhModel

    model = MdhModel.from_yaml(str(REPO / "config" / "puma560.yaml"))
    assert list(yaml_client.get_model().joint_names) == list(model.joint_names)
    robot = Robot(model)
    rng = np.random.default_rng(16)
    q, qd, qdd = rng.uniform(-1, 1, (3, 3, model.dof))
    plain = yaml_client.inverse_dynamics(q, qd, qdd)
    with_act = yaml_client.inverse_dynamics(q, qd, qdd, include_actuators=True)
    reflected = (model.gear_ratio**2 * model.rotor_inertia * qdd + model.viscous * qd
                 + model.coulomb * np.sign(qd))
    np.testing.assert_allclose(with_act - plain, reflected, atol=1e-9)
    assert np.abs(reflected).max() > 0.1
    torques = rng.uniform(-5, 5, (20, model.dof))
    sim = yaml_client.forward_simulate(q[0], qd[0], torques, effort_period=0.001, dt=0.001,
                                       include_actuators=True)
    qs, qds, _ = robot.simulate(q[0], qd[0], torques, 0.001, include_actuators=True)
    np.testing.assert_allclose(sim.positions, qs, atol=1e-12)
    np.testing.assert_allclose(sim.velocities, qds, atol=1e-12)
    bare = yaml_client.forward_simulate(q[0], qd[0], torques, effort_period=0.001, dt=0.001)
    assert np.abs(bare.velocities - sim.velocities).max() > 1e-4


@pytest.mark.parametrize("own_node", [True, False], ids=["own node", "caller's node"])
@pytest.mark.slow
def test_client_timeout_path(own_node):
    """No server: ``service ... not available``; a server slower than ``timeout``: ``no answer
    from ... within`` (a DynamicsError, not a hang), in about ``timeout`` seconds."""
    import rclpy

    from rbd_ros_interfaces.srv import InverseDynamics
    from ros_helpers import spin_in_background

    def handler(req, res):
        time.sleep(2.0)
        res.success, res.message = True, "ok"
        return res

    with ros_context() as ctx:
        caller = None if own_node else rclpy.create_node("timeout_caller", context=ctx)
        with DynamicsClient(namespace="nobody_here", node=caller, timeout=0.5) as c:
            with pytest.raises(DynamicsError, match=r"service /nobody_here/\w+ not available"):
                c.gravity([0.0, 0.0])
        node = rclpy.create_node("silent_server", context=ctx)
        node.create_service(InverseDynamics, "/silent/inverse_dynamics", handler)
        executor = spin_in_background(node)
        with DynamicsClient(namespace="silent", node=caller, timeout=1.0) as c:
            c._clients["inverse_dynamics"].wait_for_service(timeout_sec=30)
            t0 = time.monotonic()
            with pytest.raises(DynamicsError,
                               match="no answer from /silent/inverse_dynamics within 1.0 s"):
                c.inverse_dynamics([0.0], [0.0], [0.0], joint_names=["a"])
            assert time.monotonic() - t0 >= 1.0
        executor.shutdown(timeout_sec=5.0)
        node.destroy_node()
