"""What the dynamics services compute, without ROS: request checking and evaluation.

``DynamicsService`` takes the plain fields of the ``rbd_ros_interfaces`` requests (joint
names and packed row-major ``float64[]`` arrays), checks them, maps the caller's joint order
onto the model's, runs the core (``rbd_ros.Robot``) and returns arrays in the caller's order.
Anything wrong raises ``RequestError`` with a message that says exactly what; the node turns
that into ``success=false``. The ROS node (``rbd_ros.ros.nodes.dynamics_server``) only converts
messages, so this logic is tested directly and reused by any other front end.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rbd_ros.algorithm.integrators import integrator_code
from rbd_ros.robot import Robot, SimulationError, SingularMassMatrixError

DEFAULT_MAX_POINTS = 1_000_000


def _f8(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


class RequestError(ValueError):
    """A request the service refuses; the message is sent back to the caller."""


@dataclass(frozen=True)
class IKAnswer:
    positions: np.ndarray  # (N, n) caller's joint order
    solved: np.ndarray  # (N,) bool
    position_errors: np.ndarray  # (N,) m
    orientation_errors: np.ndarray  # (N,) rad
    iterations: np.ndarray  # (N,)


@dataclass(frozen=True)
class SimulationResult:
    times: np.ndarray  # (K,)
    positions: np.ndarray  # (K, n) caller's joint order
    velocities: np.ndarray
    accelerations: np.ndarray
    compute_time: float


class DynamicsService:
    """Request-level front end over one ``Robot`` (see the module docstring)."""

    def __init__(self, robot: Robot, max_points: int = DEFAULT_MAX_POINTS) -> None:
        if max_points < 1:
            raise ValueError(f"max_points must be at least 1, got {max_points}")
        self.robot = robot
        self.max_points = int(max_points)
        self._index = {name: i for i, name in enumerate(robot.joint_names)}
        self._identity = tuple(robot.joint_names)

    # ---- checking ------------------------------------------------------------------------
    def permutation(self, joint_names: Sequence[str]) -> np.ndarray | None:
        """Model index of each requested joint; None when the order is the model's own."""
        names = tuple(joint_names)
        if names == self._identity:
            return None
        unknown = [n for n in names if n not in self._index]
        if unknown:
            raise RequestError(f"unknown joint names {unknown}; the model's joints are "
                               f"{list(self._identity)}")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise RequestError(f"joint names repeated: {dup}")
        missing = [n for n in self._identity if n not in names]
        if missing:
            raise RequestError(f"joint_names lacks {missing}; give all {len(self._identity)} "
                               f"joints of the model in any order")
        return np.array([self._index[n] for n in names], dtype=np.intp)

    def states(self, name: str, data: Sequence[float], n: int, rows: int | None = None) -> np.ndarray:
        """Packed row-major ``data`` as an (N, n) array; checks length, N and finiteness."""
        arr = np.asarray(data, dtype=float)
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        if arr.size == 0:
            raise RequestError(f"{name} is empty; expected N x {n} values (N >= 1)")
        if arr.size % n:
            raise RequestError(f"{name} has {arr.size} values, not a multiple of "
                               f"{n} joints (N x {n}, row-major)")
        k = arr.size // n
        if rows is not None and k != rows:
            raise RequestError(f"{name} has {k} states ({arr.size} values); expected {rows} "
                               f"({rows} x {n})")
        if k > self.max_points:
            raise RequestError(f"{name} has {k} states; this server accepts at most "
                               f"{self.max_points} (parameter max_points)")
        if not np.isfinite(arr).all():
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise RequestError(f"{name} contains NaN or Inf (first at state {bad // n}, "
                               f"joint {bad % n})")
        return arr.reshape(k, n)

    def _to_model(self, perm: np.ndarray | None, x: np.ndarray) -> np.ndarray:
        if perm is None:
            return x
        out = np.empty_like(x)
        out[..., perm] = x
        return out

    @staticmethod
    def _to_caller(perm: np.ndarray | None, x: np.ndarray) -> np.ndarray:
        return x if perm is None else x[..., perm]

    @staticmethod
    def _one(x: np.ndarray) -> np.ndarray:
        """A single state as (n,): ``Robot`` then takes its ~1 us single-state path instead of
        a ``prange`` batch kernel, whose parallel launch costs ~20 us (ms on a loaded machine)."""
        return x[0] if x.shape[0] == 1 else x

    # ---- services ------------------------------------------------------------------------
    def inverse_dynamics(self, joint_names: Sequence[str], positions, velocities, accelerations,
                         tool_wrench: Sequence[float] | None = None,
                         include_actuators: bool = False) -> np.ndarray:
        """Efforts (N, n) in the caller's joint order (003 §4.5 via ``Robot``)."""
        if tool_wrench is None and not include_actuators:
            tau = self._one_state_id(joint_names, positions, velocities, accelerations)
            if tau is not None:
                return tau
        perm, n = self.permutation(joint_names), len(joint_names)
        q = self.states("positions", positions, n)
        qd = self.states("velocities", velocities, n, len(q))
        qdd = self.states("accelerations", accelerations, n, len(q))
        w = None
        if tool_wrench is not None:
            w = np.asarray(tool_wrench, dtype=float)
            if w.shape != (6,) or not np.isfinite(w).all():
                raise RequestError("tool_wrench must be 6 finite numbers [force; torque]")
            if not w.any():
                w = None
        tau = self.robot.inverse_dynamics(self._one(self._to_model(perm, q)),
                                          self._one(self._to_model(perm, qd)),
                                          self._one(self._to_model(perm, qdd)), tool_wrench=w,
                                          include_actuators=include_actuators)
        return self._to_caller(perm, np.asarray(tau).reshape(len(q), n))

    def _one_state_id(self, joint_names, positions, velocities, accelerations) -> np.ndarray | None:
        """The common single call (one state, the model's joint order, no wrench) without the
        general checks: ``Robot``'s checked kernel verifies lengths and finiteness itself
        (``algorithm/checked.py``).  None when anything differs or is wrong, so the general
        path runs and its checks produce the message."""
        if len(positions) != self.robot.dof or tuple(joint_names) != self._identity:
            return None
        q, qd, qdd = _f8(positions), _f8(velocities), _f8(accelerations)
        if q.shape != qd.shape or q.shape != qdd.shape:
            return None
        try:
            return self.robot.inverse_dynamics(q, qd, qdd).reshape(1, -1)
        except ValueError:
            return None

    def mass_matrix(self, joint_names, positions, include_actuators: bool = False) -> np.ndarray:
        """(N, n, n) with rows and columns in the caller's joint order."""
        perm, n = self.permutation(joint_names), len(joint_names)
        q = self.states("positions", positions, n)
        M = np.asarray(self.robot.mass_matrix(self._one(self._to_model(perm, q)), include_actuators))
        M = M.reshape(len(q), n, n)
        if perm is not None:
            M = M[:, perm][:, :, perm]
        return M

    def gravity(self, joint_names, positions) -> np.ndarray:
        perm, n = self.permutation(joint_names), len(joint_names)
        q = self.states("positions", positions, n)
        g = np.asarray(self.robot.gravity(self._one(self._to_model(perm, q)))).reshape(len(q), n)
        return self._to_caller(perm, g)

    def forward_kinematics(self, joint_names, positions) -> tuple[np.ndarray, np.ndarray]:
        """(tool pose 4x4, link frames (n+1, 4, 4)) for one state."""
        perm, n = self.permutation(joint_names), len(joint_names)
        q = self._to_model(perm, self.states("positions", positions, n, 1))[0]
        return np.asarray(self.robot.fk(q)), np.asarray(self.robot.link_poses(q))

    def jacobian(self, joint_names, positions, link: str = "") -> np.ndarray:
        """(6, n) [linear; angular], columns in the caller's joint order."""
        perm, n = self.permutation(joint_names), len(joint_names)
        q = self._to_model(perm, self.states("positions", positions, n, 1))[0]
        try:
            J = np.asarray(self.robot.jacobian(q, link=link or None))
        except ValueError as exc:  # unknown link: the core's message names the valid ones
            raise RequestError(str(exc)) from None
        return self._to_caller(perm, J)

    def forward_simulate(self, joint_names, initial_positions, initial_velocities, torques,
                         torque_period: float, dt: float, integrator: str = "rk4",
                         duration: float = 0.0, output_period: float = 0.0,
                         include_actuators: bool = False) -> SimulationResult:
        """Integrate under zero-order-hold torques (003 (5.3)-(5.4) for RK4).

        Step k (time k dt) uses torque row floor(k dt / torque_period), the last row held
        when ``duration`` runs past the torques. Output: the initial state and then every
        ``output_period`` (rounded to whole steps; 0 = every step)."""
        perm, n = self.permutation(joint_names), len(joint_names)
        q0 = self._to_model(perm, self.states("initial_positions", initial_positions, n, 1))[0]
        qd0 = self._to_model(perm, self.states("initial_velocities", initial_velocities, n, 1))[0]
        tau = self._to_model(perm, self.states("torques", torques, n))
        integrator = integrator or "rk4"
        try:
            integrator_code(integrator)  # the core's table (algorithm.integrators.INTEGRATORS)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
        for name, value in (("dt", dt), ("torque_period", torque_period)):
            if not (math.isfinite(value) and value > 0):
                raise RequestError(f"{name} must be a positive number, got {value}")
        for name, value in (("duration", duration), ("output_period", output_period)):
            if not (math.isfinite(value) and value >= 0):
                raise RequestError(f"{name} must be 0 or positive, got {value}")
        horizon = duration if duration > 0 else len(tau) * torque_period
        ratio = horizon / dt  # inf for a subnormal dt: refused below, never int(inf)
        if ratio > self.max_points:
            count = round(ratio) if math.isfinite(ratio) else "infinitely many"
            raise RequestError(f"{count} integration steps requested; this server accepts at "
                               f"most {self.max_points} (parameter max_points): horizon "
                               f"{horizon} s / dt {dt} s")
        steps = int(round(ratio))
        if steps < 1:
            raise RequestError(f"the horizon {horizon} s is shorter than one step dt={dt} s")
        # zero-order hold: which torque row each step uses (tiny tolerance for round-off)
        rows = np.minimum(np.floor(np.arange(steps) * dt / torque_period + 1e-9).astype(np.intp),
                          len(tau) - 1)
        tau_steps = np.ascontiguousarray(tau[rows])
        t0 = time.perf_counter()
        try:
            q, qd, qdd = self.robot.simulate(q0, qd0, tau_steps, dt, integrator=integrator,
                                             include_actuators=include_actuators)
        except (SimulationError, SingularMassMatrixError) as exc:  # "diverged at t = ..."
            raise RequestError(str(exc)) from None
        compute_time = time.perf_counter() - t0
        stride = max(1, int(round(output_period / dt))) if output_period > 0 else 1
        keep = np.arange(0, steps + 1, stride)
        times = keep * dt
        return SimulationResult(times, self._to_caller(perm, q[keep]), self._to_caller(perm, qd[keep]),
                                self._to_caller(perm, qdd[keep]), compute_time)

    # ---- statics and inverse kinematics --------------------------------------------------
    def static_torques(self, joint_names, positions, wrench: Sequence[float], frame: str = "",
                       include_gravity: bool = False) -> np.ndarray:
        """``tau = J^T m [+ g]`` (N, n) in the caller's joint order (003 (2.2) via ``Robot``)."""
        perm, n = self.permutation(joint_names), len(joint_names)
        q = self._to_model(perm, self.states("positions", positions, n))
        w = np.asarray(wrench, dtype=float)
        if w.shape != (6,) or not np.isfinite(w).all():
            raise RequestError("wrench must be 6 finite numbers [force; torque]")
        frame = frame or "world"
        if frame not in ("world", "tool"):
            raise RequestError(f"frame must be 'world' or 'tool' (or empty), got '{frame}'")
        tau = self.robot.static_torques(q, w, frame=frame, include_gravity=include_gravity)
        return self._to_caller(perm, tau)

    def inverse_kinematics(self, joint_names, targets, seeds=(), position_only: bool = False,
                           position_tolerance: float = 1e-6, orientation_tolerance: float = 1e-6,
                           max_iterations: int = 100, max_restarts: int = 50,
                           timeout: float = 0.0) -> IKAnswer:
        """``Robot.ik`` for N packed targets (N x 16 row-major poses, or N x 3 positions with
        ``position_only``); empty ``joint_names`` means the model's order, empty ``seeds``
        random starts.  Unreachable targets are answers (solved false), not errors."""
        names = tuple(joint_names) or self._identity
        perm, n = self.permutation(names), len(names)
        t = np.asarray(targets, dtype=float).reshape(-1)
        width = 3 if position_only else 16
        if t.size == 0 or t.size % width:
            want = "N x 3 positions (position_only)" if position_only else "N x 16 (4x4 poses)"
            raise RequestError(f"targets has {t.size} values; expected {want}, row-major")
        N = t.size // width
        if N > self.max_points:
            raise RequestError(f"targets has {N} poses; this server accepts at most "
                               f"{self.max_points} (parameter max_points)")
        if not np.isfinite(t).all():
            raise RequestError(f"targets contains NaN or Inf (first in target "
                               f"{int(np.flatnonzero(~np.isfinite(t))[0]) // width})")
        T = t.reshape(N, 3) if width == 3 else t.reshape(N, 4, 4)
        q0 = None
        if len(seeds):
            q0 = self._to_model(perm, self.states("seeds", seeds, n, N))
        for name, v in (("position_tolerance", position_tolerance),
                        ("orientation_tolerance", orientation_tolerance)):
            if not (math.isfinite(v) and v > 0):
                raise RequestError(f"{name} must be a positive number, got {v}")
        if max_iterations < 1 or max_restarts < 0:
            raise RequestError(f"max_iterations must be >= 1 and max_restarts >= 0, got "
                               f"{max_iterations} and {max_restarts}")
        if not (math.isfinite(timeout) and timeout >= 0):
            raise RequestError(f"timeout must be 0 (no limit) or positive, got {timeout}")
        try:
            res = self.robot.ik(T, q0=q0, position_only=position_only,
                                position_tolerance=float(position_tolerance),
                                orientation_tolerance=float(orientation_tolerance),
                                max_iterations=int(max_iterations), max_restarts=int(max_restarts),
                                timeout=float(timeout) or None)
        except ValueError as exc:  # e.g. a target that is not a rigid transform
            raise RequestError(str(exc)) from None
        return IKAnswer(self._to_caller(perm, res.q), np.asarray(res.success, dtype=bool),
                        res.position_error, res.orientation_error, res.iterations)
