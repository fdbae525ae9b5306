"""The mobile-manipulator parts of ``rbd-ros bringup`` (issue 18): the base's tour as a
``nav_msgs/Path``, and the base's report numbers.

* ``base_path_message``: the figure eight (``rbd_ros.control.tour.FigureEight``) sampled every
  ``spacing`` s as timed poses in the odom frame, stamped with the tour's start (each pose's
  stamp is its time from the header stamp onward, as the controller reads it); the
  controller's C2 spline through them reproduces the eight to micrometres.
* ``base_report``: from the controller's state (``base_x, base_y, base_yaw`` reference and
  measurement) ``base_path_rms`` / ``base_path_max`` (m, the base point's distance to its
  reference) and ``base_heading_rms`` (rad, wrapped); from ``/odom`` (ground truth) the largest
  side velocity ``lateral_velocity_max`` (m/s; a rolling diff drive has none: 0 in the ideal
  model, the side slip in the wheels model); with the wheel rates of ``/joint_states`` the
  largest longitudinal wheel slip ``wheel_slip_max`` (m/s, ``|r w_wheel - (v_x -/+ omega s/2)|``
  over both wheels, diff drive), the peak base efforts and (diff drive) wheel torques.
* ``video_states``: the measured and reference rows of the run's video (``rbd_ros.sim.render``
  draws a mobile base from the core's coordinates, the base's ``x, y, yaw`` first).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from rbd_ros.ros.messages import set_stamp

BASE_KEYS = ("base_path_rms", "base_path_max", "base_heading_rms", "wheel_slip_max", "lateral_velocity_max")


def base_path_message(eight: Any, t_start: float, frame: str = "odom", spacing: float = 0.1) -> Any:
    """The figure eight from ``t_start`` (s, the header stamp) as a timed ``nav_msgs/Path``."""
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Path

    msg = Path()
    msg.header.frame_id = frame
    set_stamp(msg.header.stamp, t_start)
    p, pd, pdd = np.zeros(3), np.zeros(3), np.zeros(3)
    steps = int(math.ceil(eight.duration / spacing - 1e-9))
    for k in range(1, steps + 1):
        tk = min(k * spacing, eight.duration)
        eight.evaluate(eight.t0 + tk, p, pd, pdd)
        ps = PoseStamped()
        ps.header.frame_id = frame
        set_stamp(ps.header.stamp, t_start + tk)
        ps.pose.position.x, ps.pose.position.y = float(p[0]), float(p[1])
        ps.pose.orientation.z, ps.pose.orientation.w = math.sin(0.5 * p[2]), math.cos(0.5 * p[2])
        msg.poses.append(ps)
    return msg


def base_report(ref: np.ndarray, meas: np.ndarray, effort: np.ndarray, odom: np.ndarray | None,
                wheels: np.ndarray | None, model: Any) -> dict[str, Any]:
    """The base's numbers (module docstring).  ``ref``/``meas``/``effort``: the controller
    state's first three columns; ``odom``: rows ``(t, v_x, v_y, omega)``; ``wheels``: rows
    ``(t, w_left, w_right)`` (diff drive)."""
    e = np.asarray(ref, float) - np.asarray(meas, float)
    dist = np.hypot(e[:, 0], e[:, 1])
    heading = np.angle(np.exp(1j * e[:, 2]))
    out: dict[str, Any] = {"base_path_rms": float(np.sqrt(np.mean(dist**2))),
                           "base_path_max": float(dist.max()),
                           "base_heading_rms": float(np.sqrt(np.mean(heading**2))),
                           "base_heading_max": float(np.abs(heading).max()),
                           "peak_base_effort": np.abs(effort).max(axis=0).tolist()}
    if model.base_type == "diff_drive":  # tau_L, R = (r/2)(F_x -/+ 2 M_z / s), the ground's F_y aside
        r, s = float(model.wheel_radius), float(model.wheel_separation)
        F, M = np.asarray(effort, float)[:, 0], np.asarray(effort, float)[:, 2]
        out["peak_wheel_torque"] = [float(np.abs(0.5 * r * (F - 2 * M / s)).max()),
                                    float(np.abs(0.5 * r * (F + 2 * M / s)).max())]
    if odom is not None and len(odom):
        out["lateral_velocity_max"] = float(np.abs(odom[:, 2]).max())
        if wheels is not None and len(wheels) and model.base_type == "diff_drive":
            r, s = float(model.wheel_radius), float(model.wheel_separation)
            # the odometry sample of each wheel sample's stamp (the bridge publishes both per step)
            i = np.clip(np.searchsorted(odom[:, 0], wheels[:, 0]), 0, len(odom) - 1)
            same = np.abs(odom[i, 0] - wheels[:, 0]) < 1e-9
            vx, wz = odom[i, 1], odom[i, 3]
            slip = np.abs(np.c_[r * wheels[:, 1] - (vx - 0.5 * s * wz), r * wheels[:, 2] - (vx + 0.5 * s * wz)])
            out["wheel_slip_max"] = float(slip[same].max()) if same.any() else float("nan")
    return out


def video_states(base_meas: np.ndarray, meas: np.ndarray, base_ref: np.ndarray,
                 ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(measured, reference)`` rows for ``render.Recording``: the base's ``(x, y, yaw)``
    (the controller state's first three columns) ahead of the arm's joint positions."""
    return (np.hstack([np.asarray(base_meas, float)[:, :3], np.asarray(meas, float)]),
            np.hstack([np.asarray(base_ref, float)[:, :3], np.asarray(ref, float)]))
