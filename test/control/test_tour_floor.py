"""Issue 26 item 5: a tour that fits the robot's surroundings (``rbd_ros.control.tour``).

A table-mounted UR5 (example-robot-data, stands above its base link's xy-plane at its zero
pose) gets that plane as its floor: no URDF link origin and no tool point goes below it
anywhere along the densely sampled tour -- checked with Pinocchio's forward kinematics of the
URDF, not ours.  A start the user gives is kept exactly (a warning if singular); an impossible
floor or start is refused naming what does not fit; an arm hanging below its base link gets
no floor unless one is given; the default start of a stretched, singular zero pose is moved
away from it (and only then is "start moved" said).
"""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.control.tour import FLOOR_MARGIN, plan_tour
from rbd_ros.robot import Robot
from rbd_ros.urdf import load_conversion
from robots_data import UR5, example_robot_urdf

pin = pytest.importorskip("pinocchio")


@pytest.fixture(scope="module")
def ur5():
    path = str(example_robot_urdf(UR5))
    conv = load_conversion(path)
    points = [(name, i, off[:3, 3]) for name, (i, off) in conv.link_offsets.items()]
    return path, conv.model, points


def _pinocchio_heights(path: str, model, q: np.ndarray) -> dict[str, np.ndarray]:
    """z (world = the URDF root, the model's base link) of every moving body frame and
    ``tool0`` over the poses ``q`` (S, n, our joint order), by Pinocchio."""
    pm = pin.buildModelFromUrdf(path)
    data = pm.createData()
    idx = [pm.joints[pm.getJointId(name)].idx_q for name in model.joint_names]
    frames = [f for f in pm.frames if f.type == pin.FrameType.BODY and f.parentJoint > 0]
    assert {"tool0", "wrist_3_link", "forearm_link", "upper_arm_link"} <= {f.name for f in frames}
    z = {f.name: np.empty(len(q)) for f in frames}
    for k, qk in enumerate(q):
        qp = pin.neutral(pm)
        qp[idx] = qk
        pin.framesForwardKinematics(pm, data, qp)
        for f in frames:
            z[f.name][k] = data.oMf[pm.getFrameId(f.name)].translation[2]
    return z


def test_ur5_tour_never_goes_below_its_mounting_plane(ur5) -> None:
    path, model, points = ur5
    zero = np.zeros(model.dof)
    # the premise: at its zero pose the UR5 stands above its base plane, its wrist just at it
    z0 = _pinocchio_heights(path, model, zero[None])
    assert max(v[0] for v in z0.values()) > 0.08 and min(v[0] for v in z0.values()) > -0.01
    assert z0["tool0"][0] < FLOOR_MARGIN  # the zero pose itself is too close to the table
    tour = plan_tour(model, points=points)
    assert tour.floor == 0.0
    assert any("start moved" in n and "below the floor" in n for n in tour.notes), tour.notes
    t = np.linspace(0.0, tour.duration, 3001)  # 1 ms apart at 2 s segments
    q, _, _ = tour.spline().sample(t)
    z = _pinocchio_heights(path, model, q)
    lowest = min(z, key=lambda name: z[name].min())
    assert z[lowest].min() >= 0.0, f"{lowest} goes to z = {z[lowest].min():.4f} m"
    assert np.abs(q - tour.start).max() > 0.3  # and the tour still moves


def test_a_given_start_is_kept_exactly(ur5) -> None:
    path, model, points = ur5
    start = np.array([0.3, -1.2, 1.1, -1.4, -1.5, 0.2])
    tour = plan_tour(model, start, points=points)
    assert np.array_equal(tour.start, start)
    q, _, _ = tour.spline().sample(np.array([0.0]))
    np.testing.assert_array_equal(q[0], start)
    assert not any("start moved" in n for n in tour.notes), tour.notes
    z = _pinocchio_heights(path, model, tour.spline().sample(np.linspace(0, tour.duration, 1501))[0])
    assert min(v.min() for v in z.values()) >= 0.0


def test_a_singular_given_start_is_kept_with_a_warning(ur5) -> None:
    _, model, points = ur5
    upright = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])  # elbow straight, arm up
    sv = np.linalg.svd(Robot(model).jacobian(upright), compute_uv=False)
    assert sv[-1] / sv[0] < 1e-6  # singular by an SVD of our Jacobian
    tour = plan_tour(model, upright, points=points)
    assert np.array_equal(tour.start, upright)
    assert any(n.startswith("warning: the given start is near a singular pose") for n in tour.notes)


def test_impossible_floors_and_starts_are_refused_naming_what_does_not_fit(ur5) -> None:
    _, model, points = ur5
    # the shoulder sits 0.089 m up on the first joint's axis: nothing lifts it to 0.5 m
    with pytest.raises(ValueError, match=r"no tour fits above the floor z = 0.5 m: link '.*' .*"
                                         r"sits at z = 0.089 m and no joint moves it up"):
        plan_tour(model, floor=0.5, points=points)
    zero = np.zeros(model.dof)
    with pytest.raises(ValueError, match=r"no tour fits from the given start: .* is at z = "
                                         r"-0.00[0-9] m, not 0.02 m above the floor z = 0 m"):
        plan_tour(model, zero, points=points)
    with pytest.raises(ValueError, match="the start puts joint 'elbow_joint' at 4, outside its limits"):
        plan_tour(model, np.array([0, -1.5, 4.0, 0, 0, 0]), points=points)


def test_an_arm_hanging_from_a_torso_gets_no_floor_unless_given(ur5) -> None:
    _, model, _ = ur5
    flip = np.diag([1.0, -1.0, -1.0, 1.0])  # the base turned upside down: the arm hangs
    hanging = model.replace(base=flip @ model.base)
    tour = plan_tour(hanging)
    assert tour.floor is None
    robot = Robot(hanging)
    q, _, _ = tour.spline().sample(np.linspace(0, tour.duration, 601))
    assert min(robot.fk(x)[2, 3] for x in q) < -0.05  # not kept above the base link's plane
    tour = plan_tour(hanging, floor=-0.5)
    assert tour.floor == -0.5
    q, _, _ = tour.spline().sample(np.linspace(0, tour.duration, 601))
    low = min(min(robot.fk(x)[2, 3], robot.link_poses(x)[1:, 2, 3].min()) for x in q)
    assert low >= -0.5 + FLOOR_MARGIN - 1e-9
    assert plan_tour(model, floor=None).floor is None  # --floor none on the table arm


def test_the_default_start_leaves_a_stretched_singular_zero_pose() -> None:
    from rbd_ros.model import MdhModel
    from rbd_ros.util.resources import config_file

    model = MdhModel.from_yaml(str(config_file("arm7")))
    robot = Robot(model)
    zero = np.clip(np.zeros(model.dof), model.lower, model.upper)

    def ratio(q: np.ndarray) -> float:
        sv = np.linalg.svd(robot.jacobian(q), compute_uv=False)
        return sv[-1] / sv[0]

    tour = plan_tour(model)
    assert ratio(zero) < 0.03 and ratio(tour.start) > 2 * ratio(zero)
    assert any("start moved" in n and "singular" in n for n in tour.notes)
    # nothing to move: no "start moved" line (it said "moved by up to 0.00 rad")
    kept = plan_tour(model, tour.start)
    assert not any("moved" in n for n in kept.notes), kept.notes
    assert all("0.00 rad" not in n for n in tour.notes + kept.notes)


def test_baxters_left_arm_keeps_its_full_tour_above_its_torso() -> None:
    """Baxter's left arm from its torso (stands above the torso's plane): the default start is
    moved for gravity, the floor and the singular zero pose, then to where the whole 0.5 rad
    tour fits 70 % of the effort limits (it was shrunk to 17 % without that); every URDF link
    of the arm stays above the torso's plane (Pinocchio, in the torso frame)."""
    path = str(example_robot_urdf("baxter_description/urdf/baxter.urdf"))
    conv = load_conversion(path, "torso", "left_wrist")
    model = conv.model
    points = [(name, i, off[:3, 3]) for name, (i, off) in conv.link_offsets.items()]
    tour = plan_tour(model, points=points)
    assert tour.floor == 0.0
    np.testing.assert_allclose(tour.amplitude, 0.5)
    assert not any("shrunk" in n for n in tour.notes), tour.notes
    pm = pin.buildModelFromUrdf(path)
    data = pm.createData()
    idx = [pm.joints[pm.getJointId(name)].idx_q for name in model.joint_names]
    torso = pm.getFrameId("torso")
    arm = [pm.getFrameId(name) for name in conv.link_offsets]
    q, _, _ = tour.spline().sample(np.linspace(0.0, tour.duration, 1501))
    low = np.inf
    for qk in q:
        qp = pin.neutral(pm)
        qp[idx] = qk
        pin.framesForwardKinematics(pm, data, qp)
        base = data.oMf[torso].inverse()
        low = min(low, min((base * data.oMf[f]).translation[2] for f in arm))
    assert low >= 0.0
