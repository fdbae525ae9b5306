"""A URDF's gripper as a MuJoCo mechanism (issue 43.2, ROS-free): the Panda hand of
example-robot-data (``panda_finger_joint2`` mimics ``panda_finger_joint1``), on the arm's chain
to ``panda_hand``, the arm held still at a pose pointing the hand down.  Oracles: the URDF's
``<mimic>`` relation and limits (parsed here with urdf_parser_py, not our parser), the URDF's
masses, the commanded targets, and MuJoCo's own contact forces (``mj_contactForce``) against
the servo's force at a grasp."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from robots_data import PANDA, REPO, example_robot_urdf

mujoco = pytest.importorskip("mujoco")
Q = np.array([0.0, 0.2, 0.0, -2.0, 0.0, 2.2, 0.785])  # the hand pointing down, fingers along y


def _setup(scene=None, collision=()):
    from rbd_ros.sim.gripper import GripperServo, find_gripper
    from rbd_ros.sim.mujoco_model import build_mujoco_model
    from rbd_ros.urdf import load_model

    urdf = str(example_robot_urdf(PANDA))
    model = load_model(urdf, tip_link="panda_hand")
    gripper = find_gripper(urdf, tip_link="panda_hand")
    mj, _ = build_mujoco_model(model, gripper=gripper, scene=scene, collision=collision)
    mj.dof_damping[:model.dof] = 10.0  # the arm's drives, holding it (below)
    data = mujoco.MjData(mj)
    data.qpos[:model.dof] = Q
    mujoco.mj_forward(mj, data)
    return urdf, model, gripper, mj, data, GripperServo(mj, gripper)


def _run(mj, data, servo, seconds, n=7, each=None):
    """Steps with the arm held at ``Q`` (its drives' job in the bridge): its bias forces
    compensated, its joints damped."""
    for _ in range(int(round(seconds / mj.opt.timestep))):
        data.ctrl[:n] = data.qfrc_bias[:n]
        servo.advance(data, mj.opt.timestep)
        mujoco.mj_step(mj, data)
        if each is not None and each() is not None:
            return each()
    return None


def test_the_panda_hand_opens_and_closes_on_its_mimic_relation() -> None:
    from urdf_parser_py.urdf import URDF

    urdf, model, gripper, mj, data, servo = _setup()
    robot = URDF.from_xml_file(urdf)
    j1, j2 = robot.joint_map["panda_finger_joint1"], robot.joint_map["panda_finger_joint2"]
    assert gripper.names == ("panda_finger_joint1", "panda_finger_joint2")
    mult = 1.0 if j2.mimic.multiplier is None else j2.mimic.multiplier
    off = 0.0 if j2.mimic.offset is None else j2.mimic.offset
    assert j2.mimic.joint == j1.name
    # the mass of the moving arm and hand: MuJoCo's bodies against the URDF's links (all but
    # world and panda_link0, fixed to it: MuJoCo's world body)
    chain = {ln for ln in robot.link_map if ln not in ("world", "panda_link0")}
    urdf_mass = sum(robot.link_map[ln].inertial.mass for ln in chain if robot.link_map[ln].inertial)
    assert mj.body_mass.sum() == pytest.approx(urdf_mass, rel=1e-9)
    worst = 0.0
    for target, expect in ((0.04, 0.04), (0.0, 0.0), (0.02, 0.02), (0.5, j1.limit.upper)):
        servo.command(target)
        trace: list = []
        _run(mj, data, servo, 1.0, each=lambda trace=trace: trace.append(servo.positions(data)))
        q = np.array(trace)
        worst = max(worst, float(np.abs(q[:, 1] - (mult * q[:, 0] + off)).max()))
        assert (q >= j1.limit.lower - 1e-6).all() and (q <= j1.limit.upper + 1e-6).all(), target
        assert q[-1, 0] == pytest.approx(expect, abs=1e-4), (target, q[-1])
    assert worst < 1e-6, worst


def _box_between_the_fingers():
    from rbd_ros.sim.scene import load_scene

    *_, mj, data, _ = _setup()
    data.qpos[:7] = Q
    mujoco.mj_forward(mj, data)
    ids = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, b) for b in ("panda_leftfinger", "panda_rightfinger")]
    down = data.xmat[ids[0]].reshape(3, 3)[:, 2]
    centre = data.xpos[ids].mean(axis=0) + 0.045 * down  # at the finger pads
    raw = yaml.safe_load((REPO / "config/scenes/box.yaml").read_text())
    raw["objects"][0]["pose"] = {"xyz": centre.tolist(), "rpy": [0.0, 0.0, 0.0]}
    return load_scene(raw)


@pytest.mark.parametrize("max_effort", [20.0, 1.0])
def test_the_hand_closes_on_a_box_and_stalls_within_its_max_effort(max_effort: float) -> None:
    from rbd_ros.sim.gripper import GripperGoal
    from rbd_ros.sim.urdf_visuals import urdf_collisions

    scene = _box_between_the_fingers()
    urdf = str(example_robot_urdf(PANDA))
    from rbd_ros.sim.gripper import find_gripper
    from rbd_ros.urdf import load_model

    links = find_gripper(urdf, tip_link="panda_hand").links
    collision, _ = urdf_collisions(urdf, None, "panda_hand", load_model(urdf, tip_link="panda_hand"), skip=links)
    _, model, gripper, mj, data, servo = _setup(scene, collision)
    data.qpos[servo.qpos] = gripper.mimic_positions(0.04)  # open around the box
    mujoco.mj_forward(mj, data)
    servo.command(0.04)
    _run(mj, data, servo, 0.3)
    assert servo.positions(data) == pytest.approx([0.04, 0.04], abs=1e-4)
    assert servo.set_max_effort(max_effort) == max_effort
    servo.command(0.0)
    goal = GripperGoal(0.0, max_effort, data.time)
    result = _run(mj, data, servo, 5.0, each=lambda: goal.update(
        data.time, servo.position(data), servo.velocity(data), servo.effort(data)))
    assert result is not None, "no result in 5 s"
    assert result["stalled"] and not result["reached_goal"] and not result["succeeded"], result
    assert 0.02 < result["position"] < 0.03  # on the 5 cm box, not through it
    assert abs(result["effort"]) <= max_effort + 1e-9
    fingers = {mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_BODY, b) for b in ("panda_leftfinger", "panda_rightfinger")}
    normal, f = 0.0, np.zeros(6)
    for i in range(data.ncon):
        c = data.contact[i]
        if {mj.geom_bodyid[c.geom1], mj.geom_bodyid[c.geom2]} & fingers:
            mujoco.mj_contactForce(mj, data, i, f)
            normal += f[0]
    # the box holds both fingers: their normal forces add up to the servo's force (static)
    assert normal == pytest.approx(abs(result["effort"]), rel=0.1), (normal, result["effort"])
    if max_effort < 2.0:  # the servo's PD asks ~3 N here: the limit clamps it
        assert abs(result["effort"]) == pytest.approx(max_effort, rel=1e-6)
