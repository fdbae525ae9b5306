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
                     base's efforts are its wheel torques; ``rbd_ros.services``)
  base_position_names, base_velocity_names, wheel_joint_names  string arrays renaming those
                     entries (unset = base_x, base_y, base_yaw / base_vx, base_vy, base_wz for
                     a ground base, base_x .. base_qw / base_vx .. base_wz for a floating one;
                     the model's wheel joints); checked by ``rbd_ros.services.base_names``
  service_namespace  'rbd'                              max_points  1000000 states per request
  max_request_seconds  10.0: the most a request may compute (s); one still computing then is
                     answered success=false with a message saying it hit this bound (batches
                     and simulations are checked between chunks, inverse kinematics is stopped
                     inside its kernel; ``rbd_ros.services``)
  allow_shared_namespace  false: refuse to start (exit 2) when another server already offers
                     the services under this namespace (clients would get answers from either)

Services (``rbd_ros_interfaces/srv``) under ``/<service_namespace>/``: inverse_dynamics,
forward_simulate, mass_matrix, gravity, forward_kinematics, jacobian, get_model,
inverse_kinematics, static_torques, regressor (``regressor_service``), linearize (``A``, ``B``
of the dynamics at a state, continuous or over one step ``dt`` of an integrator:
``DynamicsService.linearize``). A request the
model cannot answer gets ``success=false`` and a message saying what is wrong; the node never
dies on a request.

Model swap (issue 44): ``/<service_namespace>/load_model`` (``LoadModel``: one of
``model_yaml``, ``robot_description`` (URDF text), ``urdf_path``) replaces the served model
without a restart: loaded and checked first (the served model's joints and base, finite and
physically consistent inertias: ``rbd_ros.control.model_swap.swap_refusal``), its services'
robots built, then switched in one assignment each: a request under way finishes on the old
model, every later one uses the new; refused with the reason otherwise.  ``get_model`` then
returns the new model.  The ``model_yaml`` parameter is settable on the running server
(``ros2 param set /dynamics_server model_yaml FILE``; ``robot_params.declare_swappable_model``):
the file is swapped in the same way, or the ``set_parameters`` result is refused with the
reason and the parameter unchanged (an empty value too); the other robot parameters stay
read-only.  After a swap through ``load_model`` the parameter names the model in use: the file
given, or ``''`` when the model came as URDF (``robot_params.follow_swapped_model``).

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
import fcntl
import gc
import os
import sys
import tempfile
import threading
import time
import traceback
from typing import Any

import numpy as np

from rbd_ros.ros.common import NodeConfigError, run_node
from rbd_ros.ros.lean_executor import LeanExecutor, call_once, spin_in_thread
from rbd_ros.ros.messages import matrix_to_pose
from rbd_ros.ros.parameters import schema
from rbd_ros.ros.robot_params import (
    ROBOT_PARAMETERS,
    declare_swappable_model,
    follow_swapped_model,
    following_swap,
    robot_from_node,
    robot_model,
)
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

    folder = os.path.join(tempfile.gettempdir(), f"rbd_ros-locks-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    domain = os.environ.get("ROS_DOMAIN_ID", "0") or "0"
    # '%' is no ROS name character: '/a_b/' and '/a/b/' get files of their own
    path = os.path.join(folder, f"domain{domain}{prefix.replace('/', '%')}lock")
    handle = open(path, "a+")  # held open for the process's lifetime
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

    from rbd_ros_interfaces.srv import GetModel

    helper = rclpy.create_node(f"{node.get_name()}_probe", namespace=node.get_namespace(),
                               context=node.context, use_global_arguments=False,
                               start_parameter_services=False, enable_rosout=False)
    try:
        client: Any = helper.create_client(GetModel, name, qos_profile=SERVICE_QOS())  # (untyped interfaces)
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
    (``rbd_ros.services.base_names``, the one place); ``NodeConfigError`` naming the parameter."""
    from rclpy.exceptions import InvalidParameterTypeException, ParameterUninitializedException
    from rclpy.parameter import Parameter

    from rbd_ros.services import base_names  # lazy: the services (robot front), at start, not at import

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
    ``rbd_ros.services.DynamicsService``."""

    def __init__(self, node) -> None:
        import rclpy

        from rbd_ros.robot import Robot  # lazy: the robot front, at start, not at import
        from rbd_ros.services import (  # lazy: the services (robot front), at start, not at import
            DynamicsService,
            named_model,
        )

        self.node = node
        started = time.monotonic()
        prm = schema("dynamics_server").declare(node, ["service_namespace", "max_points",
                                                       "max_request_seconds", "allow_shared_namespace"])
        prefix = service_prefix(prm["service_namespace"])
        bound = float(prm["max_request_seconds"])
        declare_swappable_model(node, prefix + "load_model")  # settable: _on_set_parameters
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
        self._add_optional(prefix, "LoadModel", "load_model", self._load_model)  # module docstring
        node.add_on_set_parameters_callback(self._on_set_parameters)
        self._warmer = threading.Thread(target=self._warm, name="rbd_ros-warm", daemon=True)
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
        self._warmer.start()

    def _add_optional(self, prefix: str, kind: str, name: str, handler) -> None:
        """``<prefix><name>`` of type ``rbd_ros_interfaces.srv.<kind>`` when the installed
        interfaces have it (built before it was added: left out, with a warning saying so)."""
        from rbd_ros_interfaces import srv

        if not hasattr(srv, kind):
            self.node.get_logger().warning(f"rbd_ros_interfaces has no {kind}: {name} is left out; "
                                           "rebuild the interfaces (scripts/setup.sh)")
            return
        self._services.append(self.node.create_service(getattr(srv, kind), prefix + name, handler,
                                                       qos_profile=SERVICE_QOS()))

    def _linearize(self, req, res) -> None:
        step = {"dt": req.dt, "integrator": req.integrator} if hasattr(req, "dt") else {}  # older interfaces
        lin = self.service.linearize(req.joint_names, req.positions, req.velocities, req.efforts,
                                     req.include_actuators, **step)
        if not hasattr(res, "state_names") and lin.state_names != lin.coordinate_names * 2:
            from rbd_ros.services import RequestError  # lazy: the services (robot front), not at import

            raise RequestError("this robot's linearization has other state and input names than "
                               "[dq; dv] and the efforts (a diff_drive base), which the installed "
                               "rbd_ros_interfaces cannot answer (no Linearize state_names); rebuild "
                               "the interfaces (scripts/setup.sh)")
        res.coordinate_names = lin.coordinate_names
        res.a, res.a_shape = f64(lin.a), list(lin.a.shape)
        res.b, res.b_shape = f64(lin.b), list(lin.b.shape)
        if hasattr(res, "state_names"):
            res.state_names, res.input_names = lin.state_names, lin.input_names

    def _load_model(self, req, res):
        """``load_model``: the new model checked, then swapped in (module docstring)."""
        try:
            res.success, res.message = self.load_model(req.model_yaml, req.robot_description, req.urdf_path)
            if res.success:  # the parameter names the model in use ('' = came as URDF)
                follow_swapped_model(self.node, req.model_yaml)
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the server
            self.node.get_logger().error(f"load_model: {traceback.format_exc()}")
            res.success, res.message = False, f"internal error: {exc!r}"
        return res

    def _on_set_parameters(self, params):
        """``model_yaml`` set on the running server (``ros2 param set``): ``load_model`` of the
        file, refused with its reason (the parameter and the served model then unchanged)."""
        from rcl_interfaces.msg import SetParametersResult

        swap = next((p for p in params if p.name == "model_yaml"), None)
        if swap is None or following_swap():  # the others are read-only (rclpy refuses)
            return SetParametersResult(successful=True)  # following_swap: the model is in use
        try:
            done, message = (self.load_model(model_yaml=str(swap.value)) if swap.value else
                             (False, "refused: model_yaml cannot be emptied at runtime (give a model file)"))
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the server
            self.node.get_logger().error(f"set_parameters model_yaml: {traceback.format_exc()}")
            done, message = False, f"internal error: {exc!r}"
        if not done:
            self.node.get_logger().warning(f"set_parameters model_yaml: {message}")
            return SetParametersResult(successful=False, reason=f"model_yaml: {message}")
        return SetParametersResult(successful=True)

    def load_model(self, model_yaml: str = "", robot_description: str = "", urdf_path: str = ""):
        """Load, check and serve a new model; ``(done, message)``."""
        from rbd_ros.control.model_swap import swap_refusal  # lazy: the model swap, not at the default start
        from rbd_ros.robot import Robot  # lazy: the robot front, at start, not at import
        from rbd_ros.services import (  # lazy: the services (robot front), at start, not at import
            DynamicsService,
            named_model,
        )

        sources = {"model_yaml": model_yaml, "robot_description": robot_description, "urdf_path": urdf_path}
        if sum(bool(v) for v in sources.values()) != 1:
            return False, f"refused: give exactly one of {', '.join(sources)}"
        params = {k: self.node.get_parameter(k).value for k in ROBOT_PARAMETERS}
        params.update(sources)
        old = self.service
        try:
            loaded = robot_model(params, old.robot.model.base_type)
        except (NodeConfigError, ValueError) as exc:
            return False, f"refused: {exc}"
        names = old.names
        model = named_model(loaded.model, names)
        reason = swap_refusal(old.robot.model, model)
        if reason is not None:
            return False, f"refused: {reason}"
        robot = Robot(model)
        if loaded.link_frames is not None:
            robot.with_link_frames(loaded.link_frames)
        args = (old.max_points, names, old.max_request_seconds)
        service = DynamicsService(robot, *args, alive=self.node.context.ok)
        sim, ik = DynamicsService(Robot(model), *args), DynamicsService(Robot(model), *args)
        self.service, self.sim_service, self.ik_service = service, sim, ik  # one assignment each
        self._one_state = service.one_state_inverse_dynamics
        self.node.get_logger().info(f"load_model: serving '{model.name}' from {loaded.source}")
        return True, f"serving '{model.name}' from {loaded.source} ({model.dof} joints)"

    def _warm(self) -> None:
        """Load the kernels of every service on a worker thread once the server is ready, on
        robots of its own (the services' workspaces are theirs): ~20 ms from numba's cache.
        On a cold cache they compile here, a minute and more for all of them, which the server's
        start no longer waits for (issue 39: 93 s to ready before, compiled in the main thread);
        a request that needs a kernel still compiling waits for it (numba compiles each once)."""
        from rbd_ros.robot import Robot  # lazy: the robot front, at start, not at import
        from rbd_ros.sim.warm import server_kernels  # lazy: the warm-up, not at the default start

        try:
            server_kernels(Robot(self.service.robot.model), self.service.moving)
        except Exception as exc:  # noqa: BLE001 - warming is an optimisation: said, never fatal
            self.node.get_logger().warning(f"kernel warm-up stopped: {exc!r} (kernels compile on first use)")

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
        from rbd_ros.services import RequestError  # lazy: the services (robot front), at start, not at import

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
        given = (f.x, f.y, f.z, t.x, t.y, t.z)
        w = given if any(given) else None  # NaN counts as given: the service refuses it
        tau = None
        if w is None and not req.include_actuators:  # the common single call, checked in its kernel
            tau = self._one_state(req.joint_names, req.positions, req.velocities, req.accelerations)
        if tau is None:
            tau = self.service.inverse_dynamics(req.joint_names, req.positions, req.velocities,
                                                req.accelerations, w, req.include_actuators)
        res.efforts = _array("d", tau.tobytes())  # C-contiguous float64 (f64 without its copy)

    def _forward_simulate(self, req, res) -> None:
        from rbd_ros.services import renamed_field  # lazy: the services (robot front), at start, not at import

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
        from rbd_ros.ros.nodes.regressor_service import answer  # lazy: the regressor, not at the default start

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

    def body(node) -> None:
        holder.append(DynamicsServer(node))
        # numba and its compiled kernels leave ~120 000 objects after start-up, whose full
        # garbage collection takes ~90 ms; frozen, a collection only visits newer objects
        gc.freeze()

    return run_node("dynamics_server", body, argv, executor_factory=LeanExecutor, cleanup=cleanup)


if __name__ == "__main__":
    sys.exit(main())
