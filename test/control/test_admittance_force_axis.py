"""The admittance's force axis (issue 30): its outer loop ``M_a x'' + D_a x' = m_d - m (+ k_i
int (m_d - m) dt until a contact is felt)`` (``force_laws._admittance_terms``) run alone on
one axis against a spring surface (``m = k d`` once the reference is ``d`` deep; the inner
loop taken as exact, the tool at ``x_c``), with the model's rule for the gains: ``M_a =
Lambda``, ``D_a = 2 Lambda omega``, ``k_i = omega / 2``.  Oracles: the velocity bound, the set
force, the closed-form free-space speed ``m_d / D_a`` and the plain admittance's settling
``exp(-k t / D_a)`` in contact."""
from __future__ import annotations

import math

import numpy as np
import pytest

OMEGA, DT, VLIM, PRESS = 2 * math.pi * 10.0, 1e-3, 0.05, -10.0  # pressing down: f_z = -10


def _run(lam: float, k_env: float, ki: float, seconds: float, gap: float = 0.02,
         drop: float = math.inf):
    """The z axis of the outer loop, from ``gap`` m above a surface of stiffness ``k_env``
    (which drops by ``gap`` at the time ``drop``); returns time, the reference's speed and
    the force on the surface (positive: pressed)."""
    from rbd_ros.control.force_laws import _admittance_terms

    z6 = np.zeros(6)
    mass, D, K = z6.copy(), z6.copy(), z6.copy()
    mass[2], D[2] = lam, 2.0 * lam * OMEGA
    fi, vlim, md = np.full(6, ki), np.full(6, VLIM), z6.copy()
    md[2] = PRESS
    x, xv, xa, integ, touch, acc, force, m = (np.zeros(6) for _ in range(8))
    kp, kd = np.full(6, OMEGA**2), np.full(6, 2 * OMEGA)
    n = int(seconds / DT)
    out = np.zeros((n, 3))
    for i in range(n):
        depth = -gap * (1 + (i * DT >= drop)) - x[2]  # the reference (= the tool) below it
        m[2] = -k_env * depth if depth > 0.0 else 0.0  # the tool pushes down on it
        _admittance_terms(z6, z6, xv, z6, mass, D, K, kp, kd, fi, vlim, md, m, DT, x, xv, xa,
                          integ, touch, acc, force)
        out[i] = (i * DT, xv[2], -m[2])
    return out


@pytest.mark.parametrize("lam", [0.45, 7.8])  # the xArm 7's and the joint-limited UR5's design
def test_free_space_reaches_the_bound_whatever_the_inertia(lam) -> None:
    """Without the integral the reference comes down at ``m_d / D_a`` (1.0 cm/s for 7.8 kg:
    the UR5 never reached the table); with it, at the velocity bound on both arms."""
    slow = _run(lam, 1e4, 0.0, 1.0, gap=1.0)
    v_free = abs(PRESS) / (2.0 * lam * OMEGA)
    assert abs(slow[-1, 1]) == pytest.approx(min(v_free, VLIM), rel=1e-3)
    fast = _run(lam, 1e4, OMEGA / 2.0, 1.0, gap=1.0)
    assert fast[-1, 1] == pytest.approx(-VLIM, rel=1e-12)
    assert np.all(np.abs(fast[:, 1]) <= VLIM + 1e-15)


@pytest.mark.parametrize("k_env", [3e3, 1e4, 1e5])
@pytest.mark.parametrize("lam", [0.45, 7.8])
def test_the_press_settles_at_the_set_force_on_any_surface(lam, k_env) -> None:
    """Come down at the bound, then the force goes to the set 10 N for a soft and a stiff
    surface, light and heavy arm, without overshooting 2x on the scene's pad."""
    from rbd_ros.sim.scene import DEFAULT_STIFFNESS

    r = _run(lam, k_env, OMEGA / 2.0, 3.0)
    touched = np.flatnonzero(r[:, 2] > 0.0)[0] * DT
    assert touched < 0.02 / VLIM + 0.15  # came down at the bound (0.4 s) after the ramp-up
    tail = r[r[:, 0] > r[-1, 0] - 0.5, 2]
    assert np.all(np.abs(tail - abs(PRESS)) < 0.01 * abs(PRESS))
    if k_env <= DEFAULT_STIFFNESS:  # the impact bound, on the scene's pad; stiffer,
        assert r[:, 2].max() < 2.0 * abs(PRESS)  # v_lim sqrt(k M_a) grows past it (26 N)


def test_in_contact_it_is_the_plain_admittance() -> None:
    """Felt, the integral is off: the heavy arm on the soft surface settles as the plain
    ``M_a x'' + D_a x' + k x = m_d`` does, its slow root ``~ k / D_a`` (the closed form of
    the overdamped pair), without the swing an integral in contact would add."""
    lam, k_env = 7.8, 3e3
    r = _run(lam, k_env, OMEGA / 2.0, 3.0)
    M, D = lam, 2.0 * lam * OMEGA
    slow = (D - math.sqrt(D * D - 4 * M * k_env)) / (2 * M)  # the slow root, 1/s
    f, t = r[:, 2], r[:, 0]
    i0 = np.flatnonzero(f > 0.5 * abs(PRESS))[0]
    i1 = i0 + int(0.5 / DT)
    rate = math.log((abs(PRESS) - f[i0]) / (abs(PRESS) - f[i1])) / (t[i1] - t[i0])
    assert rate == pytest.approx(slow, rel=0.05)
    assert f.max() < abs(PRESS) * (1 + 1e-9)  # no overshoot: overdamped


def test_a_lost_contact_comes_back_at_the_bound() -> None:
    """The surface drops 2 cm mid-press (a lost contact): the heavy arm's reference comes
    down again at the velocity bound, never past it, and presses the set force on it."""
    r = _run(7.8, 1e4, OMEGA / 2.0, 3.0, drop=1.0)
    gone = (r[:, 0] > 1.2) & (r[:, 0] < 1.35)
    assert np.all(r[gone, 2] == 0.0)
    assert np.all(r[gone, 1] == pytest.approx(-VLIM, rel=1e-12))
    assert np.all(np.abs(r[:, 1]) <= VLIM + 1e-15)
    tail = r[r[:, 0] > 2.5, 2]
    assert np.all(np.abs(tail - abs(PRESS)) < 0.01 * abs(PRESS))
