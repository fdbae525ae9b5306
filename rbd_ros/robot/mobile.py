"""The ground root joints' front: ``Robot`` on a ground base, ``base_type`` ``"planar"``
(holonomic: omnidirectional / mecanum) or ``"diff_drive"`` (two drive wheels, no side slip at
the base point, 001 (64)).  ``GroundFront`` holds the methods ``Robot`` binds for these roots
(``robot.front``); ``MobileBaseRobot`` is the old class name (deprecated: ``Robot(model)``;
``isinstance`` still answers).

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

Routes (``method=``).  ``"recursive"`` (the default everywhere): the jitted recursive
kernels of ``algorithm.planar_base`` (the free-flyer RNEA/CRBA/ABA of
``algorithm.floating_base`` on a planar root ``S_0 = [e_x, e_y, e_wz]``; the diff drive's
constrained dynamics as ABA on its 2-DoF root ``[e_x, e_wz]``, exact by 001 (64) / 000 (39)-(46),
see that module), one compiled call per public call, checked as ``Robot``'s fast path does.
The formulations, through ``rbd_ros.formulations`` in world rates mapped to base rates
(``formulations.planar_base``, ``formulations.diff_drive``): inverse dynamics ``silver``,
``lagrange``, ``lagrange_recursive``, ``kane``, ``dual_quaternion``, ``gauss``; mass matrix
``kane``, ``lagrange``, ``gauss``; constrained forward dynamics ``kane`` (000 (46),
generalized speeds), ``udwadia_kalaba`` (001 (62)), ``kkt``.  They allocate per call and are
for cross-checks.

Kinematics and statics in the world frame, as the floating base's: ``fk``, ``link_poses``,
``jacobian`` (6 x nv on ``v``; ``robot.floating.carried_jacobian`` on ``S_0``), ``potential_energy``,
``coriolis_matrix`` (Kane / Gauss in base rates), ``static_torques`` (``J^T m + g``; diff drive as
``DiffDriveEfforts``); ``ik`` is refused with what to do instead.

Concurrency as ``Robot``: single-state calls share ``robot.data``'s workspace under the GIL;
``simulate`` (which releases it) integrates on a private workspace.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Self

import numpy as np

from rbd_ros.algorithm import base_batch as bb
from rbd_ros.algorithm import kinematics
from rbd_ros.algorithm import planar_base as pk
from rbd_ros.algorithm.first_use import entry, on_first_call
from rbd_ros.bases.root_joint import MAX_YAW
from rbd_ros.formulations import diff_drive as dd
from rbd_ros.formulations import planar_base as pb
from rbd_ros.model.data import empty_workspace
from rbd_ros.robot.arm import Robot, SingularMassMatrixError
from rbd_ros.robot.fast_path import fast_path
from rbd_ros.robot.floating import carried_jacobian, whole_body_statics
from rbd_ros.robot.front import RootFront, deprecated_front
from rbd_ros.robot.simulation import SimulationError, SimulationResult, callback_finite, is_jitted
from rbd_ros.util import validate

RECURSIVE = "recursive"
ID_METHODS = (RECURSIVE, "silver", "lagrange", "lagrange_recursive", "kane", "dual_quaternion", "gauss")
M_METHODS = (RECURSIVE, "kane", "lagrange", "gauss")
FD_DIFF_METHODS = (RECURSIVE, *dd.METHODS)
_empty = np.empty
_tuple_new = tuple.__new__  # a NamedTuple without its Python-level __new__ (~0.1 us)
_rnea_checked = on_first_call(pk.rnea_planar_checked, globals(), "_rnea_checked")  # entry points (first_use)
_rnea_dd_checked = on_first_call(pk.rnea_diff_drive_checked, globals(), "_rnea_dd_checked")
_crba_checked = on_first_call(pk.crba_planar_checked, globals(), "_crba_checked")
_aba_checked = on_first_call(pk.aba_planar_checked, globals(), "_aba_checked")
_aba_dd_checked = on_first_call(pk.aba_diff_drive_checked, globals(), "_aba_dd_checked")


def _entry_refused(name: str) -> RuntimeError:
    """The error when a checked entry point refuses (code 1) inputs the full path has already
    checked: the two checks disagree, a bug in rbd_ros, never a wrong number returned."""
    return RuntimeError(f"rbd_ros bug: planar_base.{name} refused inputs the full path accepted; please report it")



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


class GroundFront(RootFront):
    """The methods of a ``Robot`` on a planar or differential-drive base (module docstring);
    ``self`` is the ``Robot`` (``nq = nv = 3 + n``, ``nu`` 3 or 2 ``+ n``: ``rbd_ros.bases``)."""

    # the per-robot state ``setup`` adds (annotations for the type checker: no class attributes,
    # so nothing of it is bound by ``attach``)
    _F: pb.Formulations
    wheels: dd.Wheels | None
    _zv: np.ndarray
    _lam: np.ndarray
    _rnea_fast: Any  # a compiled entry point (``first_use.entry``)

    @classmethod
    def setup(cls, robot: Self) -> None:
        model = robot.model
        robot._F = pb.formulations(model)
        robot.wheels = None
        if model.base_type == "diff_drive":
            robot.wheels = dd.Wheels(model.wheel_radius, model.wheel_separation, model.wheel_spin_inertia)
        robot._zv = np.zeros(robot.nv)  # read-only zero velocity / acceleration
        robot._lam = np.empty(1)  # forward_dynamics' unread lateral force
        # the compiled entry itself (a stand-in kept here would cost each call one Python call)
        robot._rnea_fast = entry(pk.rnea_planar_checked if robot.wheels is None else pk.rnea_diff_drive_checked)

    # ---- validation --------------------------------------------------------------------------
    def _vec(self, name: str, x: Any, size: int, rolling: bool = False) -> np.ndarray:
        arr = np.array(validate.real_array(name, x))  # a private copy
        if arr.shape != (size,):
            inputs = size == self.nu != self.nv
            raise ValueError(f"{name} must have shape ({size},) ({self.base_type} base: 3 base + "
                             f"{self.dof} joint {'inputs' if inputs else 'entries'}"
                             f"{'; diff_drive inputs are [tau_left, tau_right, joints]' if inputs else ''})"
                             f", got {arr.shape}")
        validate.finite_array(name, arr)
        if rolling:
            self.root.check_velocity(arr, name)  # diff drive: v_y = 0 (rbd_ros.bases)
        return arr

    def _q(self, q: Any) -> np.ndarray:
        arr = self._vec("q", q, self.nq)
        if abs(arr[2]) > MAX_YAW:  # cos/sin of it would carry no digits of the heading
            raise ValueError(f"q[2] (base yaw) = {arr[2]:.6g} rad: |yaw| must be <= {MAX_YAW:g} "
                             f"rad (at {arr[2]:.3g} a double's spacing is "
                             f"{np.spacing(abs(arr[2])):.3g} rad); wrap it to [-pi, pi)")
        return arr

    def _rows(self, q: Any, *rates: tuple[str, Any, int, bool]) -> list[np.ndarray]:
        """A batch for the batch kernels (``algorithm.base_batch``), validated as ``_q`` and
        ``_vec`` validate one state: ``q`` (N, nq), each rate ``(name, x, width, rolling)``
        (N, width), finite; ``rolling``: the diff drive's ``v_y = 0`` in every row."""
        out = []
        N = np.shape(q)[0] if np.ndim(q) == 2 else -1
        for name, x, size, rolling in (("q", q, self.nq, False), *rates):
            arr = np.ascontiguousarray(validate.real_array(name, x), dtype=float)
            if arr.shape != (N, size):
                raise ValueError(f"a batch needs q as (N, {self.nq}) rows and the other arguments as "
                                 f"(N, {size}) rows with the same N ({self.base_type} base), got "
                                 f"{name} {arr.shape}")
            validate.finite_array(name, arr)
            if rolling and self.wheels is not None:  # diff drive: v_y = 0, tolerance as check_velocity's
                slides = np.flatnonzero(np.abs(arr[:, 1]) > 1e-9 * np.maximum(1.0, np.abs(arr).max(axis=1)))
                if slides.size:
                    self.root.check_velocity(arr[slides[0]], f"{name}[{slides[0]}]")  # raises, naming it
            out.append(arr)
        big = np.flatnonzero(np.abs(out[0][:, 2]) > MAX_YAW)
        if big.size:
            self._q(out[0][big[0]])  # raises, naming the yaw
        return out

    # ---- dynamics ----------------------------------------------------------------------------
    def _wrench_or_none(self, tool_wrench: Any) -> np.ndarray | None:
        return None if tool_wrench is None else self._wrench(tool_wrench)

    @fast_path(("q", "v", "a"), "self._rnea_fast(self._mw, q, v, a, out)", "out = _empty(self.nv)",
               "out if self.wheels is None else _tuple_new(DiffDriveEfforts, (out[:2], out[3:], out.item(2)))",
               when="method is RECURSIVE and tool_wrench is None")
    def inverse_dynamics(self, q: Any, v: Any, a: Any, method: str = RECURSIVE,
                         tool_wrench: Any = None) -> Any:
        """Planar: ``[F_x, F_y, M_z, joint torques] = M a + h - J^T w`` (base frame, moment
        about B).  Diff drive: ``DiffDriveEfforts`` realising ``a`` (``v[1] = a[1] = 0``).
        ``tool_wrench = w = [f; m]`` as ``Robot``'s: applied by the environment on the tool,
        world axes, moment about the tool origin (``J``: the tool's whole-body Jacobian in
        base rates)."""
        _pick(method, ID_METHODS, "inverse_dynamics")
        if np.ndim(q) == 2 and method == RECURSIVE and tool_wrench is None:
            return self._inverse_dynamics_batch(q, v, a)
        q, v, a = self._q(q), self._vec("v", v, self.nv, True), self._vec("a", a, self.nv, True)
        w = self._wrench_or_none(tool_wrench)
        if method == RECURSIVE:
            out = np.empty(self.nv)
            args = (self._mp, self._ws, q, v, a, self._zv[:6] if w is None else w, w is not None, out)
            (pk.rnea_planar if self.wheels is None else pk.rnea_diff_drive)(*args)
            validate.finite_result("inverse_dynamics", out, q=q, v=v, a=a, tool_wrench=w)
            return out if self.wheels is None else DiffDriveEfforts(out[:2], out[3:], float(out[2]))
        with np.errstate(all="ignore"):  # an overflow is reported below, naming the cause
            if self.wheels is None:
                return validate.finite_result(f"inverse_dynamics (method={method!r})",
                                              pb.inverse_dynamics(self._F, q, v, a, method, w), q=q, v=v, a=a)
            res = DiffDriveEfforts(*dd.inverse_dynamics(self._F, self.wheels, q, v, a, method, w))
        validate.finite_result(f"inverse_dynamics (method={method!r})",
                               np.concatenate([res.wheels, res.joints, [res.lateral_force]]), q=q, v=v, a=a)
        return res

    def _inverse_dynamics_batch(self, q: Any, v: Any, a: Any) -> Any:
        """``inverse_dynamics`` of N states (q (N, nq), v, a (N, nv)) in one kernel call:
        planar (N, nv); diff drive ``DiffDriveEfforts`` of (N, 2), (N, n), (N,) arrays."""
        q, v, a = self._rows(q, ("v", v, self.nv, True), ("a", a, self.nv, True))
        out = np.empty_like(v)
        bb.run(bb.rnea_ground_batch, self._mp, self.data.wss, len(q), q, v, a, self.wheels is not None, out)
        validate.finite_result("inverse_dynamics", out, q=q, v=v, a=a)
        return out if self.wheels is None else DiffDriveEfforts(out[:, :2], out[:, 3:], out[:, 2].copy())

    def _singular(self, q: Any, include_actuators: bool = False,
                  fallback: Exception | None = None) -> Exception:
        """The error for a forward dynamics that divided by zero: the coordinates spanning the
        null space of ``M`` (as ``Robot``'s); ``fallback`` (when given) if ``M`` is regular."""
        w, V = np.linalg.eigh(self.mass_matrix(self._q(q)))
        null = V[:, w <= 1e-12 * max(float(np.abs(w).max()), 1.0)]
        names = list(self.base_velocity_names) + list(self.joint_names)
        if self.wheels is not None:  # v_y is not a coordinate of the constrained system
            null = null[:, np.abs(null[1]) < 1.0 - 1e-9]
        moving = [names[i] for i in np.flatnonzero(np.abs(null).max(axis=1) > 1e-6)] if null.size else []
        if fallback is not None and not moving:
            return fallback
        return SingularMassMatrixError(
            f"singular mass matrix: {moving or 'some coordinates'} move no mass or inertia, so their "
            "accelerations are undetermined; give the links (or the base) they carry a mass and inertia")

    @fast_path(("q", "v", "tau"), "(_aba_checked(self._mw, q, v, tau, out) if self.wheels is None "
               "else _aba_dd_checked(self._mw, q, v, tau, out, self._lam))", "out = _empty(self.nv)",
               when="method is RECURSIVE")
    def forward_dynamics(self, q: Any, v: Any, tau: Any, method: str = RECURSIVE) -> np.ndarray:
        """Planar: ``a = M^{-1}(tau - h)`` (``method``: recursive (ABA), kane, lagrange,
        gauss).  Diff drive: the constrained ``a`` (``a[1] = 0``) for ``tau = [tau_left,
        tau_right, joints]`` (``method``: recursive (ABA on the 2-DoF root), kane,
        udwadia_kalaba, kkt); ``constrained_dynamics`` also gives ``lam``."""
        try:
            if self.wheels is None:
                _pick(method, M_METHODS, "forward_dynamics")
                q, v, tau = self._q(q), self._vec("v", v, self.nv), self._vec("tau", tau, self.nu)
                if method == RECURSIVE:  # the fast path's entry (compiled once), on the checked inputs
                    acc = np.empty(self.nv)
                    if _aba_checked(self._mw, q, v, tau, acc) == 1:  # refused after our checks: a bug
                        raise _entry_refused("aba_planar_checked")
                else:
                    with np.errstate(all="ignore"):
                        acc = pb.forward_dynamics(self._F, q, v, tau, method)
                return self._checked_acceleration(q, acc, v=v, tau=tau)
        except ZeroDivisionError as exc:
            raise self._singular(q) from exc
        except np.linalg.LinAlgError as exc:  # a formulation's solve met a singular M
            raise self._singular(q, fallback=SingularMassMatrixError(f"singular mass matrix: {exc}")) from exc
        return self.constrained_dynamics(q, v, tau, method)[0]

    def _checked_acceleration(self, q: np.ndarray, acc: np.ndarray, **inputs: Any) -> np.ndarray:
        """``acc`` if finite; else ``SingularMassMatrixError`` naming the coordinates when ``M``
        is singular (a massless base gives 0/0 = NaN, not a division by zero), else
        ``NonFiniteResultError`` naming the cause (``rbd_ros.util.validate``)."""
        if not np.isfinite(acc).all():
            try:
                validate.finite_result("forward_dynamics", acc, **inputs)
            except validate.NonFiniteResultError as exc:
                raise self._singular(q, fallback=exc) from None
        return acc

    @fast_path(("q", "v", "tau"), "_aba_dd_checked(self._mw, q, v, tau, acc, lam)",
               "acc, lam = _empty(self.nv), _empty(1)", "acc, lam.item(0)",
               when="self.wheels is not None and method is RECURSIVE")
    def constrained_dynamics(self, q: Any, v: Any, tau: Any, method: str = RECURSIVE) -> tuple[np.ndarray, float]:
        """Diff drive: ``(a, lam)``, the constrained acceleration and the lateral ground force."""
        if self.wheels is None:
            raise ValueError("constrained_dynamics is for a diff_drive base; a planar base has no constraint")
        try:
            _pick(method, FD_DIFF_METHODS, "diff_drive forward_dynamics")
            q, v, tau = self._q(q), self._vec("v", v, self.nv, True), self._vec("tau", tau, self.nu)
            if method == RECURSIVE:  # the fast path's entry (compiled once), on the checked inputs
                acc, out = np.empty(self.nv), np.empty(1)
                if _aba_dd_checked(self._mw, q, v, tau, acc, out) == 1:
                    raise _entry_refused("aba_diff_drive_checked")
                lam = float(out[0])
            else:
                with np.errstate(all="ignore"):
                    acc, lam = dd.forward_dynamics(self._F, self.wheels, q, v, tau[:2], tau[2:], method)
            return self._checked_acceleration(q, np.append(acc, lam), v=v, tau=tau)[:-1], float(lam)
        except ZeroDivisionError as exc:
            raise self._singular(q) from exc
        except np.linalg.LinAlgError as exc:
            raise self._singular(q, fallback=SingularMassMatrixError(f"singular mass matrix: {exc}")) from exc

    @fast_path(("q",), "_crba_checked(self._mw, q, out)", "out = _empty((self.nv, self.nv))",
               when="method is RECURSIVE")
    def mass_matrix(self, q: Any, method: str = RECURSIVE) -> np.ndarray:
        """``M`` in base rates, ``(nv, nv)`` (``T^T M T``); diff drive: plus the wheels' spin
        inertia on ``v_x`` and ``omega`` (``diff_drive.Wheels.added_inertia``)."""
        _pick(method, M_METHODS, "mass_matrix")
        if np.ndim(q) == 2 and method == RECURSIVE:  # N states, one kernel call
            (q,) = self._rows(q)
            M = np.empty((len(q), self.nv, self.nv))
            bb.run(bb.crba_ground_batch, self._mp, self.data.wss, len(q), q, M)
            return validate.finite_result("mass_matrix", M, q=q)
        q = self._q(q)
        if method == RECURSIVE:  # the fast path's entry (compiled once), on the checked input
            M = np.empty((self.nv, self.nv))
            if _crba_checked(self._mw, q, M) == 1:
                raise _entry_refused("crba_planar_checked")
            return validate.finite_result("mass_matrix", M, q=q)
        M = pb.mass_matrix(self._F, q, method)
        if self.wheels is not None:
            mv, Iw = self.wheels.added_inertia()
            M[0, 0] += mv
            M[2, 2] += Iw
        return validate.finite_result(f"mass_matrix (method={method!r})", M, q=q)

    @fast_path(("q", "v"), "_rnea_checked(self._mw, q, v, self._zv, out)", "out = _empty(self.nv)",
               when="method is RECURSIVE")
    def bias(self, q: Any, v: Any, method: str = RECURSIVE) -> np.ndarray:
        """``h`` in base rates (gravity included): the generalized force at ``a = 0``
        (unconstrained, ``[F_x, F_y, M_z, joints]`` for both bases; for a diff drive ``v[1]``
        must be 0)."""
        _pick(method, ID_METHODS, "bias")
        if np.ndim(q) == 2 and method == RECURSIVE:  # N states, one kernel call (unconstrained rows)
            q, v = self._rows(q, ("v", v, self.nv, True))
            h = np.empty_like(v)
            bb.run(bb.rnea_ground_batch, self._mp, self.data.wss, len(q), q, v, np.zeros_like(v), False, h)
            return validate.finite_result("bias", h, q=q, v=v)
        q, v = self._q(q), self._vec("v", v, self.nv, True)
        if method == RECURSIVE:  # the fast path's entry (compiled once), on the checked inputs
            h = np.empty(self.nv)
            if _rnea_checked(self._mw, q, v, self._zv, h) == 1:
                raise _entry_refused("rnea_planar_checked")
            return validate.finite_result("bias", h, q=q, v=v)
        with np.errstate(all="ignore"):
            return validate.finite_result(f"bias (method={method!r})", pb.bias(self._F, q, v, method), q=q, v=v)

    nonlinear_effects = bias

    def gravity(self, q: Any, method: str = RECURSIVE) -> np.ndarray:
        """``g(q)`` in base rates (zero on the base rows under vertical gravity)."""
        if np.ndim(q) == 2:
            return self.bias(q, np.zeros((len(q), self.nv)), method)
        return self.bias(q, self._zv, method)

    def kinetic_energy(self, q: Any, v: Any) -> float:
        v = self._vec("v", v, self.nv)
        with np.errstate(all="ignore"):
            return float(validate.finite_result("kinetic_energy", 0.5 * v @ self.mass_matrix(q) @ v, v=v))

    # ---- configuration space -----------------------------------------------------------------
    def integrate(self, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
        """``q (+) v dt``: B moves by ``R(yaw) V_l (v_x dt, v_y dt)``, yaw by ``omega dt`` (SE(2)
        exp, as ``pin.integrate`` on a planar joint); joints ``q + dt qd``."""
        q, v, dt = self._q(q), self._vec("v", v, self.nv), validate.real("dt", dt)
        out = self.root.integrate(q, v, dt)  # rbd_ros.bases: SE(2) x R^n
        return validate.finite_result("integrate", out, q=q, v=v, dt=dt)

    def neutral(self) -> np.ndarray:
        return self.root.neutral(self.dof)

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
        return validate.finite_result("fk", self.base_pose(q) @ T, q=q)

    def link_poses(self, q: Any) -> np.ndarray:
        """World poses of frames 0 .. n, ``(n + 1, 4, 4)``: ``base_pose T_i`` (frame 0 is
        ``base_link -> frame 0``, the mounting, carried by the base)."""
        q = self._q(q)
        T = self.base_pose(q) @ Robot.link_poses(self, np.ascontiguousarray(q[3:]))
        return validate.finite_result("link_poses", T, q=q)

    def jacobian(self, q: Any, link: int | str | None = None, speeds: bool = False) -> np.ndarray:
        """Whole-body geometric Jacobian ``(6, nv)`` [linear; angular], world axes, of the tool
        origin (or a link frame origin, as ``Robot.jacobian``) on ``v = [v_x, v_y, omega, qd]``:
        the floating base's columns (``robot.floating.carried_jacobian``) on the planar root
        ``S_0 = [e_vx, e_vy, e_wz]``, i.e. ``[R e_x; 0]``, ``[R e_y; 0]``, ``[e_z x r; e_z]``
        (``r`` the point's offset from B, world axes), then ``diag(R, R) J_fixed``.
        ``speeds=True`` (diff drive): the columns on the independent speeds ``u = [v_x, omega,
        qd]`` (``J B``: the ``v_y`` column dropped; ``nv - 1`` columns)."""
        q = self._q(q)
        c, s = np.cos(q[2]), np.sin(q[2])
        R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        J = carried_jacobian(self, np.ascontiguousarray(q[3:]), R, self._frame(link))
        validate.finite_result("jacobian", J, q=q)
        if validate.flag("speeds", speeds):
            if self.wheels is None:
                raise ValueError("speeds=True is for a diff_drive base (a planar base's speeds are v)")
            return np.delete(J, [1, 2, 3, 4], axis=1)
        return np.delete(J, [2, 3, 4], axis=1)

    def potential_energy(self, q: Any) -> float:
        """``P = -g . sum_k m_k c_k`` over the base body and the links (world centres of mass,
        zero at the world origin; 003 (3.39) with the sign of ``algorithm.energy``)."""
        q = self._q(q)
        m = self.model
        T = self.link_poses(q)
        Tb = self.base_pose(q)
        c = np.einsum("kij,kj->ki", T[1:, :3, :3], m.com) + T[1:, :3, 3]
        s = m.mass @ c + m.base_mass * (Tb[:3, :3] @ m.base_com + Tb[:3, 3])
        return float(validate.finite_result("potential_energy", -m.gravity @ s, q=q))

    def coriolis_matrix(self, q: Any, v: Any, method: str = "kane") -> np.ndarray:
        """``C(q, v)`` in base rates with ``C v = bias - gravity`` and ``M-dot - 2C`` skew
        (``formulations.planar_base.coriolis_matrix``: ``method`` kane (000 (36)) or gauss
        (001 (47)) on the whole-body chain, mapped to base rates).  Diff drive: the same
        unconstrained ``C`` (the wheels' spin inertia is constant and adds nothing)."""
        _pick(method, ("kane", "gauss"), "coriolis_matrix")
        q, v = self._q(q), self._vec("v", v, self.nv, True)
        with np.errstate(all="ignore"):
            C = pb.coriolis_matrix(self._F, q, v, method)
        return validate.finite_result("coriolis_matrix", C, q=q, v=v)

    def static_torques(self, q: Any, wrench: Any, frame: str = "world", include_gravity: bool = False) -> Any:
        """Holding still while the tool exerts ``wrench = m = [f; n]`` on the environment
        (world axes, moment about the tool origin; ``frame="tool"``: tool axes), as
        ``Robot.static_torques``: ``f = J^T m [+ g(q)]`` (003 (2.2)) with the whole-body
        ``jacobian``.  Planar: ``[F_x, F_y, M_z, joint torques]`` (base frame, moment about B).
        Diff drive: ``DiffDriveEfforts`` (the wheels give ``F_x``, ``M_z``: ``Wheels.torques``;
        the ground the lateral force ``F_y``).  Equals ``inverse_dynamics(q, 0, 0,
        tool_wrench=-m)`` with gravity (minus ``gravity(q)`` without)."""
        f, q, w = whole_body_statics(self, q, wrench, frame, include_gravity, self._q)
        validate.finite_result("static_torques", f, q=q, wrench=w)
        if self.wheels is None:
            return f
        return DiffDriveEfforts(self.wheels.torques(f[0], f[2]), f[3:], float(f[1]))

    def _unsupported(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError(
            f"not available with a {self.base_type} base yet: use inverse_dynamics, forward_dynamics, "
            "mass_matrix, bias, gravity, coriolis_matrix, potential_energy, simulate, integrate, fk, "
            "link_poses, jacobian, static_torques")

    def ik(self, *_: Any, **__: Any) -> Any:
        raise NotImplementedError(
            f"ik is not available with a {self.base_type} base: the base adds redundant (and for a "
            "diff_drive nonholonomic) freedom a pose target does not fix; plan the base pose, then "
            "solve the arm with Robot.ik on the fixed-base arm (Robot(robot.model.with_base_type('fixed')) "
            "and the target in base_link coordinates: inv(base_pose(q)) @ target)")

    jacobian_dot_times_qd = analytic_jacobian = joint_wrenches = _unsupported

    # ---- simulation --------------------------------------------------------------------------
    def _inputs(self, tau: Any, steps: int | None) -> tuple[np.ndarray, Any, Any]:
        """``(U (steps, nu), python callback or None, jitted callback or None)`` from a
        constant input ``(nu,)``, a sequence ``(steps, nu)`` or a callback ``u_fn(t, q, v, out)``."""
        if steps is not None:
            steps = validate.integer("steps", steps, 1)
        if callable(tau) and not isinstance(tau, np.ndarray):
            if steps is None:
                raise ValueError("steps (a positive int) is required with an input callback")
            if is_jitted(tau):
                return np.zeros((int(steps), self.nu)), None, tau
            return np.zeros((int(steps), self.nu)), tau, None
        U = self._real("tau", tau)
        if U.ndim == 1:
            U = self._vec("tau", U, self.nu)
            if steps is None:
                raise ValueError("steps (a positive int) is required with a constant input")
            return np.tile(U, (int(steps), 1)), None, None
        if U.ndim != 2 or U.shape[1] != self.nu or U.shape[0] < 1:
            raise ValueError(f"tau must have shape ({self.nu},) (held) or (steps, {self.nu}), got {U.shape}")
        validate.finite_array("tau", U)
        if steps is not None and steps != U.shape[0]:
            raise ValueError(f"steps={steps} but tau has {U.shape[0]} rows")
        return np.array(U, dtype=float), None, None

    # a ground base's own arguments in place of the fixed base's (a front's method, module
    # docstring of robot.front): not an override of Robot.simulate's signature
    def simulate(self, q0: Any, v0: Any, tau: Any, dt: float,  # type: ignore[override]
                 steps: int | None = None, method: str = RECURSIVE, stabilise: str | None = None
                 ) -> SimulationResult:
        """RK4 from ``(q0, v0)`` for ``steps`` steps of ``dt`` under zero-order-hold inputs
        (``nu``: planar ``[F_x, F_y, M_z, joints]``, diff drive ``[tau_L, tau_R, joints]``):
        ``tau`` a constant ``(nu,)``, a sequence ``(steps, nu)`` (row k over ``[k dt, (k+1) dt)``)
        or a feedback law ``u_fn(t, q, v, out)`` filling ``out`` (``nu``) at the start of every
        step, as ``Robot.simulate``'s torque callback (an ``@njit`` function runs inside the
        integrator, a Python one between one-step kernel calls).

        ``method="recursive"`` (default): ``algorithm.planar_base.simulate_ground``, the state
        ``(q, v)`` with ``q-dot = T(yaw) v`` and ABA; for the diff drive the independent speeds
        ``[v_x, omega, qd]`` (``a[1] = 0`` exactly, so ``v_y`` stays exactly 0).  The
        formulations (constant inputs only): planar ``kane``/``lagrange``/``gauss`` for M and h;
        diff drive ``diff_drive.simulate``: ``"kane"`` in the independent speeds,
        ``"udwadia_kalaba"`` in world rates, drifting unless ``stabilise="projection"`` or
        ``"baumgarte"``.  Returns ``q``, ``qd`` (= ``v``) and ``qdd`` (= ``a``), each
        ``(steps + 1, ...)``, with ``.t`` and ``.tau`` (the inputs held, ``(steps, nu)``)."""
        dt = validate.positive("dt", dt)
        q0, v0 = self._q(q0), self._vec("v0", v0, self.nv, True)
        if self.wheels is not None:
            _pick(method, (RECURSIVE, "kane", "udwadia_kalaba"), "diff_drive simulate")
            if stabilise not in (None, "baumgarte", "projection"):
                raise ValueError(f"stabilise must be None, 'baumgarte' or 'projection', got {stabilise!r}")
            if stabilise is not None and method == RECURSIVE:
                raise ValueError("stabilise is for method='udwadia_kalaba' (the recursive route has no drift)")
        else:
            _pick(method, M_METHODS, "simulate")
            if stabilise is not None:
                raise ValueError("stabilise is for a diff_drive base (a planar base has no constraint)")
        U, python_fn, jit_fn = self._inputs(tau, steps)
        if method != RECURSIVE and (python_fn is not None or jit_fn is not None or np.ptp(U, axis=0).any()):
            raise ValueError(f"feedback laws and input sequences run with method='recursive' (got {method!r}, "
                             "which takes a constant input)")
        steps = U.shape[0]
        h = float(dt)
        try:
            with np.errstate(all="ignore"):
                if method == RECURSIVE:
                    Q, V, A = self._simulate_recursive(q0, v0, U, h, python_fn, jit_fn)
                elif self.wheels is not None:
                    u = U[0]
                    out = dd.simulate(self._F, self.wheels, q0, v0, u[:2], u[2:], h, steps, method, stabilise)
                    Q, V = out["q"], out["v"]
                    Vr = V.copy()
                    Vr[:, 1] = 0.0  # UK's drift (reported in v) is not fed back into the accelerations
                    A = np.array([dd.forward_dynamics(self._F, self.wheels, q, v, u[:2], u[2:])[0]
                                  for q, v in zip(Q, Vr)])
                else:
                    Q, V, A = self._rk4_planar(q0, v0, U[0], h, steps, method)
        except ZeroDivisionError as exc:  # ABA met a zero articulated inertia
            raise self._singular(q0) from exc
        except (np.linalg.LinAlgError, ValueError) as exc:  # a solver met NaN
            raise SimulationError(f"simulation diverged (the state became NaN or Inf): {exc}; use a smaller "
                                  f"dt (now {dt:g} s) or smaller inputs") from exc
        if python_fn is not None or jit_fn is not None:
            callback_finite(U, h, Q, V)
        if not (np.isfinite(Q).all() and np.isfinite(V).all() and np.isfinite(A).all()):
            k = int(np.argmax(~(np.isfinite(Q).all(1) & np.isfinite(V).all(1) & np.isfinite(A).all(1))))
            raise SimulationError(f"simulation diverged at t = {k * dt:.6g} s (step {k} of {steps}): the state "
                                  f"became NaN or Inf; use a smaller dt (now {dt:g} s) or smaller inputs")
        return SimulationResult(Q, V, A, np.arange(steps + 1) * h, U)

    def _simulate_recursive(self, q0: np.ndarray, v0: np.ndarray, U: np.ndarray, h: float,
                            python_fn: Any, jit_fn: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        N = U.shape[0]
        Q, V, A = np.empty((N + 1, self.nq)), np.empty((N + 1, self.nv)), np.empty((N + 1, self.nv))
        # a private workspace: the kernel releases the GIL, so another thread may use self._ws
        ws = empty_workspace(self.dof)
        rolling = self.wheels is not None
        if jit_fn is not None:  # a jitted feedback law: its own kernel, compiled once per law
            pk.simulate_ground_callback(self._mp, ws, q0, v0, U, h, rolling, jit_fn, Q, V, A)
            return Q, V, A
        if python_fn is None:
            pk.simulate_ground(self._mp, ws, q0, v0, U, h, rolling, Q, V, A)
            return Q, V, A
        Q[0], V[0] = q0, v0
        for k in range(N):  # one kernel call per step, the feedback law in between
            python_fn(k * h, Q[k], V[k], U[k])
            pk.simulate_ground(self._mp, ws, Q[k], V[k], U[k:k + 1], h, rolling,
                               Q[k:k + 2], V[k:k + 2], A[k:k + 2])
            if not (np.isfinite(Q[k + 1]).all() and np.isfinite(V[k + 1]).all()):
                Q[k + 2:] = V[k + 2:] = A[k + 2:] = np.nan
                break
        return Q, V, A

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


MobileBaseRobot = deprecated_front(
    "MobileBaseRobot", ("planar", "diff_drive"), "Deprecated: ``Robot(model)`` with ``base_type`` "
    "``'planar'`` or ``'diff_drive'`` (a ``Robot`` with ``GroundFront``'s methods; ``isinstance`` still "
    "answers).", __name__)

__all__ = ["DiffDriveEfforts", "GroundFront", "MobileBaseRobot"]
