"""FollowJointTrajectory goals without ROS: ros2_control's joint_trajectory_controller semantics.

The action ``control_msgs/action/FollowJointTrajectory`` (what MoveIt's simple controller
manager sends to ``~/follow_joint_trajectory``) is served by a thin ROS adapter
(``rbd_ros.ros.follow_action``); everything it decides lives here, readable from any object with
the goal's fields (duck typing, as ``rbd_ros.control.references``):

* ``plan_goal``: validation, with the result codes of ``FollowJointTrajectory.Result`` and a
  one-line reason (``GoalError``), then the reference (``trajectory.JointSpline``) of a valid goal:

  - INVALID_JOINTS: no joint names, a name twice, a joint this controller does not have, or
    multi-DOF joints (``multi_dof_trajectory``, component tolerances: this arm has none);
  - INVALID_GOAL: no points, a point whose positions / velocities / accelerations are not one
    per joint (velocities and accelerations may be empty in every point), NaN or Inf,
    ``time_from_start`` negative or not strictly increasing, a last point that does not end at
    rest (joint_trajectory_controller's default ``allow_nonzero_velocity_at_trajectory_end:
    false``), positions outside the joint limits at the points, efforts (``read_efforts``) not
    one per joint in every point or none, NaN, or beyond the effort limits, a tolerance other
    than > 0, 0 or -1, a stamp more than ``future_limit`` s ahead (another clock); and a
    reference that leaves a limit anywhere along it (below), naming the time, the joint, the
    quantity, its value and the limit;
  - OLD_HEADER_TIMESTAMP: a non-zero header stamp whose trajectory ends at or before now;

* **limits along the whole trajectory** (issue 37, ``plan_reference``): the interpolated
  reference, not only its points, is checked for position, velocity, acceleration
  (``acceleration_limits``) and effort (inverse dynamics with armature and friction, against
  ``path_limits.EFFORT_MARGIN`` of the effort limits: the rest is the feedback's), by
  ``rbd_ros.control.path_limits.check_path``.  A path outside the position limits is refused;
  a timing that does not fit is refused under ``retime: never``, and otherwise **retimed**
  (``rbd_ros.control.retime``, TOPP-RA under velocity, acceleration and torque limits: the
  same path through the same points, never faster than given; ``always``: every goal, at most
  10 times faster).  A goal with efforts keeps its timing (they were computed for it): refused
  when it does not fit.  ``GoalExecution.plan`` (``Plan``) says what was done, and its
  ``summary()`` goes into the result string; ``goal_time_tolerance`` counts from the retimed
  end;
* **start where the arm is**: a first point at ``time_from_start`` 0 within
  ``START_TOLERANCE`` of the current reference replaces it (joint_trajectory_controller); one
  further away would make the reference jump: refused under ``retime: never`` (with the least
  time it needs at the velocity limits), else **joined** (``join_lead``, ``spline_from_start``):
  the point stays the trajectory's start state (its velocities, or rest), reached from the
  current state by one quintic segment at the velocity limits at its peak (at least
  ``MIN_JOIN``), every later point as much later, and the whole goal is then checked and,
  where needed, retimed from the current state (``~/joint_trajectory`` the same way);
* **planned off the cycle**: a goal stamped 0 starts when its plan is ready: the caller plans
  on a worker from the reference it holds meanwhile, then ``GoalExecution.start_at(t)``
  moves the whole plan to that time, so no part of it is skipped;
* **efforts in points** are carried as a feed-forward (``Plan.efforts``: a piecewise-linear
  reference over the points' times, model order, 0 for joints the goal does not name); the laws
  that can add one are ``FEED_FORWARD_LAWS`` (``takes_efforts``);
* joints in any order; the controller's joints the goal does not name hold where the reference
  is at the start; the trajectory starts at its header stamp (0 = now): a stamp ahead lets the
  running reference go on until then, a stamp behind keeps each point's absolute time
  (``stamp + time_from_start``; points already passed are dropped) and starts now from the
  current reference;
* tolerances (``resolve_tolerance``, joint_trajectory_controller's ``tolerances.hpp``): a goal's
  value > 0 is used, 0 means the default (``ToleranceDefaults``: the controller's parameters),
  -1 means none; a tolerance of 0 is not checked.  The error is ``desired - actual``.  Path
  tolerances (position, velocity) hold from the start to the end of the trajectory, else
  PATH_TOLERANCE_VIOLATED and the arm holds the measured position; after the end the goal
  succeeds once every joint is inside its goal tolerance (position, velocity: the default
  velocity tolerance is ``stopped_velocity``), and fails with GOAL_TOLERANCE_VIOLATED when it is
  not by ``end + goal_time_tolerance`` (0 = no deadline: it waits, as joint_trajectory_controller
  does), holding the measured position.  Acceleration tolerances are accepted but never
  violated: the state has no measured acceleration (the controller's error has none either).
  Messages name the joint, the error and the tolerance;
* ``GoalExecution``: the reference handed to the control cycle (it *is* the joint reference,
  ``evaluate``), which checks the tolerances in the cycle (``watch``: a jitted scan, no
  allocation, never waits: the outcome is written under a try-lock) and keeps the latest sample
  (desired, actual) for the action's feedback; the adapter reads ``code`` / ``message`` at its
  monitor rate and ends a goal with ``finish`` (preempted, canceled), under the same lock.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numba import njit

from rbd_ros.control.path_limits import PathCheck, PathLimits, check_path
from rbd_ros.control.references import from_joint_trajectory, to_seconds
from rbd_ros.control.retime import FASTEST, RETIME, RetimeError
from rbd_ros.control.retime import retime as retime_path
from rbd_ros.control.trajectory import JointSpline, quintic_coefficients

# FollowJointTrajectory.Result.error_code (control_msgs)
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5
#: the outcome of a goal ended by its client (a cancel); its result's error_code is SUCCESSFUL
CANCELED = 1
#: joint_trajectory_controller's result for a goal replaced by a newer one (aborted, INVALID_GOAL)
PREEMPTED = "Current goal preempted by new incoming action."
ERASE = -1.0  # a tolerance of -1: no tolerance
VELOCITY_AT_END = float(np.finfo(np.float32).eps)  # JTC: |v| of the last point above this refused
START_TOLERANCE = 1e-3  # rad or m: a first point at time 0 this close to the reference replaces it
JOIN_SPEED = 1.0  # rad/s or m/s: a joint without a velocity limit is joined at this speed at most
MIN_JOIN = 0.01  # s: the least time a first point at time 0 away from the arm is given
JOIN_PEAK = 1.875  # the peak speed of a rest-to-rest quintic, times its mean: the join's time factor
JOIN_TRIES, JOIN_LONGER = 3, 4.0  # a joined plan that fails: tried again, its join this many times longer
#: the laws that add a goal's point efforts as a feed-forward (``takes_efforts``)
FEED_FORWARD_LAWS = ("computed_torque", "pd_gravity")


class GoalError(ValueError):
    """A goal refused: ``code`` (``INVALID_GOAL`` ...) and the one-line reason (``str``)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ToleranceDefaults:
    """The controller's tolerances where a goal gives 0 (joint_trajectory_controller's
    ``constraints``): path and goal position (0 = not checked), goal velocity
    (``stopped_velocity_tolerance``), ``goal_time`` (s after the end; 0 = no deadline)."""

    path_position: float = 0.0
    goal_position: float = 0.0
    stopped_velocity: float = 0.01
    goal_time: float = 0.0


@dataclass
class Tolerances:
    """Per joint (model order; 0 = not checked) and the goal time (s; 0 = no deadline)."""

    path_position: np.ndarray
    path_velocity: np.ndarray
    goal_position: np.ndarray
    goal_velocity: np.ndarray
    goal_time: float


def resolve_tolerance(default: float, value: float, what: str) -> float:
    """joint_trajectory_controller's ``resolve_tolerance_source``: ``value`` > 0 is used, -1
    erases (0: not checked), 0 keeps ``default``; anything else is an INVALID_GOAL."""
    value = float(value)
    if value > 0.0 and math.isfinite(value):
        return value
    if abs(value - ERASE) < VELOCITY_AT_END:
        return 0.0
    if value == 0.0:
        return float(default)
    raise GoalError(INVALID_GOAL, f"{what} is {value}: a tolerance is > 0, 0 (the default) or -1 (none)")


def goal_tolerances(goal: Any, joint_names: Sequence[str], defaults: ToleranceDefaults) -> Tolerances:
    """The goal's tolerances over the controller's defaults (module docstring)."""
    n = len(joint_names)
    tol = Tolerances(np.full(n, float(defaults.path_position)), np.zeros(n),
                     np.full(n, float(defaults.goal_position)), np.full(n, float(defaults.stopped_velocity)),
                     resolve_tolerance(defaults.goal_time, to_seconds(goal.goal_time_tolerance),
                                       "goal_time_tolerance"))
    for field, position, velocity in (("path_tolerance", tol.path_position, tol.path_velocity),
                                      ("goal_tolerance", tol.goal_position, tol.goal_velocity)):
        for entry in getattr(goal, field):
            if entry.name not in joint_names:
                raise GoalError(INVALID_GOAL, f"{field} names joint '{entry.name}', which this "
                                              f"controller does not have (its joints: {list(joint_names)})")
            j = list(joint_names).index(entry.name)
            position[j] = resolve_tolerance(position[j], entry.position, f"{field} position of {entry.name}")
            velocity[j] = resolve_tolerance(velocity[j], entry.velocity, f"{field} velocity of {entry.name}")
            resolve_tolerance(0.0, entry.acceleration, f"{field} acceleration of {entry.name}")
    return tol


def _check_joints(goal: Any, joint_names: Sequence[str]) -> list[str]:
    """The goal's joint names; GoalError(INVALID_JOINTS) for none, twice, unknown, multi-DOF."""
    multi = goal.multi_dof_trajectory
    if list(multi.joint_names) or list(multi.points) or list(goal.component_path_tolerance) \
            or list(goal.component_goal_tolerance):
        raise GoalError(INVALID_JOINTS, "the goal has multi-DOF joints (multi_dof_trajectory or "
                                        "component tolerances); this arm has single-DOF joints only")
    names = list(goal.trajectory.joint_names)
    if not names:
        raise GoalError(INVALID_JOINTS, "the trajectory names no joints")
    twice = sorted({j for j in names if names.count(j) > 1})
    if twice:
        raise GoalError(INVALID_JOINTS, f"joints named more than once: {twice}")
    unknown = [j for j in names if j not in joint_names]
    if unknown:
        raise GoalError(INVALID_JOINTS, f"unknown joints {unknown}; this controller's joints are "
                                        f"{list(joint_names)}")
    return names


def _read_points(traj: Any, names: list[str]) -> tuple[np.ndarray, np.ndarray, Any, Any]:
    """``(times, positions, velocities, accelerations)`` of the goal's points (goal order);
    GoalError(INVALID_GOAL) for malformed, non-finite or mistimed points."""
    if not list(traj.points):
        raise GoalError(INVALID_GOAL, "the trajectory has no points")
    try:
        _, tfs, P, V, A = from_joint_trajectory(traj)
    except ValueError as exc:
        raise GoalError(INVALID_GOAL, f"malformed points: {exc}") from None
    for field, X in (("time_from_start", tfs), ("positions", P), ("velocities", V), ("accelerations", A)):
        if X is not None and not np.isfinite(X).all():
            k = int(np.flatnonzero(~np.isfinite(X).reshape(len(tfs), -1).all(axis=1))[0])
            where = "" if X.ndim == 1 else f" of {names[int(np.flatnonzero(~np.isfinite(X[k]))[0])]}"
            raise GoalError(INVALID_GOAL, f"point {k}: {field}{where} is {X[k] if X.ndim == 1 else X[k].tolist()}"
                                          " (NaN or Inf)")
    if tfs[0] < 0:
        raise GoalError(INVALID_GOAL, f"point 0: time_from_start {tfs[0]:.9g} s is negative")
    late = np.flatnonzero(np.diff(tfs) <= 0)
    if late.size:
        k = int(late[0]) + 1
        raise GoalError(INVALID_GOAL, f"time_from_start of points {k - 1} and {k} is not strictly "
                                      f"increasing: {tfs[k - 1]:.9g} s then {tfs[k]:.9g} s")
    if V is not None:
        moving = np.flatnonzero(np.abs(V[-1]) > VELOCITY_AT_END)
        if moving.size:
            j = int(moving[0])
            raise GoalError(INVALID_GOAL, f"the last point's velocity of {names[j]} is {V[-1, j]:.6g}, "
                                          "not 0: a trajectory ends at rest")
    return tfs, P, V, A


def _check_limits(P: np.ndarray, names: list[str], cols: np.ndarray, lower: np.ndarray,
                  upper: np.ndarray) -> None:
    """GoalError(INVALID_GOAL) naming the first point position outside its joint's limits."""
    lo, hi = lower[cols], upper[cols]
    bad = (P < lo - 1e-9) | (P > hi + 1e-9)
    if bad.any():
        k, i = (int(x) for x in np.argwhere(bad)[0])
        raise GoalError(INVALID_GOAL, f"point {k}: position {P[k, i]:.6g} of {names[i]} is outside its "
                                      f"limits [{lo[i]:.6g}, {hi[i]:.6g}]")


def read_efforts(traj: Any, names: list[str], limit: np.ndarray) -> np.ndarray | None:
    """The points' ``effort`` (m, len(names)), goal order, or None when no point has one;
    GoalError(INVALID_GOAL) for a size other than one per joint (or none in every point), NaN
    or Inf, or a value beyond the joint's effort limit (``limit``, goal order)."""
    points = traj.points
    if not any(len(getattr(p, "effort", ())) for p in points):
        return None
    rows = [list(getattr(p, "effort", ())) for p in points]
    sizes = {len(r) for r in rows}
    if sizes != {len(names)}:
        k = next(i for i, r in enumerate(rows) if len(r) != len(names))
        raise GoalError(INVALID_GOAL, f"point {k}: {len(rows[k])} efforts for {len(names)} joints: every "
                                      "point needs one effort per joint, or none does")
    E = np.array(rows, dtype=float)
    if not np.isfinite(E).all():
        k, i = (int(x) for x in np.argwhere(~np.isfinite(E))[0])
        raise GoalError(INVALID_GOAL, f"point {k}: effort of {names[i]} is {E[k, i]} (NaN or Inf)")
    over = np.abs(E) > limit
    if over.any():
        k, i = (int(x) for x in np.argwhere(over)[0])
        raise GoalError(INVALID_GOAL, f"point {k}: effort {E[k, i]:.6g} of {names[i]} is beyond its "
                                      f"effort limit {limit[i]:.6g}")
    return E


def takes_efforts(law: str) -> bool:
    """Whether the control law ``law`` (its ``name``) adds a goal's efforts as a feed-forward."""
    return law in FEED_FORWARD_LAWS


def effort_reference(times: np.ndarray, E: np.ndarray, t0: float) -> JointSpline:
    """The points' efforts ``E`` (m, n) at the absolute ``times`` as a piecewise-linear
    reference (joint_trajectory_controller interpolates efforts linearly): from ``t0`` to the
    first point it holds the first point's, after the last it holds the last's."""
    knots, values = np.asarray(times, float), np.asarray(E, float)
    if knots[0] > t0:
        knots, values = np.r_[t0, knots], np.vstack([values[:1], values])
    if len(knots) == 1:
        knots, values = np.r_[knots, knots[0] + 1.0], np.vstack([values, values])
    c = np.zeros((len(knots) - 1, 6, values.shape[1]))
    c[:, 0] = values[:-1]
    c[:, 1] = np.diff(values, axis=0) / np.diff(knots)[:, None]
    return JointSpline(knots, c, kind="linear")


@dataclass
class Plan:
    """How a goal's reference was made (``plan_goal``): ``joined`` (the first point at
    time_from_start 0, away from the arm, reached from the current reference instead),
    ``retimed`` (the given timing did not fit the limits, or ``retime: always``), the given and
    planned durations, the first ``violation`` of the given timing (a string, or ""), the
    whole-path ``check`` of the reference that runs, and the feed-forward ``efforts`` (model
    order, or None)."""

    given_duration: float
    duration: float
    joined: str = ""
    retimed: bool = False
    violation: str = ""
    check: PathCheck | None = None
    efforts: JointSpline | None = None
    time_map: tuple[np.ndarray, np.ndarray] | None = None  # (given times, their new times)

    def new_time(self, t: Any) -> Any:
        """The new time of the path's point that the given timing reached at ``t`` (absolute)."""
        if self.time_map is None:
            return t
        return np.interp(t, *self.time_map)

    def summary(self) -> str:
        """One line for the action's result and feedback (empty when nothing was changed)."""
        parts = [self.joined] if self.joined else []
        if self.retimed:
            why = f" ({self.violation})" if self.violation else ""
            parts.append(f"retimed to {self.duration:.3f} s (given {self.given_duration:.3f} s) under the "
                         f"velocity, acceleration and effort limits{why}")
        return "; ".join(parts)


def plan_reference(spline: JointSpline, limits: PathLimits, retime: str = "when_infeasible",
                   fixed_timing: bool = False) -> tuple[JointSpline, "Plan"]:
    """The reference to run for ``spline`` (model order) under ``limits``, and its ``Plan``:
    checked along its whole length (``path_limits.check_path``); a timing that does not fit is
    refused under ``retime: never`` (or ``fixed_timing``: efforts given for it), else retimed
    by TOPP-RA never faster than given (``retime.retime``); ``always`` retimes every one (at
    most ``retime.FASTEST`` times faster).  A path outside the position limits is refused.
    ``GoalError(INVALID_GOAL)`` (a ``ValueError``) with the reason.  The one planner of every
    joint reference: goals, and (their callers permitting) ``~/joint_trajectory``, the
    bringup's tour and ``~/target_pose``'s joint move."""
    if retime not in RETIME:
        raise ValueError(f"retime must be one of {RETIME}, got '{retime}'")
    given = spline.end_time - spline.start_time
    check = check_path(spline, limits)
    v = check.violation
    if v is not None and (v.quantity == "position" or retime == "never" or fixed_timing):
        why = "" if v.quantity == "position" else " (retime: when_infeasible would slow it down)" \
            if not fixed_timing else "; the goal's efforts are for its own timing, so it is not retimed"
        raise GoalError(INVALID_GOAL, f"{v}{why}")
    if (v is None and retime != "always") or fixed_timing:
        return spline, Plan(given, given, check=check)
    try:
        r = retime_path(spline, limits, slower_only=retime != "always")
    except RetimeError as exc:
        raise GoalError(INVALID_GOAL, f"{v}; and no timing of its path fits: {exc}" if v is not None
                        else str(exc)) from None
    out = r.spline
    out.previous = spline.previous
    plan = Plan(given, r.duration, "", True, "" if v is None else str(v), r.check)
    plan.time_map = (spline.start_time + r.grid_s, r.spline.knots)
    return out, plan


def join_lead(times: np.ndarray, first: np.ndarray, q: np.ndarray, limits: PathLimits, retime: str,
              start_tolerance: float = START_TOLERANCE) -> tuple[float, str]:
    """``(lead, note)`` for the first point (``first``, model order, at ``times[0]`` s) and the
    current reference ``q``.  A first point at time 0 within ``start_tolerance`` replaces the
    start (lead 0, joint_trajectory_controller); one due after ``1 / retime.FASTEST`` of the
    least time its distance needs at the velocity limits is left to the check and the
    retiming (0, "").  A first point at time 0 and
    further away, or due sooner (a point 1 us ahead, the rest of a goal stamped in the past),
    would make the reference jump, or the spline through it leave the limits (its velocity
    there comes from that short time), a path TOPP-RA, which keeps the path, cannot mend:
    ``GoalError`` under ``retime: never`` naming the least time it needs, else it is joined
    from the current state (``spline_from_start``), reached ``JOIN_PEAK`` times that least time
    after the start (a rest-to-rest quintic at the velocity limits at its peak; retimed if the
    torques need more), and every point comes ``lead`` s later (``plan_from_start`` may make it
    longer; it ends the note with the points' delay)."""
    gap = np.abs(first - q)
    i = int(np.argmax(gap))
    if times[0] == 0.0 and gap[i] <= start_tolerance:
        return 0.0, ""
    vmax = limits.velocity
    need = np.where(np.isfinite(vmax), gap / vmax, gap / JOIN_SPEED)
    i = int(np.argmax(need))
    at_speed, name = float(need[i]), limits.names[i]
    if times[0] > 0.0 and times[0] * FASTEST >= at_speed:  # (retiming mends a point this near)
        return 0.0, ""
    when = "time_from_start 0" if times[0] == 0.0 else f"{times[0]:.6g} s after the start"
    if retime == "never":
        if times[0] == 0.0:
            raise GoalError(INVALID_GOAL, f"point 0 is at time_from_start 0 but {gap[i]:.6g} from the current "
                                          f"reference of {name} (start tolerance {start_tolerance:g}): the "
                                          "reference would jump. Give the first point a time_from_start "
                                          f"(at least {at_speed:.3f} s at the velocity limits), or retime: "
                                          "when_infeasible to join it from the current state")
        raise GoalError(INVALID_GOAL, f"point 0 is due {when} but {gap[i]:.6g} from the current reference of "
                                      f"{name}: it needs at least {at_speed:.3f} s at the velocity limits. "
                                      "Give it more time, or retime: when_infeasible to join it from the "
                                      "current state")
    lead = max(JOIN_PEAK * at_speed, MIN_JOIN) - times[0]
    return lead, (f"point 0 ({when}) was {gap[i]:.4g} from the current reference of {name}: "
                  "joined from the current state")


def spline_from_start(t0: float, times: np.ndarray, P: np.ndarray, V: np.ndarray | None, A: np.ndarray | None,
                      start: tuple[np.ndarray, np.ndarray, np.ndarray], joined: bool = False,
                      interpolation: str = "auto", previous: Any = None) -> JointSpline:
    """``JointSpline.from_points`` from the current reference ``start`` at ``t0``.  ``joined``
    (``join_lead``'s lead > 0): the first point is the trajectory's start state (its velocities
    and accelerations, or rest), reached from ``start`` by one quintic segment in ``times[0]``:
    the points from there keep their own shape (as a knot of the spline, the first point got a
    velocity from the join's short time: a cubic through it left the joint limits, a shape
    TOPP-RA, which keeps the path, cannot mend)."""
    if not joined:
        return JointSpline.from_points(t0, times, P, V, A, start=start, interpolation=interpolation,
                                       previous=previous)
    n, d = P.shape[1], float(times[0])
    v1 = np.zeros(n) if V is None else V[0]
    a1 = np.zeros(n) if A is None else A[0]
    q, qd, qdd = (np.asarray(x, dtype=float).reshape(n) for x in start)
    join = quintic_coefficients(q, qd, qdd, P[0], v1, a1, d)[None]  # (1, 6, n)
    if len(times) == 1:
        return JointSpline(np.array([t0, t0 + d]), join, previous=previous, kind="quintic")
    rest = JointSpline.from_points(t0 + d, times - d, P, V, A, interpolation=interpolation)
    return JointSpline(np.r_[t0, rest.knots], np.concatenate([join, rest.coeffs]), previous=previous,
                       kind=rest.kind)


def plan_from_start(t0: float, times: np.ndarray, P: np.ndarray, V: np.ndarray | None, A: np.ndarray | None,
                    start: tuple[np.ndarray, np.ndarray, np.ndarray], lead: float, joined: str,
                    limits: PathLimits, retime: str, interpolation: str = "auto", previous: Any = None,
                    fixed_timing: bool = False) -> tuple[JointSpline, "Plan", float, str]:
    """``(reference, Plan, lead, kind)``: the spline from ``start`` (``spline_from_start``, its
    first point joined when ``lead`` > 0, ``join_lead``) through ``plan_reference``; ``kind``
    the spline's before any retiming.  A joined plan that fails is tried again with a join
    ``JOIN_LONGER`` and ``JOIN_LONGER**2`` times as long (TOPP-RA did not find a timing of a
    join far shorter than the torques allow: G1's wrist, 15 ms for 0.3 rad; 8x was accepted);
    the last failure's ``GoalError`` otherwise.  ``Plan.joined`` says how much later the points
    came."""
    tries = JOIN_TRIES if lead > 0.0 else 1
    for k in range(tries):
        extra = (times[0] + lead) * JOIN_LONGER ** k - times[0] if lead > 0.0 else 0.0
        try:
            spline = spline_from_start(t0, times + extra, P, V, A, start, lead > 0.0, interpolation, previous)
        except ValueError as exc:
            raise GoalError(INVALID_GOAL, str(exc)) from None
        try:
            out, plan = plan_reference(spline, limits, retime, fixed_timing)
        except GoalError:
            if k == tries - 1:
                raise
            continue
        if joined:
            plan.joined = f"{joined}, the points {extra:.3f} s later"
        return out, plan, extra, spline.kind
    raise AssertionError("unreachable")  # pragma: no cover


def plan_goal(goal: Any, model: Any, now: float,
              reference_at: Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]],
              running: Any = None, defaults: ToleranceDefaults = ToleranceDefaults(),
              interpolation: str = "auto", future_limit: float = 3600.0, *,
              retime: str = "when_infeasible", limits: PathLimits | None = None,
              start_tolerance: float = START_TOLERANCE) -> "GoalExecution":
    """The ``GoalExecution`` of a ``FollowJointTrajectory`` goal received at control time ``now``,
    or ``GoalError`` with the result code and the reason (module docstring).  ``reference_at(t)``:
    the current reference ``(q, qd, qdd)`` (model order) at ``t``; ``running``: the reference in
    use (it goes on until a future stamp).  ``retime``: ``never | when_infeasible | always``;
    ``limits``: the ``PathLimits`` to plan under (None: the model's, ``PathLimits.from_model``;
    a controller builds them once, with its ``acceleration_limits``)."""
    if retime not in RETIME:
        raise ValueError(f"retime must be one of {RETIME}, got '{retime}'")
    joint_names = list(model.joint_names)
    names = _check_joints(goal, joint_names)
    traj = goal.trajectory
    tfs, P, V, A = _read_points(traj, names)
    cols = np.array([joint_names.index(j) for j in names], dtype=np.intp)
    _check_limits(P, names, cols, np.asarray(model.lower, float), np.asarray(model.upper, float))
    limits = PathLimits.from_model(model) if limits is None else limits
    E = read_efforts(traj, names, limits.effort_limit[cols])
    stamp = to_seconds(traj.header.stamp)
    if stamp != 0.0 and stamp + tfs[-1] <= now:
        raise GoalError(OLD_HEADER_TIMESTAMP, f"the trajectory stamped {stamp:.6f} s ends at "
                                              f"{stamp + tfs[-1]:.6f} s, not after now ({now:.6f} s)")
    if stamp - now > future_limit:
        raise GoalError(INVALID_GOAL, f"header stamp {stamp:.3f} s is {stamp - now:.0f} s after now "
                                      f"({now:.3f} s): stamped on another clock? Use the states' "
                                      "clock, or 0 to start now")
    tol = goal_tolerances(goal, joint_names, defaults)
    points_at = (stamp if stamp != 0.0 else now) + tfs  # the points' absolute times
    if stamp == 0.0 or stamp >= now:
        t0 = stamp if stamp > now else now
        keep = np.ones(len(tfs), dtype=bool)
    else:  # stamped in the past: the points keep their times; those passed are dropped
        t0 = now
        keep = points_at > now
    start = reference_at(t0)
    n = len(joint_names)
    m = int(keep.sum())
    times = points_at[keep] - t0

    def full(X: np.ndarray | None, fill: np.ndarray) -> np.ndarray | None:
        """(m, n) in model order; the joints the goal does not name: ``fill``."""
        if X is None:
            return None
        out = np.tile(fill, (m, 1))
        out[:, cols] = X[keep]
        return out

    Pf = cast(np.ndarray, full(P, start[0]))  # the positions are always there (from_joint_trajectory)
    Vf, Af = full(V, np.zeros(n)), full(A, np.zeros(n))
    lead, joined = join_lead(times, Pf[0], start[0], limits, retime, start_tolerance)
    previous = running if t0 > now else None
    spline, plan, lead, _ = plan_from_start(t0, times, Pf, Vf, Af, start, lead, joined, limits, retime,
                                            interpolation, previous, fixed_timing=E is not None)
    points_at = points_at + lead
    if plan.retimed:
        points_at = points_at.copy()  # the points' new times (each is a grid point of the path)
        points_at[keep] = plan.new_time(points_at[keep])
    if E is not None:
        Ef = np.zeros((m, n))
        Ef[:, cols] = E[keep]
        plan.efforts = effort_reference(points_at[keep], Ef, t0)
    return GoalExecution(spline, tol, joint_names, points_at, plan)


@njit(cache=True)
def sample_and_check(q_d: np.ndarray, q: np.ndarray, qd_d: np.ndarray, qd: np.ndarray,
                     desired: np.ndarray, actual: np.ndarray, tol_position: np.ndarray,
                     tol_velocity: np.ndarray) -> int:  # pragma: no cover - jitted
    """Keep the sample (``desired = [q_d; qd_d]``, ``actual = [q; qd]``) and return
    ``first_violation`` of it: one call per cycle."""
    for j in range(q.shape[0]):
        desired[0, j], desired[1, j] = q_d[j], qd_d[j]
        actual[0, j], actual[1, j] = q[j], qd[j]
    return first_violation(q_d, q, qd_d, qd, tol_position, tol_velocity)


@njit(cache=True)
def first_violation(q_d: np.ndarray, q: np.ndarray, qd_d: np.ndarray, qd: np.ndarray,
                    tol_position: np.ndarray, tol_velocity: np.ndarray) -> int:  # pragma: no cover
    """The first joint ``j`` with ``|q_d - q| > tol_position`` or ``|qd_d - qd| >
    tol_velocity`` (a tolerance of 0 is not checked), or -1."""
    for j in range(q.shape[0]):
        if tol_position[j] > 0.0 and abs(q_d[j] - q[j]) > tol_position[j]:
            return j
        if tol_velocity[j] > 0.0 and abs(qd_d[j] - qd[j]) > tol_velocity[j]:
            return j
    return -1


class GoalExecution:
    """A goal's joint reference in the control cycle, with its tolerance checks (module
    docstring).  ``code`` is None while the goal runs, then its outcome (``SUCCESSFUL``,
    ``PATH_TOLERANCE_VIOLATED``, ``GOAL_TOLERANCE_VIOLATED``, ``CANCELED`` or
    ``INVALID_GOAL`` for a preempted goal) with ``message``."""

    def __init__(self, spline: JointSpline, tol: Tolerances, joint_names: list[str],
                 point_times: np.ndarray, plan: Plan | None = None) -> None:
        n = len(joint_names)
        self.spline, self.tol, self.joint_names = spline, tol, joint_names
        d = spline.end_time - spline.start_time
        self.plan = plan if plan is not None else Plan(d, d)
        self.start_time, self.end_time = spline.start_time, spline.end_time
        self.point_times = np.asarray(point_times, dtype=float)  # absolute, as the client sent them
        self.code: int | None = None
        self.message = ""
        self.lock = threading.Lock()
        self.holding = False
        self.hold = np.zeros(n)
        # latest cycle: t, desired (q, qd), actual (q, qd) in model order
        self.t = math.nan
        self.desired = np.zeros((2, n))
        self.actual = np.zeros((2, n))
        #: ``() -> str``: "in contact (F N, ...)" or "" (``force_laws.contact_note``; the
        #: loop sets it for a force law): a violation while in contact says compliance yielded
        self.contact: Callable[[], str] | None = None
        #: ``(control time, wall s, points, reference in use)`` of its planning (``ControlLoop``)
        self.took: tuple[float, float, int, Any] | None = None

    def evaluate(self, t: float, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> None:
        """The reference at ``t``: the spline, or the hold after a tolerance violation."""
        if self.holding:
            np.copyto(q, self.hold)
            qd.fill(0.0)
            qdd.fill(0.0)
        else:
            self.spline.evaluate(t, q, qd, qdd)

    def watch(self, t: float, q: np.ndarray, qd: np.ndarray, q_d: np.ndarray, qd_d: np.ndarray) -> None:
        """In the control cycle, after the reference at ``t``: keep the sample, check the
        tolerances (one jitted call; the lock only to write an outcome, and never waited for:
        a busy lock is tried again next cycle)."""
        tol = self.tol
        path = t < self.end_time
        tp, tv = (tol.path_position, tol.path_velocity) if path else (tol.goal_position, tol.goal_velocity)
        j = sample_and_check(q_d, q, qd_d, qd, self.desired, self.actual, tp, tv)
        self.t = t
        if self.code is not None or t < self.start_time:
            return
        if path:
            if j < 0:
                return
        elif j >= 0 and not (tol.goal_time > 0.0 and t - self.end_time > tol.goal_time):
            return  # outside the goal tolerance, still within the goal time: wait
        if not self.lock.acquire(blocking=False):
            return
        try:
            if self.code is not None:
                pass
            elif path:
                self._fail(PATH_TOLERANCE_VIOLATED, "path", j, t, q, qd, q_d, qd_d, tp, tv)
            elif j < 0:
                note = self.plan.summary()
                touch = self.contact() if self.contact is not None else ""
                note = "; ".join(x for x in (note, touch) if x)
                self.message = (f"Goal successfully reached! {t - self.end_time:.3f} s after the "
                                "trajectory's end" + (f" ({note})" if note else ""))
                self.code = SUCCESSFUL
            else:
                self._fail(GOAL_TOLERANCE_VIOLATED, "goal", j, t, q, qd, q_d, qd_d, tp, tv)
        finally:
            self.lock.release()

    def _fail(self, code: int, which: str, j: int, t: float, q: np.ndarray, qd: np.ndarray,
              q_d: np.ndarray, qd_d: np.ndarray, tol_position: np.ndarray,
              tol_velocity: np.ndarray) -> None:
        """End with ``code`` naming joint ``j``; hold the measured position from now on."""
        e_p, e_v = q_d[j] - q[j], qd_d[j] - qd[j]
        if tol_position[j] > 0.0 and abs(e_p) > tol_position[j]:
            what = f"position error {e_p:.6g} (desired - actual) exceeds its {which} tolerance {tol_position[j]:.6g}"
        else:
            what = f"velocity error {e_v:.6g} (desired - actual) exceeds its {which} tolerance {tol_velocity[j]:.6g}"
        when = (f"{t - self.start_time:.3f} s into the trajectory" if which == "path"
                else f"{t - self.end_time:.3f} s after its end (goal_time_tolerance {self.tol.goal_time:g} s)")
        touch = self.contact() if self.contact is not None else ""
        if touch:  # a compliant law gave way to a contact (docs/guides/force-control.md)
            when += f", while {touch}: compliance yielded"
        np.copyto(self.hold, q)
        self.holding = True
        self.message = f"{self.joint_names[j]}: {what}, {when}; holding the measured position"
        self.code = code

    def finish(self, code: int, message: str) -> bool:
        """End the goal from outside the cycle (preempted, canceled); False if it had ended."""
        with self.lock:
            if self.code is not None:
                return False
            self.message = message
            self.code = code
            return True

    def start_at(self, t: float) -> None:
        """Move the whole plan (reference, points, efforts) to start at ``t``: a goal stamped 0
        starts when its plan is ready, not when it was received (call it before the cycle
        gets the goal; the reference at the start must be the one planned from: hold it)."""
        dt = float(t) - self.start_time
        for spline in (self.spline, self.plan.efforts):
            if spline is not None:
                spline.knots = spline.knots + dt
                spline.start_time, spline.end_time = float(spline.knots[0]), float(spline.knots[-1])
        self.start_time, self.end_time = self.spline.start_time, self.spline.end_time
        self.point_times = self.point_times + dt

    def point_index(self, t: float) -> int:
        """The index (in the goal's points) of the point being approached at ``t``."""
        return min(int(np.searchsorted(self.point_times, t, side="right")), len(self.point_times) - 1)
