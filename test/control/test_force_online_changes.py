"""Issue 41.4 (ros2_controllers issue 1178): stiffness, damping, target wrench and gains of a
running force law changed during contact change the commanded torque and the contact force
without a step.  The press closed loop (``run_press``, MuJoCo's contact force the oracle) on
the human model's right arm from its clavicle (named by no other test of the force laws):
each change at its own time in the slide, the largest one-cycle change of the torque and of
the force in the 0.3 s after it against the same run without the change.  Stepped at once
(``RAMP_TIME`` 0: the code before), impedance's stiffness x1.5 steps the spring's force by
5 N and the torque with it."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow

T0 = 2.9  # s, the first change (the slide runs 2.5-5.5 s)
GAP = 0.45  # s between changes

CHANGES = {  # law -> [(what, change(law))]: the gains scaled, the target 10 -> 13 N
    "impedance": [("stiffness", lambda law: law.set_gains(stiffness=1.5 * law.gains["stiffness"])),
                  ("damping", lambda law: law.set_gains(damping=2.0 * law.gains["damping"])),
                  ("target", lambda law: law.set_target_wrench(1.3 * law.wrench_target))],
    "hybrid_force_position": [
        ("target", lambda law: law.set_target_wrench(1.3 * law.wrench_target)),
        ("force_p", lambda law: law.set_gains(force_p=2.0 * law.gains["force_p"])),
        ("force_i", lambda law: law.set_gains(force_i=2.0 * law.gains["force_i"])),
        ("kp, kd", lambda law: law.set_gains(kp=1.5 * law.gains["kp"], kd=1.5 * law.gains["kd"])),
        ("force_damping", lambda law: law.set_gains(force_damping=2.0 * law.gains["force_damping"]))],
    "admittance": [("target", lambda law: law.set_target_wrench(1.3 * law.wrench_target)),
                   ("damping", lambda law: law.set_gains(damping=2.0 * law.gains["damping"])),
                   ("mass", lambda law: law.set_gains(mass=2.0 * law.gains["mass"])),
                   ("force_i", lambda law: law.set_gains(force_i=2.0 * law.gains["force_i"]))],
}


@pytest.fixture(scope="module")
def arm():
    from rbd_ros.urdf import load_model

    path = example_robot_urdf("human_description/robots/human.urdf")
    return load_model(str(path), base_link="right_clavicle", tip_link="right_hand")


def _run(arm, law_name: str, changes):
    from rbd_ros.sim.contact_task import run_press

    taus, times, done = [], [], set()

    def hook(t: float, law) -> None:
        taus.append(law.tau.copy())  # the last cycle's command
        times.append(t)
        for i, (_, change) in enumerate(changes):
            if i not in done and t >= T0 + i * GAP:
                done.add(i)
                change(law)

    r = run_press(arm, law_name, 10.0, hook=hook)
    tau = np.array(taus[1:] + [taus[-1]])  # aligned: tau[k] computed at times[k]
    return r, np.asarray(times), tau


@pytest.mark.parametrize("law_name", list(CHANGES))
def test_online_changes_in_contact_do_not_bump(arm, law_name: str) -> None:
    base, t, tau0 = _run(arm, law_name, [])
    r, _, tau1 = _run(arm, law_name, CHANGES[law_name])
    assert r.contact_lost == 0 and r.unstable_steps == 0, r.report()
    for i, (what, _) in enumerate(CHANGES[law_name]):
        w = (t >= T0 + i * GAP - 0.002) & (t < T0 + i * GAP + 0.3)
        df = np.abs(np.diff(r.series["f_n"][w])).max()
        df0 = np.abs(np.diff(base.series["f_n"][w])).max()
        dtau = np.abs(np.diff(tau1[w], axis=0)).max()
        dtau0 = np.abs(np.diff(tau0[w], axis=0)).max()
        assert df < 1.0 and df < df0 + 0.5, (what, df, df0)  # N per cycle
        assert dtau < dtau0 + 1.0, (what, dtau, dtau0)  # N m per cycle
    # the changes took effect: the target 13 N at the end of the slide (not impedance's
    # spring, whose force the stiffness and the target set together)
    end = (t > 5.0) & (t < 5.3)
    if law_name != "impedance":
        assert abs(r.series["f_n"][end].mean() - 13.0) < 0.5
