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


@njit(cache=True, nogil=True)
def step(mp: np.ndarray, ws: np.ndarray, Q: np.ndarray, QD: np.ndarray, QDD: np.ndarray, k: int,
         u: np.ndarray, dt: float, method: int, actuators: bool) -> None:
    """One step from row ``k`` of ``Q, QD`` under the held torque ``u``: ``QDD[k]`` and row
    ``k + 1`` (module docstring: RK4 or semi-implicit Euler)."""
    n = Q.shape[1]
    v = vrow(n)
    qt = ws[v + 1, :n]
    vt = ws[v + 2, :n]
    aq = ws[v + 3, :n]
    av = ws[v + 4, :n]
    kv = ws[v + 5, :n]
    q = Q[k]
    qd = QD[k]
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


@njit(cache=True, nogil=True)
def finish(mp: np.ndarray, ws: np.ndarray, tau: np.ndarray, actuators: bool, Q: np.ndarray,
           QD: np.ndarray, QDD: np.ndarray) -> None:
    """The last row's ``QDD`` (with the last torque; zero for no step)."""
    steps = tau.shape[0]
    if steps > 0:
        forward_dynamics(mp, ws, Q[steps], QD[steps], tau[steps - 1], actuators, QDD[steps])
    else:
        QDD[0, :] = 0.0


@njit(cache=True, nogil=True)  # the dynamics server simulates beside its other services
def integrate(mp: np.ndarray, ws: np.ndarray, q0: np.ndarray, qd0: np.ndarray, tau: np.ndarray,
              dt: float, method: int, actuators: bool, Q: np.ndarray, QD: np.ndarray,
              QDD: np.ndarray) -> None:
    """Integrate ``tau.shape[0]`` steps of ``dt`` from ``(q0, qd0)`` with the given torques
    (module docstring).  Arrays and numbers only, so every process finds its cache entry: a
    function argument would be keyed by the function object, new in each process, and a
    function value inside makes numba refuse to cache at all (``integrate_callback``)."""
    Q[0, :] = q0
    QD[0, :] = qd0
    for k in range(tau.shape[0]):
        step(mp, ws, Q, QD, QDD, k, tau[k], dt, method, actuators)
    finish(mp, ws, tau, actuators, Q, QD, QDD)


@njit(nogil=True)  # not cached (module docstring of ``integrate``): once per callback and process
def integrate_callback(mp: np.ndarray, ws: np.ndarray, q0: np.ndarray, qd0: np.ndarray, tau: np.ndarray,
                       dt: float, method: int, actuators: bool, tau_fn, Q: np.ndarray,
                       QD: np.ndarray, QDD: np.ndarray) -> None:
    """``integrate`` with a jitted torque callback ``tau_fn(t, q, qd, out)`` filling ``tau[k]``
    from the state at the start of step k (module docstring): a user's sampled feedback law."""
    Q[0, :] = q0
    QD[0, :] = qd0
    for k in range(tau.shape[0]):
        tau_fn(k * dt, Q[k], QD[k], tau[k])
        step(mp, ws, Q, QD, QDD, k, tau[k], dt, method, actuators)
    finish(mp, ws, tau, actuators, Q, QD, QDD)
