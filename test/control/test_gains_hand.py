"""The model-derived joint PD gains by hand (issue 45, survivor 6): ``kd = 2 zeta m w - b`` and
``kp = m w^2`` for a joint whose drive's viscous friction ``b`` is below ``2 zeta m w``, and the
first-order rule (``kd = 0``, ``kp = omega (b - m omega)``) for one it over-damps (003 (6.16):
the plant is ``m s^2 + (b + kd) s + kp``).  ``m = M_jj`` from Pinocchio's CRBA, ``w`` the
bandwidth after the discrete cap ``m_min / (2 zeta m dt)`` (``m_min = 1 / (M^-1)_jj``).

The arm: Alex's left arm from the torso (example-robot-data ``alex_nub_hands``, named by no
other test): 0.05 N m s/rad of viscous friction on every joint (the URDF's ``damping``) and a
wrist of 4e-4 kg m^2, so at 10 Hz its kd is 0.0036, and the friction counts 14 times over; at
5 Hz the gripper joint is over-damped by its friction alone; at 100 Hz the discrete cap bites on
every joint and the effort cap (``kp <= max(limit - |g|, limit / 10) / E_LINEAR``, ``g`` from
Pinocchio) on some."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.control.gains import model_gains
from rbd_ros.model.urdf_export import model_to_urdf
from rbd_ros.urdf import load_model
from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")

ALEX = ("alex_description/urdf/alex_nub_hands.urdf", "Torso", "LeftGripperYawLink")


@pytest.fixture(scope="module")
def alex():
    rel, base, tip = ALEX
    return load_model(str(example_robot_urdf(rel)), base, tip)


@pytest.mark.parametrize("law", ["pd", "pd_gravity", "pid"])
@pytest.mark.parametrize("bandwidth", [10.0, 5.0, 100.0])
def test_joint_gains_subtract_the_drive_friction(alex, law, bandwidth) -> None:
    _check(alex, law, bandwidth)


@pytest.mark.parametrize("bandwidth", [10.0, 5.0])
def test_coulomb_friction_raises_kp_toward_its_dead_band(alex, bandwidth) -> None:
    """Coulomb friction ``c`` (003 (6.16)) leaves a dead band ``c / kp``: ``kp`` is raised toward
    ``c / E_FRICTION`` (``w2 = sqrt(kp_f / m)`` within the discrete cap, and kd with it:
    ``kd = 2 zeta m w2 - b``); an over-damped joint's first-order kp likewise."""
    c = np.array([0.0, 0.5, 0.0, 0.2, 0.0, 0.05, 0.01])
    _check(alex.replace(coulomb=c), "pd", bandwidth)


def _check(m_, law: str, bandwidth: float) -> None:
    from rbd_ros.control.gains import E_FRICTION, E_LINEAR
    n, zeta, rate = m_.dof, 1.0, 1000.0
    dt = 1.0 / rate
    q0 = np.clip(np.full(n, 0.3), m_.lower, m_.upper)
    pm = pin.buildModelFromXML(model_to_urdf(m_))
    M = pin.crba(pm, pm.createData(), q0)
    M = np.triu(M) + np.triu(M, 1).T + np.diag(m_.armature)
    m, m_min = np.diag(M), 1.0 / np.diag(np.linalg.inv(M))
    b, c = np.abs(m_.viscous), np.abs(m_.coulomb)
    assert np.all(b == 0.05)  # the URDF's damping
    omega = 2 * np.pi * bandwidth
    w_cap = np.minimum(m_min / (2 * zeta * m * dt), 2 * zeta / dt)  # the discrete caps
    w = np.minimum(omega, w_cap)
    second = 2 * zeta * m * w > b
    kp_f = c / E_FRICTION  # the stiffness that holds the Coulomb dead band to E_FRICTION
    w2 = np.maximum(w, np.minimum(np.sqrt(kp_f / m), w_cap))
    kd_hand = np.where(second, np.maximum(2 * zeta * m * w2 - b, 0.0), 0.0)
    first = np.maximum(np.maximum(omega * (b - m * omega), m * omega**2), kp_f)
    kp_hand = np.where(second, m * w2**2, np.minimum(first, np.maximum(b / dt, m * w**2)))
    # the effort cap: an error of E_LINEAR must not need more than the effort gravity leaves
    lim = np.abs(m_.effort_limit)
    g = np.abs(pin.computeGeneralizedGravity(pm, pm.createData(), q0))
    kp_max = np.maximum(lim - g, 0.1 * lim) / E_LINEAR
    capped = kp_hand > kp_max
    w_e = np.sqrt(kp_max / m)
    kd_hand = np.where(capped & (kd_hand > 0), np.maximum(2 * zeta * m * w_e - b, 0.0), kd_hand)
    kp_hand = np.where(capped, kp_max, kp_hand)
    gains, notes = model_gains(law, m_, q0, bandwidth=bandwidth, damping_ratio=zeta, rate=rate)
    assert sum("kp capped" in s for s in notes) == capped.sum(), notes
    if bandwidth == 100.0:  # both caps bite: the discrete one on every joint, the effort one on some
        assert np.all(w < omega) and 0 < capped.sum() < n, (w, capped)
    assert np.allclose(gains["kd"], kd_hand, rtol=1e-9, atol=1e-12), (gains["kd"], kd_hand)
    assert np.allclose(gains["kp"], kp_hand, rtol=1e-9, atol=1e-12), (gains["kp"], kp_hand)
    if c.any():
        assert np.any(w2 > w * 1.01)  # the dead band decides some joints' gains
    elif bandwidth == 10.0:
        assert not capped.any()
        assert second.all() and kd_hand[-1] < 0.1 * b[-1]  # the friction is most of the damping
    elif bandwidth == 5.0:
        assert not second[-1] and gains["kd"][-1] == 0.0  # over-damped: first order
