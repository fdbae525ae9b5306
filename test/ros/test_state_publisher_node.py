"""``rbd-ros state-publisher`` in its own process, read over ROS as rviz / tf2 would:

* ``/tf_static`` + ``/tf`` chained from the root give every URDF link the pose Pinocchio's
  frame placements give it (``buildModelFromXML`` + ``framesForwardKinematics``), to 1e-9, at
  random configurations published on ``/joint_states`` (joint order shuffled): TIAGo without
  hand (example-robot-data, named by no other ROS test: prismatic torso lift, 29 fixed joints,
  rpy origins, locked head / wheel branches) and a synthetic URDF (tilted prismatic axis, a
  link above base_link, a locked branch);
* ``/robot_description`` reaches a subscriber that starts after it was published;
* a mobile base: ``odom -> root`` from ``/odom`` (REP-105), hand-computed from the odometry pose
  and the root's fixed offset.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from test_urdf_link_poses import SYNTHETIC

from rbd_ros.lie.so3 import pose_matrix
from rbd_ros.urdf import load_conversion
from robots_data import BUNDLED_URDF, example_robot_urdf
from ros_helpers import probe_node, publish_until
from urdf_oracles import pin_reference

pin = pytest.importorskip("pinocchio")
pytest.importorskip("tf2_msgs.msg")

TIAGO = "tiago_description/robots/tiago_no_hand.urdf"
READY = "state_publisher: ready"


def _matrix(tr) -> np.ndarray:
    t, r = tr.transform.translation, tr.transform.rotation
    return pose_matrix([t.x, t.y, t.z], [r.x, r.y, r.z, r.w])


class TfListener:
    """/tf_static (transient local) and /tf, kept by child frame (latest), plus the stamps."""

    def __init__(self, node) -> None:
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from tf2_msgs.msg import TFMessage

        self.cv = threading.Condition()
        self.static: dict[str, object] = {}
        self.moving: dict[tuple[int, int], dict[str, object]] = {}  # stamp -> child -> transform
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        node.create_subscription(TFMessage, "/tf_static", self._on_static, latched)
        node.create_subscription(TFMessage, "/tf", self._on_tf, 100)

    def _on_static(self, msg) -> None:
        with self.cv:
            self.static.update({tr.child_frame_id: tr for tr in msg.transforms})
            self.cv.notify_all()

    def _on_tf(self, msg) -> None:
        with self.cv:
            for tr in msg.transforms:
                key = (tr.header.stamp.sec, tr.header.stamp.nanosec)
                self.moving.setdefault(key, {})[tr.child_frame_id] = tr
            self.cv.notify_all()

    def wait(self, predicate, timeout: float = 30.0, what: str = "") -> None:
        with self.cv:
            if not self.cv.wait_for(predicate, timeout):
                raise AssertionError(f"timed out waiting for {what}")


def tf_probe(name: str, msg_type, topic: str):
    """A probe node with a ``TfListener`` and a publisher of ``msg_type`` on ``topic``: the
    context manager gives ``(listener, publisher)``."""
    return probe_node(name, lambda node: (TfListener(node), node.create_publisher(msg_type, topic, 10)))


def _chain_poses(static: dict, moving: dict, root: str) -> dict[str, np.ndarray]:
    """Every frame's pose in ``root`` by composing parent -> child transforms (tf's lookup)."""
    edges = {**static, **moving}
    out = {root: np.eye(4)}

    def pose(frame: str) -> np.ndarray:
        if frame not in out:
            tr = edges[frame]
            out[frame] = pose(tr.header.frame_id) @ _matrix(tr)
        return out[frame]

    for child in edges:
        pose(child)
    return out


def _check_through_ros(node_process, urdf_path: str, n_samples: int = 5, free: tuple[str, ...] = (),
                       **params) -> float:
    """``free``: joints off the model's chain also sent on /joint_states (random in [-1, 1]);
    the oracle locks them there (robot_state_publisher places every joint it is given)."""
    from sensor_msgs.msg import JointState

    conv = load_conversion(urdf_path, **params)
    model, lf = conv.model, conv.link_frames
    args = ["state-publisher", "--ros-args", "-p", f"urdf_path:={urdf_path}", "-p", "publish_frequency:=0.0"]
    for key, value in params.items():
        args += ["-p", f"{key}:={value}"]
    node_process(args, ready=READY, timeout=180)
    full = pin.buildModelFromXML(conv.urdf_xml)
    fdata = full.createData()
    pin.framesForwardKinematics(full, fdata, pin.neutral(full))
    root_pose = fdata.oMf[full.getFrameId(lf.root)]  # pinocchio's world -> URDF root
    n_moving = sum(j.kind != "fixed" for j in lf.joints)  # /tf_static: the fixed ones
    worst = 0.0
    with tf_probe("tf_probe", JointState, "/joint_states") as (listener, pub):
        listener.wait(lambda: len(listener.static) == len(lf.joints) - n_moving, what="/tf_static")
        rng = np.random.default_rng(11)
        lo = np.maximum(np.where(np.isfinite(model.lower), model.lower, -np.pi), -np.pi)
        hi = np.minimum(np.where(np.isfinite(model.upper), model.upper, np.pi), np.pi)
        for k in range(n_samples):
            q = rng.uniform(lo, hi)
            extra = {name: float(v) for name, v in zip(free, rng.uniform(-1.0, 1.0, len(free)))}
            ref = pin_reference(conv.urdf_xml, model, {**conv.positions, **extra})
            to_root = (root_pose.inverse() * ref.base_pose).homogeneous  # root -> base_link
            order = rng.permutation(model.dof)
            msg = JointState(name=[model.joint_names[i] for i in order] + list(extra),
                             position=[float(v) for v in q[order]] + list(extra.values()))
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100 + k, 12345
            key = (100 + k, 12345)
            publish_until(pub, msg, lambda key=key: key in listener.moving)
            listener.wait(lambda key=key: len(listener.moving.get(key, {})) == n_moving, what=f"/tf {key}")
            with listener.cv:
                mine = _chain_poses(listener.static, listener.moving[key], lf.root)
            theirs = ref.link_poses(q, lf.links)
            assert set(mine) == set(lf.links)  # every URDF link, one tree from the root
            worst = max(worst, max(float(np.abs(mine[ln] - to_root @ theirs[ln]).max()) for ln in lf.links))
    assert worst < 1e-9, worst
    return worst


@pytest.mark.slow
def test_tf_of_tiago_equals_pinocchio(node_process) -> None:
    # the head's joints are off the arm's chain: placed from /joint_states like the arm's
    _check_through_ros(node_process, str(example_robot_urdf(TIAGO)), free=("head_1_joint", "head_2_joint"),
                       tip_link="arm_tool_link")


def test_tf_of_synthetic_urdf_equals_pinocchio(node_process, tmp_path) -> None:
    path = tmp_path / "synthetic.urdf"
    path.write_text(SYNTHETIC)
    # base_link below the root: 'world' above it is placed from the fixed origin
    _check_through_ros(node_process, str(path), free=("finger_joint",), base_link="base_link", tip_link="tcp")


@pytest.mark.slow
def test_robot_description_reaches_a_late_subscriber(node_process) -> None:
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String

    path = str(BUNDLED_URDF / "arm7.urdf")
    node_process(["state-publisher", "--ros-args", "-p", f"urdf_path:={path}"], ready=READY, timeout=180)
    time.sleep(0.5)  # published (in the constructor, before the ready line) before this subscriber exists
    got: list[str] = []
    done = threading.Event()
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    with probe_node("late_description_reader", lambda node: node.create_subscription(
            String, "/robot_description", lambda m: (got.append(m.data), done.set()), qos)):
        assert done.wait(30.0), "no /robot_description for a late subscriber"
    assert got[0] == load_conversion(path).urdf_xml


@pytest.mark.parametrize("robot, params", [
    ("mobile_arm7", {}),  # root = base_link
    (TIAGO, {"base_link": "base_link", "tip_link": "arm_tool_link"}),  # root = base_footprint, below base_link
])
@pytest.mark.slow
def test_mobile_base_odom_to_root(node_process, robot, params) -> None:
    from nav_msgs.msg import Odometry

    path = str(BUNDLED_URDF / f"{robot}.urdf" if robot == "mobile_arm7" else example_robot_urdf(robot))
    conv = load_conversion(path, base_type="diff_drive", **params)
    lf = conv.link_frames
    assert lf.root == ("base_link" if robot == "mobile_arm7" else "base_footprint")
    node_process(["state-publisher", "--ros-args", "-p", f"urdf_path:={path}", "-p", "base_type:=diff_drive",
                  "-p", "publish_frequency:=0.0", *[a for k, v in params.items() for a in ("-p", f"{k}:={v}")]],
                 ready=READY, timeout=180)
    odom_T_base = pose_matrix([1.5, -0.4, 0.1], [0.0, 0.0, np.sin(0.35), np.cos(0.35)])
    P = conv.all_link_poses(np.zeros(conv.model.dof))
    expect = odom_T_base @ np.linalg.solve(P[conv.model.base_link], P[lf.root])  # hand-composed
    with tf_probe("odom_probe", Odometry, "/odom") as (listener, pub):
        msg = Odometry(child_frame_id=conv.model.base_link)
        msg.header.frame_id = "odom"
        msg.header.stamp.sec = 7
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z = 1.5, -0.4, 0.1
        o.z, o.w = float(np.sin(0.35)), float(np.cos(0.35))
        publish_until(pub, msg, lambda: (7, 0) in listener.moving)
        with listener.cv:
            tr = listener.moving[(7, 0)][lf.root]
    assert tr.header.frame_id == "odom"
    assert np.abs(_matrix(tr) - expect).max() < 1e-12


@pytest.mark.slow
def test_model_file_without_urdf_still_publishes(node_process) -> None:
    from rbd_ros.util.resources import config_file

    proc = node_process(["state-publisher", "--ros-args", "-p", f"model_yaml:={config_file('puma560')}"],
                        ready=READY, timeout=180)
    assert "links" in proc.output


def test_bad_robot_parameter_is_one_line(node_process) -> None:
    proc = node_process(["state-publisher", "--ros-args", "-p", "urdf_path:=/nonexistent/robot.urdf"])
    assert proc.wait(120) == 2
    assert "state_publisher: error: urdf_path '/nonexistent/robot.urdf': file not found" in proc.output
    assert "Traceback" not in proc.output


@pytest.mark.slow
def test_nan_joint_state_is_not_placed_and_said(node_process) -> None:
    """A NaN position: no /tf for that state (never a wrong tree) and a warning naming the
    joint; the next finite state is placed again."""
    from sensor_msgs.msg import JointState

    path = str(BUNDLED_URDF / "arm7.urdf")
    conv = load_conversion(path)
    names = list(conv.model.joint_names)
    proc = node_process(["state-publisher", "--ros-args", "-p", f"urdf_path:={path}",
                         "-p", "publish_frequency:=0.0"], ready=READY, timeout=180)
    with tf_probe("nan_probe", JointState, "/joint_states") as (listener, pub):
        good = JointState(name=names, position=[0.1] * len(names))
        good.header.stamp.sec = 1
        assert publish_until(pub, good, lambda: (1, 0) in listener.moving)
        bad = JointState(name=names, position=[0.1] * (len(names) - 1) + [float("nan")])
        bad.header.stamp.sec = 2
        pub.publish(bad)
        proc.wait_for(f"non-finite position of {names[-1]}", 30)
        good.header.stamp.sec = 3
        pub.publish(good)
        listener.wait(lambda: (3, 0) in listener.moving, what="/tf after the NaN")
        assert (2, 0) not in listener.moving


@pytest.mark.slow
def test_publish_frequency_bounds_the_tf_rate(node_process) -> None:
    """publish_frequency 2 Hz, /joint_states stamped 20 Hz apart for 3 s of their time: 6 /tf
    messages, not 60; counted in the stamps' time (a lockstep simulation's), not the wall's:
    the 60 messages go out within 0.6 s of wall time."""
    from sensor_msgs.msg import JointState

    path = str(BUNDLED_URDF / "arm7.urdf")
    names = list(load_conversion(path).model.joint_names)
    node_process(["state-publisher", "--ros-args", "-p", f"urdf_path:={path}", "-p", "publish_frequency:=2.0"],
                 ready=READY, timeout=180)
    with tf_probe("rate_probe", JointState, "/joint_states") as (listener, pub):
        msg = JointState(name=names, position=[0.2] * len(names))
        deadline = time.monotonic() + 30.0
        while not listener.moving and time.monotonic() < deadline:  # connected
            msg.header.stamp.nanosec += 1
            pub.publish(msg)
            time.sleep(0.05)
        with listener.cv:
            listener.moving.clear()
        for k in range(60):
            msg.header.stamp.sec, msg.header.stamp.nanosec = 1000 + k // 20, (k % 20) * 50_000_000
            pub.publish(msg)
            time.sleep(0.01)
        time.sleep(0.5)
        with listener.cv:
            n = len(listener.moving)
    assert 5 <= n <= 7, n  # due at 1000.0, 1000.5 ... 1002.5 s
