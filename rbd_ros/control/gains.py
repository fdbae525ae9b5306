"""Gains and limits of the control laws: what each law takes, defaults from YAML, validation.

ROS-free.  A gain is given as a scalar (same for every axis) or a list with one entry per
axis; ``validate_gains`` turns it into a float array of the right length or raises
``ValueError`` with a reason (the node returns that reason from ``set_parameters``).

Units (torques in N m at the joints, 003 §6.2-6.9; forces in N)::

    =====================  ========  =====================================================
    law                    gain      meaning
    =====================  ========  =====================================================
    pd, pid, pd_gravity    kp        joint stiffness ``K_p``, N m/rad (n)
                           kd        joint damping ``K_v``, N m s/rad (n)
    pid                    ki        integral gain ``K_i``, N m/(rad s) (n)
                           i_clamp   anti-windup bound on ``|K_i int e dt|``, N m (n)
    computed_torque        kp, kd    acceleration gains of (6.42), 1/s^2 and 1/s (n)
    task_pd                kp        task stiffness of (6.47), [N/m x3, N m/rad x3] (6)
                           kd        joint damping ``K_v`` of (6.47), N m s/rad (n)
    resolved_acceleration  kp, kd    task acceleration gains of (6.49), 1/s^2, 1/s (6)
                           k_null    null-space damping, 1/s (n; redundant arms only)
                           kp_null   null-space posture stiffness toward a joint reference,
                                     1/s^2 (n; redundant arms, joint references only)
    impedance              stiffness task spring K, [N/m x3, N m/rad x3] (6)
                           damping   task damper D, [N s/m x3, N m s/rad x3] (6)
    hybrid_force_position  kp, kd    position gains (resolved acceleration), 1/s^2, 1/s (6)
                           selection 1 = position, 0 = force, per world axis (6)
                           force_p   proportional force feedback, 1; force_i integral, 1/s (6)
                           force_damping  damping along force axes, as an acceleration, 1/s (6)
                           velocity_limit speed bound along force axes, m/s, rad/s (6)
    admittance             mass, damping, stiffness  the outer loop M_a, D_a, K_a (6)
                           kp, kd, velocity_limit  inner resolved acceleration, the bound (6)
                           force_i   integral force feedback along force axes until contact, 1/s (6)
    impedance, hybrid_force_position, admittance: k_null  null-space damping, 1/s (n)
    every law              effort_limit  optional extra torque bound, N m (n; the smaller of
                                     this and the model's effort limit applies)
    =====================  ========  =====================================================

Gains from the model (``model_gains``): a gain the user does not give (neither in the gains
YAML nor as a parameter) is derived from the robot for a closed-loop ``bandwidth`` (Hz) and
``damping_ratio`` at the control ``rate`` (Hz), at the start pose ``q0``:

* joint laws, per joint ``i``: the inertia the joint sees ``m_i = M_ii(q0) + G_i^2 J_m,i``
  (003 (6.17): the armature is part of the diagonal), ``omega = 2 pi bandwidth`` and
  ``kp = m_i omega^2``, ``kd = 2 zeta m_i omega - D_i`` (so ``m e'' + (D + kd) e' + kp e = 0``
  has the requested poles; ``D_i`` the drive's viscous friction of (6.16) already damps);
  a joint whose ``D_i`` alone damps more than that (a light link with a damped drive) gets
  ``kd = 0`` and ``kp = omega (D_i - m_i omega)``, its slow pole at ``omega``; ``kp`` is
  raised toward ``Coulomb / E_FRICTION`` (a dead band of 5 mrad); ``pid`` adds
  ``ki = kp omega / 5`` (integral zero at a fifth of the
  bandwidth: Routh ``kd kp > m ki`` holds with margin 10 zeta) and ``i_clamp`` = half the
  effort limit;
* ``computed_torque``: the error dynamics (6.46) are the robot-independent
  ``e'' + kd e' + kp e = 0``: ``kp = omega^2``, ``kd = 2 zeta omega``;
* ``task_pd``: task stiffness per axis ``kp_r = lambda_r omega^2`` with ``lambda_r =
  1 / (J M^-1 J^T)_rr`` the operational-space inertia the tool shows along axis ``r``
  (003 (6.47)), its median over ``q0`` and 8 poses inside the limits (at a singular start
  pose, e.g. an arm stretched out at q = 0, it is unbounded along the lost direction); joint
  damping as for the joint laws;
* ``resolved_acceleration``: ``kp = omega^2``, ``kd = 2 zeta omega`` per task axis (6.49), the
  null-space posture the same (``kp_null = omega^2``, ``k_null = 2 zeta omega``);
* task axes the arm cannot move (a row of ``J`` zero at every sampled pose, e.g. z, rx, rz of
  a planar arm) get zero gains: resolved acceleration leaves them free.

**Dry friction** (003 (6.16)).  Each law's notes end with the dead band the joints' Coulomb
friction ``T_c`` leaves (``friction_dead_band``): ``computed_torque`` and
``resolved_acceleration`` (with a joint reference) compensate ``T_c`` at the velocity the
feedback asks for, ``q_d' + (kp/kd) e``, linear over ``FRICTION_BAND`` -- at rest with an
error it pushes toward the reference instead of vanishing with ``q_d'`` (a light joint of
TIAGo Pro, 5e-4 kg m^2 under 1 N m, stayed 0.02 rad off: ``M kp e`` = 0.04 N m cannot
break 1 N m), and it fades without a step at zero velocity -- dead band
``FRICTION_BAND kd / kp`` (3e-5 rad at 10 Hz); ``pd``/``pd_gravity``: ``T_c / kp``;
``pid``: none while ``T_c <= i_clamp``; ``task_pd`` compensates ``T_c`` toward
``q_d' + (J^T K_p e)_j / (kd_j + D_j)``: ``FRICTION_BAND (kd_j + D_j) / (J^T K_p J)_jj``
(``T_c / (J^T K_p J)_jj`` where ``kd_j + D_j = 0``).

Caps (each reported in the notes the node logs):

* **discrete stability.**  The loop runs at ``rate``: the command computed from the state at
  ``t_k`` is held over ``[t_k, t_k + dt]``.  For a joint of inertia ``m`` under
  ``tau = -kp e - kd e'`` the exact zero-order-hold map of ``(e, e')`` has the characteristic
  polynomial ``z^2 - (2 - a/2 - b) z + (1 - b + a/2)`` with ``a = kp dt^2 / m`` and
  ``b = kd dt / m``; by Jury's test it is stable iff ``a/2 < b < 2``.  The joint can see
  less than ``M_ii`` -- as little as ``m_min = 1 / (M^-1)_ii`` when the other joints give way --
  so the gains are capped to ``kd dt / m_min <= 1`` (half the limit) and
  ``omega dt <= 2 zeta`` (half of ``a/2 < b``); ``computed_torque`` and
  ``resolved_acceleration`` (``m = 1``: ``kd = 2 zeta omega``) also ``omega dt <= 1 / (2 zeta)``
  (half of ``b < 2``: 40 Hz at a 250 Hz loop was ``b = 2.01``).  Task stiffness is capped the same way on
  the stiffest joint-space mode ``w_mode = sqrt(max eig(M^-1 J^T K_p J))``, damped by the
  joint damping of bandwidth ``w_j``: ``w_mode^2 dt <= 2 zeta min(w_j)``.
* **effort.**  A joint law's stiffness is capped so that an error of ``E_LINEAR`` (0.02 rad
  or m) needs no more than the effort left after holding gravity at ``q0`` and at every pose
  of ``poses`` (the configurations the arm will visit, e.g. the bringup's tour, sampled):
  ``kp <= (tau_max - max |g_i(q)|) / E_LINEAR`` (at least a tenth of ``tau_max``);
  ``kd`` follows the capped ``omega``.

**Where the arm goes** (scheduled, every cycle).  The caps above hold at ``q0``; the inertia a
joint sees changes as the arm moves, and near a configuration where two axes are colinear
(joints 1 and 3 of a 7-DoF shoulder at joint 2 = 0) the mode in which they turn against each
other has only the inertia of the link between them: TIAGo Pro's left arm, 1 / (M^-1)_11
= 0.12 kg m^2 at its tour's start and 0.0022 at joint 2 = 0.  The same ``kd`` is then far past
``b < 2`` and the joints switch between their effort limits (32 % of the tour's cycles for
``pd`` on that arm, 24 % on the xArm 7).  So the laws with joint damping (``pd``, ``pid``,
``pd_gravity``, ``task_pd``), when their ``kd`` comes from the model, use each cycle

    ``kd_j(q) = min(kd_j, 1 / (dt ||M(q)^-1 e_j||_1))``,
    ``kp_j(q) = min(kp_j, (kd_j(q) + D_j) / dt)``  (joint laws, ``kp`` from the model),

with the full ``M^-1`` (armature included): the column sums bound every eigenvalue of
``dt M^-1 K_v`` (``rho <= ||.||_1``), so each mode, coupled directions included, keeps
``b <= 1`` (half of Jury's ``b < 2``) and ``a/2 <= b/2``.  The node logs the nominal gains;
a note names the joints whose ``kd`` the schedule lowers at ``q0``, at ``poses`` or at
``_TASK_POSES`` poses inside the limits, and how far.  Given gains (argument or YAML) are
used as given at the start; a change at runtime (the node's ``set_parameters``) must pass
``gain_bound_refusal``: Jury's bound itself (not its half) at the current pose, and effort
limits no larger than the model's.  ``computed_torque`` and ``resolved_acceleration`` multiply their feedback by
``M(q)`` themselves: their error dynamics (6.46) do not depend on the pose.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rbd_ros.util import yaml_io
from rbd_ros.util.resources import config_file

JOINT = "joint"  # one entry per joint
TASK = "task"  # one entry per task-space axis: x, y, z, rx, ry, rz

#: the gains each law takes and their size
LAW_GAINS: dict[str, dict[str, str]] = {
    "pd": {"kp": JOINT, "kd": JOINT},
    "pid": {"kp": JOINT, "kd": JOINT, "ki": JOINT, "i_clamp": JOINT},
    "pd_gravity": {"kp": JOINT, "kd": JOINT},
    "computed_torque": {"kp": JOINT, "kd": JOINT},
    "task_pd": {"kp": TASK, "kd": JOINT},
    "resolved_acceleration": {"kp": TASK, "kd": TASK, "k_null": JOINT, "kp_null": JOINT},
    # the laws of rbd_ros.control.force_laws (issue 30; gains from the model there)
    "impedance": {"stiffness": TASK, "damping": TASK, "k_null": JOINT},
    "hybrid_force_position": {"kp": TASK, "kd": TASK, "selection": TASK, "force_p": TASK,
                              "force_i": TASK, "force_damping": TASK, "velocity_limit": TASK,
                              "k_null": JOINT},
    "admittance": {"mass": TASK, "damping": TASK, "stiffness": TASK, "kp": TASK, "kd": TASK,
                   "force_i": TASK, "velocity_limit": TASK, "k_null": JOINT},
}
LAWS = tuple(LAW_GAINS)
#: limits accepted by every law (validated like gains, but must be strictly positive)
LIMITS: dict[str, str] = {"effort_limit": JOINT}


def gain_names(law: str) -> tuple[str, ...]:
    """Gains (then limits) the law ``law`` takes."""
    _check_law(law)
    return tuple(LAW_GAINS[law]) + tuple(LIMITS)


def _check_law(law: str) -> None:
    if law not in LAW_GAINS:
        raise ValueError(f"unknown controller type '{law}'; use one of {', '.join(LAWS)}")


def validate_gain(law: str, name: str, value: Any, dof: int) -> np.ndarray:
    """``value`` (scalar or sequence) as a float array of the gain's size, or ``ValueError``."""
    _check_law(law)
    kinds = {**LAW_GAINS[law], **LIMITS}
    if name not in kinds:
        raise ValueError(f"'{name}' is not a gain of {law}; its gains are {', '.join(kinds)}")
    size = dof if kinds[name] == JOINT else 6
    what = "joint" if kinds[name] == JOINT else "task-space axis (x y z rx ry rz)"
    items = value if isinstance(value, (list, tuple)) else [value]
    if any(isinstance(v, (bool, np.bool_, str)) for v in items) or (
            isinstance(value, np.ndarray) and value.dtype.kind not in "iuf"):
        raise ValueError(f"{name} must be a number or a list of numbers, got {value!r}")
    try:
        arr = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or a list of numbers, got {value!r}") from None
    if arr.size == 1:
        arr = np.full(size, arr[0])
    if arr.size != size:
        raise ValueError(f"{name} needs 1 or {size} values (one per {what}), got {arr.size}")
    if not np.isfinite(arr).all():
        if name == "effort_limit" and not np.isnan(arr).any():
            pass  # +inf means "no extra limit"
        else:
            raise ValueError(f"{name} contains NaN or Inf: {arr.tolist()}")
    if name in LIMITS:
        if (arr <= 0).any():
            raise ValueError(f"{name} must be positive, got {arr.tolist()}")
    elif (arr < 0).any():
        bad = np.flatnonzero(arr < 0).tolist()
        raise ValueError(f"{name} must be non-negative (a negative gain destabilises the loop); "
                         f"negative at index {bad}: {arr.tolist()}")
    return arr


def validate_gains(law: str, values: Mapping[str, Any], dof: int) -> dict[str, np.ndarray]:
    """All gains of ``law`` from ``values`` (unknown keys refused, missing gains refused)."""
    _check_law(law)
    allowed = gain_names(law)
    unknown = [k for k in values if k not in allowed]
    if unknown:
        raise ValueError(f"{law} does not take {unknown}; its gains are {', '.join(allowed)}")
    missing = [k for k in LAW_GAINS[law] if k not in values]
    if missing:
        raise ValueError(f"{law} needs gains {missing}")
    return {k: validate_gain(law, k, v, dof) for k, v in values.items()}


DEFAULT_BANDWIDTH = 10.0  # Hz, closed-loop bandwidth of the model-derived gains
DEFAULT_DAMPING_RATIO = 1.0
DEFAULT_RATE = 1000.0  # Hz, control rate assumed by the discrete-stability cap
E_LINEAR = 0.02  # rad (m): error a joint law answers without running out of effort
E_FRICTION = 0.005  # rad (m): Coulomb dead band c / kp the joint gains aim below
FRICTION_BAND = 1e-3  # rad/s (m/s): the velocity over which a Coulomb compensation changes sign
_TASK_POSES = 8  # random poses (besides q0) that decide which task axes the arm can move


def coulomb_compensation(model: Any, m_min: np.ndarray, rate: float = DEFAULT_RATE
                         ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The Coulomb friction ``T_c`` (003 (6.16)) of ``model``'s joints a law may feed forward,
    and its velocity band, for joints of effective inertia ``m_min`` (``1 / (M^-1)_ii``, the
    armature included; the caller's ``M``: a fixed arm's or a whole mobile robot's).

    A law compensates ``c tanh(q_d' / eps)`` (smoothed sign of the reference velocity, over
    ``eps = FRICTION_BAND``: the plain ``T_c sign(q_d')`` steps by ``2 T_c`` at each reversal),
    with ``c = T_c`` in full: the plant has the friction the model says, and a smaller ``c``
    leaves a light joint behind a strong friction stuck (TIAGo's arm_7, ``T_c = 1`` N m on
    ~4e-6 kg m^2: capped to 0.04 N m it missed its tour by 0.31 rad RMS, in full by 1.2e-2).
    Such a joint is said in a note: one control period of that torque moves it by
    ``T_c dt^2 / (2 m_min)`` (0.1 rad for arm_7 at 1 kHz), so on a plant WITHOUT that friction
    (a model that overstates it) the law would drive it hard; the note names the joint and the
    ``E_FRICTION`` bound it exceeds.  Returns ``c``, ``eps`` and the notes."""
    dt = 1.0 / float(rate)
    tc = np.abs(np.asarray(model.coulomb, dtype=float))
    m_min = np.asarray(m_min, dtype=float).reshape(tc.shape)
    moved = tc * dt**2 / (2.0 * m_min)  # one period of the compensation alone
    notes = [f"joint '{model.joint_names[i]}': Coulomb compensation {tc[i]:.4g} N m is large for its "
             f"inertia {m_min[i]:.3g} kg m^2 at {rate:g} Hz (one period moves it {moved[i]:.3g} rad "
             f"> {E_FRICTION} rad): right if the plant has this friction, harsh if it has less"
             for i in np.flatnonzero(moved > E_FRICTION)]
    c = tc.copy()
    return c, np.full(tc.shape, FRICTION_BAND), notes


def mass_matrix_checked(robot: Any, q: np.ndarray, what: str = "cannot derive gains from the model"
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``M(q)`` with the armature and its inverse; ``ValueError`` (``what``: the message's
    start) naming the joints (and the links they carry) that move no mass or inertia when
    ``M`` is singular."""
    M = robot.mass_matrix(q, include_actuators=True)
    w, V = np.linalg.eigh(M)
    null = V[:, w <= 1e-12 * max(float(np.abs(w).max()), 1.0)]
    if null.size or not np.isfinite(M).all():
        m = robot.model
        idx = np.flatnonzero(np.abs(null).max(axis=1) > 1e-6) if null.size else np.arange(m.dof)
        raise ValueError(
            f"{what}: the mass matrix is singular at q = "
            f"{np.round(q, 4).tolist()}: joints {[m.joint_names[i] for i in idx]} move no mass or "
            f"inertia (links {[m.link_names[i] for i in idx]} and what they carry are massless); "
            f"give those links a mass and inertia, or the joints an armature"
            + (", or give the gains" if what.startswith("cannot derive gains") else ""))
    return M, np.linalg.inv(M)


def damping_caps(robot: Any, poses: Any, rate: float) -> np.ndarray:
    """Per joint, the smallest ``1 / (dt ||M(q)^-1 e_j||_1)`` over ``poses``: the largest
    ``kd_j`` the per-cycle schedule of the module docstring lets through at all of them."""
    dt = 1.0 / float(rate)
    caps = np.full(robot.model.dof, np.inf)
    for p in poses:
        _, Minv = mass_matrix_checked(robot, np.asarray(p, dtype=float))
        caps = np.minimum(caps, 1.0 / (dt * np.abs(Minv).sum(axis=0)))
    return caps


def model_gains(law: str, model: Any, q0: Any = None, bandwidth: float = DEFAULT_BANDWIDTH,
                damping_ratio: float = DEFAULT_DAMPING_RATIO, rate: float = DEFAULT_RATE,
                poses: Any = None) -> tuple[dict[str, np.ndarray], list[str]]:
    """Every gain of ``law`` derived from ``model`` (an ``MdhModel``) at the start pose ``q0``
    (default: zero clipped into the limits) by the rule of the module docstring; ``poses``
    (k x n, optional): configurations the arm will visit (e.g. its tour, sampled), for the
    effort cap and the schedule's note.  Returns the gains and one note per cap that bit
    (empty if none).  ``ValueError`` for a bad argument or a massless chain."""
    from rbd_ros.robot import Robot  # lazy: the robot front, not at the controller's import

    _check_law(law)
    if law in ("impedance", "hybrid_force_position", "admittance"):
        raise ValueError(f"{law}'s gains come from rbd_ros.control.force_laws.force_model_gains")
    for name, v in (("bandwidth", bandwidth), ("damping_ratio", damping_ratio), ("rate", rate)):
        if not (isinstance(v, (int, float, np.floating)) and not isinstance(v, bool)
                and np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a positive number, got {v!r}")
    robot = Robot(model)
    n = model.dof
    q = np.clip(np.zeros(n), model.lower, model.upper) if q0 is None else \
        np.asarray(q0, dtype=float).reshape(n)
    visit = [q] if poses is None else [q, *np.asarray(poses, dtype=float).reshape(-1, n)]
    zeta, dt = float(damping_ratio), 1.0 / float(rate)
    omega = 2.0 * np.pi * float(bandwidth)
    notes: list[str] = []
    # discrete-stability bound on omega: omega dt <= 2 zeta, and kd dt / m_min <= 1
    w_cap = 2.0 * zeta / dt
    if law in ("computed_torque", "resolved_acceleration"):
        w_cap = min(w_cap, 1.0 / (2.0 * zeta * dt))  # m = 1: kd dt = 2 zeta omega dt <= 1 (b < 2, halved)
    if omega > w_cap:
        notes.append(f"bandwidth capped to {w_cap / (2 * np.pi):.3g} Hz for the {rate:g} Hz loop")
        omega = w_cap
    if law in ("computed_torque", "resolved_acceleration"):
        kp, kd = omega**2, 2.0 * zeta * omega
        notes += friction_dead_band(law, model, np.full(n, FRICTION_BAND * kd / kp))
        if law == "computed_torque":
            return {"kp": np.full(n, kp), "kd": np.full(n, kd)}, notes
        free, _ = free_task_axes(robot, q)
        return {"kp": np.where(free, 0.0, kp), "kd": np.where(free, 0.0, kd),
                "k_null": np.full(n, kd), "kp_null": np.full(n, kp)}, notes
    M, Minv = mass_matrix_checked(robot, q)
    m = np.diag(M).copy()
    m_min = 1.0 / np.diag(Minv)
    w_cap_j = np.minimum(m_min / (2.0 * zeta * m * dt), w_cap)  # kd dt / m_min <= 1
    w = np.minimum(omega, w_cap_j)
    for i in np.flatnonzero(w < omega * (1 - 1e-9)):
        notes.append(f"joint '{model.joint_names[i]}': bandwidth capped to "
                     f"{w[i] / (2 * np.pi):.3g} Hz (discrete stability)")
    kp_j, kd_j = _joint_pd(m, np.abs(np.asarray(model.viscous, dtype=float)),
                           np.abs(np.asarray(model.coulomb, dtype=float)), omega, w, w_cap_j,
                           zeta, dt)
    lim = np.abs(np.asarray(model.effort_limit, dtype=float))
    g = np.max([np.abs(robot.gravity(p)) for p in visit], axis=0)  # at every pose visited
    kp_max = np.where(np.isfinite(lim), np.maximum(lim - g, 0.1 * lim) / E_LINEAR, np.inf)
    for i in np.flatnonzero(kp_j > kp_max):
        notes.append(f"joint '{model.joint_names[i]}': kp capped from {kp_j[i]:.4g} to "
                     f"{kp_max[i]:.4g} (an error of {E_LINEAR} must not need more than the "
                     f"effort left after gravity)")
        w_i = np.sqrt(kp_max[i] / m[i]) if kd_j[i] > 0 else w[i]
        kp_j[i] = kp_max[i]
        if kd_j[i] > 0:
            kd_j[i] = max(2.0 * zeta * m[i] * w_i - model.viscous[i], 0.0)
        w[i] = min(w[i], w_i)
    _, sampled = free_task_axes(robot, q)
    caps = damping_caps(robot, visit + sampled[1:], rate)
    for i in np.flatnonzero(kd_j > caps):
        notes.append(f"joint '{model.joint_names[i]}': kd {kd_j[i]:.4g} scheduled with the "
                     f"inertia, down to {caps[i]:.3g} at the sampled poses "
                     f"(kd dt ||M^-1 e_j||_1 <= 1: discrete stability where the arm goes)")
    tc = np.abs(np.asarray(model.coulomb, dtype=float))
    if law in ("pd", "pd_gravity"):
        notes += friction_dead_band(law, model, tc / kp_j)
        return {"kp": kp_j, "kd": kd_j}, notes
    if law == "pid":
        i_clamp = np.where(np.isfinite(lim), 0.5 * lim, kp_j * E_LINEAR)
        # the integral term outgrows the friction (up to i_clamp): no dead band left
        notes += friction_dead_band(law, model, np.where(tc <= i_clamp, 0.0, (tc - i_clamp) / kp_j))
        return {"kp": kp_j, "kd": kd_j, "ki": kp_j * w / 5.0, "i_clamp": i_clamp}, notes
    # task_pd: K_p from the operational-space inertia, joint damping K_v as above
    J = robot.jacobian(q)
    free, task_poses = free_task_axes(robot, q)
    lam_inv = np.median([np.diag(robot.jacobian(p) @ mass_matrix_checked(robot, p)[1]
                                 @ robot.jacobian(p).T) for p in task_poses], axis=0)
    lam = np.where(free, 0.0, 1.0 / np.where(free, 1.0, np.maximum(lam_inv, 1e-12)))
    kp_t = lam * omega**2
    # the stiffest joint-space mode of J^T K_p J over M must respect the same bound as omega
    w_mode = np.sqrt(max(np.linalg.eigvals(Minv @ J.T @ np.diag(kp_t) @ J).real.max(), 0.0))
    # (a/2 < b of the docstring with a = w_mode^2 dt^2, b = 2 zeta w dt, kept at half)
    w_max = min(w_cap, float(np.sqrt(2.0 * zeta * np.min(w) / dt)))
    if w_mode > w_max:
        kp_t *= (w_max / w_mode) ** 2
        notes.append(f"task stiffness scaled by {(w_max / w_mode) ** 2:.3g} (stiffest mode "
                     f"{w_mode:.3g} rad/s > {w_max:.3g} rad/s: discrete stability)")
    k_joint = np.diag(J.T @ np.diag(kp_t) @ J)  # the joint stiffness J^T K_p J shows at q0
    # compensated toward the reference (laws.TaskPD): FRICTION_BAND (kd_j + D_j) / k_j
    damping = kd_j + np.abs(np.asarray(model.viscous, dtype=float))
    notes += friction_dead_band(law, model, np.where(damping > 0, FRICTION_BAND * damping, tc)
                                / np.maximum(k_joint, 1e-300))
    return {"kp": kp_t, "kd": kd_j}, notes


def friction_dead_band(law: str, model: Any, band: np.ndarray) -> list[str]:
    """One note: the dead band (rad or m) dry friction ``T_c`` (003 (6.16)) leaves each joint
    that has some, under ``law`` with the derived gains -- where a joint held by its friction
    may stop short of a resting reference: ``T_c / kp`` for ``pd``/``pd_gravity`` (``kp``
    raised toward ``T_c / E_FRICTION``), ``FRICTION_BAND (kd_j + D_j) / (J^T K_p J)_jj`` at
    ``q0`` for ``task_pd`` (``T_c / (J^T K_p J)_jj`` where ``kd_j + D_j = 0``),
    none for ``pid`` while ``T_c <= i_clamp`` (the integral term outgrows it), and
    ``FRICTION_BAND kd / kp`` for ``computed_torque`` / ``resolved_acceleration`` (joint
    reference), which compensate ``T_c`` toward the reference (``laws._coulomb_toward``).
    Empty if no joint has friction."""
    tc = np.abs(np.asarray(model.coulomb, dtype=float))
    idx = np.flatnonzero(tc > 0)
    if not idx.size:
        return []
    how = {"computed_torque": "compensated toward the reference",
           "resolved_acceleration": "compensated toward a joint reference",
           "task_pd": "compensated toward the reference where damped",
           "pid": "integral action"}.get(law, "no compensation, stiffness only")
    items = ", ".join(f"'{model.joint_names[i]}' {band[i]:.2g}" for i in idx)
    return [f"dry friction dead band ({how}), rad or m: {items}"]


def _joint_pd(m: np.ndarray, b: np.ndarray, c: np.ndarray, omega: float, w: np.ndarray,
              w_cap: np.ndarray, zeta: float, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """``(kp, kd)`` placing the poles of ``m s^2 + (b + kd) s + kp`` (``b`` the drive's own
    viscous friction, 003 (6.16)) for the bandwidth ``w`` (``omega`` before the discrete cap):
    ``kd = 2 zeta m w - b``, ``kp = m w^2`` while that is positive.  A joint whose friction
    alone damps more (``b >= 2 zeta m w``: a light link behind a damped drive) is a first-order
    plant: ``kd = 0`` and its slow pole at ``omega``, ``kp = omega (b - m omega)``, capped at
    ``b / dt`` (the loop ``e_{k+1} = (1 - kp dt / b) e_k`` keeps a margin of 2).  Coulomb
    friction ``c`` (003 (6.16)) leaves a dead band ``c / kp``: ``kp`` is raised toward
    ``c / E_FRICTION`` within the same caps (``w`` up to the discrete bound ``w_cap`` for the
    second-order case)."""
    kd = 2.0 * zeta * m * w - b
    over = kd <= 0.0
    kp_f = c / E_FRICTION
    kp_over = np.minimum(np.maximum(np.maximum(omega * (b - m * omega), m * omega**2), kp_f),
                         np.maximum(b / dt, m * w**2))
    w2 = np.maximum(w, np.minimum(np.sqrt(kp_f / m), w_cap))  # the discrete cap still holds
    kp = np.where(over, kp_over, m * w2**2)
    kd = np.where(over, 0.0, np.maximum(2.0 * zeta * m * w2 - b, 0.0))
    return kp, kd


def free_task_axes(robot: Any, q0: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Task axes (x y z rx ry rz) no joint can move -- the row of ``J`` is zero at ``q0`` and at
    ``_TASK_POSES`` random poses inside the limits (fixed seed) -- and those poses."""
    m = robot.model
    lo, hi = np.clip(m.lower, -np.pi, np.pi), np.clip(m.upper, -np.pi, np.pi)
    rng = np.random.default_rng(0)
    poses = [q0] + [lo + rng.random(m.dof) * (hi - lo) for _ in range(_TASK_POSES)]
    reach = np.zeros(6)
    for q in poses:
        reach = np.maximum(reach, np.abs(robot.jacobian(np.asarray(q, dtype=float))).max(axis=1))
    return reach < 1e-9, poses


def default_gains_file() -> Path:
    return config_file("controllers")


def load_gains(law: str, robot_names: list[str] | tuple[str, ...] = (), path: str | Path | None = None
               ) -> dict[str, Any]:
    """Raw (unvalidated) gains of ``law`` from a gains YAML file (default
    ``config/controllers.yaml``): ``defaults[law]``, overridden by ``robots[NAME][law]`` for the
    first of ``robot_names`` listed there.  Returns ``{gain: scalar or list}``."""

    _check_law(law)
    p = Path(path) if path else default_gains_file()
    if not p.is_file():
        raise FileNotFoundError(f"gains file '{p}' does not exist")
    try:
        data = yaml_io.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"gains file '{p}' is not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ValueError(f"gains file '{p}': expected a mapping with 'defaults' and 'robots'")
    out: dict[str, Any] = dict((data.get("defaults") or {}).get(law) or {})
    robots = data.get("robots") or {}
    for name in robot_names:
        if name in robots:
            out.update((robots[name] or {}).get(law) or {})
            break
    return out


#: laws whose ``kp``/``kd`` are acceleration gains (``e'' + kd e' + kp e = 0`` per axis, m = 1)
_ACCELERATION_LAWS = ("computed_torque", "resolved_acceleration", "hybrid_force_position", "admittance")


def gain_bound_refusal(law: str, model: Any, gains: Mapping[str, Any], rate: float,
                       q: Any = None, scheduled: bool = False,
                       names: tuple[str, ...] | None = None) -> str | None:
    """Why ``gains`` (the complete set a law would run with: validated arrays) are refused
    by the discrete-time stability rule of the module docstring at ``rate`` Hz and pose ``q``
    (default: zero clipped into the limits), or by the model's effort limits; None if they
    pass.  ``names``: the gains being changed (default: all), the only ones named.

    Jury's test on the zero-order-hold map, ``a/2 < b < 2`` with ``a = kp dt^2 / m`` and
    ``b = kd dt / m``, per joint ``m = 1 / (M^-1)_jj`` at ``q``; the drive's viscous friction
    ``D`` (003 (6.16)) acts in continuous time and damps as ``kd`` does in ``a/2 < b`` (with
    ``kd = 0`` the first-order rule of ``_joint_pd``, ``kp dt < 2 D``):

    * ``pd``, ``pid``, ``pd_gravity``: ``kp_j dt < 2 (kd_j + D_j)`` (``m`` cancels) and, unless
      ``kd`` is ``scheduled`` with the inertia each cycle, ``kd_j dt < 2 m_j``;
      ``pid`` also Routh's ``ki_j M_jj < (kd_j + D_j) kp_j`` (the cubic ``m s^3 + (kd + D) s^2
      + kp s + ki``);
    * the acceleration gains of ``computed_torque`` (6.46), ``resolved_acceleration`` (6.49)
      and the inner loops of ``hybrid_force_position`` / ``admittance``: ``kp dt < 2 kd`` and
      ``kd dt < 2`` per axis (``m = 1``), ``kp_null`` / ``k_null`` the same;
    * ``task_pd`` (6.47): the stiffest joint-space mode, ``w^2 = max eig(M^-1 J^T K_p J)``,
      ``w^2 dt < 2 min_j (kd_j + D_j) / M_jj``, and ``kd`` as for the joint laws;
    * every law: ``effort_limit`` no larger than the model's (URDF's) limit of each joint
      (``inf`` = no extra limit).

    The force laws' task stiffness and damping (``impedance``, ``admittance``'s outer loop) are
    not bounded here.  Each reason names the gain, the joint or axis, the value and the bound."""
    from rbd_ros.robot import Robot  # lazy: the robot front, not at the controller's import

    _check_law(law)
    dt = 1.0 / float(rate)
    changed = set(gains) if names is None else set(names)
    joints = list(model.joint_names)
    axes = ["x", "y", "z", "rx", "ry", "rz"]

    def first(name: str, value: np.ndarray, bound: np.ndarray, rule: str, labels: list[str],
              involved: tuple[str, ...] = ()) -> str | None:
        """The reason for the first entry of ``value`` not below ``bound`` (if ``name`` or a
        gain of the bound, ``involved``, is being changed)."""
        bad = np.flatnonzero(~((value < bound) | (value == 0.0)))  # a zero gain feeds nothing back
        if not changed & {name, *involved} or not bad.size:
            return None
        i = int(bad[0])
        return (f"{name} of {'joint' if labels is joints else 'axis'} '{labels[i]}' = {value[i]:.6g} is past "
                f"the discrete-time stability bound {rule} = {bound[i]:.6g} at the {float(rate):g} Hz "
                f"control rate (Jury's test, rbd_ros.control.gains); give a smaller {name}")

    lim = gains.get("effort_limit")
    if lim is not None and "effort_limit" in changed:
        model_lim = np.abs(np.asarray(model.effort_limit, dtype=float))
        arr = np.asarray(lim, dtype=float)
        over = np.flatnonzero(np.isfinite(arr) & (arr > model_lim))
        if over.size:
            i = int(over[0])
            return (f"effort_limit of joint '{joints[i]}' = {arr[i]:.6g} N m is above the model's (URDF's) "
                    f"effort limit {model_lim[i]:.6g} N m: effort_limit can only tighten it "
                    f"(give at most {model_lim[i]:.6g}, or .inf for no extra limit)")
    D = np.abs(np.asarray(model.viscous, dtype=float))
    g = {k: np.asarray(v, dtype=float) for k, v in gains.items()}
    if law in _ACCELERATION_LAWS:
        for p, d in (("kp", "kd"), ("kp_null", "k_null")):
            if p in g and d in g:
                labels = joints if LAW_GAINS[law][d] == JOINT else axes
                reason = (first(d, g[d], np.full(g[d].shape, 2.0 / dt), "2 / dt", labels)
                          or first(p, g[p], 2.0 * g[d] / dt, f"2 {d} / dt", labels, (d,)))
                if reason:
                    return reason
        return None
    if law not in ("pd", "pid", "pd_gravity", "task_pd"):
        return None
    robot = Robot(model)
    n = model.dof
    q = np.clip(np.zeros(n), model.lower, model.upper) if q is None else np.asarray(q, dtype=float).reshape(n)
    M, Minv = mass_matrix_checked(robot, q, what="cannot check the gains against the model")
    kd = g["kd"]
    if not scheduled:
        reason = first("kd", kd, 2.0 / (dt * np.diag(Minv)), "2 / (dt (M^-1)_jj)", joints)
        if reason:
            return reason
    if law == "task_pd":
        J = robot.jacobian(q)
        w2 = float(max(np.linalg.eigvals(Minv @ J.T @ np.diag(g["kp"]) @ J).real.max(), 0.0))
        bound = float(np.min(2.0 * (kd + D) / (dt * np.diag(M))))
        if changed & {"kp", "kd"} and not w2 < bound:
            return (f"kp (task stiffness) {np.round(g['kp'], 6).tolist()} is past the discrete-time "
                    f"stability bound: its stiffest joint-space mode max eig(M^-1 J^T K_p J) = "
                    f"{w2:.6g} 1/s^2 must stay below 2 min_j (kd_j + D_j) / (dt M_jj) = {bound:.6g} at the "
                    f"{float(rate):g} Hz control rate (Jury's test, rbd_ros.control.gains); give a "
                    f"smaller kp")
        return None
    reason = first("kp", g["kp"], 2.0 * (kd + D) / dt, "2 (kd_j + D_j) / dt", joints, ("kd",))
    if reason or law != "pid":
        return reason
    return first("ki", g["ki"], (kd + D) * g["kp"] / np.diag(M), "(kd_j + D_j) kp_j / M_jj", joints,
                 ("kp", "kd"))
