"""The joint-torque regressor of the MDH Newton-Euler equations: ``tau = Y(q, qd, qdd) phi``.

Inverse dynamics (003 §4.5) is linear in each link's ten inertial parameters when these are
taken about the link frame's origin (Atkeson, An, Hollerbach 1986, "Estimation of inertial
parameters of manipulator loads and links", IJRR 5(3) eq. (5)-(8); Khalil and Dombre,
*Modeling, Identification and Control of Robots* (2002) §9.3, whose parameter order and names
are used here).  Per joint ``j`` (1-based names) thirteen standard parameters

    XXj XYj XZj YYj YZj ZZj   the inertia about the frame-j origin, frame-j axes (kg m^2)
    MXj MYj MZj               the first moment m c (kg m)
    Mj                        the mass (kg)
    Iaj FVj FCj               armature G^2 Jm, viscous B, Coulomb Tc (003 (6.16)-(6.17))

so ``phi`` has ``13 n`` entries.  The link wrench about its frame origin (frame-i axes), with
``w, wd, vd`` the angular velocity, angular acceleration and origin acceleration of 003
(4.29)-(4.34) (``vd_0 = -R_base^T g``: gravity enters as a base acceleration):

    f = M vd + (S(wd) + S(w)^2) h                                 (003 (4.35)-(4.36) with h = m c)
    n = L(wd) I + S(w) L(w) I - S(vd) h                           (Atkeson et al. (7))

``L(w) I = I_o w`` for the six entries of ``I_o``.  The joint torque ``tau_j`` is the z row of
the moment (revolute) or force (prismatic) of all links ``i >= j`` carried down to frame j by
``f' = R f``, ``n' = R n + p x R f`` (003 (4.36)-(4.37)); the drive adds ``Ia qdd + FV qd +
FC sign(qd)`` (003 (6.16)-(6.17)).  Vectorised over samples (numpy): ``O(n^2)`` array
operations, each over all samples at once.
"""
from __future__ import annotations

import numpy as np

from rbd_ros.model import PRISMATIC, MdhModel

#: the 13 standard parameters of a joint, in order (Khalil-Dombre names, ``j`` = joint number)
PARAMETERS = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M", "Ia", "FV", "FC")
NP = len(PARAMETERS)
INERTIAL = 10  # the first ten of each joint's block


def parameter_names(n: int) -> list[str]:
    """``['XX1', 'XY1', ..., 'FC<n>']``."""
    return [f"{p}{j + 1}" for j in range(n) for p in PARAMETERS]


def _skew(v: np.ndarray) -> np.ndarray:
    """``S(v)`` for each row of ``v`` (N, 3) -> (N, 3, 3), ``S(v) x = v x x``."""
    S = np.zeros((*v.shape[:-1], 3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    S[..., 1, 0], S[..., 2, 0], S[..., 2, 1] = v[..., 2], -v[..., 1], v[..., 0]
    return S


def _lmap(w: np.ndarray) -> np.ndarray:
    """``L(w)`` (N, 3, 6) with ``L(w) [XX, XY, XZ, YY, YZ, ZZ] = I w``."""
    L = np.zeros((*w.shape[:-1], 3, 6))
    x, y, z = w[..., 0], w[..., 1], w[..., 2]
    L[..., 0, 0], L[..., 0, 1], L[..., 0, 2] = x, y, z
    L[..., 1, 1], L[..., 1, 3], L[..., 1, 4] = x, y, z
    L[..., 2, 2], L[..., 2, 4], L[..., 2, 5] = x, y, z
    return L


def link_transforms(model: MdhModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``R`` (N, n, 3, 3) = ^{i-1}R_i and ``p`` (N, n, 3) = ^{i-1}p_i at each sample
    (003 §1.6: ``Rx(alpha) Tx(a) Rz(theta) Tz(d)``)."""
    N, n = q.shape
    prism = np.asarray(model.joint_type) == PRISMATIC
    theta = model.theta + np.where(prism, 0.0, q)
    d = model.d + np.where(prism, q, 0.0)
    ca, sa = np.cos(model.alpha), np.sin(model.alpha)
    ct, st = np.cos(theta), np.sin(theta)
    R = np.empty((N, n, 3, 3))
    R[..., 0, 0], R[..., 0, 1], R[..., 0, 2] = ct, -st, 0.0  # Rx(alpha) Rz(theta)
    R[..., 1, 0], R[..., 1, 1], R[..., 1, 2] = ca * st, ca * ct, -sa
    R[..., 2, 0], R[..., 2, 1], R[..., 2, 2] = sa * st, sa * ct, ca
    p = np.stack([np.broadcast_to(model.a, (N, n)), -sa * d, ca * d], axis=-1)  # Rx(alpha) (a, 0, d)
    return R, p


def velocities(model: MdhModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray):
    """``R, p, w, wd, vd`` per sample and link (frame i), 003 (4.29)-(4.34)."""
    N, n = q.shape
    R, p = link_transforms(model, q)
    prism = np.asarray(model.joint_type) == PRISMATIC
    w = np.zeros((N, n, 3))
    wd = np.zeros((N, n, 3))
    vd = np.zeros((N, n, 3))
    w_prev, wd_prev = np.zeros((N, 3)), np.zeros((N, 3))
    vd_prev = np.broadcast_to(-model.base[:3, :3].T @ model.gravity, (N, 3))  # vd_0 = -R_base^T g
    for i in range(n):
        Rt = np.swapaxes(R[:, i], 1, 2)
        wp = np.einsum("kab,kb->ka", Rt, w_prev)  # R^T w_{i-1}
        a_o = vd_prev + np.cross(wd_prev, p[:, i]) + np.cross(w_prev, np.cross(w_prev, p[:, i]))
        vd[:, i] = np.einsum("kab,kb->ka", Rt, a_o)  # R^T (vd + wd x p + w x (w x p))  (4.33)
        wd[:, i] = np.einsum("kab,kb->ka", Rt, wd_prev)
        if prism[i]:
            w[:, i] = wp  # (4.29)-(4.30) for a prismatic joint
            vd[:, i, :2] += 2.0 * qd[:, i, None] * w[:, i, [1, 0]] * np.array([1.0, -1.0])  # 2 w x qd z
            vd[:, i, 2] += qdd[:, i]  # + qdd z
        else:
            w[:, i] = wp
            w[:, i, 2] += qd[:, i]  # w = R^T w + qd z  (4.29)
            wd[:, i, 0] += wp[:, 1] * qd[:, i]  # + (R^T w) x qd z  (4.30)
            wd[:, i, 1] -= wp[:, 0] * qd[:, i]
            wd[:, i, 2] += qdd[:, i]  # + qdd z
        w_prev, wd_prev, vd_prev = w[:, i], wd[:, i], vd[:, i]
    return R, p, w, wd, vd


def link_wrench_matrix(w: np.ndarray, wd: np.ndarray, vd: np.ndarray) -> np.ndarray:
    """``A`` (N, 6, 10): the wrench ``[f; n]`` (about the frame origin) = ``A phi_inertial``
    (module docstring; Atkeson et al. (7))."""
    N = w.shape[0]
    A = np.zeros((N, 6, INERTIAL))
    Sw = _skew(w)
    A[:, :3, 6:9] = _skew(wd) + Sw @ Sw  # f: (S(wd) + S(w)^2) h
    A[:, :3, 9] = vd  # f: M vd
    A[:, 3:, 0:6] = _lmap(wd) + Sw @ _lmap(w)  # n: I wd + w x I w
    A[:, 3:, 6:9] = -_skew(vd)  # n: h x vd
    return A


def regressor(model: MdhModel, q, qd, qdd, qd_viscous=None) -> np.ndarray:
    """``Y`` (N, n, 13 n) with ``tau[k] = Y[k] @ phi`` (``standard_parameters``), for states
    (N, n) or one state (n,) (then (n, 13 n)).  ``qd_viscous``: the velocity of the viscous
    column ``FV`` where it differs from ``qd`` (``recording.Samples.qd_step``: a step's mean
    velocity, the exact integral of ``FV qd`` over it); None: ``qd``."""
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    single = q.ndim == 1
    q, qd, qdd = (np.atleast_2d(x) for x in (q, qd, qdd))
    n = model.dof
    if not (q.shape == qd.shape == qdd.shape and q.shape[1] == n):
        raise ValueError(f"regressor: q, qd, qdd must be (N, {n}) arrays of the same shape, got "
                         f"{q.shape}, {qd.shape}, {qdd.shape}")
    if not (np.isfinite(q).all() and np.isfinite(qd).all() and np.isfinite(qdd).all()):
        raise ValueError("regressor: q, qd, qdd contain NaN or Inf")
    qd_viscous = qd if qd_viscous is None else np.atleast_2d(np.asarray(qd_viscous, dtype=float))
    if qd_viscous.shape != qd.shape or not np.isfinite(qd_viscous).all():
        raise ValueError(f"regressor: qd_viscous must be finite and shaped as qd {qd.shape}, got "
                         f"{qd_viscous.shape}")
    N = q.shape[0]
    R, p, w, wd, vd = velocities(model, q, qd, qdd)
    prism = np.asarray(model.joint_type) == PRISMATIC
    Y = np.zeros((N, n, NP * n))
    for i in range(n):
        A = link_wrench_matrix(w[:, i], wd[:, i], vd[:, i])
        cols = slice(NP * i, NP * i + INERTIAL)
        for j in range(i, -1, -1):
            Y[:, j, cols] = A[:, 2 if prism[j] else 5]  # tau_j = z . f_j or z . n_j  (4.38)-(4.39)
            if j:  # carry to frame j-1: f' = R f, n' = R n + p x R f  (4.36)-(4.37)
                Rf = np.einsum("kab,kbc->kac", R[:, j], A[:, :3])
                Rn = np.einsum("kab,kbc->kac", R[:, j], A[:, 3:])
                A = np.concatenate([Rf, Rn + np.cross(p[:, j, :, None], Rf, axis=1)], axis=1)
    for j in range(n):  # the drive: Ia qdd + FV qd + FC sign(qd)  (6.16)-(6.17)
        Y[:, j, NP * j + 10] = qdd[:, j]
        Y[:, j, NP * j + 11] = qd_viscous[:, j]
        Y[:, j, NP * j + 12] = np.sign(qd[:, j])
    return Y[0] if single else Y


def standard_parameters(model: MdhModel) -> np.ndarray:
    """``phi`` (13 n) of a model (module docstring): the inertia moved to the frame origin
    (parallel axes, ``I_o = I_c + m (c.c E - c c^T)``)."""
    out = np.zeros((model.dof, NP))
    for i in range(model.dof):
        m, c = model.mass[i], model.com[i]
        Io = model.inertia[i] + m * (c @ c * np.eye(3) - np.outer(c, c))
        out[i, :6] = Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2]
        out[i, 6:9] = m * c
        out[i, 9] = m
        out[i, 10:] = model.armature[i], model.viscous[i], model.coulomb[i]
    return out.reshape(-1)


def inertia_about_origin(block: np.ndarray) -> np.ndarray:
    """The 3x3 ``I_o`` of one joint's block of ``phi``."""
    xx, xy, xz, yy, yz, zz = block[:6]
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def model_with_parameters(model: MdhModel, phi: np.ndarray) -> MdhModel:
    """``model`` with the link masses, centres of mass, inertias and the drives' armature
    (as ``rotor_inertia = Ia / G^2``, the gear kept), viscous and Coulomb friction of ``phi``.
    A link needs a positive mass (a massless link with a first moment describes no body)."""
    P = np.asarray(phi, dtype=float).reshape(model.dof, NP)
    mass, com, inertia = np.zeros(model.dof), np.zeros((model.dof, 3)), np.zeros((model.dof, 3, 3))
    for i, b in enumerate(P):
        m = b[9]
        if not m > 0.0:
            raise ValueError(f"link '{model.link_names[i]}' (joint '{model.joint_names[i]}'): mass "
                             f"{m:.6g} kg is not positive; the parameters describe no body")
        c = b[6:9] / m
        mass[i], com[i] = m, c
        inertia[i] = inertia_about_origin(b) - m * (c @ c * np.eye(3) - np.outer(c, c))
    gear = np.where(model.gear_ratio != 0.0, model.gear_ratio, 1.0)
    return model.replace(mass=mass, com=com, inertia=inertia, rotor_inertia=P[:, 10] / gear**2,
                         gear_ratio=gear, viscous=P[:, 11], coulomb=P[:, 12])
