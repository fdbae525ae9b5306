"""``rbd-ros state-publisher``: robot_state_publisher's topics from the core's kinematics.

    rbd-ros state-publisher --ros-args -p urdf_path:=FILE | -p robot_description:=XML
        [-p base_link:=L -p tip_link:=L -p base:=diff_drive] [-p publish_frequency:=20.0]

Node ``state_publisher`` (parameters: ``config/schema/state_publisher.yaml`` and the robot
parameters of every node, ``config/schema/robot.yaml``; the table: ``docs/parameters.md``):

* ``/robot_description`` (``std_msgs/String``, reliable, transient local, depth 1: a subscriber
  that starts later still gets it, as from robot_state_publisher): the URDF (after xacro). With
  only ``model_yaml`` (an MDH model file, no URDF): the model's own URDF (``model_to_urdf``).
* ``/tf_static`` (``tf2_msgs/TFMessage``, transient local): once, the URDF's fixed joints,
  parent link -> child link, as ``<origin>`` places them (robot_state_publisher's split).
* ``/tf``: the other joints (parent -> child = origin @ motion(q)) from the ``/joint_states``
  (matched by name; stamped with its stamp), at most ``publish_frequency`` per second of the
  messages' own stamps (simulated time from the bridge; 0 = every message), once every joint
  of the model has been seen. Joints the model does not move (off the chain, locked, a mobile
  base's wheels) are placed at their ``/joint_states`` position when it names them (the wheels
  turn), else where the converter locked them.
  Cost: the messages arrive serialized and only the stamp is read (``header_stamp_ns``) until
  one is due, so a 1 kHz ``/joint_states`` costs a few microseconds a message; while messages
  name only some of the joints (several publishers), every message is read, so each joint's
  last position is current when a /tf is due.
* A mobile base (``base_type:=diff_drive|planar``): ``odom -> root link`` on ``/tf`` from ``/odom``
  (the bridge's odometry, REP-105): the odometry's ``odom -> base_link`` pose times the root
  link's pose in ``base_link`` (the root is ``base_link`` itself unless e.g. ``base_footprint``
  is its URDF parent), at most ``publish_frequency`` per second of its stamps.

The poses are ``rbd_ros.model.link_frames.LinkFrames`` on the core's MDH frames
(``Robot.link_poses``, 003 §1.6): every URDF link to 1e-12 of Pinocchio's frame placements
(test/urdf/test_urdf_link_poses.py), through ROS test/ros/test_state_publisher_node.py.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from rbd_ros.model import MOBILE_BASES
from rbd_ros.ros import topics
from rbd_ros.ros.common import NodeConfigError, run_node
from rbd_ros.ros.lean_executor import LeanExecutor
from rbd_ros.ros.messages import header_stamp_ns, transform_stamped

NAME = "state_publisher"


def load(node) -> tuple[Any, Any, str]:
    """``(model, LinkFrames, URDF text)`` from the robot parameters: the URDF when one is given
    (``robot_description`` > ``urdf_path``, over ``model_yaml``: its link tree is the user's;
    the model file's base type and chain ends unless given), else the model file's own URDF, else
    the bundled default robot."""
    from rbd_ros.model.urdf_export import model_to_urdf  # lazy: the URDF export (0.2 s), at start, not at import
    from rbd_ros.ros.robot_params import (  # lazy: the robot parameters (8 ms), at start, not at import
        ROBOT_PARAMETERS,
        declare_robot_parameters,
        robot_model,
    )

    declare_robot_parameters(node)
    p = {name: node.get_parameter(name).value for name in ROBOT_PARAMETERS}
    if p["robot_description"] or p["urdf_path"] or not p["model_yaml"]:
        if p["model_yaml"]:  # a bundled robot: its model file says the base and the chain ends
            model = robot_model(p).model
            p["base_type"] = p["base_type"] or model.base_type
            p["base_link"] = p["base_link"] or model.base_link
            p["tip_link"] = p["tip_link"] or model.tip_link
        loaded = robot_model({**p, "model_yaml": ""})
    else:
        model = robot_model(p).model
        loaded = robot_model({**p, "model_yaml": "", "robot_description": model_to_urdf(model),
                              "base_link": model.base_link, "tip_link": model.tip_link,
                              "base_type": model.base_type})
    return loaded.model, loaded.link_frames, loaded.urdf_xml


class StatePublisher:
    """The node's publishers and subscriptions (module docstring)."""

    def __init__(self, node) -> None:
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String

        from rbd_ros.robot import Robot  # lazy: the robot front, at start, not at import
        from rbd_ros.ros.parameters import schema  # lazy: the schemas (3 ms), at start, not at import

        try:
            from tf2_msgs.msg import TFMessage
        except ImportError:
            raise NodeConfigError("tf2_msgs is not importable: install ROS 2's tf2_msgs, or run "
                                  "scripts/setup.sh (it builds interfaces_compat/tf2_msgs)") from None

        prm = schema(NAME).declare(node)
        model, self.frames, xml = load(node)
        self.node = node
        self.prefix = str(prm["frame_prefix"])
        self.period = 1.0 / prm["publish_frequency"] if prm["publish_frequency"] > 0 else 0.0
        # the arm's kinematics on a fixed base: poses in base_link (a moving base: /odom places it)
        self.robot = Robot(model.with_base_type("fixed") if model.base_type in MOBILE_BASES else model)
        self.robot.with_link_frames(self.frames)
        self.index = {name: k for k, name in enumerate(model.joint_names)}
        self.q = np.full(model.dof, np.nan)  # last position of each model joint (NaN: not seen yet)
        self.last_tf: int | None = None  # stamp (ns) of the last /tf from /joint_states (publish_frequency)
        self.last_odom: int | None = None  # and from /odom
        self.partial = True  # until a message names every model joint: read every message
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_publisher(String, "/robot_description", latched).publish(String(data=xml))
        # URDF joints the model does not move (locked, off-chain, wheels): placed at their
        # /joint_states position when it names them (origin @ motion(q)), else where locked
        self.free = {j.name: j for j in self.frames.joints if j.static and j.kind != "fixed"}
        self.free_q: dict[str, float] = {}
        static = self._transforms(self.robot.urdf_link_poses(np.zeros(model.dof)) if model.dof else None, True)
        stamp = node.get_clock().now().to_msg()
        for tr in static:
            tr.header.stamp = stamp
        node.create_publisher(TFMessage, "/tf_static", latched).publish(TFMessage(transforms=static))
        self.tf = node.create_publisher(TFMessage, topics.TF,
                                        QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        self.TFMessage = TFMessage
        self.JointState = JointState
        node.create_subscription(JointState, topics.JOINT_STATES, self.on_joint_states_raw, 10, raw=True)
        self.odom_frame = str(prm["odom_frame"])
        self.root_in_base = None
        if model.base_type in MOBILE_BASES:
            from nav_msgs.msg import Odometry

            base = self.frames.indices([model.base_link, self.frames.root])
            P = self.frames.poses(self.robot.link_poses(np.zeros(model.dof)))
            self.root_in_base = np.linalg.solve(P[base[0]], P[base[1]])  # inv(P_base) @ P_root
            self.Odometry = Odometry
            node.create_subscription(Odometry, topics.ODOM, self.on_odom_raw, 10, raw=True)
        self.summary = (f"{len(self.frames.links)} links, {len(static)} fixed and "
                        f"{len(self.frames.joints) - len(static)} moving joints"
                        + (f", odom -> {self.frames.root}" if self.root_in_base is not None else ""))

    def _transforms(self, poses, fixed: bool) -> list:
        """``TransformStamped`` parent -> child of the URDF's fixed joints (``/tf_static``, as
        robot_state_publisher) or of all the others (``/tf``) from all link poses ``poses``."""
        from rbd_ros.urdf.transforms import joint_motion  # lazy: the URDF converter (0.2 s), at start, not at import

        if poses is None:
            return []
        out = []
        for j, T in self.frames.joint_transforms(poses):
            if (j.kind == "fixed") != fixed:
                continue
            if j.name in self.free_q:  # a joint the model locks, at its /joint_states position
                T = j.origin @ joint_motion(j.kind, j.axis, self.free_q[j.name])
            out.append(transform_stamped(self.prefix + j.parent, self.prefix + j.child, T))
        return out

    def _due(self, stamp: int, last: int | None) -> bool:
        """A /tf is due at ``stamp`` (ns): ``1/publish_frequency`` after the ``last`` one's stamp,
        or the stamps went back (a restarted simulation)."""
        return last is None or stamp - last >= self.period * 1e9 or stamp < last

    def on_joint_states_raw(self, raw: bytes) -> None:
        """Read the stamp only; the message itself when a /tf is due (or while messages name
        only some joints)."""
        from rclpy.serialization import deserialize_message

        try:
            stamp = header_stamp_ns(raw)
        except ValueError:
            return
        if self.partial or self._due(stamp, self.last_tf):
            self.on_joint_states(deserialize_message(raw, self.JointState), stamp)

    def on_odom_raw(self, raw: bytes) -> None:
        from rclpy.serialization import deserialize_message

        try:
            stamp = header_stamp_ns(raw)
        except ValueError:
            return
        if self._due(stamp, self.last_odom):
            self.last_odom = stamp
            self.on_odom(deserialize_message(raw, self.Odometry))

    def on_joint_states(self, msg, stamp: int) -> None:
        named = 0
        for name, value in zip(msg.name, msg.position):
            k = self.index.get(name)
            if k is not None:
                self.q[k] = value
                named += 1
            elif name in self.free and np.isfinite(value):
                self.free_q[name] = float(value)
        self.partial = named < len(self.index)
        if not np.isfinite(self.q).all():  # not every joint seen yet, or a NaN: nothing placed
            bad = [n for n, k in self.index.items() if not np.isfinite(self.q[k]) and n in msg.name]
            if bad:
                self.node.get_logger().warning(f"/joint_states: non-finite position of {', '.join(bad)}; "
                                               f"/tf not published", throttle_duration_sec=1.0)
            return
        if not self._due(stamp, self.last_tf):
            return
        self.last_tf = stamp
        moving = self._transforms(self.robot.urdf_link_poses(self.q), False)
        if not moving:
            return
        for tr in moving:
            tr.header.stamp = msg.header.stamp
        self.tf.publish(self.TFMessage(transforms=moving))

    def on_odom(self, msg) -> None:
        from rbd_ros.lie.so3 import pose_matrix  # lazy: lie.so3 (numba) (0.2 s), at start, not at import

        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        T = pose_matrix([p.x, p.y, p.z], [o.x, o.y, o.z, o.w]) @ self.root_in_base  # odom -> root
        parent = self.odom_frame or msg.header.frame_id
        tr = transform_stamped(self.prefix + parent, self.prefix + self.frames.root, T, msg.header.stamp)
        self.tf.publish(self.TFMessage(transforms=[tr]))


def main(argv: list[str] | None = None) -> int:
    def body(node) -> None:
        pub = StatePublisher(node)
        node._rbd_state_publisher = pub  # kept alive with the node
        print(f"{NAME}: ready ({pub.summary}; /robot_description, /tf_static, /tf)", flush=True)

    return run_node(NAME, body, sys.argv[1:] if argv is None else argv, executor_factory=LeanExecutor)


if __name__ == "__main__":
    sys.exit(main())
