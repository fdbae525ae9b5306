"""What the arm controller (``controller.Controller``) and the mobile one
(``mobile_controller.MobileController``) share: the law registry (law type -> family), the
family's parameters from ``config/schema/controller.yaml``, the robot check, the output
publishers and the executor thread's real-time priority.  Apart from both so that neither node
module imports the other (``controller.make_controller`` picks one)."""
from __future__ import annotations

from typing import Any

from rbd_ros.control.gains import LAWS, gain_names
from rbd_ros.ros import topics
from rbd_ros.ros.common import NodeConfigError, recordable_qos
from rbd_ros.ros.parameters import schema
from rbd_ros.ros.robot_params import robot_from_node
from rbd_ros.sim.realtime import harden

WATCHDOG_PERIOD = 0.05  # s (wall)
SWITCH_INTERVAL = 1e-4  # s: the GIL changes hands this often (IK worker beside the executor)
#: law family -> the base types its loop drives
FAMILY_BASES = {"arm": ("fixed",), "mobile": ("diff_drive", "planar")}


# ---- the law registry and what both families share -----------------------------------------------
def law_registry() -> dict[str, str]:
    """Law type -> family: ``arm`` (``rbd_ros.control.laws``, ``ControlLoop``, a fixed base)
    or ``mobile`` (whole-body laws of ``rbd_ros.control.mobile_laws``, ``MobileControlLoop``)."""
    from rbd_ros.control.mobile_laws import MOBILE_LAWS  # lazy: the mobile laws, not at the controller's import

    return {**dict.fromkeys(LAWS, "arm"), **dict.fromkeys(MOBILE_LAWS, "mobile")}


def law_family(node: Any) -> tuple[str, str]:
    """The node's ``type`` (declared here if not yet) and its family; an unknown type is
    refused naming the registry's."""
    law_type = schema("controller").declare(node, ["type"])["type"]
    registry = law_registry()
    if law_type not in registry:
        raise NodeConfigError(f"unknown type '{law_type}'; use one of {', '.join(registry)}")
    return law_type, registry[law_type]


def node_parameters(node: Any, family: str, composed: bool = False) -> dict[str, Any]:
    """The family's parameters of ``config/schema/controller.yaml``, declared and checked."""
    skip = ("rt_priority", "managed") if composed else ()
    return schema("controller").declare(node, family=family, skip=lambda spec: spec.name in skip)


def declare_gains(node: Any, law_type: str) -> dict[str, Any]:
    """The gain parameters the law takes (``gain_names``), as given (None = not given)."""
    return schema("controller").declare(node, gain_names(law_type))


def robot_for(node: Any, family: str, law_type: str) -> Any:
    """The robot of the node's parameters, if its base is one ``family``'s loop drives."""
    loaded = robot_from_node(node)
    model = loaded.model
    if model.base_type not in FAMILY_BASES[family]:
        if family == "arm":
            raise NodeConfigError(f"'{model.name}' has a {model.base_type} base: use type "
                                  "diff_drive_velocity or whole_body_computed_torque (an arm law "
                                  "would leave the base undriven)")
        raise NodeConfigError(f"type {law_type} drives a mobile base; '{model.name}' has a "
                              f"{model.base_type} base (use an arm law: computed_torque ...)")
    return loaded


def wall_clock() -> Any:
    from rclpy.clock import Clock, ClockType

    return Clock(clock_type=ClockType.STEADY_TIME)


def reliable_qos() -> Any:
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


def subscribe_trajectory(node: Any, handler: Any) -> Any:
    """``~/joint_trajectory`` subscribed raw (serialized): ``handler`` gets a callable that
    deserializes the message, to be called on the loop's planning worker
    (``ControlLoop.trajectory`` takes one), never on the executor that runs the cycle: rclpy
    needs ~0.7 s for 10 000 points (issue 37)."""
    from rclpy.serialization import deserialize_message
    from trajectory_msgs.msg import JointTrajectory

    def on_raw(msg: Any) -> None:
        if isinstance(msg, bytes | bytearray | memoryview):
            raw = bytes(msg)
            handler(lambda: deserialize_message(raw, JointTrajectory))
        else:  # (a message given in-process)
            handler(msg)

    return node.create_subscription(JointTrajectory, topics.JOINT_TRAJECTORY, on_raw, reliable_qos(), raw=True)


def make_outputs(ctl: Any, joints: list[str], state_names: list[str],
                 command_topic: str = topics.COMMANDS) -> None:
    """``ctl.cmd_pub``/``cmd_msg`` (commands in ``joints`` order, on ``command_topic``) and
    ``ctl.state_pub``/``state_msg`` (``~/controller_state`` named ``state_names``), recordable
    QoS."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, MultiArrayDimension

    ctl.cmd_pub = ctl.node.create_publisher(Float64MultiArray, command_topic, recordable_qos())
    ctl.state_pub = ctl.node.create_publisher(JointState, topics.CONTROLLER_STATE, recordable_qos())
    ctl.cmd_msg = Float64MultiArray()
    m = len(joints)
    ctl.cmd_msg.layout.dim = [MultiArrayDimension(label="joints", size=m, stride=m)]
    ctl.state_msg = JointState()
    ctl.state_msg.name = list(state_names)


def publish_quietly(ctl: Any, publisher: Any, msg: Any) -> bool:
    """Publish; False (no exception) while shutting down (Ctrl-C in a callback) or when the
    middleware refuses the message (``RCLError: Failed to publish: cannot publish data``: a
    reliable reader that vanished without a goodbye fills the writer's history, issue 37): the
    controller goes on, the next cycle publishes again; one warning line per publisher."""
    try:
        publisher.publish(msg)
        return True
    except Exception as exc:  # noqa: BLE001 - shutting down, or a reader gone
        if ctl.node.context.ok():
            warned = ctl.__dict__.setdefault("_publish_warned", set())
            if publisher.topic_name not in warned:
                warned.add(publisher.topic_name)
                ctl.node.get_logger().warning(f"publishing on {publisher.topic_name} failed ({exc}); "
                                              "going on (a subscriber gone away?)")
        return False


def harden_node(node: Any, priority: int) -> None:
    """SCHED_FIFO for the calling thread (the executor's: every control cycle), logged."""
    for line in harden(priority):
        if "refused" in line:
            node.get_logger().warning(f"realtime: {line}; controlling without it")
        else:
            node.get_logger().info(f"realtime: {line} (the executor thread)")
