"""Forward simulation of a fixed-base ``Robot`` (a mixin ``Robot`` inherits; the public API is
``Robot.simulate``, ``SimulationResult`` and ``SimulationError``, all also importable from
``rbd_ros.robot``): zero-order-hold torques or a torque callback, integrated by the kernels of
``algorithm.integrators`` (rk4 003 (5.3)-(5.4), semi-implicit Euler).

The mixin uses the host's ``dof``, ``_mp``, ``_real``, ``_states`` and ``_singular`` (the
singular-mass-matrix error), all defined by ``Robot``.  A divergence with the actuator model
on names the joint damping that made the explicit integrator unstable, when it is that
(``rbd_ros.robot.damping``, the MuJoCo bridge's rule too).
"""
from __future__ import annotations

from typing import Any, Callable

import numba
import numpy as np

from rbd_ros.algorithm import integrators
from rbd_ros.model.data import empty_workspace
from rbd_ros.model.mdh_model import MdhModel
from rbd_ros.robot.damping import damping_diagnosis
from rbd_ros.util import validate
from rbd_ros.util.validate import SimulationError  # its home is the ground floor (lie raises it too)


def is_jitted(fn: Any) -> bool:
    """A numba dispatcher (``@njit`` function) the integrator kernel can call."""
    return isinstance(fn, numba.core.registry.CPUDispatcher)


class SimulationResult(tuple):
    """``(q, qd, qdd)`` trajectories, each ``(steps + 1, n)``; unpacks as a 3-tuple.
    Also ``.t`` (times, ``steps + 1``) and ``.tau`` (the torque held over each step,
    ``(steps, n)``)."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    t: np.ndarray
    tau: np.ndarray

    def __new__(cls, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, t: np.ndarray,
                tau: np.ndarray) -> "SimulationResult":
        self = super().__new__(cls, (q, qd, qdd))
        self.q, self.qd, self.qdd, self.t, self.tau = q, qd, qdd, t, tau
        return self



def callback_finite(U: np.ndarray, h: float, Q: np.ndarray, V: np.ndarray) -> None:
    """A feedback law's output ``U[k]`` computed from a finite state ``(Q[k], V[k])`` holds no
    NaN or Inf; else a ``SimulationError`` naming the law and the step, not a "diverged" state
    (a law fed an already diverged state is the divergence's, reported by the caller)."""
    bad = ~np.isfinite(U).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        if not (np.isfinite(Q[k]).all() and np.isfinite(V[k]).all()):
            return
        raise SimulationError(f"the torque callback returned NaN or Inf at t = {k * h:.6g} s (step {k}): "
                              f"{U[k].tolist()}")


class Simulation:
    """``Robot.simulate`` (see the module docstring)."""

    # the host's members the mixin uses, all set or defined by ``Robot`` (declared for the type
    # checker only: annotations, no class attributes)
    model: MdhModel
    dof: int
    joint_names: tuple[str, ...]
    _mp: np.ndarray
    _real: Callable[[str, Any], np.ndarray]
    _states: Callable[..., np.ndarray]
    _singular: Callable[..., Exception]
    mass_matrix: Callable[..., np.ndarray]

    def simulate(self, q0: Any, qd0: Any, tau: Any, dt: float, integrator: str = "rk4",
                 include_actuators: bool = False, steps: int | None = None) -> SimulationResult:
        """Integrate from ``(q0, qd0)`` with step ``dt`` under zero-order-hold torques.

        ``tau``: an ``(steps, n)`` array (row k held over ``[k dt, (k+1) dt)``), or a torque
        callback ``tau_fn(t, q, qd, out)`` evaluated at the start of every step (then ``steps``
        is required): an ``@njit`` function runs inside the integrator, a plain Python function
        is called between one-step kernel calls (same result, a few microseconds slower per
        step).  ``integrator``: ``"rk4"`` (003 (5.3)-(5.4)) or ``"semi_implicit_euler"``
        (alias ``"euler"``; ``algorithm.integrators.INTEGRATORS``).
        Returns a ``SimulationResult`` that unpacks as ``q, qd, qdd`` (each ``(steps + 1, n)``;
        ``algorithm.integrators``).  Raises ``SimulationError`` ("diverged at t = ...") when the
        state becomes NaN or Inf, ``SingularMassMatrixError`` when M(q) is singular."""
        q0 = self._states("q0", q0, batch_ok=False)
        qd0 = self._states("qd0", qd0, batch_ok=False)
        method = integrators.integrator_code(integrator)  # ValueError naming the choices
        dt = validate.positive("dt", dt)
        act = validate.flag("include_actuators", include_actuators)
        if steps is not None:
            steps = validate.integer("steps", steps, 1)
        n = self.dof
        python_fn = None
        if callable(tau) and not isinstance(tau, np.ndarray):
            if steps is None:
                raise ValueError("steps (a positive int) is required with a torque callback")
            if is_jitted(tau):
                fn, use_fn = tau, True
            else:
                fn, use_fn, python_fn = None, False, tau
            tau_arr = np.zeros((int(steps), n))
        else:
            tau_arr = self._real("tau", tau)
            if tau_arr.ndim != 2 or tau_arr.shape[1] != n or tau_arr.shape[0] < 1:
                raise ValueError(f"tau must have shape (steps, {n}), got {tau_arr.shape}")
            validate.finite_array("tau", tau_arr)
            if steps is not None and steps != tau_arr.shape[0]:
                raise ValueError(f"steps={steps} but tau has {tau_arr.shape[0]} rows")
            tau_arr = tau_arr.copy()
            fn, use_fn = None, False
        N = tau_arr.shape[0]
        Q = np.empty((N + 1, n))
        QD = np.empty((N + 1, n))
        QDD = np.empty((N + 1, n))
        # a private workspace: the kernel releases the GIL, so another thread may use self._ws
        ws = empty_workspace(n)
        args = (self._mp, ws)
        h = dt
        try:
            if use_fn:  # a jitted callback: its own kernel, compiled once per callback
                integrators.integrate_callback(*args, q0, qd0, tau_arr, h, method, act, fn, Q, QD, QDD)
            elif python_fn is None:
                integrators.integrate(*args, q0, qd0, tau_arr, h, method, act, Q, QD, QDD)
            else:
                Q[0], QD[0] = q0, qd0
                for k in range(N):  # one kernel call per step, the callback in between
                    python_fn(k * h, Q[k], QD[k], tau_arr[k])
                    integrators.integrate(*args, Q[k], QD[k], tau_arr[k:k + 1], h, method, act,
                                          Q[k:k + 2], QD[k:k + 2], QDD[k:k + 2])
        except ZeroDivisionError as exc:
            raise self._singular(Q[0], include_actuators) from exc
        if use_fn or python_fn is not None:
            callback_finite(tau_arr, h, Q, QD)
        if not (np.isfinite(Q[N]).all() and np.isfinite(QD[N]).all() and np.isfinite(QDD[N]).all()):
            bad = ~(np.isfinite(Q).all(axis=1) & np.isfinite(QD).all(axis=1)
                    & np.isfinite(QDD).all(axis=1))
            k = int(np.argmax(bad))
            why = self._damping_cause(Q[0], Q[max(k - 1, 0)], h, integrator) if act else None
            raise SimulationError(
                f"simulation diverged at t = {k * h:.6g} s (step {k} of {N}): the state became "
                f"NaN or Inf; " + (why or f"use a smaller dt (now {h:g} s) or smaller torques"))
        return SimulationResult(Q, QD, QDD, np.arange(N + 1) * h, tau_arr)

    def _damping_cause(self, q0: np.ndarray, q_last: np.ndarray, dt: float, integrator: str) -> str | None:
        """The joint damping that makes the explicit integrator unstable at ``dt``
        (``robot.damping``: at the start or the last finite state), or None."""
        b = self.model.viscous
        if not np.any(b > 0):
            return None
        for q in (q0, q_last):
            if np.isfinite(q).all():
                M = self.mass_matrix(np.ascontiguousarray(q), include_actuators=True)
                why = damping_diagnosis(self.joint_names, b, M, dt, integrator)
                if why is not None:
                    return why
        return None


__all__ = ["Simulation", "SimulationError", "SimulationResult"]
