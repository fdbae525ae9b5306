"""Kinematics and statics of ``MobileBaseRobot`` (issue 17): ``fk``/``link_poses``, the
whole-body ``jacobian`` (world axes, columns on the base-frame ``v = [v_x, v_y, omega, qd]``),
``potential_energy``, ``coriolis_matrix`` and ``static_torques`` on the bundled ``omni_arm7``
(planar) and ``mobile_arm7`` (diff drive), against Pinocchio's planar-root model
(``test_mobile_base_robot``'s helpers), finite differences of FK, and ``inverse_dynamics``
with a tool wrench."""
from __future__ import annotations

import numpy as np
import pytest
from test_mobile_base_robot import DIFF, OMNI, TOL, _pin_tool_jacobian, pin_q, pin_reduced, states

from core_oracles import rel_err
from rbd_ros import Robot

pin = pytest.importorskip("pinocchio")


@pytest.fixture(scope="module", params=("planar", "diff_drive"))
def robot(request):
    path = OMNI if request.param == "planar" else DIFF
    r = Robot.from_urdf(path, base_type=request.param, tip_link="tool0")
    return (r, *pin_reduced(path, r.model.gravity))


def _se3_log_velocity(T0: np.ndarray, T1: np.ndarray, h: float) -> np.ndarray:
    """``[p-dot; w]`` (world axes) from two poses ``h`` apart (central differences give ``T0``
    at ``-h``, ``T1`` at ``+h``): the rotation's world-axes rate from ``R1 R0^T``."""
    dR = T1[:3, :3] @ T0[:3, :3].T
    angle = np.arccos(np.clip(0.5 * (np.trace(dR) - 1.0), -1.0, 1.0))
    axis = np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
    w = axis * (0.5 * angle / np.sin(angle)) if angle > 1e-12 else 0.5 * axis
    return np.r_[(T1[:3, 3] - T0[:3, 3]) / (2 * h), w / (2 * h)]


def test_fk_and_link_poses_vs_pinocchio(robot) -> None:
    r, pm, pd = robot
    names = [r.model.base_link, *r.model.link_names]
    for q, _, _ in states(r.nv, 81):
        pin.framesForwardKinematics(pm, pd, pin_q(q))
        assert rel_err(r.fk(q), pd.oMf[pm.getFrameId("tool0")].homogeneous) < TOL
        P = r.link_poses(q)
        assert P.shape == (r.dof + 1, 4, 4)
        for k in range(1, r.dof + 1):  # MDH frame k sits at link k's origin (its joint's axis z)
            ref = pd.oMf[pm.getFrameId(names[k])].homogeneous
            assert np.abs(P[k][:3, 3] - ref[:3, 3]).max() < 1e-9
        assert np.abs(r.base_pose(q)[:2, 3] - q[:2]).max() == 0.0


def test_jacobian_vs_pinocchio_and_finite_differences(robot) -> None:
    r, pm, pd = robot
    rolling = r.wheels is not None
    for q, v, _ in states(r.nv, 82, rolling=rolling):
        J = r.jacobian(q)
        assert J.shape == (6, r.nv)
        assert rel_err(J, _pin_tool_jacobian(pm, pd, q)) < TOL
        # the tool's twist from FK along the motion q (+) v t
        h = 1e-6
        twist = _se3_log_velocity(r.fk(r.integrate(q, v, -h)), r.fk(r.integrate(q, v, h)), h)
        assert np.abs(J @ v - twist).max() < 1e-6 * max(1.0, np.abs(twist).max())
        # a link frame: the base-yaw column is e_z x (p - B) and e_z
        J3 = r.jacobian(q, link=3)
        p = r.link_poses(q)[3][:3, 3]
        assert np.allclose(J3[:, 2], [-(p[1] - q[1]), p[0] - q[0], 0, 0, 0, 1], atol=1e-12)
        assert np.abs(J3[:, 3 + 3:]).max() == 0.0  # joints past frame 3 do not move it
    if rolling:
        Ju = r.jacobian(q, speeds=True)
        assert Ju.shape == (6, r.nv - 1)
        assert np.abs(Ju @ np.delete(v, 1) - J @ v).max() < 1e-12
    else:
        with pytest.raises(ValueError, match="speeds=True is for a diff_drive base"):
            r.jacobian(q, speeds=True)
    with pytest.raises(ValueError, match="unknown link 'nope'"):
        r.jacobian(q, link="nope")


def test_potential_energy_vs_pinocchio_also_under_tilted_gravity(robot) -> None:
    r, pm, pd = robot
    for q, _, _ in states(r.nv, 83):
        assert abs(r.potential_energy(q) - pin.computePotentialEnergy(pm, pd, pin_q(q))) < TOL * 1e3
    g = np.array([1.3, -0.7, -9.6])  # a slope: the base position and yaw matter
    rt = Robot(r.model.replace(gravity=g))
    pmt, pdt = pin_reduced(OMNI if r.wheels is None else DIFF, g)
    for q, _, _ in states(r.nv, 84):
        P = rt.potential_energy(q)
        assert abs(P - pin.computePotentialEnergy(pmt, pdt, pin_q(q))) < 1e-9 * max(1.0, abs(P))


def test_coriolis_matrix_factorises_the_bias_and_mdot_minus_2c_is_skew(robot) -> None:
    r, _, _ = robot
    for q, v, _ in states(r.nv, 85, 3, rolling=True):
        c, s = np.cos(q[2]), np.sin(q[2])
        qd = np.r_[c * v[0] - s * v[1], s * v[0] + c * v[1], v[2:]]
        eps = 1e-6
        Md = (r.mass_matrix(q + eps * qd) - r.mass_matrix(q - eps * qd)) / (2 * eps)
        for method in ("kane", "gauss"):
            C = r.coriolis_matrix(q, v, method=method)
            hv = r.bias(q, v) - r.gravity(q)  # the recursive RNEA: an independent route
            assert rel_err(C @ v, hv) < TOL
            S = Md - 2 * C
            assert np.abs(S + S.T).max() < 1e-6 * np.abs(Md).max()
    with pytest.raises(ValueError, match="unknown coriolis_matrix method 'spatial'"):
        r.coriolis_matrix(q, v, method="spatial")


def test_static_torques_are_inverse_dynamics_at_rest_with_the_opposite_tool_wrench(robot) -> None:
    r, pm, pd = robot
    rng = np.random.default_rng(86)
    zero = np.zeros(r.nv)
    for q, _, _ in states(r.nv, 86):
        m = rng.normal(size=6) * 30.0
        for g in (False, True):
            st = r.static_torques(q, m, include_gravity=g)
            ref = r.inverse_dynamics(q, zero, zero, tool_wrench=-m)
            grav = r.inverse_dynamics(q, zero, zero)
            if r.wheels is None:
                assert rel_err(st, ref if g else ref - grav) < TOL
                # Pinocchio: J^T m (+ g)
                pin_ref = _pin_tool_jacobian(pm, pd, q).T @ m
                if g:
                    pin_ref = pin_ref + pin.computeGeneralizedGravity(pm, pd, pin_q(q))
                assert rel_err(st, pin_ref) < TOL
            else:
                want = [ref.wheels, ref.joints, ref.lateral_force] if g else [
                    ref.wheels - grav.wheels, ref.joints - grav.joints, ref.lateral_force - grav.lateral_force]
                assert rel_err(st.wheels, want[0]) < TOL and rel_err(st.joints, want[1]) < TOL
                assert abs(st.lateral_force - want[2]) < TOL * max(1.0, abs(want[2]))
        # frame="tool": the same wrench given in tool axes
        R = r.fk(q)[:3, :3]
        a = r.static_torques(q, np.r_[R.T @ m[:3], R.T @ m[3:]], frame="tool")
        b = r.static_torques(q, m)
        if r.wheels is not None:
            a, b = np.r_[a.wheels, a.joints, a.lateral_force], np.r_[b.wheels, b.joints, b.lateral_force]
        assert rel_err(a, b) < TOL
    with pytest.raises(ValueError, match=r"wrench must have shape \(6,\)"):
        r.static_torques(q, np.zeros(3))
    with pytest.raises(ValueError, match="frame must be 'world' or 'tool'"):
        r.static_torques(q, np.zeros(6), frame="base")


def test_ik_is_refused_with_what_to_do_instead(robot) -> None:
    r, _, _ = robot
    with pytest.raises(NotImplementedError, match=r"ik is not available .*with_base_type\('fixed'\)"):
        r.ik(np.eye(4))
    arm = Robot(r.model.with_base_type("fixed"))  # what the message says works
    q = states(r.nv, 87, 1)[0][0]
    target = r.fk(q)
    local = np.linalg.inv(r.base_pose(q)) @ target
    assert rel_err(arm.fk(q[3:]), local) < TOL


@pytest.mark.parametrize("base", ("planar", "diff_drive"))
def test_tiago_jacobian_and_static_torques_vs_pinocchio(base: str) -> None:
    """A description we never tuned for (TIAGo: a prismatic torso, the arm mounted off-axis and
    rotated): the whole-body tool Jacobian and ``J^T m + g`` against Pinocchio's planar root at
    ``base_footprint`` (world-aligned point Jacobians do not see base_link's height above it);
    the diff drive's wheel torques by ``r (F_x/2 -/+ M_z/s)``, its lateral force ``F_y``."""
    rr = pytest.importorskip("test_mobile_real_robot")  # skips without example-robot-data
    wheels = rr.WHEELS if base == "diff_drive" else {}
    r = Robot.from_urdf(rr.TIAGO, base_type=base, base_link="base_link", tip_link=rr.TIP, **wheels)
    _, pm, pd = rr.pin_tiago(r.model.gravity)
    rng = np.random.default_rng(88)
    for q, _, _ in states(r.nv, 88):
        q[3] = 0.15  # torso within its stroke
        qp = pin_q(q)
        pin.computeJointJacobians(pm, pd, qp)
        pin.updateFramePlacements(pm, pd)
        Jp = pin.getFrameJacobian(pm, pd, pm.getFrameId(rr.TIP), pin.LOCAL_WORLD_ALIGNED)
        assert rel_err(r.jacobian(q), Jp) < TOL
        R_ref = pd.oMf[pm.getFrameId(rr.TIP)].rotation
        assert rel_err(r.fk(q)[:3, :3], R_ref) < TOL
        m = rng.normal(size=6) * 30.0
        f = Jp.T @ m + pin.computeGeneralizedGravity(pm, pd, qp)
        st = r.static_torques(q, m, include_gravity=True)
        if r.wheels is None:
            assert rel_err(st, f) < TOL
        else:
            rad, sep = r.wheels.radius, r.wheels.separation
            assert rel_err(st.wheels, rad * np.array([0.5 * f[0] - f[2] / sep, 0.5 * f[0] + f[2] / sep])) < TOL
            assert rel_err(st.joints, f[3:]) < TOL and abs(st.lateral_force - f[1]) < TOL * np.abs(f).max()
