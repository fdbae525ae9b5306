"""The ROS side of contact (issue 30): the bridge's F/T sensor topics and ``~/apply_wrench``,
and the controller's wrench inputs.  Thin: the physics is ``rbd_ros.sim`` (``Simulator.push``,
``ft_sensor.FTSensor``), the laws ``rbd_ros.control.force_laws``.

Bridge (``BridgeContact``), when the simulator has an F/T sensor (``ft_sensor`` or a scene),
with every ``/joint_states``:

* ``/ft_sensor/wrench_raw`` (``geometry_msgs/WrenchStamped``, frame ``ft_sensor``): what the
  sensor measures, the payload below it included;
* ``/ft_sensor/wrench``: payload compensated, the wrench the tool exerts on the environment;
* ``/ft_sensor/wrench_estimate``: the same from the joint torques (``control.wrench``);
* ``/ft_sensor/wrench_compensated`` (with the bridge's ``ft_payload``, a file of ``rbd-ros
  identify --payload``): the raw reading minus the identified payload's wrench for the motion
  and its offset (``identification.payload.PayloadCompensator``);

and always ``~/apply_wrench`` (``WrenchStamped``): a push for ``apply_wrench_duration`` s of
sim time; ``header.frame_id`` '' (or the base frame) at the tool in world axes, else a link's
name: at that link's origin in its axes.  A bad one is refused with one logged line.

Controller (``ControllerWrench``), for a law that takes wrenches (``set_target_wrench``):
``~/target_wrench`` (``WrenchStamped``, world axes at the tool; a wrench the effort limits
cannot produce at the current pose is refused naming the joints) and, unless composed (the
bridge then hands the law its sensor directly), ``/ft_sensor/wrench`` or, with the parameter
``use_compensated_wrench``, ``/ft_sensor/wrench_compensated``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from rbd_ros.ros.messages import set_stamp
from rbd_ros.ros.nodes.controller_common import reliable_qos

FT_RAW = "/ft_sensor/wrench_raw"
FT_WRENCH = "/ft_sensor/wrench"
FT_ESTIMATE = "/ft_sensor/wrench_estimate"
FT_COMPENSATED = "/ft_sensor/wrench_compensated"
APPLY_WRENCH = "~/apply_wrench"
TARGET_WRENCH = "~/target_wrench"
FT_FRAME = "ft_sensor"


def _fill(msg: Any, w: np.ndarray) -> None:
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z = float(w[0]), float(w[1]), float(w[2])
    t.x, t.y, t.z = float(w[3]), float(w[4]), float(w[5])


def _wrench_of(msg: Any) -> np.ndarray:
    f, t = msg.wrench.force, msg.wrench.torque
    return np.array([f.x, f.y, f.z, t.x, t.y, t.z], dtype=float)


class BridgeContact:
    """The bridge's F/T publishers and push subscription (module docstring)."""

    def __init__(self, node: Any, sim: Any, lock: Any, duration: float, qos: Any) -> None:
        from geometry_msgs.msg import WrenchStamped

        self.node, self.sim, self.lock, self.duration = node, sim, lock, float(duration)
        self.pubs = []
        self.msgs = []
        if sim.ft is not None:
            for topic in (FT_RAW, FT_WRENCH, FT_ESTIMATE):
                self.pubs.append(node.create_publisher(WrenchStamped, topic, qos))
                msg = WrenchStamped()
                msg.header.frame_id = FT_FRAME
                self.msgs.append(msg)
            if sim.ft.compensator is not None:  # ft_payload
                self.pubs.append(node.create_publisher(WrenchStamped, FT_COMPENSATED, qos))
                msg = WrenchStamped()
                msg.header.frame_id = FT_FRAME
                self.msgs.append(msg)
        self._estimate = np.zeros(6)
        node.create_subscription(WrenchStamped, APPLY_WRENCH, self.on_apply, reliable_qos())

    def publish(self) -> None:
        """The readings of the last step (caller holds the bridge's lock); none before the
        first step (a lockstep bridge publishes its state before the first command: a zero
        wrench there would be a reading no sensor made, the tool's weight missing from it)."""
        sim = self.sim
        if sim.ft is None or not self.pubs or not sim.ft.has_reading:
            return
        sim.ft.estimate(sim._good_q, sim._pre_qd, sim._qdd, sim._ctrl, self._estimate)
        for pub, msg, w in zip(self.pubs, self.msgs, (sim.ft.raw, sim.ft.wrench, self._estimate,
                                                       sim.ft.compensated), strict=False):
            set_stamp(msg.header.stamp, sim.ft.stamp)
            _fill(msg, w)
            pub.publish(msg)

    def feed(self, law: Any) -> None:
        """Composed mode: hand the law the sensor's compensated reading (sensor frame)."""
        ft = self.sim.ft
        if ft is None or not hasattr(law, "set_measured_wrench"):
            return
        if getattr(law, "use_compensated_wrench", False):
            if ft.compensator is None:
                raise ValueError("use_compensated_wrench needs the bridge's ft_payload (a payload "
                                 "file of rbd-ros identify --payload)")
            law.set_measured_wrench(ft.compensated)
        else:
            law.set_measured_wrench(ft.wrench)

    def on_apply(self, msg: Any) -> None:
        frame = msg.header.frame_id
        model = self.sim.model
        world = frame in ("", "world", model.base_link)
        try:
            with self.lock:
                self.sim.push("" if world else frame, _wrench_of(msg), self.duration,
                              "world" if world else "link")
        except ValueError as exc:
            self.node.get_logger().error(f"apply_wrench refused: {exc}")
            return
        self.node.get_logger().info(
            f"apply_wrench: {np.round(_wrench_of(msg), 4).tolist()} at "
            f"{'the tool (world axes)' if world else frame} for {self.duration:g} s")


class ControllerWrench:
    """The controller's wrench subscriptions (module docstring)."""

    def __init__(self, node: Any, law: Any, loop: Any, composed: bool) -> None:
        from geometry_msgs.msg import WrenchStamped

        self.node, self.loop = node, loop  # the law: loop.law, a swapped model's law after a swap
        law.use_compensated_wrench = bool(node.get_parameter("use_compensated_wrench").value)
        self.topic = FT_COMPENSATED if law.use_compensated_wrench else FT_WRENCH
        node.create_subscription(WrenchStamped, TARGET_WRENCH, self.on_target, reliable_qos())
        if not composed:
            node.create_subscription(WrenchStamped, self.topic, self.on_measured, reliable_qos())

    def on_target(self, msg: Any) -> None:
        frame = msg.header.frame_id
        try:
            if frame not in ("", "world", self.loop.model.base_link):
                raise ValueError(f"frame '{frame}' is not the base frame "
                                 f"'{self.loop.model.base_link}' (a target wrench is in world axes)")
            q = self.loop.q if self.loop.have_state else None
            self.loop.law.set_target_wrench(_wrench_of(msg), q)
        except ValueError as exc:
            self.node.get_logger().error(f"target wrench refused: {exc}")
            return
        self.node.get_logger().info(f"target wrench: {np.round(_wrench_of(msg), 4).tolist()}")

    def on_measured(self, msg: Any) -> None:
        self.loop.law.set_measured_wrench(_wrench_of(msg))


def attach_controller(controller: Any, composed: bool) -> Any:
    """``ControllerWrench`` for a law that takes wrenches, else None."""
    if not hasattr(controller.law, "set_target_wrench"):
        return None
    return ControllerWrench(controller.node, controller.law, controller.loop, composed)
