"""Retiming a joint trajectory under velocity, acceleration and torque limits (issue 37; ROS-free).

``retime(spline, limits)`` keeps the *path* of a ``trajectory.JointSpline`` — every point it
passes through, and the curve between them — and gives it a new timing: the time-optimal path
parameterization by reachability analysis, TOPP-RA (Pham & Pham, "A new approach to
time-optimal path parameterization based on reachability analysis", IEEE T-RO 34(3), 2018),
solved by the ``toppra`` package (PyPI, 0.6.10, its Seidel LP solver).

* the path is the given spline itself, parameterized by its own time ``s``: ``q(s)``,
  ``q'(s)``, ``q''(s)`` are the spline's; a new timing ``s(t)`` moves the arm along it at
  ``q_d' = q'(s) s'`` and ``q_d'' = q''(s) s'^2 + q'(s) s''``;
* constraints at each grid point (the knots, subdivided to at least ``GRID_MIN`` intervals),
  in TOPP-RA's canonical form ``a(s) s'' + b(s) s'^2 + c(s) = w``, ``|w| <= bound``:

  - velocity ``|q'(s)| s' <= v_max``, a bound on ``x = s'^2``, and ``s' <= 1``: never faster
    than the given timing (``retime: when_infeasible``: the feasible stretches keep their
    timing, only the others slow down; ``always``: the path run ``FASTEST`` times faster is
    retimed so, i.e. at most 10 times faster than given);
  - acceleration: ``a = q'``, ``b = q''``, ``c = 0``;
  - torque, from our inverse dynamics (the batch RNEA of ``rbd_ros.Robot`` with the drives'
    armature and dry friction, 003 (5.1), (6.16)-(6.17); not toppra's own per-point callback):
    ``c = g(q) + T_c sign(q')``, ``a = ID(q, 0, q') - g``, ``b = ID(q, q', q'') - g -
    B q' - T_c sign(q')``, bounded by the cap of ``path_limits.PathLimits`` (the effort limits
    less the feedback's share); viscous friction ``B q' s'`` is not of that form: it is bounded
    by ``|B q'| s'_max``, ``s'_max`` from a first solve without it (a tighter second solve only
    lowers ``s'``);

* the new timing (``s'`` at the grid points, ``s''`` constant between them, so
  ``dt = 2 ds / (s'_i + s'_{i+1})``) becomes a new ``JointSpline``: one quintic per grid
  interval matching the exact ``q, q_d', q_d''`` of the time-warped path at both of its ends
  (with that interval's ``s''``), so it passes through every grid point of the path;
* the result is checked again along its whole length (``path_limits.check_path``): the grid
  sees the constraints at its points only, so when the check finds an excess the bounds are
  lowered by it and the solve repeats (``ATTEMPTS`` at most; the first solve already keeps
  ``SAFETY`` of every bound: the quintics between grid points pass their ends' values by
  ~0.1 %).

Raises ``RetimeError`` when no timing fits (a path outside the position limits, gravity alone
above the cap, a start state the limits cannot stop in time), naming why.
"""
from __future__ import annotations

import importlib
import sys
import threading
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from rbd_ros.control.path_limits import PathCheck, PathLimits, check_path
from rbd_ros.control.trajectory import JointSpline, quintic_coefficients

RETIME = ("never", "when_infeasible", "always")
GRID_MIN = 400  # grid intervals along the path at least
FASTEST = 10.0  # retime: always: at most this many times faster than the given timing
ATTEMPTS = 4
END_REFINE = 6  # halvings of the grid's first and last interval (``grid_of``)
DEGENERATE = 1e-9  # smallest coefficient of a scaled constraint row (``_constraints``)
SAFETY = 0.995  # the bounds of the first solve, under the limits (the quintics between grid points)
SHRINK = 0.98  # the bounds of a repeated solve, below the excess the check found


class RetimeError(ValueError):
    """No timing of the path fits the limits; the message says why."""


@dataclass
class Retimed:
    """A retimed trajectory: ``spline`` (same start time, same path), its ``duration`` and the
    given one, the grid size, the solves it took and the final whole-path ``check``."""

    spline: JointSpline
    duration: float
    given: float
    grid_s: np.ndarray  # the grid along the path (``s``, the given time from the start); the
    attempts: int  # new spline's knots are the grid points' new times
    check: PathCheck

    @property
    def grid(self) -> int:
        return len(self.grid_s)


_TOPPRA_LOCK = threading.Lock()
#: toppra's modules this file uses, imported by ``_toppra``
_TOPPRA_MODULES = ("toppra", "toppra.algorithm", "toppra.constraint", "toppra.constraint.linear_constraint")


def _toppra() -> Any:
    """``toppra``, imported once per process without matplotlib.

    toppra 0.6.10 imports ``matplotlib.pyplot`` at its top (``toppra/parametrizer.py``,
    ``toppra/algorithm/algorithm.py``) for its plotting methods only: ~0.2 s of imports, ~75 ms
    of them one stretch that holds the GIL (matplotlib's ``text`` / font manager). The
    controller warms its planner on a thread of its own after "ready" (issue 39), so that
    stretch paused its running control cycle: 0.21 s in CI, a "busy" line (issue 37's
    reliability). Unless matplotlib is loaded already, toppra's own modules are imported with
    stand-ins for ``matplotlib`` and ``matplotlib.pyplot`` in ``sys.modules``, taken out right
    after (scipy, which toppra needs, is imported before, outside that window of ~10 ms): a
    later ``import matplotlib`` is the real one, and an attribute of a stand-in (a toppra plot
    method, or another thread importing matplotlib inside the window) imports the real module
    and forwards to it."""
    if all(name in sys.modules for name in _TOPPRA_MODULES):
        return sys.modules["toppra"]
    with _TOPPRA_LOCK:
        if "matplotlib" not in sys.modules and "toppra" not in sys.modules:
            for name in ("scipy.interpolate", "scipy.special"):  # toppra's, outside the stand-ins' window
                importlib.import_module(name)

            stand_ins = {name: types.ModuleType(name, "rbd_ros.control.retime's stand-in: toppra "
                                                      "imported without matplotlib")
                         for name in ("matplotlib", "matplotlib.pyplot")}
            for name, module in stand_ins.items():
                module.__getattr__ = _forwarding(name, stand_ins)  # type: ignore[method-assign]
            stand_ins["matplotlib"].pyplot = stand_ins["matplotlib.pyplot"]  # type: ignore[attr-defined]
            sys.modules.update(stand_ins)
            try:
                for name in _TOPPRA_MODULES:
                    importlib.import_module(name)
            finally:
                _drop(stand_ins)
        for name in _TOPPRA_MODULES:
            importlib.import_module(name)
    return sys.modules["toppra"]


def _drop(stand_ins: dict[str, types.ModuleType]) -> None:
    """The stand-ins out of ``sys.modules`` (those still there)."""
    for name, module in stand_ins.items():
        if sys.modules.get(name) is module:
            del sys.modules[name]


def _forwarding(name: str, stand_ins: dict[str, types.ModuleType]) -> Any:
    """A stand-in's module ``__getattr__``: the real module ``name``'s attribute."""
    def __getattr__(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        _drop(stand_ins)
        return getattr(importlib.import_module(name), attr)

    return __getattr__


class _Path:
    """The spline as toppra's geometric path (``toppra.interpolator.AbstractGeometricPath``'s
    interface, duck-typed): ``s`` is the spline's time from its start."""

    def __init__(self, spline: JointSpline) -> None:
        self.spline = spline
        self.t0 = spline.start_time
        self.dof = spline.dof
        self.duration = spline.end_time - spline.start_time

    @property
    def path_interval(self) -> np.ndarray:
        return np.array([0.0, self.duration])

    @property
    def waypoints(self) -> None:  # (part of toppra's interface; unused)
        return None

    def __call__(self, ss: np.ndarray, order: int = 0) -> np.ndarray:
        s = np.atleast_1d(np.asarray(ss, dtype=float))
        out = self.spline.sample(np.minimum(self.t0 + s, self.spline.end_time - 1e-12))[order]
        return out if np.ndim(ss) else out[0]

    def both_sides(self, grid: np.ndarray) -> tuple[np.ndarray, ...]:
        """``q, q'`` and ``q''`` from the right and from the left at the grid points (``q''``
        steps at the knots of a C1 spline: a grid point on a knot is constrained on both
        sides, and the interval before it ends with the left values)."""
        q, dq, ddq = self.spline.sample(self.t0 + grid)
        _, dq_left, ddq_left = self.spline.sample_left(self.t0 + grid)
        dq[-1], ddq[-1] = dq_left[-1], ddq_left[-1]  # (the end: the last segment's own)
        return q, dq, ddq, dq_left, ddq_left


def _dynamics_rows(limits: PathLimits, grid: np.ndarray, scale: np.ndarray, viscous_x: np.ndarray | None,
                   q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, rows_a: list, rows_b: list,
                   rows_c: list, bounds: list) -> None:
    """Append the acceleration and torque rows ``a s'' + b s'^2 + c = w``, ``|w| <= bound``
    (module docstring) of the path's derivatives ``dq``, ``ddq`` at the grid points."""
    acc = limits.acceleration * scale[1]
    fa = np.isfinite(acc)
    if fa.any():
        rows_a.append(dq[:, fa])
        rows_b.append(ddq[:, fa])
        rows_c.append(np.zeros((len(grid), int(fa.sum()))))
        bounds.append(np.broadcast_to(acc[fa], (len(grid), int(fa.sum()))))
    if limits.checks_effort:
        robot = limits.robot
        cap = limits.effort * scale[2]
        ft = np.isfinite(cap)
        zero = np.zeros_like(q)
        g = limits.torques(q, zero, zero)  # g(q): no friction at rest (off the GIL: PathLimits.torques)
        dry = np.sign(dq) * np.asarray(robot.model.coulomb, float)
        visc = np.asarray(robot.model.viscous, float) * dq
        a = limits.torques(q, zero, dq) - g
        b = limits.torques(q, dq, ddq) - g - visc - dry
        room = np.broadcast_to(cap, q.shape).copy()
        if viscous_x is not None:  # |B q' s'| <= |B q'| s'_max
            room = room - np.abs(visc) * np.sqrt(viscous_x)[:, None]
        if (room[:, ft] <= 0).any():
            k, j = np.argwhere(room[:, ft] <= 0)[0]
            name = limits.names[int(np.flatnonzero(ft)[j])]
            raise RetimeError(f"no timing fits: the viscous friction of {name} alone needs its whole "
                              f"effort cap at s = {grid[k]:.3f} s of the path")
        rows_a.append(a[:, ft])
        rows_b.append(b[:, ft])
        rows_c.append((g + dry)[:, ft])
        bounds.append(room[:, ft])


def _constraints(limits: PathLimits, path: _Path, grid: np.ndarray,
                 scale: np.ndarray, viscous_x: np.ndarray | None) -> list:
    """toppra constraints (module docstring), vectorised over the grid: one velocity bound on
    ``x = s'^2`` and one canonical linear constraint stacking acceleration and torque rows.
    ``scale`` (3, n): the bounds' factors (1 at first; lowered by ``retime``'s repeats)."""
    _toppra()
    from toppra.constraint import ConstraintType, DiscretizationType
    from toppra.constraint.linear_constraint import LinearConstraint, canlinear_colloc_to_interpolate

    q, dq_right, ddq_right, dq_left, ddq_left = path.both_sides(grid)
    n = path.dof
    vel = limits.velocity * scale[0]
    speed = np.maximum(np.abs(dq_right), np.abs(dq_left))
    with np.errstate(divide="ignore"):
        xv = np.where(speed > 1e-12, (vel / speed) ** 2, np.inf).min(axis=1)
    xv = np.minimum(xv, 1.0)  # s' <= 1: never faster than the path's own timing
    rows_a: list[np.ndarray] = []
    rows_b: list[np.ndarray] = []
    rows_c: list[np.ndarray] = []
    bounds: list[np.ndarray] = []
    for dq, ddq in ((dq_right, ddq_right), (dq_left, ddq_left)):
        _dynamics_rows(limits, grid, scale, viscous_x, q, dq, ddq, rows_a, rows_b, rows_c, bounds)

    class Velocity(LinearConstraint):
        def __init__(self) -> None:
            super().__init__()
            self.dof = n

        def compute_constraint_params(self, _path, _grid):  # toppra's API
            return None, None, None, None, None, None, np.c_[np.zeros(len(grid)), xv]

    out: list = [Velocity()]
    if rows_a:
        W = np.hstack(bounds)
        A, B, C = (np.hstack(r) / W for r in (rows_a, rows_b, rows_c))  # rows scaled: |w| <= 1
        for X in (A, B):  # where the path rests (q' = q'' = 0) a row would vanish: Seidel's LP
            X[np.abs(X) < DEGENERATE] = DEGENERATE  # then divides by 0; a negligible coefficient instead
        k = A.shape[1]
        F = np.vstack([np.eye(k), -np.eye(k)])
        G = np.ones(2 * k)

        class Dynamics(LinearConstraint):
            def __init__(self) -> None:
                super().__init__()
                self.dof = n
                self.constraint_type = ConstraintType.CanonicalLinear
                # each row also at the interval's end (x + 2 ds u): near a path at rest, where
                # a = M q' vanishes, collocation alone leaves s'' free and s' chatters
                self.discretization_type = DiscretizationType.Interpolation
                self.identical = True  # one F and g for every grid point

            def compute_constraint_params(self, _path, _grid):  # toppra's API
                return canlinear_colloc_to_interpolate(A, B, C, F, G, None, None, grid, identical=True)

        out.append(Dynamics())
    return out


def grid_of(spline: JointSpline, grid_min: int = GRID_MIN) -> np.ndarray:
    """The path's grid (``s`` from 0): every knot, each segment split evenly so that the grid
    has at least ``grid_min`` intervals (``T_k / (duration / grid_min)`` each, rounded up),
    the first and last interval halved ``END_REFINE`` times towards the ends."""
    T = np.diff(spline.knots)
    parts = np.maximum(1, np.ceil(T * grid_min / T.sum())).astype(np.intp)
    seg = np.repeat(np.arange(len(T)), parts)
    first = np.cumsum(parts) - parts
    frac = (np.arange(len(seg)) - np.repeat(first, parts)) / np.repeat(parts, parts)
    s = np.append(spline.knots[seg] - spline.start_time + frac * T[seg], spline.end_time - spline.start_time)
    # near both ends the path may rest (q' ~ s^2): halve the end intervals a few times, where a
    # quintic per interval would otherwise follow the time-warped path least well
    ends = np.concatenate([s[1] * 0.5 ** np.arange(1, END_REFINE + 1),
                           s[-1] - (s[-1] - s[-2]) * 0.5 ** np.arange(1, END_REFINE + 1)])
    return np.unique(np.concatenate([s, ends]))


def _solve(path: _Path, constraints: list, grid: np.ndarray,
           ends: list[tuple[float, float]]) -> np.ndarray:
    """``s'`` at the grid points (TOPP-RA, Seidel) for the first ``(s'_start, s'_end)`` of
    ``ends`` that has one; RetimeError when none does."""
    _toppra()
    import toppra.algorithm as algo

    code = None
    for sd_start, sd_end in ends:
        instance = algo.TOPPRA(constraints, path, gridpoints=grid, solver_wrapper="seidel")
        sd = instance.compute_parameterization(sd_start, sd_end, return_data=True)[1]
        if sd is not None and np.isfinite(sd).all():
            return np.asarray(sd, dtype=float)
        code = instance.problem_data.return_code
    raise RetimeError(f"no timing of the path fits the limits (TOPP-RA: {code})")


def timed_spline(path: _Path, grid: np.ndarray, sd: np.ndarray) -> JointSpline:
    """The time-warped path ``q(s(t))`` (``s'`` = ``sd`` at the grid points, ``s''`` constant
    between them) as a ``JointSpline`` of quintics through every grid point (module docstring)."""
    ds = np.diff(grid)
    mean = sd[:-1] + sd[1:]
    if np.any(mean <= 0):
        k = int(np.flatnonzero(mean <= 0)[0])
        raise RetimeError(f"no timing fits: the path cannot move at s = {grid[k]:.4f} s")
    dt = 2.0 * ds / mean  # constant s'' on each interval
    u = (sd[1:] ** 2 - sd[:-1] ** 2) / (2.0 * ds)  # s''
    q, dq, ddq, dq_left, ddq_left = path.both_sides(grid)
    v0, v1 = dq[:-1] * sd[:-1, None], dq_left[1:] * sd[1:, None]  # each interval: its segment's ends
    a0 = ddq[:-1] * sd[:-1, None] ** 2 + dq[:-1] * u[:, None]  # each interval's own s''
    a1 = ddq_left[1:] * sd[1:, None] ** 2 + dq_left[1:] * u[:, None]
    c = quintic_coefficients(q[:-1], v0, a0, q[1:], v1, a1, dt[:, None]).transpose(1, 0, 2)
    knots = path.t0 + np.concatenate([[0.0], np.cumsum(dt)])
    return JointSpline(knots, c, kind="retimed")


def time_scaled(spline: JointSpline, factor: float) -> JointSpline:
    """``spline`` run ``factor`` times faster from the same start: ``q(t0 + factor (t - t0))``
    (coefficient ``c_i`` times ``factor^i``)."""
    c = spline.coeffs * (float(factor) ** np.arange(6))[None, :, None]
    knots = spline.start_time + (spline.knots - spline.start_time) / float(factor)
    return JointSpline(knots, c, kind=spline.kind)


def retime(spline: JointSpline, limits: PathLimits, slower_only: bool = True,
           grid_min: int = GRID_MIN, start_speed: float = 1.0) -> Retimed:
    """The path of ``spline`` retimed under ``limits`` (module docstring); RetimeError if none
    fits.  ``slower_only``: nowhere faster than ``spline``'s own timing; else at most
    ``FASTEST`` times faster (solved as the same path ``FASTEST`` times faster, never faster
    than that: Seidel's LP found some grid points of a bound s' <= 10 uncontrollable, NaN, where
    s' <= 1 on the faster path was not).  ``start_speed``: ``s'`` at a moving start (the given
    timing's, 1: the reference's velocity is kept)."""
    if not slower_only:
        r = retime(time_scaled(spline, FASTEST), limits, True, grid_min, start_speed / FASTEST)
        return Retimed(r.spline, r.duration, spline.end_time - spline.start_time, r.grid_s * FASTEST,
                       r.attempts, r.check)
    pos = check_path(spline, PathLimits(limits.names, limits.lower, limits.upper,
                                        np.full(spline.dof, np.inf), np.full(spline.dof, np.inf),
                                        np.full(spline.dof, np.inf)))
    if pos.violation is not None:
        raise RetimeError(f"no timing helps: {pos.violation} (the path itself leaves the limits)")
    path = _Path(spline)
    grid = grid_of(spline, grid_min)
    moving = np.abs(path(np.array([0.0]), 1)[0]).max() > 1e-12
    # the given timing's ends (s' = 1) first: a moving start keeps its velocity, and a start at
    # rest its acceleration; else from and to s' = 0 (where q' = 0 any s' is at rest)
    ends = [(start_speed, 1.0), (start_speed, 0.0)] if moving else [(1.0, 1.0), (0.0, 0.0)]
    scale = np.full((3, spline.dof), SAFETY)
    viscous = limits.checks_effort and bool(np.any(np.asarray(limits.robot.model.viscous) != 0))
    for attempt in range(1, ATTEMPTS + 1):
        sd = _solve(path, _constraints(limits, path, grid, scale, None), grid, ends)
        if viscous:
            sd = _solve(path, _constraints(limits, path, grid, scale, (1.05 * sd) ** 2),
                        grid, ends)
        out = timed_spline(path, grid, sd)
        check = check_path(out, limits)
        v = check.violation
        if v is None:
            return Retimed(out, out.end_time - out.start_time, spline.end_time - spline.start_time,
                           grid, attempt, check)
        if v.quantity == "position":
            raise RetimeError(f"the retimed path leaves the position limits: {v}")
        row = ("velocity", "acceleration", "effort").index(v.quantity)
        scale[row] *= SHRINK * min(1.0, abs(v.limit / v.value))  # every joint's: the excess moves
    raise RetimeError(f"no timing found within {ATTEMPTS} solves: {v}")
