"""Model/data split for the jitted kernels (Pinocchio's ``Model`` / ``Data``).

``pack_model(model)`` turns an ``MdhModel`` into the immutable float array every kernel
reads (layout in ``rbd_ros.algorithm.layout``); ``Workspace`` holds the preallocated
scratch arrays, one per thread for the ``prange`` batch kernels, so no kernel allocates in
its hot path.
"""
from __future__ import annotations

import numba
import numpy as np

from rbd_ros.algorithm import layout as L
from rbd_ros.algorithm.mdh import mdh_transform
from rbd_ros.model.mdh_model import PRISMATIC, MdhModel


def pack_model(model: MdhModel) -> np.ndarray:
    """The packed model ``mp`` (shape ``(n + 3, NP)``, C-contiguous).

    Immutable by convention, not by ``setflags(write=False)``: numba's dispatcher types a
    read-only array differently and its call path is measurably slower (~50 ns per call).

    Each joint's constant transform ``A_i`` comes from ``mdh_transform`` (the one MDH
    formula, 003 §1.6) at ``q = 0``; see ``layout`` for why
    ``^{i-1}T_i(q) = A_i Rz(q)`` / ``A_i Tz(q)`` is exact.
    """
    n = model.dof
    mp = np.zeros((n + 3, L.NP))
    for i in range(n):
        A = mdh_transform(float(model.a[i]), float(model.alpha[i]), float(model.d[i]),
                          float(model.theta[i]))
        mp[i, L.ATYPE] = 1.0 if model.joint_type[i] == PRISMATIC else 0.0
        mp[i, L.AR:L.AR + 9] = A[:3, :3].ravel()
        mp[i, L.AP:L.AP + 3] = A[:3, 3]
        m = float(model.mass[i])
        mp[i, L.MASS] = m
        mp[i, L.COM:L.COM + 3] = model.com[i]
        mp[i, L.MCOM:L.MCOM + 3] = m * model.com[i]
        mp[i, L.IC:L.IC + 9] = model.inertia[i].ravel()
    mp[:n, L.ARM] = model.armature
    mp[:n, L.VISC] = model.viscous
    mp[:n, L.COUL] = model.coulomb
    for row, T in ((n, model.base), (n + 1, model.tool)):
        mp[row, L.AR:L.AR + 9] = T[:3, :3].ravel()
        mp[row, L.AP:L.AP + 3] = T[:3, 3]
    m = model.base_mass  # the floating base body (row n; unused with a fixed base)
    mp[n, L.MASS] = m
    mp[n, L.COM:L.COM + 3] = model.base_com
    mp[n, L.MCOM:L.MCOM + 3] = m * model.base_com
    mp[n, L.IC:L.IC + 9] = model.base_inertia.ravel()
    mp[n + 2, L.GRAV:L.GRAV + 3] = model.gravity
    mp[n + 2, L.A0:L.A0 + 3] = -model.base[:3, :3].T @ model.gravity
    r, s = model.wheel_radius, model.wheel_separation
    if r > 0.0:  # a differential drive's wheels (formulations.diff_drive.Wheels)
        k = model.wheel_spin_inertia / r ** 2
        mp[n + 2, L.WHEEL:L.WHEEL + 4] = r, s, 2.0 * k, 0.5 * k * s ** 2
    return mp


def empty_workspace(n: int) -> np.ndarray:
    """One workspace ``ws`` for a chain of ``n`` joints (zeroed)."""
    return np.zeros(L.ws_shape(n))


def thread_workspaces(n: int, threads: int | None = None) -> np.ndarray:
    """A stack ``(threads, *ws_shape)`` of workspaces, one per ``prange`` chunk."""
    # numba.config sets its names at import (from the environment): the checker cannot see them
    t = numba.config.NUMBA_NUM_THREADS if threads is None else threads  # type: ignore[attr-defined]
    return np.zeros((max(1, t), *L.ws_shape(n)))


def model_workspace(mp: np.ndarray) -> np.ndarray:
    """The packed model and one workspace in a single C-contiguous array ``mw``.

    Row 0 is a header (``mw[0, 0] = n``), rows ``1 .. n + 3`` the packed model (columns
    beyond ``NP`` zero), the remaining rows a zeroed workspace (``ws_shape(n)``).  Views
    ``mw[1:n + 4]`` and ``mw[n + 4:]`` are C-contiguous ``mp`` / ``ws`` arrays the kernels
    accept, in NumPy and inside jitted code: the validated single-call entry points
    (``algorithm.checked``) take ``mw`` as one argument instead of two, because every array
    argument of a numba call costs tens of nanoseconds to type and unbox.
    """
    n = mp.shape[0] - 3
    rows, cols = L.ws_shape(n)
    mw = np.zeros((1 + n + 3 + rows, max(cols, mp.shape[1])))
    mw[0, 0] = n
    mw[1:n + 4, :mp.shape[1]] = mp
    return mw


class Workspace:
    """Preallocated scratch for one ``Robot``: ``ws`` for single-state calls, ``wss`` (one
    per thread) for batch calls, and output buffers of the low-level ``Robot.kernels`` API
    (``tau``, ``g``, ``qdd``, ``M``, ``J``: like Pinocchio's ``data.tau``, overwritten by the next
    call).

    Given the packed model ``mp``, ``mw`` holds it and ``ws`` together (``model_workspace``);
    ``mp`` and ``ws`` are then views of ``mw`` (``mp`` has ``mw``'s width, its extra columns
    zero)."""

    def __init__(self, n: int, mp: np.ndarray | None = None) -> None:
        self.n = n
        if mp is None:
            self.mw = None
            self.mp = None
            self.ws = empty_workspace(n)
        else:
            if mp.shape[0] != n + 3:
                raise ValueError(f"packed model has {mp.shape[0] - 3} joints, workspace {n}")
            self.mw = model_workspace(mp)
            self.mp = self.mw[1:n + 4]
            self.ws = self.mw[n + 4:]
        self.wss = thread_workspaces(n)
        self.tau = np.zeros(n)
        self.g = np.zeros(n)
        self.qdd = np.zeros(n)
        self.M = np.zeros((n, n))
        self.J = np.zeros((6, n))
        self.T = np.zeros((4, 4))
