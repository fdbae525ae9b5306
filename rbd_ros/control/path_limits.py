"""Limits along a whole joint trajectory, not only at its points (issue 37; ROS-free).

``check_path(spline, limits)`` samples a ``trajectory.JointSpline`` and checks, at every sample
and every joint: position against ``[lower, upper]``, velocity, acceleration (``|q_d''|``, the
``acceleration_limits`` a controller is given: the URDF has none) and **effort**: the torque
the motion needs, ``tau = M(q) q'' + h(q, q') + g(q)`` with the drives' armature, viscous and
dry friction (003 (5.1), (6.16)-(6.17); the batch RNEA of ``rbd_ros.Robot``, one call for all
samples), against ``effort_margin`` times the effort limits: the rest is the feedback's (as the
bringup tour, ``rbd_ros.control.tour``).

Fine enough, and no finer: a segment ``p(s) = sum c_i s^i`` of duration ``T`` has
``|p^(r)| <= D_r = sum_{i >= r} i!/(i-r)! |c_i| T^(i-r)``, and between samples ``h`` apart a
function leaves the chord of its samples by at most ``max|f''| h^2 / 8``.  So each segment gets
the samples that keep that excess under ``POSITION_TOLERANCE`` for positions, and under
``resolution`` of the limit for velocities (``f'' = p'''``) and accelerations (``f'' =
p''''``).  Effort has no closed-form bound: its excess between samples is estimated by the
second differences of the sampled torque (``|tau_{i-1} - 2 tau_i + tau_{i+1}| / 8``), and the
segments where that exceeds ``resolution`` of the cap are sampled four times finer (twice at
most).  The result (``PathCheck``) says how fine it got: ``effort_resolution``, the largest
estimate left, as a fraction of the cap — well under the feedback's share of the limit.  At
most ``MAX_PER_SEGMENT`` samples per segment and ``MAX_SAMPLES`` in all (a trajectory that
would need more is sampled evenly coarser: 10 000 smooth points need 20 001).

A start state already outside a position or velocity limit (the current reference) may come
back during the first segment, not go further (``JointSpline.limit_violation``'s rule).

``Violation`` names the time, the joint, the quantity, its value and the limit: the peak of the
earliest excursion beyond a limit.  No Python loop per sample or per segment: 10 000 segments x 7 joints are
checked, torques included, in a few tens of milliseconds (``bench/bench_planning.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rbd_ros.algorithm.rnea import rnea_rows_released
from rbd_ros.control.trajectory import JointSpline
from rbd_ros.model import PRISMATIC, MdhModel
from rbd_ros.model.data import empty_workspace

EFFORT_MARGIN = 0.7  # the share of the effort limits a plan may use (the rest: the feedback's)
POSITION_TOLERANCE = 1e-4  # rad or m: the most a position may pass its limit between samples
RESOLUTION = 0.01  # velocity / acceleration / effort: excess between samples, share of the limit
MIN_SAMPLES = 1000  # samples along the whole trajectory at least (the effort needs them)
MAX_PER_SEGMENT = 256
MAX_SAMPLES = 400_000  # along one trajectory at most (memory: ~100 MB of states and torques)
QUANTITIES = ("position", "velocity", "acceleration", "effort")


@dataclass(frozen=True)
class PathLimits:
    """The limits a plan is checked against, per joint in model order (``inf``: none).

    ``effort`` is the cap (``effort_margin * effort_limit``); ``robot`` the ``rbd_ros.Robot``
    whose inverse dynamics give the torques (None: effort not checked)."""

    names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    effort_limit: np.ndarray
    effort_margin: float = EFFORT_MARGIN
    robot: Any = None
    prismatic: np.ndarray | None = None

    @property
    def effort(self) -> np.ndarray:
        return self.effort_margin * self.effort_limit

    @property
    def checks_effort(self) -> bool:
        return self.robot is not None and bool(np.isfinite(self.effort_limit).any())

    @classmethod
    def from_model(cls, model: Any, acceleration_limits: Any = None,
                   effort_margin: float = EFFORT_MARGIN, robot: Any = "auto") -> "PathLimits":
        """From a model (an ``MdhModel``, or anything with ``joint_names``, ``lower``,
        ``upper``, ``velocity_limit`` and optionally ``effort_limit``).  ``acceleration_limits``:
        one per joint or one for all (rad/s^2 or m/s^2; ``inf`` or 0: none), else the model's
        ``acceleration_limit`` if it has one.  ``robot="auto"``: a private ``Robot`` of an
        ``MdhModel`` (its own workspace: safe on a planning thread), None for other models."""
        names = tuple(model.joint_names)
        n = len(names)

        def per_joint(value: Any, what: str) -> np.ndarray:
            x = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy() if np.size(value) in (1, n) \
                else None
            if x is None:
                raise ValueError(f"{what} must be one value or one per joint ({n}), got {np.size(value)}")
            if np.isnan(x).any() or (x < 0).any():
                raise ValueError(f"{what} must be >= 0 (0 or inf: none), got {x.tolist()}")
            return np.where(x > 0, x, np.inf)

        acc = getattr(model, "acceleration_limit", None) if acceleration_limits is None else acceleration_limits
        effort = getattr(model, "effort_limit", None)
        if not (0.0 < float(effort_margin) <= 1.0):
            raise ValueError(f"effort_margin must be in (0, 1] (the share of the effort limits a plan "
                             f"may use), got {effort_margin}")
        if isinstance(robot, str):

            robot = None
            if isinstance(model, MdhModel) and effort is not None and np.isfinite(effort).any():
                from rbd_ros.robot import Robot  # lazy: the robot front, not at the planner's import

                robot = Robot(model)
        jt = getattr(model, "joint_type", None)
        prismatic = None
        if jt is not None:

            prismatic = np.asarray(jt) == PRISMATIC
        return cls(names, np.asarray(model.lower, float).copy(), np.asarray(model.upper, float).copy(),
                   per_joint(np.abs(np.asarray(model.velocity_limit, float)), "velocity limits"),
                   per_joint(np.inf if acc is None else acc, "acceleration_limits"),
                   per_joint(np.inf if effort is None else np.abs(np.asarray(effort, float)), "effort limits"),
                   float(effort_margin), robot, prismatic)

    def torques(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """``tau`` (N, n) of ``robot`` at each row, the drives included (``inverse_dynamics(...,
        include_actuators=True)``).  A fixed base runs ``rnea.rnea_rows_released`` on a
        workspace of this call: without the GIL, so that the control cycle's thread runs while
        a long trajectory's torques are computed (a 3000-point goal's check and retiming held
        it in stretches of tens of ms), and safe beside any other call on the same robot.
        ``ValueError`` if a torque is not finite."""
        robot = self.robot
        mp = getattr(getattr(robot, "data", None), "mp", None)
        if getattr(robot, "base_type", None) != "fixed" or mp is None:
            return robot.inverse_dynamics(q, qd, qdd, include_actuators=True)
        q, qd, qdd = (np.ascontiguousarray(x, dtype=float) for x in (q, qd, qdd))
        n = len(self.names)
        if not (q.ndim == 2 and q.shape[1] == n and q.shape == qd.shape == qdd.shape):
            raise ValueError(f"q, qd, qdd must have one shape (N, {n}), got {q.shape}, {qd.shape}, {qdd.shape}")
        tau = np.empty_like(q)
        rnea_rows_released(mp, empty_workspace(n), 0, len(q), q, qd, qdd, np.zeros(6), False, True, tau)
        if not np.isfinite(tau).all():
            k = int(np.flatnonzero(~np.isfinite(tau).all(axis=1))[0])
            raise ValueError(f"the inverse dynamics along the path is not finite (sample {k}: q = {q[k].tolist()}, "
                             f"qd = {qd[k].tolist()}, qdd = {qdd[k].tolist()})")
        return tau

    def unit(self, j: int, quantity: str) -> str:
        """The unit of ``quantity`` for joint ``j``."""
        if self.prismatic is None:  # (a model without joint types)
            return {"position": "rad or m", "velocity": "rad/s or m/s", "acceleration": "rad/s^2 or m/s^2",
                    "effort": "N m or N"}[quantity]
        base, effort = ("m", "N") if self.prismatic[j] else ("rad", "N m")
        return {"position": base, "velocity": f"{base}/s", "acceleration": f"{base}/s^2",
                "effort": effort}[quantity]


@dataclass(frozen=True)
class Violation:
    """A limit the trajectory passes: at ``t`` (absolute), ``t - start`` into the trajectory."""

    t: float
    start: float
    joint: str
    quantity: str
    value: float
    limit: float
    unit: str
    effort_limit: float = math.nan  # the effort limit itself (quantity "effort")

    def __str__(self) -> str:
        what = f"its limit {self.limit:.6g} {self.unit}"
        if self.quantity == "effort":
            what = (f"the {self.limit:.6g} {self.unit} a plan may use ({self.limit / self.effort_limit:.0%} of "
                    f"its effort limit {self.effort_limit:.6g} {self.unit}; the rest is the feedback's)")
        return (f"the {self.quantity} of {self.joint} reaches {self.value:.6g} {self.unit} at t = "
                f"{self.t - self.start:.4f} s into the trajectory, beyond {what}")


@dataclass
class PathCheck:
    """What ``check_path`` found: the earliest ``violation`` (None: the trajectory fits),
    the number of ``samples``, the peak ``|tau|`` per joint (model order; zeros when effort is
    not checked), the largest effort excess between samples left (``effort_resolution``, a
    share of the cap) and the samples themselves (``t``, ``tau``) for plots."""

    violation: Violation | None
    samples: int
    peak_effort: np.ndarray
    effort_resolution: float = 0.0
    t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    tau: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


def derivative_bounds(spline: JointSpline, order: int) -> np.ndarray:
    """``D_r`` (m, n): ``|p^(r)(s)| <= D_r`` on each segment (module docstring)."""
    c = np.abs(spline.coeffs)  # (m, 6, n)
    T = np.diff(spline.knots)[:, None]
    out = np.zeros((c.shape[0], c.shape[2]))
    for i in range(order, 6):
        out += math.factorial(i) / math.factorial(i - order) * c[:, i] * T ** (i - order)
    return out


def _counts(spline: JointSpline, limits: PathLimits, resolution: float, min_samples: int) -> np.ndarray:
    """Samples per segment (module docstring)."""
    T = np.diff(spline.knots)
    need = np.ones_like(T)
    for order, lim in ((2, np.where(np.isfinite(limits.lower) | np.isfinite(limits.upper), 1.0, np.inf)),
                       (3, limits.velocity), (4, limits.acceleration)):
        finite = np.isfinite(lim)
        if not finite.any():
            continue
        tol = POSITION_TOLERANCE if order == 2 else resolution * lim[finite]
        D = derivative_bounds(spline, order)[:, finite]
        h = np.sqrt(8.0 * tol / np.maximum(D, 1e-300))  # spacing keeping the excess under tol
        need = np.maximum(need, np.max(T[:, None] / h, axis=1))
    if limits.checks_effort:
        need = np.maximum(need, np.maximum(2.0, T * (min_samples / (spline.end_time - spline.start_time))))
    return _capped(np.clip(np.ceil(need), 1, MAX_PER_SEGMENT).astype(np.intp))


def _capped(counts: np.ndarray) -> np.ndarray:
    """``counts`` scaled down to ``MAX_SAMPLES`` in all, at least one per segment."""
    total = int(counts.sum())
    if total <= MAX_SAMPLES:
        return counts
    return np.maximum(1, (counts * (MAX_SAMPLES / total)).astype(np.intp))


def _first(bad: np.ndarray) -> tuple[int, int] | None:
    """(sample, joint) of the earliest True of ``bad`` (S, n), or None."""
    rows = np.flatnonzero(bad.any(axis=1))
    if rows.size == 0:
        return None
    i = int(rows[0])
    return i, int(np.flatnonzero(bad[i])[0])


def _violation(t: np.ndarray, seg: np.ndarray, x: np.ndarray, low: np.ndarray, high: np.ndarray,
               quantity: str, limits: PathLimits, t0: float, start: np.ndarray | None = None) -> Violation | None:
    """The earliest sample of ``x`` (S, n) outside ``[low, high]``; ``start``: the first
    segment may go back from a start outside, not further (module docstring)."""
    lo = np.broadcast_to(low, x.shape).copy()
    hi = np.broadcast_to(high, x.shape).copy()
    if start is not None:
        first = seg == 0
        lo[first] = np.minimum(lo[first], start)
        hi[first] = np.maximum(hi[first], start)
    over, under = x - hi, lo - x
    hit = _first((over > 1e-9) | (under > 1e-9))
    if hit is None:
        return None
    i, j = hit
    bad = (over[:, j] > 1e-9) | (under[:, j] > 1e-9)
    run = np.flatnonzero(~bad[i:])  # the excursion that starts at i: report its peak
    stop = i + (int(run[0]) if run.size else len(bad) - i)
    i += int(np.argmax(np.maximum(over[i:stop, j], under[i:stop, j])))
    lim = hi[i, j] if over[i, j] > 0 else lo[i, j]
    eff = float(limits.effort_limit[j]) if quantity == "effort" else math.nan
    return Violation(float(t[i]), t0, limits.names[j], quantity, float(x[i, j]),
                     float(lim if quantity == "position" else abs(lim)), limits.unit(j, quantity), eff)


def check_path(spline: JointSpline, limits: PathLimits, resolution: float = RESOLUTION,
               min_samples: int = MIN_SAMPLES, keep_samples: bool = False) -> PathCheck:
    """Check ``spline`` (model order) against ``limits`` along its whole length (module
    docstring); ``keep_samples``: keep ``t`` and ``tau`` in the result."""
    counts = _counts(spline, limits, resolution, min_samples)
    n = spline.dof
    t0 = spline.start_time
    for refine in range(3):
        t, seg, (q, qd, qdd) = spline.segment_samples(counts)
        found = [_violation(t, seg, q, limits.lower, limits.upper, "position", limits, t0, q[0]),
                 _violation(t, seg, qd, -limits.velocity, limits.velocity, "velocity", limits, t0, qd[0]),
                 _violation(t, seg, qdd, -limits.acceleration, limits.acceleration, "acceleration", limits, t0)]
        tau, peak, eff_res = np.zeros((0, n)), np.zeros(n), 0.0
        if limits.checks_effort:
            tau = limits.torques(q, qd, qdd)
            cap = limits.effort
            found.append(_violation(t, seg, tau, -cap, cap, "effort", limits, t0))
            peak = np.abs(tau).max(axis=0)
            smooth = tau - np.sign(qd) * np.asarray(limits.robot.model.coulomb, float)  # (dry friction steps)
            d2 = np.zeros_like(tau)
            d2[1:-1] = np.abs(smooth[:-2] - 2.0 * smooth[1:-1] + smooth[2:]) / 8.0
            d2[1:-1][seg[:-2] != seg[2:]] = 0.0  # across a knot the acceleration may step
            finite = np.isfinite(cap)
            share = np.where(finite, d2 / np.where(finite, cap, 1.0), 0.0).max(axis=1)
            eff_res = float(share.max(initial=0.0))
            coarse = np.unique(seg[share > resolution])
            coarse = coarse[counts[coarse] < MAX_PER_SEGMENT]
            if coarse.size and refine < 2 and not any(found):
                counts[coarse] = np.minimum(4 * counts[coarse], MAX_PER_SEGMENT)
                counts = _capped(counts)
                continue
        hits = sorted((v for v in found if v is not None), key=lambda v: v.t)
        return PathCheck(hits[0] if hits else None, len(t), peak, eff_res,
                         t if keep_samples else np.zeros(0), tau if keep_samples else np.zeros((0, n)))
    raise AssertionError("unreachable")  # pragma: no cover
