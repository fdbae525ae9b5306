"""``rbd-ros ft-compensator``: a real arm's wrist F/T topic compensated for its payload (issue
41, ros2_controllers issue 1078), where no simulator knows the accelerations.

Node ``ft_compensator`` (parameters: ``config/schema/ft_compensator.yaml`` and the robot
parameters, ``config/schema/robot.yaml``; the table: ``docs/parameters.md``).  Each reading of
``wrench_topic`` (``geometry_msgs/WrenchStamped``, sensor frame = the robot's tool frame) minus
the wrench of the payload in ``payload_file`` (``rbd-ros identify --payload``) for the latest
``/joint_states`` (``identification.payload.PayloadCompensator``: the RNEA link wrench of the
payload, 003 (4.36)-(4.37)), published on ``compensated_topic`` with the reading's header.  The
joint accelerations are the difference of consecutive velocities (of positions twice when the
states carry no velocities) through a first-order low-pass of ``acceleration_cutoff`` Hz; in
slow motion the gravity terms dominate and the estimate matters little.  The MuJoCo bridge
publishes the same topic itself with its exact accelerations (its ``ft_payload`` setting).
"""
from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from rbd_ros.identification.payload import PayloadCompensator, load_payload
from rbd_ros.ros.common import NodeConfigError, run_node
from rbd_ros.ros.nodes.controller_common import reliable_qos
from rbd_ros.ros.parameters import schema
from rbd_ros.ros.robot_params import robot_from_node

NAME = "ft_compensator"


def compensated_topic(wrench_topic: str, given: str = "") -> str:
    """``given``, else ``wrench_compensated`` beside ``wrench_topic``; refuses the same topic."""
    out = given or (wrench_topic.rsplit("/", 1)[0] + "/wrench_compensated")
    if out == wrench_topic:
        raise ValueError(f"compensated_topic '{out}' is wrench_topic itself: give another")
    return out


class FTCompensator:
    """The node's subscriptions and publisher (module docstring)."""

    def __init__(self, node: Any) -> None:
        from geometry_msgs.msg import WrenchStamped
        from sensor_msgs.msg import JointState

        prm = schema(NAME).declare(node)
        if not prm["payload_file"]:
            raise NodeConfigError("payload_file is required: the YAML of rbd-ros identify --payload")
        try:
            self.payload = load_payload(prm["payload_file"])
            self.model = robot_from_node(node).model
            self.compensator = PayloadCompensator(self.model, self.payload)
            self.out_topic = compensated_topic(prm["wrench_topic"], prm["compensated_topic"])
        except ValueError as exc:
            raise NodeConfigError(str(exc)) from None
        self.node, self.cutoff = node, float(prm["acceleration_cutoff"])
        n = self.model.dof
        self.q, self.qd, self.qdd = np.zeros(n), np.zeros(n), np.zeros(n)
        self._t_prev = math.nan
        self._order: np.ndarray | None = None  # the model's joints' rows in /joint_states, on the first
        self.have_state = False
        self._out = np.zeros(6)
        self._raw = np.zeros(6)
        self.pub = node.create_publisher(WrenchStamped, self.out_topic, reliable_qos())
        self.msg = WrenchStamped()
        node.create_subscription(JointState, "/joint_states", self.on_joint_states, reliable_qos())
        node.create_subscription(WrenchStamped, prm["wrench_topic"], self.on_wrench, reliable_qos())
        self.summary = f"{prm['wrench_topic']} -> {self.out_topic}, payload {self.payload.mass:.4g} kg"

    def on_joint_states(self, msg: Any) -> None:
        if self._order is None:
            names = list(msg.name)
            missing = [j for j in self.model.joint_names if j not in names]
            if missing:
                self.node.get_logger().error(f"/joint_states lacks the model's joints {missing}")
                return
            self._order = np.array([names.index(j) for j in self.model.joint_names])
        t = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        if self.have_state and t <= self._t_prev:  # a repeated (paused) or older state
            return
        q = np.asarray(msg.position, dtype=float)[self._order]
        dt = t - self._t_prev if self.have_state else math.nan
        if len(msg.velocity) == len(msg.name):
            qd = np.asarray(msg.velocity, dtype=float)[self._order]
        else:
            qd = (q - self.q) / dt if self.have_state else np.zeros_like(q)
        if self.have_state:  # y += a (x - y), a = dt / (dt + 1 / (2 pi f))
            a = dt / (dt + 1.0 / (2 * math.pi * self.cutoff))
            self.qdd += a * ((qd - self.qd) / dt - self.qdd)
        self.q, self.qd, self._t_prev = q, qd, t
        self.have_state = True

    def on_wrench(self, msg: Any) -> None:
        if not self.have_state:
            return
        f, n = msg.wrench.force, msg.wrench.torque
        self._raw[:] = (f.x, f.y, f.z, n.x, n.y, n.z)
        w = self.compensator.compensate(self._raw, self.q, self.qd, self.qdd, self._out)
        out = self.msg
        out.header = msg.header
        out.wrench.force.x, out.wrench.force.y, out.wrench.force.z = (float(x) for x in w[:3])
        out.wrench.torque.x, out.wrench.torque.y, out.wrench.torque.z = (float(x) for x in w[3:])
        self.pub.publish(out)


def main(argv: list[str] | None = None) -> int:
    def body(node) -> None:
        comp = FTCompensator(node)
        node._rbd_ft_compensator = comp  # kept alive with the node
        print(f"{NAME}: ready ({comp.summary})", flush=True)

    return run_node(NAME, body, sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
