"""Wheel odometry of a differential-drive base, as ros2_control's ``diff_drive_controller``
computes it (ROS-free).

From the wheel angle increments ``d_l``, ``d_r`` (rad) since the last update, with wheel
radius r and separation s:

    ds = r (d_l + d_r) / 2,      dphi = r (d_r - d_l) / s

and the pose moves along the arc: the SE(2) exponential of the body twist ``(ds, 0, dphi)``
(``lie.se2.planar_exp``; ``diff_drive_controller``'s ``integrateExact``, which falls back to
second-order Runge-Kutta for a straight step, the same limit):

    (x, y) += R(phi) V_l(dphi) (ds, 0),      phi += dphi

The twist is ``(ds / dt, 0, dphi / dt)`` over the update interval.
"""
from __future__ import annotations

import math

import numpy as np

from rbd_ros.lie.se2 import planar_exp


class WheelOdometry:
    """Pose ``(x, y, yaw)`` and base-frame twist ``(v_x, omega)`` from wheel angles."""

    def __init__(self, radius: float, separation: float) -> None:
        if not (radius > 0 and separation > 0):
            raise ValueError(f"wheel radius and separation must be > 0, got {radius}, {separation}")
        self.radius, self.separation = float(radius), float(separation)
        self.reset()

    def reset(self, x: float = 0.0, y: float = 0.0, yaw: float = 0.0) -> None:
        """Start again at ``(x, y, yaw)``; the next ``update`` only takes its wheel angles."""
        self.x, self.y, self.yaw = float(x), float(y), float(yaw)
        self.v_x = self.omega = 0.0
        self._last: tuple[float, float, float] | None = None

    def update(self, left: float, right: float, t: float) -> None:
        """Wheel angles (rad) at time ``t`` (s): integrate the step since the last call."""
        if self._last is None:
            self._last = (float(left), float(right), float(t))
            return
        l0, r0, t0 = self._last
        self._last = (float(left), float(right), float(t))
        dl, dr = self.radius * (left - l0), self.radius * (right - r0)
        ds, dphi = 0.5 * (dl + dr), (dr - dl) / self.separation
        dx, dy = planar_exp(ds, 0.0, dphi)  # ds V_l(dphi) e_x
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        self.x += c * dx - s * dy
        self.y += s * dx + c * dy
        self.yaw += dphi
        dt = t - t0
        if dt > 0:
            self.v_x, self.omega = ds / dt, dphi / dt

    @property
    def pose(self) -> np.ndarray:
        return np.array([self.x, self.y, self.yaw])
