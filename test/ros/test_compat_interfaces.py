"""interfaces_compat/: the upstream interface packages this machine's registries do not ship.

Each definition there must be the upstream file of the pinned ROS release (ROS 2 Kilted) field for
field and constant for constant (comments aside: ``definition``), so its RIHS01 type hash, which
DDS peers compare, equals upstream's: a peer with a full ROS install (rviz, robot_state_publisher,
MoveIt) then talks to our nodes. Pinned here: the upstream text and the hash a real Kilted/Jazzy
install reports (`ros2 topic info -v /tf`). Checked three ways: the folder's file is the upstream
text, rosidl's own hash of that text is the published hash, and the type that imports here (ours
where setup.sh built it, else the real package) reports that hash through rclpy."""
from __future__ import annotations

from pathlib import Path

import pytest
from type_hash import rihs01

REPO = Path(__file__).resolve().parents[2]
COMPAT = REPO / "interfaces_compat"

# (package, path) -> (upstream text, RIHS01 hash published by a real ROS 2 install)
UPSTREAM = {
    # ros2/geometry2 tf2_msgs/msg/TFMessage.msg, unchanged since 2010 (kilted, jazzy, rolling)
    ("tf2_msgs", "msg/TFMessage.msg"): (
        "geometry_msgs/TransformStamped[] transforms\n",
        "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087"),
    # ros-controls/control_msgs 6.8.0 (master: the Kilted branch), definitions without their
    # comments; hashes: rosidl's of the untouched upstream files (no Kilted install here to ask;
    # `index` and `multi_dof_index` came in 6.3.0)
    ("control_msgs", "msg/JointTolerance.msg"): (
        "string name\nfloat64 position\nfloat64 velocity\nfloat64 acceleration\n",
        "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648"),
    ("control_msgs", "msg/JointComponentTolerance.msg"): (
        "uint16 X_AXIS=1\nuint16 Y_AXIS=2\nuint16 Z_AXIS=3\nuint16 TRANSLATION=4\nuint16 ROTATION=5\n"
        "string joint_name\nuint16 component\nfloat64 position\nfloat64 velocity\nfloat64 acceleration\n",
        "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4"),
    ("control_msgs", "action/FollowJointTrajectory.action"): (
        "trajectory_msgs/JointTrajectory trajectory\n"
        "trajectory_msgs/MultiDOFJointTrajectory multi_dof_trajectory\n"
        "JointTolerance[] path_tolerance\nJointComponentTolerance[] component_path_tolerance\n"
        "JointTolerance[] goal_tolerance\nJointComponentTolerance[] component_goal_tolerance\n"
        "builtin_interfaces/Duration goal_time_tolerance\n"
        "---\n"
        "int32 error_code\nint32 SUCCESSFUL = 0\nint32 INVALID_GOAL = -1\nint32 INVALID_JOINTS = -2\n"
        "int32 OLD_HEADER_TIMESTAMP = -3\nint32 PATH_TOLERANCE_VIOLATED = -4\n"
        "int32 GOAL_TOLERANCE_VIOLATED = -5\nstring error_string\n"
        "---\n"
        "std_msgs/Header header\nstring[] joint_names\ntrajectory_msgs/JointTrajectoryPoint desired\n"
        "trajectory_msgs/JointTrajectoryPoint actual\ntrajectory_msgs/JointTrajectoryPoint error\n"
        "int32 index\nstring[] multi_dof_joint_names\n"
        "trajectory_msgs/MultiDOFJointTrajectoryPoint multi_dof_desired\n"
        "trajectory_msgs/MultiDOFJointTrajectoryPoint multi_dof_actual\n"
        "trajectory_msgs/MultiDOFJointTrajectoryPoint multi_dof_error\nint32 multi_dof_index\n",
        "RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0"),
    # the gripper action controller's (issue 43.2), control_msgs 6.8.0
    ("control_msgs", "msg/GripperCommand.msg"): (
        "float64 position\nfloat64 max_effort\n",
        "RIHS01_57eb8f326c9889ca8bb34ead82cc94cc09bf6bc5c3b6c09546dca3a00b589890"),
    ("control_msgs", "action/GripperCommand.action"): (
        "GripperCommand command\n"
        "---\n"
        "float64 position\nfloat64 effort\nbool stalled\nbool reached_goal\n"
        "---\n"
        "float64 position\nfloat64 effort\nbool stalled\nbool reached_goal\n",
        "RIHS01_e17c0e644eccf14bea84a0a93e0977182872c2eb7873ca6694900059b46dbc84"),
}


def definition(text: str) -> str:
    """The definition lines of a .msg/.srv/.action text: comments and blank lines dropped
    (they are not part of the type: its RIHS01 hash ignores them)."""
    lines = (line.split("#", 1)[0].rstrip() for line in text.splitlines())
    return "".join(line + "\n" for line in lines if line)


def siblings(package: str, rel: str) -> dict[str, str]:
    """The package's other pinned definitions (an action refers to its own messages)."""
    return {r: text for (pkg, r), (text, _) in UPSTREAM.items() if pkg == package and r != rel}


def _compat_definitions() -> list[tuple[str, str]]:
    return sorted((p.relative_to(COMPAT).parts[0], str(Path(*p.relative_to(COMPAT).parts[1:])))
                  for p in COMPAT.glob("*/*/*") if p.suffix in (".msg", ".srv", ".action"))


def test_every_compat_definition_is_pinned():
    defs = _compat_definitions()
    assert ("tf2_msgs", "msg/TFMessage.msg") in defs
    unpinned = [d for d in defs if d not in UPSTREAM]
    assert not unpinned, f"interfaces_compat definitions with no upstream pin here: {unpinned}"


@pytest.mark.parametrize("key", sorted(UPSTREAM), ids="/".join)
def test_compat_file_is_the_upstream_text(key):
    package, rel = key
    assert definition((COMPAT / package / rel).read_text()) == definition(UPSTREAM[key][0])


@pytest.mark.parametrize("key", sorted(UPSTREAM), ids="/".join)
def test_rosidl_hash_of_upstream_text_is_the_published_hash(key):
    package, rel = key
    text, published = UPSTREAM[key]
    assert rihs01(package, rel, text, siblings(package, rel)) == published


def test_importable_tfmessage_reports_the_upstream_hash():
    from tf2_msgs.msg import TFMessage

    from ros_helpers import published_type_hash

    assert published_type_hash(TFMessage, "compat_hash_probe") == UPSTREAM[("tf2_msgs", "msg/TFMessage.msg")][1]
