"""The mobile-base side of the ``mujoco_bridge`` node: its parameters and ``/odom``.

Parameters (declared only for a robot whose model has a ``planar`` or ``diff_drive`` base;
``rbd_ros.sim.mobile_sim.MobileConfig``): ``base_model`` (wheels | ideal), ``odom_source``
(ground_truth | wheel_odometry), ``initial_base_pose`` [x, y, yaw], ``wheel_effort_limit``,
``base_effort_limit``, ``wheel_armature``, ``wheel_viscous``, ``wheel_coulomb``,
``floor_friction``, ``base_height``; and ``odom_frame`` (default ``odom``), ``base_frame``
(default the model's ``base_link``).

``/odom`` (nav_msgs/Odometry): ``header.frame_id = odom_frame``, ``child_frame_id =
base_frame``, stamped with simulation time, with every ``/joint_states``: the base pose in
the odom frame (the world, where the base started at ``initial_base_pose``) and its twist in
the base frame.  ``ground_truth``: MuJoCo's base body (3-D: a wheeled base pitches and bounces
a little on its contacts); ``wheel_odometry`` (diff drive): ``rbd_ros.sim.odometry`` on the
measured wheel angles of the same ``/joint_states`` (z = base height, planar orientation),
as ``diff_drive_controller`` computes it; it drifts from the truth when the wheels slip.
Covariances are zero (unknown).

``/tf`` is not the bridge's: ``rbd-ros state-publisher`` (started by bringup) publishes
``odom -> `` the URDF's root link from this ``/odom``, with every link of the URDF (REP-105),
so one node owns the tree.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from rbd_ros.ros import topics
from rbd_ros.ros.common import NodeConfigError, recordable_qos
from rbd_ros.ros.messages import set_stamp
from rbd_ros.ros.parameters import declare_settings, schema


def mobile_config(node, model) -> tuple[Any, str, str]:
    """``(MobileConfig, odom_frame, base_frame)`` from the node's parameters."""
    from rbd_ros.sim.mobile_sim import MobileConfig  # lazy: the mobile simulator, not at the bridge's import

    given = declare_settings(node, MobileConfig, schema("mujoco_bridge"))
    frames = schema("mujoco_bridge").declare(node, ["odom_frame", "base_frame"])
    odom_frame, base_frame = str(frames["odom_frame"]), str(frames["base_frame"] or model.base_link)
    try:
        cfg = MobileConfig(**given)
    except (ValueError, TypeError) as exc:
        raise NodeConfigError(str(exc)) from None
    if cfg.odom_source == "wheel_odometry" and model.base_type != "diff_drive":
        raise NodeConfigError(f"odom_source wheel_odometry needs a diff_drive base; "
                              f"'{model.name}' has a {model.base_type} base (use ground_truth)")
    return cfg, odom_frame, base_frame


def refuse_mobile_parameters(node, model) -> None:
    """A robot without a mobile base given the mobile parameters (module docstring): refused by
    name (they would be ignored: e.g. a URDF loaded without ``base_type:=diff_drive``)."""
    from rbd_ros.sim.mobile_sim import MobileConfig  # lazy: the mobile simulator, not at the bridge's import

    mobile = [f.name for f in fields(MobileConfig)] + ["odom_frame"]
    given = sorted(set(getattr(node, "_parameter_overrides", {})) & set(mobile))
    if given:
        raise NodeConfigError(f"parameters {', '.join(given)} are for a mobile base; '{model.name}' "
                              f"has a {model.base_type} base (a URDF's mobile base needs "
                              f"base_type:=diff_drive or base_type:=planar); leave them out")


class OdomPublisher:
    """``/odom`` of a ``MobileSimulator`` (module docstring).  ``publish(t, q)`` with the
    measured joint positions just published."""

    def __init__(self, node, sim, odom_frame: str = "odom", base_frame: str = "base_link") -> None:
        from nav_msgs.msg import Odometry

        self.sim = sim
        self.msg = Odometry()
        self.msg.header.frame_id, self.msg.child_frame_id = odom_frame, base_frame
        self.pub = node.create_publisher(Odometry, topics.ODOM, recordable_qos())
        self.wheels = None
        if sim.mobile.odom_source == "wheel_odometry":
            from rbd_ros.sim.odometry import WheelOdometry  # lazy: odometry, for a mobile base

            m = sim.robot_model
            self.wheels = WheelOdometry(m.wheel_radius, m.wheel_separation)
            self.left, self.right = (int(i) for i in sim.base_index[:2])
        self.reset()

    def reset(self) -> None:
        """Wheel odometry back to the initial base pose (after the simulator's reset)."""
        if self.wheels is not None:
            self.wheels.reset(*self.sim.mobile.initial_base_pose)

    def state(self, t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(position, quaternion x y z w, linear, angular)`` (twist in the base frame)."""
        if self.wheels is None:
            return self.sim.base_state()
        w = self.wheels
        w.update(float(q[self.left]), float(q[self.right]), t)
        h = float(self.sim.mj_model.body_pos[1][2])
        return (np.array([w.x, w.y, h]), np.array([0.0, 0.0, np.sin(0.5 * w.yaw), np.cos(0.5 * w.yaw)]),
                np.array([w.v_x, 0.0, 0.0]), np.array([0.0, 0.0, w.omega]))

    def publish(self, t: float, q: np.ndarray) -> None:
        pos, quat, lin, ang = self.state(t, q)
        msg = self.msg
        set_stamp(msg.header.stamp, t)
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z = (float(v) for v in pos)
        o.x, o.y, o.z, o.w = (float(v) for v in quat)
        tw = msg.twist.twist
        tw.linear.x, tw.linear.y, tw.linear.z = (float(v) for v in lin)
        tw.angular.x, tw.angular.y, tw.angular.z = (float(v) for v in ang)
        self.pub.publish(msg)
