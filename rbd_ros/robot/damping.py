"""Explicit joint damping's stability rule, the one home of its diagnosis (``Robot.simulate``
when it diverges, the MuJoCo bridge when it picks or checks its integrator:
``rbd_ros.sim.simulator``).

An explicit integrator integrates a joint's viscous damping ``b`` (URDF ``<dynamics
damping>``, the model's ``viscous``) as the decay ``qd' = -(b / m) qd`` on the smallest inertia
the joint can see, ``m = 1 / (M^-1)_ii`` (armature included).  Its step is stable while
``z = b dt / m`` stays inside the method's real-axis stability interval: RK4 ``z < 2.785``
(003 (5.3)-(5.4): ``|1 - z + z^2/2 - z^3/6 + z^4/24| <= 1``), semi-implicit Euler ``z < 2``
(``qd_{k+1} = (1 - z) qd_k``).  A light wrist with stiff damping (Panda's last joint,
``m`` ~ 5e-3 kg m^2, ``b`` = 30 N m s at 1 ms: ``z`` = 5.5) diverges whatever the torques."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RK4_DAMPING_LIMIT = 2.785  # RK4 is stable for z = -b dt / m in (-2.785, 0]
EULER_DAMPING_LIMIT = 2.0  # semi-implicit Euler: |1 - z| <= 1
#: integrator name (``algorithm.integrators.INTEGRATORS``, any case) -> its limit of ``b dt / m``
DAMPING_LIMITS = {"rk4": RK4_DAMPING_LIMIT, "semi_implicit_euler": EULER_DAMPING_LIMIT,
                  "euler": EULER_DAMPING_LIMIT}


def damping_numbers(damping: np.ndarray, M: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """``(b dt / m, m)`` per joint for the mass matrix ``M`` (``m = 1 / (M^-1)_ii``)."""
    m_min = 1.0 / np.diag(np.linalg.inv(M))
    return np.asarray(damping, dtype=float) * dt / m_min, m_min


def damping_why(name: str, damping: float, m_min: float, z: float) -> str:
    """The words of the diagnosis for one joint (shared by the bridge and ``Robot.simulate``)."""
    return f"joint '{name}' has damping {damping:.3g} on an inertia of {m_min:.3g}: b dt / m = {z:.3g}"


def damping_diagnosis(names: Sequence[str], damping: np.ndarray, M: np.ndarray, dt: float,
                      integrator: str) -> str | None:
    """Why an explicit ``integrator`` cannot be stable at step ``dt`` with this damping (the
    worst joint, its ``b dt / m`` against the limit, a stable step), or None when it can."""
    limit = DAMPING_LIMITS.get(integrator.lower())
    if limit is None or not len(names):
        return None
    z, m_min = damping_numbers(damping, M, dt)
    worst = int(np.argmax(z))
    if not z[worst] > limit:
        return None
    return (f"{damping_why(names[worst], float(damping[worst]), float(m_min[worst]), float(z[worst]))} > "
            f"{limit} ({integrator}'s limit for damping, which it integrates explicitly): use a dt below "
            f"{limit / z[worst] * dt:.2g} s, or less damping on that joint")


__all__ = ["DAMPING_LIMITS", "EULER_DAMPING_LIMIT", "RK4_DAMPING_LIMIT", "damping_diagnosis", "damping_numbers",
           "damping_why"]
