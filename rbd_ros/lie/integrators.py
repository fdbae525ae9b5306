"""Lie-group integrators (not in the documents): one step of Lie-Euler or RKMK4 for

    T-dot = T (H v)^,   x-dot = v[nv-p:],   v-dot = f(T, x, v, u)

with the pose ``T`` in SE(3) (4x4; a subgroup embedded, ``H`` the 6 x nv selection of 004 (58)),
``p`` additive coordinates ``x`` whose rates are the last ``p`` velocities (a robot's joint
angles; none for one rigid body) and ``u`` held over the step (zero-order hold).  The one home
of these schemes and of their names; ``lie.rigid_body`` (one body, ``f`` = 004 (107)) and
``algorithm.floating_integrators`` (a free-flyer robot, ``f`` = ABA) drive them.

* ``lie_euler``: ``T+ = T exp(h (H v)^)``, ``x+ = x + h v_x``, ``v+ = v + h a``;
* ``rkmk4`` (Runge-Kutta-Munthe-Kaas): the classical RK4 tableau in the chart
  ``T = T_k exp(phi^)``, ``phi-dot = S(phi)^{-1} H v`` with 004's ``S(phi) = dexp(-phi)``
  ((29), (55)) inverted by its Bernoulli series (``se3.dexp_inv_series_into``); stage poses
  ``T_k exp(phi_s^)``, ``T+ = T_k exp(phi(h)^)``.

The caller owns the dynamics (no function is passed, so every kernel stays cacheable and is
inlined); one step from ``(T, x, v)`` reads::

    a, V, K, phi, E, t1, t2 = step_scratch(nv)      # once per horizon
    ...
    for s in range(stage_count(method)):
        if s == 0:                                    # stage 1 is the start point itself
            Tc, xc, vc = T, x, v
        else:                                         # RKMK4's stages 2..4
            lie_stage(s, T, x, v, dt, a, V, K, phi, E, Ts, xs)
            Tc, xc, vc = Ts, xs, V[s]
        a[s] = f(Tc, xc, vc, u)                       # the caller's dynamics
        lie_rate(s, twist(vc), K, phi, t1, t2)        # K_s = S(phi_s)^{-1} H v_s
    lie_finish(method, T, x, v, dt, a, V, K, phi, E, T_out, x_out, v_out)

Nothing is allocated per step.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.lie.se3 import compose_exp_into, dexp_inv_series_into

LIE_EULER = 0
RKMK4 = 1
#: the Lie-group integrator names (any case) -> kernel code; the first is the default
INTEGRATORS = {"rkmk4": RKMK4, "lie_euler": LIE_EULER}

_C = (0.0, 0.5, 0.5, 1.0)  # RK4 stage times


def integrator_code(name: str) -> int:
    """The kernel code of a Lie-group integrator name (any case); ValueError naming the choices."""
    code = INTEGRATORS.get(str(name).strip().lower())
    if code is None:
        raise ValueError(f"integrator '{name}' unknown; use one of {list(INTEGRATORS)}")
    return code


@njit(cache=True, inline="always")
def stage_count(method: int) -> int:
    """Stages per step: 1 (Lie-Euler), 4 (RKMK4)."""
    return 1 if method == LIE_EULER else 4


@njit(cache=True)
def step_scratch(nv: int):
    """Scratch for one step with ``nv`` velocities: ``(a, V, K, phi, E, t1, t2)``; ``a``
    (4, nv) the stage accelerations (the caller fills row s), ``V`` (4, nv) the stage
    velocities (row 0 unused: the start ``v``), ``K`` (4, 6) the chart rates."""
    return (np.empty((4, nv)), np.empty((4, nv)), np.empty((4, 6)), np.empty(6), np.empty((4, 4)),
            np.empty(6), np.empty(6))


@njit(cache=True, inline="always")
def twist(H: np.ndarray, v: np.ndarray, out: np.ndarray) -> None:
    """``out = H v``, the se(3) twist of a subgroup's velocity (004 (58))."""
    for r in range(6):
        acc = 0.0
        for j in range(v.shape[0]):
            acc += H[r, j] * v[j]
        out[r] = acc


@njit(cache=True, inline="always")
def lie_stage(s: int, T: np.ndarray, x: np.ndarray, v: np.ndarray, dt: float, a: np.ndarray, V: np.ndarray,
              K: np.ndarray, phi: np.ndarray, E: np.ndarray, Ts: np.ndarray, xs: np.ndarray) -> None:
    """RKMK4's stage ``s`` (1..3) of the step from ``(T, x, v)``: ``phi = h c_s K_{s-1}``,
    pose ``Ts = T exp(phi^)``, ``xs = x + h c_s v_{s-1}``, velocity
    ``V[s] = v + h c_s a_{s-1}`` (``a, V, K, phi, E``: ``step_scratch``)."""
    nv = v.shape[0]
    p = x.shape[0]
    o = nv - p  # x-dot = v[o:]
    h = dt * _C[s]
    for r in range(6):
        phi[r] = h * K[s - 1, r]
    compose_exp_into(T, phi, E, Ts)  # T_k exp(phi^)
    if s == 1:  # the previous stage is the start
        for i in range(p):
            xs[i] = x[i] + h * v[o + i]
    else:
        for i in range(p):
            xs[i] = x[i] + h * V[s - 1, o + i]
    for i in range(nv):
        V[s, i] = v[i] + h * a[s - 1, i]


@njit(cache=True, inline="always")
def lie_rate(s: int, Vt: np.ndarray, K: np.ndarray, phi: np.ndarray, t1: np.ndarray, t2: np.ndarray) -> None:
    """``K_s = S(phi)^{-1} V_t``, the chart rate at stage ``s`` for the stage twist ``V_t``
    (``K_0 = V_t`` at ``phi = 0``)."""
    if s == 0:
        for r in range(6):
            K[0, r] = Vt[r]
    else:
        dexp_inv_series_into(phi, Vt, K[s], t1, t2)


@njit(cache=True, inline="always")
def lie_finish(method: int, T: np.ndarray, x: np.ndarray, v: np.ndarray, dt: float, a: np.ndarray,
               V: np.ndarray, K: np.ndarray, phi: np.ndarray, E: np.ndarray, T_out: np.ndarray,
               x_out: np.ndarray, v_out: np.ndarray) -> None:
    """The step's end from its stages: ``T+ = T exp(phi(h)^)``, ``x+``, ``v+`` (RK4 weights
    ``1/6 (1, 2, 2, 1)``, Lie-Euler ``1``)."""
    nv = v.shape[0]
    p = x.shape[0]
    o = nv - p
    if method == LIE_EULER:
        for r in range(6):  # phi = h H v
            phi[r] = dt * K[0, r]
        compose_exp_into(T, phi, E, T_out)
        for i in range(p):
            x_out[i] = x[i] + dt * v[o + i]
        for i in range(nv):
            v_out[i] = v[i] + dt * a[0, i]
        return
    for r in range(6):  # phi(h) = h/6 (K1 + 2 K2 + 2 K3 + K4)
        phi[r] = dt / 6.0 * (K[0, r] + 2.0 * K[1, r] + 2.0 * K[2, r] + K[3, r])
    compose_exp_into(T, phi, E, T_out)
    for i in range(p):
        j = o + i
        x_out[i] = x[i] + dt / 6.0 * (v[j] + 2.0 * V[1, j] + 2.0 * V[2, j] + V[3, j])
    for i in range(nv):
        v_out[i] = v[i] + dt / 6.0 * (a[0, i] + 2.0 * a[1, i] + 2.0 * a[2, i] + a[3, i])
