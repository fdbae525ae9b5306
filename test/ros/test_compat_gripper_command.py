"""control_msgs/GripperCommand (msg and action, issue 43.2) as ros2_controllers' gripper action
controller speaks it: the type that imports here (interfaces_compat/control_msgs where setup.sh
built it, else the real package) has upstream's fields, and the message reports through rclpy
the RIHS01 hash pinned in ``test_compat_interfaces.UPSTREAM`` (rosidl's of the untouched
control_msgs 6.8.0 file), which DDS peers compare."""
from __future__ import annotations

from test_compat_interfaces import UPSTREAM


def test_the_gripper_action_has_upstreams_fields() -> None:
    from control_msgs.action import GripperCommand
    from control_msgs.msg import GripperCommand as Command

    assert Command.get_fields_and_field_types() == {"position": "double", "max_effort": "double"}
    assert GripperCommand.Goal.get_fields_and_field_types() == {
        "command": "control_msgs/GripperCommand"}
    fields = {"position": "double", "effort": "double", "stalled": "boolean",
              "reached_goal": "boolean"}
    assert GripperCommand.Result.get_fields_and_field_types() == fields
    assert GripperCommand.Feedback.get_fields_and_field_types() == fields


def test_the_gripper_command_message_reports_the_upstream_hash() -> None:
    from control_msgs.msg import GripperCommand

    from ros_helpers import published_type_hash

    published = UPSTREAM[("control_msgs", "msg/GripperCommand.msg")][1]
    assert published_type_hash(GripperCommand, "gripper_hash_probe") == published
