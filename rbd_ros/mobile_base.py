"""``MobileBaseRobot``: an arm on a ground base, what ``Robot`` gives for ``base_type``
``"planar"`` (holonomic: omnidirectional / mecanum) or ``"diff_drive"`` (two drive wheels,
no side slip at the base point, 001 (64)).

Layout (issue 17; the base point B is ``base_link``'s origin, the arm mounted at ``model.base``):

* ``q = [x, y, yaw, joints (n)]``, ``nq = 3 + n``: B and the yaw in the world;
* ``v = [v_x, v_y, omega, joint rates (n)]``, ``nv = 3 + n``: the base twist in the base frame
  (as ``cmd_vel``, odometry and ``pin.JointModelPlanar``), ``a = v-dot``;
* ``integrate(q, v, dt)``: the base ``exp`` on SE(2) (``lie.se2``), the joints ``q + dt qd``.

Planar: generalized forces ``[F_x, F_y, M_z, joint torques]`` (on the base, base frame, moment
about B).  Differential drive: the constraint is ``v_y = 0`` (``v[1]`` must be 0 in every
input); the inputs are ``u = [tau_left, tau_right, joint torques]`` (``nu = 2 + n``);
``inverse_dynamics`` returns ``DiffDriveEfforts`` (wheel torques, joint torques and the lateral
ground force ``lam`` at B, base y axis), ``forward_dynamics`` the constrained ``v-dot``
(``v-dot[1] = 0``).

Routes (``method=``), all through ``rbd_ros.formulations`` in world rates and mapped to base
rates (``formulations.planar_base``, ``formulations.diff_drive``): inverse dynamics
``silver`` (default), ``lagrange``, ``lagrange_recursive``, ``kane``, ``dual_quaternion``,
``gauss``; mass matrix ``kane`` (default), ``lagrange``, ``gauss``; constrained forward
dynamics ``kane`` (000 (46), generalized speeds), ``udwadia_kalaba`` (001 (62)), ``kkt``.
The fast jitted path (the recursive kernels of ``algorithm.floating_base`` with a 3-DoF root,
see ``rbd_ros.floating_base``) is not here yet: these routes allocate per call.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from rbd_ros.algorithm import kinematics
from rbd_ros.formulations import diff_drive as dd
from rbd_ros.formulations import planar_base as pb
from rbd_ros.lie import se2
from rbd_ros.robot import Robot, SimulationError, SimulationResult

ID_METHODS = ("silver", "lagrange", "lagrange_recursive", "kane", "dual_quaternion", "gauss")
M_METHODS = ("kane", "lagrange", "gauss")


class DiffDriveEfforts(NamedTuple):
    """Differential-drive inverse dynamics: ``wheels`` (left, right) N m, ``joints`` (n) N m or
    N, ``lateral_force`` N (the ground's constraint force at B along the base y axis)."""

    wheels: np.ndarray
    joints: np.ndarray
    lateral_force: float


def _pick(method: str, valid: tuple[str, ...], what: str) -> str:
    if method not in valid:
        raise ValueError(f"unknown {what} method {method!r}; valid: {', '.join(valid)}")
    return method


class MobileBaseRobot(Robot):
    """An arm on a planar or differential-drive base (module docstring)."""

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.base_type = model.base_type
        self.nq = self.nv = 3 + self.dof
        self._F = pb.formulations(model)
        self.wheels = None
        self.nu = self.nv
        if self.base_type == "diff_drive":
            self.wheels = dd.Wheels(model.wheel_radius, model.wheel_separation, model.wheel_spin_inertia)
            self.nu = 2 + self.dof

    def __repr__(self) -> str:
        return (f"MobileBaseRobot({self.model.name!r}, base={self.base_type!r}, nq={self.nq}, nv={self.nv}, "
                f"joints={list(self.joint_names)})")

    # ---- validation --------------------------------------------------------------------------
    def _vec(self, name: str, x: Any, size: int, rolling: bool = False) -> np.ndarray:
        try:
            arr = np.array(x, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be an array of numbers, got {type(x).__name__}") from exc
        if arr.shape != (size,):
            inputs = size == self.nu != self.nv
            raise ValueError(f"{name} must have shape ({size},) ({self.base_type} base: 3 base + "
                             f"{self.dof} joint {'inputs' if inputs else 'entries'}"
                             f"{'; diff_drive inputs are [tau_left, tau_right, joints]' if inputs else ''})"
                             f", got {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains {'NaN' if np.isnan(arr).any() else 'Inf'}")
        if rolling and self.base_type == "diff_drive":
            dd._check_rolling(arr, name)
        return arr

    def _q(self, q: Any) -> np.ndarray:
        return self._vec("q", q, self.nq)

    # ---- dynamics ----------------------------------------------------------------------------
    def inverse_dynamics(self, q: Any, v: Any, a: Any, method: str = "silver") -> Any:
        """Planar: ``[F_x, F_y, M_z, joint torques] = M a + h`` (base frame, moment about B).
        Diff drive: ``DiffDriveEfforts`` realising ``a`` (``v[1] = a[1] = 0``)."""
        _pick(method, ID_METHODS, "inverse_dynamics")
        q, v, a = self._q(q), self._vec("v", v, self.nv, True), self._vec("a", a, self.nv, True)
        if self.wheels is None:
            return pb.inverse_dynamics(self._F, q, v, a, method)
        return DiffDriveEfforts(*dd.inverse_dynamics(self._F, self.wheels, q, v, a, method))

    def forward_dynamics(self, q: Any, v: Any, tau: Any, method: str = "kane") -> np.ndarray:
        """Planar: ``a = M^{-1}(tau - h)`` (``method``: kane, lagrange, gauss).  Diff drive:
        the constrained ``a`` (``a[1] = 0``) for ``tau = [tau_left, tau_right, joints]``
        (``method``: kane, udwadia_kalaba, kkt); ``constrained_dynamics`` also gives ``lam``."""
        if self.wheels is None:
            _pick(method, M_METHODS, "forward_dynamics")
            q, v, tau = self._q(q), self._vec("v", v, self.nv), self._vec("tau", tau, self.nu)
            return pb.forward_dynamics(self._F, q, v, tau, method)
        return self.constrained_dynamics(q, v, tau, method)[0]

    def constrained_dynamics(self, q: Any, v: Any, tau: Any, method: str = "kane") -> tuple[np.ndarray, float]:
        """Diff drive: ``(a, lam)``, the constrained acceleration and the lateral ground force."""
        if self.wheels is None:
            raise ValueError("constrained_dynamics is for a diff_drive base; a planar base has no constraint")
        _pick(method, dd.METHODS, "diff_drive forward_dynamics")
        q, v, tau = self._q(q), self._vec("v", v, self.nv, True), self._vec("tau", tau, self.nu)
        return dd.forward_dynamics(self._F, self.wheels, q, v, tau[:2], tau[2:], method)

    def mass_matrix(self, q: Any, method: str = "kane") -> np.ndarray:
        """``M`` in base rates, ``(nv, nv)`` (``T^T M T``); diff drive: plus the wheels' spin
        inertia on ``v_x`` and ``omega`` (``diff_drive.Wheels.added_inertia``)."""
        M = pb.mass_matrix(self._F, self._q(q), _pick(method, M_METHODS, "mass_matrix"))
        if self.wheels is not None:
            mv, Iw = self.wheels.added_inertia()
            M[0, 0] += mv
            M[2, 2] += Iw
        return M

    def bias(self, q: Any, v: Any, method: str = "silver") -> np.ndarray:
        """``h`` in base rates (gravity included): the generalized force at ``a = 0``
        (unconstrained; for a diff drive ``v[1]`` must be 0)."""
        _pick(method, ID_METHODS, "bias")
        return pb.bias(self._F, self._q(q), self._vec("v", v, self.nv, True), method)

    nonlinear_effects = bias

    def gravity(self, q: Any, method: str = "silver") -> np.ndarray:
        """``g(q)`` in base rates (zero on the base rows under vertical gravity)."""
        return self.bias(q, np.zeros(self.nv), method)

    def kinetic_energy(self, q: Any, v: Any) -> float:
        v = self._vec("v", v, self.nv)
        return float(0.5 * v @ self.mass_matrix(q) @ v)

    # ---- configuration space -----------------------------------------------------------------
    def integrate(self, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
        """``q (+) v dt``: B moves by ``R(yaw) V_l (v_x dt, v_y dt)``, yaw by ``omega dt`` (SE(2)
        exp, as ``pin.integrate`` on a planar joint); joints ``q + dt qd``."""
        q, v = self._q(q), self._vec("v", v, self.nv)
        c, s = np.cos(q[2]), np.sin(q[2])
        dx, dy = se2.planar_exp(v[0] * dt, v[1] * dt, v[2] * dt)
        out = q + dt * v
        out[0], out[1] = q[0] + c * dx - s * dy, q[1] + s * dx + c * dy
        return out

    def neutral(self) -> np.ndarray:
        return np.zeros(self.nq)

    def base_pose(self, q: Any) -> np.ndarray:
        """World pose (4x4) of ``base_link``."""
        q = self._q(q)
        T = np.eye(4)
        c, s = np.cos(q[2]), np.sin(q[2])
        T[:2, :2] = [[c, -s], [s, c]]
        T[:2, 3] = q[:2]
        return T

    def fk(self, q: Any) -> np.ndarray:
        """World pose (4x4) of the tool."""
        q = self._q(q)
        T = np.empty((4, 4))
        kinematics.tool_pose(self._mp, self._ws, np.ascontiguousarray(q[3:]), T)
        return self.base_pose(q) @ T

    def _unsupported(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError(f"not available with a {self.base_type} base yet: use inverse_dynamics, "
                                  "forward_dynamics, mass_matrix, bias, gravity, simulate, integrate, fk")

    coriolis_matrix = potential_energy = link_poses = jacobian = _unsupported
    jacobian_dot_times_qd = analytic_jacobian = static_torques = joint_wrenches = ik = _unsupported

    # ---- simulation --------------------------------------------------------------------------
    def simulate(self, q0: Any, v0: Any, tau: Any, dt: float, steps: int, method: str = "kane",
                 stabilise: str | None = None) -> SimulationResult:
        """RK4 from ``(q0, v0)`` under the constant input ``tau`` (``nu``) for ``steps`` steps.
        Planar: the state ``(q, v)``, ``q-dot = T(yaw) v`` (``method`` for M and h).  Diff drive:
        ``diff_drive.simulate``: ``method="kane"`` integrates the independent speeds (``v_y`` is
        not a state, so it stays exactly 0); ``"udwadia_kalaba"`` the world rates, drifting
        unless ``stabilise="projection"`` or ``"baumgarte"``.  Returns ``q``, ``qd`` (= ``v``)
        and ``qdd`` (= ``a``), each ``(steps + 1, ...)``, with ``.t`` and ``.tau``."""
        if not (isinstance(dt, (int, float, np.floating)) and np.isfinite(dt) and dt > 0):
            raise ValueError(f"dt must be a positive number, got {dt}")
        if int(steps) != steps or steps < 1:
            raise ValueError(f"steps must be a positive integer, got {steps}")
        q0, v0 = self._q(q0), self._vec("v0", v0, self.nv, True)
        u = self._vec("tau", tau, self.nu)
        steps = int(steps)
        if self.wheels is not None:
            _pick(method, ("kane", "udwadia_kalaba"), "diff_drive simulate")
            if stabilise not in (None, "baumgarte", "projection"):
                raise ValueError(f"stabilise must be None, 'baumgarte' or 'projection', got {stabilise!r}")
        else:
            _pick(method, M_METHODS, "simulate")
            if stabilise is not None:
                raise ValueError("stabilise is for a diff_drive base (a planar base has no constraint)")
        try:
            with np.errstate(all="ignore"):
                if self.wheels is not None:
                    out = dd.simulate(self._F, self.wheels, q0, v0, u[:2], u[2:], float(dt), steps, method,
                                      stabilise)
                    Q, V = out["q"], out["v"]
                    Vr = V.copy()
                    Vr[:, 1] = 0.0  # UK's drift (reported in v) is not fed back into the accelerations
                    A = np.array([dd.forward_dynamics(self._F, self.wheels, q, v, u[:2], u[2:])[0]
                                  for q, v in zip(Q, Vr)])
                else:
                    Q, V, A = self._rk4_planar(q0, v0, u, float(dt), steps, method)
        except (np.linalg.LinAlgError, ValueError) as exc:  # NaN met by a solver or a state check
            raise SimulationError(f"simulation diverged (the state became NaN or Inf): {exc}; use a smaller "
                                  f"dt (now {dt:g} s) or smaller inputs") from exc
        if not (np.isfinite(Q).all() and np.isfinite(V).all() and np.isfinite(A).all()):
            k = int(np.argmax(~(np.isfinite(Q).all(1) & np.isfinite(V).all(1) & np.isfinite(A).all(1))))
            raise SimulationError(f"simulation diverged at t = {k * dt:.6g} s (step {k} of {steps}): the state "
                                  f"became NaN or Inf; use a smaller dt (now {dt:g} s) or smaller inputs")
        return SimulationResult(Q, V, A, np.arange(steps + 1) * float(dt), np.tile(u, (steps, 1)))

    def _rk4_planar(self, q: np.ndarray, v: np.ndarray, u: np.ndarray, dt: float, steps: int,
                    method: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        F = self._F

        def f(q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return pb.world_rates(q, v), pb.forward_dynamics(F, q, v, u, method)

        Q, V, A = np.empty((steps + 1, self.nq)), np.empty((steps + 1, self.nv)), np.empty((steps + 1, self.nv))
        Q[0], V[0] = q, v
        for k in range(steps):
            k1 = f(q, v)
            A[k] = k1[1]
            k2 = f(q + 0.5 * dt * k1[0], v + 0.5 * dt * k1[1])
            k3 = f(q + 0.5 * dt * k2[0], v + 0.5 * dt * k2[1])
            k4 = f(q + dt * k3[0], v + dt * k3[1])
            q = q + dt / 6.0 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            v = v + dt / 6.0 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            Q[k + 1], V[k + 1] = q, v
        A[steps] = f(q, v)[1]
        return Q, V, A


__all__ = ["DiffDriveEfforts", "MobileBaseRobot"]
