"""Whole-horizon integration of the forward dynamics in one jitted call.

State ``x = [q; qd]``, ``x-dot = f(x, tau) = [qd; FD(q, qd, tau)]``
(003 (5.3)-(5.4); misprint 003 (5.3): it prints ``M^{-1}[h + g - tau]``, the sign
of (5.2) ``M^{-1}[tau - h - g]`` is the right one; docs/references.md).  Torques are a zero-order hold: step k
(time ``k dt``) uses ``tau[k]`` over ``[k dt, (k+1) dt)``.  Optionally a jitted torque
callback ``tau_fn(t, q, qd, out)`` (an ``@njit`` function) fills ``tau[k]`` from the state at
the start of step k (a sampled controller), overwriting that row.

* ``RK4``: classical fourth-order Runge-Kutta,
  ``x+ = x + dt/6 (k1 + 2 k2 + 2 k3 + k4)``, ``k1 = f(x)``, ``k2 = f(x + dt/2 k1)``,
  ``k3 = f(x + dt/2 k2)``, ``k4 = f(x + dt k3)``, all with the held ``tau[k]``;
* ``SEMI_IMPLICIT_EULER``: ``qd+ = qd + dt FD(q, qd, tau[k])``, ``q+ = q + dt qd+``
  (symplectic Euler).

Outputs ``Q, QD, QDD`` have ``steps + 1`` rows: the initial state then one per step;
``QDD[k] = FD(Q[k], QD[k], tau[k])`` and the last row uses the last torque.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from rbd_ros.algorithm.forward_dynamics import forward_dynamics
from rbd_ros.algorithm.layout import vrow

RK4 = 0
SEMI_IMPLICIT_EULER = 1

#: Every integrator name rbd_ros accepts (any case) -> (this module's kernel code, or None if
#: only MuJoCo has it; MuJoCo's ``mjtIntegrator`` name).  The one table of ``Robot.simulate``,
#: the ``forward_simulate`` service and the MuJoCo bridge.  MuJoCo's ``Euler`` is also
#: semi-implicit (velocity first, then position with the new velocity; plus implicit joint
#: damping), so "euler" and "semi_implicit_euler" name it in both.
INTEGRATORS: dict[str, tuple[int | None, str]] = {
    "rk4": (RK4, "mjINT_RK4"),
    "semi_implicit_euler": (SEMI_IMPLICIT_EULER, "mjINT_EULER"),
    "euler": (SEMI_IMPLICIT_EULER, "mjINT_EULER"),
    "implicit": (None, "mjINT_IMPLICIT"),
    "implicitfast": (None, "mjINT_IMPLICITFAST"),
}
CORE_INTEGRATORS = tuple(name for name, (code, _) in INTEGRATORS.items() if code is not None)


def integrator_code(name: str) -> int:
    """The kernel code of a core integrator name (any case); ValueError naming the choices."""
    code = INTEGRATORS.get(str(name).strip().lower(), (None, ""))[0]
    if code is None:
        raise ValueError(f"integrator '{name}' unknown; use one of {list(CORE_INTEGRATORS)}")
    return code


@njit(cache=True)
def no_torque_callback(t: float, q: np.ndarray, qd: np.ndarray, out: np.ndarray) -> None:
    """Placeholder callback (``use_fn`` False): leaves the given torques alone."""
    return None


@njit(cache=True, nogil=True)  # the dynamics server simulates beside its other services
def integrate(mp: np.ndarray, ws: np.ndarray, q0: np.ndarray, qd0: np.ndarray, tau: np.ndarray,
              dt: float, method: int, actuators: bool, tau_fn, use_fn: bool, Q: np.ndarray,
              QD: np.ndarray, QDD: np.ndarray) -> None:
    """Integrate ``tau.shape[0]`` steps of ``dt`` from ``(q0, qd0)`` (module docstring)."""
    n = q0.shape[0]
    steps = tau.shape[0]
    v = vrow(n)
    qt = ws[v + 1, :n]
    vt = ws[v + 2, :n]
    aq = ws[v + 3, :n]
    av = ws[v + 4, :n]
    kv = ws[v + 5, :n]
    for i in range(n):
        Q[0, i] = q0[i]
        QD[0, i] = qd0[i]
    for k in range(steps):
        q = Q[k]
        qd = QD[k]
        if use_fn:
            tau_fn(k * dt, q, qd, tau[k])
        u = tau[k]
        forward_dynamics(mp, ws, q, qd, u, actuators, QDD[k])
        if method == RK4:
            h2 = 0.5 * dt
            for i in range(n):  # k1 = (qd, qdd)
                aq[i] = qd[i]
                av[i] = QDD[k, i]
                qt[i] = q[i] + h2 * qd[i]
                vt[i] = qd[i] + h2 * QDD[k, i]
            for stage in range(2):  # k2, k3 (weight 2); the next stage point at dt/2, then dt
                forward_dynamics(mp, ws, qt, vt, u, actuators, kv)
                h = h2 if stage == 0 else dt
                for i in range(n):
                    aq[i] += 2.0 * vt[i]
                    av[i] += 2.0 * kv[i]
                    qt[i] = q[i] + h * vt[i]
                    vt[i] = qd[i] + h * kv[i]
            forward_dynamics(mp, ws, qt, vt, u, actuators, kv)  # k4
            s = dt / 6.0
            for i in range(n):
                Q[k + 1, i] = q[i] + s * (aq[i] + vt[i])
                QD[k + 1, i] = qd[i] + s * (av[i] + kv[i])
        else:
            for i in range(n):
                QD[k + 1, i] = qd[i] + dt * QDD[k, i]
                Q[k + 1, i] = q[i] + dt * QD[k + 1, i]
    if steps > 0:
        forward_dynamics(mp, ws, Q[steps], QD[steps], tau[steps - 1], actuators, QDD[steps])
    else:
        for i in range(n):
            QDD[0, i] = 0.0
