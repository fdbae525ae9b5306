"""Laws that touch the world: impedance, hybrid force/position and admittance (ROS-free).

They are ``ControlLaw``s of ``rbd_ros.control.laws`` (registered in its ``LAW_CLASSES`` when
``rbd_ros.control`` is imported), task-space laws on the pose reference of ``Reference``
(``ref.T, ref.v, ref.a``, or a joint reference mapped through the kinematics), plus two
wrenches, both ``[f; n]`` in world axes at the tool origin, **what the tool exerts on the
environment** (the ``m`` of 003 (2.1)-(2.2); ``rbd_ros.control.wrench``): ``wrench_target``
(``set_target_wrench``) and ``wrench_measured`` (``set_measured_wrench``, e.g. from the
payload-compensated F/T sensor, whose frame is the tool's).  Pressing 10 N down on a table is
``f_z = -10``.

All three share one kernel (:func:`_task_kernel`), the operational-space form of 003
(6.48)-(6.49) in RNEA form: a task acceleration ``a*`` and a task force ``F`` give

    qdd* = J^#(a* - J' q') + (I - J^# J) z,     tau = RNEA(q, q', qdd*) + J^T F

(``J^#`` the damped least-squares inverse, ``z = -k_null q'`` the null-space damping of a
redundant arm).  With the exact model and a contact wrench ``m`` the task obeys
``Lambda (r'' - a*) = F - m`` (``Lambda = (J M^-1 J^T)^-1``, the operational-space inertia).

* ``impedance`` (Hogan 1985): ``a* = r_d''``, ``F = K e + D (r_d' - J q')``: the tool behaves
  as the spring ``K`` (``stiffness``, N/m and N m/rad per axis) and damper ``D`` (``damping``)
  about the reference, with its own inertia ``Lambda``; at rest ``m = K e``: pushed with a
  force ``f`` it gives way ``f / K`` (what ``~/apply_wrench`` measures), pressed into a
  surface with the reference ``d`` beyond it, it presses ``K d``.  ``wrench_target`` is fed
  forward (``F += m_d``).
* ``hybrid_force_position`` (Raibert & Craig 1981): a selection ``S`` (``selection``, 1 =
  position, 0 = force, per world axis): ``a* = S (r_d'' + K_v e' + K_p e) - (I - S) D_f J q'``,
  ``F = (I - S) [m_d + k_f (m_d - m) + k_i int (m_d - m) dt]``: position control along the
  selected axes, force control (feed-forward, proportional and integral force feedback) along
  the others, damped there by ``D_f`` = ``force_damping`` (1/s) **as an acceleration**, so the
  arm's own inertia along the axis at the current pose scales it (``Lambda(q) D_f``, a
  damping force in N s/m).  A damping force ``D_f`` fixed from a design inertia is wrong by
  the ratio of the inertias: the xArm 7 shows 1.8 kg along the table normal where the
  model's median inertia is 0.45 kg (contact mode damped at zeta 0.33: the Coulomb
  feed-forward at sign(q') of joints 2 and 4 pumped it into a 6-15 N limit cycle), the UR10
  0.95 kg along the wall normal against 2.1 kg (its 10x damping past the bound, ``10 D_f dt /
  m`` = 2.8 > 2, went discretely unstable: 6.2x impact).
* ``admittance`` (ros2_controllers' ``admittance_controller``): an outer loop integrates
  ``M_a x_c'' + D_a x_c' + K_a (x_c - x_d) = m_d - m`` per axis (``mass``, ``damping``,
  ``stiffness``: a reference that gives way to the measured wrench) and the inner loop
  tracks ``x_c`` with resolved acceleration (``a* = x_c'' + K_v (x_c' - J q') + K_p e_c``,
  ``F = 0``).  ``stiffness`` 0 along an axis: it tracks the force there; ``mass`` 0: no
  admittance there, the inner loop holds the pose reference.  Along a force axis
  (``stiffness`` 0) with a target the reference comes down in free space at ``m_d / D_a``,
  and a ``D_a`` damped for the arm (``2 zeta Lambda omega``) makes that a matter of the arm's
  inertia, not of the task: 1 cm/s on the joint-limited UR5 (5.9-7.8 kg along the table
  normal; with its own inertia at the pose instead of the model's median still 1.4 cm/s: it
  never reached the table in the approach's 2.2 s), 18 cm/s on the Z1.  So until a contact
  is felt (``CONTACT_SHARE`` of ``m_d``) the outer force has an integral term, ``m_d - m +
  k_i int (m_d - m) dt`` (``force_i``, 1/s, default ``omega / 2`` as the hybrid's), which
  brings the reference to the velocity bound on every arm (0.12 s on the UR5; it stops
  winding there); felt, it is zero, and the press is the plain admittance, which with ``K_a
  = 0`` already tracks the force without error (at rest ``m = m_d``) and is damped as the
  user set it: kept in contact, the integral adds a mode damped ``sqrt(k / (4 D_a k_i))``
  (``k`` the contact's stiffness in series with the inner loop's: about 0.24 estimated for
  the UR5 on the table's pad, ``k`` ~ 7e3 N/m), lighter the heavier the arm and the softer
  the surface.

**No run-away without contact.**  Along force-controlled axes (hybrid: ``S = 0``; admittance:
``stiffness = 0``) the tool's speed is bounded by ``velocity_limit``: past it the integral
stops and a damping ``10 D_f`` (hybrid, ``OVER_DAMPING``, in acceleration: ``10 D_f
dt`` = 1.3 < 2 at the default gains, discretely stable on any arm) or the reference's own
speed clamp (admittance) holds it, so a lost contact turns into a slow approach (``|v| <= velocity_limit``), not a
wind-up.  **Effort.**  ``set_target_wrench`` refuses (``ValueError``, the joints named) a
wrench that needs more than the effort limits at the current pose with gravity held:
``|g(q) + J^T m_d| <= tau_max``.

Gains from the model (``force_model_gains``): stiffness ``K_r = Lambda_r omega^2`` and
damping ``D_r = 2 zeta Lambda_r omega`` (``Lambda_r`` as for ``task_pd``: the task
stiffness ``gains.model_gains("task_pd")`` derives, discrete caps included); position gains
``omega^2``, ``2 zeta omega`` as ``resolved_acceleration``; ``force_damping`` = ``2 zeta
omega`` (1/s, the position loop's ``K_v``: critical for the arm's own inertia),
``force_p`` 0.5, ``force_i`` = ``omega / 2`` (both laws); admittance ``mass`` = ``Lambda_r``,
``damping`` = ``D_r``, ``stiffness`` = ``K_r`` except 0 along force axes.  Axes the arm
cannot move get zero gains.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from rbd_ros.algorithm.kinematics import jacobian_dot_times_qd
from rbd_ros.algorithm.rnea import rnea_full
from rbd_ros.control.gains import model_gains
from rbd_ros.control.laws import (
    BAD_INPUT,
    LAW_CLASSES,
    OK,
    ResolvedAcceleration,
    _all_finite,
    _dls_solve,
    _finish,
    _TaskLaw,
)

VELOCITY_LIMIT = 0.05  # m/s (rad/s) along force-controlled axes, the default bound
FORCE_P = 0.5  # the hybrid law's proportional force feedback, default
CONTACT_SHARE = 0.1  # hybrid: a measured force past this share of the target is a contact
OVER_DAMPING = 10.0  # hybrid: the damping past the velocity bound, times force_damping
PRESS_AXES = (1.0, 1.0, 0.0, 1.0, 1.0, 1.0)  # default selection: force along z (a table)

@njit(cache=True)
def _task_kernel(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, J: np.ndarray,
                 acc: np.ndarray, force: np.ndarray, knull: np.ndarray, lam2: float,
                 actuators: bool, no_wrench: np.ndarray, A: np.ndarray, y: np.ndarray,
                 jdqd: np.ndarray, z: np.ndarray, qdd_star: np.ndarray, lim: np.ndarray,
                 tau: np.ndarray, sat: np.ndarray) -> int:  # pragma: no cover - jitted
    """``qdd* = J^#(a* - J' q') + (I - J^# J) z``, ``tau = RNEA(q, q', qdd*) + J^T F``
    (module docstring; 003 (6.48)-(6.49), (2.2))."""
    n = q.shape[0]
    jacobian_dot_times_qd(mp, ws, q, qd, jdqd)
    for r in range(6):
        y[r] = acc[r] - jdqd[r]  # a* - J' q'
    if not _dls_solve(J, lam2, A, y):
        return _finish(tau, lim, sat, 2)
    for j in range(n):
        s = 0.0
        for r in range(6):
            s += J[r, j] * y[r]
        qdd_star[j] = s
    if n > 6:  # (I - J^# J) z, z = -k_null q'
        for j in range(n):
            z[j] = -knull[j] * qd[j]
        for r in range(6):
            s = 0.0
            for j in range(n):
                s += J[r, j] * z[j]
            y[r] = s
        if not _dls_solve(J, lam2, A, y):
            return _finish(tau, lim, sat, 2)
        for j in range(n):
            s = 0.0
            for r in range(6):
                s += J[r, j] * y[r]
            qdd_star[j] += z[j] - s
    rnea_full(mp, ws, q, qd, qdd_star, no_wrench, False, actuators, tau)
    for j in range(n):  # + J^T F (003 (2.2))
        s = 0.0
        for r in range(6):
            s += J[r, j] * force[r]
        tau[j] += s
    return _finish(tau, lim, sat, OK)


@njit(cache=True)
def _impedance_terms(ra: np.ndarray, rv: np.ndarray, v: np.ndarray, e: np.ndarray,
                     K: np.ndarray, D: np.ndarray, md: np.ndarray, acc: np.ndarray,
                     force: np.ndarray) -> None:  # pragma: no cover - jitted
    """``a* = r_d''``, ``F = K e + D (r_d' - v) + m_d`` (Hogan's impedance)."""
    for r in range(6):
        acc[r] = ra[r]
        force[r] = K[r] * e[r] + D[r] * (rv[r] - v[r]) + md[r]


@njit(cache=True)
def _hybrid_terms(ra: np.ndarray, rv: np.ndarray, v: np.ndarray, e: np.ndarray, kp: np.ndarray,
                  kd: np.ndarray, S: np.ndarray, fp: np.ndarray, fi: np.ndarray, fd: np.ndarray,
                  vlim: np.ndarray, md: np.ndarray, m: np.ndarray, dt: float, integral: np.ndarray,
                  touching: np.ndarray, acc: np.ndarray,
                  force: np.ndarray) -> None:  # pragma: no cover - jitted
    """Raibert-Craig: position along ``S = 1``, force along ``S = 0`` (``HybridForcePosition``)."""
    for r in range(6):
        if S[r] > 0.5:  # position: r_d'' + K_v e' + K_p e
            acc[r] = ra[r] + kd[r] * (rv[r] - v[r]) + kp[r] * e[r]
            force[r] = 0.0
            continue
        err = md[r] - m[r]
        felt = m[r] * md[r] > CONTACT_SHARE * md[r] * md[r]  # a share of m_d felt: contact
        if felt and touching[r] == 0.0:  # the free-space integral held Lambda D_f v against m_d:
            integral[r] = 0.0  # stopped by the contact, it would push that much extra
        touching[r] = 1.0 if felt else 0.0
        over = v[r] * md[r] > 0.0 and abs(v[r]) > vlim[r]  # past the bound, the way it pushes
        if not over:  # no wind-up in free space
            integral[r] += err * dt
        force[r] = md[r] + fp[r] * err + fi[r] * integral[r]
        acc[r] = -fd[r] * v[r]  # damping as an acceleration: the arm's own inertia scales it
        if over:  # 10x damping past the bound
            acc[r] -= OVER_DAMPING * fd[r] * (v[r] - math.copysign(vlim[r], v[r]))


@njit(cache=True)
def _admittance_terms(ra: np.ndarray, rv: np.ndarray, v: np.ndarray, e: np.ndarray,
                      mass: np.ndarray, D: np.ndarray, K: np.ndarray, kp: np.ndarray,
                      kd: np.ndarray, fi: np.ndarray, vlim: np.ndarray, md: np.ndarray,
                      m: np.ndarray, dt: float, x: np.ndarray, xv: np.ndarray, xa: np.ndarray,
                      integral: np.ndarray, touching: np.ndarray, acc: np.ndarray,
                      force: np.ndarray) -> None:  # pragma: no cover - jitted
    """The outer ``M_a x'' + D_a x' + K_a x = m_d - m`` (+ ``k_i int (m_d - m) dt`` along a
    force axis until a contact is felt; semi-implicit Euler) and the inner resolved
    acceleration on ``x_c = x_d + x`` (``Admittance``)."""
    for r in range(6):
        if mass[r] <= 0.0:  # no admittance: an axis the arm cannot move, or a held one
            xa[r] = 0.0
            xv[r] = 0.0
            x[r] = 0.0
            integral[r] = 0.0
            continue
        drive = md[r] - m[r]
        if K[r] == 0.0 and md[r] != 0.0:  # a force axis with a target: + k_i int (m_d - m)
            felt = m[r] * md[r] > CONTACT_SHARE * md[r] * md[r]
            touching[r] = 1.0 if felt else 0.0
            if felt:  # in contact the plain admittance (module docstring)
                integral[r] = 0.0
            elif not (xv[r] * md[r] > 0.0 and abs(xv[r]) >= vlim[r]):  # no wind-up at the bound
                integral[r] += drive * dt
            drive += fi[r] * integral[r]
        else:
            integral[r] = 0.0
            touching[r] = 0.0
        xa[r] = (drive - D[r] * xv[r] - K[r] * x[r]) / mass[r]
        xv[r] += xa[r] * dt
        if K[r] == 0.0 and abs(xv[r]) > vlim[r]:  # the bound of a force axis
            xv[r] = math.copysign(vlim[r], xv[r])
            xa[r] = 0.0
        x[r] += xv[r] * dt
    for r in range(6):
        # x_c'' is not fed forward: it holds the measured wrench, and Lambda x_c'' would be a
        # force feedback of gain Lambda / M_a one cycle late (unstable at Nyquist, M_a < Lambda)
        acc[r] = ra[r] + kd[r] * (rv[r] + xv[r] - v[r]) + kp[r] * (e[r] + x[r])
        force[r] = 0.0


class _ForceLaw(_TaskLaw):
    """The common part (module docstring): wrench inputs, task velocity, the kernel."""

    dls_damping = ResolvedAcceleration.dls_damping

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(robot, gains, **kw)
        n = self.dof
        self.wrench_target = np.zeros(6)
        self.wrench_measured = np.zeros(6)
        self.velocity = np.zeros(6)  # J q' (world, tool origin)
        self.integral = np.zeros(6)  # int (m_d - m) dt along force axes, N s (0: impedance)
        self.touching = np.zeros(6)  # 1 along a force axis in contact (CONTACT_SHARE)
        self.acc = np.zeros(6)
        self.force = np.zeros(6)
        self.qdd_star = np.zeros(n)
        self._none = np.zeros(6)
        self._A = np.zeros((6, 6))
        self._y = np.zeros(6)
        self._z = np.zeros(n)
        self._g = np.zeros(n)
        self._q_last = np.full(n, np.nan)
        self._t_prev = math.nan
        self._w = np.zeros(6)

    # ---- gains from the model -----------------------------------------------------------------
    @staticmethod
    def gain_design(*args: Any, **kw: Any) -> tuple[dict[str, np.ndarray], list[str]]:
        """``ControlLaw._model_gains`` derives a force law's gains with ``force_model_gains``."""
        return force_model_gains(*args, **kw)

    # ---- wrench inputs ------------------------------------------------------------------------
    def set_target_wrench(self, wrench: Any, q: Any = None) -> None:
        """The wrench to exert on the environment (world axes, tool origin); ``ValueError``
        if not 6 finite numbers, or if the effort limits cannot produce it at ``q`` (default:
        the last measured state) with gravity held, naming the joints.

        **The force integral on a new target** (hybrid and admittance, one rule): on each axis
        whose target changes sign or goes to zero, ``int (m_d - m) dt`` (and the contact flag)
        restarts at 0.  Wound the old way it would keep the reference going the old way:
        flipped at the velocity bound in free space on the joint-limited UR5, the admittance
        (-1.6 N s) took 136 cycles and 2.6 mm to turn round, 12 and 0.2 mm with it dropped;
        the hybrid (-0.32 N s) 10 cycles, 6 dropped; and a hybrid target set to zero kept
        the tool going down at 2.2 cm/s for ever (``F = k_i I``, which nothing in free space
        unwinds), where dropped it stops as ``(1 - D_f dt)^k``.  An axis whose target keeps
        its sign and only changes magnitude (or is sent again unchanged) keeps its integral:
        in free space it already points the new target's way (dropped, the approach would
        ramp up to the bound again: 0.12 s on the UR5), and in contact it holds the
        correction of the model's errors (gravity, friction), which does not scale with the
        target, so a target ramped by a stream of wrench messages keeps its integral action.  From a zero target the
        integral is kept too (a zero target's integral regulates the force to zero, and a
        press starts from it)."""
        w = np.asarray(wrench, dtype=float).reshape(-1)
        if w.shape != (6,) or not np.isfinite(w).all():
            raise ValueError(f"target wrench must be 6 finite numbers [fx fy fz tx ty tz], "
                             f"got {list(w)}")
        q = self._q_last if q is None else np.asarray(q, dtype=float)
        if np.isfinite(q).all():
            from rbd_ros.robot import Robot

            robot = Robot(self.model)
            need = robot.gravity(q) + robot.jacobian(q).T @ w
            over = np.flatnonzero(np.abs(need) > self.limit)
            if over.size:
                names = ", ".join(f"'{self.joint_names[i]}' {need[i]:.4g} N m (limit "
                                  f"{self.limit[i]:.4g})" for i in over)
                raise ValueError(f"target wrench {np.round(w, 4).tolist()} needs more than the "
                                 f"effort limits at the current pose: {names}")
        old = self.wrench_target
        flipped = (old != 0.0) & (w * old <= 0.0)  # a sign change, or to zero
        self.integral[flipped] = 0.0
        self.touching[flipped] = 0.0
        np.copyto(self.wrench_target, w)

    def set_measured_wrench(self, wrench: np.ndarray, sensor_frame: bool = True) -> None:
        """The measured wrench on the environment (module docstring): in the tool (sensor)
        frame by default, rotated into world axes with the tool orientation of the last cycle
        (nothing allocated)."""
        if not sensor_frame:
            np.copyto(self.wrench_measured, wrench)
            return
        R = self.T[:3, :3]
        np.dot(R, wrench[:3], out=self._w[:3])
        np.dot(R, wrench[3:], out=self._w[3:])
        np.copyto(self.wrench_measured, self._w)

    def reset(self) -> None:
        self._t_prev = math.nan
        self.integral[:] = 0.0
        self.touching[:] = 0.0

    def fold_offset(self, T: np.ndarray) -> bool:
        """``Admittance.fold_offset``; the other laws keep no offset: False."""
        return False

    def _step_dt(self, t: float) -> float:
        dt = t - self._t_prev
        self._t_prev = t
        return dt if 0.0 < dt <= 0.1 else 0.0

    # ---- the cycle ----------------------------------------------------------------------------
    def _compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Any) -> int:
        if not self._task_inputs(q, qd, ref) or not _all_finite(self.wrench_measured):
            return _finish(self.tau, self.limit, self.saturated, BAD_INPUT)
        np.copyto(self._q_last, q)
        np.dot(self.J, qd, out=self.velocity)
        self._task_terms(self._step_dt(t))
        return _task_kernel(self.mp, self.ws, q, qd, self.J, self.acc, self.force,
                            self.gains["k_null"], self.dls_damping**2, self.model_actuators,
                            self._none, self._A, self._y, self.jdqd, self._z, self.qdd_star,
                            self.limit, self.tau, self.saturated)

    def _task_terms(self, dt: float) -> None:
        """Fill ``acc`` (a*) and ``force`` (F) from ``error``, ``velocity`` and the reference."""
        raise NotImplementedError


class Impedance(_ForceLaw):
    """Task-space impedance (module docstring): ``a* = r_d''``, ``F = K e + D e' + m_d``."""

    name = "impedance"

    def _task_terms(self, dt: float) -> None:
        g = self.gains
        _impedance_terms(self.ref_a, self.ref_v, self.velocity, self.error, g["stiffness"],
                         g["damping"], self.wrench_target, self.acc, self.force)


class HybridForcePosition(_ForceLaw):
    """Raibert-Craig hybrid force/position control (module docstring)."""

    name = "hybrid_force_position"

    def _task_terms(self, dt: float) -> None:
        g = self.gains
        _hybrid_terms(self.ref_a, self.ref_v, self.velocity, self.error, g["kp"], g["kd"],
                      g["selection"], g["force_p"], g["force_i"], g["force_damping"],
                      g["velocity_limit"], self.wrench_target, self.wrench_measured, dt,
                      self.integral, self.touching, self.acc, self.force)


class Admittance(_ForceLaw):
    """Admittance (module docstring): the reference gives way to the measured wrench, resolved
    acceleration tracks it."""

    name = "admittance"

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(robot, gains, **kw)
        self.offset = np.zeros(6)  # x_c - x_d (position; rotation vector, small)
        self.offset_v = np.zeros(6)
        self.offset_a = np.zeros(6)

    def reset(self) -> None:
        super().reset()
        self.offset[:] = 0.0
        self.offset_v[:] = 0.0

    def fold_offset(self, T: np.ndarray) -> bool:
        """A new pose reference starts where the compliant reference is: the offset along the
        axes with no spring and no target (``mass`` > 0, ``stiffness`` 0, ``m_d`` 0) is folded
        into the pose ``T`` (4x4, in place: ``p += x``, ``R = Exp(x_w) R``, as ``e + x`` in the
        inner loop) and restarts there at rest; True if anything was folded.

        Along such an axis ``M_a x'' + D_a x' = -m`` has no rest position: the offset stays
        where the last wrench left it (the press's depth below a reference above the surface,
        a hand's push).  A new target pose then means the pose sent, not the pose plus that
        offset: the control loop (``ControlLoop``, the controller node and composed mode)
        calls this as it adopts a new Cartesian move (its start ``T0``), and ``run_press``
        at its retreat (after the target wrench went to zero).  Along a force axis with a
        target the offset is the press itself and is kept (a slide's new pose); along a
        spring the spring brings it back.  ros2_controllers' admittance_controller keeps its
        admittance state until the controller is reactivated (here: ``reset``, which a
        managed controller's activation calls)."""
        from rbd_ros.lie.so3 import exp

        g = self.gains
        fold = (g["mass"] > 0.0) & (g["stiffness"] == 0.0) & (self.wrench_target == 0.0) & (
            self.offset != 0.0)
        if not fold.any():
            return False
        x = np.where(fold, self.offset, 0.0)
        T[:3, 3] += x[:3]
        T[:3, :3] = exp(x[3:]) @ T[:3, :3]
        for state in (self.offset, self.offset_v, self.offset_a, self.integral, self.touching):
            state[fold] = 0.0
        return True

    def _task_terms(self, dt: float) -> None:
        g = self.gains
        _admittance_terms(self.ref_a, self.ref_v, self.velocity, self.error, g["mass"],
                          g["damping"], g["stiffness"], g["kp"], g["kd"], g["force_i"],
                          g["velocity_limit"], self.wrench_target, self.wrench_measured, dt,
                          self.offset, self.offset_v, self.offset_a, self.integral,
                          self.touching, self.acc, self.force)


def force_model_gains(law: str, model: Any, q0: Any = None, bandwidth: float = 10.0,
                      damping_ratio: float = 1.0, rate: float = 1000.0,
                      poses: Any = None) -> tuple[dict[str, np.ndarray], list[str]]:
    """The model's gains of a force law (module docstring) and the notes of the caps."""
    task, notes = model_gains("task_pd", model, q0, bandwidth, damping_ratio, rate, poses)
    ra, _ = model_gains("resolved_acceleration", model, q0, bandwidth, damping_ratio, rate, poses)
    zeta = float(damping_ratio)
    omega = min(2.0 * np.pi * float(bandwidth), 2.0 * zeta * float(rate))
    K = task["kp"]  # Lambda_r omega^2, capped
    lam = K / omega**2
    D = 2.0 * zeta * np.sqrt(K * lam)  # critical for the spring K on the inertia Lambda
    free = (K == 0.0)
    k_null = ra["k_null"]
    if law == "impedance":
        return {"stiffness": K, "damping": D, "k_null": k_null}, notes
    sel = np.where(free, 1.0, np.array(PRESS_AXES))
    vlim = np.full(6, VELOCITY_LIMIT)
    force_i = np.where(free, 0.0, omega / 2.0)  # both laws' force integral gain
    if law == "hybrid_force_position":
        return {"kp": ra["kp"], "kd": ra["kd"], "selection": sel,
                "force_p": np.where(free, 0.0, FORCE_P), "force_i": force_i,
                "force_damping": ra["kd"], "velocity_limit": vlim, "k_null": k_null}, notes
    return {"mass": lam, "damping": D, "stiffness": np.where(sel > 0.5, K, 0.0), "kp": ra["kp"],
            "kd": ra["kd"], "force_i": force_i, "velocity_limit": vlim,
            "k_null": k_null}, notes


FORCE_LAW_CLASSES = {"impedance": Impedance, "hybrid_force_position": HybridForcePosition,
                     "admittance": Admittance}
LAW_CLASSES.update(FORCE_LAW_CLASSES)
