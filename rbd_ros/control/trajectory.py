"""Reference trajectories for the controllers (ROS-free): joint splines and Cartesian moves.

Joint trajectories follow ros2_control's ``joint_trajectory_controller``:

* the trajectory starts at its start time ``t0`` (the message stamp, or "now" when the stamp is
  zero or in the past) from the controller's *current reference* ``(q, qd, qdd)`` at ``t0``,
  so the reference stays continuous when a new trajectory replaces a running one; a first point
  with ``time_from_start == 0`` replaces that start state instead;
* between points the reference is a polynomial segment chosen by what the points carry
  (``interpolation="auto"``):

  - positions, velocities and accelerations: **quintic** segments matching all three at both
    ends (C2 across points);
  - positions and velocities: **cubic Hermite** segments (C1);
  - positions only: a **clamped cubic spline** through the points (C2), starting with the
    reference velocity and ending at rest;

  ``interpolation="cubic"`` ignores accelerations; ``"quintic"`` fills missing velocities and
  accelerations from the clamped cubic spline (still C2) and matches the start acceleration;
* after the last point the reference **holds the last position** with zero velocity and
  acceleration;
* before ``t0`` (a trajectory stamped in the future) the previous reference keeps running.

``quintic_point_to_point`` is the classic rest-to-rest quintic (minimum-jerk) move, and
``CartesianMove`` its task-space analogue (straight line + rotation about one fixed axis) for
the task-space laws (003 (6.47)-(6.49) need ``r_d``, ``r_d'`` and ``r_d''``).

Evaluation is one jitted call writing into preallocated arrays: no allocation per cycle.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numba import njit

from rbd_ros.lie.so3 import exp_into as so3_exp_into
from rbd_ros.lie.so3 import orientation_error

INTERPOLATIONS = ("auto", "cubic", "quintic")


class JointReference(Protocol):
    """Anything that writes ``q_d(t), q_d'(t), q_d''(t)`` into preallocated arrays."""

    def evaluate(self, t: float, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> None: ...


# ---- polynomial segments -----------------------------------------------------------------------
def quintic_coefficients(p0: np.ndarray, v0: np.ndarray, a0: np.ndarray, p1: np.ndarray,
                         v1: np.ndarray, a1: np.ndarray, T: float | np.ndarray) -> np.ndarray:
    """Coefficients ``c[0..5]`` (shape (6, n)) of ``p(s) = sum c_k s^k``, ``0 <= s <= T``, with
    ``p, p', p''`` equal to ``(p0, v0, a0)`` at ``s = 0`` and ``(p1, v1, a1)`` at ``s = T``.
    Many segments at once: ``(m, n)`` ends and ``T`` of shape ``(m, 1)`` give ``(6, m, n)``."""
    p0, v0, a0, p1, v1, a1 = (np.asarray(x, dtype=float) for x in (p0, v0, a0, p1, v1, a1))
    dp = p1 - p0
    c = np.empty((6,) + p0.shape)
    c[0], c[1], c[2] = p0, v0, 0.5 * a0
    c[3] = (20 * dp - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T**2) / (2 * T**3)
    c[4] = (-30 * dp + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T**2) / (2 * T**4)
    c[5] = (12 * dp - 6 * (v1 + v0) * T + (a1 - a0) * T**2) / (2 * T**5)
    return c


def cubic_coefficients(p0: np.ndarray, v0: np.ndarray, p1: np.ndarray, v1: np.ndarray,
                       T: float | np.ndarray) -> np.ndarray:
    """Cubic Hermite segment as (6, n) coefficients (``c[4] = c[5] = 0``): ``p, p'`` equal to
    ``(p0, v0)`` at ``s = 0`` and ``(p1, v1)`` at ``s = T`` (many at once as ``quintic_coefficients``)."""
    p0, v0, p1, v1 = (np.asarray(x, dtype=float) for x in (p0, v0, p1, v1))
    c = np.zeros((6,) + p0.shape)
    c[0], c[1] = p0, v0
    c[2] = (3 * (p1 - p0) / T - 2 * v0 - v1) / T
    c[3] = (2 * (p0 - p1) / T + v0 + v1) / T**2
    return c


def clamped_spline_velocities(times: np.ndarray, positions: np.ndarray, v_start: np.ndarray,
                              v_end: np.ndarray) -> np.ndarray:
    """Knot velocities of the C2 cubic spline through ``positions`` (m+1, n) at ``times`` with
    the end velocities clamped (the tridiagonal system of the classic clamped spline, solved
    by the Thomas algorithm in one jitted pass over the knots, every joint at once)."""
    t = np.asarray(times, dtype=float)
    p = np.ascontiguousarray(positions, dtype=float)
    m = len(t) - 1
    v = np.empty_like(p)
    v[0], v[m] = v_start, v_end
    if m < 2:
        return v
    h = np.diff(t)
    slope = np.diff(p, axis=0) / h[:, None]  # (p[j+1] - p[j]) / h[j]
    sub, sup = h[1:].copy(), h[:-1].copy()  # rows j = 1 .. m-1: h[j] v[j-1] + 2 (h[j-1] + h[j]) v[j] + h[j-1] v[j+1]
    diag = 2.0 * (h[:-1] + h[1:])
    rhs = 3.0 * (h[1:, None] * slope[:-1] + h[:-1, None] * slope[1:])
    rhs[0] -= sub[0] * v[0]
    rhs[-1] -= sup[-1] * v[m]
    _thomas(sub, diag, sup, rhs)  # diagonally dominant, so stable without pivoting
    v[1:m] = rhs
    return v


@njit(cache=True, nogil=True)  # (a planner's worker: the cycle's thread runs meanwhile)
def _thomas(sub: np.ndarray, diag: np.ndarray, sup: np.ndarray,
            rhs: np.ndarray) -> None:  # pragma: no cover - jitted
    """Solve the tridiagonal system (``sub[r] x[r-1] + diag[r] x[r] + sup[r] x[r+1] = rhs[r]``,
    one column of ``rhs`` per joint) in place: ``rhs`` becomes ``x``; ``diag`` is overwritten."""
    k, n = rhs.shape
    for r in range(1, k):  # forward elimination
        w = sub[r] / diag[r - 1]
        diag[r] -= w * sup[r - 1]
        for j in range(n):
            rhs[r, j] -= w * rhs[r - 1, j]
    for j in range(n):  # back substitution
        rhs[k - 1, j] /= diag[k - 1]
    for r in range(k - 2, -1, -1):
        for j in range(n):
            rhs[r, j] = (rhs[r, j] - sup[r] * rhs[r + 1, j]) / diag[r]


def _spline_accelerations(times: np.ndarray, positions: np.ndarray, velocities: np.ndarray) -> np.ndarray:
    """Second derivatives at the knots of the cubic Hermite spline (continuous if the velocities
    came from ``clamped_spline_velocities``); at the end of each segment for the last knot."""
    t, p, v = np.asarray(times, float), np.asarray(positions, float), np.asarray(velocities, float)
    T = np.diff(t)[:, None]
    c = cubic_coefficients(p[:-1], v[:-1], p[1:], v[1:], T)  # (6, m, n): every segment at once
    a = np.empty_like(p)
    a[:-1] = 2 * c[2]
    a[-1] = 2 * c[2, -1] + 6 * c[3, -1] * T[-1]
    return a


@njit(cache=True)
def _eval_spline(knots: np.ndarray, coeffs: np.ndarray, t: float, q: np.ndarray,
                 qd: np.ndarray, qdd: np.ndarray) -> None:  # pragma: no cover - jitted
    """Piecewise polynomial at ``t`` (``knots[0] <= t``); after the last knot: hold the end."""
    m = coeffs.shape[0]
    n = coeffs.shape[2]
    if t >= knots[m]:
        k = m - 1
        s = knots[m] - knots[m - 1]
        for j in range(n):
            acc = coeffs[k, 5, j]
            for p in range(4, -1, -1):
                acc = acc * s + coeffs[k, p, j]
            q[j] = acc
            qd[j] = 0.0
            qdd[j] = 0.0
        return
    k = 0
    lo, hi = 0, m - 1
    while lo < hi:  # last k with knots[k] <= t
        mid = (lo + hi + 1) // 2
        if knots[mid] <= t:
            lo = mid
        else:
            hi = mid - 1
    k = lo
    s = t - knots[k]
    if s < 0.0:
        s = 0.0
    for j in range(n):
        c0, c1, c2 = coeffs[k, 0, j], coeffs[k, 1, j], coeffs[k, 2, j]
        c3, c4, c5 = coeffs[k, 3, j], coeffs[k, 4, j], coeffs[k, 5, j]
        q[j] = c0 + s * (c1 + s * (c2 + s * (c3 + s * (c4 + s * c5))))
        qd[j] = c1 + s * (2 * c2 + s * (3 * c3 + s * (4 * c4 + s * 5 * c5)))
        qdd[j] = 2 * c2 + s * (6 * c3 + s * (12 * c4 + s * 20 * c5))


@njit(cache=True, nogil=True)  # (a planner's worker: the cycle's thread runs meanwhile)
def _eval_many(knots: np.ndarray, coeffs: np.ndarray, ts: np.ndarray,
               out: np.ndarray) -> None:  # pragma: no cover - jitted
    """``_eval_spline`` at each of the times ``ts`` (any order, none before ``knots[0]``) into
    ``out[0], out[1], out[2]`` (q, qd, qdd), each (len(ts), n)."""
    for i in range(ts.shape[0]):
        _eval_spline(knots, coeffs, ts[i], out[0, i], out[1, i], out[2, i])


@njit(cache=True, nogil=True)  # (a planner's worker: the cycle's thread runs meanwhile)
def _eval_segments(coeffs: np.ndarray, seg: np.ndarray, s: np.ndarray,
                   out: np.ndarray) -> None:  # pragma: no cover - jitted
    """Segment ``seg[i]`` at local time ``s[i]`` (Horner) into ``out[:, i]`` (q, qd, qdd)."""
    n = coeffs.shape[2]
    for i in range(s.shape[0]):
        k, x = seg[i], s[i]
        for j in range(n):
            c0, c1, c2 = coeffs[k, 0, j], coeffs[k, 1, j], coeffs[k, 2, j]
            c3, c4, c5 = coeffs[k, 3, j], coeffs[k, 4, j], coeffs[k, 5, j]
            out[0, i, j] = c0 + x * (c1 + x * (c2 + x * (c3 + x * (c4 + x * c5))))  # p
            out[1, i, j] = c1 + x * (2 * c2 + x * (3 * c3 + x * (4 * c4 + x * 5 * c5)))  # p'
            out[2, i, j] = 2 * c2 + x * (6 * c3 + x * (12 * c4 + x * 20 * c5))  # p''


def _real_roots_in(ascending: np.ndarray, T: float) -> list[float]:
    """Real roots in ``(0, T)`` of the polynomial with ascending coefficients."""
    c = np.trim_zeros(np.asarray(ascending, float), "b")
    if c.size < 2:
        return []
    r = np.roots(c[::-1])
    r = r.real[np.abs(r.imag) <= 1e-9 * np.maximum(1.0, np.abs(r.real))]
    return [float(x) for x in r if 0.0 < x < T]


class HoldPosition:
    """Reference ``q_d = q_hold``, ``q_d' = q_d'' = 0`` (before any trajectory; empty trajectory)."""

    def __init__(self, q: np.ndarray) -> None:
        self.q = np.array(q, dtype=float)
        self.end_time = -np.inf

    def evaluate(self, t: float, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> None:
        np.copyto(q, self.q)  # (``q[:] = ...`` makes a view object each call)
        qd.fill(0.0)
        qdd.fill(0.0)


class JointSpline:
    """Piecewise-polynomial joint reference (see the module docstring).

    ``knots`` (m+1,) absolute times, ``coeffs`` (m, 6, n) in powers of ``t - knots[k]``.
    Before ``knots[0]`` it evaluates ``previous`` (if given) or the start state.
    """

    def __init__(self, knots: np.ndarray, coeffs: np.ndarray, previous: JointReference | None = None,
                 kind: str = "quintic") -> None:
        self.knots = np.ascontiguousarray(knots, dtype=float)
        self.coeffs = np.ascontiguousarray(coeffs, dtype=float)
        if self.coeffs.ndim != 3 or self.coeffs.shape[1] != 6 or len(self.knots) != self.coeffs.shape[0] + 1:
            raise ValueError("JointSpline: knots (m+1,) and coeffs (m, 6, n) expected")
        if self.coeffs.shape[0] < 1 or not np.all(np.diff(self.knots) > 0):
            raise ValueError("JointSpline: knots must be strictly increasing, at least two")
        self.previous = previous
        self.kind = kind
        self.start_time = float(self.knots[0])
        self.end_time = float(self.knots[-1])
        self.dof = self.coeffs.shape[2]

    def evaluate(self, t: float, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> None:
        """Write ``q_d(t), q_d'(t), q_d''(t)`` into ``q, qd, qdd`` (length n, float64)."""
        if t < self.start_time:
            if self.previous is not None:
                self.previous.evaluate(t, q, qd, qdd)
                return
            t = self.start_time
        elif self.previous is not None:
            self.previous = None  # passed the start: the old reference is no longer needed
        _eval_spline(self.knots, self.coeffs, float(t), q, qd, qdd)

    def limit_violation(self, names: Sequence[str], lower: np.ndarray, upper: np.ndarray,
                        velocity_limit: np.ndarray, tol: float = 1e-9) -> str | None:
        """Why the reference leaves the joint limits *between* its points, or None.

        A spline through points inside ``[lower, upper]`` can overshoot them (a cubic near a
        limit), and a short segment can exceed ``velocity_limit``.  Each segment's extrema are
        exact: ``p`` peaks at its ends or where ``p' = 0`` (a quartic), ``p'`` where
        ``p'' = 0`` (a cubic); the real roots inside the segment come from ``np.roots``.  A
        start state already outside a limit (the current reference) may return, not go
        further."""
        lo, hi = np.asarray(lower, float), np.asarray(upper, float)
        vmax = np.asarray(velocity_limit, float)
        powers = np.arange(6)
        for k in range(self.coeffs.shape[0]):
            T = self.knots[k + 1] - self.knots[k]
            for j in range(self.dof):
                c = self.coeffs[k, :, j]
                dc = c[1:] * powers[1:]  # p'(s) coefficients, ascending
                ddc = dc[1:] * powers[1:5]  # p''(s)
                for what, poly, crit, low, high in (("position", c, dc, lo[j], hi[j]),
                                                    ("velocity", dc, ddc, -vmax[j], vmax[j])):
                    if not (np.isfinite(low) or np.isfinite(high)):
                        continue
                    if k == 0:  # a start already outside may come back, not go further
                        start = poly[0]
                        low, high = min(low, start), max(high, start)
                    s = [0.0, T, *_real_roots_in(crit, T)]
                    vals = np.polynomial.polynomial.polyval(s, poly)
                    i = int(np.argmax(np.maximum(vals - high, low - vals)))
                    if vals[i] > high + tol or vals[i] < low - tol:
                        unit = "rad or m" if what == "position" else "rad/s or m/s"
                        return (f"the reference {what} of {names[j]} reaches {vals[i]:.6g} at "
                                f"t = {self.knots[k] + s[i]:.6g} s, outside its limits "
                                f"[{low:.6g}, {high:.6g}] ({unit}) between the points; "
                                f"give the segment more time or add points")
        return None

    def sample(self, times: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(q, qd, qdd)`` at many times, each of shape (len(times), n): one jitted call (before
        the start: the start state; after the end: the hold)."""
        t = np.maximum(np.asarray(times, dtype=float).reshape(-1), self.start_time)
        out = np.empty((3, len(t), self.dof))
        _eval_many(self.knots, self.coeffs, t, out)
        return out[0], out[1], out[2]

    def sample_left(self, times: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As ``sample``, but the limits from the left: at a knot, the end of the segment before
        it (``q''`` steps at the knots of a C1 spline; ``sample`` gives the segment after).
        Times inside ``[start_time, end_time]``; one jitted call."""
        t = np.clip(np.asarray(times, dtype=float).reshape(-1), self.start_time, self.end_time)
        m = self.coeffs.shape[0]
        seg = np.clip(np.searchsorted(self.knots, t, side="left") - 1, 0, m - 1)
        out = np.empty((3, len(t), self.dof))
        _eval_segments(self.coeffs, seg, t - self.knots[seg], out)
        return out[0], out[1], out[2]

    def segment_samples(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """``counts[k]`` evenly spaced samples of each segment ``k`` (from its start), then the
        end of the last one (its own values, not the hold's): ``(t, seg, (q, qd, qdd))``, the
        absolute times, the segment of each sample and the states ((S, n) each); one jitted
        call."""
        counts = np.asarray(counts, dtype=np.intp)
        m = self.coeffs.shape[0]
        T = np.diff(self.knots)
        seg = np.append(np.repeat(np.arange(m), counts), m - 1)
        first = np.cumsum(counts) - counts
        frac = np.empty(len(seg))
        frac[:-1] = (np.arange(len(seg) - 1) - np.repeat(first, counts)) / np.repeat(counts, counts)
        frac[-1] = 1.0
        s = frac * T[seg]
        out = np.empty((3, len(seg), self.dof))
        _eval_segments(self.coeffs, seg, s, out)
        return self.knots[seg] + s, seg, (out[0], out[1], out[2])

    # ---- construction ------------------------------------------------------------------------
    @classmethod
    def from_points(cls, t0: float, times_from_start: Sequence[float] | np.ndarray, positions: np.ndarray,
                    velocities: np.ndarray | None = None, accelerations: np.ndarray | None = None,
                    start: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                    interpolation: str = "auto", previous: JointReference | None = None) -> "JointSpline":
        """The trajectory of points ``positions[k]`` (m, n) reached at ``t0 + times_from_start[k]``.

        ``start = (q, qd, qdd)`` is the state at ``t0`` (the current reference); it is required
        unless the first point is at time 0.  ``velocities``/``accelerations`` are (m, n) or None.
        Raises ``ValueError`` with the reason for a malformed trajectory.
        """
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {INTERPOLATIONS}, got '{interpolation}'")
        tfs = np.asarray(times_from_start, dtype=float).reshape(-1)
        P = np.asarray(positions, dtype=float)
        if P.ndim != 2 or P.shape[0] != len(tfs) or P.shape[0] == 0:
            raise ValueError(f"positions must be (points, joints) with one row per time; got {P.shape} "
                             f"for {len(tfs)} times")
        n = P.shape[1]
        V = None if velocities is None else np.asarray(velocities, dtype=float)
        A = None if accelerations is None else np.asarray(accelerations, dtype=float)
        for name, X in (("velocities", V), ("accelerations", A)):
            if X is not None and X.shape != P.shape:
                raise ValueError(f"{name} must have the shape of positions {P.shape}, got {X.shape}")
        if A is not None and V is None:
            raise ValueError("accelerations given without velocities")
        for name, X in (("time_from_start", tfs), ("positions", P), ("velocities", V), ("accelerations", A)):
            if X is not None and not np.isfinite(X).all():
                raise ValueError(f"{name} contain NaN or Inf")
        if tfs[0] < 0 or np.any(np.diff(tfs) <= 0):
            raise ValueError("time_from_start must be non-negative and strictly increasing")
        if tfs[0] == 0.0:
            if len(tfs) == 1:
                raise ValueError("a single point at time_from_start 0 gives no motion; use a time > 0")
            q0 = P[0]
            v0 = V[0] if V is not None else np.zeros(n)
            a0 = A[0] if A is not None else np.zeros(n)
            P, tfs = P[1:], tfs[1:]
            V = None if V is None else V[1:]
            A = None if A is None else A[1:]
        else:
            if start is None:
                raise ValueError("the start state is needed when the first point is not at time 0")
            q0, v0, a0 = (np.asarray(x, dtype=float).reshape(n) for x in start)
        times = np.concatenate([[0.0], tfs])
        pos = np.vstack([q0, P])
        T = np.diff(times)[:, None]  # every segment at once: (m, 6, n) coefficients below
        kind = interpolation
        if kind == "auto":
            kind = "quintic" if A is not None else "cubic"
        if kind == "cubic":
            if V is None:
                vel = clamped_spline_velocities(times, pos, v0, np.zeros(n))
            else:
                vel = np.vstack([v0, V])
            coeffs = cubic_coefficients(pos[:-1], vel[:-1], pos[1:], vel[1:], T).transpose(1, 0, 2)
            kind = "cubic" if V is not None else "cubic spline"
        else:
            if V is None:
                vel = clamped_spline_velocities(times, pos, v0, np.zeros(n))
            else:
                vel = np.vstack([v0, V])
            if A is None:
                acc = _spline_accelerations(times, pos, vel)
                acc[0], acc[-1] = a0, 0.0
            else:
                acc = np.vstack([a0, A])
            coeffs = quintic_coefficients(pos[:-1], vel[:-1], acc[:-1], pos[1:], vel[1:], acc[1:],
                                          T).transpose(1, 0, 2)
        return cls(t0 + times, coeffs, previous=previous, kind=kind)


def quintic_point_to_point(q0: np.ndarray, q1: np.ndarray, duration: float, t0: float = 0.0) -> JointSpline:
    """Rest-to-rest quintic from ``q0`` at ``t0`` to ``q1`` at ``t0 + duration`` (zero velocity
    and acceleration at both ends), then holding ``q1``."""
    if not duration > 0:
        raise ValueError(f"duration must be positive, got {duration}")
    q0 = np.asarray(q0, dtype=float)
    z = np.zeros_like(q0)
    c = quintic_coefficients(q0, z, z, np.asarray(q1, dtype=float), z, z, duration)
    return JointSpline(np.array([t0, t0 + duration]), c[None], kind="quintic")


def quintic_time_scaling(s: float) -> tuple[float, float, float]:
    """Minimum-jerk scaling ``(sigma, sigma', sigma'')`` for normalised time ``s`` in [0, 1]:
    ``sigma = 10 s^3 - 15 s^4 + 6 s^5`` (derivatives with respect to ``s``); clamped outside."""
    if s <= 0.0:
        return 0.0, 0.0, 0.0
    if s >= 1.0:
        return 1.0, 0.0, 0.0
    return (s**3 * (10 - 15 * s + 6 * s * s), 30 * s * s * (1 - s) ** 2, 60 * s * (1 - s) * (1 - 2 * s))


# ---- task space -------------------------------------------------------------------------------
class CartesianMove:
    """Minimum-jerk move of a frame from pose ``T0`` (at ``t0``) to ``T1`` (at ``t0 + duration``).

    Position along the straight line, orientation about the fixed world axis of
    ``R1 R0^T``: ``p(t) = p0 + sigma (p1 - p0)``, ``R(t) = Exp(sigma phi) R0`` with
    ``phi = orientation_error(R1, R0)`` and the quintic scaling ``sigma`` — so the twist is
    ``[sigma' (p1 - p0); sigma' phi]`` and the acceleration ``[sigma'' (p1 - p0); sigma'' phi]``
    exactly (the axis is fixed).  ``duration = 0`` is a step to ``T1``.
    """

    def __init__(self, T0: np.ndarray, T1: np.ndarray, t0: float, duration: float) -> None:

        self.T0 = np.array(T0, dtype=float)
        self.T1 = np.array(T1, dtype=float)
        if self.T0.shape != (4, 4) or self.T1.shape != (4, 4):
            raise ValueError("CartesianMove: poses must be 4x4")
        if not (np.isfinite(self.T0).all() and np.isfinite(self.T1).all()):
            raise ValueError("CartesianMove: poses contain NaN or Inf")
        if not duration >= 0:
            raise ValueError(f"CartesianMove: duration must be >= 0, got {duration}")
        self.t0, self.duration = float(t0), float(duration)
        self.end_time = self.t0 + self.duration
        self.dp = self.T1[:3, 3] - self.T0[:3, 3]
        self.phi = orientation_error(self.T1[:3, :3], self.T0[:3, :3])
        self._E = np.empty((3, 3))  # Exp(sigma phi), scratch of evaluate

    def evaluate(self, t: float, T: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
        """Write the pose (4x4), twist ``[v; w]`` (6) and its derivative (6) at ``t``."""
        if self.duration <= 0.0 or t >= self.end_time:
            np.copyto(T, self.T1)  # (in place: the control cycle allocates nothing)
            v.fill(0.0)
            a.fill(0.0)
            return
        s = (t - self.t0) / self.duration
        sig, dsig, ddsig = quintic_time_scaling(s)
        _eval_cartesian(self.T0, self.dp, self.phi, sig, dsig / self.duration,
                        ddsig / self.duration**2, self._E, T, v, a)

    def pose_at(self, t: float) -> np.ndarray:
        """The pose (4x4) at ``t`` in new arrays, its own scratch: safe from another thread
        while the control cycle calls ``evaluate`` (which reuses ``_E``)."""
        T = np.empty((4, 4))
        if self.duration <= 0.0 or t >= self.end_time:
            T[:] = self.T1
            return T
        sig, dsig, ddsig = quintic_time_scaling((t - self.t0) / self.duration)
        _eval_cartesian(self.T0, self.dp, self.phi, sig, dsig / self.duration,
                        ddsig / self.duration**2, np.empty((3, 3)), T, np.empty(6), np.empty(6))
        return T


@njit(cache=True)
def _eval_cartesian(T0: np.ndarray, dp: np.ndarray, phi: np.ndarray, sig: float, dsig: float,
                    ddsig: float, E: np.ndarray, T: np.ndarray, v: np.ndarray,
                    a: np.ndarray) -> None:  # pragma: no cover - jitted
    """``T = [Exp(sig phi) R0, p0 + sig dp; 0 1]``, ``v = sig' [dp; phi]``,
    ``a = sig'' [dp; phi]`` (``E``: 3x3 scratch)."""
    so3_exp_into(sig * phi[0], sig * phi[1], sig * phi[2], E)
    for i in range(3):
        for j in range(3):
            T[i, j] = E[i, 0] * T0[0, j] + E[i, 1] * T0[1, j] + E[i, 2] * T0[2, j]
        T[i, 3] = T0[i, 3] + sig * dp[i]
        T[3, i] = T0[3, i]
        v[i] = dsig * dp[i]
        v[3 + i] = dsig * phi[i]
        a[i] = ddsig * dp[i]
        a[3 + i] = ddsig * phi[i]
    T[3, 3] = T0[3, 3]
