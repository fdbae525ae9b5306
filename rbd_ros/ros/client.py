"""``DynamicsClient``: call a ``dynamics_server`` with numpy arrays in, numpy arrays out.

    from rbd_ros import DynamicsClient
    with DynamicsClient() as dyn:                   # its own rclpy context and node
        names = dyn.joint_names                     # from /rbd/get_model
        tau = dyn.inverse_dynamics(q, qd, qdd)      # (N, n) or (n,) in, same shape out
        sim = dyn.forward_simulate(q0, qd0, efforts, effort_period=0.01, dt=0.001)
        T = dyn.forward_kinematics(q)               # the tool's 4x4 (numpy)
        res = dyn.inverse_kinematics(T)             # a 4x4, a list of them or geometry_msgs/Pose(s)
        res.positions, res.solved                   # rbd_ros.IKResult, the service's names
        lin = dyn.linearize(q, qd, tau, dt=1e-3)    # lin.a, lin.b, lin.state_names, lin.input_names

Pass ``node=`` to use a node of yours (its context is used for the calls). Arrays are in the
order of ``joint_names`` (default: the model's). ``rbd_ros.ros.messages.from_joint_trajectory``
/ ``to_joint_trajectory`` convert ``trajectory_msgs/JointTrajectory`` for users who hold one.
A refused request raises ``DynamicsError`` with the server's message.
"""
from __future__ import annotations

import array
import threading
import time
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.ros.dds import use_large_data_profile
from rbd_ros.ros.lean_executor import missing_internals, wait_for_response
from rbd_ros.ros.messages import is_pose, pose_to_matrix
from rbd_ros.ros.nodes.dynamics_server import SERVICE_QOS
from rbd_ros.ros.topics import dynamics_service_types
from rbd_ros.util import validate

if TYPE_CHECKING:
    from rbd_ros.services import Linearization


class DynamicsError(RuntimeError):
    """The server answered success=false (the message says why) or did not answer."""


@dataclass(frozen=True)
class Simulation:
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    compute_time: float


class ForwardKinematicsPose(np.ndarray):
    """The 4x4 tool pose ``forward_kinematics`` returns: a numpy array; for one release it
    also answers the response's fields (``tool_pose``, ``link_names``, ``link_poses``,
    ``frame_id``), which ``forward_kinematics`` returned before issue 29, with a
    ``DeprecationWarning`` (``forward_kinematics_message`` returns the response)."""

    OLD_FIELDS = ("tool_pose", "link_names", "link_poses", "frame_id")

    def __array_finalize__(self, obj: Any) -> None:
        self._response = getattr(obj, "_response", None)

    def __getattr__(self, name: str) -> Any:
        response = self.__dict__.get("_response")
        if name not in self.OLD_FIELDS or response is None:
            raise AttributeError(f"'numpy.ndarray' object has no attribute '{name}'")

        warnings.warn(f"DynamicsClient.forward_kinematics now returns the 4x4 tool pose; "
                      f".{name} is deprecated: use forward_kinematics_message(q).{name} or "
                      "link_poses(q) (it goes in the next release)", DeprecationWarning, stacklevel=2)
        return getattr(response, name)


def __getattr__(name: str) -> Any:
    """``IKSolution``: the client's IK result before issue 29, now ``rbd_ros.IKResult`` (one
    vocabulary with ``Robot.ik`` and the service); the old name warns for one release."""
    if name == "IKSolution":
        from rbd_ros.robot.statics import IKResult  # lazy: the robot front (0.4 s) for a result type

        warnings.warn("rbd_ros.ros.client.IKSolution is deprecated, use rbd_ros.IKResult (the "
                      "old name goes in the next release)", DeprecationWarning, stacklevel=2)
        return IKResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _field_value(key: str, current: Any, value: Any) -> Any:
    """``value`` for a request field whose default is ``current``, without silent rewriting
    (the core's rule, issue 27): no bool for a number, no fractional number for an integer
    (``max_iterations=2.5`` is not 2), an integer inside int32."""
    if isinstance(value, (bool, np.bool_)) != isinstance(current, bool):
        raise ValueError(f"{key} must be {'True or False' if isinstance(current, bool) else 'a number'}, "
                         f"got {value!r}")
    if isinstance(current, int) and not isinstance(current, bool):
        v = float(value)
        if not (np.isfinite(v) and v.is_integer()):
            raise ValueError(f"{key} must be an integer, got {value!r}")
        if not -2**31 <= v < 2**31:
            raise ValueError(f"{key} must fit a 32-bit integer, got {value!r}")
        return int(v)
    return type(current)(value)


class DynamicsClient:
    """Synchronous client of the dynamics services (see the module docstring)."""

    def __init__(self, namespace: str = "rbd", node: Any = None, timeout: float = 30.0) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        from rbd_ros_interfaces import srv

        self._own = node is None
        self._lock = threading.Lock()
        if self._own:
            self._context = Context()
            use_large_data_profile()  # effective if this is the process's first participant
            rclpy.init(context=self._context)
            node = rclpy.create_node("rbd_dynamics_client", context=self._context)
        self.node = node
        self.timeout = timeout
        self._executor = SingleThreadedExecutor(context=node.context)
        self._executor.add_node(node)
        prefix = f"/{namespace.strip('/')}/" if namespace.strip("/") else "/"
        self._clients = {name: node.create_client(t, prefix + name, qos_profile=SERVICE_QOS())
                         for name, t in dynamics_service_types().items()}
        self._srv = srv
        self._model_names: list[str] | None = None
        self._lean = not missing_internals()  # else rclpy's call_async, see lean_executor

    # ---- plumbing -------------------------------------------------------------------------
    def close(self) -> None:
        import rclpy

        self._executor.remove_node(self.node)
        self._executor.shutdown()
        for c in self._clients.values():
            self.node.destroy_client(c)
        if self._own:
            self.node.destroy_node()
            rclpy.shutdown(context=self._context)

    def __enter__(self) -> "DynamicsClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait(self, timeout: float | None = None) -> None:
        """Block until every service is available."""
        for client in self._clients.values():
            if not client.wait_for_service(timeout_sec=timeout or self.timeout):
                raise DynamicsError(f"service {client.srv_name} not available")

    def _call(self, name: str, request: Any) -> Any:
        """Send ``request`` and wait for the answer. Fast DDS can lose a response when many
        clients call one server at a high rate (ros2/rcl#1163); the calls are pure functions,
        so a request unanswered after 1, 2, 4, ... s is sent again (forward_simulate and
        inverse_kinematics, which may legitimately run long, up to the server's
        ``max_request_seconds``, only after ``timeout``) and the first answer wins.

        With its own node the client waits on the service client's handle directly (no
        executor: 0.1-0.2 ms less per call, see ``nodes/lean_executor.py`` for the server's
        side) and drops answers to earlier, resent requests by sequence number; with a node of
        the caller's, which the caller may spin elsewhere, it goes through ``call_async``.
        One call at a time per ``DynamicsClient`` (a lock; share it across threads freely)."""
        client = self._clients[name]
        if not client.service_is_ready() and not client.wait_for_service(timeout_sec=self.timeout):
            raise DynamicsError(f"service {client.srv_name} not available")
        # the long-running services are not resent: a copy would only queue behind the first
        patience = self.timeout if name in ("forward_simulate", "inverse_kinematics") else 1.0
        with self._lock:
            res = self._send_until_answered(client, request, patience)
        if res is None:
            raise DynamicsError(f"no answer from {client.srv_name} within {self.timeout} s")
        if not res.success:
            raise DynamicsError(f"{name}: {res.message}")
        return res

    def _send_until_answered(self, client: Any, request: Any, patience: float) -> Any:
        """The resend rule of ``_call``: send, wait ``patience`` for an answer to any request
        sent so far, double ``patience``, send again, until ``timeout`` (then None)."""
        futures: list = []  # of call_async (rclpy's path)
        if self._own and self._lean:  # nothing else spins this node: wait on the handle itself
            sent: set[int] = set()

            def send() -> None:
                with client.handle:
                    sent.add(client.handle.send_request(request))

            def wait(until: float) -> Any:
                return wait_for_response(client, sent, until, self._context)
        else:
            def send() -> None:
                futures.append(client.call_async(request))

            def wait(until: float) -> Any:
                while time.monotonic() < until:
                    self._executor.spin_once(timeout_sec=min(0.05, max(0.0, until - time.monotonic())))
                    done = next((f for f in futures if f.done()), None)
                    if done is not None:
                        return done.result()
                return None

        deadline = time.monotonic() + self.timeout
        try:
            while time.monotonic() < deadline:
                send()
                response = wait(min(deadline, time.monotonic() + patience))
                if response is not None:
                    return response
                patience *= 2
            return None
        finally:
            if futures:  # unanswered requests: rclpy would keep their futures
                for f in futures:
                    if not f.done():
                        client.remove_pending_request(f)

    @property
    def joint_names(self) -> list[str]:
        """The model's joints; a moving base's coordinates first (GetModel
        ``base_position_names`` + ``base_velocity_names``), then a diff_drive base's wheel
        joints (left, right: its efforts; ``wheels.joints`` of GetModel ``model_yaml``), the
        default ``joint_names``.  A diff_drive ``inverse_dynamics`` also answers the lateral
        ground force when the names list ``rbd_ros.services.LATERAL_FORCE``."""
        if self._model_names is None:
            m = self.get_model()
            bq, bv = list(getattr(m, "base_position_names", [])), list(getattr(m, "base_velocity_names", []))
            wheels: list[str] = []
            if getattr(m, "base_type", "") == "diff_drive":

                wheels = list(MdhModel.from_yaml(m.model_yaml).wheel_joints)
            self._model_names = bq + bv + wheels + list(m.joint_names)
        return self._model_names

    def _names(self, joint_names: list[str] | None) -> list[str]:
        return list(joint_names) if joint_names is not None else self.joint_names

    @staticmethod
    def _rows(values: Any, states: int) -> np.ndarray:
        """A packed answer as ``states`` rows: the width follows from the answer, so a
        floating base's wider rows (positions 7 + n, velocities and efforts 6 + n) need no
        knowledge of its coordinate names here."""
        a = np.asarray(values)
        return a.reshape(states, -1) if states else a.reshape(0, 0)

    @staticmethod
    def _states(x: Any) -> int:
        a = np.asarray(x)
        return 1 if a.ndim == 1 else a.shape[0]

    @staticmethod
    def _packed(x: Any) -> tuple[array.array, bool]:
        """Row-major ``array.array('d')`` for a ``float64[]`` field (the generated setter copies
        one with a memcpy but iterates a numpy array value by value), and whether x was 1-D."""
        if np.iscomplexobj(x):
            raise ValueError("joint values must be real numbers, got complex values")
        a = np.ascontiguousarray(x, dtype=np.float64)
        return array.array("d", a.tobytes()), a.ndim == 1

    # ---- services -------------------------------------------------------------------------
    def inverse_dynamics(self, q, qd, qdd, tool_wrench=None, include_actuators: bool = False,
                         joint_names: list[str] | None = None) -> np.ndarray:
        """Joint efforts for one state (n,) or a batch (N, n) (a ground base: its inputs, the
        width from the answer; see ``joint_names``)."""
        from geometry_msgs.msg import Vector3, Wrench

        names = self._names(joint_names)
        pq, single = self._packed(q)
        req = self._srv.InverseDynamics.Request(
            joint_names=names, positions=pq, velocities=self._packed(qd)[0],
            accelerations=self._packed(qdd)[0], include_actuators=include_actuators)
        if tool_wrench is not None:
            w = np.asarray(tool_wrench, dtype=float).reshape(-1)
            if w.shape != (6,):
                raise ValueError(f"tool_wrench must be 6 numbers [fx, fy, fz, mx, my, mz], "
                                 f"got {w.size}")
            req.tool_wrench = Wrench(force=Vector3(x=w[0], y=w[1], z=w[2]),
                                     torque=Vector3(x=w[3], y=w[4], z=w[5]))
        tau = self._rows(self._call("inverse_dynamics", req).efforts, self._states(q))
        return tau[0] if single else tau

    def mass_matrix(self, q, include_actuators: bool = False,
                    joint_names: list[str] | None = None) -> np.ndarray:
        names = self._names(joint_names)
        pq, single = self._packed(q)
        res = self._call("mass_matrix", self._srv.MassMatrix.Request(
            joint_names=names, positions=pq, include_actuators=include_actuators))
        N = self._states(q)
        n = round((len(res.mass_matrix) // max(N, 1)) ** 0.5)
        M = np.asarray(res.mass_matrix).reshape(N, n, n)
        return M[0] if single else M

    def gravity(self, q, joint_names: list[str] | None = None) -> np.ndarray:
        names = self._names(joint_names)
        pq, single = self._packed(q)
        res = self._call("gravity", self._srv.Gravity.Request(joint_names=names, positions=pq))
        g = self._rows(res.efforts, self._states(q))
        return g[0] if single else g

    def regressor(self, q, qd, qdd, base_parameters: bool = False, joint_names: list[str] | None = None):
        """``/rbd/regressor`` (issue 31): ``(Y, parameter_names, parameters)`` with ``Y`` (N, n, p)
        ((n, p) for one state) and ``efforts = Y @ parameters``."""
        if "regressor" not in self._clients:
            raise DynamicsError("regressor: this rbd_ros_interfaces has no Regressor; rebuild the "
                                "interfaces (scripts/setup.sh)")
        names = self._names(joint_names)
        (pq, single), N = self._packed(q), self._states(q)
        res = self._call("regressor", self._srv.Regressor.Request(
            joint_names=names, positions=pq, velocities=self._packed(qd)[0],
            accelerations=self._packed(qdd)[0], base_parameters=bool(base_parameters)))
        Y = np.asarray(res.regressor, dtype=float).reshape(N, len(names), len(res.parameter_names))
        return (Y[0] if single else Y), list(res.parameter_names), np.asarray(res.parameters, dtype=float)

    def linearize(self, q, v, efforts, dt: float = 0.0, integrator: str = "", include_actuators: bool = False,
                  joint_names: list[str] | None = None) -> Linearization:
        """``/rbd/linearize`` (issue 42) at one state: ``rbd_ros.services.Linearization`` with
        ``a`` and ``b`` as matrices, their rows and columns named by ``state_names`` and
        ``input_names`` (a diff_drive base: ``[dq; ds]`` and its wheel and joint efforts);
        ``dt`` 0 the continuous time, ``dt > 0`` one step of ``integrator`` ("" the base's
        default)."""
        from rbd_ros.services import Linearization  # lazy: it imports the core Robot

        if "linearize" not in self._clients:
            raise DynamicsError("linearize: this rbd_ros_interfaces has no Linearize; rebuild the "
                                "interfaces (scripts/setup.sh)")
        res = self._call("linearize", self._srv.Linearize.Request(
            joint_names=self._names(joint_names), positions=self._packed(q)[0],
            velocities=self._packed(v)[0], efforts=self._packed(efforts)[0],
            include_actuators=bool(include_actuators), dt=float(dt), integrator=integrator))
        coords = list(res.coordinate_names)
        return Linearization(coords, list(getattr(res, "state_names", coords * 2)),
                             list(getattr(res, "input_names", coords)),
                             np.asarray(res.a, dtype=float).reshape(res.a_shape),
                             np.asarray(res.b, dtype=float).reshape(res.b_shape))

    def forward_kinematics(self, q, joint_names: list[str] | None = None) -> np.ndarray:
        """The tool's 4x4 pose in the world (base_link; ``frame_id`` of the response) for one
        state (n,), or (N, 4, 4) for a batch (N, n) (one request per state).  For one
        release the 4x4 also answers the response's fields, with a ``DeprecationWarning``."""
        if np.ndim(q) == 2:
            return np.stack([np.asarray(self.forward_kinematics(row, joint_names)) for row in q])
        res = self.forward_kinematics_message(q, joint_names)
        T = pose_to_matrix(res.tool_pose).view(ForwardKinematicsPose)
        T._response = res
        return T

    def forward_kinematics_message(self, q, joint_names: list[str] | None = None,
                                   links: list[str] | None = None):
        """The ``ForwardKinematics`` response: ``frame_id``, ``tool_pose``, ``link_names``,
        ``link_poses`` (the MDH frames), ``urdf_link_poses`` of ``links`` (URDF link names)
        (geometry_msgs/Pose); ``links`` a single string: ``TypeError`` (it would be read as
        one link per character)."""
        if isinstance(links, str):
            raise TypeError(f"links must be a list of URDF link names, got the string {links!r}: "
                            f"use [{links!r}]")
        names = self._names(joint_names)
        return self._call("forward_kinematics", self._srv.ForwardKinematics.Request(
            joint_names=names, positions=self._packed(q)[0], links=list(links or [])))

    def urdf_link_poses(self, q, links: list[str], joint_names: list[str] | None = None) -> np.ndarray:
        """World poses ``(L, 4, 4)`` of URDF links by name for one state (fixed links too; as
        ``Robot.urdf_link_poses``); an unknown name: ``DynamicsError`` naming it."""
        res = self.forward_kinematics_message(q, joint_names, links)
        poses = getattr(res, "urdf_link_poses", res.poses)  # interfaces built before the rename: poses
        return np.array([pose_to_matrix(p) for p in poses]).reshape(-1, 4, 4)

    def link_poses(self, q, joint_names: list[str] | None = None) -> dict[str, np.ndarray]:
        """``{label: 4x4 world pose}`` of the n + 1 MDH frames for one state (as
        ``Robot.link_poses``), labelled ``"frame0"`` then the URDF link each joint moves: the
        MDH frame of that body, not the URDF link's pose (that is ``urdf_link_poses``)."""
        res = self.forward_kinematics_message(q, joint_names)
        return {name: pose_to_matrix(p) for name, p in zip(res.link_names, res.link_poses)}

    def jacobian(self, q, link: str = "", joint_names: list[str] | None = None) -> np.ndarray:
        names = self._names(joint_names)
        res = self._call("jacobian", self._srv.Jacobian.Request(
            joint_names=names, positions=self._packed(q)[0], link=link))
        return np.asarray(res.jacobian).reshape(6, -1)

    def forward_simulate(self, q0, qd0, efforts=None, effort_period: float | None = None,
                         dt: float | None = None, integrator: str = "", duration: float = 0.0,
                         output_period: float = 0.0, include_actuators: bool = False,
                         joint_names: list[str] | None = None, *, torques=None,
                         torque_period: float | None = None) -> Simulation:
        """Integrate from ``(q0, qd0)`` under ``efforts`` (M, n), each row held for
        ``effort_period`` s, in steps of ``dt`` s; ``integrator`` '' is the server's default
        (rk4; rkmk4 for a floating base); a diff_drive base's ``efforts`` are its wheel torques
        and the joint efforts.  ``torques=``/``torque_period=``: the old spellings (one
        release, ``DeprecationWarning``)."""
        efforts = validate.renamed("DynamicsClient.forward_simulate", "torques", "efforts", torques, efforts)
        effort_period = validate.renamed("DynamicsClient.forward_simulate", "torque_period", "effort_period",
                                         torque_period, effort_period)
        for name, value in (("efforts", efforts), ("effort_period", effort_period), ("dt", dt)):
            if value is None:
                raise TypeError(f"DynamicsClient.forward_simulate: {name} is required")
        names = self._names(joint_names)
        Request = self._srv.ForwardSimulate.Request
        fields = Request.get_fields_and_field_types()
        e, p = ("efforts", "effort_period") if "efforts" in fields else ("torques", "torque_period")
        res = self._call("forward_simulate", Request(
            joint_names=names, initial_positions=self._packed(q0)[0],
            initial_velocities=self._packed(qd0)[0], dt=float(cast(float, dt)), integrator=integrator,  # given
            duration=float(duration), output_period=float(output_period),
            include_actuators=include_actuators,
            **{e: self._packed(efforts)[0], p: float(effort_period)}))
        K = len(res.times)
        return Simulation(np.asarray(res.times), self._rows(res.positions, K),
                          self._rows(res.velocities, K), self._rows(res.accelerations, K),
                          res.compute_time)

    def get_model(self):
        """The ``GetModel`` response; ``MdhModel.from_yaml(res.model_yaml)`` rebuilds the model."""
        return self._call("get_model", self._srv.GetModel.Request())

    def static_torques(self, q, wrench, frame: str = "world", include_gravity: bool = False,
                       joint_names: list[str] | None = None) -> np.ndarray:
        """``tau = J^T m [+ g]`` for one state (n,) or a batch (N, n); ``wrench = [f; n]``
        exerted by the tool on the environment (world or tool axes); a ground base: its
        efforts, as ``inverse_dynamics``'s."""
        from geometry_msgs.msg import Vector3, Wrench

        names = self._names(joint_names)
        pq, single = self._packed(q)
        w = [float(x) for x in np.asarray(wrench, dtype=float).reshape(-1)]
        if len(w) != 6:
            raise ValueError(f"wrench must have 6 values [force; torque], got {len(w)}")
        res = self._call("static_torques", self._srv.StaticTorques.Request(
            joint_names=names, positions=pq, frame=frame, include_gravity=include_gravity,
            wrench=Wrench(force=Vector3(x=w[0], y=w[1], z=w[2]),
                          torque=Vector3(x=w[3], y=w[4], z=w[5]))))
        tau = self._rows(res.efforts, self._states(q))  # a ground base: its inputs' width
        return tau[0] if single else tau

    def inverse_kinematics(self, targets, seeds=None, position_only: bool = False,
                           joint_names: list[str] | None = None, **options: Any):
        """Joint positions for one target -- a 4x4 pose, a ``geometry_msgs/Pose`` (world =
        base link), or a 3-vector with ``position_only`` -- or a batch: (N, 4, 4), a list of
        4x4s, a list of Poses, (N, 3) positions; ``seeds`` (n,) / (N, n) or None (random
        starts).  Poses travel as they are (the request's ``poses``), 4x4s as ``targets``.
        ``options``: position_tolerance, orientation_tolerance, max_iterations, max_restarts,
        timeout (the request's fields).  Returns ``rbd_ros.IKResult`` (``positions``,
        ``solved``, ``position_errors``, ``orientation_errors``, ``iterations``, ``attempts``:
        the service's names; scalars for one target).  Unreachable targets: solved False."""
        from rbd_ros.robot.statics import IKResult  # lazy: the robot front (0.4 s) for a result type

        names = self._names(joint_names)
        req = self._srv.InverseKinematics.Request(
            joint_names=names, position_only=position_only,
            seeds=self._packed(seeds)[0] if seeds is not None else array.array("d"))
        if is_pose(targets) or (isinstance(targets, (list, tuple)) and targets
                                and all(is_pose(t) for t in targets)):
            single = is_pose(targets)
            req.poses = [targets] if single else list(targets)
        else:
            t = np.asarray(targets, dtype=float)
            single = t.ndim == (1 if position_only else 2)
            req.targets = self._packed(t)[0]
        for key, value in options.items():
            if not hasattr(req, key) or key in ("joint_names", "targets", "seeds", "poses"):
                raise TypeError(f"inverse_kinematics: unknown option {key!r}")
            setattr(req, key, _field_value(key, getattr(req, key), value))
        res = self._call("inverse_kinematics", req)
        out = IKResult(np.asarray(res.positions).reshape(-1, len(names)), np.asarray(res.solved, dtype=bool),
                       np.asarray(res.position_errors), np.asarray(res.orientation_errors),
                       np.asarray(res.iterations), np.asarray(res.attempts))
        return out.first() if single else out
