"""The demo tour of ``rbd-ros bringup``: a feasible joint motion for the arm it drives (ROS-free).

``plan_tour(model, q_start)`` returns a ``Tour``: three rest-to-rest quintic segments of
``segment_time`` s each, from the arm's pose out to one side, across to the other and back,
every joint moving at once (alternate joints in opposite directions).  It is checked before it
runs, and changed until it fits:

* **no jump**: it starts at ``q_start``, where the arm is (the bringup sends it without a
  point at time 0, so the controller starts it from its own reference, 003 §6 laws see a
  continuous ``q_d``);
* **position**: every waypoint stays 5 % of the range inside both limits; a quintic between
  two points at rest is monotone, so the whole tour does;
* **velocity**: the quintic's peak speed is ``15/8`` of the mean, so the widest segment (the
  crossing, ``2 A``) is scaled to ``15/8 * 2 A / T <= margin * v_max``;
* **amplitude**: ``amplitude`` rad for a revolute joint (0.3 of its range at most),
  ``prismatic_amplitude`` m for a prismatic one, then the limits above;
* **away from singularities**: the tool Jacobian (rows of the axes the arm can move,
  positions divided by the arm's length; also its position rows alone) keeps
  ``sigma_min / sigma_max >= KAPPA_MIN`` along
  the tour, or the start is moved uphill in that number (random search) -- a tour
  through a singular pose (a stretched arm at q = 0) makes the task-space laws switch
  between inverse-kinematics branches;
* **effort**: the torques the tour needs, ``tau = M q_d'' + h(q_d, q_d') + g(q_d)`` with the
  drives' armature and friction (003 (6.16)-(6.17), RNEA), sampled along it, must stay below
  ``margin`` times the effort limits (the rest is the feedback's).  If gravity alone at the
  start needs more, the start is **moved**: projected descent on ``sum (g_i / tau_max,i)^2``
  (inside the limits) until holding it needs half of that; then the amplitude is
  **shrunk** (by 0.7 per try) until the whole tour fits.  No fit -> ``ValueError`` naming the
  joint and the torques.

``Tour.notes`` says what was moved or shrunk and why.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rbd_ros.model import PRISMATIC, MdhModel

SAMPLES_PER_SEGMENT = 60
KAPPA_MIN = 0.05  # smallest conditioning sigma_min / sigma_max of the tool Jacobian wanted
PEAK_SPEED = 15.0 / 8.0  # peak / mean speed of a rest-to-rest quintic


@dataclass
class Tour:
    """``start`` (n) then ``waypoints`` (3, n) reached ``segment_time`` s apart, at rest."""

    start: np.ndarray
    waypoints: np.ndarray
    segment_time: float
    amplitude: np.ndarray  # per joint, rad or m
    peak_torque: np.ndarray  # per joint, what the tour needs (model, N m or N)
    notes: list[str] = field(default_factory=list)

    @property
    def times(self) -> np.ndarray:
        """Time from the start of each waypoint, s."""
        return self.segment_time * np.arange(1, len(self.waypoints) + 1)

    @property
    def duration(self) -> float:
        return float(self.segment_time * len(self.waypoints))

    def spline(self, t0: float = 0.0):
        """The tour as a ``JointSpline`` (quintic segments, rest at every waypoint) from ``t0``."""
        from rbd_ros.control.trajectory import JointSpline

        z = np.zeros_like(self.waypoints)
        n = len(self.start)
        return JointSpline.from_points(t0, self.times, self.waypoints, z, z,
                                       start=(self.start, np.zeros(n), np.zeros(n)))


def _inner_limits(model: MdhModel) -> tuple[np.ndarray, np.ndarray]:
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


def _ratio(J: np.ndarray) -> float:
    sv = np.linalg.svd(J, compute_uv=False)
    return float(sv[-1] / sv[0]) if sv[0] > 0 else 0.0


def _conditioning(robot, tour: Tour, rows: np.ndarray, scale: np.ndarray) -> float:
    """Mean of the lowest tenth of ``sigma_min / sigma_max`` of the scaled tool Jacobian over
    the sampled tour (a smooth stand-in for the minimum); of the whole Jacobian or of its
    position rows, whichever is worse (a planar arm tracking x and z only is singular with
    its elbow straight even though its rotation row keeps the whole Jacobian's rank)."""
    t = np.linspace(0.0, tour.duration, 8 * len(tour.waypoints) + 1)
    q, _, _ = tour.spline().sample(t)
    kappa = np.empty(len(q))
    pos = rows[rows < 3]
    for k, qk in enumerate(q):
        J = robot.jacobian(qk) * scale[:, None]
        kappa[k] = min(_ratio(J[rows]), _ratio(J[pos]) if pos.size else 1.0)
    kappa.sort()
    return float(kappa[: max(1, len(kappa) // 10)].mean())


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


def _well_conditioned_start(robot, start: np.ndarray, amp: np.ndarray, segment_time: float,
                            lo: np.ndarray, hi: np.ndarray, cap: np.ndarray, notes: list[str],
                            step: float = 0.25, iterations: int = 40) -> np.ndarray:
    """``start``, moved uphill in ``_conditioning`` (staying inside ``[lo, hi]`` and with
    ``|g| <= cap``) until the tour from it has ``KAPPA_MIN``; says so in ``notes``.  A random
    search (fixed seed, ``2 n`` directions of ``step`` per iteration, the step halved when
    none helps): at a doubly singular pose (UR elbow and wrist both straight) every
    single-joint derivative is zero."""
    from rbd_ros.control.gains import free_task_axes

    free, _ = free_task_axes(robot, start)
    rows = np.flatnonzero(~free)
    if rows.size == 0:
        return start
    poses = robot.link_poses(start)
    length = float(np.sum(np.linalg.norm(np.diff(poses[:, :3, 3], axis=0), axis=1)))
    scale = np.r_[np.full(3, 1.0 / max(length, 1e-3)), np.ones(3)]

    def kappa(x: np.ndarray) -> float:
        w = _waypoints(x, amp, np.minimum(lo, x), np.maximum(hi, x))
        return _conditioning(robot, Tour(x, w, segment_time, amp, np.zeros(len(x))), rows, scale)

    k0 = k = kappa(start)
    q = start.copy()
    rng = np.random.default_rng(0)
    for _ in range(iterations):
        if k >= KAPPA_MIN or step < 1e-3:
            break
        best, k_best = None, k
        for d in rng.standard_normal((2 * len(q), len(q))):
            x = np.clip(q + d * (step / np.abs(d).max()), lo, hi)
            if np.any(np.abs(robot.gravity(x)) > cap):
                continue
            kx = kappa(x)
            if kx > k_best:
                best, k_best = x, kx
        if best is None:
            step *= 0.5
        else:
            q, k = best, k_best
    if k0 < KAPPA_MIN:
        notes.append(f"start moved by up to {np.abs(q - start).max():.2f} rad away from a "
                     f"singular pose (tool Jacobian conditioning {k0:.3f} -> {k:.3f} along the "
                     "tour)")
    return q


def plan_tour(model: MdhModel, q_start: np.ndarray | None = None, segment_time: float = 2.0,
              amplitude: float = 0.5, prismatic_amplitude: float = 0.1, effort_margin: float = 0.7,
              velocity_margin: float = 0.8, tries: int = 12) -> Tour:
    """A tour that fits ``model`` from ``q_start`` (default: zero clipped into the limits); see
    the module docstring.  ``ValueError`` when none fits, with the reason."""
    from rbd_ros.robot import Robot

    if not (np.isfinite(segment_time) and segment_time > 0):
        raise ValueError(f"segment time must be a positive number of seconds, got {segment_time}")
    robot = Robot(model)
    n = model.dof
    notes: list[str] = []
    lo_in, hi_in = _inner_limits(model)
    q0 = np.zeros(n) if q_start is None else np.asarray(q_start, dtype=float).reshape(n)
    start = np.clip(q0, model.lower, model.upper)
    if q_start is not None and not np.allclose(start, q0):
        bad = [model.joint_names[i] for i in np.flatnonzero(start != q0)]
        notes.append(f"start clamped into the joint limits for {bad}")
    lim = np.abs(np.asarray(model.effort_limit, dtype=float))
    cap = effort_margin * lim  # inf where there is no limit
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
    start = _well_conditioned_start(robot, start, amp, float(segment_time), lo_in, hi_in,
                                    cap, notes)
    first = amp.copy()
    for attempt in range(tries):
        tour = Tour(start, _waypoints(start, amp, np.minimum(lo_in, start), np.maximum(hi_in, start)),
                    float(segment_time), amp.copy(), np.zeros(n), notes)
        tau = _required_torque(robot, tour).max(axis=0)
        tour.peak_torque = tau
        if np.all(tau <= cap):
            if attempt:
                notes.append(f"amplitude shrunk to {amp.max() / max(first.max(), 1e-12):.0%} "
                             f"so the torques fit {effort_margin:.0%} of the effort limits")
            return tour
        amp = 0.7 * amp
    i = int(np.argmax(tau / cap))
    raise ValueError(f"no tour fits: joint '{model.joint_names[i]}' needs {tau[i]:.1f} N m along "
                     f"even the smallest tour tried, more than {effort_margin:.0%} of its effort "
                     f"limit {lim[i]:g}; try a longer --segment-time")


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
                     size: float = 0.8, **arm: float) -> tuple[Tour, FigureEight]:
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
