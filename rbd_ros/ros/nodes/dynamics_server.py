"""Node ``dynamics_server``: the core's dynamics as ROS 2 services.

``rbd-ros dynamics-server --ros-args -p urdf_path:=arm.urdf -p tip_link:=tool0``

Parameters
  the robot: model_yaml | robot_description | urdf_path, base_link, tip_link, gravity (those of
  every node: ``rbd_ros.ros.robot_params``; gravity: parameter > model file > [0, 0, -9.81])
  base               'fixed', 'floating' (base_link a free body on SE(3), which then needs an
                     inertial), 'planar' or 'diff_drive' (a ground base, x, y, yaw; a URDF's
                     wheels are found by ``rbd_ros.urdf.wheels``); '' = the model file's (a
                     URDF: fixed). A moving base's requests name its coordinates beside the
                     joints (GetModel base_position_names, base_velocity_names; a diff_drive
                     base's efforts are its wheel torques; ``rbd_ros.robot.services``)
  base_position_names, base_velocity_names, wheel_joint_names  string arrays renaming those
                     entries (unset = base_x, base_y, base_yaw / base_vx, base_vy, base_wz for
                     a ground base, base_x .. base_qw / base_vx .. base_wz for a floating one;
                     the model's wheel joints); checked by ``rbd_ros.robot.services.base_names``
  service_namespace  'rbd'                              max_points  1000000 states per request
  max_request_seconds  10.0: the most a request may compute (s); one still computing then is
                     answered success=false with a message saying it hit this bound (batches
                     and simulations are checked between chunks, inverse kinematics is stopped
                     inside its kernel; ``rbd_ros.robot.services``)
  allow_shared_namespace  false: refuse to start (exit 2) when another server already offers
                     the services under this namespace (clients would get answers from either)

Services (``rbd_ros_interfaces/srv``) under ``/<service_namespace>/``: inverse_dynamics,
forward_simulate, mass_matrix, gravity, forward_kinematics, jacobian, get_model,
inverse_kinematics, static_torques, regressor (``regressor_service``). A request the
model cannot answer gets ``success=false`` and a message saying what is wrong; the node never
dies on a request.

Executors: the quick services are served by ``LeanExecutor`` (``rbd_ros/ros/lean_executor.py``),
a wait loop over the node's services that calls each callback directly; rclpy's
``SingleThreadedExecutor`` costs 0.1-0.15 ms more per call (it rebuilds its wait set and wraps
every callback in a task), and a ``MultiThreadedExecutor`` another 0.2-0.3 ms (a worker thread
per callback). ``forward_simulate`` lives on a companion node ``<name>_sim`` and
``inverse_kinematics`` on ``<name>_ik`` (no parameters of their own), each served by a
``LeanExecutor`` in its own thread, with its own workspace; their kernels release the GIL, so a
long simulation or solve does not block the other services (issue 27: one unreachable IK target
with a huge ``max_restarts`` starved every service).

Shutdown: SIGINT or SIGTERM ends the process within a second whatever it computes: the main
thread only waits (the long work is on the companions' threads, without the GIL), and
``close`` stops the work under way (``DynamicsService.stop``: the IK kernel's stop flag, the
simulation at its next chunk) before it joins the threads.
"""
from __future__ import annotations

import array
import gc
import sys
import time
import traceback

import numpy as np

from rbd_ros.ros.common import NodeConfigError, run_node
from rbd_ros.ros.messages import matrix_to_pose
from rbd_ros.ros.parameters import schema
from rbd_ros.ros.robot_params import robot_from_node
from rbd_ros.ros.topics import dynamics_service_types


def SERVICE_QOS():
    """Reliable with a deep history: with the default depth of 10, a burst of requests from
    many clients can overwrite a response before a slow client has taken it (seen with 8
    concurrent clients), and that client then waits forever."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


_array = array.array


def f64(x: np.ndarray) -> array.array:
    """``x`` as the ``array.array('d')`` a ``float64[]`` field stores. The generated setter runs
    ``array.array('d', value)``, which copies an ``array.array`` with one memcpy but iterates a
    numpy array element by element (0.12-0.35 us per value: 8-25 ms for 10 000 x 7 efforts)."""
    return array.array("d", np.ascontiguousarray(x, dtype=np.float64).tobytes())


def model_joints_msg(model) -> list:
    from rbd_ros_interfaces.msg import MdhJoint

    out = []
    for i, name in enumerate(model.joint_names):
        out.append(MdhJoint(
            name=name, link=model.link_names[i], type=int(model.joint_type[i]),
            a=float(model.a[i]), alpha=float(model.alpha[i]), d=float(model.d[i]),
            theta=float(model.theta[i]), mass=float(model.mass[i]),
            com=model.com[i].tolist(), inertia=model.inertia[i].reshape(-1).tolist(),
            lower=float(model.lower[i]), upper=float(model.upper[i]),
            velocity_limit=float(model.velocity_limit[i]), effort_limit=float(model.effort_limit[i]),
            gear_ratio=float(model.gear_ratio[i]), rotor_inertia=float(model.rotor_inertia[i]),
            viscous=float(model.viscous[i]), coulomb=float(model.coulomb[i])))
    return out


def service_prefix(namespace: str) -> str:
    """``/<namespace>/`` of the services, or ``NodeConfigError`` for an invalid name."""
    from rclpy.exceptions import InvalidServiceNameException
    from rclpy.validate_full_topic_name import validate_full_topic_name

    ns = str(namespace).strip("/")
    prefix = f"/{ns}/" if ns else "/"
    try:
        validate_full_topic_name(prefix + "get_model", is_service=True)
    except InvalidServiceNameException as exc:
        reason = str(exc).splitlines()[0]
        raise NodeConfigError(f"service_namespace '{namespace}' is not a valid ROS name: "
                              f"{reason}") from None
    return prefix


#: seconds after start-up within which another host's server must have been discovered
DISCOVERY_WAIT = 1.0
#: seconds a server waits for this host's lock of its namespace (a predecessor shutting down)
LOCK_WAIT = 5.0


def namespace_lock(prefix: str, shared: bool, wait: float = LOCK_WAIT):
    """This host's lock of ``<prefix>`` in this ``ROS_DOMAIN_ID``: an open file holding an
    ``flock``, exclusive for a server that must be alone, shared for one started with
    ``allow_shared_namespace``.  The kernel drops it when the process ends, however it ends
    (kill -9 included), so it never goes stale.  It makes the one-server-per-namespace check
    exact on one host, where DDS discovery may take longer than any fixed window on a loaded
    machine; ``refuse_if_served`` still covers servers on other hosts.

    Returns the open file (keep it for the server's lifetime); ``NodeConfigError`` naming
    the holder when an exclusive lock is still refused after ``wait`` s; ``None`` for a
    shared server that could not share (it runs anyway, as it was told to)."""
    import fcntl
    import os
    import tempfile

    folder = os.path.join(tempfile.gettempdir(), f"rbd_ros-locks-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    domain = os.environ.get("ROS_DOMAIN_ID", "0") or "0"
    # '%' is no ROS name character: '/a_b/' and '/a/b/' get files of their own
    path = os.path.join(folder, f"domain{domain}{prefix.replace('/', '%')}lock")
    handle = open(path, "a+")  # noqa: SIM115 - held open for the process's lifetime
    mode = (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB
    until = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, mode)
            break
        except BlockingIOError:
            if shared:
                handle.close()
                return None
            if time.monotonic() >= until:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                handle.close()
                raise NodeConfigError(
                    f"the services {prefix}* are already offered by another dynamics_server "
                    f"on this host ({holder}); stop it, choose another service_namespace, "
                    f"or set allow_shared_namespace:=true") from None
            time.sleep(0.1)
    if not shared:
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}")
        handle.flush()
    return handle


def refuse_if_served(node, prefix: str, started: float) -> None:
    """``NodeConfigError`` when another server already answers ``<prefix>get_model``: two
    servers in one namespace would answer a client at random.  Discovery runs while the robot
    loads; this waits for what is left of ``DISCOVERY_WAIT`` since ``started`` (this host's
    servers are found exactly by ``namespace_lock``).  A server seen in the graph is asked for
    its model, so the stale entry of a killed one (kept until its DDS lease expires) does not
    block a restart."""
    name = prefix + "get_model"
    while node.count_services(name) == 0:
        if time.monotonic() - started >= DISCOVERY_WAIT:
            return
        time.sleep(0.05)
    if not _answers(node, name):
        node.get_logger().warning(f"{name} is in the ROS graph but does not answer (a server "
                                  f"that was killed?): starting anyway")
        return
    others = _servers_of(node, name)
    who = f" ({', '.join(others)})" if others else ""
    raise NodeConfigError(f"the services {prefix}* are already offered by another "
                          f"dynamics_server{who}; stop it, choose another service_namespace, "
                          f"or set allow_shared_namespace:=true")


def _answers(node, name: str, timeout: float = 3.0) -> bool:
    """Whether a ``GetModel`` request to ``name`` gets a response within ``timeout`` s (on a
    helper node no executor spins)."""
    import rclpy

    from rbd_ros.ros.lean_executor import call_once
    from rbd_ros_interfaces.srv import GetModel

    helper = rclpy.create_node(f"{node.get_name()}_probe", namespace=node.get_namespace(),
                               context=node.context, use_global_arguments=False,
                               start_parameter_services=False, enable_rosout=False)
    try:
        client = helper.create_client(GetModel, name, qos_profile=SERVICE_QOS())
        until = time.monotonic() + timeout
        if not client.wait_for_service(timeout_sec=timeout):
            return False
        return call_once(helper, client, GetModel.Request(), max(0.0, until - time.monotonic())) is not None
    finally:
        helper.destroy_node()


def _servers_of(node, service: str) -> list[str]:
    """Full names of the other nodes offering ``service`` (as far as discovered)."""
    out = []
    for n, ns in node.get_node_names_and_namespaces():
        try:
            served = {s for s, _ in node.get_service_names_and_types_by_node(n, ns)}
        except Exception:  # noqa: BLE001 - the node left meanwhile
            continue
        if service in served and n != node.get_name():
            out.append(f"{ns.rstrip('/')}/{n}")
    return out


#: the server's names of base coordinates and wheels (string arrays, unset = the defaults)
NAME_PARAMETERS = ("base_position_names", "base_velocity_names", "wheel_joint_names")


def served_names(node, model):
    """Declare ``NAME_PARAMETERS`` (read-only) and check them against ``model``
    (``rbd_ros.robot.services.base_names``, the one place); ``NodeConfigError`` naming the parameter."""
    from rclpy.exceptions import InvalidParameterTypeException, ParameterUninitializedException
    from rclpy.parameter import Parameter

    from rbd_ros.robot.services import base_names

    given = {}
    for name in NAME_PARAMETERS:
        descriptor = schema("dynamics_server")[name].descriptor()
        descriptor.dynamic_typing = False  # declared by type, unset = the defaults
        try:
            node.declare_parameter(name, Parameter.Type.STRING_ARRAY, descriptor)
            given[name] = tuple(node.get_parameter(name).value)
        except ParameterUninitializedException:
            given[name] = ()
        except InvalidParameterTypeException:
            raise NodeConfigError(f"{name} must be a list of strings, e.g. "
                                  f"\"{name}:=['a', 'b', 'c']\"") from None
    try:
        return base_names(model, given["base_position_names"], given["base_velocity_names"],
                          given["wheel_joint_names"])
    except ValueError as exc:
        raise NodeConfigError(str(exc)) from None


class DynamicsServer:
    """Creates the services on ``node``; each handler converts messages around
    ``rbd_ros.robot.services.DynamicsService``."""

    def __init__(self, node) -> None:
        import rclpy

        from rbd_ros.robot import Robot
        from rbd_ros.robot.services import (
            DynamicsService,
            named_model,
        )
        from rbd_ros.ros.lean_executor import LeanExecutor, spin_in_thread

        self.node = node
        started = time.monotonic()
        prm = schema("dynamics_server").declare(node, ["service_namespace", "max_points",
                                                       "max_request_seconds", "allow_shared_namespace"])
        prefix = service_prefix(prm["service_namespace"])
        bound = float(prm["max_request_seconds"])
        loaded = robot_from_node(node)  # + base_type, gravity ...
        names = served_names(node, loaded.model)
        robot, source = Robot(named_model(loaded.model, names)), loaded.source
        if loaded.link_frames is not None:  # a URDF: every link answers FK by name
            robot.with_link_frames(loaded.link_frames)
        shared = bool(prm["allow_shared_namespace"])
        self._lock = namespace_lock(prefix, shared)
        if not shared:
            refuse_if_served(node, prefix, started)
        max_points = int(prm["max_points"])
        # the main node's batches run on the thread the signal interrupts: they ask the context
        self.service = DynamicsService(robot, max_points, names, float(bound), alive=node.context.ok)
        self._one_state = self.service.one_state_inverse_dynamics
        # the simulation and the IK get their own workspaces, so they run beside the others
        self.sim_service = DynamicsService(Robot(robot.model), max_points, names, float(bound))
        self._warned_torques = False  # one log line for the deprecated ForwardSimulate fields
        self.ik_service = DynamicsService(Robot(robot.model), max_points, names, float(bound))
        types = dynamics_service_types()
        # the companion nodes: global arguments (a __node remap, parameters) are the main
        # node's; service names are absolute, so a namespace remap does not matter either
        self.sim_node, self.ik_node = (
            rclpy.create_node(f"{node.get_name()}_{tag}", namespace=node.get_namespace(),
                              context=node.context, use_global_arguments=False,
                              start_parameter_services=False) for tag in ("sim", "ik"))
        owners = {"forward_simulate": self.sim_node, "inverse_kinematics": self.ik_node}
        self._services = []
        for name in types:
            handler = self._guard(getattr(self, "_" + name))
            owner = owners.get(name, node)
            self._services.append(owner.create_service(types[name], prefix + name, handler,
                                                       qos_profile=SERVICE_QOS()))
        self._warm()
        self._companions = []  # (executor, thread) of each companion node
        for name, owner in owners.items():
            executor = LeanExecutor(context=node.context)
            executor.add_node(owner)
            self._companions.append((executor, spin_in_thread(executor, name)))
        model = robot.model
        print(f"dynamics_server: ready ({model.dof} joints {list(model.joint_names)}, "
              f"{model.base_type} base{self._entries(names)}, "
              f"{model.base_link} -> {model.tip_link}, from {source}) serving {prefix}*",
              flush=True)

    def _warm(self) -> None:
        """Load the IK and simulation kernels before the first request (~20 ms from numba's
        cache): compiled on first use instead, with a cold cache, they hold the GIL for
        seconds inside that request's ``max_request_seconds``."""
        if self.service.moving:
            return
        robot, sim = self.ik_service.robot, self.sim_service.robot
        q = np.clip(np.zeros(robot.dof), robot.model.lower, robot.model.upper)
        T = robot.fk(q)
        robot.ik(T, seeds=q, max_restarts=0, timeout=1.0)
        robot.ik(np.stack([T, T]), seeds=np.stack([q, q]), max_restarts=0, timeout=1.0)
        sim.simulate(q, np.zeros(robot.dof), np.zeros((1, robot.dof)), 1e-3)

    @staticmethod
    def _entries(names) -> str:
        """A moving base's named entries for the ready line ('' for a fixed base)."""
        every = names.positions + names.velocities + names.wheels
        return f" {list(every)}" if every else ""

    def close(self) -> None:
        """Stop the work under way (``DynamicsService.stop``), the companions' threads, and
        destroy the companion nodes (the main node is the caller's); well within a second."""
        for service in (self.service, self.sim_service, self.ik_service):
            service.stop()
        for executor, _ in self._companions:
            executor.shutdown(timeout_sec=0.0)
        until = time.monotonic() + 0.5
        for _, thread in self._companions:
            thread.join(timeout=max(0.0, until - time.monotonic()))
        self.sim_node.destroy_node()
        self.ik_node.destroy_node()
        if self._lock is not None:
            self._lock.close()  # releases this host's lock of the namespace

    def _guard(self, fn):
        """Any refusal becomes success=false with its message; nothing escapes to rclpy."""
        from rbd_ros.robot.services import RequestError

        def handler(request, response):
            try:
                fn(request, response)
                response.success = True
                response.message = "ok"
            except RequestError as exc:
                response.success, response.message = False, str(exc)
            except Exception as exc:  # noqa: BLE001 - a bug must not kill the server
                self.node.get_logger().error(f"{fn.__name__}: {traceback.format_exc()}")
                response.success, response.message = False, f"internal error: {exc!r}"
            return response

        return handler

    # ---- handlers ------------------------------------------------------------------------
    def _inverse_dynamics(self, req, res) -> None:
        f, t = req.tool_wrench.force, req.tool_wrench.torque
        w = (f.x, f.y, f.z, t.x, t.y, t.z)
        w = w if any(w) else None  # NaN counts as given: the service refuses it
        tau = None
        if w is None and not req.include_actuators:  # the common single call, checked in its kernel
            tau = self._one_state(req.joint_names, req.positions, req.velocities, req.accelerations)
        if tau is None:
            tau = self.service.inverse_dynamics(req.joint_names, req.positions, req.velocities,
                                                req.accelerations, w, req.include_actuators)
        res.efforts = _array("d", tau.tobytes())  # C-contiguous float64 (f64 without its copy)

    def _forward_simulate(self, req, res) -> None:
        from rbd_ros.robot.services import renamed_field

        # torques/torque_period: the fields' old names, still read for one release
        efforts, old_e = renamed_field("efforts", getattr(req, "efforts", ()), "torques", req.torques)
        period, old_p = renamed_field("effort_period", getattr(req, "effort_period", 0.0), "torque_period",
                                      req.torque_period)  # getattr: interfaces built before the rename
        if (old_e or old_p) and not self._warned_torques:
            self._warned_torques = True
            self.node.get_logger().warning("a ForwardSimulate request used torques/torque_period: "
                                           "deprecated, use efforts/effort_period (one release)")
        out = self.sim_service.forward_simulate(
            req.joint_names, req.initial_positions, req.initial_velocities, efforts,
            period, req.dt, req.integrator, req.duration, req.output_period,
            req.include_actuators, fields=("torques" if old_e else "efforts",
                                           "torque_period" if old_p else "effort_period"))
        res.times = f64(out.times)
        res.positions = f64(out.positions)
        res.velocities = f64(out.velocities)
        res.accelerations = f64(out.accelerations)
        res.compute_time = float(out.compute_time)

    def _regressor(self, req, res) -> None:
        from rbd_ros.ros.nodes.regressor_service import answer

        answer(self.service, req, res)  # issue 31

    def _mass_matrix(self, req, res) -> None:
        M = self.service.mass_matrix(req.joint_names, req.positions, req.include_actuators)
        res.mass_matrix = f64(M)

    def _gravity(self, req, res) -> None:
        res.efforts = f64(self.service.gravity(req.joint_names, req.positions))

    def _forward_kinematics(self, req, res) -> None:
        tool, links = self.service.forward_kinematics(req.joint_names, req.positions)
        model = self.service.robot.model
        res.frame_id = "world" if self.service.moving else model.base_link  # a moving base: base_link moves
        res.tool_pose = matrix_to_pose(tool)
        res.link_names = ["frame0", *model.link_names]
        res.link_poses = [matrix_to_pose(T) for T in links]
        if len(req.links):  # URDF links by name (rbd_ros.model.link_frames)
            poses = [matrix_to_pose(T) for T in
                     self.service.urdf_link_poses(req.joint_names, req.positions, list(req.links))]
            res.poses = poses  # the field's old name, filled for one release
            if hasattr(res, "urdf_link_poses"):  # interfaces built before the rename have none
                res.urdf_link_poses = poses

    def _jacobian(self, req, res) -> None:
        res.jacobian = f64(self.service.jacobian(req.joint_names, req.positions, req.link))

    def _get_model(self, req, res) -> None:
        from geometry_msgs.msg import Vector3

        model = self.service.robot.model
        res.name, res.base_link, res.tip_link = model.name, model.base_link, model.tip_link
        res.joint_names = list(model.joint_names)
        res.joints = model_joints_msg(model)
        res.base, res.tool = matrix_to_pose(model.base), matrix_to_pose(model.tool)
        g = model.gravity
        res.gravity = Vector3(x=float(g[0]), y=float(g[1]), z=float(g[2]))
        res.model_yaml = model.to_yaml()
        res.base_type = model.base_type
        res.base_position_names = list(self.service.names.positions)
        res.base_velocity_names = list(self.service.names.velocities)

    def _static_torques(self, req, res) -> None:
        f, t = req.wrench.force, req.wrench.torque
        res.efforts = f64(self.service.static_torques(
            req.joint_names, req.positions, (f.x, f.y, f.z, t.x, t.y, t.z), req.frame,
            req.include_gravity))

    def _inverse_kinematics(self, req, res) -> None:
        poses = [(p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y,
                  p.orientation.z, p.orientation.w) for p in req.poses]
        out = self.ik_service.inverse_kinematics(
            req.joint_names, req.targets, req.seeds, req.position_only, req.position_tolerance,
            req.orientation_tolerance, req.max_iterations, req.max_restarts, req.timeout,
            poses=poses)
        res.positions = f64(out.positions)
        res.solved = out.solved.tolist()
        res.position_errors = f64(out.position_errors)
        res.orientation_errors = f64(out.orientation_errors)
        res.iterations = array.array("i", np.asarray(out.iterations, dtype=np.int32).tobytes())
        res.attempts = array.array("i", np.asarray(out.attempts, dtype=np.int32).tobytes())


def main(argv: list[str] | None = None) -> int:
    holder: list[DynamicsServer] = []

    def cleanup() -> None:
        for server in holder:
            server.close()

    def body(node) -> None:  # noqa: ANN001
        holder.append(DynamicsServer(node))
        # numba and its compiled kernels leave ~120 000 objects after start-up, whose full
        # garbage collection takes ~90 ms; frozen, a collection only visits newer objects
        gc.freeze()

    from rbd_ros.ros.lean_executor import LeanExecutor

    return run_node("dynamics_server", body, argv, executor_factory=LeanExecutor, cleanup=cleanup)


if __name__ == "__main__":
    sys.exit(main())
