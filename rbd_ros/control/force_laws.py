"""Laws that touch the world: impedance, hybrid force/position and admittance (ROS-free).

They are ``ControlLaw``s of ``rbd_ros.control.laws`` (named in its ``LAW_CLASSES``, imported at
the first one ``make_law`` builds), task-space laws on the pose reference of ``Reference``
(``ref.T, ref.v, ref.a``, or a joint reference mapped through the kinematics), plus two
wrenches, both ``[f; n]`` in world axes at the tool origin, **what the tool exerts on the
environment** (the ``m`` of 003 (2.1)-(2.2); ``rbd_ros.control.wrench``): ``wrench_target``
(``set_target_wrench``) and ``wrench_measured`` (``set_measured_wrench``, e.g. from the
payload-compensated F/T sensor, whose frame is the tool's).  Pressing 10 N down on a table is
``f_z = -10``.  A joint reference (a FollowJointTrajectory goal, issue 41.3) is mapped through
the kinematics each cycle and a redundant arm's null space held to its ``q_d`` (``_task_kernel``);
``contact()`` / ``contact_note`` give the goal's result the contact force.
``use_compensated_wrench=True`` (the controller's parameter of that name): the
measured wrench is the F/T reading compensated with the *identified* payload
(``/ft_sensor/wrench_compensated``, ``identification.payload``), not with the model's last
body: a heavy tool the model does not know then biases no press (issue 41.3).

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
  ``F = S m + (I - S) [m_d + k_f (m_d - m) + k_i int (m_d - m) dt]``: position control along the
  selected axes, the measured contact wrench ``m`` fed forward there (CNSV99's inverse dynamics
  with force and moment measurements: the probe's sliding friction and the moments of the
  contact at the tool origin then drive neither the task nor a redundant arm's null space;
  ``HybridForcePosition``), force control (feed-forward, proportional and integral force
  feedback) along the others, damped there by ``D_f`` = ``force_damping`` (1/s) **as an acceleration**, so the
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
stops (admittance) or unwinds (hybrid, at the rate it winds: the push goes down to what
holds the tool at the bound) and a damping ``10 D_f`` (hybrid, ``OVER_DAMPING``, in
acceleration: ``10 D_f dt`` = 1.3 < 2 at the default gains, discretely stable on any arm) or
the reference's own speed clamp (admittance) holds it, so a lost contact turns into a slow
approach (``|v| <= velocity_limit``), not a wind-up.  **Effort.**  ``set_target_wrench``
refuses (``ValueError``, the joints named) a wrench that needs more than the effort limits
at the current pose with gravity held: ``|g(q) + J^T m_d| <= tau_max``.

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

from rbd_ros.algorithm.actuators import coulomb
from rbd_ros.algorithm.kinematics import jacobian_dot_times_qd
from rbd_ros.algorithm.rnea import rnea_full
from rbd_ros.control.gains import model_gains
from rbd_ros.control.laws import (
    BAD_INPUT,
    OK,
    ResolvedAcceleration,
    TaskSpaceLaw,
    all_finite,
    dls_pinv_times,
    dls_solve,
    finish_torque,
)
from rbd_ros.lie.so3 import exp

VELOCITY_LIMIT = 0.05  # m/s (rad/s) along force-controlled axes, the default bound
FORCE_P = 0.5  # the hybrid law's proportional force feedback, default
CONTACT_SHARE = 0.1  # hybrid: a measured force past this share of the target is a contact
OVER_DAMPING = 10.0  # hybrid: the damping past the velocity bound, times force_damping
PRESS_AXES = (1.0, 1.0, 0.0, 1.0, 1.0, 1.0)  # default selection: force along z (a table)
RAMP_TIME = 0.1  # s: a running law's gains and target wrench move to new values over this
RAMPED = ("stiffness", "damping", "mass", "kp", "kd", "force_p", "force_i", "force_damping",
          "velocity_limit")
CONTACT_REPORT = 1.0  # N: past this contact force a trajectory goal's result says "in contact"
#: rad/s: impedance compensates a joint's Coulomb friction at the sign of the reference's
#: velocity past this speed, of the measured one below (``Impedance``).  Measured (10 N press,
#: force error RMS over the slide): at 1e-3 the xArm 7's wall press slipped by 4 N where its
#: slide's reference had just started (1.45 N), at 5e-3 TIAGo Pro's table press came to 0.209 N;
#: at 2.5e-3 0.50 and 0.187 N (the sign of the measured velocity: 0.28 and 0.10 N).  The hybrid
#: law's too, and the speed past which a joint has broken away (``HybridForcePosition``)
REFERENCE_FRICTION_SPEED = 0.0025

@njit(cache=True)
def _task_kernel(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, J: np.ndarray,
                 acc: np.ndarray, force: np.ndarray, knull: np.ndarray, lam2: float,
                 actuators: bool, no_wrench: np.ndarray, A: np.ndarray, y: np.ndarray,
                 jdqd: np.ndarray, z: np.ndarray, qdd_star: np.ndarray, lim: np.ndarray,
                 tau: np.ndarray, sat: np.ndarray, joint_ref: bool, qr: np.ndarray,
                 qdr: np.ndarray, qddr: np.ndarray, rv: np.ndarray, band: float,
                 moving: float, qv: np.ndarray, moved: np.ndarray) -> int:  # pragma: no cover - jitted
    """``qdd* = J^#(a* - J' q') + (I - J^# J) z``, ``tau = RNEA(q, q', qdd*) + J^T F``
    (module docstring; 003 (6.48)-(6.49), (2.2)); ``z = -k_null q'``, or with a joint
    reference (``joint_ref``: a trajectory goal) the posture ``z = q_d'' + k_null (q_d' - q')
    + (k_null / 2)^2 (q_d - q)`` (critically damped at the bandwidth ``k_null / 2``).
    ``band > 0`` (impedance, hybrid; with the drives modelled): the Coulomb friction compensated at
    the sign of the reference's joint velocity ``q_v`` (``q_d'``, or ``J^# r_d'`` for a pose
    reference) on the joints it moves by at least ``band`` (rad/s) until they break away
    (``moved[j]``: set once ``|q'_j| >= moving`` the reference's way, cleared where the reference rests on the
    joint; ``moving = inf``: never), instead of RNEA's ``T_c sign(q')`` (kept on the others:
    ``Impedance``, ``HybridForcePosition``)."""
    n = q.shape[0]
    jacobian_dot_times_qd(mp, ws, q, qd, jdqd)
    for r in range(6):
        y[r] = acc[r] - jdqd[r]  # a* - J' q'
    if not dls_solve(J, lam2, A, y):
        return finish_torque(tau, lim, sat, 2)
    for j in range(n):
        s = 0.0
        for r in range(6):
            s += J[r, j] * y[r]
        qdd_star[j] = s
    if n > 6:  # (I - J^# J) z, z = -k_null q'
        for j in range(n):
            if joint_ref:
                z[j] = qddr[j] + knull[j] * (qdr[j] - qd[j]) + 0.25 * knull[j] * knull[j] * (qr[j] - q[j])
            else:
                z[j] = -knull[j] * qd[j]
        for r in range(6):
            s = 0.0
            for j in range(n):
                s += J[r, j] * z[j]
            y[r] = s
        if not dls_solve(J, lam2, A, y):
            return finish_torque(tau, lim, sat, 2)
        for j in range(n):
            s = 0.0
            for r in range(6):
                s += J[r, j] * y[r]
            qdd_star[j] += z[j] - s
    rnea_full(mp, ws, q, qd, qdd_star, no_wrench, False, actuators, tau)
    if actuators and band > 0.0:  # Coulomb at the reference's joint velocity
        if joint_ref:
            for j in range(n):
                qv[j] = qdr[j]
        else:  # J^# r_d'
            for r in range(6):
                y[r] = rv[r]
            if not dls_pinv_times(J, lam2, A, y, qv):
                return finish_torque(tau, lim, sat, 2)
        for j in range(n):
            if abs(qv[j]) < band:  # the reference rests on the joint: RNEA's T_c sign(q')
                moved[j] = 0.0
                continue
            if abs(qd[j]) >= moving and qd[j] * qv[j] > 0.0:  # broken away, the reference's way
                moved[j] = 1.0
            if moved[j] == 0.0:
                tau[j] += coulomb(mp, j, qv[j]) - coulomb(mp, j, qd[j])
    for j in range(n):  # + J^T F (003 (2.2))
        s = 0.0
        for r in range(6):
            s += J[r, j] * force[r]
        tau[j] += s
    return finish_torque(tau, lim, sat, OK)


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
                  touching: np.ndarray, acc: np.ndarray, force: np.ndarray,
                  fed: float) -> None:  # pragma: no cover - jitted
    """Raibert-Craig: position along ``S = 1``, force along ``S = 0`` (``HybridForcePosition``);
    along ``S = 1`` ``F = fed m``: the measured wrench fed forward (CNSV99's inverse dynamics
    with the contact force and moment measured, ``fed`` 1) or not (0)."""
    for r in range(6):
        if S[r] > 0.5:  # position: r_d'' + K_v e' + K_p e
            acc[r] = ra[r] + kd[r] * (rv[r] - v[r]) + kp[r] * e[r]
            force[r] = fed * m[r]  # the measured contact wrench fed forward (fed = 1)
            continue
        err = md[r] - m[r]
        felt = m[r] * md[r] > CONTACT_SHARE * md[r] * md[r]  # a share of m_d felt: contact
        # the free-space integral held Lambda D_f v against m_d: stopped by the contact, a push
        # it wound beyond m_d + k_f m_d would push that much extra (dropped); one unwound below
        # it (a slow bound, below) is kept: the press's force then rises from the approach's
        if felt and touching[r] == 0.0 and integral[r] * md[r] > 0.0:
            integral[r] = 0.0
        touching[r] = 1.0 if felt else 0.0
        over = v[r] * md[r] > 0.0 and abs(v[r]) > vlim[r]  # past the bound, the way it pushes
        if not over:
            integral[r] += err * dt
        else:  # no wind-up past the bound: unwound, down to the push the bound needs
            integral[r] -= err * dt
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


class _ForceLaw(TaskSpaceLaw):
    """The common part (module docstring): wrench inputs, task velocity, the kernel."""

    dls_damping = ResolvedAcceleration.dls_damping
    #: rad/s: > 0, the Coulomb friction of a joint the reference moves faster than this is
    #: compensated at the reference's velocity (``_task_kernel``); 0, at the measured one's sign
    coulomb_band = 0.0
    #: rad/s: a joint that has moved faster than this since the reference started moving it
    #: keeps its measured sign until the reference rests on it (``inf``: never; ``_moved``)
    coulomb_moving = math.inf

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        #: the measured wrench is to come from the identified payload's compensation (the
        #: bridge's ``/ft_sensor/wrench_compensated``, ``FTSensor.compensated``), not the model's
        self.use_compensated_wrench = bool(kw.pop("use_compensated_wrench", False))
        self._now: dict[str, np.ndarray] = {}  # the RAMPED gains this cycle uses
        self._ramps: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}  # from, to, t0
        super().__init__(robot, gains, **kw)
        n = self.dof
        self.wrench_target = np.zeros(6)
        self.wrench_now = np.zeros(6)  # the target this cycle uses (RAMP_TIME)
        self.wrench_measured = np.zeros(6)
        self.measured = False  # a measured wrench was given (set_measured_wrench)
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
        self._qv = np.zeros(n)  # the reference's joint velocity (coulomb_band)
        self._moved = np.zeros(n)  # 1: the joint broke away since the reference moved it

    # ---- gains from the model -----------------------------------------------------------------
    @staticmethod
    def gain_design(*args: Any, **kw: Any) -> tuple[dict[str, np.ndarray], list[str]]:
        """``ControlLaw._model_gains`` derives a force law's gains with ``force_model_gains``."""
        return force_model_gains(*args, **kw)

    # ---- online changes without a bump --------------------------------------------------------
    def set_gains(self, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        """``ControlLaw.set_gains``; on a running law (a cycle computed since the last
        ``reset``) the ``RAMPED`` gains (stiffness, damping, mass, position and force gains,
        the velocity bound: a bound stepped down brakes a tool above it at once, ``10 D_f`` of
        the excess: the press's guarded approach, 5 -> 1 cm/s, ~50 m/s^2)
        move from the values in use to the new ones linearly over ``RAMP_TIME`` (ros2_controllers
        issue 1178: a stiffness stepped in contact steps the force by ``dK e``).  ``gains``
        shows the new values at once; the cycle uses ``_now``.  Admittance's zero ``mass`` (no
        admittance) and zero ``stiffness`` (a force axis) are modes: switched at once.  The
        selection and the rest apply at once."""
        before = {k: v.copy() for k, v in self._now.items()}
        super().set_gains(gains, **kw)
        running = math.isfinite(getattr(self, "_t_prev", math.nan))
        for k in RAMPED:
            if k not in self.gains:
                continue
            goal = self.gains[k]
            if not running or k not in before:
                self._now[k] = goal.copy()
                self._ramps.pop(k, None)
                continue
            if np.array_equal(before[k], goal) and k not in self._ramps:
                continue
            start = before[k]
            if self.name == "admittance" and k in ("mass", "stiffness"):  # zero: a mode
                switch = (start == 0.0) | (goal == 0.0)
                start[switch] = goal[switch]
            self._ramps[k] = (start, goal.copy(), math.nan)

    def _advance_ramps(self, t: float) -> None:
        """This cycle's gains and target on their ramps (``set_gains``); the force integral
        rescaled with ``force_i`` so that ``k_i int (m_d - m) dt`` stays what it was."""
        for k, (a, b, t0) in list(self._ramps.items()):
            if not math.isfinite(t0):
                t0 = t
                self._ramps[k] = (a, b, t0)
            s = min(max((t - t0) / RAMP_TIME, 0.0), 1.0)
            now = self.wrench_now if k == "wrench" else self._now[k]
            new = a + s * (b - a)
            if k == "force_i":  # k_i I continuous: I' = I k_i / k_i'
                keep = (now > 0.0) & (new > 0.0)
                self.integral[keep] *= now[keep] / new[keep]
            np.copyto(now, new)
            if s >= 1.0:
                del self._ramps[k]

    def _end_ramps(self) -> None:
        for k, (_, b, _) in self._ramps.items():
            np.copyto(self.wrench_now if k == "wrench" else self._now[k], b)
        self._ramps.clear()

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
        press starts from it).

        **Without a bump** (ros2_controllers issue 1178): on a running law the target the
        cycle uses (``wrench_now``) moves to the new one over ``RAMP_TIME``, as the gains do
        (``set_gains``), except on the axes that start a new task, taken at once: a flip, to
        zero (the integral restarts) and from zero (a press's start: ramped, the approach
        changed, the Z1's joint-torque estimate 0.07 -> 0.67 N RMS).  ``wrench_target`` is the
        new target at once."""
        w = np.asarray(wrench, dtype=float).reshape(-1)
        if w.shape != (6,) or not np.isfinite(w).all():
            raise ValueError(f"target wrench must be 6 finite numbers [fx fy fz tx ty tz], "
                             f"got {list(w)}")
        q = self._q_last if q is None else np.asarray(q, dtype=float)
        if np.isfinite(q).all():
            from rbd_ros.robot import Robot  # lazy: the robot front (44 ms of import)

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
        fresh = flipped | (old == 0.0)  # a new task: flipped, cleared or from zero
        self.integral[flipped] = 0.0
        self.touching[flipped] = 0.0
        np.copyto(self.wrench_target, w)
        if math.isfinite(self._t_prev):  # running: the cycle's target ramps (set_gains),
            start = self.wrench_now.copy()  # but an axis flipped, cleared or set from zero
            start[fresh] = w[fresh]  # is a new task (a press's start): taken at once
            self._ramps["wrench"] = (start, w.copy(), math.nan)
            np.copyto(self.wrench_now, start)
        else:
            np.copyto(self.wrench_now, w)
            self._ramps.pop("wrench", None)

    def set_measured_wrench(self, wrench: np.ndarray, sensor_frame: bool = True) -> None:
        """The measured wrench on the environment (module docstring): in the tool (sensor)
        frame by default, rotated into world axes with the tool orientation of the last cycle
        (nothing allocated)."""
        self.measured = True
        if not sensor_frame:
            np.copyto(self.wrench_measured, wrench)
            return
        R = self.T[:3, :3]
        np.dot(R, wrench[:3], out=self._w[:3])
        np.dot(R, wrench[3:], out=self._w[3:])
        np.copyto(self.wrench_measured, self._w)

    def contact(self) -> tuple[float, str]:
        """The contact force the last cycle saw, ``(|f| in N, what it is)``: the measured
        wrench's (``set_measured_wrench``: the F/T) when one was given, else the law's own
        estimate where it has one (``Impedance``: its task force), else ``(nan, ...)``.  A
        trajectory goal's result names it (``contact_note``)."""
        if self.measured:
            return math.hypot(*self.wrench_measured[:3]), "measured"
        return self._contact_estimate()

    def _contact_estimate(self) -> tuple[float, str]:
        return math.nan, "no measured wrench"

    def reset(self) -> None:
        self._t_prev = math.nan
        self.integral[:] = 0.0
        self.touching[:] = 0.0
        self._moved[:] = 0.0
        self._end_ramps()

    def fold_offset(self, T: np.ndarray) -> bool:
        """``Admittance.fold_offset``; the other laws keep no offset: False."""
        return False

    def _step_dt(self, t: float) -> float:
        dt = t - self._t_prev
        self._t_prev = t
        return dt if 0.0 < dt <= 0.1 else 0.0

    # ---- the cycle ----------------------------------------------------------------------------
    def _compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Any) -> int:
        if not self._task_inputs(q, qd, ref) or not all_finite(self.wrench_measured):
            return finish_torque(self.tau, self.limit, self.saturated, BAD_INPUT)
        np.copyto(self._q_last, q)
        np.dot(self.J, qd, out=self.velocity)
        if self._ramps:
            self._advance_ramps(t)
        self._task_terms(self._step_dt(t))
        return _task_kernel(self.mp, self.ws, q, qd, self.J, self.acc, self.force,
                            self.gains["k_null"], self.dls_damping**2, self.model_actuators,
                            self._none, self._A, self._y, self.jdqd, self._z, self.qdd_star,
                            self.limit, self.tau, self.saturated, not ref.task, ref.q, ref.qd,
                            ref.qdd, self._friction_velocity(), self.coulomb_band,
                            self.coulomb_moving, self._qv, self._moved)

    def _task_terms(self, dt: float) -> None:
        """Fill ``acc`` (a*) and ``force`` (F) from ``error``, ``velocity`` and the reference."""
        raise NotImplementedError

    def _friction_velocity(self) -> np.ndarray:
        """The task velocity the Coulomb compensation goes with (``coulomb_band`` > 0)."""
        return self.ref_v


class Impedance(_ForceLaw):
    """Task-space impedance (module docstring): ``a* = r_d''``, ``F = K e + D e' + m_d``.

    The Coulomb friction of a joint the reference moves (faster than ``coulomb_band``,
    ``REFERENCE_FRICTION_SPEED``) is compensated at the sign of the reference's joint velocity,
    as the joint laws do (``gains.coulomb_compensation``), not at the measured one's: nothing
    but the spring holds the force, and sliding under a press a joint that barely moves flips
    ``sign(q')`` by ``2 T_c`` from cycle to cycle (TIAGo++'s right arm, 1 N m per joint: 1.03 N
    RMS over the slide, 5.7 N at worst; TALOS's left arm 0.32 N; xArm 7 0.33 N; now 0.11, 0.08
    and 0.18 N; TIAGo++ without any friction 0.11 N).  A joint the reference leaves at rest (or
    moves slower) keeps the measured sign: compensated at the resting reference (zero), the
    joints' static friction held TALOS's press at 5.7 of its 10 N until the slide moved them."""

    name = "impedance"
    coulomb_band = REFERENCE_FRICTION_SPEED

    def _contact_estimate(self) -> tuple[float, str]:
        """``|F|`` of the force part of ``F = K e + D e' + m_d``: with the exact model the
        task obeys ``Lambda (r'' - a*) = F - m``, so at rest (a contact holding the tool) the
        contact force is ``F`` (module docstring); moving in free space ``F`` is the model's
        error, ``Lambda (r'' - a*)``."""
        return math.hypot(*self.force[:3]), "the impedance's estimate"

    def _task_terms(self, dt: float) -> None:
        g = self._now
        _impedance_terms(self.ref_a, self.ref_v, self.velocity, self.error, g["stiffness"],
                         g["damping"], self.wrench_now, self.acc, self.force)


class HybridForcePosition(_ForceLaw):
    """Raibert-Craig hybrid force/position control (module docstring).

    The Coulomb friction of a joint the reference moves (faster than ``coulomb_band``) is
    compensated at the sign of the reference's joint velocity until the joint breaks away
    (moves faster than ``coulomb_moving``), then at its measured sign until the reference
    rests on it again.  At rest ``sign(q')`` is the sign of MuJoCo's creep (1e-5 rad/s), and
    compensated that way a joint the slide is to move stays stuck: TALOS's three wrist joints
    held 25-29 % of the guarded slide, the others made the motion in the null space, 3.8 N
    excursions (0.50 N RMS; TIAGo++ 0.57 N).  Moving, the friction is the motion's, not the
    reference's: on a redundant arm the two differ by the null-space motion, which the probe's
    sliding friction (2 N along the slide, fed forward by nothing) drives, ``N M^-1 J^T f_t``
    = 17-20 rad/s^2 on the xArm 7, held by ``k_null`` at ~0.15 rad/s; its joint 1 turns back in
    the slide's last 0.4 s while ``J^# r_d'`` still goes forward, and compensated at the
    reference's sign there it stuck (20 % of the slide against 3 %): MuJoCo's friction held it
    at 0.64-0.88 N m where the joint-torque estimate takes ``T_c sign(q')``, 1.2 N RMS off
    (0.003 N).  With the latch TALOS 0.047, TIAGo++ 0.026, the xArm 7 0.092 N RMS (estimate
    0.003 N), guarded; impedance keeps the reference's sign throughout (``Impedance``).

    **The free-space push at a lowered bound** (issue 41.5, the guarded approach): past the
    bound the force integral unwinds (``_hybrid_terms``), so the push along the force axis is
    what holds the tool at the bound, ``Lambda D_f v`` and the model's errors, not the push the
    integral wound at a faster bound before (5 cm/s: ``k_i I`` = 36 N on the upside-down UR5,
    51 N in all, held back by the ``10 D_f`` braking at 0.9 cm/s).  Applied as the task force
    ``J^T F`` that push also moves the position axes, through the off-diagonal terms of
    ``Lambda^-1`` (the position loop holds them with a static error, 1.5 mm and 15 rad/s^2 of
    ``a*`` there); it drops to ``m_d`` at the contact, and the position axes' jolt (4 m/s^2,
    11 rad/s^2 in one cycle) slid the probe along the UR5's wall, whose friction cone, in
    MuJoCo's soft contact, lifted the normal force from 1.3 to 15-18.7 N in one step.  Unwound,
    the push was 6.5 N when the probe touched: 18.7 -> 11.7 N.  An integral unwound below zero
    (a push below ``m_d + k_f m_d``) is kept at the contact, one wound above it dropped.

    **The contact's wrench fed forward** (``feed_measured``, issue 41.5): along the position
    axes ``F = m``, the measured wrench (``set_measured_wrench``; nothing without one), the
    inverse dynamics with contact force and moment measurements of CNSV99: with the exact model
    the task then obeys ``Lambda (r'' - a*) = -(I - S) m``, so the probe's sliding friction and
    the contact's moments at the tool origin drive neither the position axes nor, through
    ``M^-1 J^T m``, a redundant arm's null space (which ``k_null`` only damps).  That drive was
    the rest of the xArm 7's and TIAGo Pro's errors: guarded, 10 N, RMS over the slide, xArm 7
    table 0.097 -> 0.011 N (peak 15.8 -> 14.1 N: at the touch the contact's moments drove its
    null space; estimate 0.041 -> 0.0008 N), its wall 0.420 -> 0.002 N, TIAGo Pro's table
    0.132 -> 0.004 N (joint 2 stays 0.11 rad above its lower limit), its wall 0.217 -> 0.006 N; TALOS
    0.047 -> 0.002 N (at the measured sign too: 0.004 N).  Tried and not kept: the
    inertia-weighted ``J^# = M^-1 J^T (J M^-1 J^T)^-1`` and the dynamically consistent null
    space (Khatib's operational-space form), which cancels the drive's null-space share only
    through the task's feedback: TIAGo Pro's wall 0.095 N, the xArm 7's 0.316 N, but TALOS's
    wrist joints stuck (0.559 N, 4.5 N at worst); with the feed-forward as well, TIAGo Pro's
    wall 0.097 N.  And a joint breaks away (``moved``) only moving the reference's way: a
    jolt the other way at the slide's start (the step of the compensation, up to ``2 T_c``)
    latched TIAGo Pro's joint 6 at its measured sign, the sign of the creep, and it stuck for
    the slide's first 0.7 s, then slipped at 0.77 rad/s (14 cycles lost with the
    feed-forward; without it 0.217 N either way)."""

    name = "hybrid_force_position"
    coulomb_band = REFERENCE_FRICTION_SPEED
    coulomb_moving = REFERENCE_FRICTION_SPEED
    #: the measured wrench (``set_measured_wrench``) fed forward along the position axes
    feed_measured = True

    def _task_terms(self, dt: float) -> None:
        g, r = self.gains, self._now
        _hybrid_terms(self.ref_a, self.ref_v, self.velocity, self.error, r["kp"], r["kd"],
                      g["selection"], r["force_p"], r["force_i"], r["force_damping"],
                      r["velocity_limit"], self.wrench_now, self.wrench_measured, dt,
                      self.integral, self.touching, self.acc, self.force,
                      1.0 if self.feed_measured and self.measured else 0.0)


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
        r = self._now
        _admittance_terms(self.ref_a, self.ref_v, self.velocity, self.error, r["mass"],
                          r["damping"], r["stiffness"], r["kp"], r["kd"], r["force_i"],
                          r["velocity_limit"], self.wrench_now, self.wrench_measured, dt,
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


def contact_note(law: Any) -> str:
    """``"in contact (9.76 N, measured)"`` when ``law`` is a force law whose contact force
    (``_ForceLaw.contact``) is past ``CONTACT_REPORT``, else ``""``: what a trajectory goal's
    result adds to a tolerance violation or a success (``GoalExecution.contact``)."""
    contact = getattr(law, "contact", None)
    if contact is None:
        return ""
    f, what = contact()
    return f"in contact ({f:.3g} N, {what})" if f > CONTACT_REPORT else ""
