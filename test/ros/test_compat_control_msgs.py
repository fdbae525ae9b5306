"""The control_msgs types that import here (interfaces_compat/control_msgs where setup.sh built
it, else the real package) are upstream's (issue 29): the constants of the pinned upstream
definitions (``test_compat_interfaces.UPSTREAM``) on the Python classes, and the RIHS01 hashes
that DDS peers compare (an action server's feedback topic through rclpy; goal, result and the
action's services from the installed type descriptions), pinned to rosidl's hashes of the
untouched upstream files of control_msgs 6.8.0."""
from __future__ import annotations

import re

from test_compat_interfaces import UPSTREAM

# rosidl's hashes of the untouched upstream control_msgs 6.8.0 files (type_hash.rihs01's pipeline
# on the three files at once); the top-level action's is test_compat_interfaces's pin
HASHES = {
    "FollowJointTrajectory_Goal": "RIHS01_8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
    "FollowJointTrajectory_Result": "RIHS01_8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220",
    "FollowJointTrajectory_Feedback": "RIHS01_0bb018d181bdc6384dd75365480967bd1d6eaee4ef3dd597c64cd0b8bdc10867",
    "FollowJointTrajectory_FeedbackMessage":
        "RIHS01_95618cc73912d99b9acaa17d2da5e832cb0bfdeede7534fa8ec600feca2a6c4b",
    "FollowJointTrajectory_SendGoal": "RIHS01_b13789dddc325a7a962825c45e28c77d37237ec129dd0c34dc5994562938c57f",
    "FollowJointTrajectory_GetResult": "RIHS01_e3ceb38e3e1867c8dc0f46014df26e90eb93422f27e9e97f936e07f94be4bc8b",
}


def _constants(text: str) -> dict[str, int]:
    """``NAME: value`` of every integer constant line (``int32 NAME = -1``, ``uint16 X=1``)."""
    return {m[1]: int(m[2]) for m in re.finditer(r"^\w+\s+([A-Z][A-Z0-9_]*)\s*=\s*(-?\d+)\s*$", text, re.M)}


def test_the_constants_are_upstreams() -> None:
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointComponentTolerance

    action = UPSTREAM[("control_msgs", "action/FollowJointTrajectory.action")][0]
    component = UPSTREAM[("control_msgs", "msg/JointComponentTolerance.msg")][0]
    want = _constants(action)
    assert len(want) == 6 and want["PATH_TOLERANCE_VIOLATED"] == -4
    assert {k: getattr(FollowJointTrajectory.Result, k) for k in want} == want
    want = _constants(component)
    assert len(want) == 5
    assert {k: getattr(JointComponentTolerance, k) for k in want} == want
    # and the core's codes are the same numbers
    from rbd_ros.control import follow_trajectory as ft

    assert {k: getattr(ft, k) for k in _constants(action)} == _constants(action)


def test_an_action_server_advertises_the_upstream_feedback_hash() -> None:
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionServer

    from ros_helpers import ros_context

    with ros_context() as ctx:
        node = rclpy.create_node("compat_action_probe", context=ctx)
        server = ActionServer(node, FollowJointTrajectory, "/compat_probe", lambda handle: None)
        try:
            (info,) = node.get_publishers_info_by_topic("/compat_probe/_action/feedback")
            assert str(info.topic_type_hash) == HASHES["FollowJointTrajectory_FeedbackMessage"]
        finally:
            server.destroy()
            node.destroy_node()


def test_the_installed_type_descriptions_carry_the_upstream_hashes() -> None:
    """Goal, result, feedback and the action's services: the hashes in the type descriptions
    installed with the control_msgs that imports (rosidl writes them at build time; rmw
    advertises them)."""
    import json
    from pathlib import Path

    from type_hash import _share_dirs

    share = Path(_share_dirs()["control_msgs"])  # AMENT_PREFIX_PATH, else the venv (make test)
    got = {e["type_name"]: e["hash_string"]
           for e in json.loads((share / "action" / "FollowJointTrajectory.json").read_text())["type_hashes"]}
    for name, value in HASHES.items():
        assert got[f"control_msgs/action/{name}"] == value, name
    assert got["control_msgs/action/FollowJointTrajectory"] == UPSTREAM[
        ("control_msgs", "action/FollowJointTrajectory.action")][1]
