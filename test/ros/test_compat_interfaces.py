"""interfaces_compat/: the upstream interface packages this machine's registries do not ship.

Each definition there must be the upstream file of the pinned ROS release (ROS 2 Kilted) byte for
byte, so its RIHS01 type hash, which DDS peers compare, equals upstream's: a peer with a full ROS
install (rviz, robot_state_publisher, MoveIt) then talks to our nodes. Pinned here: the upstream
text and the hash a real Kilted/Jazzy install reports (`ros2 topic info -v /tf`). Checked three
ways: the folder's file is the upstream text, rosidl's own hash of that text is the published
hash, and the type that imports here (ours where setup.sh built it, else the real package)
reports that hash through rclpy."""
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
}


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
    assert (COMPAT / package / rel).read_text() == UPSTREAM[key][0]


@pytest.mark.parametrize("key", sorted(UPSTREAM), ids="/".join)
def test_rosidl_hash_of_upstream_text_is_the_published_hash(key):
    package, rel = key
    text, published = UPSTREAM[key]
    assert rihs01(package, rel, text) == published


def test_importable_tfmessage_reports_the_upstream_hash():
    import rclpy
    from tf2_msgs.msg import TFMessage

    from ros_helpers import ros_context

    published = UPSTREAM[("tf2_msgs", "msg/TFMessage.msg")][1]
    with ros_context() as ctx:
        node = rclpy.create_node("compat_hash_probe", context=ctx)
        try:
            node.create_publisher(TFMessage, "/compat_hash_probe", 1)
            (info,) = node.get_publishers_info_by_topic("/compat_hash_probe")
            assert str(info.topic_type_hash) == published
        finally:
            node.destroy_node()
