"""Issue 41.5 on the arms of ``test_contact_site_mounts``: the press (``run_press``, 10 N, a
0.1 m slide, measured over its middle 8 cm on MuJoCo's own contact force) held by default with
the hybrid law and impedance on all four, on a table and on a wall (RMS <= 0.2 N, peak under
15 N, no contact lost),
and the causes found there, fixed.

* TIAGo++'s right arm (1 N m of Coulomb friction per joint in its URDF), impedance: the law
  compensated the friction at the sign of the measured joint velocity, which flips by 2 N m
  from cycle to cycle on a joint that barely moves while the probe slides: 1.03 N RMS.  At the
  reference's joint velocity (``force_laws.Impedance``): 0.11 N, as with no friction at all.
* PR2's left arm with its torso on a wall, hybrid: the site's touching poses pressed within
  the effort limits, but holding the arm above the table needed 43.8 N m at the shoulder pan
  (limit 30), so the press's first target wrench was refused; ``contact_site`` now checks
  every pose against gravity.
* The hybrid law's impact: coming down at its 5 cm/s bound it hit 1.47-1.87x the set force
  (TALOS 18.7 N, PR2 15.03 N); the guarded approach (``run_press``'s default, ``guarded=False``
  to opt out; ``contact_task.guard_plan``) comes the last centimetre at the speed whose
  kinetic energy over the contact's stiffness stays under 20 % of the force: 1.09-1.18x.
* The hybrid law on the upside-down UR5's wall: 18.73 N at the touch, guarded.  The probe came
  the last centimetre at 0.94 cm/s, held by the ``10 D_f`` braking against the 51 N push its
  force integral had wound at the 5 cm/s bound; that push, dropped to ``m_d`` at the touch,
  jolted the position axes through ``Lambda^-1`` (the probe slid, and MuJoCo's friction cone
  lifted the normal force from 1.3 to 15-18.7 N in one step).  With the integral unwound past
  the bound (``HybridForcePosition``) the push at the touch is 6.5 N: 11.65 N, 0.018 N RMS.
* The hybrid law's slide under dry friction (TALOS, TIAGo++): compensated at the measured
  sign, a wrist joint at rest when the slide starts stays stuck (the sign of MuJoCo's creep)
  and the guarded slide went 0.50 and 0.57 N RMS (3.8 and 7.2 N at worst); at the reference's
  sign until the joint breaks away (``force_laws.HybridForcePosition``) 0.047 and 0.026 N.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from test_contact_site_mounts import ARMS, _model, _pinocchio

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow  # twenty presses of 7 s simulated (~45 s)

FOUR = ["talos_left", "ur5_ceiling", "pr2_left_wall", "tiago_dual_right"]


def _run(name: str, law: str, scene: str = "table", **kw):
    """One press per (arm, law, scene, options) in this module: the tests share them."""
    return _cached(name, law, scene, **kw)


@functools.lru_cache(maxsize=None)
def _cached(name: str, law: str, scene: str, **kw):
    from rbd_ros.sim.contact_task import run_press

    return run_press(_model(name), law, 10.0, scene=scene, urdf=str(example_robot_urdf(ARMS[name][0])), **kw)


def _press(name: str, law: str, **kw):
    return _run(name, law, **kw).report()


def _peak(r) -> float:
    """The largest contact force before the retreat (the impact and the slide), N."""
    t, f = r.series["t"], r.series["f_n"]
    return float(f[t < r.phases["retreat"]].max())


@pytest.mark.parametrize("law", ["hybrid_force_position", "impedance"])
@pytest.mark.parametrize("scene", ["table", "wall"])
@pytest.mark.parametrize("name", FOUR)
def test_ten_newtons_held_by_default_on_the_mounted_arms(name: str, scene: str, law: str) -> None:
    """Issue 41.5 as the user gets it (no option), on each arm's table and wall: measured
    0.001-0.038 N RMS, peaks 10.2-12.3 N (hybrid); 0.081-0.189 N, 9.9-10.2 N (impedance)."""
    r = _run(name, law, scene=scene)
    assert r.force_rms <= 0.2 and r.contact_lost == 0 and r.unstable_steps == 0, r.report()
    assert _peak(r) < 15.0, r.report()


def test_impedance_compensates_friction_at_the_reference(monkeypatch) -> None:
    from rbd_ros.control.force_laws import Impedance

    rep = _press("tiago_dual_right", "impedance")
    assert rep["force_error_rms_N"] < 0.2 and rep["contact_lost_cycles"] == 0, rep
    assert rep["impact_peak_ratio"] < 1.5, rep
    monkeypatch.setattr(Impedance, "coulomb_band", 0.0)  # at the measured velocity's sign
    before = _cached.__wrapped__("tiago_dual_right", "impedance", "table").report()
    assert before["force_error_rms_N"] > 0.5, before


def test_the_hybrid_slide_breaks_stuck_joints_away_at_the_reference(monkeypatch) -> None:
    """TALOS's guarded slide (the default): the hybrid law's Coulomb compensation at the
    reference's sign until a joint breaks away holds it (above); at the measured sign
    (``coulomb_band`` 0, the code before) and without the measured wrench fed forward along
    the position axes (``feed_measured``, issue 41.5's last fix) three wrist joints stuck for a
    quarter of the slide while the others made the motion in the null space: 0.50 N RMS, 3.8 N
    at worst.  With the wrench fed forward the measured sign holds it too (0.004 N)."""
    from rbd_ros.control.force_laws import HybridForcePosition

    monkeypatch.setattr(HybridForcePosition, "coulomb_band", 0.0)
    monkeypatch.setattr(HybridForcePosition, "feed_measured", False)
    before = _cached.__wrapped__("talos_left", "hybrid_force_position", "table")
    assert before.force_rms > 0.3 and before.force_max > 2.0, before.report()


def test_the_wall_mounted_arm_holds_itself_above_its_site_and_presses() -> None:
    from rbd_ros.sim.contact_site import contact_site

    model = _model("pr2_left_wall")
    site = contact_site(model, "top", force=10.0)
    for q in (site.q_above, site.q_touch):  # Pinocchio's gravity, within the URDF's limits
        tau = _pinocchio("pr2_left_wall", model, q, np.zeros(3), np.zeros(3))[3]
        assert (np.abs(tau) <= model.effort_limit).all(), tau
    rep = _press("pr2_left_wall", "hybrid_force_position")  # guarded: 1.10x
    assert rep["impact_peak_ratio"] < 1.3, rep
    assert rep["force_error_rms_N"] < 0.2 and rep["contact_lost_cycles"] == 0, rep
    unguarded = _press("pr2_left_wall", "hybrid_force_position", guarded=False)
    assert unguarded["impact_peak_ratio"] > 1.4, unguarded  # 15.03 N, over the 15 N
    assert unguarded["force_error_rms_N"] < 0.2 and unguarded["contact_lost_cycles"] == 0, unguarded


def test_the_guarded_approach_bounds_the_hybrid_impact() -> None:
    """The UR5 upside down (4.8 kg along the normal, the heaviest of the four), hybrid, guarded
    by default: the peak at first contact on MuJoCo's contact force under the issue's 15 N
    (measured 10.9 N), the slide still held, the approach 0.67 s longer (the phases);
    unguarded (at the 5 cm/s bound to the surface) it peaks at 15.0 N."""
    rep = _press("ur5_ceiling", "hybrid_force_position")
    assert rep["impact_peak_ratio"] < 1.3, rep
    assert rep["force_error_rms_N"] < 0.05 and rep["contact_lost_cycles"] == 0, rep
    assert 0.3 < rep["phases_s"]["press"] - rep["phases_s"]["approach"] - 1.5 < 1.0, rep
    unguarded = _press("ur5_ceiling", "hybrid_force_position", guarded=False)
    assert unguarded["impact_peak_ratio"] > 1.4, unguarded
    assert unguarded["phases_s"]["press"] - unguarded["phases_s"]["approach"] == pytest.approx(1.5)
