"""The bag of ``rbd-ros bringup --record`` replays against the model: it holds
``/robot_description`` (the URDF), ``/tf_static`` and ``/tf`` from the state publisher, and every
recorded ``/tf`` composed with ``/tf_static`` places each URDF link where Pinocchio's frame
placements put it at the ``/joint_states`` recorded with the same stamp (to 1e-9)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rbd_ros.lie.so3 import pose_matrix
from rbd_ros.urdf import load_conversion
from robots_data import BUNDLED_URDF
from ros_helpers import REPO
from urdf_oracles import pin_reference

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop


def _matrix(tr) -> np.ndarray:
    t, r = tr.transform.translation, tr.transform.rotation
    return pose_matrix([t.x, t.y, t.z], [r.x, r.y, r.z, r.w])


def test_recorded_tf_is_the_urdf_at_the_recorded_states(tmp_path):
    from rbd_ros.ros.bringup.recorder import read_bag

    out = tmp_path / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", "--robot", "arm7",
         "--controller", "pd_gravity", "--mode", "lockstep", "--duration", "0.8", "--segment-time", "0.6",
         "--record", str(out), "--no-video"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    bag = read_bag(out / "bag")
    (_, description), = bag["/robot_description"]
    urdf = str(BUNDLED_URDF / "arm7.urdf")
    conv = load_conversion(urdf)
    assert description.data == conv.urdf_xml
    (_, static), = bag["/tf_static"]
    edges = {tr.child_frame_id: tr for tr in static.transforms}
    states = {stamp: js for stamp, js in bag["/joint_states"]}
    ref = pin_reference(conv.urdf_xml, conv.model, conv.positions)
    root = conv.link_frames.root
    assert len(bag["/tf"]) >= 5  # ~20 Hz of simulated time
    worst, matched = 0.0, 0
    for stamp, msg in bag["/tf"]:
        if stamp not in states:
            continue
        js = states[stamp]
        q = np.array([dict(zip(js.name, js.position))[n] for n in conv.model.joint_names])
        frames = {**edges, **{tr.child_frame_id: tr for tr in msg.transforms}}
        poses = {root: np.eye(4)}

        def pose(f, frames=frames, poses=poses):
            if f not in poses:
                poses[f] = pose(frames[f].header.frame_id) @ _matrix(frames[f])
            return poses[f]

        theirs = ref.link_poses(q, conv.link_frames.links)
        worst = max(worst, max(float(np.abs(pose(ln) - theirs[ln]).max()) for ln in conv.link_frames.links))
        matched += 1
    print(f"bag /tf: {matched} messages matched, worst {worst:.2e}")
    assert matched >= 5 and worst < 1e-9, (matched, worst)


def test_mobile_bag_has_odom_to_base_link_from_the_odometry(mobile_run):
    """A mobile base: the bag's /tf holds odom -> base_link (REP-105) equal to the bridge's
    /odom pose of the same stamp, next to the arm's moving joints."""
    from rbd_ros.ros.bringup.recorder import read_bag

    proc, out = mobile_run  # test/conftest.py
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    bag = read_bag(out / "bag")
    odom = {stamp: msg.pose.pose for stamp, msg in bag["/odom"]}
    base, arm, worst = 0, 0, 0.0
    for stamp, msg in bag["/tf"]:
        for tr in msg.transforms:
            if tr.header.frame_id == "odom":
                assert tr.child_frame_id == "base_link"
                if stamp in odom:
                    p, o = odom[stamp].position, odom[stamp].orientation
                    worst = max(worst, float(np.abs(_matrix(tr) - pose_matrix([p.x, p.y, p.z],
                                                                               [o.x, o.y, o.z, o.w])).max()))
                    base += 1
            else:
                arm += 1
    assert base >= 5 and arm >= 5 and worst < 1e-12, (base, arm, worst)
