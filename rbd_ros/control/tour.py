"""The demo tour of ``rbd-ros bringup``: a feasible joint motion for the arm it drives (ROS-free).

``plan_tour(model, q_start)`` returns a ``Tour``: three rest-to-rest quintic segments of
``segment_time`` s each, from the arm's pose out to one side, across to the other and back,
every joint moving at once (alternate joints in opposite directions).  It is checked before it
runs, and changed until it fits:

* **no jump**: it starts at its start, where the arm is (the bringup sends it without a
  point at time 0, so the controller starts it from its own reference, 003 §6 laws see a
  continuous ``q_d``).  A start the user gives (``q_start``) is kept exactly: refused when it
  is outside the limits, below the floor or too heavy to hold, a warning note when it is
  near a singular pose; the default start (zero clipped into the limits) is moved as below;
* **floor**: no guarded point (every MDH frame origin, the tool, and ``points`` such as the
  URDF links' origins) comes within ``FLOOR_MARGIN`` of the plane ``z = floor`` of the base
  link, checked at ``FLOOR_SAMPLES`` poses per segment.  By default (``floor="auto"``,
  ``default_floor``) an arm that stands above its base link's xy-plane at its zero pose (a
  table-mounted arm) gets that plane, one that hangs below it (from a torso) none.  A tour
  through the floor is tried the other way round, then shrunk; the default start is moved
  up;
* **position**: every waypoint stays 5 % of the range inside both limits; a quintic between
  two points at rest is monotone, so the whole tour does;
* **velocity**: the quintic's peak speed is ``15/8`` of the mean, so the widest segment (the
  crossing, ``2 A``) is scaled to ``15/8 * 2 A / T <= margin * v_max``;
* **amplitude**: ``amplitude`` rad for a revolute joint (0.3 of its range at most),
  ``prismatic_amplitude`` m for a prismatic one, then the limits above;
* **away from singularities**: the tool Jacobian (rows of the axes the arm can move,
  positions divided by the arm's length; also its position rows alone) keeps
  ``sigma_min / sigma_max >= KAPPA_MIN`` at the start and along the tour, or the default
  start is moved uphill in that number (random search, then the nearest ring of random
  poses around it with a good one, where that stalls) -- a tour through a singular pose (a stretched arm at q = 0)
  makes the task-space laws switch between inverse-kinematics branches;
* **effort**: the torques the tour needs, ``tau = M q_d'' + h(q_d, q_d') + g(q_d)`` with the
  drives' armature and friction (003 (6.16)-(6.17), RNEA), sampled along it, must stay below
  ``margin`` times the effort limits (the rest is the feedback's).  If gravity alone at the
  start needs more, the start is **moved**: projected descent on ``sum (g_i / tau_max,i)^2``
  (inside the limits) until holding it needs half of that; a default start that had to be
  moved for the floor or a singularity moves on (staying clear of both) to where the whole
  tour needs less; then the amplitude is **shrunk** (by 0.7 per try) until the tour fits,
  and until it passes the check the controller's planner makes of every ``~/joint_trajectory``
  (``path_limits.check_path`` with the same margin: the whole path, finer than these samples),
  so that the controller runs it as planned, not retimed (under the model's own limits).
  No fit -> ``ValueError`` naming the joint and the torques.
  A joint whose dry friction alone needs ``margin`` of its limit (a gripper finger's often
  equals it) is left still, with a note; a failure that gravity and dry friction alone
  cause says that no slower tour helps.

``Tour.notes`` says what was moved, reversed or shrunk and why (nothing when nothing moved).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from rbd_ros.control.gains import free_task_axes
from rbd_ros.control.path_limits import PathLimits, check_path
from rbd_ros.control.trajectory import JointSpline
from rbd_ros.model import PRISMATIC, MdhModel

SAMPLES_PER_SEGMENT = 60
KAPPA_MIN = 0.05  # smallest conditioning sigma_min / sigma_max of the tool Jacobian wanted
PEAK_SPEED = 15.0 / 8.0  # peak / mean speed of a rest-to-rest quintic
FLOOR_MARGIN = 0.02  # m: every guarded point stays this far above the floor
FLOOR_SAMPLES = 200  # poses per segment where the floor is checked


@dataclass
class Tour:
    """``start`` (n) then ``waypoints`` (3, n) reached ``segment_time`` s apart, at rest."""

    start: np.ndarray
    waypoints: np.ndarray
    segment_time: float
    amplitude: np.ndarray  # per joint, rad or m
    peak_torque: np.ndarray  # per joint, what the tour needs (model, N m or N)
    notes: list[str] = field(default_factory=list)
    floor: float | None = None  # m, base link frame: what the tour was kept above (None: nothing)

    @property
    def times(self) -> np.ndarray:
        """Time from the start of each waypoint, s."""
        return self.segment_time * np.arange(1, len(self.waypoints) + 1)

    @property
    def duration(self) -> float:
        return float(self.segment_time * len(self.waypoints))

    def spline(self, t0: float = 0.0):
        """The tour as a ``JointSpline`` (quintic segments, rest at every waypoint) from ``t0``."""

        z = np.zeros_like(self.waypoints)
        n = len(self.start)
        return JointSpline.from_points(t0, self.times, self.waypoints, z, z,
                                       start=(self.start, np.zeros(n), np.zeros(n)))


def inner_limits(model: MdhModel) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.asarray(model.lower, float), np.asarray(model.upper, float)
    span = hi - lo
    ok = np.isfinite(span)
    lo_in = np.where(ok, lo + 0.05 * np.where(ok, span, 0.0), lo)
    hi_in = np.where(ok, hi - 0.05 * np.where(ok, span, 0.0), hi)
    return lo_in, hi_in


def _waypoints(start: np.ndarray, amp: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    signs = np.where(np.arange(len(start)) % 2 == 0, 1.0, -1.0)
    a = np.clip(start + signs * amp, lo, hi)
    b = np.clip(start - signs * amp, lo, hi)
    return np.vstack([a, b, start])


def _required_torque(robot, tour: Tour) -> np.ndarray:
    """``|tau|`` per sample (S, n) of the tour with the drives (armature, viscous, Coulomb)."""
    spline = tour.spline()
    t = np.linspace(0.0, tour.duration, SAMPLES_PER_SEGMENT * len(tour.waypoints) + 1)
    q, qd, qdd = spline.sample(t)
    return np.abs(robot.inverse_dynamics(q, qd, qdd, include_actuators=True))


def _ratios(J: np.ndarray) -> np.ndarray:
    """``sigma_min / sigma_max`` of each matrix of the stack ``J`` (S, m, k) (0 for a zero one)."""
    sv = np.linalg.svd(J, compute_uv=False)  # (S, min(m, k)), descending
    top = sv[:, 0]
    return np.where(top > 0, sv[:, -1] / np.where(top > 0, top, 1.0), 0.0)


def _conditionings(robot, q: np.ndarray, rows: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``sigma_min / sigma_max`` of the scaled tool Jacobian's ``rows`` at each pose of ``q``
    (S, n) (and of its position rows alone, whichever is worse), one batched SVD."""
    J = robot.jacobian(np.atleast_2d(q)) * scale[None, :, None]
    kappa = _ratios(J[:, rows])
    pos = rows[rows < 3]
    return np.minimum(kappa, _ratios(J[:, pos])) if pos.size else kappa


def _conditioning(robot, tour: Tour, rows: np.ndarray, scale: np.ndarray) -> float:
    """Mean of the lowest tenth of ``sigma_min / sigma_max`` of the scaled tool Jacobian over
    the sampled tour (a smooth stand-in for the minimum); of the whole Jacobian or of its
    position rows, whichever is worse (a planar arm tracking x and z only is singular with
    its elbow straight even though its rotation row keeps the whole Jacobian's rank)."""
    t = np.linspace(0.0, tour.duration, 8 * len(tour.waypoints) + 1)
    q, _, _ = tour.spline().sample(t)
    kappa = np.sort(_conditionings(robot, q, rows, scale))
    return float(kappa[: max(1, len(kappa) // 10)].mean())


def _pose_conditioning(robot, q: np.ndarray, rows: np.ndarray, scale: np.ndarray) -> float:
    """``sigma_min / sigma_max`` of the scaled tool Jacobian's ``rows`` at ``q`` (and of its
    position rows alone, whichever is worse)."""
    return float(_conditionings(robot, q, rows, scale)[0])


def _move_start(robot, q: np.ndarray, lo: np.ndarray, hi: np.ndarray, cap: np.ndarray,
                step: float = 0.05, iterations: int = 400) -> np.ndarray | None:
    """The nearest pose downhill from ``q`` where holding it against gravity fits:
    projected descent (inside ``[lo, hi]``, at most ``step`` rad or m per joint per
    iteration, halved when it does not help) on ``f(q) = sum_i (g_i(q) / cap_i)^2`` until
    ``|g(q)| <= cap``; None if it never fits."""
    w = np.where(np.isfinite(cap) & (cap > 0), 1.0 / np.where(np.isfinite(cap), cap, 1.0), 0.0)

    def f(x: np.ndarray) -> float:
        return float(np.sum((robot.gravity(x) * w) ** 2))

    q = np.clip(q, lo, hi)
    fq, h = f(q), 1e-6
    for _ in range(iterations):
        if np.all(np.abs(robot.gravity(q)) <= cap):
            return q
        grad = np.array([(f(q + h * e) - fq) / h for e in np.eye(len(q))])
        size = np.abs(grad).max()
        if size < 1e-15 or step < 1e-4:
            return None
        q_new = np.clip(q - grad * (step / size), lo, hi)
        f_new = f(q_new)
        if f_new < fq:
            q, fq = q_new, f_new
        else:
            step *= 0.5
    return None


# ---- the floor -------------------------------------------------------------------------------
class Guard:
    """The points of the arm kept above a floor: the origin of every MDH frame 1..n, the tool
    and ``points`` (``(name, frame, offset)``: a point fixed in MDH frame ``frame``, 1..n, e.g.
    a URDF link's origin, ``UrdfConversion.link_offsets``)."""

    def __init__(self, robot, points=()) -> None:
        m = robot.model
        n = m.dof
        links = list(m.link_names) if len(m.link_names) == n else list(m.joint_names)
        self.names = [f"link '{links[k]}' (its MDH frame's origin)" for k in range(n)]
        self.names.append(f"the tool '{m.tip_link}'")
        frames = list(range(1, n + 2))  # n + 1: the tool
        offsets = [np.zeros(3)] * (n + 1)
        for name, frame, offset in points:
            self.names.append(f"link '{name}' origin")
            frames.append(int(frame))
            offsets.append(np.asarray(offset, dtype=float).reshape(3))
        self.robot = robot
        self._frames, self._offsets = np.array(frames), np.array(offsets)
        self._tool = np.asarray(m.tool, dtype=float)

    def heights(self, q: np.ndarray) -> np.ndarray:
        """z (m, base link frame) of every point at ``q`` (n,); (S, points) for poses (S, n)."""
        Q = np.atleast_2d(q)
        F = self.robot.link_poses(Q)  # (S, n + 1, 4, 4)
        z = np.concatenate([F[:, :, 2, :], (F[:, -1, 2, :] @ self._tool)[:, None]], axis=1)[:, self._frames]
        h = np.einsum("spj,pj->sp", z[:, :, :3], self._offsets) + z[:, :, 3]  # R_z . o + p_z
        return h if np.ndim(q) == 2 else h[0]


class Floor:
    """The plane ``z = height`` (base link frame) that no point of ``guard`` may come within
    ``margin`` of.  Points no joint can move up or down (on the first joint's vertical axis)
    are left out when they sit on or above the plane (the mount); one below it makes the
    floor impossible (``ValueError``)."""

    def __init__(self, guard: Guard, height: float, margin: float = FLOOR_MARGIN) -> None:
        m = guard.robot.model
        self.guard, self.height, self.margin, self.names = guard, float(height), float(margin), guard.names
        lo, hi = np.clip(m.lower, -np.pi, np.pi), np.clip(m.upper, -np.pi, np.pi)
        rng = np.random.default_rng(1)
        z = np.array([guard.heights(lo + rng.random(m.dof) * (hi - lo)) for _ in range(24)])
        fixed = z.max(axis=0) - z.min(axis=0) < 1e-9
        below = np.flatnonzero(fixed & (z[0] < self.height - 1e-9))
        if below.size:
            k = int(below[0])
            raise ValueError(f"no tour fits above the floor z = {self.height:g} m: {self.names[k]} sits at "
                             f"z = {z[0, k]:.3f} m and no joint moves it up; give a lower --floor")
        self.checked = np.flatnonzero(~fixed)

    def clearance(self, q: np.ndarray) -> tuple[float, int, int]:
        """Over the poses ``q`` (S, n): the least ``z - height - margin`` of a checked point
        (< 0: too low), the point and the pose where it is."""
        z = self.guard.heights(np.atleast_2d(q))[:, self.checked]
        z -= self.height + self.margin
        s, p = np.unravel_index(int(np.argmin(z)), z.shape)
        return float(z[s, p]), int(self.checked[p]), int(s)

    def describe_low(self, q: np.ndarray) -> str:
        """Which point comes lowest along ``q`` and how low."""
        c, p, _ = self.clearance(q)
        return f"{self.names[p]} comes down to z = {c + self.height + self.margin:.3f} m"


def default_floor(guard: Guard) -> float | None:
    """The base link's xy-plane (0) for an arm that stands above it at its zero pose (clipped
    into the limits): every guarded point at most ``tol`` below the plane and some joint
    frame or the tool above it by more (``tol`` = 2 % of the arm's length, at least 1 cm);
    None for an arm that hangs below its base link (from a torso) or lies in the plane.  A
    URDF point off the chain (a camera frame, a finger) does not make an arm that lies in
    its plane (the PR2's arm from its ``torso_lift_link``) a table-mounted one."""
    m = guard.robot.model
    q0 = np.clip(np.zeros(m.dof), m.lower, m.upper)
    h = guard.heights(q0)
    poses = guard.robot.link_poses(q0)
    length = float(np.sum(np.linalg.norm(np.diff(poses[:, :3, 3], axis=0), axis=1)))
    tol = max(0.01, 0.02 * length)
    return 0.0 if h.min() >= -tol and h[: m.dof + 1].max() > tol else None  # n frames + tool


def _dense(tour: Tour, per_segment: int = FLOOR_SAMPLES) -> np.ndarray:
    """The tour's positions every ``1 / per_segment`` of a segment."""
    t = np.linspace(0.0, tour.duration, per_segment * len(tour.waypoints) + 1)
    return tour.spline().sample(t)[0]


def _search_start(robot, start: np.ndarray, amp: np.ndarray, segment_time: float,
                  lo: np.ndarray, hi: np.ndarray, cap: np.ndarray, floor: Floor | None,
                  notes: list[str], step: float = 0.25, iterations: int = 40,
                  rings: int = 8) -> np.ndarray:
    """The default start: ``start``, moved (staying inside ``[lo, hi]`` and with
    ``|g| <= cap``) until the tour from it clears ``floor`` and it and the tour from it have
    the conditioning ``KAPPA_MIN`` (so the stretched, singular zero pose of many arms is
    left); says so in ``notes`` when it moved.  Score: the floor deficit first, then the
    conditioning.  A random search (fixed seed, ``2 n`` directions of ``step`` per
    iteration, the step halved when none helps: at a doubly singular pose, UR elbow and wrist
    both straight, every single-joint derivative is zero); where it stalls short of the goal,
    the best good pose of ``8 n`` drawn at ``step``, ``2 step``, ... (up to ``rings``) from the
    start (the nearest ring that has one), or the best pose seen.  A good start whose full
    tour needs more than ``cap`` then moves on, staying good, to where it needs less
    (``_less_torque``), so the amplitude need not shrink as much."""
    free, _ = free_task_axes(robot, start)
    rows = np.flatnonzero(~free)
    poses = robot.link_poses(start)
    length = float(np.sum(np.linalg.norm(np.diff(poses[:, :3, 3], axis=0), axis=1)))
    scale = np.r_[np.full(3, 1.0 / max(length, 1e-3)), np.ones(3)]

    def score(x: np.ndarray) -> tuple[float, float]:
        tour = Tour(x, _waypoints(x, amp, np.minimum(lo, x), np.maximum(hi, x)), segment_time, amp,
                    np.zeros(len(x)))
        deficit = 0.0
        if floor is not None:
            deficit = max(0.0, -floor.clearance(_dense(tour, 20))[0])
        kappa = 1.0
        if rows.size:
            kappa = min(_conditioning(robot, tour, rows, scale), _pose_conditioning(robot, x, rows, scale))
        return deficit, kappa

    def better(a: tuple[float, float], b: tuple[float, float]) -> bool:
        if a[0] < b[0] - 1e-9:
            return True
        return a[0] <= 1e-9 and b[0] <= 1e-9 and a[1] > b[1]

    def good(s: tuple[float, float]) -> bool:
        return s[0] <= 1e-9 and s[1] >= KAPPA_MIN

    s0 = score(start)
    if good(s0):
        return start
    q, s = _random_search(robot, start.copy(), s0, score, lambda x, sx, sb: better(sx, sb), good, lo, hi, cap,
                          step, 1e-3, iterations, seed=0)
    if not good(s):  # stalled on a plateau: the nearest good pose, ring by ring around the start
        rng = np.random.default_rng(2)
        for ring in np.arange(1, rings + 1) * step:
            fits = []
            for d in rng.standard_normal((8 * len(q), len(q))):
                x = np.clip(start + d * (ring / np.abs(d).max()), lo, hi)
                if np.any(np.abs(robot.gravity(x)) > cap):
                    continue
                sx = score(x)
                if good(sx):
                    fits.append((sx[1], x, sx))
                elif better(sx, s):
                    q, s = x, sx
            if fits:
                _, q, s = max(fits, key=lambda f: f[0])
                break
    polished = q
    if good(s):  # a good start whose full tour needs more torque than the cap: less, staying good
        polished = _less_torque(robot, q, amp, segment_time, lo, hi, cap, lambda x: good(score(x)))
    torque_moved = polished is not q
    q = polished
    moved = float(np.abs(q - start).max())
    if moved > 0:
        why = []
        if s0[0] > 1e-9:
            f = cast(Floor, floor)  # a deficit: there is a floor (score)
            why.append(f"the tour from it came {s0[0]:.3f} m below the floor z = {f.height:g} m "
                       f"+ {f.margin:g} m" + (f", {s[0]:.3f} m now" if s[0] > 1e-9 else ""))
        if s0[1] < KAPPA_MIN:
            why.append(f"it is near a singular pose (tool Jacobian conditioning {s0[1]:.3f} -> "
                       f"{s[1]:.3f} at the start and along the tour)")
        if torque_moved:
            why.append("then on to where the whole tour needs less torque")
        unit = "rad or m" if np.any(np.asarray(robot.model.joint_type) == PRISMATIC) else "rad"
        notes.append(f"start moved by up to {moved:.2f} {unit}: " + "; ".join(why))
    elif s0[1] < KAPPA_MIN:
        notes.append(f"the tour stays near a singular pose (tool Jacobian conditioning {s0[1]:.3f}); "
                     "no better start found nearby")
    return q


def _torque_excess(robot, x: np.ndarray, amp: np.ndarray, segment_time: float, lo: np.ndarray,
                   hi: np.ndarray, cap: np.ndarray) -> float:
    """How far the full tour from ``x`` needs more than ``cap``: ``max(tau / cap) - 1`` (<= 0 fits)."""
    tour = Tour(x, _waypoints(x, amp, np.minimum(lo, x), np.maximum(hi, x)), segment_time, amp,
                np.zeros(len(x)))
    tau = _required_torque(robot, tour)
    ratio = np.where(cap > 0, tau / np.where(cap > 0, cap, 1.0), np.where(tau > 0, np.inf, 0.0))
    return float(np.max(ratio)) - 1.0


def _less_torque(robot, q: np.ndarray, amp: np.ndarray, segment_time: float, lo: np.ndarray,
                 hi: np.ndarray, cap: np.ndarray, keeps, step: float = 0.25,
                 iterations: int = 12) -> np.ndarray:
    """``q`` moved (random search as in ``_search_start``, fixed seed) to where the full tour
    needs less torque beyond ``cap``, only through poses ``keeps(x)`` accepts (floor and
    conditioning still good); ``q`` itself when its tour already fits."""
    def excess(x: np.ndarray) -> float:
        return _torque_excess(robot, x, amp, segment_time, lo, hi, cap)

    q, _ = _random_search(robot, q, excess(q), excess, lambda x, ex, e_best: ex < e_best and keeps(x),
                          lambda e: e <= 0, lo, hi, cap, step, 0.02, iterations, seed=4)
    return q  # the same q back when none helps


def _random_search(robot, q: np.ndarray, s, score, improves, done, lo: np.ndarray, hi: np.ndarray,
                   cap: np.ndarray, step: float, min_step: float, iterations: int, seed: int) -> tuple:
    """Random search from ``q`` (score ``s = score(q)``), for ``_search_start`` and ``_less_torque``:
    each iteration draws ``2 n`` directions (fixed ``seed``) scaled to ``step`` in the largest
    joint, clipped into ``[lo, hi]``; of the poses that hold ``|g| <= cap`` it moves to the best
    one ``improves(x, score(x), best so far)`` accepts, or halves ``step`` when none; until
    ``done(s)``, ``step < min_step`` or ``iterations``.  Returns ``(q, s)``."""
    rng = np.random.default_rng(seed)
    for _ in range(iterations):
        if done(s) or step < min_step:
            break
        best, s_best = None, s
        for d in rng.standard_normal((2 * len(q), len(q))):
            x = np.clip(q + d * (step / np.abs(d).max()), lo, hi)
            if np.any(np.abs(robot.gravity(x)) > cap):
                continue
            sx = score(x)
            if improves(x, sx, s_best):
                best, s_best = x, sx
        if best is None:
            step *= 0.5
        else:
            q, s = best, s_best
    return q, s


def _given_start(robot, model: MdhModel, q_start, cap: np.ndarray, lim: np.ndarray,
                 effort_margin: float, floor: Floor | None, notes: list[str]) -> np.ndarray:
    """A start the user gave, kept exactly: refused (``ValueError`` naming the joint or the
    point) outside the joint limits, below the floor or where holding it against gravity
    needs more than ``cap``; a note when it is near a singular pose."""
    n = model.dof
    q = np.asarray(q_start, dtype=float).reshape(n)
    if not np.isfinite(q).all():
        raise ValueError(f"the start must be finite numbers, got {q.tolist()}")
    out = np.flatnonzero((q < model.lower - 1e-12) | (q > model.upper + 1e-12))
    if out.size:
        i = int(out[0])
        raise ValueError(f"the start puts joint '{model.joint_names[i]}' at {q[i]:g}, outside its "
                         f"limits [{model.lower[i]:g}, {model.upper[i]:g}]")
    if floor is not None:
        c, p, _ = floor.clearance(q)
        if c < 0:
            raise ValueError(f"no tour fits from the given start: {floor.names[p]} is at z = "
                             f"{c + floor.height + floor.margin:.3f} m, not {floor.margin:g} m above "
                             f"the floor z = {floor.height:g} m; give a higher start or a lower --floor")
    g = np.abs(robot.gravity(q))
    if np.any(g > cap):
        i = int(np.argmax(g / cap))
        raise ValueError(f"no tour fits from the given start: holding joint '{model.joint_names[i]}' "
                         f"against gravity there needs {g[i]:.1f} N m, more than {effort_margin:.0%} "
                         f"of its effort limit {lim[i]:g}")
    rows = np.flatnonzero(~free_task_axes(robot, q)[0])
    if rows.size:
        poses = robot.link_poses(q)
        length = float(np.sum(np.linalg.norm(np.diff(poses[:, :3, 3], axis=0), axis=1)))
        scale = np.r_[np.full(3, 1.0 / max(length, 1e-3)), np.ones(3)]
        kappa = _pose_conditioning(robot, q, rows, scale)
        if kappa < KAPPA_MIN:
            notes.append(f"warning: the given start is near a singular pose (tool Jacobian "
                         f"conditioning {kappa:.3f} < {KAPPA_MIN}); kept as given")
    return q


def plan_tour(model: MdhModel, q_start: np.ndarray | None = None, segment_time: float = 2.0,
              amplitude: float = 0.5, prismatic_amplitude: float = 0.1, effort_margin: float = 0.7,
              velocity_margin: float = 0.8, tries: int = 12, floor: float | str | None = "auto",
              points=()) -> Tour:
    """A tour that fits ``model``; see the module docstring.  ``q_start``: the start, kept
    exactly (None: zero clipped into the limits, moved to fit).  ``floor``: the height (m,
    base link frame) no guarded point may come within ``FLOOR_MARGIN`` of; ``"auto"``
    (``default_floor``) or None (no floor).  ``points``: more guarded points, ``(name,
    frame, offset)`` (``Floor``).  ``ValueError`` when none fits, with the reason."""
    from rbd_ros.robot import Robot  # lazy: the robot front (50 ms of import)

    if not (np.isfinite(segment_time) and segment_time > 0):
        raise ValueError(f"segment time must be a positive number of seconds, got {segment_time}")
    robot = Robot(model)
    n = model.dof
    notes: list[str] = []
    lo_in, hi_in = inner_limits(model)
    if isinstance(floor, str):
        if floor != "auto":
            raise ValueError(f"floor must be a height in m, 'auto' or None, got '{floor}'")
        floor = default_floor(Guard(robot, points))
    elif floor is not None and not np.isfinite(floor):
        raise ValueError(f"floor must be a finite height in m, got {floor}")
    guard = None if floor is None else Floor(Guard(robot, points), float(floor))
    lim = np.abs(np.asarray(model.effort_limit, dtype=float))
    none = np.flatnonzero(lim == 0)
    if none.size:  # a drive that can exert nothing moves nothing: say why, not "needs 0.0 N m"
        names = [model.joint_names[i] for i in none]
        raise ValueError(f"no tour fits: the URDF gives joint(s) {names} no effort limit (effort=0 in "
                         f"their <limit>), so no torque may move them; give the real limits in N m "
                         f"(<limit effort=\"...\"/>, or effort_limit in a model file), or lock the joints "
                         f"(urdf2mdh --lock {names[0]}=0)")
    cap = effort_margin * lim  # inf where there is no limit
    prismatic = np.asarray(model.joint_type) == PRISMATIC
    span = np.asarray(model.upper, float) - np.asarray(model.lower, float)
    amp = np.where(prismatic, prismatic_amplitude, amplitude).astype(float)
    amp = np.minimum(amp, np.where(np.isfinite(span), 0.3 * span, np.inf))
    vmax = np.abs(np.asarray(model.velocity_limit, dtype=float))
    v_amp = velocity_margin * vmax * segment_time / (2.0 * PEAK_SPEED)
    if np.any(amp > v_amp):
        slow = [model.joint_names[i] for i in np.flatnonzero(amp > v_amp)]
        notes.append(f"amplitude of {slow} reduced for their velocity limits")
        amp = np.minimum(amp, v_amp)
    amp = _still_for_friction(model, amp, cap, effort_margin, notes)
    if q_start is not None:
        start = _given_start(robot, model, q_start, cap, lim, effort_margin, guard, notes)
    else:
        start = np.clip(np.zeros(n), model.lower, model.upper)
        g0 = np.abs(robot.gravity(start))
        if np.any(g0 > cap):
            i = int(np.argmax(g0 / cap))
            moved = _move_start(robot, start, model.lower, model.upper, 0.5 * cap)
            if moved is None:
                raise ValueError(f"no tour fits: holding joint '{model.joint_names[i]}' against "
                                 f"gravity needs {g0[i]:.1f} N m, more than {effort_margin:.0%} of its "
                                 f"effort limit {lim[i]:g}, and no pose near the start needs half of that")
            notes.append(f"start moved by up to {np.abs(moved - start).max():.2f} rad: holding "
                         f"'{model.joint_names[i]}' at the start needs {g0[i]:.1f} N m > "
                         f"{effort_margin:.0%} of its limit {lim[i]:g}")
            start = moved
        start = _search_start(robot, start, amp, float(segment_time), lo_in, hi_in, cap, guard, notes)
        if guard is not None and guard.clearance(start)[0] < 0:
            raise ValueError(f"no tour fits above the floor z = {guard.height:g} m: no start found with "
                             f"every point {guard.margin:g} m above it (at the best, "
                             f"{guard.describe_low(start)}); give a lower --floor")
    first = amp.copy()
    lo_w, hi_w = np.minimum(lo_in, start), np.maximum(hi_in, start)
    # what ~/joint_trajectory's planner checks (path_limits.check_path, finer than the samples
    # above): a tour it passes is run as planned, never retimed (under the model's limits)
    limits = PathLimits.from_model(model, effort_margin=effort_margin, robot=robot)
    low, shrunk_for = "", set()
    for attempt in range(tries):
        for flip in (1.0, -1.0):  # the other way round when the first goes through the floor
            tour = Tour(start, _waypoints(start, flip * amp, lo_w, hi_w), float(segment_time),
                        amp.copy(), np.zeros(n), notes)
            tau = _required_torque(robot, tour).max(axis=0)
            tour.peak_torque = tau
            planned = check_path(tour.spline(), limits).violation  # the controller's own check
            if np.any(tau > cap) or planned is not None:
                low = ""
                shrunk_for.add(f"{effort_margin:.0%} of the effort limits" if planned is None
                               else f"the controller's planner (its {planned.quantity} limits)")
                break  # the other direction needs the same torques, near enough: shrink
            if guard is not None:
                q = _dense(tour)
                if guard.clearance(q)[0] < 0:
                    low = guard.describe_low(q)
                    shrunk_for.add(f"the floor z = {guard.height:g} m")
                    continue
            if attempt:
                notes.append(f"amplitude shrunk to {amp.max() / max(first.max(), 1e-12):.0%} "
                             f"so the tour fits {' and '.join(sorted(shrunk_for))}")
            if flip < 0:
                notes.append("tour reversed (the other way round first) to stay above the floor")
            tour.floor = None if guard is None else guard.height
            return tour
        amp = 0.7 * amp
    if low:
        guard = cast(Floor, guard)  # low is set only below a floor
        raise ValueError(f"no tour fits above the floor z = {guard.height:g} m (+ {guard.margin:g} m): "
                         f"{low} even on the smallest tour tried from {np.round(start, 3).tolist()}; "
                         "give a start farther from the floor (--start) or a lower --floor")
    i = int(np.argmax(tau / cap))
    hold = float(np.abs(robot.gravity(_dense(tour, 20))[:, i]).max() + abs(model.coulomb[i]))
    fix = "try a longer --segment-time"
    if hold > cap[i]:  # gravity and dry friction need no speed: a slower tour needs them too
        fix = (f"its dry friction and gravity alone need {hold:.1f} N m, which no slower tour "
               "avoids: end the chain before it (--tip-link) or give a start where it is lighter")
    raise ValueError(f"no tour fits: joint '{model.joint_names[i]}' needs {tau[i]:.1f} N m along "
                     f"even the smallest tour tried, more than {effort_margin:.0%} of its effort "
                     f"limit {lim[i]:g}; {fix}")


def _still_for_friction(model: MdhModel, amp: np.ndarray, cap: np.ndarray, effort_margin: float,
                        notes: list[str]) -> np.ndarray:
    """``amp`` with 0 for every joint whose dry friction alone needs at least ``cap`` (003
    (6.16): ``Tc sign(qd)`` at any speed, so no smaller or slower tour moves it within the
    margin; a gripper's finger joint often has ``Tc`` = its effort limit): the tour leaves it
    still (``sign(0) = 0``) and says so in ``notes``."""
    coul = np.abs(np.asarray(model.coulomb, dtype=float))
    still = np.flatnonzero((coul >= cap) & (amp > 0))
    if still.size == 0:
        return amp
    names = [model.joint_names[i] for i in still]
    if np.all((amp == 0) | ((coul >= cap) & (amp > 0))):
        raise ValueError(f"no tour fits: the dry friction of {names} is at least {effort_margin:.0%} "
                         "of their effort limits and no other joint moves; check the URDF's "
                         "<dynamics friction> against its <limit effort>")
    notes.append(f"joints {names} left still: their dry friction {coul[still].tolist()} "
                 f"is at least {effort_margin:.0%} of their effort limits {(cap[still] / effort_margin).tolist()}; "
                 "no tour moves them within that margin")
    out = amp.copy()
    out[still] = 0.0
    return out


# ---- mobile bases: a figure eight for the base while the arm tours --------------------------
@dataclass
class FigureEight:
    """A base path for ``rbd-ros bringup`` on a mobile base: a figure eight (lemniscate of
    Gerono, ``c(s) = a [sin s, sin s cos s]``, ``s`` in ``[0, 2 pi]``) turned by ``-pi/4`` so
    it leaves ``start`` heading along the base's x axis, with the heading along the path
    (``yaw = atan2(c'_y, c'_x)``, so a differential drive can follow it: no side velocity).
    ``s(t)`` is a rest-to-rest quintic over ``duration``: the base starts and ends at rest at
    ``start`` (``[x, y, yaw]``, world), the peak speed is ``15/8`` of the mean.  ``|c'|`` never
    vanishes (``cos s`` and ``cos 2s`` are never both zero), so the heading is smooth.

    ``evaluate(t, p, pd, pdd)`` writes the world pose ``[x, y, yaw]`` and its first two time
    derivatives (a ``JointReference`` over three coordinates); heading derivatives from the
    curvature ``kappa(s) = (x'y'' - y'x'') / |c'|^2``: ``yaw' = kappa s'``,
    ``yaw'' = kappa_s s'^2 + kappa s''``."""

    start: np.ndarray
    size: float = 0.8  # a (m): the eight spans 2a along its axis and a across
    duration: float = 12.0
    t0: float = 0.0

    def __post_init__(self) -> None:
        self.start = np.asarray(self.start, dtype=float).reshape(3)
        if not (np.isfinite(self.size) and self.size > 0 and np.isfinite(self.duration) and self.duration > 0):
            raise ValueError(f"figure eight needs a positive size and duration, got {self.size}, {self.duration}")
        self._turn = self.start[2] - np.pi / 4  # c'(0) = a [1, 1] points at +45 deg

    def _s(self, t: float) -> tuple[float, float, float]:
        """``s, s', s''`` of the rest-to-rest quintic ``2 pi (10 r^3 - 15 r^4 + 6 r^5)``."""
        T = self.duration
        r = min(max((t - self.t0) / T, 0.0), 1.0)
        k = 2.0 * np.pi
        return (k * (10 * r**3 - 15 * r**4 + 6 * r**5), k * (30 * r**2 - 60 * r**3 + 30 * r**4) / T,
                k * (60 * r - 180 * r**2 + 120 * r**3) / T**2)

    def evaluate(self, t: float, p: np.ndarray, pd: np.ndarray, pdd: np.ndarray) -> None:
        a = self.size
        s, sd, sdd = self._s(t)
        ss, cs, s2, c2 = np.sin(s), np.cos(s), np.sin(2 * s), np.cos(2 * s)
        c = a * np.array([ss, 0.5 * s2])  # curve and its s-derivatives, eight frame
        c1 = a * np.array([cs, c2])
        c2v = a * np.array([-ss, -2 * s2])
        c3 = a * np.array([-cs, -4 * c2])
        n2 = c1 @ c1
        cross = c1[0] * c2v[1] - c1[1] * c2v[0]
        kappa = cross / n2
        kappa_s = (c1[0] * c3[1] - c1[1] * c3[0]) / n2 - 2.0 * cross * (c1 @ c2v) / n2**2
        ct, st = np.cos(self._turn), np.sin(self._turn)
        R = np.array([[ct, -st], [st, ct]])
        p[:2] = self.start[:2] + R @ c
        pd[:2] = R @ c1 * sd
        pdd[:2] = R @ (c2v * sd**2 + c1 * sdd)
        p[2] = np.arctan2(c1[1], c1[0]) + self._turn
        p[2] = self.start[2] + np.angle(np.exp(1j * (p[2] - self.start[2])))  # near the start's yaw
        pd[2] = kappa * sd
        pdd[2] = kappa_s * sd**2 + kappa * sdd

    def sample(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(p, pd, pdd)``, each ``(len(t), 3)``, with the heading unwrapped."""
        out = np.zeros((3, len(t), 3))
        for k, tk in enumerate(t):
            self.evaluate(float(tk), out[0, k], out[1, k], out[2, k])
        out[0, :, 2] = np.unwrap(out[0, :, 2])
        return out[0], out[1], out[2]

    @property
    def end_time(self) -> float:
        return self.t0 + self.duration


def plan_mobile_tour(model: MdhModel, q_start: np.ndarray | None = None, segment_time: float = 4.0,
                     size: float = 0.8, **arm: Any) -> tuple[Tour, FigureEight]:
    """The bringup tour of a mobile manipulator: the arm's ``plan_tour`` (three segments of
    ``segment_time``) and a figure eight of ``size`` m for the base over the same time, from
    the origin heading along x.  ``q_start`` is the arm's part; the arm's tour is planned on the
    arm fixed to its base (the base's motion adds inertial loads the feedback carries)."""
    fixed = model.replace(base_type="fixed", wheel_radius=0.0, wheel_separation=0.0, wheel_joints=(),
                          wheel_spin_inertia=0.0)
    tour = plan_tour(fixed, q_start, segment_time=segment_time, **arm)
    eight = FigureEight(np.zeros(3), size, tour.duration)
    tour.notes.append(f"base: figure eight {2 * size:g} m x {size:g} m in {tour.duration:g} s")
    return tour, eight
