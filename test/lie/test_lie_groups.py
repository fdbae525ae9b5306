"""rbd_ros.lie group operations: closed forms against series / matrix functions, 004's
ad-tilde identities, and rotation conversions against Pinocchio (an independent oracle)."""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg as sl

from rbd_ros.lie import se2, se3, so3, xz

GROUPS = [so3, se2, se3, xz]
SCALES = [2.5, 1.0, 1e-2, 1e-5, 1e-10]


def _series(A: np.ndarray, coeff) -> np.ndarray:
    return sum(coeff(k) * np.linalg.matrix_power(A, k) for k in range(60))


@pytest.mark.parametrize("g", GROUPS, ids=lambda g: g.name)
@pytest.mark.parametrize("scale", SCALES)
def test_closed_forms_match_series_and_expm(g, scale) -> None:
    rng = np.random.default_rng(7)
    for _ in range(5):
        V = scale * rng.normal(size=g.dim)
        A = g.ad(V)
        D = _series(A, lambda k: 1.0 / math.factorial(k + 1))  # sum ad^k/(k+1)!
        np.testing.assert_allclose(g.dexp(V), D, atol=1e-14)
        if np.linalg.norm((g.H @ V)[3:]) < np.pi:  # dexp_inv is singular at 2 pi
            np.testing.assert_allclose(g.dexp_inv(V) @ D, np.eye(g.dim), atol=1e-13 * (1 + V @ V))
        np.testing.assert_allclose(g.exp(V), sl.expm(g.hat(V)), atol=1e-14)
        np.testing.assert_allclose(g.exp(g.log(g.exp(V))), g.exp(V), atol=1e-13)
        if np.linalg.norm((g.H @ V)[3:]) < np.pi:  # log's branch: rotation angle in [0, pi]
            np.testing.assert_allclose(g.log(g.exp(V)), V, atol=1e-13 * max(1.0, scale))
        np.testing.assert_allclose(g.vee(g.hat(V)), V, atol=0)
        # ad as the bracket of hat matrices, through the SE(3) embedding H
        X = rng.normal(size=g.dim)
        np.testing.assert_allclose(g.hat(A @ X), g.hat(V) @ g.hat(X) - g.hat(X) @ g.hat(V), atol=1e-13)
        np.testing.assert_allclose(g.H @ (A @ X), se3.ad(g.H @ V) @ (g.H @ X), atol=1e-13)


@pytest.mark.parametrize("g", GROUPS, ids=lambda g: g.name)
def test_ad_tilde_identity_and_skew(g) -> None:
    """004 (75), (84), (95), (107)-(108): ad~_p v = -ad_v^T p, ad~_p skew."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        p, v = rng.normal(size=g.dim), rng.normal(size=g.dim)
        np.testing.assert_allclose(g.ad_tilde(p) @ v, -g.ad(v).T @ p, atol=1e-14)
        np.testing.assert_allclose(g.ad_tilde(p), -g.ad_tilde(p).T, atol=0)


def test_s_phi_is_dexp_minus_phi_by_finite_differences() -> None:
    """004 (64): v = S(phi) phi-dot for SO(3) exponential coordinates, S(phi) = dexp(-phi)."""
    rng = np.random.default_rng(1)
    phi, phid = rng.normal(size=3), rng.normal(size=3)
    h = 1e-6
    Rd = (so3.exp(phi + h * phid) - so3.exp(phi - h * phid)) / (2 * h)
    w = so3.vee(so3.exp(phi).T @ Rd)
    np.testing.assert_allclose(so3.dexp(-phi) @ phid, w, atol=1e-8)


def test_series_inverse_kernel_matches_closed_form() -> None:
    """The hot-loop Bernoulli series S(phi)^{-1} x (se3.dexp_inv_series_into) == dexp_inv(-phi) x."""
    rng = np.random.default_rng(2)
    out, t1, t2 = np.empty(6), np.empty(6), np.empty(6)
    for s in (1e-3, 1e-2, 0.1):
        phi, x = s * rng.normal(size=6), rng.normal(size=6)
        se3.dexp_inv_series_into(phi, x, out, t1, t2)
        np.testing.assert_allclose(out, se3.dexp_inv(-phi) @ x, atol=1e-15)


# ---- against Pinocchio --------------------------------------------------------------------------
def test_so3_and_se3_against_pinocchio() -> None:
    rng = np.random.default_rng(11)
    for k in range(50):
        w = rng.normal(size=3) * (np.pi - 1e-3 if k % 5 == 0 else rng.uniform(0, 3))
        if k % 5 == 0:
            w = w / np.linalg.norm(w) * (np.pi - 1e-3)  # close to pi
        R = so3.exp(w)
        np.testing.assert_allclose(R, pin.exp3(w), atol=1e-14)
        np.testing.assert_allclose(so3.log(R), pin.log3(R), atol=1e-10)
        V = rng.normal(size=6)
        T = se3.exp(V)
        np.testing.assert_allclose(T, pin.exp6(pin.Motion(V)).homogeneous, atol=1e-13)
        np.testing.assert_allclose(se3.log(T), pin.log6(pin.SE3(T)).vector, atol=1e-10)


def test_quaternions_against_pinocchio() -> None:
    rng = np.random.default_rng(5)
    cases = [so3.exp(rng.normal(size=3)) for _ in range(40)]
    cases += [so3.axis_rotation(a, np.pi) for a in np.eye(3)]  # each branch of Shepperd's method
    cases += [np.eye(3), so3.rpy_matrix([0.3, np.pi / 2, -0.2])]
    for R in cases:
        q = so3.rotation_to_quaternion(R)
        pq = pin.Quaternion(R).coeffs()  # (x, y, z, w)
        pq = pq if pq[3] >= 0 else -pq
        np.testing.assert_allclose(q, pq, atol=1e-14)
        np.testing.assert_allclose(so3.quaternion_to_rotation(q), R, atol=1e-14)
        np.testing.assert_allclose(so3.quaternion_to_rotation(q), pin.Quaternion(*np.roll(q, 1)).matrix(),
                                   atol=1e-14)  # pin.Quaternion(w, x, y, z)
    with pytest.raises(ValueError, match="zero or non-finite norm"):
        so3.quaternion_to_rotation([0, 0, 0, 0])


def test_rpy_against_pinocchio_and_gimbal_lock() -> None:
    """One roll-pitch-yaw convention (URDF, Rz Ry Rx); at gimbal lock yaw = 0, all in roll."""
    rng = np.random.default_rng(9)
    for _ in range(30):
        rpy = rng.uniform([-np.pi, -np.pi / 2, -np.pi], [np.pi, np.pi / 2, np.pi])
        R = so3.rpy_matrix(rpy)
        np.testing.assert_allclose(R, pin.rpy.rpyToMatrix(*rpy), atol=1e-14)
        np.testing.assert_allclose(so3.to_rpy(R), rpy, atol=1e-10)
    for pitch in (np.pi / 2, -np.pi / 2):
        for roll, yaw in ((0.3, 0.0), (0.3, 0.7), (-2.0, 1.1)):
            R = so3.rpy_matrix([roll, pitch, yaw])
            out = so3.to_rpy(R)
            assert out[2] == 0.0 and abs(out[1] - pitch) < 1e-12
            np.testing.assert_allclose(so3.rpy_matrix(out), R, atol=1e-12)
        # just off the lock: still exact reconstruction
        R = so3.rpy_matrix([0.4, pitch - np.sign(pitch) * 1e-9, -0.3])
        np.testing.assert_allclose(so3.rpy_matrix(so3.to_rpy(R)), R, atol=1e-12)


def test_urdf_export_uses_the_one_rpy() -> None:
    from rbd_ros.model import urdf_export
    from rbd_ros.urdf import transforms

    assert transforms.rpy_matrix is so3.rpy_matrix and urdf_export.to_rpy is so3.to_rpy


def test_orientation_error_is_log() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        Ra, Rb = so3.exp(rng.normal(size=3)), so3.exp(rng.normal(size=3))
        e = so3.orientation_error(Ra, Rb)
        np.testing.assert_allclose(so3.exp(e) @ Rb, Ra, atol=1e-12)
        np.testing.assert_allclose(e, pin.log3(Ra @ Rb.T), atol=1e-10)
    e = so3.orientation_error(so3.axis_rotation([0, 1, 0], np.pi), np.eye(3))
    np.testing.assert_allclose(np.abs(e), [0, np.pi, 0], atol=1e-12)
