"""An arm on a differential-drive base: the rolling constraint, its three exact routes
(Kane in generalized speeds, Udwadia-Kalaba, KKT), inverse dynamics to wheel torques, and a
simulation that keeps the constraint.

Coordinates and velocities as ``planar_base`` (``q = [x, y, phi, arm]``, base point B on the
wheel axle midpoint).  No side slip at B, 001 (64), in world rates:

    A(q) qd = 0,   A = [-sin phi, cos phi, 0, 0 ...]                                   (64)
    A qdd = b,     b = -A-dot qd = phi-dot (x-dot cos phi + y-dot sin phi)

In base rates ``v = [v_x, v_y, omega, ...]`` the same constraint is ``v_y = 0`` and, at the
acceleration level, ``v_y-dot = 0`` (constant ``A = e_2^T``, ``b = 0``).

Generalized speeds (Kane, 000 (5)-(11)): ``u = [v_x, omega, arm rates]`` (forward speed, yaw
rate; the diff-drive velocity block of ``rbd_ros.floating_base``'s layout), ``qd = B(q) u``,
``A B = 0`` (9), ``d = 0``, with ``B = [[cos, 0], [sin, 0], [0, 1]] (+) E``;
``B-dot u = [-sin phi omega v_x, cos phi omega v_x, 0, ...]``.  With the partial-velocity
matrices ``T_i = J_i B`` (44), (46) is ``B^T`` times the body sum of 000 (35), so as an ODE
(000 (8)-(11)):

    (B^T M B) u-dot = B^T (f + f_c - h - M B-dot u)           (M, h, f_c: 000 (35), (27))

``speeds``/``base_velocity`` convert between ``u`` and base rates.

Udwadia-Kalaba: ``udwadia_kalaba`` with 001's own ``M_GP``, ``Q = tau_GP - C_GP qd - g_GP``
(001 (45)-(51)).  KKT: 003's ``M``, ``h + g`` (3.28) mapped to base rates, ``A = e_2^T``.  The
multiplier ``lam`` of every route is the same number: the lateral force (N) the ground exerts
on the base at B along its y axis (``A^T lam`` has no moment about B).

Inputs: wheel torques (left, right) with ros2_control's ``diff_drive_controller`` meanings
(``wheel_radius`` r, ``wheel_separation`` s = distance between the wheel contact points; the
left wheel at ``+s/2`` on the base y axis, both axles along +y so positive torque drives
forward), wheel mass lumped into the base body: the ground's forward forces ``tau/r`` at the
contacts give the base-frame generalized force

    F_x = (tau_L + tau_R) / r,    M_z = (s/2) (tau_R - tau_L) / r,    F_y = 0 (+ lam)

Wheel spin inertia ``I_a`` (about the axle, each wheel; default 0): rolling gives wheel rates
``(v_x -/+ omega s/2) / r``, so the wheels add the kinetic energy ``(1/2) u^T M_w u`` with the
constant ``M_w = (I_a / r^2) diag(2, s^2/2)`` on ``(v_x, omega)`` (no cross term, no velocity
terms in Kane's equations: the wheels' gyroscopic moment is about the base x axis, carried by
the ground's normal forces).  It adds to ``M`` on ``v_x, omega`` and leaves ``lam`` alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from rbd_ros.bases.root_joint import check_rolling
from rbd_ros.formulations import Formulations, gauss, kane, lagrange, planar_base
from rbd_ros.formulations.chain import KC, KG, KM, world_kinematics
from rbd_ros.formulations.planar_base import base_accelerations, base_rates, to_base_frame, world_rates
from rbd_ros.formulations.udwadia_kalaba import kkt, udwadia_kalaba

METHODS = ("kane", "udwadia_kalaba", "kkt")
NO_WRENCH = np.zeros(6)  # the kernels' unused tool-wrench argument


@dataclass(frozen=True)
class Wheels:
    """ros2_control ``diff_drive_controller`` ``wheel_radius`` and ``wheel_separation`` (m)."""

    radius: float
    separation: float
    spin_inertia: float = 0.0  # I_a of each wheel about its axle (kg m^2)

    def __post_init__(self) -> None:
        for name in ("radius", "separation"):
            x = getattr(self, name)
            if not (np.isfinite(x) and x > 0.0):
                raise ValueError(f"Wheels: wheel_{name} must be positive and finite, got {x}")
        if not (np.isfinite(self.spin_inertia) and self.spin_inertia >= 0.0):
            raise ValueError(f"Wheels: spin_inertia must be >= 0 and finite, got {self.spin_inertia}")

    def added_inertia(self) -> tuple[float, float]:
        """``(m_v, I_omega) = (2 I_a / r^2, I_a s^2 / (2 r^2))``: ``M_w`` (module docstring)."""
        k = self.spin_inertia / self.radius ** 2
        return 2.0 * k, 0.5 * k * self.separation ** 2

    def base_force(self, tau_wheels: np.ndarray) -> tuple[float, float]:
        """``(F_x, M_z)`` on the base (module docstring) from ``(tau_L, tau_R)``."""
        tl, tr = tau_wheels
        return (tl + tr) / self.radius, 0.5 * self.separation * (tr - tl) / self.radius

    def torques(self, Fx: float, Mz: float) -> np.ndarray:
        """``(tau_L, tau_R)`` giving ``(F_x, M_z)``: ``r (F_x/2 -/+ M_z/s)``."""
        r, s = self.radius, self.separation
        return np.array([r * (0.5 * Fx - Mz / s), r * (0.5 * Fx + Mz / s)])


def constraint(q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """001 (64) in world rates: ``(A, b)`` with ``A qdd = b`` (module docstring)."""
    c, s = np.cos(q[2]), np.sin(q[2])
    A = np.zeros((1, len(q)))
    A[0, 0], A[0, 1] = -s, c
    return A, np.array([qd[2] * (qd[0] * c + qd[1] * s)])


def speeds_basis(q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """000 (8): ``B(q)`` (``qd = B u``, ``A B = 0``) and ``B-dot u``."""
    n = len(q)
    c, s = np.cos(q[2]), np.sin(q[2])
    B = np.zeros((n, n - 1))
    B[0, 0], B[1, 0], B[2, 1] = c, s, 1.0
    B[3:, 2:] = np.eye(n - 3)
    Bdu = np.zeros(n)
    Bdu[0], Bdu[1] = -s * u[1] * u[0], c * u[1] * u[0]
    return B, Bdu


def speeds(v: np.ndarray) -> np.ndarray:
    """Base rates ``[v_x, v_y, omega, ...]`` -> generalized speeds ``[v_x, omega, ...]``."""
    return np.delete(np.asarray(v, dtype=float), 1)


def base_velocity(u: np.ndarray) -> np.ndarray:
    """Generalized speeds -> base rates with ``v_y = 0``."""
    return np.insert(np.asarray(u, dtype=float), 1, 0.0)


def generalized_force(wheels: Wheels, tau_wheels: np.ndarray, tau_arm: np.ndarray) -> np.ndarray:
    """Base-frame generalized force ``[F_x, 0, M_z, tau_arm]`` of the inputs."""
    Fx, Mz = wheels.base_force(tau_wheels)
    return np.concatenate([[Fx, 0.0, Mz], np.asarray(tau_arm, dtype=float)])


def constrained_dynamics(F: Formulations, q: np.ndarray, v: np.ndarray, f: np.ndarray,
                         method: str = "kane", wheels: Wheels | None = None) -> tuple[np.ndarray, float]:
    """Constrained forward dynamics, **base rates** in and out: ``(v-dot, lam)`` with
    ``v-dot[1] = 0`` for the applied base-frame generalized force ``f`` (e.g.
    ``generalized_force``); ``F``: ``Formulations`` of ``planar_base.whole_body_chain``.
    ``method``: ``kane`` (000 (46)), ``udwadia_kalaba`` (001 (62)), ``kkt``; ``wheels``: adds
    their spin inertia ``M_w`` (module docstring)."""
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    check_rolling(v, "v")
    n = len(q)
    mv, Iw = (0.0, 0.0) if wheels is None else wheels.added_inertia()
    qd = world_rates(q, v)
    fw = world_rates(q, f)  # f_world = T f_base (T orthogonal)
    if method == "kane":
        u = speeds(v)
        B, Bdu = speeds_basis(q, u)
        M, C, h, fc, fe = (np.empty((n, n)), np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n))
        kane.kane(F.pk, q, qd, NO_WRENCH, False, M, C, h, fc, fe)
        app = fw + fc - h
        Mu = B.T @ M @ B
        Mu[0, 0] += mv  # M_w in u = (v_x, omega, ...)
        Mu[1, 1] += Iw
        ud = np.linalg.solve(Mu, B.T @ (app - M @ Bdu))
        A, _ = constraint(q, qd)
        # the constraint force A^T lam = M qdd - (f + f_c - h), |A| = 1
        return base_velocity(ud), float(A[0] @ (M @ (B @ ud + Bdu) - app))
    if method == "udwadia_kalaba":
        M, C, g, fe = np.empty((n, n)), np.empty((n, n)), np.empty(n), np.empty(n)
        gauss.gauss(F.dp, q, qd, NO_WRENCH, False, M, C, g, fe)
        A, b = constraint(q, qd)
        M, Q = _with_wheels(q, v, M, fw - C @ qd - g, mv, Iw)
        qdd, Qc = np.empty(n), np.empty(n)
        udwadia_kalaba(M, Q, A, b, qdd, Qc)
        vd = base_accelerations(q, qd, qdd)
        vd[1] = 0.0  # exactly zero by (64); remove the round-off
        return vd, float(A[0] @ Qc)  # |A| = 1
    if method == "kkt":
        M, h, g, wf = np.empty((n, n)), np.empty(n), np.empty(n), np.empty(n)
        lagrange.lagrange_direct(F.pk, q, qd, True, NO_WRENCH, False, M, h, g, wf)
        Mb, hb = to_base_frame(q, v, M, h + g)
        Mb[0, 0] += mv  # M_w; its velocity terms vanish with v_y = 0 (see _with_wheels)
        Mb[2, 2] += Iw
        A = np.zeros((1, n))
        A[0, 1] = 1.0
        vd, lam = np.empty(n), np.empty(1)
        kkt(Mb, f - hb, A, np.zeros(1), vd, lam)
        vd[1] = 0.0  # the constraint row, up to round-off
        return vd, float(lam[0])
    raise ValueError(f"unknown diff_drive method {method!r}; valid: {', '.join(METHODS)}")


def _with_wheels(q: np.ndarray, v: np.ndarray, M: np.ndarray, Q: np.ndarray, mv: float,
                 Iw: float) -> tuple[np.ndarray, np.ndarray]:
    """World-rate ``M`` and ``Q`` with ``M_w``: its force ``-M_w v-dot_b`` with ``v-dot_b = T^T qdd
    + (omega v_y, -omega v_x)`` gives ``M += T M_w T^T``, ``Q -= T M_w (omega v_y, -omega v_x)``
    (``M_w`` on the base-frame ``v_x`` and ``omega``)."""
    if mv == 0.0 and Iw == 0.0:
        return M, Q
    c, s = np.cos(q[2]), np.sin(q[2])
    M = M.copy()
    Q = Q.copy()
    tx = np.array([c, s])  # base x axis in the world
    M[:2, :2] += mv * np.outer(tx, tx)
    M[2, 2] += Iw
    Q[:2] -= mv * v[2] * v[1] * tx
    return M, Q


def forward_dynamics(F: Formulations, wheels: Wheels, q: np.ndarray, v: np.ndarray,
                     tau_wheels: np.ndarray, tau_arm: np.ndarray,
                     method: str = "kane") -> tuple[np.ndarray, float]:
    """``(v-dot, lam)`` (base rates) from wheel torques ``(left, right)`` and arm torques."""
    return constrained_dynamics(F, q, v, generalized_force(wheels, tau_wheels, tau_arm), method, wheels)


def inverse_dynamics(F: Formulations, wheels: Wheels, q: np.ndarray, v: np.ndarray,
                     vd: np.ndarray, method: str = "silver",
                     wrench: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """``(tau_wheels (left, right), tau_arm, lam)`` realising the base-rate ``v-dot`` (with
    ``v[1] = v-dot[1] = 0``): whole-body ``tau = M qdd + h`` in world rates by any
    ``Formulations`` inverse-dynamics ``method``, mapped to ``[F_x, F_y, M_z]`` in the base
    frame; ``lam = F_y`` is what the constraint supplies, the wheels give ``F_x`` and ``M_z``;
    ``wrench``: ``Robot``'s tool wrench (world, on the tool, moment about it)."""
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    vd = np.asarray(vd, dtype=float)
    check_rolling(v, "v")
    check_rolling(vd, "vd")
    fb = planar_base.inverse_dynamics(F, q, v, vd, method, wrench)
    mv, Iw = wheels.added_inertia()
    return wheels.torques(fb[0] + mv * vd[0], fb[2] + Iw * vd[2]), fb[3:], float(fb[1])


# ---- energy and simulation ------------------------------------------------------------------
def energy(F: Formulations, q: np.ndarray, qd: np.ndarray, wheels: Wheels | None = None) -> float:
    """``E = (1/2) qd^T M qd - sum m_i g . c_i`` (+ the wheels' ``(1/2) u^T M_w u``) (world
    rates; M by 000 (35))."""
    n = F.n
    T = np.empty((n + 1, 4, 4))
    Z, w, vo = np.empty((n, 6)), np.empty((n + 1, 3)), np.empty((n + 1, 3))
    world_kinematics(F.pk, q, qd, T, Z, w, vo)
    g = F.pk[n, KG:KG + 3]
    c = np.einsum("nij,nj->ni", T[:n, :3, :3], F.pk[:n, KC:KC + 3]) + T[:n, :3, 3]
    mv, Iw = (0.0, 0.0) if wheels is None else wheels.added_inertia()
    vx = np.cos(q[2]) * qd[0] + np.sin(q[2]) * qd[1]
    wheel = 0.5 * (mv * vx * vx + Iw * qd[2] * qd[2])
    return 0.5 * qd @ F.mass_matrix("kane", q) @ qd + wheel - float(F.pk[:n, KM] @ (c @ g))


def _constant(value: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A fixed arm torque as a law ``(q, v) -> value``."""
    return lambda q, v: value


def simulate(F: Formulations, wheels: Wheels, q0: np.ndarray, v0: np.ndarray,
             tau_wheels: np.ndarray, tau_arm: np.ndarray | Callable[[np.ndarray, np.ndarray], np.ndarray],
             dt: float, steps: int,
             method: str = "kane", stabilise: str | None = None,
             gamma: float = 10.0) -> dict[str, np.ndarray]:
    """RK4 under constant wheel torques and arm torques ``tau_arm`` (an array, or a callable
    ``(q, v) -> torques`` such as a PD hold); returns ``q``, ``v`` (base rates, ``steps + 1`` rows),
    ``v_y`` (the lateral speed at B, world-rate state mapped to the base frame), ``E`` (energy)
    and ``W`` (input work ``int f . qd dt``, integrated alongside).

    * ``method="kane"``: the state is ``(q, u)``, generalized speeds: ``v_y`` is not a state,
      so the constraint holds to round-off by construction.
    * ``method="udwadia_kalaba"``: the state is ``(q, qd)`` in world rates (001's form) and
      ``A qd`` drifts with the integration error; ``stabilise="baumgarte"`` uses
      ``b - gamma A qd`` (first-order decay of the drift), ``stabilise="projection"`` projects
      ``qd`` onto ``A qd = 0`` in the kinetic metric after every step
      (``qd -= M^{-1} A^T (A M^{-1} A^T)^{-1} A qd``)."""
    if method not in ("kane", "udwadia_kalaba"):
        raise ValueError(f"simulate: method must be kane or udwadia_kalaba, got {method!r}")
    if stabilise not in (None, "baumgarte", "projection"):
        raise ValueError(f"simulate: stabilise must be None, baumgarte or projection, got {stabilise!r}")
    n = F.n
    arm_law = tau_arm if callable(tau_arm) else _constant(np.asarray(tau_arm, dtype=float))
    q = np.asarray(q0, dtype=float).copy()
    v0 = np.asarray(v0, dtype=float)
    check_rolling(v0, "v0")
    M = np.empty((n, n))
    Cm = np.empty((n, n))
    g = np.empty(n)
    fe = np.empty(n)

    def rates(q: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(q-dot, s-dot, power) for state s (u or world qd)."""
        v = base_velocity(s) if method == "kane" else base_rates(q, s)
        f = generalized_force(wheels, tau_wheels, arm_law(q, v))
        if method == "kane":
            vd, _ = constrained_dynamics(F, q, v, f, "kane", wheels)
            qd = world_rates(q, v)
            return qd, speeds(vd), float(f @ v)
        gauss.gauss(F.dp, q, s, NO_WRENCH, False, M, Cm, g, fe)  # 001 (46)-(50)
        A, b = constraint(q, s)
        if stabilise == "baumgarte":
            b = b - gamma * (A @ s)
        qdd, Qc = np.empty(n), np.empty(n)
        fw = world_rates(q, f)
        Mw, Q = _with_wheels(q, v, M, fw - Cm @ s - g, *wheels.added_inertia())
        udwadia_kalaba(Mw, Q, A, b, qdd, Qc)
        return s, qdd, float(fw @ s)

    s = speeds(v0) if method == "kane" else world_rates(q, v0)
    Q, V = np.empty((steps + 1, n)), np.empty((steps + 1, n))
    E, W = np.empty(steps + 1), np.empty(steps + 1)
    work = 0.0

    def record(k: int) -> None:
        Q[k] = q
        V[k] = base_velocity(s) if method == "kane" else base_rates(q, s)
        E[k] = energy(F, q, world_rates(q, V[k]) if method == "kane" else s, wheels)
        W[k] = work

    record(0)
    for k in range(steps):
        k1 = rates(q, s)
        k2 = rates(q + 0.5 * dt * k1[0], s + 0.5 * dt * k1[1])
        k3 = rates(q + 0.5 * dt * k2[0], s + 0.5 * dt * k2[1])
        k4 = rates(q + dt * k3[0], s + dt * k3[1])
        q = q + dt / 6.0 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        s = s + dt / 6.0 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        work += dt / 6.0 * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2])
        if method == "udwadia_kalaba" and stabilise == "projection":
            A, _ = constraint(q, s)
            Mq = _with_wheels(q, base_rates(q, s), F.mass_matrix("kane", q), s, *wheels.added_inertia())[0]
            MiA = np.linalg.solve(Mq, A.T)
            s = s - MiA @ np.linalg.solve(A @ MiA, A @ s)
        record(k + 1)
    return {"q": Q, "v": V, "v_y": V[:, 1].copy(), "E": E, "W": W}
