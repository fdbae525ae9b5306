"""The discrete-time linearization of one integrator step (issue 42; ``Robot.linearize`` with
``dt``): the exact Jacobians ``A_d = d(q+, v+)/d(q, v)``, ``B_d = d(q+, v+)/d tau`` of ONE step of
the integrator ``Robot.simulate`` runs, ``tau`` held over the step (zero-order hold), in the
tangent coordinates of the continuous ``A`` (``Derivatives.linearize``).

Each step is differentiated by the chain rule through its stages, the stage's own
``forward_dynamics_derivatives`` (CM18) at the stage state: the variational equation of the
Runge-Kutta scheme, carried exactly as the kernel computes it (no truncation beyond the
kernel's own).  Columns of every tracked derivative: ``[dq (nv); dv (nv); du (nv)]``.

* **Fixed base** (``algorithm.integrators``; names ``INTEGRATORS``'s core ones): ``y = [q; v]``,
  ``F(y) = [v; f(q, v, u)]``, ``dF = [[0, I], [f_q, f_v]]``, ``dF/du = [0; M^-1]``.
  ``rk4``: ``y_s = y + h c_s k_{s-1}`` (``c = 0, 1/2, 1/2, 1``), ``k_s = F(y_s)``, so
  ``dy_s = [I 0] + h c_s dk_{s-1}``, ``dk_s = dF(y_s) dy_s + [0 dF/du(y_s)]``, and
  ``dy+ = [I 0] + h/6 (dk_0 + 2 dk_1 + 2 dk_2 + dk_3)``.  ``semi_implicit_euler`` (``euler``):
  ``v+ = v + h f``, ``q+ = q + h v+``: ``dv+ = [h f_q, I + h f_v, h M^-1]``, ``dq+ = [I 0 0] + h dv+``.
* **Planar base** (``planar_base.ground_step``; ``rk4``, the only scheme it has): the same RK4 in
  the coordinates ``c = [x, y, yaw, joints]`` with ``c-dot = W(yaw) v`` (``W = diag(R(yaw), 1, I)``),
  so ``dF = [[d(W v)/d yaw e_yaw^T, W], [f_q W^-1, f_v]]`` (``f_q`` is in the tangent, whose
  first-order chart is ``dc = W(yaw) dq``); ``A_d = W(yaw+)^-1 dc+/dc W(yaw)`` on the positions.
* **Floating base** (``lie.integrators``: ``rkmk4``, ``lie_euler``): in the chart
  ``T = T_k exp(phi^)`` every stage is an RK stage of ``(phi, x, v)``; the step's input
  ``T_k exp(e^)`` moves a stage pose ``T_k exp(e^) exp(phi_s^)`` by the right perturbation
  ``d_s = Ad(exp(-phi_s)) e + S(phi_s) dphi_s`` (``exp(phi + dphi) = exp(phi) exp(S(phi) dphi)``,
  ``S(phi) = dexp(-phi)``, 004 (29)/(55)), so ``da_s = f_q [d_s; dx_s] + f_v dV_s + M^-1 du``;
  the chart rate ``K_s = S(phi_s)^-1 V_s`` (the kernel's series ``sum_k c_k ad_phi^k``, through
  ``ad^8``) varies as ``S^-1 dV_s - sum_k c_k sum_{j<k} ad_phi^j ad(ad_phi^{k-1-j} V_s) dphi_s``
  (``ad_x y = -ad_y x``).  The end pose ``T_k exp(phi_e^)`` gives the output's base tangent
  ``d_e = Ad(exp(-phi_e)) e + S(phi_e) dphi_e``.  ``lie_euler``: one stage, ``phi_e = h v_b``.
* **Diff-drive base** (``planar_base.ground_step`` rolling: the planar RK4 with ``v_y = 0`` and
  ``a_y = 0`` exactly): the same RK4 in ``y = [c; s]``, the independent speeds ``s = [v_x,
  omega, qd]`` (``v = S s``, ``robot.diff_drive_derivatives``), ``c-dot = W(yaw) S s`` and
  ``s-dot`` the constrained dynamics, so ``dF = [[d(W S s)/d yaw e_yaw^T, W S], [f_q W^-1,
  f_s]]``, ``dF/du = [0; f_u]`` with ``(f_q, f_s, f_u)`` its ``forward_dynamics_derivatives``;
  the inputs are its ``nu`` wheel and joint efforts; ``A_d`` on ``[dq; ds]`` (``nv + ns``), as
  the continuous ``A``.

The fixed base's RK4 runs in one jitted call (``algorithm.discrete_step``), the rest in numpy.
``discrete_linearize`` is the entry ``Robot.linearize`` calls; ``check_step`` validates
``dt`` and the integrator's name (``ValueError`` naming either).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from rbd_ros.algorithm import discrete_step as ds
from rbd_ros.algorithm.integrators import CORE_INTEGRATORS
from rbd_ros.lie import se3, so3
from rbd_ros.lie.integrators import INTEGRATORS
from rbd_ros.robot import diff_drive_derivatives as ddd
from rbd_ros.util import validate

_C = (0.0, 0.5, 0.5, 1.0)  # RK4 stage times
_W = (1.0, 2.0, 2.0, 1.0)  # RK4 weights (over 6)


def integrators_of(base_type: str) -> tuple[str, ...]:
    """The integrator names ``Robot.simulate`` takes for this base, its default first."""
    if base_type == "floating":
        return tuple(INTEGRATORS)
    if base_type in ("planar", "diff_drive"):
        return ("rk4",)

    return CORE_INTEGRATORS


def check_step(base_type: str, dt: Any, integrator: Any) -> tuple[float | None, str | None]:
    """``(dt, integrator)`` validated: ``(None, None)`` for the continuous time (``dt`` None),
    else a positive finite ``dt`` and a name of ``integrators_of(base_type)`` (lower case; None:
    the default).  ``ValueError`` naming ``dt`` or ``integrator``."""
    if dt is None:
        if integrator is not None:
            raise ValueError(f"integrator={integrator!r} needs dt > 0 (dt=None is the continuous-time "
                             "linearization, which has no integrator)")
        return None, None
    if isinstance(dt, bool) or not isinstance(dt, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(dt)) or not float(dt) > 0.0:
        raise ValueError(f"dt must be a positive finite number of seconds (None: continuous time), got {dt!r}")
    names = integrators_of(base_type)
    if integrator is None:
        return float(dt), names[0]
    name = str(integrator).strip().lower()
    if not isinstance(integrator, str) or name not in names:
        raise ValueError(f"integrator {integrator!r} unknown for a {base_type} base; use one of {list(names)}")
    return float(dt), "semi_implicit_euler" if name == "euler" else name


def discrete_linearize(robot: Any, q: Any, v: Any, tau: Any, dt: float, integrator: str,
                       act: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(A_d, B_d)`` of one step (``(2 nv, 2 nv)``, ``(2 nv, nv)``; a diff drive ``(nv + ns, nv + ns)``,
    ``(nv + ns, nu)``; ``(N, ...)`` for batches:
    on a fixed base every stage one batch call of the dynamics and its derivatives for all N
    states, on a moving base state by state) with validated ``dt`` and ``integrator``
    (``check_step``)."""
    if robot.base_type == "fixed":
        _, (q, v, u) = robot._batch(q=q, qd=v, tau=tau)  # forward_dynamics' checks, by name
        if integrator == "semi_implicit_euler":
            return _semi_implicit_euler(robot, q, v, u, dt, act)
        return _fixed_rk4(robot, q, v, u, dt, act)
    if np.ndim(q) == 2:
        q, v, tau = (np.asarray(x, dtype=float) for x in (q, v, tau))
        if not (v.ndim == tau.ndim == 2 and v.shape[0] == tau.shape[0] == q.shape[0]):
            raise ValueError(f"a batch needs q, v, tau with the same number of rows, got {q.shape}, "
                             f"{v.shape}, {tau.shape}")
        res = [discrete_linearize(robot, *x, dt, integrator, act) for x in zip(q, v, tau)]
        return np.stack([r[0] for r in res]), np.stack([r[1] for r in res])
    robot.forward_dynamics_derivatives(q, v, tau, act)  # validates the state (and refuses a base) by name
    q, v, u = (np.array(x, dtype=float) for x in (q, v, tau))
    if robot.base_type == "floating":
        return _lie_step(robot, q, v, u, dt, integrator == "rkmk4", act)
    return _ground_rk4(robot, q, v, u, dt)


def _derivs(robot: Any, q: np.ndarray, v: np.ndarray, u: np.ndarray, act: bool) -> tuple[np.ndarray, ...]:
    """``(a, f_q, f_v, M^-1)`` at one state."""
    kw = {"include_actuators": act} if act else {}
    a = np.asarray(robot.forward_dynamics(q, v, u, **kw), dtype=float)
    return (a, *robot.forward_dynamics_derivatives(q, v, u, act))


def _fixed_rk4(robot: Any, q: np.ndarray, v: np.ndarray, u: np.ndarray, h: float,
               act: bool) -> tuple[np.ndarray, np.ndarray]:
    """A fixed base's RK4 step in one jitted call per state (``algorithm.discrete_step``; a batch
    through the robot's batch runner, on its threads)."""
    q, v, u = (np.ascontiguousarray(x, dtype=float) for x in (q, v, u))
    n = q.shape[-1]
    A, B = np.empty((*q.shape[:-1], 2 * n, 2 * n)), np.empty((*q.shape[:-1], 2 * n, n))
    if q.ndim == 2:
        ok = np.empty(q.shape[0], dtype=np.bool_)
        robot._run_batch(ds.rk4_step_jacobians_batch, ds.rk4_step_jacobians_rows, q.shape[0], q, v, u, h, act,
                         A, B, ok)
        bad = None if ok.all() else int(np.argmin(ok))
    else:
        bad = None if ds.rk4_step_jacobians(robot._mp, robot._ws, q, v, u, h, act, A, B) else 0
    if bad is not None:
        raise robot._singular(q if q.ndim == 1 else q[bad], act)
    inputs = {"q": q, "qd": v, "tau": u, "dt": h}
    return (validate.finite_result("linearize (A_d)", A, **inputs),
            validate.finite_result("linearize (B_d)", B, **inputs))


def _rk4(rates: Any, y: np.ndarray, nu: int, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dy+/dy, dy+/du, y+)`` of one RK4 step of ``y-dot = F(y, u)`` (``rates(y) -> (F, dF/dy,
    dF/du)``; ``y`` one state or ``(N, m)``), the stages as ``algorithm.integrators.step`` forms
    them (module docstring)."""
    m = y.shape[-1]
    I0 = np.hstack([np.eye(m), np.zeros((m, nu))])
    ys, dys = y, I0
    acc, ksum = np.zeros((*y.shape[:-1], m, m + nu)), np.zeros_like(y)
    for s in range(4):
        k, J, Bu = rates(ys)
        dk = J @ dys
        dk[..., m:] += Bu
        acc += _W[s] * dk
        ksum += _W[s] * k
        if s < 3:
            c = h * _C[s + 1]
            ys, dys = y + c * k, I0 + c * dk
    out = I0 + h / 6.0 * acc
    return out[..., :m], out[..., m:], y + h / 6.0 * ksum


def _semi_implicit_euler(robot: Any, q: np.ndarray, v: np.ndarray, u: np.ndarray, h: float,
                         act: bool) -> tuple[np.ndarray, np.ndarray]:
    """``v+ = v + h f(q, v, u)``, ``q+ = q + h v+`` (fixed base, one state or a batch; module
    docstring)."""
    n = u.shape[-1]
    _, fq, fv, Minv = _derivs(robot, q, v, u, act)
    dv = np.concatenate([h * fq, np.eye(n) + h * fv, h * Minv], axis=-1)
    dq = np.hstack([np.eye(n), np.zeros((n, 2 * n))]) + h * dv
    out = np.concatenate([dq, dv], axis=-2)
    return out[..., :2 * n], out[..., 2 * n:]


def _chart(yaw: float, nv: int) -> np.ndarray:
    """``W(yaw) = diag(R(yaw), 1, I)``: world rates of the base-frame velocity, and the first-order
    chart ``dc = W dq`` of the planar tangent (``T exp(dq^)``) in the coordinates."""
    c, s = math.cos(yaw), math.sin(yaw)
    W = np.eye(nv)
    W[0, 0], W[0, 1], W[1, 0], W[1, 1] = c, -s, s, c
    return W


def _ground_rk4(robot: Any, q: np.ndarray, v: np.ndarray, u: np.ndarray,
                h: float) -> tuple[np.ndarray, np.ndarray]:
    """A ground base's RK4 (``planar_base.ground_step``) in ``[c; s]``, mapped to the tangent
    ``[dq; ds]`` (module docstring): ``s = v`` on a planar base (``S = I``), the independent
    speeds of a diff drive (``v = S s``, its rolling step)."""
    nv = v.size
    S = ddd.projections(robot)[0] if robot.base_type == "diff_drive" else np.eye(nv)
    ns = S.shape[1]

    def rates(y: np.ndarray) -> tuple[np.ndarray, ...]:
        c, w = y[:nv], S @ y[nv:]  # base rates v = S s
        a, fq, fs, fu = _derivs(robot, c, w, u, False)
        W = _chart(c[2], nv)
        J = np.zeros((nv + ns, nv + ns))
        sn, cs = math.sin(c[2]), math.cos(c[2])
        J[0, 2], J[1, 2] = -sn * w[0] - cs * w[1], cs * w[0] - sn * w[1]  # d(W S s)/d yaw
        J[:nv, nv:] = W @ S
        J[nv:, :nv], J[nv:, nv:] = fq @ W.T, fs  # W^-1 = W^T
        return np.concatenate([W @ w, S.T @ a]), J, np.vstack([np.zeros((nv, fu.shape[1])), fu])

    Ay, By, y1 = _rk4(rates, np.concatenate([q, S.T @ v]), u.size, h)
    Win, Wout = np.eye(nv + ns), np.eye(nv + ns)
    Win[:nv, :nv], Wout[:nv, :nv] = _chart(q[2], nv), _chart(y1[2], nv).T
    return Wout @ Ay @ Win, Wout @ By


# ---- a floating base: the Lie-group integrators ---------------------------------------------
def _adjoint(T: np.ndarray) -> np.ndarray:
    """``Ad_T = [[R, p^ R], [0, R]]`` ([linear; angular] twists)."""
    R, p = T[:3, :3], T[:3, 3]
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = R
    out[:3, 3:] = so3.hat(p) @ R
    return out


def twist_ad(V: np.ndarray) -> np.ndarray:
    """``lie.se3.ad`` of a twist ``[v; w]`` or of ``(..., 6)`` of them, ``[[w^, v^], [0, w^]]``,
    written for batches (``se3.ad``'s ``np.block`` costs ~0.1 ms a call)."""
    if V.ndim == 1:  # one twist: a literal (the batch form's 36 indexed stores cost ~60 us)
        u0, u1, u2, w0, w1, w2 = V.tolist()
        return np.array([[0.0, -w2, w1, 0.0, -u2, u1], [w2, 0.0, -w0, u2, 0.0, -u0], [-w1, w0, 0.0, -u1, u0, 0.0],
                         [0.0, 0.0, 0.0, 0.0, -w2, w1], [0.0, 0.0, 0.0, w2, 0.0, -w0], [0.0, 0.0, 0.0, -w1, w0, 0.0]])
    out = np.zeros((*V.shape[:-1], 6, 6))
    for r, c, x in ((0, 0, V[..., 3:]), (3, 3, V[..., 3:]), (0, 3, V[..., :3])):
        out[..., r, c + 1], out[..., r, c + 2] = -x[..., 2], x[..., 1]
        out[..., r + 1, c], out[..., r + 1, c + 2] = x[..., 2], -x[..., 0]
        out[..., r + 2, c], out[..., r + 2, c + 1] = -x[..., 1], x[..., 0]
    return out


def _series(phi: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(S(phi)^-1 w, S(phi)^-1, d(S(phi)^-1 w)/d phi)`` of the kernel's truncated series
    (module docstring)."""
    P = twist_ad(phi)
    powers = [np.eye(6)]
    ys = [w]
    for _ in range(8):
        powers.append(P @ powers[-1])
        ys.append(P @ ys[-1])
    Sinv = np.zeros((6, 6))
    for c, Pk in zip(se3.BERNOULLI_SERIES, powers):
        Sinv += c * Pk
    ad_ys = [twist_ad(y) for y in ys[:8]]
    D = np.zeros((6, 6))
    for k in range(1, 9):
        if se3.BERNOULLI_SERIES[k]:
            D -= se3.BERNOULLI_SERIES[k] * sum(powers[j] @ ad_ys[k - 1 - j] for j in range(k))
    return Sinv @ w, Sinv, D


def _base_tangent(phi: np.ndarray, E: np.ndarray, dphi: np.ndarray) -> np.ndarray:
    """``d = Ad(exp(-phi)) e + S(phi) dphi`` (rows: the 6 base tangent coordinates)."""
    return _adjoint(se3.exp(-phi)) @ E + se3.dexp(-phi) @ dphi


def _lie_step(robot: Any, q: np.ndarray, v: np.ndarray, u: np.ndarray, h: float, rkmk4: bool,
              act: bool) -> tuple[np.ndarray, np.ndarray]:
    """One ``rkmk4`` / ``lie_euler`` step (``algorithm.floating_integrators``; module docstring)."""
    nv = v.size
    n = nv - 6
    cols = 3 * nv
    T = so3.pose_matrix(q[:3], q[3:7] / np.linalg.norm(q[3:7]))
    E = np.zeros((6, cols))
    E[:, :6] = np.eye(6)  # the base tangent e of the input
    dx0 = np.zeros((n, cols))
    dx0[:, 6:nv] = np.eye(n)
    dV0 = np.zeros((nv, cols))
    dV0[:, nv:2 * nv] = np.eye(nv)
    dU = np.zeros((nv, cols))
    dU[:, 2 * nv:] = np.eye(nv)
    x, Vs, phi = q[7:], v, np.zeros(6)
    dx, dV, dphi = dx0, dV0, np.zeros((6, cols))
    d = E
    acc = {"K": np.zeros(6), "dK": np.zeros((6, cols)), "dV": np.zeros((nv, cols)), "da": np.zeros((nv, cols))}
    qs = q
    stages = 4 if rkmk4 else 1
    for s in range(stages):
        a, fq, fv, Minv = _derivs(robot, qs, Vs, u, act)
        da = fq @ np.vstack([d, dx]) + fv @ dV + Minv @ dU
        if s == 0:
            K, dK = Vs[:6].copy(), dV[:6].copy()
        else:
            K, Sinv, D = _series(phi, Vs[:6])
            dK = Sinv @ dV[:6] + D @ dphi
        w = _W[s] if rkmk4 else 6.0
        acc["K"] += w * K
        acc["dK"] += w * dK
        acc["dV"] += w * dV
        acc["da"] += w * da
        if s + 1 < stages:  # the next stage (lie_stage): phi, x, V from this stage's rates
            c = h * _C[s + 1]
            phi, dphi = c * K, c * dK
            x, dx = q[7:] + c * Vs[6:], dx0 + c * dV[6:]
            Vs, dV = v + c * a, dV0 + c * da
            d = _base_tangent(phi, E, dphi)
            Ts = T @ se3.exp(phi)
            qs = np.concatenate([Ts[:3, 3], so3.rotation_to_quaternion(Ts[:3, :3]), x])
    s6 = h / 6.0
    phi_e, dphi_e = s6 * acc["K"], s6 * acc["dK"]
    out = np.vstack([_base_tangent(phi_e, E, dphi_e), dx0 + s6 * acc["dV"][6:], dV0 + s6 * acc["da"]])
    return out[:, :2 * nv], out[:, 2 * nv:]


__all__ = ["check_step", "discrete_linearize", "integrators_of", "twist_ad"]
