"""The floating root joint's front: ``Robot`` on a free-floating base (space robots, drones
with arms, humanoid bases, underwater vehicles), ``base_type="floating"``.  ``FloatingFront``
holds the methods ``Robot`` binds for this root (``robot.front``); ``FloatingBaseRobot`` is the
old class name (deprecated: ``Robot(model)``; ``isinstance`` still answers).

The base is a root joint ahead of the MDH chain, described once in the model
(``MdhModel.base_type`` and the base body's inertia) and laid out as Pinocchio's free-flyer
so results compare directly:

* ``q = [p (3), quaternion x y z w (4), joints (n)]``, ``nq = 7 + n``: base pose in the world;
* ``v = [v_b (3), w_b (3), joint rates (n)]``, ``nv = 6 + n``: base twist in the base frame,
  linear first (004's order); ``a = v-dot``;
* ``tau = [f_b (3), n_b (3), joint torques (n)]``: the base wrench in the base frame at the
  base origin (zero for a free body), then the joints;
* ``integrate(q, v, dt)``: base ``T exp(dt V^)`` on SE(3), joints ``q + dt qd``.

Kernels: ``algorithm.floating_base`` (RNEA, CRBA, ABA with a 6-DoF root) and
``algorithm.floating_integrators`` (Lie-Euler, RKMK4).

Concurrency and errors as ``Robot``: single-state calls share ``robot.data``'s workspace under
the GIL; ``simulate`` (whose kernel releases it) integrates on a private workspace.  Every
result is checked before it leaves (``rbd_ros.util.validate``: ``NonFiniteResultError`` naming the
cause, ``SingularMassMatrixError``, ``SimulationError`` when a simulation diverges).  Questions
a free base cannot answer the fixed-base way are refused by name (``NotImplementedError``):
``ik`` (the arm would be solved as if bolted down), ``joint_wrenches``, ``method=`` other than
the recursive one, ``coriolis_matrix``, ``potential_energy``, ``jacobian_dot_times_qd``,
``analytic_jacobian``.

How other bases plug in: a base is a root joint (``rbd_ros.bases``, the registry keyed by
``MdhModel.base_type``): its blocks of ``q`` and ``v`` (``nq0`` 7, ``nv0`` 6 here; planar and
diff drive 3 and 3), coordinate names, ``integrate`` on its group (SE(3), SE(2)), constraint
(diff drive: ``v_y = 0``), the kernels it plugs into and the front whose methods ``Robot``
binds for it (``robot.front``).  The kernels
project the root's rows of RNEA/CRBA/ABA on its motion subspace ``S_0`` (6 x nv0, base frame:
E here; planar ``[e_x, e_y, e_wz]``; differential drive ``[e_x, e_wz]``; see the
``algorithm.floating_base`` and ``algorithm.planar_base`` docstrings).  ``"planar"`` and
``"diff_drive"`` by ``rbd_ros.robot.mobile.GroundFront``.
"""
from __future__ import annotations

from typing import Any, Self

import numpy as np

from rbd_ros.algorithm import base_batch as bb
from rbd_ros.algorithm import floating_base as fb
from rbd_ros.algorithm import floating_integrators as fi
from rbd_ros.algorithm import kinematics
from rbd_ros.algorithm.first_use import on_first_call
from rbd_ros.algorithm.rnea import add_actuator_torques
from rbd_ros.lie import so3
from rbd_ros.lie.integrators import INTEGRATORS, integrator_code  # the one table ("rkmk4" first)
from rbd_ros.model.data import empty_workspace
from rbd_ros.robot.arm import Robot
from rbd_ros.robot.fast_path import fast_path
from rbd_ros.robot.front import RootFront, deprecated_front
from rbd_ros.robot.simulation import SimulationError, SimulationResult
from rbd_ros.util import validate

_empty = np.empty
_rnea_checked = on_first_call(fb.rnea_floating_checked, globals(), "_rnea_checked")  # entry points (first_use)
_aba_checked = on_first_call(fb.aba_floating_checked, globals(), "_aba_checked")
_crba_checked = on_first_call(fb.crba_floating_checked, globals(), "_crba_checked")


def carried_jacobian(arm: Robot, qj: np.ndarray, R: np.ndarray, frame: int) -> np.ndarray:
    """The Jacobian ``(6, 6 + n)`` [linear; angular], world axes, of frame ``frame``'s origin
    (``Robot._frame``: n + 1 the tool) of an arm carried by a base with orientation ``R`` and
    twist ``[v_b; w_b]`` in the base frame: ``[[R, -r^ R], [0, R]]`` on the base twist
    (``p' = p_b' + w x r``, ``r`` the point's offset from the base origin in world axes), then
    ``diag(R, R) J_fixed`` (``arm``: a moving-base robot whose fixed-base ``Robot`` methods
    give the arm in base_link axes).  A
    ground base keeps the columns of its ``S_0`` (``robot.mobile``)."""
    T = Robot.fk(arm, qj) if frame == arm.dof + 1 else Robot.link_poses(arm, qj)[frame]
    r = R @ T[:3, 3]  # point - base origin, world axes
    J = np.zeros((6, 6 + arm.dof))
    J[:3, :3] = R
    J[:3, 3:6] = -so3.hat(r) @ R
    J[3:, 3:6] = R
    Jf = Robot.jacobian(arm, qj, frame)
    J[:3, 6:] = R @ Jf[:3]
    J[3:, 6:] = R @ Jf[3:]
    return J


def whole_body_statics(robot: Robot, q: Any, wrench: Any, frame: str, include_gravity: Any,
                       check_q: Any = None) -> tuple[np.ndarray, Any, np.ndarray]:
    """``(J^T m [+ g(q)], q, m)`` (003 (2.2)) with a moving base's whole-body ``jacobian``:
    the base and joint efforts that hold the system still while the tool exerts ``m`` (world
    axes; ``frame="tool"``: tool axes, rotated to world first).  ``check_q`` validates ``q``
    after the wrench (the ground bases' order of refusals)."""
    w, tool = robot._static_args(wrench, frame)
    if check_q is not None:
        q = check_q(q)
    if tool:
        R = robot.fk(q)[:3, :3]
        w = np.concatenate([R @ w[:3], R @ w[3:]])
    with np.errstate(all="ignore"):
        f = robot.jacobian(q).T @ w
    if validate.flag("include_gravity", include_gravity):
        f = f + robot.gravity(q)
    return f, q, w


class FloatingFront(RootFront):
    """The methods of a ``Robot`` on a free-floating SE(3) base (module docstring); ``self``
    is the ``Robot`` (``nq = 7 + n``, ``nv = 6 + n``: ``rbd_ros.bases``)."""

    _zv: np.ndarray  # the per-robot state ``setup`` adds (an annotation for the type checker only)

    @classmethod
    def setup(cls, robot: Self) -> None:
        m = robot.model
        validate.floating_base_body(m.base_link, m.base_mass, m.base_inertia)
        robot._zv = np.zeros(robot.nv)

    # ---- validation --------------------------------------------------------------------------
    def _vec(self, name: str, x: Any, size: int) -> np.ndarray:
        arr = validate.real_array(name, x)
        if arr.shape != (size,):
            raise ValueError(f"{name} must have shape ({size},) (floating base: "
                             f"{'nq = 7 + n' if size == self.nq else 'nv = 6 + n'}), got {arr.shape}")
        return validate.finite_array(name, arr)

    @staticmethod
    def _only(method: str, recursive: str, what: str) -> None:
        """Refuse a ``method=`` other than the recursive one by name (the formulations of
        ``rbd_ros.formulations`` are for fixed and ground bases)."""
        if method != recursive and method != "recursive":  # "recursive": the ground bases' name for it
            raise NotImplementedError(
                f"{what}(method={method!r}): a floating base has only the recursive route "
                f"(method={recursive!r}); the formulations are for fixed and ground (planar, diff_drive) bases")

    def _q(self, q: Any, name: str = "q") -> np.ndarray:
        q = self._vec(name, q, self.nq)
        nrm = float(np.linalg.norm(q[3:7]))
        if abs(nrm - 1.0) > 1e-6:
            raise ValueError(f"{name}[3:7] must be a unit quaternion (x, y, z, w), its norm is {nrm:.6g}")
        return q

    def _each(self, fn: Any, *xs: Any, **kw: Any) -> np.ndarray:
        """A batch: ``fn`` on each row of the 2-D ``xs`` (same number of states N), stacked."""
        arrs = [np.asarray(x, dtype=float) for x in xs]
        if any(x.ndim != 2 for x in arrs) or len({x.shape[0] for x in arrs}) != 1:
            raise ValueError(f"a batch needs every argument as (N, nq) or (N, nv) rows with the "
                             f"same N, got shapes {[x.shape for x in arrs]}")
        return np.stack([fn(*(x[k] for x in arrs), **kw) for k in range(arrs[0].shape[0])])

    def _rows(self, q: Any, *rates: tuple[str, Any]) -> list[np.ndarray]:
        """A batch for the batch kernels (``algorithm.base_batch``), validated: ``q`` (N, nq)
        finite with a unit quaternion in every row, each named rate (N, nv) finite."""
        arrs = [np.ascontiguousarray(validate.real_array(name, x), dtype=float)
                for name, x in (("q", q), *rates)]
        sizes = (self.nq,) + (self.nv,) * len(rates)
        names = ("q",) + tuple(name for name, _ in rates)
        N = arrs[0].shape[0]
        for name, x, size in zip(names, arrs, sizes):
            if x.ndim != 2 or x.shape != (N, size):
                raise ValueError(f"a batch needs q as (N, {self.nq}) rows and {', '.join(names[1:])} "
                                 f"as (N, {self.nv}) rows with the same N, got {name} {x.shape}")
            validate.finite_array(name, x)
        off = np.flatnonzero(np.abs(np.sqrt(np.einsum("ij,ij->i", arrs[0][:, 3:7], arrs[0][:, 3:7])) - 1.0) > 1e-6)
        if off.size:
            k = int(off[0])
            raise ValueError(f"q[{k}, 3:7] must be a unit quaternion (x, y, z, w), its norm is "
                             f"{float(np.linalg.norm(arrs[0][k, 3:7])):.6g}")
        return arrs

    # ---- dynamics ----------------------------------------------------------------------------
    @fast_path(("q", "v", "a"), "_rnea_checked(self._mp, self._ws, q, v, a, out)", "out = _empty(self.nv)",
               when='tool_wrench is None and include_actuators is False and method == "rnea"')
    def inverse_dynamics(self, q: Any, v: Any, a: Any, tool_wrench: Any = None,
                         include_actuators: bool = False, method: str = "rnea") -> np.ndarray:
        """``tau = [f_b; n_b; tau_joints] = M a + h - J^T w`` (floating-base RNEA; ``w`` the
        ``tool_wrench`` [force; moment] the environment applies at the tool origin, world axes,
        ``J`` the tool's ``jacobian``).  A batch: ``q (N, nq)``, ``v, a (N, nv)`` -> ``(N, nv)``."""
        self._only(method, "rnea", "inverse_dynamics")
        act = validate.flag("include_actuators", include_actuators)
        if np.ndim(q) == 2:
            if tool_wrench is not None or act:
                return self._each(self.inverse_dynamics, q, v, a, tool_wrench=tool_wrench,
                                  include_actuators=include_actuators)
            q, v, a = self._rows(q, ("v", v), ("a", a))  # one kernel call for the batch
            tau = np.empty_like(v)
            bb.run(bb.rnea_floating_batch, self._mp, self.data.wss, len(q), q, v, a, tau)
            return validate.finite_result("inverse_dynamics", tau, q=q, v=v, a=a)
        if tool_wrench is not None:
            w = self._wrench(tool_wrench)
            tau = self.inverse_dynamics(q, v, a, include_actuators=include_actuators)
            return validate.finite_result("inverse_dynamics", tau - self.jacobian(q).T @ w, tool_wrench=w)
        q, v, a = self._q(q), self._vec("v", v, self.nv), self._vec("a", a, self.nv)
        tau = np.empty(self.nv)
        fb.rnea_floating(self._mp, self._ws, q, v, a, tau)
        if act:
            add_actuator_torques(self._mp, v[6:], a[6:], tau[6:])
        return validate.finite_result("inverse_dynamics", tau, q=q, v=v, a=a)

    @fast_path(("q", "v", "tau"), "_aba_checked(self._mp, self._ws, q, v, tau, out)", "out = _empty(self.nv)",
               when='include_actuators is False and method == "aba"')
    def forward_dynamics(self, q: Any, v: Any, tau: Any, include_actuators: bool = False,
                         method: str = "aba") -> np.ndarray:
        """``a = M^{-1}(tau - h)`` (floating-base ABA); ``tau[:6]`` a wrench on the base."""
        self._only(method, "aba", "forward_dynamics")
        act = validate.flag("include_actuators", include_actuators)
        if np.ndim(q) == 2:
            q, v, tau = self._rows(q, ("v", v), ("tau", tau))
            a = np.empty_like(v)
            try:
                bb.run(bb.aba_floating_batch, self._mp, self.data.wss, len(q), q, v, tau, act, a)
            except ZeroDivisionError:
                a[0, 0] = np.nan
            if np.isfinite(a).all():
                return a
            # a singular or non-finite state: state by state, which names it
            return self._each(self.forward_dynamics, q, v, tau, include_actuators=include_actuators)
        q, v, tau = self._q(q), self._vec("v", v, self.nv), self._vec("tau", tau, self.nv)
        a = np.empty(self.nv)
        try:
            fb.aba_floating(self._mp, self._ws, q, v, tau, act, a)
        except ZeroDivisionError as exc:
            raise self._singular(q, act) from exc
        if not np.isfinite(a).all():
            try:
                validate.finite_result("forward_dynamics", a, q=q, v=v, tau=tau)
            except validate.NonFiniteResultError as exc:
                raise self._singular(q, act, fallback=exc) from None
        return a

    @fast_path(("q",), "_crba_checked(self._mp, self._ws, q, out)", "out = _empty((self.nv, self.nv))",
               when='include_actuators is False and method == "crba"')
    def mass_matrix(self, q: Any, include_actuators: bool = False, method: str = "crba") -> np.ndarray:
        """``M(q)``, ``(nv, nv)`` (floating-base CRBA); independent of the base pose."""
        self._only(method, "crba", "mass_matrix")
        act = validate.flag("include_actuators", include_actuators)
        if np.ndim(q) == 2:
            (q,) = self._rows(q)
            M = np.empty((len(q), self.nv, self.nv))
            bb.run(bb.crba_floating_batch, self._mp, self.data.wss, len(q), q, M)
            validate.finite_result("mass_matrix", M, q=q)
            if act:
                M[:, 6:, 6:] += np.diag(self.model.armature)
            return M
        q = self._q(q)
        M = np.empty((self.nv, self.nv))
        fb.crba_floating(self._mp, self._ws, q, M)
        validate.finite_result("mass_matrix", M, q=q)
        if act:
            M[6:, 6:] += np.diag(self.model.armature)
        return M

    def bias(self, q: Any, v: Any, method: str = "rnea") -> np.ndarray:
        """``h(q, v)`` = RNEA at ``a = 0``."""
        self._only(method, "rnea", "bias")
        if np.ndim(q) == 2:
            return self.inverse_dynamics(q, v, np.zeros(np.shape(v)))
        return self.inverse_dynamics(q, v, self._zv)

    nonlinear_effects = bias

    def gravity(self, q: Any, method: str = "rnea") -> np.ndarray:
        """``g(q)`` = RNEA at ``v = a = 0`` (depends on the base orientation)."""
        self._only(method, "rnea", "gravity")
        if np.ndim(q) == 2:
            zero = np.zeros((len(q), self.nv))
            return self.inverse_dynamics(q, zero, zero)
        return self.inverse_dynamics(q, self._zv, self._zv)

    def kinetic_energy(self, q: Any, v: Any) -> float:
        v = self._vec("v", v, self.nv)
        with np.errstate(all="ignore"):
            return float(validate.finite_result("kinetic_energy", 0.5 * v @ self.mass_matrix(q) @ v, v=v))

    def momentum(self, q: Any, v: Any) -> np.ndarray:
        """Spatial momentum of the whole system in the world frame about the world origin,
        ``[linear; angular]`` (conserved without gravity and base wrench)."""
        q = self._q(q)
        hb = self.mass_matrix(q)[:6] @ self._vec("v", v, self.nv)  # base frame, about the base origin
        R = so3.quaternion_to_rotation(q[3:7])
        lin = R @ hb[:3]
        with np.errstate(all="ignore"):
            out = np.concatenate([lin, np.cross(q[:3], lin) + R @ hb[3:]])
        return validate.finite_result("momentum", out, q=q, v=v)

    # ---- configuration space -----------------------------------------------------------------
    def integrate(self, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
        """``q (+) v dt``: base ``T exp(dt [v_b; w_b]^)``, joints ``q + dt qd`` (Pinocchio's
        ``integrate`` for a free-flyer)."""
        q, v = self._q(q), self._vec("v", v, self.nv)
        out = self.root.integrate(q, v, validate.real("dt", dt))  # rbd_ros.bases: SE(3) x R^n
        return validate.finite_result("integrate", out, q=q, v=v, dt=dt)

    def base_pose(self, q: Any) -> np.ndarray:
        """World pose (4x4) of the base."""
        q = self._q(q)
        return so3.pose_matrix(q[:3], q[3:7])

    def neutral(self) -> np.ndarray:
        """``q`` with the base at the world origin and all joints at zero."""
        return self.root.neutral(self.dof)

    def fk(self, q: Any) -> np.ndarray:
        """World pose (4x4) of the tool; ``(N, 4, 4)`` for ``q (N, nq)``."""
        if np.ndim(q) == 2:
            return self._each(self.fk, q)
        q = self._q(q)
        T = np.empty((4, 4))
        kinematics.tool_pose(self._mp, self._ws, np.ascontiguousarray(q[7:]), T)
        return validate.finite_result("fk", self.base_pose(q) @ T, q=q)

    def link_poses(self, q: Any) -> np.ndarray:
        """World poses of frames 0 .. n, ``(n + 1, 4, 4)``: ``T_base T_i`` (frame 0 is
        ``base_link -> frame 0`` carried by the base)."""
        q = self._q(q)
        T = self.base_pose(q) @ Robot.link_poses(self, np.ascontiguousarray(q[7:]))  # the fixed-base arm's
        return validate.finite_result("link_poses", T, q=q)

    def jacobian(self, q: Any, link: int | str | None = None) -> np.ndarray:
        """Geometric Jacobian ``(6, nv)`` [linear; angular] in world axes of the tool origin (or
        a link frame origin) with respect to ``v``: with ``R`` the base orientation and ``r``
        the point's offset from the base origin in world axes, the base columns are
        ``[[R, -r^ R], [0, R]]`` (``p' = p_b' + w x r``, ``v_b, w_b`` in the base frame) and
        the joint columns ``diag(R, R) J_fixed`` (the fixed-base Jacobian in base_link axes).
        ``(N, 6, nv)`` for ``q (N, nq)``."""
        if np.ndim(q) == 2:
            return self._each(self.jacobian, q, link=link)
        q = self._q(q)
        J = carried_jacobian(self, np.ascontiguousarray(q[7:]), so3.quaternion_to_rotation(q[3:7]), self._frame(link))
        return validate.finite_result("jacobian", J, q=q)

    def static_torques(self, q: Any, wrench: Any, frame: str = "world",
                       include_gravity: bool = False) -> np.ndarray:
        """``tau = J^T m [+ g(q)]`` (003 (2.2)) with the floating ``jacobian``: the base wrench
        and joint torques with which the system, holding still, makes the tool exert ``m`` on
        the environment; ``frame="tool"``: ``m`` in tool axes (rotated to world axes first).
        ``(nv,)``, or ``(N, nv)`` for ``q (N, nq)``."""
        if np.ndim(q) == 2:
            return self._each(self.static_torques, q, wrench=wrench, frame=frame,
                              include_gravity=include_gravity)
        tau, _, w = whole_body_statics(self, q, wrench, frame, include_gravity)
        return validate.finite_result("static_torques", tau, wrench=w)

    def _unsupported(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError("not available with a floating base yet: use inverse_dynamics, "
                                  "forward_dynamics, mass_matrix, bias, gravity, simulate, integrate, "
                                  "fk, link_poses, jacobian, static_torques")

    coriolis_matrix = potential_energy = _unsupported
    jacobian_dot_times_qd = analytic_jacobian = _unsupported

    def joint_wrenches(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError(
            "joint_wrenches is not available with a floating base: a free base holds no static load (the "
            "system accelerates under any tool wrench); use static_torques (J^T m, the base wrench and joint "
            "torques that hold it still) or inverse_dynamics")

    def ik(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError(
            "ik is not available with a floating base: the base's 6 free coordinates make a tool pose target "
            "redundant and Robot.ik would solve the arm as if bolted down; fix the base pose, then solve the "
            "arm with Robot.ik on the fixed-base arm (Robot(robot.model.with_base_type('fixed')) and the target "
            "in base_link coordinates: inv(base_pose(q)) @ target)")

    # ---- simulation --------------------------------------------------------------------------
    def simulate(self, q0: Any, v0: Any, tau: Any, dt: float, integrator: str = "rkmk4",
                 include_actuators: bool = False, steps: int | None = None) -> SimulationResult:
        """Integrate from ``(q0, v0)`` under zero-order-hold ``tau`` (``(steps, nv)``, base
        wrench then joint torques); ``integrator`` ``"rkmk4"`` or ``"lie_euler"`` (the base on
        SE(3), ``algorithm.floating_integrators``).  Returns ``q (steps+1, nq)``,
        ``v, a (steps+1, nv)``."""
        method = integrator_code(integrator)  # ValueError naming the choices
        dt = validate.positive("dt", dt)
        act = validate.flag("include_actuators", include_actuators)
        q0, v0 = self._q(q0, "q0"), self._vec("v0", v0, self.nv)
        tau_arr = np.array(validate.real_array("tau", tau))  # a private copy: the kernel runs without the GIL
        if tau_arr.ndim != 2 or tau_arr.shape[1] != self.nv or tau_arr.shape[0] < 1:
            raise ValueError(f"tau must have shape (steps, {self.nv}), got {tau_arr.shape}")
        validate.finite_array("tau", tau_arr)
        if steps is not None and validate.integer("steps", steps, 1) != tau_arr.shape[0]:
            raise ValueError(f"steps={steps} but tau has {tau_arr.shape[0]} rows")
        N = tau_arr.shape[0]
        Q, V, A = np.empty((N + 1, self.nq)), np.empty((N + 1, self.nv)), np.empty((N + 1, self.nv))
        # a private workspace: the kernel releases the GIL, so another thread may use self._ws
        try:
            fi.integrate_floating(self._mp, empty_workspace(self.dof), q0, v0, tau_arr, dt, method, act, Q, V, A)
        except ZeroDivisionError as exc:
            raise self._singular(q0, act) from exc
        ok = np.isfinite(Q).all(axis=1) & np.isfinite(V).all(axis=1) & np.isfinite(A).all(axis=1)
        if not ok.all():
            k = int(np.argmin(ok))
            raise SimulationError(
                f"simulation diverged at t = {k * dt:.6g} s (step {k} of {N}): the state became NaN or Inf; "
                f"use a smaller dt (now {dt:g} s) or smaller torques")
        return SimulationResult(Q, V, A, np.arange(N + 1) * dt, tau_arr)


FloatingBaseRobot = deprecated_front(
    "FloatingBaseRobot", ("floating",), "Deprecated: ``Robot(model)`` with ``base_type='floating'`` "
    "(a ``Robot`` with ``FloatingFront``'s methods; ``isinstance`` still answers).", __name__)

# INTEGRATORS: lie.integrators (services use it)
__all__ = ["INTEGRATORS", "FloatingBaseRobot", "FloatingFront", "carried_jacobian", "whole_body_statics"]
