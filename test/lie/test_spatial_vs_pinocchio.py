"""Quaternion conversions and the orientation error against Pinocchio (``pin.Quaternion``,
``pin.log3``, ``pin.exp3``), not against their own inverses: generic rotations and the hard
cases (tiny angles, angles at and near pi, every branch of Shepperd's method)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from rbd_ros.lie.so3 import orientation_error, quaternion_to_rotation, rotation_to_quaternion

RNG_SEED = 20


def _rotations() -> list[np.ndarray]:
    rng = np.random.default_rng(RNG_SEED)
    out = [pin.exp3(v) for v in rng.normal(size=(200, 3))]  # generic
    axes = rng.normal(size=(40, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    for axis, angle in zip(axes, np.concatenate([[1e-14, 1e-9, 1e-6, 1e-3],
                                                 np.pi - np.logspace(-10, -1, 16),
                                                 np.full(20, np.pi)])):
        out.append(pin.exp3(angle * axis))
    for k in range(3):  # half turns about the coordinate axes: each Shepperd branch
        e = np.zeros(3)
        e[k] = np.pi
        out.append(pin.exp3(e))
    return out


ROTATIONS = _rotations()


def _angle(R: np.ndarray) -> float:
    return float(np.linalg.norm(pin.log3(R)))


def test_rotation_to_quaternion_is_pinocchios():
    for R in ROTATIONS:
        ref = pin.Quaternion(R).coeffs()  # (x, y, z, w)
        ref = -ref if ref[3] < 0 else ref
        got = rotation_to_quaternion(R)
        assert got[3] >= 0 and abs(np.linalg.norm(got) - 1.0) < 1e-15
        if abs(ref[3]) < 1e-12:  # a half turn: q and -q both have w = 0
            got = got * np.sign(got @ ref)
        np.testing.assert_allclose(got, ref, atol=1e-12, err_msg=f"angle {_angle(R)}")


def test_quaternion_to_rotation_is_pinocchios_and_normalises():
    rng = np.random.default_rng(RNG_SEED + 1)
    for q in rng.normal(size=(200, 4)) * rng.uniform(0.1, 10.0, (200, 1)):  # not unit
        ref = pin.Quaternion(q[3], q[0], q[1], q[2]).normalized().toRotationMatrix()
        np.testing.assert_allclose(quaternion_to_rotation(q), ref, atol=1e-14)
    with pytest.raises(ValueError, match="zero or non-finite norm"):
        quaternion_to_rotation([0.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="zero or non-finite norm"):
        quaternion_to_rotation([np.nan, 0.0, 0.0, 1.0])


def test_orientation_error_is_the_log_of_the_relative_rotation():
    """e = log(R_d R^T) (world frame), |e| <= pi; at exactly pi the sign of the axis is free,
    so there R_d = exp(e) R and |e| = pi are checked."""
    rng = np.random.default_rng(RNG_SEED + 2)
    for Re in ROTATIONS:
        R = pin.exp3(rng.normal(size=3))
        Rd = Re @ R
        e = orientation_error(Rd, R)
        angle = _angle(Re)
        if angle > 3.0 and np.sin(angle) < 1e-12:  # a half turn (to rounding)
            # the axis from sqrt((diag + 1) / 2): a small component is only good to
            # sqrt(eps) ~ 1e-8 (measured)
            assert abs(np.linalg.norm(e) - np.pi) < 1e-12, angle
            np.testing.assert_allclose(pin.exp3(e) @ R, Rd, atol=5e-8)
        else:
            # the axis comes from the antisymmetric part of R_d R^T, of size sin(angle): its
            # rounding error (~1e-15 here) grows as 1 / sin(angle) near pi (measured: 1e-6 rad at
            # pi - 1e-10; pin.log3 takes the symmetric part there)
            tol = 1e-12 + 1e-14 / np.sin(angle)
            np.testing.assert_allclose(e, pin.log3(Re), rtol=0, atol=tol,
                                       err_msg=f"angle {angle}")


def test_orientation_angles_of_a_batch_are_pinocchios_log_norms():
    """``so3.orientation_angles`` (one kernel call over a batch, the bringup report's and the
    sweep's tool errors): each angle is ``|pin.log3(R_d R^T)|``, for rotations and for 4x4 poses
    (their top-left blocks); mismatched or non-batch shapes are refused by name."""
    from rbd_ros.lie.so3 import orientation_angles

    rng = np.random.default_rng(RNG_SEED + 3)
    R = np.stack([pin.exp3(rng.normal(size=3)) for _ in ROTATIONS])
    Rd = np.stack([Re @ Rk for Re, Rk in zip(ROTATIONS, R)])
    expected = np.array([_angle(Re) for Re in ROTATIONS])
    tol = 1e-12 + 1e-14 / np.maximum(np.sin(expected), 1e-14)  # the rounding near pi, as above
    assert (np.abs(orientation_angles(Rd, R) - expected) <= tol).all()
    T, Td = np.tile(np.eye(4), (len(R), 1, 1)), np.tile(np.eye(4), (len(R), 1, 1))
    T[:, :3, :3], Td[:, :3, :3] = R, Rd
    T[:, :3, 3], Td[:, :3, 3] = rng.normal(size=(2, len(R), 3))  # translations do not count
    assert (np.abs(orientation_angles(Td, T) - expected) <= tol).all()
    with pytest.raises(ValueError, match="two \\(N, 3\\|4, 3\\|4\\) batches of one shape"):
        orientation_angles(Rd[0], R[0])
    with pytest.raises(ValueError, match="of one shape"):
        orientation_angles(Td, R)
