"""Issue 30's acceptance on arms no other test presses with: the ROS-free press task
(approach, press 10 N, slide 0.1 m, retreat; lockstep) for the hybrid law and for impedance
(stiffness set to give 10 N), measured by MuJoCo's own contact forces (the oracle, not the
sensor the law feeds on): force error RMS over the slide < 0.5 N, impact peak < 2x, no slide
cycle without contact, and the joint-torque estimate within 5 % (0.5 N) of the contact force.

The three arms are the ones that failed before the contact stiffness in N/m, the joint-limit
margin of the contact site and the hybrid law's contact-time integral reset
(``docs/guides/force-control.md``): the joint-limited UR5 (6.2 kg along the table normal:
64 cycles lost), Unitree's Z1 (1-2 N m dry friction per joint: impedance spikes to 25 N) and
the xArm 7 (a site on its joint-2 limit: 4.3x impact, estimate off by 24-70 N; hybrid: a
6-15 N limit cycle, 210 cycles lost, while its force-axis damping was a force from the
model's median inertia, 0.45 kg, instead of an acceleration the arm's own 1.8 kg scales).
The wall: the Kinova Gen2, and the UR10 whose hybrid approach went discretely unstable
under that fixed damping force (0.95 kg along the wall normal, 2.1 kg in the design: 6.2x
impact).  Admittance (not in the issue's acceptance, held to it here) on the xArm 7: with
the model's admittance on the rotations its light wrist broke away in bursts (3.7 N, 2.5x);
the task now holds every axis but the normal.  Every arm touches with its URDF's collision
shapes (meshes; the Kinova's .dae: capsules) and the probe."""
from __future__ import annotations

import pytest

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow

ARMS = {"ur5_joint_limited": "ur_description/urdf/ur5_joint_limited_robot.urdf",
        "z1": "z1_description/urdf/z1.urdf", "xarm7": "xarm_description/urdf/xarm7.urdf",
        "kinova": "kinova_description/robots/kinova.urdf", "ur10": "ur_description/urdf/ur10_robot.urdf"}
CASES = [("ur5_joint_limited", "hybrid_force_position"), ("ur5_joint_limited", "impedance"),
         ("z1", "hybrid_force_position"), ("z1", "impedance"), ("xarm7", "impedance"),
         ("xarm7", "hybrid_force_position"), ("xarm7", "admittance")]

#: (force error RMS, estimate error RMS) bounds, N: about twice what each case measured (issue 45:
#: a mutant was caught at 0.518 N against the 0.5 N acceptance; the cases hold 0.014-0.33 N)
HELD = {("ur5_joint_limited", "hybrid_force_position"): (0.05, 0.01),  # measured 0.014, 0.0001
        ("ur5_joint_limited", "impedance"): (0.3, 0.01),  # 0.141, 0.0001
        ("z1", "hybrid_force_position"): (0.2, 0.15),  # 0.093, 0.070
        # 0.170, 0.44: since impedance compensates the 1-2 N m dry friction at the reference's
        # joint velocity (force_laws.Impedance) the pad's static offset K_n delta stays over the
        # slide (0.076 before: the sign(q') chatter cancelled it mid-slide), and the joint-torque
        # estimate, which takes the friction at sign(q'), is off where a joint sticks (0.015)
        ("z1", "impedance"): (0.3, 0.5),
        ("xarm7", "impedance"): (0.5, 0.5),  # 0.329, 0.273: the acceptance itself
        # 0.011, 0.0008 with the measured wrench fed forward along the position axes (issue
        # 41.5; 0.097, 0.041 before: the probe's sliding friction drove the null space, joint 1
        # turned back against its reference and stuck for 12 % of the guarded slide); 0.030,
        # 0.036 since the force integral unwinds past the bound (the softer touch, 14.1 -> 10.8
        # N): the joints' break-away at the slide's start (the estimate 0.2-0.9 N off for
        # 0.1-0.2 s, as before) now ends inside the measured window, not just before it.  A
        # matter of timing under dry friction: with the press held 0.6-0.9 s (0.7 the default)
        # the code before measured 0.017-0.44 N, now 0.031-0.041 N
        ("xarm7", "hybrid_force_position"): (0.2, 0.08),
        ("xarm7", "admittance"): (0.05, 0.02)}  # 0.019, 0.005


def _model(models, arm):
    from rbd_ros.urdf import load_model

    if arm not in models:
        models[arm] = load_model(str(example_robot_urdf(ARMS[arm])))
    return models[arm]


@pytest.fixture(scope="module")
def models():
    return {}


@pytest.mark.parametrize(("arm", "law"), CASES)
def test_press_acceptance_on_any_arm(models, arm, law) -> None:
    from rbd_ros.sim.contact_task import run_press

    r = run_press(_model(models, arm), law, force=10.0, urdf=str(example_robot_urdf(ARMS[arm])))
    rep = r.report()
    assert r.unstable_steps == 0, rep
    assert r.contact_lost == 0, rep
    assert r.force_rms < 0.5, rep  # 5 % of 10 N over the slide
    assert r.impact_peak < 2.0, rep
    assert r.sensor_rms < 0.05, rep  # the F/T sensor is MuJoCo's contact force
    assert r.estimate_rms < 0.5, rep  # joint torques -> wrench within 5 %
    # and within about twice what each case holds (lockstep: the same on any machine), so a bug
    # costing a few tenths of a newton fails here, not only one that crosses the 0.5 N acceptance
    force_max, estimate_max = HELD[(arm, law)]
    assert r.force_rms < force_max and r.estimate_rms < estimate_max, (force_max, estimate_max, rep)


def test_the_pad_is_as_deep_on_a_heavy_and_a_light_arm() -> None:
    """With the scene's ``stiffness`` (N/m) the pad no longer scales with the arm's effective
    mass along the normal (6.2 kg on the UR5 at its site, 1.1 kg on the Z1; MuJoCo's own
    acceleration-level solref gave them pads 7x apart): pressing 10 N, the probe sinks (MuJoCo's
    contact distance, the oracle) 0.3-1.2 mm (1 mm = 10 N / K; MuJoCo sizes its regulariser
    by its own approximate inertia, ``efc_D``, so not exactly) on both, within 20 % of each other."""
    import mujoco
    import numpy as np

    import rbd_ros.sim.contact_task as ct
    from rbd_ros.sim.contact_task import probe_contact, run_press
    from rbd_ros.sim.scene import DEFAULT_STIFFNESS
    from rbd_ros.urdf import load_model

    depths, orig = [], probe_contact
    for arm in ("ur5_joint_limited", "z1"):
        seen: dict = {}

        def spy(sim, tip, out, seen=seen, orig=orig):
            touching = orig(sim, tip, out)
            d = sim.mj_data
            dist = [d.contact[i].dist for i in range(d.ncon) if tip in (d.contact[i].geom1, d.contact[i].geom2)]
            seen.setdefault("rows", []).append((d.time, float(np.linalg.norm(out)), min(dist) if dist else np.nan))
            return touching

        ct.probe_contact = spy
        try:
            path = str(example_robot_urdf(ARMS[arm]))
            r = run_press(load_model(path), "hybrid_force_position", force=10.0, slide_time=0.5,
                          retreat_time=0.1, urdf=path)
        finally:
            ct.probe_contact = orig
        rows = np.array(seen["rows"])
        steady = (rows[:, 0] > r.phases["press"] + 0.4) & (rows[:, 0] < r.phases["slide"])
        f, depth = rows[steady, 1].mean(), -rows[steady, 2].mean()
        assert mujoco is not None and f == pytest.approx(10.0, rel=0.02), arm
        assert 0.3 * f / DEFAULT_STIFFNESS < depth < 1.2 * f / DEFAULT_STIFFNESS, (arm, depth)
        depths.append(depth)
    assert max(depths) < 1.2 * min(depths), depths


@pytest.mark.parametrize(("arm", "law"), [("kinova", "hybrid_force_position"), ("kinova", "impedance"),
                                         ("ur10", "hybrid_force_position")])
def test_press_against_the_wall(models, arm, law) -> None:
    """The bundled wall (``config/scenes/wall.yaml``): the same task with a horizontal normal
    (force along it, position along the others), on the Kinova Gen2 and the UR10 (no other
    test presses with them), measured by MuJoCo's contact forces."""
    import numpy as np

    from rbd_ros.sim.contact_task import run_press

    r = run_press(_model(models, arm), law, force=10.0, scene="wall",
                  urdf=str(example_robot_urdf(ARMS[arm])))
    rep = r.report()
    assert r.unstable_steps == 0 and r.contact_lost == 0, rep
    assert r.force_rms < 0.5 and r.impact_peak < 2.0, rep
    assert r.estimate_rms < 0.5 and r.position_max < 0.005, rep
    assert np.ptp(r.series["f_n"][r.series["t"] < r.phases["approach"]]) == 0.0  # off the wall first
