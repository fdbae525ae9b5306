"""``RigidBody``: singularity-free dynamics of one rigid body on SO(3), SE(2), SE(3) or X(z)
(004), and its integration on the group.

Dynamics in body-frame quasi-velocities ``v`` (004 (57), (107)-(108), misprint 004 (74)):

    M v-dot + C(v) v = tau + tau_g,   C(v) = ad~_{(M v)},   C(v) v = -ad_v^T M v

with ``M`` any symmetric positive-definite m x m body inertia (misprint 004 §4: not only diagonal;
body frame possibly off the centre of mass) and the gravity wrench the paper omits
(misprint 004 §4, docs/references.md), in SE(3) coordinates ``tau_g6 = [m R^T g0; c x m R^T g0]``,
projected by 004's selection ``H`` ((58), (62), (77), (88)): ``tau_g = H^T tau_g6``.  Mass and
centre of mass come from ``M`` where it holds them (``M = [[m E, -m c^], [m c^, ...]]``); for
SO(3) pass ``mass`` and ``com`` (the fixed point to centre of mass).

Each group is a subgroup of SE(3) (pose ``Q`` embedded as a 4x4 ``T``, velocity ``V = H v``),
and since ``H`` is a Lie-algebra homomorphism, ``ad_v^T p = H^T ad_{Hv}^T (H p)``: one
jitted kernel integrates every group.  Kinematics ``T-dot = T (H v)^`` (right
multiplication: body velocity).  Integrators (not in 004): ``lie_euler`` and ``rkmk4``
(Runge-Kutta-Munthe-Kaas), ``lie.integrators`` (their one home).

Wrenches are body-frame, collocated with ``v`` (004: force before moment), held constant
over each step (zero-order hold).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from rbd_ros.lie import se2, se3, so3, xz
from rbd_ros.lie.integrators import integrator_code, lie_finish, lie_rate, lie_stage, stage_count, step_scratch, twist
from rbd_ros.util import validate
from rbd_ros.util.validate import SimulationError

GROUPS = {"SO3": so3, "SE2": se2, "SE3": se3, "Xz": xz}


@njit(cache=True)
def _rhs(M: np.ndarray, H: np.ndarray, T: np.ndarray, v: np.ndarray, tau: np.ndarray,
         mg: np.ndarray, c: np.ndarray, use_g: bool, s6: np.ndarray, out: np.ndarray) -> None:
    """``out = M^{-1} (tau + ad_v^T M v + tau_g)`` (module docstring; ``M`` is passed as its
    inverse in ``M[1]`` and itself in ``M[0]``); ``s6`` is 18 entries of scratch."""
    m = v.shape[0]
    V = s6[0:6]
    P = s6[6:12]
    G = s6[12:18]
    for r in range(6):  # V = H v, P = H M v
        V[r] = 0.0
        P[r] = 0.0
        for k in range(m):
            if H[r, k] != 0.0:
                V[r] += H[r, k] * v[k]
                mv = 0.0
                for j in range(m):
                    mv += M[0, k, j] * v[j]
                P[r] += H[r, k] * mv
    v0, v1, v2, w0, w1, w2 = V[0], V[1], V[2], V[3], V[4], V[5]
    f0, f1, f2, n0, n1, n2 = P[0], P[1], P[2], P[3], P[4], P[5]
    # ad_V^T P = -[w x f; v x f + w x n]
    G[0] = -(w1 * f2 - w2 * f1)
    G[1] = -(w2 * f0 - w0 * f2)
    G[2] = -(w0 * f1 - w1 * f0)
    G[3] = -(v1 * f2 - v2 * f1) - (w1 * n2 - w2 * n1)
    G[4] = -(v2 * f0 - v0 * f2) - (w2 * n0 - w0 * n2)
    G[5] = -(v0 * f1 - v1 * f0) - (w0 * n1 - w1 * n0)
    if use_g:  # + [F; c x F], F = m R^T g0 (misprint 004 §4: gravity)
        F0 = T[0, 0] * mg[0] + T[1, 0] * mg[1] + T[2, 0] * mg[2]
        F1 = T[0, 1] * mg[0] + T[1, 1] * mg[1] + T[2, 1] * mg[2]
        F2 = T[0, 2] * mg[0] + T[1, 2] * mg[1] + T[2, 2] * mg[2]
        G[0] += F0
        G[1] += F1
        G[2] += F2
        G[3] += c[1] * F2 - c[2] * F1
        G[4] += c[2] * F0 - c[0] * F2
        G[5] += c[0] * F1 - c[1] * F0
    for k in range(m):  # b = tau + H^T G, then out = M^{-1} b
        b = tau[k]
        for r in range(6):
            b += H[r, k] * G[r]
        P[k] = b
    for k in range(m):
        acc = 0.0
        for j in range(m):
            acc += M[1, k, j] * P[j]
        out[k] = acc


@njit(cache=True)
def simulate_kernel(M: np.ndarray, H: np.ndarray, T0: np.ndarray, v0: np.ndarray,
                    tau: np.ndarray, mg: np.ndarray, c: np.ndarray, use_g: bool, dt: float,
                    method: int, Ts: np.ndarray, vs: np.ndarray) -> None:
    """Integrate ``tau.shape[0]`` steps (module docstring; the stages of ``lie.integrators``,
    no additive coordinates) into ``Ts`` (steps+1, 4, 4) and ``vs`` (steps+1, m)."""
    a, V, K, phi, E, t1, t2 = step_scratch(v0.shape[0])  # a, V: stage accelerations, velocities
    s6 = np.empty(18)
    Tst = np.empty((4, 4))
    Hv = np.empty(6)
    x = np.empty(0)
    Ts[0] = T0
    vs[0] = v0
    for k in range(tau.shape[0]):
        T = Ts[k]
        v = vs[k]
        for s in range(stage_count(method)):
            if s == 0:
                _rhs(M, H, T, v, tau[k], mg, c, use_g, s6, a[0])  # a_1 = v-dot at the start
                twist(H, v, Hv)
            else:
                lie_stage(s, T, x, v, dt, a, V, K, phi, E, Tst, x)
                _rhs(M, H, Tst, V[s], tau[k], mg, c, use_g, s6, a[s])  # a_s at the stage
                twist(H, V[s], Hv)
            lie_rate(s, Hv, K, phi, t1, t2)
        lie_finish(method, T, x, v, dt, a, V, K, phi, E, Ts[k + 1], x, vs[k + 1])


class RigidBody:
    """One rigid body on a Lie group (module docstring).

    ``group``: "SO3", "SE2", "SE3" or "Xz"; ``inertia``: the m x m body inertia (SPD);
    ``gravity``: world gravity ``g0`` (3,), applied when a pose is known; ``mass``, ``com``:
    only needed where ``inertia`` does not hold them (SO(3))."""

    def __init__(self, group: str, inertia: Any, gravity: Any = (0.0, 0.0, -9.81),
                 mass: float | None = None, com: Any = None) -> None:
        if group not in GROUPS:
            raise ValueError(f"group '{group}' unknown; use one of {list(GROUPS)}")
        self.group = GROUPS[group]
        m = self.group.dim
        M = np.array(inertia, dtype=float)
        if M.shape != (m, m):
            raise ValueError(f"inertia for {group} must be {m}x{m}, got {M.shape}")
        if not np.isfinite(M).all() or not np.allclose(M, M.T, atol=1e-12 * max(1.0, np.abs(M).max())):
            raise ValueError("inertia must be finite and symmetric")
        if np.linalg.eigvalsh(M).min() <= 0:
            raise ValueError("inertia must be positive definite")
        self.M = M
        self.Minv = np.linalg.inv(M)
        self._MM = np.ascontiguousarray(np.stack([M, self.Minv]))
        self.H = np.ascontiguousarray(self.group.H)
        self.gravity = np.zeros(3) if gravity is None else validate.gravity("gravity", gravity)
        # mass and centre of mass: M6 = [[m E, -m c^], [m c^, ...]] where the group holds them
        if mass is None:
            mass = float(M[0, 0]) if group != "SO3" else 0.0
        elif validate.real("mass", mass) < 0:
            raise ValueError(f"mass must be >= 0 (kg), got {mass}")
        c = np.zeros(3)
        if com is not None:
            c = validate.real_array("com", com)
            if c.shape != (3,):
                raise ValueError(f"com must be 3 numbers (m), got shape {c.shape}")
            validate.finite_array("com", c)
        elif group == "SE3":
            c = so3.vee(M[3:, :3]) / mass
        elif group in ("SE2", "Xz"):
            k = m - 1  # the yaw column: (-m c_y, m c_x)
            c[:2] = np.array([M[1, k], -M[0, k]]) / mass
        self.mass = float(mass)
        self.com = c

    @property
    def dim(self) -> int:
        return self.group.dim

    def _vec(self, name: str, x: Any) -> np.ndarray:
        arr = validate.real_array(name, x)
        if arr.shape != (self.dim,) or not np.isfinite(arr).all():
            raise ValueError(f"{name} must be {self.dim} finite numbers for {self.group.name}, got {arr.shape}")
        return arr

    def _pose(self, pose: Any) -> np.ndarray:
        P = validate.real_array("pose", pose)
        k = 3 if self.group.name in ("SO3", "SE2") else 4
        if P.shape != (k, k) or not np.isfinite(P).all():
            raise ValueError(f"pose for {self.group.name} must be a finite {k}x{k} matrix, got {P.shape}")
        if self.group.name == "SE2" and not np.array_equal(P[2], [0.0, 0.0, 1.0]):
            raise ValueError(f"pose for SE2 is not a rigid transform: its last row is {P[2].tolist()}, not [0, 0, 1]")
        T = validate.rigid_pose(f"pose for {self.group.name}", self.group.to_se3(P))
        if not np.allclose(self.group.from_se3(T), P, rtol=0.0, atol=1e-9):
            raise ValueError(f"pose is not an element of {self.group.name} (it has components the group cannot hold)")
        return np.ascontiguousarray(T)

    def coriolis(self, v: Any) -> np.ndarray:
        """``C(v) = ad~_{(M v)}`` (004 (107)-(108), misprint 004 (74))."""
        return self.group.ad_tilde(self.M @ self._vec("v", v))

    def acceleration(self, v: Any, wrench: Any = None, pose: Any = None) -> np.ndarray:
        """``v-dot = M^{-1}(tau - C(v) v + tau_g)``; gravity only when ``pose`` is given."""
        v = self._vec("v", v)
        tau = np.zeros(self.dim) if wrench is None else self._vec("wrench", wrench)
        T = np.eye(4) if pose is None else self._pose(pose)
        out = np.empty(self.dim)
        _rhs(self._MM, self.H, T, v, tau, self.mass * self.gravity, self.com, pose is not None,
             np.empty(18), out)
        return validate.finite_result("acceleration", out, v=v, wrench=tau)

    def momentum(self, pose: Any, v: Any) -> np.ndarray:
        """World-frame spatial momentum ``[R f; p x R f + R n]`` of ``[f; n] = H M v``
        (conserved without wrench and gravity)."""
        T = self._pose(pose)
        fn = self.H @ (self.M @ self._vec("v", v))
        R, p = T[:3, :3], T[:3, 3]
        f = R @ fn[:3]
        return np.concatenate([f, np.cross(p, f) + R @ fn[3:]])

    def simulate(self, pose0: Any, v0: Any, wrench: Any, dt: float, steps: int | None = None,
                 integrator: str = "rkmk4", gravity: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Integrate from ``(pose0, v0)``; ``wrench`` is ``(m,)`` (held throughout, needs
        ``steps``) or ``(steps, m)`` (row k held over step k), ``None`` for none.  Returns
        ``(poses (steps+1, k, k), velocities (steps+1, m))``; gravity acts if ``gravity``."""

        method = integrator_code(integrator)  # lie.integrators.INTEGRATORS; ValueError naming them
        dt = validate.positive("dt", dt)
        use_g = validate.flag("gravity", gravity)
        if steps is not None:
            steps = validate.integer("steps", steps, 1)
        T0 = self._pose(pose0)
        v0 = self._vec("v0", v0)
        m = self.dim
        if wrench is None or np.ndim(wrench) == 1:
            if steps is None:
                raise ValueError("steps (a positive int) is required with a constant wrench")
            w = np.zeros(m) if wrench is None else self._vec("wrench", wrench)
            tau = np.ascontiguousarray(np.broadcast_to(w, (int(steps), m)))
        else:
            tau = validate.real_array("wrench", wrench)
            if tau.ndim != 2 or tau.shape[1] != m or not np.isfinite(tau).all():
                raise ValueError(f"wrench must be ({m},) or (steps, {m}) finite numbers, got {tau.shape}")
            if steps is not None and steps != tau.shape[0]:
                raise ValueError(f"steps={steps} but wrench has {tau.shape[0]} rows")
        N = tau.shape[0]
        Ts = np.empty((N + 1, 4, 4))
        vs = np.empty((N + 1, m))
        simulate_kernel(self._MM, self.H, T0, v0, tau, self.mass * self.gravity, self.com,
                        bool(use_g and self.gravity.any()), dt, method, Ts, vs)
        ok = np.isfinite(Ts).all(axis=(1, 2)) & np.isfinite(vs).all(axis=1)
        if not ok.all():
            k = int(np.argmin(ok))
            raise SimulationError(f"simulation diverged at t = {k * dt:.6g} s (step {k} of {N}): the state became "
                                  f"NaN or Inf; use a smaller dt (now {dt:g} s) or smaller wrenches")
        name = self.group.name
        if name == "SO3":
            return Ts[:, :3, :3].copy(), vs
        if name == "SE2":
            P = np.zeros((N + 1, 3, 3))
            P[:, :2, :2] = Ts[:, :2, :2]
            P[:, :2, 2] = Ts[:, :2, 3]
            P[:, 2, 2] = 1.0
            return P, vs
        return Ts, vs
