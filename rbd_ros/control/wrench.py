"""Wrenches at a force/torque sensor from the model (ROS-free, jitted, allocation-free).

Convention (the one of the statics, 003 ch. 2): a wrench ``[f; n]`` is what the robot's
sensor side exerts **on what hangs below the sensor** (MuJoCo's ``force``/``torque`` sensors
measure exactly this: the force the parent body exerts on the child), in the sensor frame,
moment about the sensor origin.  With the arm still and nothing touched it is the payload's
weight held up; pressing on a table it gains the push on the table: so the payload-compensated
wrench is the wrench the tool exerts **on the environment** (003 (2.1): the ``m`` of
``tau = J^T m``, (2.2)), e.g. ``f_z = -10`` N in world axes pressing 10 N down.

* :class:`SensorFrame`: where the sensor sits: on body ``link`` (model order) at ``site``
  (4x4 in that body's frame: the tool transform on the last body, else its origin).
* :func:`payload_wrench`: the wrench the sensor must exert to carry what hangs below it
  (links ``link .. n-1``) through the motion ``(q, q', q'')`` under gravity: the link force
  ``f_i, n_i`` of the RNEA backward pass 003 (4.36)-(4.37) with no external wrench, moved to the
  sensor origin (``n_s = n_i - p_s x f_i``) and rotated into the sensor axes.
* :func:`estimate_from_torques`: the contact wrench from the joint torques: the torques the
  motion needs, ``ID(q, q', q'')`` (RNEA, the drive's friction and armature included), taken
  from the measured ones leave ``tau_ext = J_s^T m`` (003 (2.2), ``J_s`` the geometric
  Jacobian of the sensor origin); ``m = (J_s J_s^T + lambda^2 I)^{-1} J_s tau_ext`` (least
  squares; exact for a non-singular 6-DoF arm), rotated into the sensor axes.  It assumes every
  contact is below the sensor, and is as good as the torques: a joint held by dry friction
  hides part of them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rbd_ros.algorithm.kinematics import forward_kinematics, frame_jacobian
from rbd_ros.algorithm.layout import WF, WGR, WN
from rbd_ros.algorithm.rnea import rnea_full
from rbd_ros.control.laws import dls_solve
from rbd_ros.model import MdhModel
from rbd_ros.model.data import empty_workspace, pack_model

ESTIMATE_DAMPING = 1e-6  # lambda^2 of the least-squares solve (m^2, rad^2 units mixed: tiny)


@dataclass(frozen=True)
class SensorFrame:
    """A sensor on body ``link`` (0-based, model order) at ``site`` (4x4, in the body's frame)."""

    link: int
    site: np.ndarray
    name: str

    @classmethod
    def of(cls, model: MdhModel, link: str = "") -> "SensorFrame":
        """At ``link`` (a name of ``model.link_names``; '' or the tip link: the tool frame
        on the last body); ``ValueError`` naming the links for another name."""
        names = list(model.link_names)
        if link in ("", names[-1], model.tip_link, "tool"):
            return cls(model.dof - 1, np.array(model.tool, dtype=float), names[-1])
        if link not in names:
            raise ValueError(f"F/T sensor link '{link}' is not a link of the chain; use one of "
                             f"{names} ('' = the tip)")
        return cls(names.index(link), np.eye(4), link)


@njit(cache=True)
def _to_site(f0: float, f1: float, f2: float, n0: float, n1: float, n2: float,
             site: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - jitted
    """``out = [R_s^T f; R_s^T (n - p_s x f)]`` (body axes, moment about the body origin ->
    site axes, moment about the site origin)."""
    px, py, pz = site[0, 3], site[1, 3], site[2, 3]
    m0 = n0 - (py * f2 - pz * f1)  # n - p x f
    m1 = n1 - (pz * f0 - px * f2)
    m2 = n2 - (px * f1 - py * f0)
    for c in range(3):
        out[c] = site[0, c] * f0 + site[1, c] * f1 + site[2, c] * f2
        out[3 + c] = site[0, c] * m0 + site[1, c] * m1 + site[2, c] * m2


@njit(cache=True)
def payload_kernel(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray,
                   qdd: np.ndarray, link: int, site: np.ndarray, no_wrench: np.ndarray,
                   tau: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - jitted
    """:func:`payload_wrench` (module docstring)."""
    rnea_full(mp, ws, q, qd, qdd, no_wrench, False, False, tau)  # f_i, n_i in ws (4.36)-(4.37)
    _to_site(ws[link, WF], ws[link, WF + 1], ws[link, WF + 2], ws[link, WN], ws[link, WN + 1],
             ws[link, WN + 2], site, out)


@njit(cache=True)
def estimate_kernel(mp: np.ndarray, ws: np.ndarray, q: np.ndarray, qd: np.ndarray,
                    qdd: np.ndarray, tau_measured: np.ndarray, link: int, site: np.ndarray,
                    lam2: float, no_wrench: np.ndarray, tau: np.ndarray, J: np.ndarray,
                    A: np.ndarray, y: np.ndarray, out: np.ndarray) -> bool:  # pragma: no cover
    """:func:`estimate_from_torques` (module docstring); False if the solve failed."""
    n = q.shape[0]
    rnea_full(mp, ws, q, qd, qdd, no_wrench, False, True, tau)  # ID with the drive's terms
    for j in range(n):
        tau[j] = tau_measured[j] - tau[j]  # tau_ext
    forward_kinematics(mp, ws, q)
    frame_jacobian(mp, ws, n, n + 1 if link == n - 1 else link + 1, J)  # J_s (tool or origin)
    for r in range(6):  # y = J tau_ext
        s = 0.0
        for j in range(n):
            s += J[r, j] * tau[j]
        y[r] = s
    if not dls_solve(J, lam2, A, y):  # y <- (J J^T + lam2 I)^{-1} y
        return False
    row = n if link == n - 1 else link  # the sensor's world rotation: tool or body
    for c in range(3):  # world -> sensor axes: x_s = R^T x_w
        f = 0.0
        m = 0.0
        for r in range(3):
            f += ws[row, WGR + 3 * r + c] * y[r]
            m += ws[row, WGR + 3 * r + c] * y[3 + r]
        out[c] = f
        out[3 + c] = m
    return True


class WrenchModel:
    """The model side of an F/T sensor (module docstring), with its own workspace: nothing is
    allocated per call."""

    def __init__(self, model: MdhModel, link: str = "") -> None:
        self.model = model
        self.frame = SensorFrame.of(model, link)
        self.mp = pack_model(model)
        self.ws = empty_workspace(model.dof)
        n = model.dof
        self._none = np.zeros(6)
        self._tau = np.zeros(n)
        self._J = np.zeros((6, n))
        self._A = np.zeros((6, 6))
        self._y = np.zeros(6)
        self._site = np.ascontiguousarray(self.frame.site)

    def payload(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, out: np.ndarray) -> np.ndarray:
        """:func:`payload_wrench` into ``out`` (6)."""
        payload_kernel(self.mp, self.ws, q, qd, qdd, self.frame.link, self._site, self._none,
                       self._tau, out)
        return out

    def estimate(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, tau_measured: np.ndarray,
                 out: np.ndarray) -> bool:
        """:func:`estimate_from_torques` into ``out`` (6); False (``out`` NaN) if ``J_s J_s^T``
        is not positive definite even damped."""
        ok = estimate_kernel(self.mp, self.ws, q, qd, qdd, tau_measured, self.frame.link,
                             self._site, ESTIMATE_DAMPING, self._none, self._tau, self._J,
                             self._A, self._y, out)
        if not ok:
            out.fill(np.nan)
        return ok


def payload_wrench(model: MdhModel, q, qd, qdd, link: str = "") -> np.ndarray:
    """The payload wrench at the sensor on ``link`` (module docstring), a new array."""
    wm = WrenchModel(model, link)
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    return wm.payload(q, qd, qdd, np.zeros(6))


def estimate_from_torques(model: MdhModel, q, qd, qdd, tau_measured, link: str = "") -> np.ndarray:
    """The contact wrench at the sensor on ``link`` from the joint torques (module
    docstring), a new array."""
    out = np.zeros(6)
    wm = WrenchModel(model, link)
    q, qd, qdd, tau_measured = (np.asarray(x, dtype=float) for x in (q, qd, qdd, tau_measured))
    wm.estimate(q, qd, qdd, tau_measured, out)
    return out
