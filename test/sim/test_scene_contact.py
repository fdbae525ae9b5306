"""Contact in the bridge (issue 30): scenes, the F/T sensor, pushes, on the UR3 (named by no
other test).  Oracles: plain MuJoCo stepping of the unchanged model builder (no scene:
bit-identical), MuJoCo's own contact forces (``mj_contactForce``), a known applied wrench."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

UR3 = "ur_description/urdf/ur3_robot.urdf"


@pytest.fixture(scope="module")
def ur3():
    from rbd_ros.urdf import load_model

    return load_model(str(example_robot_urdf(UR3)))


def _quiet(level, msg):
    return None


def test_no_scene_is_plain_mujoco_bit_for_bit(ur3) -> None:
    """Without a scene the simulator steps the model the builder made before scenes existed
    (called without the new arguments), state for state, bit for bit."""
    import mujoco

    from rbd_ros.sim.mujoco_model import build_mujoco_model
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    sim = Simulator(ur3, BridgeConfig(mode="lockstep", command_timeout=0.0, integrator="rk4"), log=_quiet)
    assert sim.scene is None and sim.ft is None
    m, _ = build_mujoco_model(ur3, 0.001, "RK4")
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_AUTORESET)
    d = mujoco.MjData(m)
    assert (m.ngeom, m.nsite, m.nsensor) == (sim.mj_model.ngeom, sim.mj_model.nsite, sim.mj_model.nsensor)
    assert m.opt.disableflags & int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    mujoco.mj_forward(m, d)
    for k in range(400):
        tau = 5.0 * np.sin(0.02 * k + np.arange(6))
        sim.command(tau)
        sim.step()
        d.ctrl[:] = tau
        mujoco.mj_step(m, d)
    assert np.array_equal(sim.mj_data.qpos, d.qpos) and np.array_equal(sim.mj_data.qvel, d.qvel)


@pytest.mark.parametrize("obj, why", [
    ({"name": "t", "type": "cone", "size": [1, 1, 1]}, "type must be one of"),
    ({"name": "t", "type": "box", "size": [1, 1]}, "size must be 3"),
    ({"name": "t", "type": "box", "size": [1, -1, 1]}, "size must be positive"),
    ({"name": "t", "type": "box", "size": [1, 1, 1], "friction": [-1, 0, 0]}, "friction must be >= 0"),
    ({"name": "t", "type": "box", "size": [1, 1, 1], "pose": "here"}, "pose must be 'auto'"),
    ({"name": "t", "type": "box", "size": [1, 1, 1], "colour": 1}, "unknown field"),
])
def test_bad_scene_is_one_line_naming_the_object(obj, why) -> None:
    from rbd_ros.sim.scene import load_scene

    with pytest.raises(ValueError, match=why) as info:
        load_scene({"objects": [obj]})
    assert "object 't'" in str(info.value) and "\n" not in str(info.value)


def test_bundled_scenes_load_and_a_missing_one_names_them() -> None:
    from rbd_ros.sim.scene import load_scene

    assert load_scene("table").objects[0].pose is None
    wall = load_scene("wall")
    assert [o.kind for o in wall.objects] == ["box", "cylinder"] and wall.objects[1].pose is not None
    with pytest.raises(FileNotFoundError, match=r"bundled scenes \['box', 'table', 'wall'\]"):
        load_scene("sofa")


def test_table_is_placed_under_the_probe_and_the_arm_clears_it(ur3) -> None:
    """The site's poses reach the table top with the probe; every frame origin stays 3 cm
    above it (forward kinematics of the core, independent of the IK that found them)."""
    from rbd_ros.robot import Robot
    from rbd_ros.sim.contact_site import contact_site
    from rbd_ros.sim.mujoco_model import TIP_RADIUS

    site = contact_site(ur3)
    robot = Robot(ur3.replace(tool=site.tool))
    touch = robot.fk(site.q_touch)
    assert np.allclose(touch[:3, 3], site.point + TIP_RADIUS * site.normal, atol=1e-5)
    assert np.allclose(touch[:3, :3], site.rotation, atol=1e-5)
    heights = (robot.link_poses(site.q_touch)[:-2, :3, 3] - site.point) @ site.normal
    assert heights.min() >= 0.03 - 1e-9


def _hold(sim, q_hold, steps, push=None, record=None):
    """Computed torque holding ``q_hold`` (stiff: 10 Hz) for ``steps``; ``record``: a list
    that gets the compensated force of each step."""
    from rbd_ros.control.laws import Reference, make_law

    law = make_law("computed_torque", sim.model, q0=sim.q)
    ref = Reference(sim.n).set_joint(q_hold)
    for k in range(steps):
        if push is not None and k == push[0]:
            sim.push(*push[1:])
        q, qd, _ = sim.measure()
        sim.command(law.compute(sim.time, q, qd, ref))
        sim.step()
        if record is not None:
            record.append(sim.ft.wrench[:3].copy())


def test_sensor_sees_a_known_push_and_nothing_in_free_space(ur3) -> None:
    """A push of known wrench at the tool: the compensated reading is minus it (the sensor
    measures what the arm exerts on what hangs below; the push acts on that from outside),
    while the raw reading carries the payload's weight; before and after: ~0."""
    from rbd_ros.robot import Robot
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    sim = Simulator(ur3, BridgeConfig(mode="lockstep", command_timeout=0.0, ft_sensor=True,
                                      integrator="implicitfast"), log=_quiet)
    q0 = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])
    sim.q0 = q0
    sim.reset(keep_time=False)
    _hold(sim, q0, 300)
    assert np.abs(sim.ft.wrench).max() < 0.05
    weight = ur3.mass[-1] * 9.81
    assert abs(np.linalg.norm(sim.ft.raw[:3]) - weight) < 0.05 * weight
    push = np.array([4.0, -3.0, 2.0, 0.1, 0.2, -0.1])
    _hold(sim, q0, 200, push=(0, "", push, 1.0, "world"))
    R = Robot(sim.model).fk(sim.q)[:3, :3]
    seen = np.concatenate([R @ sim.ft.wrench[:3], R @ sim.ft.wrench[3:]])
    assert np.allclose(seen, -push, atol=0.02 * np.abs(push).max()), seen
    _hold(sim, q0, 1100)  # the push ended after 1 s
    assert np.abs(sim.ft.wrench).max() < 0.05


def test_push_refuses_bad_input(ur3) -> None:
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    sim = Simulator(ur3, BridgeConfig(mode="lockstep"), log=_quiet)
    with pytest.raises(ValueError, match="not a link of the chain"):
        sim.push("nope", np.zeros(6), 1.0)
    with pytest.raises(ValueError, match="6 finite numbers"):
        sim.push("", [1.0, np.nan, 0, 0, 0, 0], 1.0)
    with pytest.raises(ValueError, match="duration must be > 0"):
        sim.push("", np.zeros(6), 0.0)


def test_pressing_the_table_sensor_and_estimate_match_mujoco(ur3) -> None:
    """The probe pushed onto the table with a constant J^T f: MuJoCo's contact force, the
    sensor's compensated reading and the joint-torque estimate agree (5 % of the sensor)."""
    from rbd_ros.robot import Robot
    from rbd_ros.sim.contact_task import probe_contact
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    sim = Simulator(ur3, BridgeConfig(mode="lockstep", command_timeout=0.0, scene="table"), log=_quiet)
    assert sim.integrator == "implicitfast"
    sim.q0 = sim.site.q_touch + 0.0
    sim.reset(keep_time=False)
    robot = Robot(sim.model)
    f = np.array([0.0, 0.0, -8.0, 0.0, 0.0, 0.0])
    for _ in range(1500):  # gravity + J^T f + damping: the probe rests on the table
        q, qd, _ = sim.measure()
        sim.command(robot.gravity(q) + robot.jacobian(q).T @ f - 0.5 * qd)
        sim.step()
    import mujoco

    tip = mujoco.mj_name2id(sim.mj_model, mujoco.mjtObj.mjOBJ_GEOM, "tip")
    fc = np.zeros(3)
    assert probe_contact(sim, tip, fc)
    R = robot.fk(sim.q)[:3, :3]
    sensor = R @ sim.ft.wrench[:3]
    assert np.allclose(sensor, fc, atol=0.02 * 8.0), (sensor, fc)
    assert abs(fc[2] + 8.0) < 0.4  # what was asked, the tangential forces held by friction
    est = np.zeros(6)
    sim.ft.estimate(sim._good_q, sim._pre_qd, sim._qdd, sim._ctrl, est)
    assert np.linalg.norm(R @ est[:3] - sensor) < 0.05 * np.linalg.norm(sensor)


def test_sensor_noise_and_low_pass_have_the_set_spread(ur3) -> None:
    """White noise of 1 N through y += a (x - y): the AR(1) spread is sqrt(a / (2 - a)) of it
    (closed form), a = dt / (dt + 1 / (2 pi f_c)); without the filter it is 1 N."""
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    q0 = np.array([0.0, -1.2, 1.5, -1.9, -1.57, 0.0])
    for cutoff in (0.0, 10.0):
        sim = Simulator(ur3, BridgeConfig(mode="lockstep", command_timeout=0.0, ft_sensor=True,
                                          integrator="implicitfast", ft_force_noise=1.0,
                                          ft_cutoff=cutoff, initial_positions=tuple(q0)), log=_quiet)
        xs: list = []
        _hold(sim, q0, 3300, record=xs)
        xs = xs[300:]
        a = 1.0 if cutoff == 0 else 0.001 / (0.001 + 1.0 / (2 * np.pi * cutoff))
        spread = np.std(np.array(xs), axis=0)
        assert np.allclose(spread, np.sqrt(a / (2.0 - a)), rtol=0.15), (cutoff, spread)


@pytest.mark.parametrize("scene", ["table", "wall"])
def test_placed_surface_is_where_the_probe_touches(ur3, scene) -> None:
    """MuJoCo's own distance between the probe and the placed object: ~0 at the site's
    touching pose, the approach height (8 cm) at the pose above."""
    import mujoco

    from rbd_ros.sim.simulator import BridgeConfig, Simulator
    from rbd_ros.urdf import load_model
    from rbd_ros.util.resources import bundled_urdf

    model = ur3 if scene == "table" else load_model(str(bundled_urdf("puma560")))
    sim = Simulator(model, BridgeConfig(mode="lockstep", scene=scene), log=_quiet)
    m, d = sim.mj_model, sim.mj_data
    tip = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "tip")
    obj = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, f"scene_{scene}")
    fromto = np.zeros(6)
    for q, gap in ((sim.site.q_touch, 0.0), (sim.site.q_above, sim.site.approach)):
        d.qpos[sim.qpos_adr] = q
        mujoco.mj_forward(m, d)
        dist = mujoco.mj_geomDistance(m, d, tip, obj, 1.0, fromto)
        assert abs(dist - gap) < 1e-4, (scene, dist, gap)
