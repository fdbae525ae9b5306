"""Issue 41.5: 10 N held over the slide (0.1 m; its middle 8 cm measured) on arms no other
press test names, the URDFs' collision meshes touching the table, ROS-free ``run_press``:
force error RMS <= 0.2 N, peak under 15 N, no contact lost, no link but the probe touching.
MuJoCo's own contact force is the oracle.  The human arm hangs from its clavicle (no table
site before issue 41.1); TIAGo Pro's wrist meshes lay on the table before (every cycle
lost); the Centauro's hybrid peaked at 15.1 N before its approach was guarded by default
(issue 41.5: 10.8 N).  Not here, measured and failing (``docs/guides/force-control.md``): the
G1's hybrid (0.11 N, but its upper arm touches the table), Alex (its upper arm on the table)."""
from __future__ import annotations

import numpy as np
import pytest

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow

ARMS = {  # URDF, base link, tip link
    "human": ("human_description/robots/human.urdf", "right_clavicle", "right_hand"),
    "centauro": ("centauro_description/urdf/centauro.urdf", "torso_2", "arm1_8"),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", "torso_link", "left_wrist_yaw_link"),
    "tiago_pro": ("tiago_pro_description/robots/tiago_pro.urdf", "torso_lift_link", "arm_left_7_link"),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", None, None),
}
CASES = [("human", "hybrid_force_position"), ("human", "impedance"),
         ("centauro", "hybrid_force_position"), ("centauro", "impedance"),
         ("g1", "impedance"), ("tiago_pro", "hybrid_force_position"), ("tiago_pro", "impedance")]


@pytest.mark.parametrize("name,law", CASES)
def test_ten_newtons_held_on_arms_no_test_names(name: str, law: str) -> None:
    from rbd_ros.sim.contact_task import run_press
    from rbd_ros.urdf import load_model

    path, base, tip = ARMS[name]
    urdf = str(example_robot_urdf(path))
    r = run_press(load_model(urdf, base_link=base, tip_link=tip), law, 10.0, urdf=urdf)
    t, f = r.series["t"], r.series["f_n"]
    assert r.force_rms <= 0.2, r.report()
    assert f[t < r.phases["retreat"]].max() < 15.0, r.report()  # the impact and the slide
    assert r.contact_lost == 0 and r.unstable_steps == 0, r.report()
    assert not [n for n in r.notes if "touched the arm besides the probe" in n], r.notes
    assert np.isclose(r.force, 10.0)


@pytest.mark.parametrize("name,scene", [("tiago_pro", "wall"), ("xarm7", "wall"), ("xarm7", "table")])
def test_the_contact_drives_no_redundant_arms_null_space(name: str, scene: str) -> None:
    """Issue 41.5 on the 7-joint arms whose hybrid presses the probe's sliding friction (2 N
    along the slide) spoilt through the null space, which the law only damps (``k_null q'``):
    ``N M^-1 J^T f_t`` 17-20 rad/s^2 on the xArm 7, self-motion at ~0.15 rad/s, joints turning
    back against the reference and sticking.  Measured before the measured wrench was fed
    forward along the position axes (``HybridForcePosition.feed_measured``) and a joint's
    break-away counted only the reference's way: TIAGo Pro's wall 0.217 N RMS (1.9 N at worst),
    the xArm 7's wall 0.420 N (1.9 N), its table peak 15.8 N; now 0.006 N, 0.002 N, 14.1 N."""
    from rbd_ros.sim.contact_task import run_press
    from rbd_ros.urdf import load_model

    path, base, tip = ARMS[name]
    urdf = str(example_robot_urdf(path))
    r = run_press(load_model(urdf, base_link=base, tip_link=tip), "hybrid_force_position", 10.0,
                  scene=scene, urdf=urdf)
    t, f = r.series["t"], r.series["f_n"]
    assert r.force_rms <= 0.2 and r.force_max < 0.5, r.report()
    assert f[t < r.phases["retreat"]].max() < 15.0, r.report()
    assert r.contact_lost == 0 and r.unstable_steps == 0, r.report()
