"""Packed model and workspace layout shared by every jitted kernel (the Model/Data split).

Kernels take two 2-D float64 arrays, so a call from Python unboxes few arguments:

``mp`` (model parameters, immutable, shape ``(n + 3, NP)``), built by
``rbd_ros.data.pack_model``.  Row ``i < n`` is joint/link ``i``:

* ``ATYPE``: 0.0 revolute, 1.0 prismatic
* ``AR`` .. ``AR + 8``: rotation of ``A_i = mdh_transform(a, alpha, d, theta)`` at ``q = 0``
  (row-major), ``AP`` .. ``AP + 2`` its translation.  The joint transform is then
  ``^{i-1}T_i(q) = A_i Rz(q)`` (revolute) or ``A_i Tz(q)`` (prismatic): exact, because in
  003 §1.6 ``Rz(theta_0 + q) Tz(d) = Rz(theta_0) Tz(d) Rz(q)`` and
  ``Tz(d_0 + q) = Tz(d_0) Tz(q)``.  So the one MDH formula (``mdh.mdh_transform``) is
  evaluated once, at packing time, and kernels only apply the joint motion
  (Pinocchio's ``placement * joint.calc(q)``).
* ``MASS``, ``COM`` (3, frame i), ``MCOM`` (3, m * com), ``IC`` (9, inertia about the centre
  of mass, frame i axes), ``ARM`` (armature G^2 Jm, 003 (6.17)), ``VISC``, ``COUL``.

Row ``n`` is the base (world -> frame 0) and row ``n + 1`` the tool (frame n -> tool),
both in the ``AR``/``AP`` columns; row ``n`` also holds the floating base body in ``MASS``,
``COM``, ``MCOM``, ``IC`` (zero for a fixed base).  Row ``n + 2``: ``GRAV`` world gravity (3) and ``A0`` the
RNEA base acceleration ``-R_base^T g`` in frame 0 (misprint 003 §4.5 step 1, docs/references.md),
``WHEEL`` a differential drive's wheels (``algorithm.planar_base``).

``ws`` (workspace, mutable, shape ``(2 n + NVEC + 1, max(NW, n))``), built by
``rbd_ros.data.Workspace``: rows ``i < n`` hold per-link quantities (columns below),
row ``n`` the tool pose, rows ``VROW(n) + k`` scratch vectors of length n, and the n x n
block starting at row ``MROW(n)`` a matrix (mass matrix / Cholesky factor).
"""
from __future__ import annotations

import numpy as np
from numba import njit

# ---- model columns ---------------------------------------------------------------------------
ATYPE = 0
AR = 1  # 9 entries, row-major
AP = 10  # 3
MASS = 13
COM = 14  # 3
MCOM = 17  # 3
IC = 20  # 9
ARM = 29
VISC = 30
COUL = 31
GRAV = 0  # in row n + 2
A0 = 3  # in row n + 2
WHEEL = 6  # in row n + 2 (diff drive, else 0): wheel radius r, separation s, and the wheels' spin
#            inertia on (v_x, omega), m_v = 2 I_a / r^2, I_omega = I_a s^2 / (2 r^2) (4)
NP = 32

# ---- workspace columns (rows i < n: link i) --------------------------------------------------
WR = 0  # local rotation ^{i-1}R_i (9)
WP = 9  # local position ^{i-1}p_i (3)
WW = 12  # omega_i, frame i (3)
WWD = 15  # omega-dot_i, frame i (3)
WVD = 18  # v-dot_i of the frame origin, frame i (3)
WF = 21  # force f_i, frame i (3)
WN = 24  # moment n_i, frame i (3)
WGR = 27  # world rotation of frame i (9)
WGP = 36  # world position of frame i (3)
# world-frame composite / spatial quantities (CRBA, ABA, Coriolis)
WCM = 39  # composite mass (1)
WCH = 40  # composite first moment m c, world (3)
WCI = 43  # composite rotational inertia about the world origin (9)
WS = 52  # joint motion subspace S_i = [omega; v_O], world (6)
WV = 58  # spatial velocity of link i [omega; v_O] (v_O: velocity of the body point at the
#          world origin), world (6)
WC = 64  # velocity-product acceleration / ABA bias c_i (6)
WU = 70  # ABA U_i (6)
WPA = 76  # ABA bias force pA_i (6)
WIA = 82  # ABA articulated inertia IA_i (36, row-major 6x6)
WD = 118  # ABA D_i (1), u_i (1)
WA = 120  # ABA spatial acceleration (6)
WCC = 126  # world centre of mass of link i (3)
WICC = 129  # inertia about the centre of mass, world axes (9)
WCS = 138  # cos, sin of the total joint angle theta_i (+ q_i for R joints) (2)
NW = 140

# ---- workspace scratch vectors ---------------------------------------------------------------
NVEC = 20  # number of length-n scratch rows
VZERO = 0  # scratch row 0 is kept all-zero (a zero q-dot / q-ddot for kernels)


@njit(cache=True, inline="always")
def com_inertia(mp: np.ndarray, i: int) -> tuple[float, float, float, float, float, float]:
    """The six distinct entries ``(Ixx, Ixy, Ixz, Iyy, Iyz, Izz)`` of link i's inertia about its
    centre of mass (``IC``: the symmetric 3x3, row-major, frame i axes)."""
    return mp[i, IC], mp[i, IC + 1], mp[i, IC + 2], mp[i, IC + 4], mp[i, IC + 5], mp[i, IC + 8]


@njit(cache=True)
def vrow(n: int) -> int:
    """First scratch-vector row of the workspace."""
    return n + 1


@njit(cache=True)
def mrow(n: int) -> int:
    """First row of the n x n matrix block of the workspace."""
    return n + 1 + NVEC


def ws_shape(n: int) -> tuple[int, int]:
    return (2 * n + 1 + NVEC, max(NW, n))
