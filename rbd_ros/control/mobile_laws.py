"""Control laws of a mobile manipulator (``MobileBaseRobot``, issue 18), ROS-free.

Two laws, each one implementation used by the controller node and the bridge's composed mode::

    law = make_mobile_law("whole_body_computed_torque", robot)      # or "diff_drive_velocity"
    u = law.compute(t, q, v, ref)                                    # ref: a MobileReference

``q = [x, y, yaw, arm]``, ``v = [v_x, v_y, omega, arm rates]`` (base frame) as
``rbd_ros.mobile_base``; ``u`` has the robot's inputs: ``[tau_left, tau_right, arm]`` (N m) for a
differential drive, ``[F_x, F_y, M_z, arm]`` (N, N m, base frame) for a planar (holonomic)
base.  Both laws end in **computed torque on the independent speeds** (003 (6.41)-(6.46) on the
constrained system): with ``a*`` the wanted ``v``-dot,

* planar: ``Q = M(q) a* + h(q, v)``, all ``nv`` rows (no constraint);
* diff drive: the speeds ``w = [v_x, omega, arm rates]`` (``v_y = 0``, 001 (64)); the rows of
  ``M v-dot + h = Q + e_2 lam`` other than ``v_y`` are free of the ground's lateral force
  ``lam``, so ``M_r a*_r + h_r = [F_x, M_z, tau_arm]`` with ``M_r, h_r`` the core's ``M``
  (wheel spin inertia included) and ``h`` on those rows (000 (8)-(11) in base rates), and the
  wheel torques from ``F_x = (tau_L + tau_R)/r``, ``M_z = (s/2)(tau_R - tau_L)/r``:
  ``tau_R = (r/2)(F_x + 2 M_z/s)``, ``tau_L = (r/2)(F_x - 2 M_z/s)``.

With ``model_actuators`` the arm rows add the drives of 003 (6.16)-(6.17): armature
``G^2 J_m a*``, viscous ``D q'`` and Coulomb ``c tanh(q_d' / eps)`` (the reference velocity's
smoothed sign, ``c = T_c`` in full: ``gains.coulomb_compensation``; a joint whose friction
is large for its inertia at the control rate is named in ``gain_notes``).  The arm's ``a*`` is that of computed torque,
``q_d'' + k_d (q_d' - q') + k_p (q_d - q)``.

The base's ``a*``:

* ``whole_body_computed_torque`` tracks a base path ``p_d(t) = [x_d, y_d, yaw_d]`` (world, with
  ``p_d'`` and ``p_d''``).  Planar: the world acceleration
  ``p'' * = p_d'' + k_d (p_d' - p') + k_p (p_d - p)`` (yaw error wrapped) mapped to base
  rates, ``[v_x, v_y]-dot = R^T [x'', y'']* + omega [v_y, -v_x]`` (from ``[x', y'] = R v``).
  Diff drive (nonholonomic: B cannot move sideways, so its position is not a flat output):
  dynamic feedback linearisation of the point ``P = B + b [cos yaw, sin yaw]`` a look-ahead
  ``b`` in front of the axle, whose velocity ``P' = R [v_x, v_y + b omega]`` is reachable in
  every direction: ``P''* = P_d'' + k_d (P_d' - P') + k_p (P_d - P)`` and
  ``[v_x', b omega'] = R^T P''* + omega [b omega, -v_x]``, so ``e_P'' + k_d e_P' + k_p e_P = 0``
  exactly; the heading is then the internal (zero) dynamics, which settle on ``yaw_d`` when
  driving forwards (``yaw_d`` along the path) at the rate ``v / b``.
* ``diff_drive_velocity`` follows a commanded body twist ``[v_x, v_y, omega]`` (``v_y`` only
  for a planar base): the reference speeds ``w_r`` move toward the command limited to
  ``max_velocity`` and ``max_acceleration`` (per cycle ``|dw_r| <= a_max dt``), and
  ``a* = w_r' + k_v (w_r - w)``.  A command older than ``cmd_vel_timeout`` s (control time)
  is replaced by zero: the base **brakes** to a stop at ``max_acceleration``.  The arm follows
  its joint reference as above.

Gains (``MobileLaw.gains``) from the model like ``gains.model_gains``: the arm's computed
torque gains for ``bandwidth`` (Hz, discrete-stability cap at ``rate``), the base's
``kp_base = w_b^2``, ``kd_base = 2 zeta w_b`` (and the velocity loop ``kv_base = w_b``) for
``base_bandwidth``; the error dynamics are robot-independent, so the inertia enters through
``M`` itself.  Efforts are saturated at the arm's effort limits and the optional
``wheel_effort_limit`` (N m) / ``base_force_limit`` (N, N m).  A NaN in the state or reference
gives zero effort and ``fault``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from rbd_ros.algorithm.first_use import entry
from rbd_ros.control.gains import (
    DEFAULT_BANDWIDTH,
    DEFAULT_DAMPING_RATIO,
    DEFAULT_RATE,
    coulomb_compensation,
    model_gains,
)

MOBILE_LAWS = ("diff_drive_velocity", "whole_body_computed_torque")
DEFAULT_BASE_BANDWIDTH = 2.0  # Hz
DEFAULT_LOOKAHEAD = 0.2  # m, the point P ahead of the axle (diff drive path law)
DEFAULT_CMD_VEL_TIMEOUT = 0.5  # s
DEFAULT_MAX_VELOCITY = (1.0, 1.0, 2.0)  # m/s, m/s, rad/s: v_x, v_y, omega
DEFAULT_MAX_ACCELERATION = (1.0, 1.0, 3.0)  # m/s^2, m/s^2, rad/s^2


@njit(cache=True)
def _finite(x: np.ndarray) -> bool:
    """Every entry of ``x`` finite (no temporary array, unlike ``np.isfinite(x).all()``)."""
    for value in x:
        if not math.isfinite(value):
            return False
    return True


def wrap(angle: float) -> float:
    """``angle`` in ``(-pi, pi]``."""
    return angle - 2.0 * math.pi * math.floor((angle + math.pi) / (2.0 * math.pi))


class MobileReference:
    """What a mobile law tracks: base path ``base`` (world ``[x, y, yaw]``), ``base_d``,
    ``base_dd`` (its time derivatives); commanded twist ``twist`` (``[v_x, v_y, omega]``, base
    frame) received at control time ``twist_time``; arm ``q, qd, qdd``."""

    def __init__(self, dof: int) -> None:
        self.base, self.base_d, self.base_dd = np.zeros(3), np.zeros(3), np.zeros(3)
        self.twist = np.zeros(3)
        self.twist_time = -math.inf
        self.q, self.qd, self.qdd = np.zeros(dof), np.zeros(dof), np.zeros(dof)


def _limits(value: Any, name: str) -> np.ndarray:
    arr = np.array(value, dtype=float).reshape(-1)
    if arr.size == 1:
        arr = np.full(3, arr[0])
    if arr.size != 3 or not (arr > 0).all() or np.isnan(arr).any():
        raise ValueError(f"{name} needs 1 or 3 positive values (v_x, v_y, omega), got {np.asarray(value).tolist()}")
    return arr


class MobileLaw:
    """Common part: gains, computed torque on the independent speeds, saturation (module
    docstring).  Subclasses fill ``self.a_star[:3]`` (base rows of ``v``-dot) in ``_base``."""

    name = ""

    def __init__(self, robot: Any, bandwidth: float = DEFAULT_BANDWIDTH,
                 base_bandwidth: float = DEFAULT_BASE_BANDWIDTH, damping_ratio: float = DEFAULT_DAMPING_RATIO,
                 rate: float = DEFAULT_RATE, model_actuators: bool = True, lookahead: float = DEFAULT_LOOKAHEAD,
                 wheel_effort_limit: float = math.inf, base_force_limit: Any = math.inf,
                 cmd_vel_timeout: float = DEFAULT_CMD_VEL_TIMEOUT, max_velocity: Any = DEFAULT_MAX_VELOCITY,
                 max_acceleration: Any = DEFAULT_MAX_ACCELERATION, q0: Any = None) -> None:
        if getattr(robot, "base_type", "fixed") not in ("planar", "diff_drive"):
            raise ValueError(f"{self.name} drives a planar or diff_drive base, not "
                             f"'{getattr(robot, 'base_type', 'fixed')}'")
        for key, val in (("base_bandwidth", base_bandwidth), ("lookahead", lookahead),
                         ("cmd_vel_timeout", cmd_vel_timeout)):
            if not (isinstance(val, (int, float)) and math.isfinite(val) and val > 0):
                raise ValueError(f"{key} must be a positive number, got {val!r}")
        from rbd_ros.algorithm.planar_base import rnea_planar_checked  # lazy: kernels, not at the registries' import

        # h = ID(q, v, 0) of the cycle: the compiled entry, loaded (or compiled) here, not at the
        # import of this module (which the law registries import for the names: issue 39)
        self._rnea_checked = entry(rnea_planar_checked)
        self.robot = robot
        self.model = model = robot.model
        self.diff = robot.base_type == "diff_drive"
        n = self.dof = model.dof
        self.nu = robot.nu
        arm, self.gain_notes = model_gains("computed_torque", model, None if q0 is None else np.asarray(q0)[3:],
                                           bandwidth, damping_ratio, rate)
        w_b = min(2.0 * math.pi * float(base_bandwidth), 2.0 * float(damping_ratio) * float(rate))
        self.gains = {"kp": arm["kp"], "kd": arm["kd"], "kp_base": np.full(3, w_b**2),
                      "kd_base": np.full(3, 2.0 * damping_ratio * w_b), "kv_base": np.full(3, w_b)}
        self.lookahead = float(lookahead)
        self.cmd_vel_timeout = float(cmd_vel_timeout)
        self.max_velocity = _limits(max_velocity, "max_velocity")
        self.max_acceleration = _limits(max_acceleration, "max_acceleration")
        self.model_actuators = bool(model_actuators)
        self._armature = np.asarray(model.armature, dtype=float) if model_actuators else np.zeros(n)
        self._viscous = np.asarray(model.viscous, dtype=float) if model_actuators else np.zeros(n)
        self._coulomb, self._band = np.zeros(n), np.ones(n)
        if model_actuators:
            q = np.zeros(3 + n)
            q[3:] = np.clip(0.0, model.lower, model.upper) if q0 is None else np.asarray(q0, dtype=float)[3:]
            M = robot.mass_matrix(q)
            M[3:, 3:] += np.diag(self._armature)
            keep = [0, 2, *range(3, 3 + n)] if self.diff else list(range(3 + n))  # diff: no v_y
            m_min = 1.0 / np.diag(np.linalg.inv(M[np.ix_(keep, keep)]))[-n:]
            self._coulomb, self._band, capped = coulomb_compensation(model, m_min, rate)
            self.gain_notes = [*self.gain_notes, *capped]
        arm_lim = np.abs(np.asarray(model.effort_limit, dtype=float))
        base_lim = np.full(2, float(wheel_effort_limit)) if self.diff else \
            np.broadcast_to(np.asarray(base_force_limit, dtype=float), (3,)).copy()
        if (base_lim <= 0).any() or np.isnan(base_lim).any():
            raise ValueError(f"wheel_effort_limit / base_force_limit must be positive, got {base_lim.tolist()}")
        self.limit = np.concatenate([base_lim, arm_lim])
        if self.diff:
            self.radius, self.separation = float(model.wheel_radius), float(model.wheel_separation)
        self.a_star = np.zeros(3 + n)
        self.error = np.zeros(3 + n)  # base [x, y, yaw] (world) or twist error, then arm q_d - q
        self.tau = np.zeros(self.nu)
        self.generalized = np.zeros(3 + n)  # Q = M a* + h (+ drives), base frame
        self.saturated = np.zeros(self.nu, dtype=bool)
        self.fault = False
        self.status = "ok"
        self._v = np.zeros(3 + n)
        self._h = np.zeros(3 + n)  # per-cycle buffers (no allocation in compute)
        self._tmp = np.zeros(n)
        self._neg_limit = -self.limit
        self._abs_tau = np.zeros(self.nu)

    def reset(self) -> None:
        """Forget internal state."""

    def set_gains(self, **gains: Any) -> None:
        """Replace gains (same sizes, non-negative); ``ValueError`` otherwise."""
        for k, val in gains.items():
            if k not in self.gains:
                raise ValueError(f"'{k}' is not a gain of {self.name}; its gains are {', '.join(self.gains)}")
            arr = np.broadcast_to(np.asarray(val, dtype=float), self.gains[k].shape).copy()
            if not (np.isfinite(arr).all() and (arr >= 0).all()):
                raise ValueError(f"{k} must be finite and non-negative, got {arr.tolist()}")
            self.gains[k] = arr

    # ---- cycle ---------------------------------------------------------------------------------
    def compute(self, t: float, q: np.ndarray, v: np.ndarray, ref: MobileReference) -> np.ndarray:
        """Efforts ``u`` (``nu``) for the measured ``q, v`` at control time ``t``; ``self.tau``."""
        ok = (_finite(q) and _finite(v) and _finite(ref.q) and _finite(ref.qd) and _finite(ref.qdd)
              and math.isfinite(t))
        if ok:
            self._base(float(t), q, v, ref)
            g = self.gains
            e, a, tmp = self.error[3:], self.a_star[3:], self._tmp
            np.subtract(ref.q, q[3:], out=e)  # e = q_d - q
            np.subtract(ref.qd, v[3:], out=tmp)  # a* = q_d'' + k_d (q_d' - q') + k_p e
            np.multiply(g["kd"], tmp, out=a)
            np.multiply(g["kp"], e, out=tmp)
            a += tmp
            a += ref.qdd
            ok = _finite(self.a_star) and self._effort(q, v, ref)
        if not ok:
            self.tau[:] = 0.0
            self.saturated[:] = False
            self.fault, self.status = True, "non-finite state, reference or effort: zero effort"
            return self.tau
        self.fault, self.status = False, "ok"
        np.negative(self.limit, out=self._neg_limit)
        np.clip(self.tau, self._neg_limit, self.limit, out=self.tau)
        np.abs(self.tau, out=self._abs_tau)
        np.greater_equal(self._abs_tau, self.limit, out=self.saturated)
        return self.tau

    def _effort(self, q: np.ndarray, v: np.ndarray, ref: MobileReference) -> bool:
        """``Q = M a* + h`` (+ drives), then the inputs ``u``; False if not finite."""
        vv = self._v
        vv[:] = v
        if self.diff:
            vv[1] = 0.0  # the rolling model: measured side slip (wheels on a floor) is not a speed
            self.a_star[1] = 0.0
        robot = self.robot
        Q, h = self.generalized, self._h
        np.dot(robot.kernels.crba(q), self.a_star, out=Q)  # M a*
        if self._rnea_checked(robot._mw, q, vv, robot._zv, h) != 0:  # h = ID(q, v, 0)
            h[:] = robot.bias(q, vv)  # the checked path's error
        Q += h
        Qa, tmp = Q[3:], self._tmp
        np.multiply(self._armature, self.a_star[3:], out=tmp)  # G^2 J_m a* + D q' + c tanh(q_d'/eps)
        Qa += tmp
        np.multiply(self._viscous, v[3:], out=tmp)
        Qa += tmp
        np.divide(ref.qd, self._band, out=tmp)  # the smoothed sign of the reference velocity
        np.tanh(tmp, out=tmp)
        tmp *= self._coulomb
        Qa += tmp
        if not _finite(Q):
            return False
        if self.diff:
            r, s = self.radius, self.separation
            self.tau[0] = 0.5 * r * (Q[0] - 2.0 * Q[2] / s)  # left
            self.tau[1] = 0.5 * r * (Q[0] + 2.0 * Q[2] / s)  # right
            self.tau[2:] = Q[3:]
        else:
            self.tau[:] = Q
        return True

    def _base(self, t: float, q: np.ndarray, v: np.ndarray, ref: MobileReference) -> None:
        raise NotImplementedError


class WholeBodyComputedTorque(MobileLaw):
    """Base path and arm trajectory tracked together (module docstring)."""

    name = "whole_body_computed_torque"

    def _base(self, t: float, q: np.ndarray, v: np.ndarray, ref: MobileReference) -> None:
        g = self.gains
        kp, kd = g["kp_base"], g["kd_base"]
        c, s = math.cos(q[2]), math.sin(q[2])
        vx, vy, w = v[0], v[1], v[2]
        pd, pdd, p = ref.base_d, ref.base_dd, ref.base
        self.error[0], self.error[1] = p[0] - q[0], p[1] - q[1]
        self.error[2] = wrap(p[2] - q[2])
        if not self.diff:
            xw, yw = c * vx - s * vy, s * vx + c * vy  # world velocity of B
            ax = pdd[0] + kd[0] * (pd[0] - xw) + kp[0] * self.error[0]
            ay = pdd[1] + kd[1] * (pd[1] - yw) + kp[1] * self.error[1]
            self.a_star[0] = c * ax + s * ay + w * vy
            self.a_star[1] = -s * ax + c * ay - w * vx
            self.a_star[2] = pdd[2] + kd[2] * (pd[2] - w) + kp[2] * self.error[2]
            return
        b = self.lookahead
        cd, sd = math.cos(p[2]), math.sin(p[2])
        # the point P ahead of the axle: reference, its rates, and the measured one
        Px, Py = p[0] + b * cd, p[1] + b * sd
        Pxd, Pyd = pd[0] - b * sd * pd[2], pd[1] + b * cd * pd[2]
        Pxdd = pdd[0] - b * (sd * pdd[2] + cd * pd[2] ** 2)
        Pydd = pdd[1] + b * (cd * pdd[2] - sd * pd[2] ** 2)
        mx, my = q[0] + b * c, q[1] + b * s
        lat = vy + b * w
        mxd, myd = c * vx - s * lat, s * vx + c * lat  # P' = R [v_x, v_y + b omega]
        ax = Pxdd + kd[0] * (Pxd - mxd) + kp[0] * (Px - mx)
        ay = Pydd + kd[1] * (Pyd - myd) + kp[1] * (Py - my)
        # [v_x', b omega'] = R^T P''* + omega [b omega, -v_x]
        self.a_star[0] = c * ax + s * ay + w * b * w
        self.a_star[2] = (-s * ax + c * ay - w * vx) / b
        self.a_star[1] = 0.0


class RateLimitedTwist:
    """The reference twist ``w_r`` of the velocity law (and of a path driven by ``cmd_vel``):
    moves toward the command, clipped to ``max_velocity``, by at most ``max_acceleration dt``
    per call; a command older than ``timeout`` s (or not finite) counts as zero, so the twist
    **brakes** to rest at ``max_acceleration``.  ``update(t, cmd, cmd_time)`` fills ``w``
    (m/s, m/s, rad/s) and ``wd`` (its rate over the last step); ``diff`` keeps ``w[1] = 0``."""

    max_dt = 0.1

    def __init__(self, max_velocity: np.ndarray, max_acceleration: np.ndarray, timeout: float,
                 diff: bool, w0: Any = None) -> None:
        self.max_velocity, self.max_acceleration = max_velocity, max_acceleration
        self.timeout, self.diff = float(timeout), diff
        self.w = np.zeros(3) if w0 is None else np.array(w0, dtype=float)
        self.wd = np.zeros(3)
        self.braking = False
        self.t_prev = math.nan

    def update(self, t: float, cmd: np.ndarray, cmd_time: float) -> None:
        dt = t - self.t_prev
        if not (0.0 < dt <= self.max_dt):
            dt = 0.0
        self.t_prev = t
        self.braking = not (0.0 <= t - cmd_time <= self.timeout and np.isfinite(cmd).all())
        target = np.zeros(3) if self.braking else np.clip(cmd, -self.max_velocity, self.max_velocity)
        if self.diff:
            target[1] = self.w[1] = 0.0
        step = np.clip(target - self.w, -self.max_acceleration * dt, self.max_acceleration * dt)
        self.w += step
        self.wd[:] = step / dt if dt > 0 else 0.0


class DiffDriveVelocity(MobileLaw):
    """Body twist following with limits and a timeout brake (module docstring)."""

    name = "diff_drive_velocity"

    def __init__(self, robot: Any, **kw: Any) -> None:
        super().__init__(robot, **kw)
        self.twist = RateLimitedTwist(self.max_velocity, self.max_acceleration, self.cmd_vel_timeout,
                                      self.diff)

    @property
    def braking(self) -> bool:
        return self.twist.braking

    def reset(self) -> None:
        self.twist.t_prev = math.nan

    def _base(self, t: float, q: np.ndarray, v: np.ndarray, ref: MobileReference) -> None:
        tw = self.twist
        if not math.isfinite(tw.t_prev):
            tw.w[:] = v[:3]  # bumpless start from the measured twist
        tw.update(t, ref.twist, ref.twist_time)
        self.error[:3] = tw.w - v[:3]
        self.a_star[:3] = tw.wd + self.gains["kv_base"] * self.error[:3]


MOBILE_LAW_CLASSES = {"diff_drive_velocity": DiffDriveVelocity,
                      "whole_body_computed_torque": WholeBodyComputedTorque}


def make_mobile_law(name: str, robot: Any, **kw: Any) -> MobileLaw:
    """The mobile law ``name`` (one of ``MOBILE_LAWS``) over a ``MobileBaseRobot``."""
    if name not in MOBILE_LAW_CLASSES:
        raise ValueError(f"unknown mobile controller type '{name}'; use one of {', '.join(MOBILE_LAWS)}")
    return MOBILE_LAW_CLASSES[name](robot, **kw)
