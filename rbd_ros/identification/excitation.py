"""An excitation trajectory for identification: a finite Fourier series (Swevers, Ganseman,
Tukel, De Schutter, Van Brussel 1997, "Optimal robot excitation and identification", IEEE
T-RA 13(5), eq. (11)) optimised for the condition number of the base regressor.

Per joint, ``L`` harmonics of ``w = 2 pi / period``:

    q_j(t) = q0_j + s sum_l [ a_jl sin(l w t) + b_jl (cos(l w t) - 1) ]

so ``q(0) = q0``; the coefficients are kept in the null space of ``qd(0) = sum_l a_jl l w = 0``
and ``qdd(0) = -sum_l b_jl (l w)^2 = 0``, so it starts and (being periodic) ends every period
at rest at ``q0``: the bringup's tour start, each joint moved to at least 20 % of its range
from its limits (so it can swing both ways); the arm starts there, the reference never jumps.
For a candidate each joint's scale ``s`` is the largest that keeps it inside its position
limits (the tour's inner 90 %) and ``velocity_margin`` of its velocity limit, then all are
shrunk together until the motion needs at most ``effort_margin`` of the effort limits (RNEA
with the drives along it) and stays above the floor (``control.tour``'s ``Floor``). The
objective is the condition number of the base regressor with unit-norm columns
(``estimate.check_excitation``'s number) at ``SAMPLES`` points of a period, minimised by a
(1+1) evolution strategy with the 1/5 success rule (Rechenberg), seeded.

``optimise=True`` (issue 44.3) changes the objective to the one the identification's accuracy
depends on: the expected mean relative standard deviation of the base parameters (an
A-optimal design in relative units, Swevers et al. 1997 §IV; Gautier & Khalil's weighted least
squares),

    J = mean_i sqrt([ (Y^T W Y)^-1 ]_ii) / s_i,   W = diag(1 / rms_j^2),

with ``Y`` the base regressor stacked over the samples, ``rms_j`` each joint's RMS torque
along the candidate (torque noise proportional to it: the weights ``estimate.identify`` finds)
and ``s_i = max(|beta_i|, 1e-3 max |beta|)`` the prior's own base parameters: a parameter that
moves the torques by little against the noise costs in proportion.  The unit-norm condition
number ignores exactly that (every column is scaled to 1).  The result is then checked along
the whole path (``control.path_limits.check_path`` on ``spline()``: positions, velocities and
efforts between the samples too) and shrunk by 5 % until it passes (and, with a floor, keeps
above it).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from rbd_ros.identification.base import base_parameters
from rbd_ros.identification.regressor import regressor, standard_parameters
from rbd_ros.model import MdhModel

SAMPLES = 64  # points per period where the regressor is evaluated
POINT_SPACING = 0.05  # s between the trajectory points sent to the controller


@dataclass
class Excitation:
    """The trajectory (module docstring).  Like ``control.tour.Tour`` it has ``start``,
    ``waypoints``, ``times`` (s after the start), ``amplitude``, ``notes``, ``floor``, and also
    each point's ``velocities`` and ``accelerations``."""

    start: np.ndarray
    a: np.ndarray  # (n, L), scale included
    b: np.ndarray
    period: float
    periods: int
    condition: float
    peak_torque: np.ndarray
    notes: list[str] = field(default_factory=list)
    floor: float | None = None

    @property
    def omega(self) -> float:
        return 2.0 * np.pi / self.period

    @property
    def duration(self) -> float:
        return self.period * self.periods

    @property
    def segment_time(self) -> float:
        return self.period

    def sample(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``q, qd, qdd`` (S, n) at times ``t`` (S,) from the start."""
        return fourier(self.start, self.a, self.b, self.omega, np.asarray(t, dtype=float))

    @property
    def times(self) -> np.ndarray:
        k = int(round(self.duration / POINT_SPACING))
        return np.linspace(self.duration / k, self.duration, k)

    @property
    def waypoints(self) -> np.ndarray:
        return self.sample(self.times)[0]

    @property
    def velocities(self) -> np.ndarray:
        return self.sample(self.times)[1]

    @property
    def accelerations(self) -> np.ndarray:
        return self.sample(self.times)[2]

    @property
    def amplitude(self) -> np.ndarray:
        q = self.sample(np.linspace(0.0, self.period, SAMPLES))[0]
        return np.abs(q - self.start).max(axis=0)

    def summary(self) -> str:
        amp = ", ".join(f"{a:.3g}" for a in self.amplitude)
        return (f"excitation: {self.periods} periods of a {self.a.shape[1]}-harmonic Fourier series "
                f"({self.period:g} s) from {np.round(self.start, 3).tolist()}, amplitude [{amp}], "
                f"regressor condition number {self.condition:.3g}, "
                + (f"above the floor z = {self.floor:g} m" if self.floor is not None else "no floor"))

    def spline(self, t0: float = 0.0):
        from rbd_ros.control.trajectory import JointSpline  # lazy: the splines (0.3 s of import)

        n = len(self.start)
        return JointSpline.from_points(t0, self.times, self.waypoints, self.velocities, self.accelerations,
                                       start=(self.start, np.zeros(n), np.zeros(n)))


def fourier(q0: np.ndarray, a: np.ndarray, b: np.ndarray, w: float, t: np.ndarray):
    """``q, qd, qdd`` of the series (module docstring) at times ``t``."""
    lw = w * np.arange(1, a.shape[1] + 1)  # (L,)
    s, c = np.sin(np.outer(t, lw)), np.cos(np.outer(t, lw))  # (S, L)
    q = q0 + s @ a.T + (c - 1.0) @ b.T
    qd = (c * lw) @ a.T - (s * lw) @ b.T
    qdd = -(s * lw**2) @ a.T - (c * lw**2) @ b.T
    return q, qd, qdd


def rest_basis(harmonics: int, w: float) -> np.ndarray:
    """Columns spanning the ``(a, b)`` (2 L) with ``qd(0) = qdd(0) = 0``."""
    lw = w * np.arange(1, harmonics + 1)
    C = np.zeros((2, 2 * harmonics))
    C[0, :harmonics] = lw
    C[1, harmonics:] = lw**2
    return np.linalg.svd(C)[2][2:].T


def plan_excitation(model: MdhModel, start: np.ndarray, period: float = 8.0, periods: int = 2,
                    harmonics: int = 5, floor: float | None = None, points=(), evaluations: int = 80,
                    effort_margin: float = 0.7, velocity_margin: float = 0.8, seed: int = 0,
                    optimise: bool = False) -> Excitation:
    """The optimised series from ``start`` (module docstring); ``floor``/``points`` as
    ``control.tour.plan_tour``'s (a height or None); ``optimise``: the relative-std
    objective and the whole-path check (module docstring).  ``ValueError`` when no motion fits."""
    from rbd_ros.control.tour import Floor, Guard, inner_limits  # lazy: the tour planner (0.3 s of import)
    from rbd_ros.robot import Robot  # lazy: the robot front (0.4 s of import)

    if not (np.isfinite(period) and period > 0 and periods >= 1 and harmonics >= 2):
        raise ValueError(f"excitation: period > 0 s, periods >= 1 and harmonics >= 2, got "
                         f"{period}, {periods}, {harmonics}")
    robot = Robot(model)
    n, w = model.dof, 2.0 * np.pi / period
    start = np.asarray(start, dtype=float)
    base = base_parameters(model)
    guard = None if floor is None else Floor(Guard(robot, points), float(floor))
    lo, hi = inner_limits(model)
    notes = []
    span = hi - lo
    inner = np.clip(start, lo + 0.2 * span, hi - 0.2 * span)  # room to swing: 20 % of the range
    moved = np.flatnonzero(np.isfinite(span) & (np.abs(inner - start) > 1e-12))
    if moved.size:
        notes.append(f"start of {[model.joint_names[j] for j in moved]} moved by up to "
                     f"{np.abs(inner - start).max():.2f} rad (m) off their limits, to swing both ways")
        start = np.where(np.isfinite(span), inner, start)
    room = np.minimum(start - lo, hi - start)
    room = np.where(np.isfinite(room), room, np.pi)
    vmax = velocity_margin * np.abs(model.velocity_limit)
    cap = effort_margin * np.abs(model.effort_limit)
    N = rest_basis(harmonics, w)
    t = np.linspace(0.0, period, SAMPLES, endpoint=False)
    if optimise:

        beta_prior = base.beta(standard_parameters(model))

    def realise(z: np.ndarray) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """The largest feasible scale of ``z`` and (condition, a, b, peak torque)."""
        x = z @ N.T  # (n, 2L)
        a, b = x[:, :harmonics], x[:, harmonics:]
        q, qd, _ = fourier(np.zeros(n), a, b, w, t)
        s = np.minimum(room / np.maximum(np.abs(q).max(axis=0), 1e-12),  # per joint: its limits
                       vmax / np.maximum(np.abs(qd).max(axis=0), 1e-12))[:, None]
        for _ in range(25):
            q, qd, qdd = fourier(start, s * a, s * b, w, t)
            tau = np.abs(robot.inverse_dynamics(q, qd, qdd, include_actuators=True)).max(axis=0)
            low = not np.any(tau > cap) and guard is not None and guard.clearance(q[::4])[0] < 0
            if not (np.any(tau > cap) or low):
                Y = regressor(model, q, qd, qdd)[:, :, base.independent]
                if optimise:
                    return relative_std(Y, beta_prior), s * a, s * b, tau
                Y = Y.reshape(-1, base.count)
                Y = Y / np.maximum(np.linalg.norm(Y, axis=0), 1e-300)
                sv = np.linalg.svd(Y, compute_uv=False)
                return float(sv[0] / max(sv[-1], 1e-300)), s * a, s * b, tau
            s *= 0.8
        return np.inf, a, b, np.zeros(n)

    rng = np.random.default_rng(seed)
    best_z = rng.normal(size=(n, N.shape[1])) / np.arange(1, N.shape[1] + 1)
    best = realise(best_z)
    tries = 0
    while not np.isfinite(best[0]) and tries < 20:
        best_z = rng.normal(size=best_z.shape)
        best, tries = realise(best_z), tries + 1
    if not np.isfinite(best[0]):
        raise ValueError(f"no excitation fits '{model.name}' from {np.round(start, 3).tolist()}: the "
                         "effort limits or the floor leave no motion; give another start (--start)")
    sigma = 0.3
    for _ in range(evaluations):
        z = best_z + sigma * rng.normal(size=best_z.shape) * np.abs(best_z).mean()
        cand = realise(z)
        if cand[0] < best[0]:
            best_z, best, sigma = z, cand, sigma * 1.5
        else:
            sigma *= 1.5 ** -0.25  # the 1/5 success rule
    cond, a, b, tau = best
    if optimise:
        exc = Excitation(start, a, b, float(period), int(periods), np.nan, tau, notes, floor)
        a, b, tau = fit_whole_path(model, exc, effort_margin, velocity_margin, guard)
        Y = regressor(model, *fourier(start, a, b, w, t))[:, :, base.independent]
        notes.append(f"optimised for the base parameters' mean relative std (issue 44.3): "
                     f"{relative_std(Y, beta_prior):.3g} per sample of unit relative noise")
        Y = Y.reshape(-1, base.count)
        Y = Y / np.maximum(np.linalg.norm(Y, axis=0), 1e-300)
        sv = np.linalg.svd(Y, compute_uv=False)
        cond = float(sv[0] / max(sv[-1], 1e-300))
    if cond > 1e3:
        notes.append(f"the regressor's condition number {cond:.3g} is high: some base parameters will "
                     "be poorly identified (a longer period or more room in the limits helps)")
    return Excitation(start, a, b, float(period), int(periods), cond, tau, notes, floor)


def relative_std(Y: np.ndarray, beta: np.ndarray) -> float:
    """``J`` of the module docstring for the base regressor ``Y`` (S, n, b) at the prior's base
    parameters ``beta`` (b,), per sample of unit relative torque noise (so ``J noise / sqrt(N)``
    with ``N`` independent samples of ``noise`` times each joint's RMS torque is the expected
    mean relative standard deviation).  ``inf`` for a rank-deficient ``Y``."""
    S, n, b = Y.shape
    scale = np.maximum(np.abs(beta), 1e-3 * np.abs(beta).max())
    rms = np.sqrt(np.mean((Y @ beta) ** 2, axis=0))  # (n,) each joint's RMS torque
    rms = np.maximum(rms, 1e-6 * max(rms.max(), 1e-300))
    A = (Y * scale / rms[None, :, None]).reshape(-1, b)
    ev, V = np.linalg.eigh(A.T @ A)  # the information matrix (b, b): cheap, b << S n
    if ev[0] <= 1e-20 * ev[-1]:  # condition number of A over 1e10
        return np.inf
    return float(np.mean(np.sqrt((V**2 / ev).sum(axis=1) * S)))


def fit_whole_path(model: MdhModel, exc: Excitation, effort_margin: float, velocity_margin: float,
                   guard=None):
    """``exc``'s ``(a, b, peak torque)`` shrunk by 5 % steps until ``spline()`` passes the whole-
    path check of the position (the model's limits), velocity (``velocity_margin``) and effort
    (``effort_margin``) limits (``control.path_limits``) and, with a ``guard`` (``control.tour``'s
    ``Floor``), stays above the floor at the sent points."""

    from rbd_ros.control.path_limits import PathLimits, check_path  # lazy: the path limits (0.3 s of import)

    limits = PathLimits.from_model(model, effort_margin=effort_margin)
    limits = replace(limits, velocity=velocity_margin * limits.velocity)
    a, b = exc.a, exc.b
    for _ in range(40):
        trial = replace(exc, a=a, b=b)
        res = check_path(trial.spline(), limits)
        if res.violation is None and (guard is None or guard.clearance(trial.waypoints)[0] >= 0):
            return a, b, res.peak_effort
        a, b = 0.95 * a, 0.95 * b
    raise ValueError(f"excitation of '{model.name}': no scale passes the whole-path check "
                     f"({res.violation or 'below the floor'})")
