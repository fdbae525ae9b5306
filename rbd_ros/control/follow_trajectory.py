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
    false``), positions outside the joint limits (at the points, or between them: the spline's
    exact extrema, ``JointSpline.limit_violation``), a tolerance other than > 0, 0 or -1, a stamp
    more than ``future_limit`` s ahead (another clock);
  - OLD_HEADER_TIMESTAMP: a non-zero header stamp whose trajectory ends at or before now;

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
from typing import Any

import numpy as np
from numba import njit

from rbd_ros.control.references import from_joint_trajectory, to_seconds
from rbd_ros.control.trajectory import JointSpline

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
        raise GoalError(INVALID_GOAL, f"point 0: time_from_start {tfs[0]} s is negative")
    for k in range(1, len(tfs)):
        if tfs[k] <= tfs[k - 1]:
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


def plan_goal(goal: Any, model: Any, now: float,
              reference_at: Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]],
              running: Any = None, defaults: ToleranceDefaults = ToleranceDefaults(),
              interpolation: str = "auto", future_limit: float = 3600.0) -> "GoalExecution":
    """The ``GoalExecution`` of a ``FollowJointTrajectory`` goal received at control time ``now``,
    or ``GoalError`` with the result code and the reason (module docstring).  ``reference_at(t)``:
    the current reference ``(q, qd, qdd)`` (model order) at ``t``; ``running``: the reference in
    use (it goes on until a future stamp)."""
    joint_names = list(model.joint_names)
    names = _check_joints(goal, joint_names)
    traj = goal.trajectory
    tfs, P, V, A = _read_points(traj, names)
    cols = np.array([joint_names.index(j) for j in names], dtype=np.intp)
    _check_limits(P, names, cols, np.asarray(model.lower, float), np.asarray(model.upper, float))
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

    def full(X: np.ndarray | None, fill: np.ndarray) -> np.ndarray | None:
        """(m, n) in model order; the joints the goal does not name: ``fill``."""
        if X is None:
            return None
        out = np.tile(fill, (m, 1))
        out[:, cols] = X[keep]
        return out

    Pf = full(P, start[0])
    Vf, Af = full(V, np.zeros(n)), full(A, np.zeros(n))
    try:
        spline = JointSpline.from_points(t0, points_at[keep] - t0, Pf, Vf, Af, start=start,
                                         interpolation=interpolation,
                                         previous=running if t0 > now else None)
    except ValueError as exc:
        raise GoalError(INVALID_GOAL, str(exc)) from None
    why = spline.limit_violation(joint_names, model.lower, model.upper, model.velocity_limit)
    if why is not None:
        raise GoalError(INVALID_GOAL, why)
    return GoalExecution(spline, tol, joint_names, points_at)


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
                 point_times: np.ndarray) -> None:
        n = len(joint_names)
        self.spline, self.tol, self.joint_names = spline, tol, joint_names
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
                self.message = (f"Goal successfully reached! {t - self.end_time:.3f} s after the "
                                "trajectory's end")
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

    def point_index(self, t: float) -> int:
        """The index (in the goal's points) of the point being approached at ``t``."""
        return int(min(np.searchsorted(self.point_times, t, side="right"), len(self.point_times) - 1))
