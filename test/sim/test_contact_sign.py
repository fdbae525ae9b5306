"""The probe's contact force, the F/T sensor's reset and the scene's contact softness check
(issue 45, survivor group 5), against MuJoCo and physics:

* ``probe_contact`` gives the force the probe exerts on the scene: a free sphere named ``tip``
  of known mass resting under gravity presses ``(0, 0, -m g)`` into its support, whichever
  geom of MuJoCo's contact pair it is -- on a plane (MuJoCo puts the plane first: the probe
  is ``geom2``), on a box (a sphere sorts before a box: ``geom1``), on a fixed body's sphere
  declared after it or before it (``geom1``, ``geom2``: same types sort by id); and
  ``(0, 0, +m g)`` when the probe is the support of a resting ball (the force on the scene from the probe points up);
* ``FTSensor.reset()`` re-seeds the noise: a noisy sensor read through a run, a reset, and the
  same run again gives the same readings bit for bit (a simulation reset is reproducible);
* a scene object's ``solimp`` ``[d0, d1, ...]`` is refused unless ``0 < d0 <= d1 < 1``
  (MuJoCo's impedance rises from ``d0`` to ``d1``), naming the object.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")

M_BALL = 0.7  # kg
G = 9.81

SUPPORTS = {  # the scene's support, the probe's geom ('tip') and which of the pair it becomes
    "plane": ('<geom name="floor" type="plane" size="1 1 0.1"/>', "geom2"),
    "box": ('<geom name="floor" type="box" size="0.5 0.5 0.05" pos="0 0 -0.05"/>', "geom1"),
    # a fixed body's sphere: after the ball's body it has the larger geom id, before it the smaller
    "sphere-after": ('<body name="rock" pos="0 0 -0.3"><geom name="floor" type="sphere" size="0.3"/></body>', "geom1"),
    "sphere-before": ('<body name="rock" pos="0 0 -0.3"><geom name="floor" type="sphere" size="0.3"/></body>', "geom2"),
}


def _scene(support: str, probe_is_ball: bool = True) -> str:
    floor, _ = SUPPORTS[support]
    ball = (f'<body name="ball" pos="0 0 0.0505"><freejoint/>'
            f'<geom name="{"tip" if probe_is_ball else "ball"}" type="sphere" size="0.05" mass="{M_BALL}"/></body>')
    world = (ball + floor) if support != "sphere-before" else (floor + ball)
    if not probe_is_ball:
        world = world.replace('name="floor"', 'name="tip"')
    return (f'<mujoco><option timestep="0.001" gravity="0 0 -{G}"/><worldbody>{world}</worldbody>'
            f'</mujoco>')


def _settle(xml: str):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for _ in range(1500):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    return SimpleNamespace(mj_model=m, mj_data=d)


@pytest.mark.parametrize("support", list(SUPPORTS))
def test_probe_force_on_the_scene_is_its_weight_down(support) -> None:
    from rbd_ros.sim.contact_task import probe_contact

    sim = _settle(_scene(support))
    tip = mujoco.mj_name2id(sim.mj_model, mujoco.mjtObj.mjOBJ_GEOM, "tip")
    pairs = [(c.geom1, c.geom2) for c in sim.mj_data.contact[:sim.mj_data.ncon]]
    assert pairs and all(tip in p for p in pairs)
    which = "geom1" if pairs[0][0] == tip else "geom2"
    assert which == SUPPORTS[support][1], (support, pairs)  # both orders covered
    out = np.full(3, 9.0)
    assert probe_contact(sim, tip, out)
    assert np.allclose(out, [0.0, 0.0, -M_BALL * G], atol=0.01 * M_BALL * G), (support, which, out)


@pytest.mark.parametrize("support", ["plane", "box"])
def test_probe_as_the_support_is_pushed_down_so_pushes_up(support) -> None:
    from rbd_ros.sim.contact_task import probe_contact

    sim = _settle(_scene(support, probe_is_ball=False))
    tip = mujoco.mj_name2id(sim.mj_model, mujoco.mjtObj.mjOBJ_GEOM, "tip")
    out = np.zeros(3)
    assert probe_contact(sim, tip, out)
    assert np.allclose(out, [0.0, 0.0, M_BALL * G], atol=0.01 * M_BALL * G), (support, out)


def test_no_contact_is_zero_and_false() -> None:
    from rbd_ros.sim.contact_task import probe_contact

    xml = _scene("plane").replace('pos="0 0 0.0505"', 'pos="0 0 0.5"')
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    out = np.full(3, 5.0)
    assert not probe_contact(SimpleNamespace(mj_model=m, mj_data=d),
                             mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "tip"), out)
    assert np.all(out == 0.0)


def test_a_contact_that_pushes_nothing_is_no_touch() -> None:
    """A ball 0.1 mm into the plane but leaving it at 2 m/s: MuJoCo lists the contact (with its
    constraint rows) and its solver gives it no force: not touching, nothing summed."""
    from rbd_ros.sim.contact_task import probe_contact

    m = mujoco.MjModel.from_xml_string(_scene("plane").replace('pos="0 0 0.0505"', 'pos="0 0 0.0499"'))
    d = mujoco.MjData(m)
    d.qvel[2] = 2.0
    mujoco.mj_forward(m, d)
    assert d.ncon == 1 and d.contact[0].efc_address >= 0 and d.contact[0].dist < 0
    out = np.full(3, 5.0)
    assert not probe_contact(SimpleNamespace(mj_model=m, mj_data=d),
                             mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "tip"), out)
    assert np.all(out == 0.0)


def _arm7():
    from rbd_ros.model import MdhModel
    from rbd_ros.util.resources import config_file

    return MdhModel.from_yaml(str(config_file("arm7")))


def test_ft_low_pass_starts_at_the_first_reading() -> None:
    """``y += a (x - y)`` from ``y = x`` at the first reading (after a reset too), not from 0: the
    first ``raw`` is MuJoCo's own force/torque sensor reading, unscaled."""
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    model = _arm7()
    sim = Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0, ft_sensor=True, ft_cutoff=5.0),
                    log=lambda *a: None)
    m = sim.mj_model
    adr = [int(m.sensor_adr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, name)])
           for name in ("ft_force", "ft_torque")]
    for _ in range(2):
        sim.command(np.zeros(model.dof))
        sim.step()
        mine = np.concatenate([sim.mj_data.sensordata[adr[0]:adr[0] + 3], sim.mj_data.sensordata[adr[1]:adr[1] + 3]])
        assert np.abs(mine).max() > 0.1  # the payload's weight
        assert np.allclose(sim.ft.raw, mine, rtol=1e-12, atol=1e-12), (sim.ft.raw, mine)
        sim.reset(keep_time=False)


def test_ft_sensor_reset_reseeds_its_noise() -> None:
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    model = _arm7()
    cfg = BridgeConfig(mode="lockstep", command_timeout=0.0, ft_sensor=True, ft_force_noise=0.5,
                       ft_torque_noise=0.05, ft_cutoff=50.0)
    sim = Simulator(model, cfg, log=lambda *a: None)

    def run() -> np.ndarray:
        rows = []
        for _ in range(40):
            sim.command(np.zeros(model.dof))
            sim.step()
            rows.append(np.concatenate([sim.ft.raw, sim.ft.wrench]))
        return np.array(rows)

    first = run()
    sim.reset(keep_time=False)
    again = run()
    assert np.std(first[:, :3]) > 0.01  # the noise is there (0.5 N, filtered at 50 Hz)
    assert np.array_equal(first, again), np.abs(first - again).max()
    sim.reset(keep_time=False)
    sim.ft.reset()  # twice: the same seed, not a new one
    assert np.array_equal(run(), first)


def _table(**fields) -> dict:
    return {"name": "t", "objects": [{"name": "slab", "type": "box", "size": [0.5, 0.5, 0.04], **fields}]}


@pytest.mark.parametrize("solimp, ok", [
    ([0.5, 0.6, 0.001, 0.5, 2.0], True), ([0.6, 0.6, 0.001, 0.5, 2.0], True),  # d0 = d1: constant
    ([0.7, 0.6, 0.001, 0.5, 2.0], False), ([0.95, 0.1, 0.001, 0.5, 2.0], False),  # d0 > d1
    ([0.0, 0.6, 0.001, 0.5, 2.0], False), ([0.5, 1.0, 0.001, 0.5, 2.0], False)])  # out of (0, 1)
def test_scene_solimp_needs_d0_at_most_d1(solimp, ok) -> None:
    from rbd_ros.sim.scene import load_scene

    if ok:
        assert load_scene(_table(solimp=solimp)).objects[0].solimp == tuple(solimp)
        return
    with pytest.raises(ValueError, match=r"object 'slab'.*0 < d0 <= d1 < 1"):
        load_scene(_table(solimp=solimp))


@pytest.mark.parametrize("fields, words", [
    ({"solref": [0.0, 1.0]}, "solref must be"), ({"solref": [0.05, 0.0]}, "solref must be"),
    ({"solref": [0.05, -1.0]}, "solref must be"), ({"stiffness": 0.0}, "stiffness must be > 0"),
    ({"damping": -1.0}, "damping >= 0"), ({"solimp": [0.5, 0.6, 0.001, 0.5, 2.0], "stiffness": 1e4}, "not both")])
def test_scene_contact_parameters_refused(fields, words) -> None:
    from rbd_ros.sim.scene import load_scene

    with pytest.raises(ValueError, match=words):
        load_scene(_table(**fields))
    ok = {k: v for k, v in fields.items() if k != "stiffness"} if "not both" in words else {}
    assert load_scene(_table(**ok)).objects[0].name == "slab"
