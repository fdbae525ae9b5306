"""The twist profile ``rbd-ros bringup --controller diff_drive_velocity`` sends on a mobile
base's ``~/cmd_vel`` (issue 29), and the base path it commands.

Three segments of ``segment_time`` T s each, every component a ``sin^2(pi tau / T)`` bump
(starts and ends at rest with zero acceleration, so the segments join smoothly), body frame:

1. straight ahead:          v_x = 0.5 m/s peak, omega = 0
2. a left arc:              v_x = 0.4 m/s,      omega = +0.8 rad/s  (planar base: v_y = +0.2 m/s)
3. backwards, turning right: v_x = -0.3 m/s,    omega = -0.8 rad/s  (planar base: v_y = -0.2 m/s)

Peak accelerations are ``peak pi / T`` (T = 4 s: 0.39 m/s^2 and 0.63 rad/s^2), inside the
controller's default limits ``max_velocity = [1, 1, 2]``, ``max_acceleration = [1, 1, 3]``,
so its rate limiter passes the profile unchanged.  The commanded path is the twist integrated
from the start pose, ``x' = R(yaw) [v_x, v_y]``, ``yaw' = omega`` (RK4 at 1 ms, interpolated
linearly in between: within ~1e-7 m): ``path(t)``.  ROS-free.
"""
from __future__ import annotations

import math

import numpy as np

#: peak body twists [v_x (m/s), v_y (m/s), omega (rad/s)] of the three segments; v_y only for
#: a planar (holonomic) base
PEAKS = np.array([[0.5, 0.0, 0.0], [0.4, 0.2, 0.8], [-0.3, -0.2, -0.8]])


class TwistProfile:
    """The profile of the module docstring from ``t0`` (s), segments of ``segment_time`` s;
    ``planar`` keeps the sideways component (a differential drive has none)."""

    def __init__(self, segment_time: float, planar: bool, t0: float = 0.0, dt: float = 1e-3) -> None:
        if not (math.isfinite(segment_time) and segment_time > 0):
            raise ValueError(f"segment_time must be a positive number of seconds, got {segment_time}")
        self.segment_time, self.planar, self.t0 = float(segment_time), bool(planar), float(t0)
        self.peaks = PEAKS.copy()
        if not planar:
            self.peaks[:, 1] = 0.0
        self.duration = 3 * self.segment_time
        # the commanded path relative to the start pose, at the integration grid
        steps = int(math.ceil(self.duration / dt))
        self._t = np.linspace(0.0, self.duration, steps + 1)
        self._p = np.zeros((steps + 1, 3))
        h = self.duration / steps
        for k in range(steps):  # RK4 on x' = R(yaw) [v_x, v_y], yaw' = omega
            t, p = self._t[k], self._p[k]
            k1 = self._rate(t, p)
            k2 = self._rate(t + h / 2, p + h / 2 * k1)
            k3 = self._rate(t + h / 2, p + h / 2 * k2)
            k4 = self._rate(t + h, p + h * k3)
            self._p[k + 1] = p + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def twist(self, t: float) -> np.ndarray:
        """The body twist ``[v_x, v_y, omega]`` at time ``t`` (zero outside the profile)."""
        tau = t - self.t0
        if not 0.0 <= tau < self.duration:
            return np.zeros(3)
        seg = min(int(tau // self.segment_time), 2)
        s = math.sin(math.pi * (tau - seg * self.segment_time) / self.segment_time)
        return self.peaks[seg] * s * s  # sin^2 bump: rest to rest, zero acceleration at the ends

    def _rate(self, tau: float, p: np.ndarray) -> np.ndarray:
        v = self.twist(self.t0 + tau)
        c, s = math.cos(p[2]), math.sin(p[2])
        return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])  # world rates

    def path(self, t: np.ndarray, start: np.ndarray) -> np.ndarray:
        """The commanded poses ``[x, y, yaw]`` (world) at times ``t`` from the pose ``start``
        at ``t0`` (held before, the end pose after)."""
        tau = np.clip(np.asarray(t, dtype=float) - self.t0, 0.0, self.duration)
        rel = np.column_stack([np.interp(tau, self._t, self._p[:, k]) for k in range(3)])
        c, s = math.cos(start[2]), math.sin(start[2])
        out = np.empty_like(rel)
        out[:, 0] = start[0] + c * rel[:, 0] - s * rel[:, 1]
        out[:, 1] = start[1] + s * rel[:, 0] + c * rel[:, 1]
        out[:, 2] = start[2] + rel[:, 2]
        return out
