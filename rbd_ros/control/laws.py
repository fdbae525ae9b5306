"""Torque control laws of 003 chapter 6, over the core's jitted kernels.

ROS-free.  Every law is an object with one entry point::

    law = make_law("computed_torque", robot, gains)        # or ComputedTorque(robot, gains)
    tau = law.compute(t, q, qd, ref)                       # ref: a Reference

``compute`` writes into preallocated arrays and returns ``law.tau`` (overwritten by the next
call).  Torques are in N m (N for prismatic joints) at the joints — the torque form of the
book's laws, whose printed form is the motor-voltage one of (6.17); the MuJoCo bridge's motor
mode is where voltages live.  Conventions and guarantees shared by all laws:

* errors are ``e = q_d - q``, ``e' = q_d' - q'`` (003 (6.20), (6.42)); the book prints
  (6.18) and (6.28) with ``K_p (q - q_d)``, a sign slip: its own expansion (6.19) uses
  ``K_p (q_d - q)``, and only that sign is stable (misprint 003 (6.18), docs/references.md);
* the damping term of the joint PD laws acts on ``e' = q_d' - q'``; for a set point
  (``q_d' = 0``) that is exactly the book's ``-K_v q'`` of (6.18)/(6.28)/(6.34);
* torques are saturated at the effort limits (the smaller of the model's and the law's
  ``effort_limit`` gain); ``law.saturated`` marks the clipped joints;
* a NaN/Inf in the state or the reference, or a non-finite result (e.g. a singular
  Jacobian), gives **zero torque** and ``law.fault = True`` with ``law.status`` saying why;
  nothing non-finite is ever returned;
* gains can be replaced at any time with ``law.set_gains(...)`` (validated, atomic).

The model-based laws (computed torque, resolved acceleration) call the recursive Newton-Euler
kernel once: ``M qdd* + h + g`` is RNEA at ``(q, q', qdd*)``; with ``model_actuators`` the
kernel also adds the actuator terms of (6.16)-(6.17) (armature ``G^T J_M G qdd*``, viscous
``D q'``, Coulomb), i.e. the ``M-hat`` and ``D-hat`` of (6.41)/(6.48) include the drive.
"""
from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
from numba import njit

from rbd_ros.algorithm.actuators import armature, coulomb, viscous
from rbd_ros.algorithm.crba import crba
from rbd_ros.algorithm.forward_dynamics import cholesky_solve_inplace
from rbd_ros.algorithm.kinematics import frame_jacobian, jacobian_dot_times_qd, tool_pose
from rbd_ros.algorithm.layout import COUL
from rbd_ros.algorithm.rnea import gravity, rnea_full
from rbd_ros.control.gains import (
    DEFAULT_BANDWIDTH,
    DEFAULT_DAMPING_RATIO,
    DEFAULT_RATE,
    FRICTION_BAND,
    LAW_GAINS,
    LAWS,
    load_gains,
    mass_matrix_checked,
    model_gains,
    validate_gain,
    validate_gains,
)
from rbd_ros.lie.so3 import orientation_error_into
from rbd_ros.model import MdhModel
from rbd_ros.model.data import empty_workspace, pack_model

OK, BAD_INPUT, BAD_OUTPUT = 0, 1, 2
_STATUS = {OK: "ok", BAD_INPUT: "non-finite state or reference: zero torque",
           BAD_OUTPUT: "non-finite torque (singular model or Jacobian?): zero torque"}


class Reference:
    """What a law tracks, preallocated: joint ``q, qd, qdd`` (n) and task pose ``T`` (4x4),
    twist ``v = [v; w]`` and its derivative ``a`` (6, world frame, tool origin).

    ``joint`` / ``task`` tell which parts are valid.  Joint-space laws need the joint part;
    task-space laws use the task part, or map the joint part through the kinematics when only
    that is given (``r_d = fk(q_d)``, ``r_d' = J q_d'``, ``r_d'' = J q_d'' + J' q_d'``).
    ``effort`` (n, N m; ``feedforward`` True when set): a torque the trajectory asks for on top
    of the law (a FollowJointTrajectory goal's efforts, issue 37), added before the
    saturation by computed torque and PD + gravity (``follow_trajectory.FEED_FORWARD_LAWS``;
    the loop refuses such goals for the other laws); zero otherwise."""

    def __init__(self, dof: int) -> None:
        self.q = np.zeros(dof)
        self.qd = np.zeros(dof)
        self.qdd = np.zeros(dof)
        self.T = np.eye(4)
        self.v = np.zeros(6)
        self.a = np.zeros(6)
        self.effort = np.zeros(dof)
        self.joint = True
        self.task = False
        self.feedforward = False

    def set_joint(self, q: np.ndarray, qd: np.ndarray | None = None, qdd: np.ndarray | None = None) -> "Reference":
        _fill((self.q, self.qd, self.qdd), (q, qd, qdd))
        self.joint, self.task = True, False
        return self

    def set_task(self, T: np.ndarray, v: np.ndarray | None = None, a: np.ndarray | None = None) -> "Reference":
        _fill((self.T, self.v, self.a), (T, v, a))
        self.joint, self.task = False, True
        return self


def _fill(into: tuple[np.ndarray, ...], values: tuple[np.ndarray | None, ...]) -> None:
    """Each ``into[i][:] = values[i]``, zero where a value is None (a reference's rates)."""
    for dst, x in zip(into, values):
        dst[:] = 0.0 if x is None else x


# ---- jitted pieces (one call per cycle for the joint-space laws) --------------------------------
@njit(cache=True)
def all_finite(x: np.ndarray) -> bool:  # pragma: no cover - jitted
    for v in x.ravel():
        if not math.isfinite(v):
            return False
    return True


@njit(cache=True)
def _joint_inputs_ok(q: np.ndarray, qd: np.ndarray, qr: np.ndarray, qdr: np.ndarray,
                     qddr: np.ndarray) -> bool:  # pragma: no cover - jitted
    return all_finite(q) and all_finite(qd) and all_finite(qr) and all_finite(qdr) and all_finite(qddr)


@njit(cache=True)
def finish_torque(tau: np.ndarray, lim: np.ndarray, sat: np.ndarray, code: int) -> int:  # pragma: no cover
    """Saturate at ``+-lim``; a non-finite entry (or ``code != OK``) zeroes everything."""
    n = tau.shape[0]
    if code == OK:
        for i in range(n):
            if not math.isfinite(tau[i]):
                code = BAD_OUTPUT
                break
    if code != OK:
        for i in range(n):
            tau[i] = 0.0
            sat[i] = False
        return code
    for i in range(n):
        if tau[i] > lim[i]:
            tau[i] = lim[i]
            sat[i] = True
        elif tau[i] < -lim[i]:
            tau[i] = -lim[i]
            sat[i] = True
        else:
            sat[i] = False
    return OK


@njit(cache=True)
def _schedule_gains(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, kp: np.ndarray, kd: np.ndarray,
                    damping: np.ndarray, dt: float, cap_kp: bool, M: np.ndarray, x: np.ndarray,
                    kp_out: np.ndarray, kd_out: np.ndarray) -> None:  # pragma: no cover - jitted
    """The damping the sampled loop holds at ``q`` (``gains`` module docstring, "scheduled"):
    ``kd_j(q) = min(kd_j, 1 / (dt sum_i |(M^-1)_ij|))``; with ``cap_kp`` also
    ``kp_j(q) = min(kp_j, (kd_j(q) + D_j) / dt)``.  A non-finite ``q`` leaves the gains as given
    (the law's input check then faults)."""
    n = q.shape[0]
    for j in range(n):
        kp_out[j] = kp[j]
        kd_out[j] = kd[j]
    crba(mp, ws, q, M)
    for i in range(n):  # M + G^T J_m G (003 (6.17))
        M[i, i] += armature(mp, i)
    for j in range(n):  # M = L L^T, L in the lower triangle
        d = M[j, j]
        for k in range(j):
            d -= M[j, k] * M[j, k]
        if not d > 0.0:
            return
        d = math.sqrt(d)
        M[j, j] = d
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= M[i, k] * M[j, k]
            M[i, j] = s / d
    for j in range(n):
        for i in range(n):  # x = e_j
            x[i] = 0.0
        x[j] = 1.0
        for i in range(n):  # L y = e_j
            s = x[i]
            for k in range(i):
                s -= M[i, k] * x[k]
            x[i] = s / M[i, i]
        for i in range(n - 1, -1, -1):  # L^T x = y: x = column j of M^-1
            s = x[i]
            for k in range(i + 1, n):
                s -= M[k, i] * x[k]
            x[i] = s / M[i, i]
        col = 0.0
        for i in range(n):  # ||M^-1 e_j||_1
            col += abs(x[i])
        cap = 1.0 / (dt * col)
        if kd_out[j] > cap:  # every mode of dt M^-1 K_v inside the disc of radius 1
            kd_out[j] = cap
        if cap_kp and kp_out[j] * dt > kd_out[j] + damping[j]:  # a/2 < b/2 of Jury's test
            kp_out[j] = (kd_out[j] + damping[j]) / dt


@njit(cache=True)
def _pd_kernel(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, qr: np.ndarray,
               qdr: np.ndarray, qddr: np.ndarray, kp: np.ndarray, kd: np.ndarray, with_gravity: bool,
               ff: np.ndarray, lim: np.ndarray, e: np.ndarray, tau: np.ndarray,
               sat: np.ndarray) -> int:  # pragma: no cover
    """(6.18) ``tau = K_p e + K_v e'``; with ``with_gravity`` (6.34) ``+ g(q)``; ``+ ff`` (the
    trajectory's effort feed-forward, zeros when none)."""
    if not _joint_inputs_ok(q, qd, qr, qdr, qddr):
        return finish_torque(tau, lim, sat, BAD_INPUT)
    if with_gravity:
        gravity(mp, ws, q, tau)
    else:
        tau[:] = 0.0
    for i in range(q.shape[0]):
        e[i] = qr[i] - q[i]
        tau[i] += kp[i] * e[i] + kd[i] * (qdr[i] - qd[i]) + ff[i]  # (6.34) + tau_ff
    return finish_torque(tau, lim, sat, OK)


@njit(cache=True)
def _pid_kernel(q: np.ndarray, qd: np.ndarray, qr: np.ndarray, qdr: np.ndarray, qddr: np.ndarray,
                kp: np.ndarray, kd: np.ndarray, ki: np.ndarray, iclamp: np.ndarray, dt: float,
                iterm: np.ndarray, lim: np.ndarray, e: np.ndarray, tau: np.ndarray,
                sat: np.ndarray) -> int:  # pragma: no cover
    """(6.28) ``tau = K_p e + K_v e' + int K_i e dt`` with the integral term clamped."""
    if not _joint_inputs_ok(q, qd, qr, qdr, qddr):
        return finish_torque(tau, lim, sat, BAD_INPUT)
    for i in range(q.shape[0]):
        e[i] = qr[i] - q[i]
        it = iterm[i] + ki[i] * e[i] * dt
        if it > iclamp[i]:
            it = iclamp[i]
        elif it < -iclamp[i]:
            it = -iclamp[i]
        iterm[i] = it
        tau[i] = kp[i] * e[i] + kd[i] * (qdr[i] - qd[i]) + it
    return finish_torque(tau, lim, sat, OK)


@njit(cache=True)
def _coulomb_toward(mp: np.ndarray, i: int, qdr: float, kp: float, kd: float, e: float,
                    band: float) -> float:  # pragma: no cover - jitted
    """The Coulomb compensation ``T_c sat((q_d' + (kp/kd) e) / band)``: at the reference
    velocity while the reference moves, and toward the reference when it rests with an error
    (``q_d' + (kp/kd) e`` is the velocity the feedback asks for); linear over ``band``, so it
    fades without a step at zero velocity.  A joint held by its friction stops within
    ``band kd / kp`` of the reference (``gains.friction_dead_band``)."""
    v = qdr + (kp / kd) * e if kd > 0.0 else qdr
    x = v / band
    if x > 1.0:
        x = 1.0
    elif x < -1.0:
        x = -1.0
    return mp[i, COUL] * x


@njit(cache=True)
def _computed_torque_kernel(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray,
                            qr: np.ndarray, qdr: np.ndarray, qddr: np.ndarray, kp: np.ndarray,
                            kd: np.ndarray, actuators: bool, vref: np.ndarray, wrench: np.ndarray,
                            band: float, ff: np.ndarray, lim: np.ndarray, e: np.ndarray,
                            qdd_star: np.ndarray, tau: np.ndarray, sat: np.ndarray) -> int:  # pragma: no cover
    """(6.41)-(6.42) in RNEA form: ``tau = RNEA(q, q', qdd_d + K_v e' + K_p e)``, ``+ ff`` (the
    trajectory's effort feed-forward, zeros when none)."""
    if not _joint_inputs_ok(q, qd, qr, qdr, qddr):
        return finish_torque(tau, lim, sat, BAD_INPUT)
    for i in range(q.shape[0]):
        e[i] = qr[i] - q[i]
        qdd_star[i] = qddr[i] + kd[i] * (qdr[i] - qd[i]) + kp[i] * e[i]
    rnea_full(mp, ws, q, qd, qdd_star, wrench, False, actuators, tau)
    if actuators:  # Coulomb at q_d' + (kp/kd) e (and stiff viscous, vref = 1, at q_d')
        for i in range(q.shape[0]):
            tau[i] += (_coulomb_toward(mp, i, qdr[i], kp[i], kd[i], e[i], band)
                       - coulomb(mp, i, qd[i]) + vref[i] * viscous(mp, i, qdr[i] - qd[i]))
    for i in range(q.shape[0]):  # + tau_ff
        tau[i] += ff[i]
    return finish_torque(tau, lim, sat, OK)


@njit(cache=True)
def _task_pose_jacobian(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, T: np.ndarray,
                        J: np.ndarray) -> None:  # pragma: no cover - jitted
    """Tool pose and tool Jacobian from one forward-kinematics pass."""
    tool_pose(mp, ws, q, T)
    frame_jacobian(mp, ws, q.shape[0], q.shape[0] + 1, J)


@njit(cache=True)
def _pose_error(Td: np.ndarray, T: np.ndarray, e: np.ndarray) -> None:  # pragma: no cover - jitted
    """``e = [p_d - p; log(R_d R^T)]`` (the task laws' pose error)."""
    for r in range(3):
        e[r] = Td[r, 3] - T[r, 3]
    orientation_error_into(Td, T, e, 3)


@njit(cache=True)
def _task_reference_from_joint(mp: np.ndarray, ws: np.ndarray, qr: np.ndarray, qdr: np.ndarray,
                               qddr: np.ndarray, Jr: np.ndarray, T: np.ndarray, v: np.ndarray,
                               a: np.ndarray) -> None:  # pragma: no cover - jitted
    """``r_d = fk(q_d)``, ``r_d' = J q_d'``, ``r_d'' = J q_d'' + J' q_d'``."""
    _task_pose_jacobian(mp, ws, qr, T, Jr)
    jacobian_dot_times_qd(mp, ws, qr, qdr, a)
    for r in range(6):
        sv = 0.0
        sa = 0.0
        for j in range(qr.shape[0]):
            sv += Jr[r, j] * qdr[j]
            sa += Jr[r, j] * qddr[j]
        v[r] = sv
        a[r] += sa


@njit(cache=True)
def _task_pd_kernel(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray, J: np.ndarray,
                    e: np.ndarray, qdr: np.ndarray, kp: np.ndarray, kd: np.ndarray, actuators: bool,
                    band: float, lim: np.ndarray, tau: np.ndarray,
                    sat: np.ndarray) -> int:  # pragma: no cover - jitted
    """(6.47) ``tau = J^T K_p e + K_v (q_d' - q') + g(q)`` (``q_d' = 0``: the book's ``-K_v q'``);
    with ``actuators`` the drives' friction (6.16) fed forward: ``D q_d'`` and ``T_c`` toward
    the velocity the feedback asks for, ``q_d' + (J^T K_p e)_j / (kd_j + D_j)``
    (``_coulomb_toward``; ``D_j`` damps with ``kd_j``, alone where ``kd_j = 0``)."""
    gravity(mp, ws, q, tau)
    for j in range(q.shape[0]):
        s = 0.0
        for r in range(6):
            s += J[r, j] * kp[r] * e[r]  # (J^T K_p e)_j
        tau[j] += s + kd[j] * (qdr[j] - qd[j])
        if actuators:  # v = q_d' + s / (kd + D): _coulomb_toward with "kp e" = s
            tau[j] += viscous(mp, j, qdr[j])
            if coulomb(mp, j, 1.0) < lim[j]:  # a drive its friction holds at any command: not pushed
                damping = kd[j] + viscous(mp, j, 1.0)
                tau[j] += _coulomb_toward(mp, j, qdr[j], s, damping, 1.0, band)
    return finish_torque(tau, lim, sat, OK)


@njit(cache=True)
def _dls_joint_velocity(J: np.ndarray, v: np.ndarray, lam2: float, A: np.ndarray, y: np.ndarray,
                        out: np.ndarray) -> None:  # pragma: no cover - jitted
    """``out = J^T (J J^T + lam2 I)^{-1} v``: joint velocities of the task twist ``v``."""
    for r in range(6):
        y[r] = v[r]
    if not dls_pinv_times(J, lam2, A, y, out):
        out[:] = 0.0


@njit(cache=True)
def dls_pinv_times(J: np.ndarray, lam2: float, A: np.ndarray, y: np.ndarray,
                   out: np.ndarray) -> bool:  # pragma: no cover - jitted
    """``out = J^# y = J^T (J J^T + lam2 I)^{-1} y``, the damped pseudo-inverse of the 6 x n
    ``J`` times ``y`` (``y`` overwritten, ``A`` scratch); False if the solve failed (``out``
    untouched)."""
    if not dls_solve(J, lam2, A, y):
        return False
    for j in range(J.shape[1]):
        s = 0.0
        for r in range(6):
            s += J[r, j] * y[r]
        out[j] = s
    return True


@njit(cache=True)
def dls_solve(J: np.ndarray, lam2: float, A: np.ndarray, y: np.ndarray) -> bool:  # pragma: no cover
    """``y <- (J J^T + lam2 I)^{-1} y`` (Cholesky of the core)."""
    n = J.shape[1]
    for r in range(6):
        for c in range(r + 1):
            s = 0.0
            for j in range(n):
                s += J[r, j] * J[c, j]
            A[r, c] = s
            A[c, r] = s
        A[r, r] += lam2
    return cholesky_solve_inplace(A, 0, 6, y)


@njit(cache=True)
def _resolved_acceleration_kernel(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray,
                                  J: np.ndarray, e: np.ndarray, vr: np.ndarray, ar: np.ndarray,
                                  kp: np.ndarray, kd: np.ndarray, knull: np.ndarray, kpnull: np.ndarray,
                                  posture: bool, qr: np.ndarray, qdr: np.ndarray, qddr: np.ndarray, lam2: float,
                                  actuators: bool, vref: np.ndarray, wrench: np.ndarray, band: float, A: np.ndarray,
                                  y: np.ndarray, jdqd: np.ndarray, z: np.ndarray,
                                  qdd_star: np.ndarray, lim: np.ndarray, tau: np.ndarray,
                                  sat: np.ndarray) -> int:  # pragma: no cover - jitted
    """(6.48)-(6.49) in RNEA form (see ``ResolvedAcceleration``)."""
    n = q.shape[0]
    jacobian_dot_times_qd(mp, ws, q, qd, jdqd)
    for r in range(6):
        xd = 0.0
        for j in range(n):
            xd += J[r, j] * qd[j]
        y[r] = ar[r] + kd[r] * (vr[r] - xd) + kp[r] * e[r] - jdqd[r]  # r''* - J' q'
        if kp[r] == 0.0 and kd[r] == 0.0:  # a free axis: not tracked, out of the solve
            y[r] = 0.0
            for j in range(n):
                J[r, j] = 0.0
    if not dls_pinv_times(J, lam2, A, y, qdd_star):  # qdd* = J^# (r''* - J' q')
        return finish_torque(tau, lim, sat, BAD_OUTPUT)
    if n > 6:  # (I - J^# J) z, z the null-space (posture) acceleration
        for j in range(n):
            z[j] = -knull[j] * qd[j]
            if posture:
                z[j] += qddr[j] + knull[j] * qdr[j] + kpnull[j] * (qr[j] - q[j])
        for r in range(6):
            s = 0.0
            for j in range(n):
                s += J[r, j] * z[j]
            y[r] = s
        if not dls_pinv_times(J, lam2, A, y, tau):  # tau as scratch: J^# J z
            return finish_torque(tau, lim, sat, BAD_OUTPUT)
        for j in range(n):
            qdd_star[j] += z[j] - tau[j]
    rnea_full(mp, ws, q, qd, qdd_star, wrench, False, actuators, tau)
    if actuators and posture:  # friction toward the joint reference, as in computed torque
        for i in range(n):
            tau[i] += (_coulomb_toward(mp, i, qdr[i], kpnull[i], knull[i], qr[i] - q[i], band)
                       - coulomb(mp, i, qd[i]) + vref[i] * viscous(mp, i, qdr[i] - qd[i]))
    return finish_torque(tau, lim, sat, OK)


# ---- the laws -------------------------------------------------------------------------------------
class ControlLaw:
    """Common part: model, workspace, gains, limits, outputs, fault handling.

    ``robot`` is an ``rbd_ros.Robot`` or an ``MdhModel``.  ``gains`` maps gain names
    (``rbd_ros.control.gains``) to scalars or per-axis lists; missing ones come from
    ``config/controllers.yaml`` for this robot, and the rest from the model
    (``gains.model_gains`` at ``q0`` for ``bandwidth`` Hz, ``damping_ratio`` and the control
    ``rate`` Hz, over the configurations ``poses`` the arm will visit when known;
    ``gain_source`` and ``gain_notes`` tell what was chosen and why; the model's ``kd`` is
    scheduled with the inertia each cycle, ``schedule``).
    ``effort_limit`` (n, optional) tightens the
    model's limits.  Outputs after ``compute``: ``tau``, ``error`` (joint laws: ``q_d - q``;
    task laws: ``[p_d - p; orientation error]``), ``saturated``, ``fault``, ``status``.
    """

    gain_design = staticmethod(model_gains)  # (law, model, q0, *design, poses) -> (gains, notes)

    name = ""
    task_space = False

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, *,
                 model_actuators: bool = True, gains_file: str | None = None,
                 q0: np.ndarray | None = None, bandwidth: float = DEFAULT_BANDWIDTH,
                 damping_ratio: float = DEFAULT_DAMPING_RATIO, rate: float = DEFAULT_RATE,
                 poses: np.ndarray | None = None) -> None:
        model = robot if isinstance(robot, MdhModel) else robot.model
        self.model: MdhModel = model
        self.dof = n = model.dof
        self.joint_names = tuple(model.joint_names)
        self.mp = pack_model(model)
        self.ws = empty_workspace(n)
        self.model_actuators = bool(model_actuators)
        self.tau = np.zeros(n)
        self.error = np.zeros(6 if self.task_space else n)
        self.saturated = np.zeros(n, dtype=np.bool_)
        self.fault = False
        self.status = "ok"
        self._wrench = np.zeros(6)
        self._no_effort = np.zeros(n)  # the feed-forward of the laws that add none
        self._model_limit = np.where(np.isfinite(model.effort_limit), model.effort_limit, np.inf)
        self.limit = self._model_limit.copy()
        self.gains: dict[str, np.ndarray] = {}
        self._design = (float(bandwidth), float(damping_ratio), float(rate))
        self._poses = None if poses is None else np.asarray(poses, dtype=float)
        file_gains = load_gains(self.name, robot_names=[model.name], path=gains_file)
        given = dict(gains or {})
        #: where each gain came from: "given" (argument), "file" (gains YAML) or "model"
        self.gain_source = {k: "given" if k in given else "file" if k in file_gains else "model"
                            for k in LAW_GAINS[self.name]}
        #: the caps ``model_gains`` applied (empty when no gain comes from the model)
        self.gain_notes: list[str] = []
        #: the model's damping ``kd`` is scheduled per cycle (``_schedule_gains``; the rule in
        #: ``rbd_ros.control.gains``): on for the laws with joint damping when ``kd`` comes
        #: from the model; ``kp`` of the joint laws too when it comes from the model
        self._schedule = self.name in SCHEDULED_LAWS and self.gain_source.get("kd") == "model"
        self._schedule_kp = self._schedule and not self.task_space and self.gain_source.get("kp") == "model"
        self._damping = np.abs(np.asarray(model.viscous, dtype=float))
        self._dt = 1.0 / self._design[2]
        self._Mw = np.zeros((n, n))
        self._xw = np.zeros(n)
        self._kp_now = np.zeros(n)
        self._kd_now = np.zeros(n)
        raw = {**self._model_gains(q0), **file_gains, **given}
        self.set_gains(raw)

    def _model_gains(self, q0: np.ndarray | None) -> dict[str, np.ndarray]:
        """The gains nobody gave, from the model at ``q0`` (``gain_design``: ``gains.model_gains``,
        the force laws' ``force_model_gains``)."""
        todo = [k for k, src in self.gain_source.items() if src == "model"]
        if not todo:
            return {}
        derived, self.gain_notes = self.gain_design(self.name, self.model, q0, *self._design,
                                                    poses=self._poses)
        return {k: derived[k] for k in todo}

    def derive_gains(self, q0: np.ndarray) -> dict[str, np.ndarray]:
        """Re-derive the model's gains at the start pose ``q0`` (the node calls this with the
        first measured state) and apply them; returns what changed."""
        new = self._model_gains(np.asarray(q0, dtype=float))
        if new:
            self.set_gains(new)
        return {k: self.gains[k] for k in new}

    # ---- gains --------------------------------------------------------------------------------
    def set_gains(self, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        """Validate and apply gains (all or nothing); ``ValueError`` says what is wrong."""
        new = {**(gains or {}), **kw}
        if not self.gains:  # first call: the complete set
            checked = validate_gains(self.name, new, self.dof)
        else:
            checked = {k: validate_gain(self.name, k, v, self.dof) for k, v in new.items()}
        for k, v in checked.items():
            self.gains[k] = np.ascontiguousarray(v, dtype=float)
        extra = self.gains.get("effort_limit")
        self.limit = self._model_limit.copy() if extra is None else np.minimum(self._model_limit, extra)
        self._use_gains()

    def _use_gains(self) -> None:
        """The arrays the kernels read: the scheduled copies or the gains themselves."""
        g = self.gains
        # (None for a law without that gain, whose kernel never reads it: an array for the checker)
        self._kd_use = self._kd_now if self._schedule else cast(np.ndarray, g.get("kd"))
        self._kp_use = self._kp_now if self._schedule and self._schedule_kp else cast(np.ndarray, g.get("kp"))

    @property
    def schedule(self) -> bool:
        """Whether ``kd`` (and the joint laws' ``kp`` when from the model) is scheduled with
        the inertia each cycle; settable (False: the gains as they are)."""
        return self._schedule

    @schedule.setter
    def schedule(self, on: bool) -> None:
        self._schedule = bool(on) and self.name in SCHEDULED_LAWS
        self._use_gains()

    def scheduled_gains(self, q: np.ndarray) -> None:
        """Fill the gains this cycle uses at ``q`` (``_kp_use``, ``_kd_use``): the model's
        ``kd`` (and joint ``kp``) capped by ``_schedule_gains`` when ``schedule`` is on."""
        if self._schedule:
            g = self.gains
            _schedule_gains(self.mp, self.ws, q, self._kp_now if self.task_space else g["kp"], g["kd"],
                            self._damping, self._dt, self._schedule_kp, self._Mw, self._xw,
                            self._kp_now, self._kd_now)

    def reset(self) -> None:
        """Forget internal state (integral term, last time)."""

    # ---- cycle ---------------------------------------------------------------------------------
    def compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Reference) -> np.ndarray:
        """Torques for measured ``q, qd`` at time ``t`` tracking ``ref``; returns ``self.tau``."""
        code = self._compute(float(t), q, qd, ref)
        self.fault = code != OK
        self.status = _STATUS[code]
        return self.tau

    def _compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Reference) -> int:
        raise NotImplementedError


class PD(ControlLaw):
    """Independent joint PD, 003 (6.18) in torque form: ``tau = K_p (q_d - q) + K_v (q_d' - q')``.

    No gravity compensation: at rest the arm settles where ``K_p e = g(q)``; linearising
    ``g`` about ``q_d`` (``C = dg/dq``) gives the offset of (6.27),
    ``e_inf = (K_p + C)^{-1} g(q_d)`` (torque form, ``e = q_d - q``)."""

    name = "pd"
    gravity_compensation = False

    def _compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Reference) -> int:
        self.scheduled_gains(q)
        return _pd_kernel(self.mp, self.ws, q, qd, ref.q, ref.qd, ref.qdd, self._kp_use, self._kd_use,
                          self.gravity_compensation, ref.effort if self.gravity_compensation else self._no_effort,
                          self.limit, self.error, self.tau, self.saturated)


class PDGravity(PD):
    """PD with gravity compensation, 003 (6.34) in torque form:
    ``tau = K_p (q_d - q) + K_v (q_d' - q') + g(q)``.  For a set point the Lyapunov function
    (6.36) decreases along motions (6.39) (printed without its minus sign, misprint 003 (6.39):
    ``V' = -q'^T K_v q' <= 0``), so ``q -> q_d`` with no offset."""

    name = "pd_gravity"
    gravity_compensation = True


class PID(ControlLaw):
    """Independent joint PID, 003 (6.28) in torque form:
    ``tau = K_p e + K_v e' + int_0^t K_i e dt`` with ``e = q_d - q``; by (6.29)-(6.33) it has
    no steady-state offset under gravity (near ``q_d``).

    Anti-windup: the integral *term* ``int K_i e dt`` (N m, so a gain change causes no bump)
    is clamped to ``+-i_clamp`` every cycle.  ``dt`` is the time since the previous call; the
    first call, a time going backwards, a gap longer than ``max_dt`` (s) or a faulty input
    integrates nothing."""

    name = "pid"
    max_dt = 0.1

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        self.integral = np.zeros(robot.dof if hasattr(robot, "dof") else robot.model.dof)
        self._t_prev = math.nan
        super().__init__(robot, gains, **kw)

    def reset(self) -> None:
        self.integral[:] = 0.0
        self._t_prev = math.nan

    def _compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Reference) -> int:
        dt = t - self._t_prev
        if not (0.0 < dt <= self.max_dt):
            dt = 0.0
        self._t_prev = t
        g = self.gains
        self.scheduled_gains(q)
        return _pid_kernel(q, qd, ref.q, ref.qd, ref.qdd, self._kp_use, self._kd_use, g["ki"], g["i_clamp"], dt,
                           self.integral, self.limit, self.error, self.tau, self.saturated)


class ComputedTorque(ControlLaw):
    """Computed torque, 003 (6.41)-(6.42), evaluated as **one RNEA call**:
    ``tau = M(q) qdd* + h(q, q') + g(q) [+ D q' ...] = RNEA(q, q', qdd*)`` with
    ``qdd* = q_d'' + K_v (q_d' - q') + K_p (q_d - q)``.  With an exact model (6.43) the error
    obeys (6.46) ``e'' + K_v e' + K_p e = 0``; ``kp``/``kd`` are acceleration gains (1/s^2,
    1/s), critically damped for ``kd = 2 sqrt(kp)``.

    With ``model_actuators`` the drive terms of (6.16)-(6.17) are included (armature at
    ``qdd*``, viscous ``D q'`` as in (6.41)), except that the Coulomb term ``T_c sign(.)`` uses
    the *reference* velocity ``q_d'``: ``sign`` of a measured velocity near zero flips from
    cycle to cycle and the full friction torque chatters (on the PUMA 560, whose joint 1 has
    26 N m of Coulomb friction, that raises the RMS tracking error of a 4 s quintic from
    2e-5 to 7e-4 rad).  On a joint whose drive damping is *stiff* at the control rate
    (``stiff_damping``: ``D dt / m_min > 5``) the viscous term uses the reference velocity
    too, ``D q_d'``: on a light link behind a damped drive (xArm 7 joint 7: ``D = 2``
    N m s/rad on 1.4e-4 kg m^2) the velocity relaxes to ``tau / D`` within 0.07 ms, far inside
    one 1 ms control period, so the measured-velocity form and the acceleration feedback
    ``M qdd*`` both act ~15x too weakly under a held torque (0.5 rad RMS error); ``D q_d'``
    drives the joint at the reference velocity (its error then obeys
    ``M (e'' + K_v e' + K_p e) + D e' = 0``).  Elsewhere (6.46) holds as printed."""

    name = "computed_torque"

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(robot, gains, **kw)
        self.qdd_star = np.zeros(self.dof)
        self._vref = stiff_damping(self.model, kw.get("q0"), self._design[2])

    def _compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Reference) -> int:
        g = self.gains
        return _computed_torque_kernel(self.mp, self.ws, q, qd, ref.q, ref.qd, ref.qdd, g["kp"], g["kd"],
                                       self.model_actuators, self._vref, self._wrench, FRICTION_BAND,
                                       ref.effort, self.limit, self.error,
                                       self.qdd_star, self.tau, self.saturated)


class TaskSpaceLaw(ControlLaw):
    """Task-space common part: tool pose ``T``, Jacobian ``J`` (6 x n, [linear; angular],
    world), pose error ``e = [p_d - p; orientation_error(R_d, R)]`` (rotation vector, exact
    for angles below pi).  Axes the arm cannot move (e.g. z, rx, ry of a planar arm) need
    zero task gains."""

    task_space = True

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(robot, gains, **kw)
        n = self.dof
        self.T = np.eye(4)
        self.J = np.zeros((6, n))
        self.jdqd = np.zeros(6)
        self.ref_T = np.eye(4)
        self.ref_v = np.zeros(6)
        self.ref_a = np.zeros(6)
        self._Jr = np.zeros((6, n))
        self._tool = n + 1

    def task_reference(self, ref: Reference) -> None:
        """Fill ``ref_T, ref_v, ref_a`` from ``ref`` (mapping a joint reference through the
        kinematics when that is all there is)."""
        if ref.task:  # (np.copyto: ``x[:] = y`` makes a view object each cycle)
            np.copyto(self.ref_T, ref.T)
            np.copyto(self.ref_v, ref.v)
            np.copyto(self.ref_a, ref.a)
        else:
            _task_reference_from_joint(self.mp, self.ws, ref.q, ref.qd, ref.qdd, self._Jr, self.ref_T,
                                       self.ref_v, self.ref_a)

    def _task_inputs(self, q: np.ndarray, qd: np.ndarray, ref: Reference) -> bool:
        if not (all_finite(q) and all_finite(qd)):
            return False
        if ref.task:
            if not (all_finite(ref.T) and all_finite(ref.v) and all_finite(ref.a)):
                return False
        elif not _joint_inputs_ok(q, qd, ref.q, ref.qd, ref.qdd):
            return False
        self.task_reference(ref)
        _task_pose_jacobian(self.mp, self.ws, q, self.T, self.J)
        _pose_error(self.ref_T, self.T, self.error)
        return True


class TaskPD(TaskSpaceLaw):
    """Task-space PD with gravity compensation, 003 (6.47):
    ``tau = J^T(q) K_p (r_d - r) + K_v (q_d' - q') + g(q)``, ``r_d - r`` the pose error above,
    ``K_p`` task stiffness (6), ``K_v`` joint damping (n).  For a set point ``q_d' = 0`` and
    this is the book's ``- K_v q'``, stable by the argument of (6.34)-(6.39) with
    ``V = 1/2 q'^T M q' + 1/2 e^T K_p e``; for a non-singular ``J`` it settles at ``r = r_d``.
    Along a moving reference the damping acts on the velocity error, as in the joint PD laws
    (``q_d'`` is the joint reference's velocity, or ``J^# r_d'`` for a task reference; with
    ``- K_v q'`` a tool moving at ``v`` lags by about ``2 zeta v / omega``: 5 cm at 0.8 m/s and
    5 Hz).  Without feed-forward of the inertial torques the remaining lag is ``~ r_d'' /
    omega^2``.  With ``model_actuators`` the drives' friction (003 (6.16)) is fed forward,
    ``D q_d' + T_c sat((q_d' + (J^T K_p e)_j / (kd_j + D_j)) / FRICTION_BAND)`` (as computed
    torque does, ``_coulomb_toward``; the drive's ``D_j`` damps too, alone on a light joint
    whose ``kd_j`` is 0): the task stiffness a light wrist sees, ``(J^T K_p J)_jj``, is ~10
    N m/rad, so 1 N m of dry friction left TIAGo Pro's wrist 0.1 rad behind and the tool
    0.16-0.22 rad off in orientation (xArm 7, 2 N m s/rad drives: 0.53 rad); with it 2-11
    mrad.  A joint with neither damping gets ``T_c`` at ``q_d'`` only; one whose ``T_c`` is
    at least its effort limit (TALOS's gripper: 1 N m of 1 N m) none: no command moves it, and
    pushing it only held it at its limit (45 % of the tour's cycles)."""

    name = "task_pd"

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(robot, gains, **kw)
        self._qdr = np.zeros(self.dof)
        self._A = np.zeros((6, 6))
        self._y = np.zeros(6)

    def _compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Reference) -> int:
        if not self._task_inputs(q, qd, ref):
            return finish_torque(self.tau, self.limit, self.saturated, BAD_INPUT)
        if ref.task:
            _dls_joint_velocity(self.J, self.ref_v, ResolvedAcceleration.dls_damping**2, self._A,
                                self._y, self._qdr)
        else:
            np.copyto(self._qdr, ref.qd)
        self.scheduled_gains(q)  # (J is held in self.J; the kernel's gravity redoes ws)
        return _task_pd_kernel(self.mp, self.ws, q, qd, self.J, self.error, self._qdr, self.gains["kp"],
                               self._kd_use, self.model_actuators, FRICTION_BAND, self.limit, self.tau,
                               self.saturated)


class ResolvedAcceleration(TaskSpaceLaw):
    """Resolved acceleration control, 003 (6.48)-(6.49), in RNEA form:

    ``r''* = r_d'' + K_v (r_d' - J q') + K_p (r_d - r)``,
    ``qdd* = J^#(q) (r''* - J'(q, q') q')``, ``tau = RNEA(q, q', qdd*)``
    (``= M qdd* + h + g [+ D q']``).  ``J^{-1}`` of (6.48) is the damped least-squares
    inverse ``J^T (J J^T + lambda^2 I)^{-1}`` (``lambda = dls_damping``; exact to
    ``(lambda/sigma_min)^2`` away from singularities, bounded near them).  For a redundant arm
    (n > 6) the null space holds a posture: ``qdd* += (I - J^# J) z`` with
    ``z = q_d'' + k_null (q_d' - q') + kp_null (q_d - q)`` when the reference is a joint
    trajectory (mapped through the kinematics for the task), else ``z = -k_null q'`` (damping
    only).  Without it the joints of a redundant arm drift along the self-motion while the
    tool tracks (1.3 rad on arm7 over the bringup tour).  With a joint reference the
    Coulomb term uses its velocity, as in ``ComputedTorque`` (the self-motion of a
    stretched arm has so little inertia that the posture term cannot beat a chattering
    friction compensation).  With an
    exact model and ``r'' = r''*`` the task error obeys (6.46).

    An axis whose ``kp`` and ``kd`` are both zero is *free*: its row of ``J`` is left out of
    the solve (a 2-link planar arm tracks x and z only; ``config/controllers.yaml``)."""

    name = "resolved_acceleration"
    dls_damping = 1e-3

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        super().__init__(robot, gains, **kw)
        self.qdd_star = np.zeros(self.dof)
        self._vref = stiff_damping(self.model, kw.get("q0"), self._design[2])
        self._A = np.zeros((6, 6))
        self._y = np.zeros(6)
        self._z = np.zeros(self.dof)

    def _compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Reference) -> int:
        if not self._task_inputs(q, qd, ref):
            return finish_torque(self.tau, self.limit, self.saturated, BAD_INPUT)
        g = self.gains
        return _resolved_acceleration_kernel(
            self.mp, self.ws, q, qd, self.J, self.error, self.ref_v, self.ref_a, g["kp"], g["kd"],
            g["k_null"], g["kp_null"], not ref.task, ref.q, ref.qd, ref.qdd, self.dls_damping**2,
            self.model_actuators, self._vref, self._wrench, FRICTION_BAND, self._A, self._y,
            self.jdqd, self._z, self.qdd_star, self.limit, self.tau, self.saturated)


#: laws whose joint damping ``kd`` (and joint ``kp``) is scheduled with the inertia
SCHEDULED_LAWS = ("pd", "pid", "pd_gravity", "task_pd")
STIFF_DAMPING = 5.0  # D dt / m_min above which the drive damping counts as stiff


def stiff_damping(model: MdhModel, q0: np.ndarray | None, rate: float) -> np.ndarray:
    """1.0 for the joints whose drive damping ``D`` is stiff at the control ``rate``
    (``z = D dt / m_min > STIFF_DAMPING``, ``m_min = 1 / (M^-1)_ii`` with the armature at
    ``q0``: an implicit step scales the velocity the joint keeps by ``1 / (1 + z)``, so within
    one held-torque period it forgets its start), else 0.0.  Measured: xArm 7 joint 7
    (z = 14.6) needs the reference form; TIAGo's wrists (z = 2.3) track 80x better with the
    measured one (5e-5 vs 4e-3 rad RMS)."""
    from rbd_ros.robot import Robot  # lazy: the robot front, not at the controller's import

    q = np.clip(np.zeros(model.dof), model.lower, model.upper) if q0 is None else \
        np.asarray(q0, dtype=float)
    m_min = 1.0 / np.diag(mass_matrix_checked(Robot(model), q, "the model-based laws need an "
                                              "invertible mass matrix")[1])
    return (np.abs(model.viscous) / float(rate) / m_min > STIFF_DAMPING).astype(float)


#: the registry of the laws ``make_law`` builds, one entry per name of ``LAWS``, in its order:
#: this module's classes, and the force laws by name (``"module:Class"``, imported at the first
#: law built from them: ``force_laws`` extends this module's classes, so it cannot be imported
#: here; nothing registers itself on import, test/core/test_layout.py reads these names)
LAW_CLASSES: dict[str, type[ControlLaw] | str] = {
    "pd": PD,
    "pid": PID,
    "pd_gravity": PDGravity,
    "computed_torque": ComputedTorque,
    "task_pd": TaskPD,
    "resolved_acceleration": ResolvedAcceleration,
    "impedance": "rbd_ros.control.force_laws:Impedance",
    "hybrid_force_position": "rbd_ros.control.force_laws:HybridForcePosition",
    "admittance": "rbd_ros.control.force_laws:Admittance",
}
assert tuple(LAW_CLASSES) == LAWS and set(LAW_CLASSES) <= set(LAW_GAINS)


def law_class(name: str) -> type[ControlLaw]:
    """The class of the law called ``name`` (``LAW_CLASSES``; ``ValueError`` naming the laws)."""
    entry = LAW_CLASSES.get(name)
    if entry is None:
        raise ValueError(f"unknown controller type '{name}'; use one of {', '.join(LAWS)}")
    if isinstance(entry, str):
        module, cls = entry.split(":")
        return cast("type[ControlLaw]", getattr(importlib.import_module(module), cls))
    return entry


def make_law(name: str, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> ControlLaw:
    """The law called ``name`` (one of ``LAWS``) over ``robot`` (Robot or MdhModel)."""
    return law_class(name)(robot, gains, **kw)


# ---- a position command interface: no law, the reference itself ------------------------------------
@njit(cache=True)
def _pass_through_kernel(qr: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                         out: np.ndarray) -> int:  # pragma: no cover - jitted
    """``PositionPassThrough``: ``out = clip(qr, lo, hi)``; a non-finite ``qr`` leaves ``out``
    as it was (the last command) and returns ``BAD_INPUT``."""
    if not all_finite(qr):
        return BAD_INPUT
    for i in range(qr.shape[0]):
        out[i] = min(max(qr[i], lo[i]), hi[i])
    return OK


class PositionPassThrough(ControlLaw):
    """The controller node on a **position** command interface (``command_interface:
    position``): not a torque law -- the command is the reference position ``q_d(t)`` itself,
    which ros2_control's joint_trajectory_controller sends to a position interface; the drive
    closes the loop (the bridge's ``rbd_ros.sim.drives`` servo, or the vendor's on a real arm).

    ``tau`` holds positions (rad, m), not torques: ``q_d`` clipped into the joint limits.  A
    non-finite reference keeps the last command (the first measured position before any
    command; ``fault`` and ``status`` say so): to a position drive zero is a place to move
    to, not the rest a zero torque is.  No gains (``set_gains`` refuses any), no effort limit
    (the drive's), nothing saturates.  Not in ``LAWS``: the node picks it by
    ``command_interface``, whatever ``type``."""

    name = "position"

    def __init__(self, robot: Any, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        model = robot if isinstance(robot, MdhModel) else robot.model
        self.model = model
        self.dof = n = model.dof
        self.joint_names = tuple(model.joint_names)
        self.model_actuators = False
        self.tau = np.full(n, math.nan)  # no command yet: ``hold`` sets it
        self.error = np.zeros(n)
        self.saturated = np.zeros(n, dtype=np.bool_)
        self.fault, self.status = False, "ok"
        self.limit = np.full(n, np.inf)
        self.gains, self.gain_source, self.gain_notes = {}, {}, []
        self._schedule = self._schedule_kp = False
        self._lo = np.asarray(model.lower, dtype=float).copy()
        self._hi = np.asarray(model.upper, dtype=float).copy()
        self.set_gains(gains)

    def set_gains(self, gains: Mapping[str, Any] | None = None, **kw: Any) -> None:
        new = {**(gains or {}), **kw}
        if new:
            raise ValueError(f"the position interface's controller takes no gains (got "
                             f"{', '.join(new)}): the drive's are its own (the bridge's "
                             "drive_kp, drive_kd)")

    def derive_gains(self, q0: np.ndarray) -> dict[str, np.ndarray]:
        """No gains; the first command, before any finite reference, is ``q0`` (held)."""
        if not np.isfinite(self.tau).all():
            self.tau[:] = np.clip(np.asarray(q0, dtype=float), self._lo, self._hi)
        return {}

    @property
    def schedule(self) -> bool:
        return False

    @schedule.setter
    def schedule(self, on: bool) -> None:
        pass  # nothing to schedule

    def compute(self, t: float, q: np.ndarray, qd: np.ndarray, ref: Reference) -> np.ndarray:
        """The command ``clip(q_d, lower, upper)``; a non-finite ``q_d`` (or a task-space
        reference: no joint positions) keeps the last (class docstring)."""
        code = _pass_through_kernel(ref.q, self._lo, self._hi, self.tau)
        np.subtract(ref.q, q, out=self.error)
        self.fault = code != OK
        self.status = "ok" if code == OK else "non-finite reference: the last position command held"
        return self.tau
