"""The base's orientation quaternions (``/odom`` from the simulator's ground truth and from
wheel odometry, the bringup's ``nav_msgs/Path`` of the tour) and the real-time factor's guard
against simulated time going back.

Oracles: SciPy's quaternion of the rotation matrix ``R_z(yaw)`` written out by hand (up to the
quaternion's sign), MuJoCo's own body orientation, the diff-drive kinematics by hand, and
hand-computed real-time factors.
"""
from __future__ import annotations

import math
from types import SimpleNamespace

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rbd_ros.model import MdhModel
from rbd_ros.ros.bringup.report import real_time_factor
from rbd_ros.sim.mobile_sim import MobileConfig, MobileSimulator
from rbd_ros.sim.simulator import BridgeConfig
from rbd_ros.util.resources import config_file

QUIET = BridgeConfig(armature=False, viscous_friction=False, coulomb_friction=False)
YAWS = (0.0, 0.4, 1.1, 2.5, -2.9, 3.1)


def _rz(yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _assert_quat_of(quat_xyzw, R: np.ndarray) -> None:
    """``quat_xyzw`` is the unit quaternion of ``R`` (either sign), per SciPy."""
    want = Rotation.from_matrix(R).as_quat()  # x, y, z, w
    got = np.asarray(quat_xyzw, float)
    assert min(np.abs(got - want).max(), np.abs(got + want).max()) < 1e-9, (got, want)


def _quiet(*_):
    pass


@pytest.fixture(scope="module")
def diff_model() -> MdhModel:
    return MdhModel.from_yaml(str(config_file("mobile_arm7")))


@pytest.mark.parametrize("name,base_model", [("mobile_arm7", "wheels"), ("mobile_arm7", "ideal"),
                                             ("omni_arm7", "wheels")])
@pytest.mark.parametrize("yaw", YAWS)
def test_ground_truth_odom_quaternion(name: str, base_model: str, yaw: float) -> None:
    model = MdhModel.from_yaml(str(config_file(name)))
    sim = MobileSimulator(model, QUIET, MobileConfig(base_model=base_model,
                                                     initial_base_pose=(0.3, -0.2, yaw)),
                          log=_quiet)
    pos, quat, _, _ = sim.base_state()
    _assert_quat_of(quat, _rz(yaw))
    np.testing.assert_allclose(pos[:2], [0.3, -0.2], atol=1e-12)
    mujoco.mj_kinematics(sim.mj_model, sim.mj_data)  # MuJoCo's own orientation of base_link
    _assert_quat_of(quat, sim.mj_data.body(model.base_link).xmat.reshape(3, 3))


class _Publisher:
    def __init__(self) -> None:
        self.sent: list = []

    def publish(self, msg) -> None:
        self.sent.append(msg)


def test_wheel_odometry_odom_quaternion(diff_model: MdhModel) -> None:
    """``/odom`` from wheel odometry after the wheels turned a known amount in place: the yaw
    is ``r (d_r - d_l) / s`` by hand, and the message's quaternion is R_z of it."""
    from rbd_ros.ros.mobile_bridge import OdomPublisher

    sim = MobileSimulator(diff_model, QUIET, MobileConfig(odom_source="wheel_odometry"),
                          log=_quiet)
    node = SimpleNamespace(create_publisher=lambda *a, **k: _Publisher(),
                           get_logger=lambda: SimpleNamespace(info=_quiet))
    odom = OdomPublisher(node, sim)
    q = np.zeros(len(sim.joint_names))
    left, right = (int(i) for i in sim.base_index[:2])
    r, s = diff_model.wheel_radius, diff_model.wheel_separation
    for k, turn in enumerate((0.0, 0.7, 1.9, 3.6)):  # rad of wheel, opposite ways
        q[left], q[right] = -turn, turn
        odom.publish(0.1 * k, q)
        o = odom.msg.pose.pose.orientation
        _assert_quat_of([o.x, o.y, o.z, o.w], _rz(r * 2.0 * turn / s))


def test_tour_path_quaternions() -> None:
    """The bringup's ``nav_msgs/Path`` of the base's tour: each pose's quaternion is R_z of the
    tour's yaw at that time."""
    from rbd_ros.ros.bringup.mobile import base_path_message

    class Spin:
        t0, duration = 0.0, 2.0

        @staticmethod
        def evaluate(t, p, pd, pdd) -> None:
            p[:] = [0.1 * t, -0.2 * t, -3.0 + 3.0 * t]

    msg = base_path_message(Spin(), 5.0, spacing=0.25)
    assert len(msg.poses) == 8
    for k, pose in enumerate(msg.poses, start=1):
        o = pose.pose.orientation
        _assert_quat_of([o.x, o.y, o.z, o.w], _rz(-3.0 + 3.0 * 0.25 * k))


def test_real_time_factor_ignores_simulated_time_going_back() -> None:
    """A stale diagnostics sample (simulated time 0.2 reported at wall 3, after 2.0 at wall 2)
    must not make the simulation 'reach' 1.5 a second time: it ran 1 simulated s per wall s from
    wall 0 to 2, stood still to wall 4, then ran to 3.0 at wall 5 (by hand: 1.5 reached at wall
    1.5, 2.5 at wall 4.5)."""
    samples = [(0.0, 0.0), (1.0, 1.0), (2.0, 2.0), (3.0, 0.2), (4.0, 2.0), (5.0, 3.0)]
    assert real_time_factor(samples, 1.5, 2.5) == pytest.approx(1.0 / 3.0, rel=1e-12)
    assert real_time_factor(samples, 0.5, 1.5) == pytest.approx(1.0, rel=1e-12)
    assert real_time_factor(samples, 0.0, 3.0) == pytest.approx(3.0 / 5.0, rel=1e-12)
