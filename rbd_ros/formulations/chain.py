"""The chain every formulation reads: joint screws and constant transforms, not an MDH table.

A serial chain of ``n`` bodies.  Frames (world = the model's world frame):

* ``X[i]`` (4x4, constant): pose of joint i's frame ``j_{i-1}`` in the frame of body
  ``i - 1`` (``X[0]``: in the world frame; for an MDH model ``X[0] = base A_0``,
  ``X[i] = A_i`` at ``q = 0``, 003 §1.6).  ``X[n]`` is the tool in the frame of body n.
* joint i moves body i relative to ``j_{i-1}`` by ``exp(S_i^ q_i)``, the screw
  ``S_i = [w; v]`` (angular first, 001 Table 1) expressed in ``j_{i-1}``, with its axis
  through the origin: revolute ``[l; 0]``, prismatic ``[0; l]``, helical ``[l; h l]``
  (``l`` a unit vector, ``h`` the pitch).  Body i's frame is ``j_{i-1} exp(S_i^ q_i)``.
* body i: ``mass[i]``, centre of mass ``com[i]`` and inertia ``inertia[i]`` about it,
  both in body i's frame.

So the MDH chain is the special case ``l = z`` (``Rz(q)`` or ``Tz(q)`` after ``A_i``), and a
later mobile base is more joints ahead of the arm (e.g. prismatic x, prismatic y, revolute
z with massless intermediate bodies): nothing here assumes MDH.

``pack(chain)`` gives the flat arrays the jitted kernels take (``pk``: one row per body,
columns below, row ``n`` the tool and the gravity).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from rbd_ros.algorithm.mdh import mdh_transform
from rbd_ros.model import PRISMATIC, MdhModel

REVOLUTE, PRISMATIC_J, HELICAL = "revolute", "prismatic", "helical"

# ---- packed columns (row i < n: body i / joint i; row n: tool and gravity) ------------------
KS = 0  # joint screw [w; v] in j_{i-1} (6)
KX = 6  # X[i] row-major 3x4 (12): rotation then translation column by row
KM = 18  # mass (1)
KC = 19  # centre of mass, body frame (3)
KI = 22  # inertia about the CoM, body axes (9)
KG = 31  # gravity, world (3), row n only
NK = 34


@dataclass(frozen=True, eq=False)
class Chain:
    """Screws, constant transforms and inertias of a serial chain (module docstring)."""

    screw: np.ndarray  # (n, 6) [w; v] in j_{i-1}
    X: np.ndarray  # (n + 1, 4, 4)
    mass: np.ndarray  # (n,)
    com: np.ndarray  # (n, 3)
    inertia: np.ndarray  # (n, 3, 3) about the CoM
    gravity: np.ndarray  # (3,)

    def __post_init__(self) -> None:
        n = len(self.mass)
        shapes = {"screw": (n, 6), "X": (n + 1, 4, 4), "com": (n, 3), "inertia": (n, 3, 3),
                  "gravity": (3,)}
        for name, shape in shapes.items():
            arr = np.ascontiguousarray(getattr(self, name), dtype=float)
            if arr.shape != shape:
                raise ValueError(f"Chain: {name} must have shape {shape}, got {arr.shape}")
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "mass", np.ascontiguousarray(self.mass, dtype=float))
        for i, s in enumerate(self.screw):
            w, v = s[:3], s[3:]
            nw = np.linalg.norm(w)
            if nw == 0.0:
                if abs(np.linalg.norm(v) - 1.0) > 1e-12:
                    raise ValueError(f"Chain: joint {i} is prismatic but its axis {v} is not a unit vector")
            elif abs(nw - 1.0) > 1e-12 or np.linalg.norm(np.cross(w, v)) > 1e-12:
                raise ValueError(f"Chain: joint {i} screw {s} is neither revolute nor helical "
                                 "(unit w, v parallel to w)")

    @property
    def dof(self) -> int:
        return len(self.mass)

    @classmethod
    def from_joints(cls, types: list[str], axes: np.ndarray, X: np.ndarray, mass: np.ndarray,
                    com: np.ndarray, inertia: np.ndarray, gravity: np.ndarray,
                    pitch: np.ndarray | None = None) -> "Chain":
        """From joint types (``revolute``/``prismatic``/``helical``), unit axes (in the joint
        frames) and pitches (helical only)."""
        n = len(types)
        axes = np.asarray(axes, dtype=float).reshape(n, 3)
        pitch = np.zeros(n) if pitch is None else np.asarray(pitch, dtype=float).reshape(n)
        screw = np.zeros((n, 6))
        for i, t in enumerate(types):
            l = axes[i] / np.linalg.norm(axes[i])
            if t == REVOLUTE:
                screw[i, :3] = l
            elif t == PRISMATIC_J:
                screw[i, 3:] = l
            elif t == HELICAL:
                screw[i, :3] = l
                screw[i, 3:] = pitch[i] * l
            else:
                raise ValueError(f"Chain: unknown joint type {t!r}; use revolute, prismatic or helical")
        return cls(screw, X, mass, com, inertia, gravity)

    @classmethod
    def from_model(cls, model: MdhModel) -> "Chain":
        """The MDH chain: ``X[0] = base A_0``, ``X[i] = A_i``, ``X[n] = tool``; axes ``z``."""
        n = model.dof
        X = np.empty((n + 1, 4, 4))
        for i in range(n):
            X[i] = mdh_transform(float(model.a[i]), float(model.alpha[i]), float(model.d[i]),
                                 float(model.theta[i]))
        X[0] = model.base @ X[0]
        X[n] = model.tool
        types = [PRISMATIC_J if t == PRISMATIC else REVOLUTE for t in model.joint_type]
        return cls.from_joints(types, np.tile([0.0, 0.0, 1.0], (n, 1)), X, model.mass, model.com,
                               model.inertia, model.gravity)


def pack(chain: Chain) -> np.ndarray:
    """The packed chain ``pk`` (``(n + 1, NK)``, C-contiguous) the kernels read."""
    n = chain.dof
    pk = np.zeros((n + 1, NK))
    pk[:n, KS:KS + 6] = chain.screw
    pk[:, KX:KX + 12] = chain.X[:, :3, :].reshape(n + 1, 12)
    pk[:n, KM] = chain.mass
    pk[:n, KC:KC + 3] = chain.com
    pk[:n, KI:KI + 9] = chain.inertia.reshape(n, 9)
    pk[n, KG:KG + 3] = chain.gravity
    return pk


# ---- 4x4 helpers shared by the matrix formulations (Lagrange, Kane) --------------------------
@njit(cache=True)
def mm4(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    """``out = A B`` for 4x4 homogeneous matrices (the last row of A is ``(0, 0, 0, *)``)."""
    for r in range(4):
        a0 = A[r, 0]
        a1 = A[r, 1]
        a2 = A[r, 2]
        a3 = A[r, 3]
        for c in range(4):
            out[r, c] = a0 * B[0, c] + a1 * B[1, c] + a2 * B[2, c] + a3 * B[3, c]


@njit(cache=True)
def constant_transform(pk: np.ndarray, i: int, out: np.ndarray) -> None:
    """``out = X[i]`` (4x4) from the packed chain."""
    for r in range(3):
        for c in range(4):
            out[r, c] = pk[i, KX + 4 * r + c]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True)
def screw_matrix(pk: np.ndarray, i: int, out: np.ndarray) -> None:
    """``out = S_i^`` (4x4): ``[[w x, v], [0, 0]]``, the derivative operator ``Q_i`` of
    003 (3.30) (``Q_R``: ``Q[0,1] = -1, Q[1,0] = 1``; ``Q_P``: ``Q[2,3] = 1`` for ``l = z``)."""
    wx = pk[i, KS]
    wy = pk[i, KS + 1]
    wz = pk[i, KS + 2]
    out[:] = 0.0
    out[0, 1] = -wz
    out[0, 2] = wy
    out[1, 0] = wz
    out[1, 2] = -wx
    out[2, 0] = -wy
    out[2, 1] = wx
    out[0, 3] = pk[i, KS + 3]
    out[1, 3] = pk[i, KS + 4]
    out[2, 3] = pk[i, KS + 5]


@njit(cache=True)
def joint_transform(pk: np.ndarray, i: int, q: float, out: np.ndarray) -> None:
    """``out = X[i] exp(S_i^ q)`` (4x4): Rodrigues about the unit axis ``w`` (if any), then
    the translation ``v q`` along it (exact because ``v`` is parallel to ``w``)."""
    wx = pk[i, KS]
    wy = pk[i, KS + 1]
    wz = pk[i, KS + 2]
    c = np.cos(q)
    s = np.sin(q)
    if wx == 0.0 and wy == 0.0 and wz == 0.0:
        c = 1.0
        s = 0.0
    k = 1.0 - c
    # R = c E + s [w x] + (1 - c) w w^T
    E00 = c + k * wx * wx
    E01 = k * wx * wy - s * wz
    E02 = k * wx * wz + s * wy
    E10 = k * wx * wy + s * wz
    E11 = c + k * wy * wy
    E12 = k * wy * wz - s * wx
    E20 = k * wx * wz - s * wy
    E21 = k * wy * wz + s * wx
    E22 = c + k * wz * wz
    tx = pk[i, KS + 3] * q
    ty = pk[i, KS + 4] * q
    tz = pk[i, KS + 5] * q
    for r in range(3):
        x0 = pk[i, KX + 4 * r]
        x1 = pk[i, KX + 4 * r + 1]
        x2 = pk[i, KX + 4 * r + 2]
        out[r, 0] = x0 * E00 + x1 * E10 + x2 * E20
        out[r, 1] = x0 * E01 + x1 * E11 + x2 * E21
        out[r, 2] = x0 * E02 + x1 * E12 + x2 * E22
        out[r, 3] = x0 * tx + x1 * ty + x2 * tz + pk[i, KX + 4 * r + 3]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True)
def world_kinematics(pk: np.ndarray, q: np.ndarray, qd: np.ndarray, T: np.ndarray,
                     Z: np.ndarray, w: np.ndarray, vo: np.ndarray) -> None:
    """World poses ``T[i]`` of the bodies (``T[n]``: the tool), world joint screws
    ``Z[i] = [R w_s; R v_s]`` (``R`` of ``j_{i-1}``, which equals body i's ``R w_s``), body
    angular velocities ``w[i]`` and velocities ``vo[i]`` of the body-frame origins (world)."""
    n = q.shape[0]
    tmp = np.empty((4, 4))
    A = np.empty((4, 4))
    eye = np.eye(4)
    wx = wy = wz = 0.0  # w_{i-1}
    ux = uy = uz = 0.0  # v_o(i-1)
    px = py = pz = 0.0  # o_{i-1}
    for i in range(n + 1):
        if i < n:
            joint_transform(pk, i, q[i], A)
        else:
            constant_transform(pk, n, A)
        mm4(eye if i == 0 else T[i - 1], A, tmp)
        T[i] = tmp
        # origin velocity: v_o(i) = v_o(i-1) + w_{i-1} x (o_i - o_{i-1})
        dx, dy, dz = tmp[0, 3] - px, tmp[1, 3] - py, tmp[2, 3] - pz
        ux += wy * dz - wz * dy
        uy += wz * dx - wx * dz
        uz += wx * dy - wy * dx
        px, py, pz = tmp[0, 3], tmp[1, 3], tmp[2, 3]
        if i < n:
            for r in range(3):
                Z[i, r] = tmp[r, 0] * pk[i, KS] + tmp[r, 1] * pk[i, KS + 1] + tmp[r, 2] * pk[i, KS + 2]
                Z[i, 3 + r] = (tmp[r, 0] * pk[i, KS + 3] + tmp[r, 1] * pk[i, KS + 4]
                               + tmp[r, 2] * pk[i, KS + 5])
            # w_i = w_{i-1} + Z_w qd_i; v_o(i) += Z_v qd_i (the axis passes through o_i)
            wx += Z[i, 0] * qd[i]
            wy += Z[i, 1] * qd[i]
            wz += Z[i, 2] * qd[i]
            ux += Z[i, 3] * qd[i]
            uy += Z[i, 4] * qd[i]
            uz += Z[i, 5] * qd[i]
        w[i, 0], w[i, 1], w[i, 2] = wx, wy, wz
        vo[i, 0], vo[i, 1], vo[i, 2] = ux, uy, uz


@njit(cache=True)
def project_body(J: np.ndarray, Jd: np.ndarray, P: np.ndarray, X: np.ndarray, M: np.ndarray,
                 C: np.ndarray, cols: int, PJ: np.ndarray, K: np.ndarray) -> None:
    """``M += J^T P J`` and ``C += J^T (P J-dot + X J)`` for one body's ``6 x n`` Jacobian
    ``J`` (only its first ``cols`` columns are non-zero): the body term of 000 (35)-(36) and
    of 001 (46)-(47), which differ only in the velocity coordinates and in ``X``.  ``PJ``, ``K``:
    ``(6, n)`` scratch."""
    for r in range(6):
        for j in range(cols):
            s = 0.0
            t = 0.0
            for k in range(6):
                s += P[r, k] * J[k, j]
                t += P[r, k] * Jd[k, j] + X[r, k] * J[k, j]
            PJ[r, j] = s
            K[r, j] = t
    for a in range(cols):
        for b in range(cols):
            s = 0.0
            t = 0.0
            for r in range(6):
                s += J[r, a] * PJ[r, b]
                t += J[r, a] * K[r, b]
            M[a, b] += s
            C[a, b] += t
