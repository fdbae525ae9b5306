"""An arm on a planar (holonomic) base, 001 §3.2: the whole-body chain, the two velocity
conventions, and the dual-quaternion Newton-Euler with the holonomic base (001 §3.2.2).

Coordinates ``q = [x, y, phi, arm joints]``: the base point ``B = (x, y, 0)`` and yaw ``phi``
in the world (gravity along world -z), then the MDH/screw arm mounted at the constant
``mount`` (pose of the arm chain's world frame in the base frame; the arm's own ``X[0]`` follows).

Two velocity conventions (both followed by the arm joint rates):

* **world rates** ``qd = [x-dot, y-dot, phi-dot, ...]`` (001: the generalized coordinates of
  §3.2 and the projections of §3.2.2 are on world axes: misprint 001 §3.2.2).  All
  formulation kernels of this package take these (``whole_body_chain`` is an ordinary chain).
* **base rates** ``v = [v_x, v_y, omega, ...]`` in the base frame, as ROS ``cmd_vel``/odometry
  twists and ``pin.JointModelPlanar`` (``a = dv/dt`` of those components).

    qd = T(phi) v,        T = blkdiag(R(phi), 1, E)       (R: 2x2 rotation by phi)
    qdd = T vd + T-dot v,  T-dot v = [R (-omega v_y, omega v_x), 0, ...]
    generalized forces:   f_base = T^T f_world           (power f . qd is invariant)
    M_base = T^T M T,      h_base = T^T (h + M T-dot v)

The whole-body chain (``chain.Chain``): prismatic x, prismatic y (massless bodies), revolute
z through B (the base body: ``mass``, ``com``, ``inertia`` in base axes), then the arm with
``X[0] <- mount X[0]``: every formulation of the package (Lagrange, Silver's NE, Kane, dqNE,
Gauss) applies to it unchanged, in world rates.

``dqne_planar`` is 001's own route instead: the base is one body with a planar joint
(Table 1 ``w k + eps (v_x i + v_y j)``), the arm seeded by its twist (19)-(21), and the
generalized forces of §3.2.2 read off the world-frame wrench ``zeta_1 = f + eps tau`` (moment
about the world origin) transmitted into the base:

    f_x = P(<zeta_1, i>),  f_y = P(<zeta_1, j>),
    tau_phi = D(<zeta_1, k>) - (p_B x f)_z      (misprint 001 §3.2.2: about B)

The base body twist in its CoM frame ``c_B`` (B's axes, origin ``B + R com``):
``xi_B = phi-dot k + eps R^T (x-dot, y-dot, 0)`` at B (misprint 001 §3.2.2), moved to ``c_B`` with (3);
``xi-dot_B = phi-ddot k + eps (R^T (x-ddot, y-ddot, 0) - w x v)`` (the derivative of body
components, so that (23) ``p-ddot = D(xi-dot) + P(xi) x D(xi)`` holds).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from rbd_ros.formulations import Formulations, dual_quaternion
from rbd_ros.formulations.chain import Chain
from rbd_ros.formulations.dq import ad_frame, ad_frame_inv, inner, rmul
from rbd_ros.formulations.dual_quaternion import NWS
from rbd_ros.model import MdhModel

NB = 3  # base coordinates x, y, phi
# packed base row: mass, com (3), inertia about the CoM (9)
BM, BC, BI, NBASE = 0, 1, 4, 13


@dataclass(frozen=True, eq=False)
class PlanarBase:
    """The base body and where the arm sits on it (module docstring).

    ``mass`` (kg), ``com`` (base frame, m), ``inertia`` (3x3 about the CoM, base axes),
    ``mount`` (4x4 pose of the arm's world frame in the base frame, default identity)."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    mount: np.ndarray = field(default_factory=lambda: np.eye(4))

    def __post_init__(self) -> None:
        for name, shape in {"com": (3,), "inertia": (3, 3), "mount": (4, 4)}.items():
            arr = np.asarray(getattr(self, name), dtype=float)
            if arr.shape != shape:
                raise ValueError(f"PlanarBase: {name} must have shape {shape}, got {arr.shape}")
            object.__setattr__(self, name, arr)
        if not self.mass >= 0.0 or not np.isfinite(self.mass):
            raise ValueError(f"PlanarBase: mass must be finite and >= 0, got {self.mass}")
        if np.linalg.eigvalsh(0.5 * (self.inertia + self.inertia.T)).min() < 0.0:
            raise ValueError("PlanarBase: inertia must be symmetric positive semi-definite")
        R = self.mount[:3, :3]
        if np.abs(R.T @ R - np.eye(3)).max() > 1e-9 or np.abs(self.mount[3] - [0, 0, 0, 1]).max() > 0:
            raise ValueError("PlanarBase: mount must be a homogeneous transform (rotation, translation)")

    @classmethod
    def from_model(cls, model: MdhModel) -> "PlanarBase":
        """The base body of an ``MdhModel`` (``base_mass``, ``base_com``, ``base_inertia`` in
        ``base_link`` axes); ``mount`` is the identity because ``model.base`` (base_link -> MDH
        frame 0) is already the arm chain's ``X[0]`` (``Chain.from_model``)."""
        return cls(model.base_mass, model.base_com, model.base_inertia)

    def packed(self) -> np.ndarray:
        """The base row (``NBASE``) ``dqne_planar`` reads."""
        row = np.empty(NBASE)
        row[BM] = self.mass
        row[BC:BC + 3] = self.com
        row[BI:BI + 9] = self.inertia.ravel()
        return row


def whole_body_chain(base: PlanarBase, arm: Chain | None = None,
                     gravity: np.ndarray | None = None) -> Chain:
    """The chain x (prismatic), y (prismatic), phi (revolute z), arm; ``gravity`` defaults
    to the arm's (required without an arm).  ``arm=None``: the base alone (3 joints)."""
    if gravity is None:
        if arm is None:
            raise ValueError("whole_body_chain: give gravity when there is no arm")
        gravity = arm.gravity
    na = 0 if arm is None else arm.dof
    n = NB + na
    X = np.tile(np.eye(4), (n + 1, 1, 1))
    X[NB] = base.mount if arm is None else base.mount @ arm.X[0]
    if arm is not None:
        X[NB + 1:] = arm.X[1:]
    mass = np.zeros(n)
    com = np.zeros((n, 3))
    inertia = np.zeros((n, 3, 3))
    mass[2], com[2], inertia[2] = base.mass, base.com, base.inertia
    screw = np.zeros((n, 6))
    screw[0, 3] = screw[1, 4] = screw[2, 2] = 1.0
    if arm is not None:
        mass[NB:], com[NB:], inertia[NB:], screw[NB:] = arm.mass, arm.com, arm.inertia, arm.screw
    return Chain(screw, X, mass, com, inertia, np.asarray(gravity, dtype=float))


def pack_arm(base: PlanarBase, arm: Chain) -> np.ndarray:
    """The arm's dqNE pack (``dual_quaternion.pack``) with ``X[0] <- x_{j_0}^{c_B}``: base CoM
    frame -> arm's first joint frame (``Tz(-com) mount X[0]``), as ``dqne_seeded`` expects."""
    Tc = np.eye(4)
    Tc[:3, 3] = -base.com
    X = arm.X.copy()
    X[0] = Tc @ base.mount @ arm.X[0]
    return dual_quaternion.pack(Chain(arm.screw, X, arm.mass, arm.com, arm.inertia, arm.gravity))


def formulations(model: MdhModel) -> Formulations:
    """``Formulations`` of the whole body of an ``MdhModel`` on a planar root (its base body
    and chain): what the functions below and ``diff_drive`` take as ``F``."""
    return Formulations(whole_body_chain(PlanarBase.from_model(model), Chain.from_model(model)))


# ---- layouts and the two velocity conventions ------------------------------------------------
def from_cos_sin(qc: np.ndarray) -> np.ndarray:
    """Pinocchio's / ``floating_base``'s planar configuration ``[x, y, cos, sin, arm]`` to
    ``q = [x, y, phi, arm]``."""
    qc = np.asarray(qc, dtype=float)
    return np.concatenate([qc[:2], [np.arctan2(qc[3], qc[2])], qc[4:]])


def to_cos_sin(q: np.ndarray) -> np.ndarray:
    """``q = [x, y, phi, arm]`` to ``[x, y, cos phi, sin phi, arm]``."""
    q = np.asarray(q, dtype=float)
    return np.concatenate([q[:2], [np.cos(q[2]), np.sin(q[2])], q[3:]])


def world_rates(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``qd = T(phi) v``: base-frame ``(v_x, v_y, omega)`` to world ``(x-dot, y-dot, phi-dot)``."""
    c, s = np.cos(q[2]), np.sin(q[2])
    qd = np.array(v, dtype=float)
    qd[0], qd[1] = c * v[0] - s * v[1], s * v[0] + c * v[1]
    return qd


def base_rates(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """``v = T^T qd`` (inverse of ``world_rates``); also maps world generalized forces to the
    base-frame forces ``(F_x, F_y, M_z)`` (``f_base = T^T f_world``)."""
    c, s = np.cos(q[2]), np.sin(q[2])
    v = np.array(qd, dtype=float)
    v[0], v[1] = c * qd[0] + s * qd[1], -s * qd[0] + c * qd[1]
    return v


def world_accelerations(q: np.ndarray, v: np.ndarray, vd: np.ndarray) -> np.ndarray:
    """``qdd = T vd + T-dot v``, ``T-dot v = [R (-omega v_y, omega v_x), 0, ...]``."""
    w = v[2]
    return world_rates(q, np.concatenate([[vd[0] - w * v[1], vd[1] + w * v[0]], vd[2:]]))


def base_accelerations(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """``vd = T^T qdd - omega x v`` (inverse of ``world_accelerations``)."""
    v = base_rates(q, qd)
    a = base_rates(q, qdd)
    a[0] += qd[2] * v[1]
    a[1] -= qd[2] * v[0]
    return a


def to_base_frame(q: np.ndarray, v: np.ndarray, M: np.ndarray,
                  h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(M_base, h_base) = (T^T M T, T^T (h + M T-dot v))`` from world-rate ``M``, ``h``
    (``h`` evaluated at ``qd = T v``; all non-inertial terms, gravity included if wanted)."""
    c, s = np.cos(q[2]), np.sin(q[2])
    T = np.eye(len(q))
    T[:2, :2] = [[c, -s], [s, c]]
    Tdv = world_accelerations(q, v, np.zeros_like(v))
    return T.T @ M @ T, T.T @ (h + M @ Tdv)


# ---- whole-body dynamics in base rates (what a Robot-level planar base calls) ----------------
def inverse_dynamics(F: Formulations, q: np.ndarray, v: np.ndarray, vd: np.ndarray,
                     method: str = "silver", wrench: np.ndarray | None = None) -> np.ndarray:
    """Base-frame ``[F_x, F_y, M_z, arm torques]`` (force and moment about B on the base) for
    base rates ``v``, ``v-dot``; ``F``: ``Formulations(whole_body_chain(...))``, ``method``: any
    of its inverse-dynamics methods (world rates inside)."""
    tau = F.inverse_dynamics(method, q, world_rates(q, v), world_accelerations(q, v, vd), wrench)
    return base_rates(q, tau)


def mass_matrix(F: Formulations, q: np.ndarray, method: str = "kane") -> np.ndarray:
    """``M_base = T^T M T`` (``method``: lagrange, kane, gauss)."""
    return to_base_frame(q, np.zeros(len(q)), F.mass_matrix(method, q), np.zeros(len(q)))[0]


def bias(F: Formulations, q: np.ndarray, v: np.ndarray, method: str = "silver") -> np.ndarray:
    """``h_base`` with gravity: the inverse dynamics at ``v-dot = 0``."""
    return inverse_dynamics(F, q, v, np.zeros(len(q)), method)


def coriolis_matrix(F: Formulations, q: np.ndarray, v: np.ndarray, method: str = "kane") -> np.ndarray:
    """``C_base = T^T (M T-dot + C T)`` from the world-rate ``C`` (``method``: kane, gauss) at
    ``qd = T v``, ``T-dot = omega blkdiag(R S, 0)`` (``S`` the 2x2 rotation by +90 deg): then
    ``C_base v = h_base - g_base`` and ``M_base-dot - 2 C_base = T^T (M-dot - 2C) T + (T-dot^T M T
    - T^T M T-dot)`` is skew."""
    c, s = np.cos(q[2]), np.sin(q[2])
    T = np.eye(len(q))
    T[:2, :2] = [[c, -s], [s, c]]
    Td = np.zeros_like(T)
    Td[:2, :2] = [[-s * v[2], -c * v[2]], [c * v[2], -s * v[2]]]
    qd = T @ v
    return T.T @ (F.mass_matrix(method, q) @ Td + F.coriolis_matrix(method, q, qd) @ T)


def forward_dynamics(F: Formulations, q: np.ndarray, v: np.ndarray, f: np.ndarray,
                     method: str = "kane") -> np.ndarray:
    """Base-rate ``v-dot = M_base^{-1} (f - h_base)`` for the base-frame generalized force
    ``f`` (``method`` for M and h: lagrange, kane, gauss)."""
    return np.linalg.solve(mass_matrix(F, q, method), f - bias(F, q, v, method))


# ---- dqNE with the holonomic base, 001 §3.2.2 ------------------------------------------------
@njit(cache=True)
def dqne_planar(base: np.ndarray, dp: np.ndarray, gravity: np.ndarray, q: np.ndarray,
                qd: np.ndarray, qdd: np.ndarray, wrench: np.ndarray, use_wrench: bool,
                ws: np.ndarray, tau: np.ndarray) -> None:
    """001 §3.2.2 (module docstring), **world rates**: ``tau = [f_x, f_y, tau_phi, arm]``.
    ``base``: ``PlanarBase.packed()``; ``dp``: ``pack_arm``; ``ws``: ``(n_arm, NWS)``;
    ``wrench``: the tool wrench of ``Robot`` (world, on the tool, moment about it)."""
    na = q.shape[0] - 3
    phi = q[2]
    c = np.cos(phi)
    s = np.sin(phi)
    Rb = (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)  # base axes in the world
    cb = (base[BC], base[BC + 1], base[BC + 2])
    eye = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    w = qd[2]
    # base twist at B: phi-dot k + eps R^T (x-dot, y-dot, 0)  (Table 1 planar joint)
    vx = c * qd[0] + s * qd[1]
    vy = -s * qd[0] + c * qd[1]
    # its derivative: phi-ddot k + eps (R^T (x-ddot, y-ddot, 0) - w x v)
    ax = c * qdd[0] + s * qdd[1] + w * vy
    ay = -s * qdd[0] + c * qdd[1] - w * vx
    # moved to the CoM frame c_B (B's axes, origin com): Ad((1 + eps com/2)^*)
    xi = ad_frame_inv(eye, cb, (0.0, 0.0, w, vx, vy, 0.0))
    xid = ad_frame_inv(eye, cb, (0.0, 0.0, qdd[2], ax, ay, 0.0))
    g = (c * gravity[0] + s * gravity[1], -s * gravity[0] + c * gravity[1], gravity[2])
    zeta = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if na > 0:
        # the arm seeded by the base: 001 (19)-(29), zeta of its joint 1 in j_0 -> c_B by Ad(K_B)
        za = dual_quaternion.dqne_seeded(dp, q[3:], qd[3:], qdd[3:], xi, xid, g,
                                         (np.cos(0.5 * phi), 0.0, 0.0, np.sin(0.5 * phi)),
                                         wrench, use_wrench, ws, tau[3:])
        K = (dp[na, dual_quaternion.DR], dp[na, dual_quaternion.DR + 1],
             dp[na, dual_quaternion.DR + 2], dp[na, dual_quaternion.DR + 3],
             dp[na, dual_quaternion.DR + 4], dp[na, dual_quaternion.DR + 5],
             dp[na, dual_quaternion.DR + 6], dp[na, dual_quaternion.DR + 7],
             dp[na, dual_quaternion.DR + 8])
        zeta = ad_frame(K, (dp[na, dual_quaternion.DP], dp[na, dual_quaternion.DP + 1],
                            dp[na, dual_quaternion.DP + 2]), za)
    # base CoM wrench (24)-(26) in c_B
    m = base[BM]
    I = base[BI:BI + 9]
    fx = m * (xid[3] + xi[1] * xi[5] - xi[2] * xi[4] - g[0])
    fy = m * (xid[4] + xi[2] * xi[3] - xi[0] * xi[5] - g[1])
    fz = m * (xid[5] + xi[0] * xi[4] - xi[1] * xi[3] - g[2])
    lx = I[0] * xi[0] + I[1] * xi[1] + I[2] * xi[2]
    ly = I[3] * xi[0] + I[4] * xi[1] + I[5] * xi[2]
    lz = I[6] * xi[0] + I[7] * xi[1] + I[8] * xi[2]
    tx = I[0] * xid[0] + I[1] * xid[1] + I[2] * xid[2] + xi[1] * lz - xi[2] * ly
    ty = I[3] * xid[0] + I[4] * xid[1] + I[5] * xid[2] + xi[2] * lx - xi[0] * lz
    tz = I[6] * xid[0] + I[7] * xid[1] + I[8] * xid[2] + xi[0] * ly - xi[1] * lx
    zc = (fx + zeta[0], fy + zeta[1], fz + zeta[2], tx + zeta[3], ty + zeta[4], tz + zeta[5])
    # (29) for the base: zeta_1 in the world (j_0 = F_0), Ad(x_{c_B}^0)
    pc = rmul(Rb, cb[0], cb[1], cb[2])
    z1 = ad_frame(Rb, (q[0] + pc[0], q[1] + pc[1], pc[2]), zc)
    # §3.2.2 with the corrected yaw (misprint 001 §3.2.2): moment about B = (x, y, 0)
    tau[0] = inner(z1, (1.0, 0.0, 0.0, 0.0, 0.0, 0.0))[0]
    tau[1] = inner(z1, (0.0, 1.0, 0.0, 0.0, 0.0, 0.0))[0]
    tau[2] = inner(z1, (0.0, 0.0, 1.0, 0.0, 0.0, 0.0))[1] - (q[0] * z1[1] - q[1] * z1[0])


def dqne_workspace(arm_dof: int) -> np.ndarray:
    """Scratch for ``dqne_planar``."""
    return np.empty((max(arm_dof, 1), NWS))
