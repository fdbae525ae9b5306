"""The press task (issue 30 acceptance) on the UR3, named by no other test: approach the
table, press 10 N, slide 0.1 m holding it, retreat; lockstep, ROS-free.  The forces are
MuJoCo's own contact forces (the oracle), not the sensor the law feeds on."""
from __future__ import annotations

import pytest

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ur3():
    from rbd_ros.urdf import load_model

    return load_model(str(example_robot_urdf("ur_description/urdf/ur3_robot.urdf")))


@pytest.mark.parametrize("law", ["hybrid_force_position", "impedance", "admittance"])
def test_press_and_slide_hold_the_force(ur3, law) -> None:
    from rbd_ros.sim.contact_task import run_press

    r = run_press(ur3, law, force=10.0)
    assert r.unstable_steps == 0
    # the acceptance is 5 % of 10 N (0.5 N) over the slide; the UR3 holds 0.02-0.08 N
    # (lockstep MuJoCo: the same on any machine), so a bug costing a few tenths fails here
    assert r.force_rms < 0.2, r.report()
    assert r.impact_peak < 2.0, r.report()
    assert r.contact_lost == 0, r.report()
    assert r.position_max < 0.005, r.report()
    # the F/T sensor and the joint-torque estimate beside MuJoCo's contact force (0.0005 N)
    assert r.sensor_rms < 0.05 and r.estimate_rms < 0.01, r.report()


def test_press_refuses_a_law_without_force_and_a_bad_force(ur3) -> None:
    from rbd_ros.sim.contact_task import run_press

    with pytest.raises(ValueError, match="needs a force law"):
        run_press(ur3, "computed_torque")
    with pytest.raises(ValueError, match="force must be > 0"):
        run_press(ur3, "impedance", force=-1.0)
