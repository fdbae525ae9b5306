"""Statics and inverse kinematics of a ``Robot`` (a mixin ``Robot`` inherits; the public API
is ``Robot.static_torques``, ``Robot.joint_wrenches``, ``Robot.ik`` and ``IKResult``).

* ``static_torques``: ``tau = J^T m [+ g(q)]`` (003 (2.2), the corrected (2.7) for a wrench in
  tool axes; kernels in ``algorithm.statics``); ``joint_wrenches``: the static RNEA backward
  pass (003 (4.36)-(4.37)).
* ``ik``: Levenberg-Marquardt damped least squares with restarts, or Newton 003 (1.20)-(1.23)
  (kernels in ``algorithm.ik``).

The mixin uses the host's model and workspace (``model``, ``dof``, ``data``, ``_mp``, ``_ws``)
and its argument checks (``_real``, ``_states``, ``_chunks``), all defined by ``Robot``.

Threads: the statics kernels hold the GIL, so they may share the robot's workspace with its
other single-state calls.  The LM kernels of ``ik`` release it (a timer or another thread stops
them through their stop flag), so ``ik`` never touches the robot's workspace: each thread solves
on workspaces and scratch of its own (``IKThreads``, made on a thread's first solve; a few kB,
freed with the thread), and ``request_ik_stop`` raises the flag of every thread's scratch.
"""
from __future__ import annotations

import threading
import time
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from rbd_ros.algorithm import ik as ikmod
from rbd_ros.algorithm import statics
from rbd_ros.model.data import Workspace, empty_workspace, thread_workspaces
from rbd_ros.model.mdh_model import MdhModel
from rbd_ros.util import validate

_f8 = np.dtype(np.float64)


class _Scratch:
    """One thread's IK buffers: ``ws`` (a workspace), ``S`` (LM scratch), ``wss`` and ``Ss``
    (one of each per ``prange`` chunk, for a batch of targets)."""

    __slots__ = ("ws", "S", "wss", "Ss", "__weakref__")

    def __init__(self, n: int, chunks: int) -> None:
        self.ws, self.S = empty_workspace(n), ikmod.ik_scratch(n)
        self.wss, self.Ss = thread_workspaces(n, chunks), ikmod.ik_scratch(n, chunks)


class IKThreads:
    """The IK buffers of one robot, one set per thread (module docstring), and the stop flag
    they share: ``scratch()`` is this thread's ``_Scratch``; ``request_stop`` / ``clear_stop``
    raise and lower the flag in every live thread's scratch (and in those made later, until
    cleared); ``lim`` is the sampling box of the joint limits (read only)."""

    def __init__(self, lower: np.ndarray, upper: np.ndarray, prismatic: np.ndarray, n: int,
                 chunks: int) -> None:
        self.lim = ikmod.sampling_box(lower, upper, prismatic)
        self.n, self.chunks = n, chunks
        self.stopped = False
        self._local = threading.local()
        self._lock = threading.Lock()
        self._live: "weakref.WeakSet[_Scratch]" = weakref.WeakSet()  # a thread's goes with it

    def scratch(self) -> _Scratch:
        """This thread's buffers (made on its first call)."""
        try:
            return self._local.scratch
        except AttributeError:
            pass
        s = _Scratch(self.n, self.chunks)
        with self._lock:
            if self.stopped:
                ikmod.request_stop(s.S)
                ikmod.request_stop(s.Ss)
            self._live.add(s)
        self._local.scratch = s
        return s

    def _set(self, stop: bool) -> None:
        with self._lock:
            self.stopped = stop
            flag = ikmod.request_stop if stop else ikmod.clear_stop
            for s in list(self._live):
                flag(s.S)
                flag(s.Ss)

    def request_stop(self) -> None:
        """Raise the stop flag of every thread's scratch (``algorithm.ik.request_stop``)."""
        self._set(True)

    def clear_stop(self) -> None:
        """Lower it again."""
        self._set(False)


_MAKE_LOCK = threading.Lock()  # makes each robot's IKThreads once


class StaticsAndIK:
    """``Robot``'s statics and inverse kinematics (see the module docstring)."""

    # the host's members the mixin uses, all set or defined by ``Robot`` (declared for the type
    # checker only: annotations, no class attributes)
    model: MdhModel
    dof: int
    data: Workspace
    _mp: np.ndarray
    _ws: np.ndarray
    _real: Callable[[str, Any], np.ndarray]
    _states: Callable[..., np.ndarray]
    _chunks: Callable[[int], int]

    def _static_args(self, wrench: Any, frame: str) -> tuple[np.ndarray, bool]:
        w = self._real("wrench", wrench)
        if w.shape != (6,):
            raise ValueError(f"wrench must have shape (6,) [force; moment], got {w.shape}")
        validate.finite_array("wrench", w)
        if frame not in ("world", "tool"):
            raise ValueError(f"frame must be 'world' or 'tool', got {frame!r}")
        return w, frame == "tool"

    def static_torques(self, q: Any, wrench: Any, frame: str = "world",
                       include_gravity: bool = False) -> np.ndarray:
        """Joint torques that make the tool exert ``wrench = [f; n]`` on the environment
        (moment about the tool origin), ``tau = J^T m`` (003 (2.2); the corrected (2.7) for
        ``frame="tool"``: the wrench in tool axes), ``+ g(q)`` with ``include_gravity``
        (the torques that also hold the arm up).  ``(n,)``, or ``(N, n)`` for ``(N, n)`` q.
        Note the sign: ``inverse_dynamics``'s ``tool_wrench`` is the one the environment
        applies, so ``static_torques(q, w) == -inverse_dynamics(q, 0, 0, tool_wrench=w)``
        with gravity off (``algorithm.statics``)."""
        w, tool = self._static_args(wrench, frame)
        q = self._states("q", q)
        tau = np.empty_like(q)
        grav = validate.flag("include_gravity", include_gravity)
        for qk, tk in zip(q.reshape(-1, self.dof), tau.reshape(-1, self.dof)):
            statics.static_torques(self._mp, self._ws, qk, w, tool, grav, tk)
        return validate.finite_result("static_torques", tau, q=q, wrench=w)

    def joint_wrenches(self, q: Any, wrench: Any, frame: str = "world",
                       include_gravity: bool = False) -> np.ndarray:
        """``(n, 6)``: row i = ``[f_i; n_i]``, the force and moment (world axes, about joint
        i's frame origin) that link i-1 transmits to link i through joint i while the arm holds
        still and the tool exerts ``wrench`` (static RNEA backward pass, 003 (4.36)-(4.37))."""
        w, tool = self._static_args(wrench, frame)
        q = self._states("q", q, batch_ok=False)
        out = np.empty((self.dof, 6))
        statics.joint_wrenches(self._mp, self._ws, q, w, tool, validate.flag("include_gravity", include_gravity),
                               out, np.empty(self.dof))
        return validate.finite_result("joint_wrenches", out, q=q, wrench=w)

    def _ik_threads(self) -> IKThreads:
        """The robot's ``IKThreads``, made on first use (once, whichever thread asks first)."""
        buf = self.__dict__.get("_ik_buf")
        if buf is None:
            with _MAKE_LOCK:
                buf = self.__dict__.get("_ik_buf")
                if buf is None:
                    m = self.model
                    buf = IKThreads(m.lower, m.upper, m.joint_type == 1, self.dof, len(self.data.wss))
                    self._ik_buf = buf
        return buf

    def request_ik_stop(self) -> None:
        """Ask every ``ik`` running on this robot (in any thread) to end within one iteration:
        sets the kernels' stop flag (``algorithm.ik.request_stop``); a solve it ends returns its
        best pose so far, unsolved.  The flag stays set until ``clear_ik_stop``."""
        buf = self.__dict__.get("_ik_buf")  # none yet: no solve has run, none to stop
        if buf is not None:
            buf.request_stop()

    def clear_ik_stop(self) -> None:
        """Lower the stop flag ``request_ik_stop`` raised, so the next ``ik`` runs in full."""
        self._ik_threads().clear_stop()

    def ik_stop_requested(self) -> bool:
        """Whether the stop flag of ``request_ik_stop`` is raised (a solve it ended is unsolved
        for that reason, not because the target is out of reach)."""
        buf = self.__dict__.get("_ik_buf")
        return buf is not None and buf.stopped

    def _ik_targets(self, target: Any, position_only: bool) -> np.ndarray:
        """Targets as ``(N, 4, 4)`` poses (rotation unused when ``position_only``)."""
        t = self._real("target", target)
        if position_only and t.ndim in (1, 2) and t.shape[-1] == 3:
            T = np.tile(np.eye(4), (*t.shape[:-1], 1, 1))
            T[..., :3, 3] = t
            t = T
        if t.ndim not in (2, 3) or t.shape[-2:] != (4, 4):
            want = "(3,) / (N, 3) positions or " if position_only else ""
            raise ValueError(f"target must be {want}a (4, 4) pose or (N, 4, 4) poses, got {t.shape}")
        validate.finite_array("target", t)
        T = np.ascontiguousarray(t.reshape(-1, 4, 4))
        if not position_only:
            bad = ikmod.first_bad_pose(T)
            if bad >= 0:
                raise ValueError(f"target {bad} is not a rigid transform "
                                 "(rotation orthonormal with det +1, last row 0 0 0 1)")
        return T

    def ik(self, target: Any, seeds: Any = None, position_only: bool = False, method: str = "dls",
           position_tolerance: float = 1e-6, orientation_tolerance: float = 1e-6,
           max_iterations: int = 100, max_restarts: int = 50, timeout: float | None = None,
           gain: float = 0.5, seed: int = 0, q0: Any = None) -> "IKResult":
        """Joint angles that put the tool at ``target`` (``algorithm.ik``).

        ``target``: a 4x4 world pose, or ``(N, 4, 4)`` for a batch (``prange`` over targets);
        with ``position_only=True`` also a position ``(3,)`` / ``(N, 3)``.  ``seeds`` (the
        service's field; ``q0`` before: deprecated): the start ``(n,)`` or ``(N, n)``; None
        starts from random configurations inside the limits (``seed``: their random seed).

        ``method="dls"`` (default): Levenberg-Marquardt damped least squares, every iterate
        clamped into the joint limits, at most ``max_iterations`` steps per attempt, then up
        to ``max_restarts`` restarts from random in-limit configurations (reproducible from
        ``seed``) until both tolerances hold (1e-6 m, 1e-6 rad), or until ``timeout`` seconds
        (None: no time limit; checked between rounds of 8 attempts).  ``method="newton"``:
        003 (1.20)-(1.23) with gain ``gain`` from ``seeds`` (required), at most
        ``max_iterations`` steps, no limits and no restarts.

        Never raises for a target it cannot reach: ``solved`` is False and ``positions`` the
        best pose found (least ``|e|^2``).  Bad arguments raise ``ValueError``."""
        if q0 is not None:
            seeds = validate.renamed("Robot.ik", "q0", "seeds", q0, seeds)
        q0 = seeds
        if method not in ("dls", "newton"):
            raise ValueError(f"method must be 'dls' or 'newton', got {method!r}")
        position_tolerance = validate.positive("position_tolerance", position_tolerance)
        orientation_tolerance = validate.positive("orientation_tolerance", orientation_tolerance)
        gain = validate.positive("gain", gain)
        max_iterations = validate.integer("max_iterations", max_iterations, 1)
        max_restarts = validate.integer("max_restarts", max_restarts, 0)
        seed = validate.integer("seed", seed)
        position_only = validate.flag("position_only", position_only)
        if timeout is not None:
            timeout = validate.positive("timeout", timeout)
        if method == "dls" and timeout is None and not position_only:
            res = self._ik_one(target, q0, float(position_tolerance), float(orientation_tolerance),
                               int(max_iterations), int(max_restarts) + 1, int(seed))
            if res is not None:
                return res
        single = np.ndim(target) == (1 if position_only and np.shape(target)[-1:] == (3,) else 2)
        T = self._ik_targets(target, position_only)
        N, n = T.shape[0], self.dof
        use_q0 = q0 is not None
        if use_q0:
            q0 = self._states("seeds", q0)
            # a writable C copy, whatever came in (a broadcast row or a read-only array would
            # be another type to the kernels: a second compilation of each)
            q0 = np.array(np.broadcast_to(q0, (N, n)) if q0.ndim == 1 else q0, order="C")
            if q0.shape[0] != N:
                raise ValueError(f"seeds has {q0.shape[0]} rows for {N} targets")
        elif method == "newton":
            raise ValueError("method='newton' needs a start: seeds (003 §1.9 step 1)")
        else:
            q0 = np.zeros((N, n))
        rows = 3 if position_only else 6
        tol_p, tol_o = float(position_tolerance), float(orientation_tolerance)
        q, info = np.empty((N, n)), np.zeros((N, ikmod.NINFO))
        if method == "newton":
            sc = self._ik_threads().scratch()
            for k in range(N):
                ikmod.newton_solve(self._mp, sc.ws, sc.S, T[k], q0[k], rows, float(gain), tol_p,
                                   tol_o, int(max_iterations), q[k], info[k])
        else:
            self._ik_dls(T, q0, use_q0, rows, tol_p, tol_o, int(max_iterations),
                         int(max_restarts) + 1, timeout, int(seed), q, info)
        res = IKResult(q, info[:, 0] > 0.5, info[:, 1].copy(), info[:, 2].copy(),
                       info[:, 3].astype(np.int64), info[:, 4].astype(np.int64))
        return res.first() if single else res

    def _ik_one(self, target: Any, q0: Any, tol_p: float, tol_o: float, max_iter: int,
                attempts: int, seed: int) -> "IKResult | None":
        """The common call (one 4x4 float64 pose, q0 None or (n,) float64, no time limit) in
        one kernel call; None when anything differs or is wrong (the general path then runs
        and its checks produce the message)."""
        try:
            if target.shape != (4, 4) or target.dtype is not _f8:
                return None
            use_q0 = q0 is not None
            if use_q0 and (q0.shape != (self.dof,) or q0.dtype is not _f8):
                return None
        except AttributeError:
            return None
        T = np.ascontiguousarray(target)
        if ikmod.first_bad_pose(T[None]) >= 0:
            return None
        if use_q0:
            q0 = np.array(q0)  # writable, as the general path's (one kernel signature)
            if not np.isfinite(q0).all():
                return None
        ikt = self._ik_threads()
        if not use_q0:
            q0 = ikt.lim[0]  # unused
        sc = ikt.scratch()
        q, info = np.empty(self.dof), np.empty(ikmod.NINFO)
        ikmod.dls_solve(self._mp, sc.ws, sc.S, T, q0, use_q0, ikt.lim, 6, tol_p, tol_o, max_iter,
                        attempts, np.uint64(seed * 1_000_003 % (1 << 63)), q, info)
        return IKResult(q, bool(info[0] > 0.5), float(info[1]), float(info[2]), int(info[3]), int(info[4]))

    def _ik_dls(self, T: np.ndarray, q0: np.ndarray, use_q0: bool, rows: int, tol_p: float,
                tol_o: float, max_iter: int, attempts: int, timeout: float | None, seed: int,
                q: np.ndarray, info: np.ndarray) -> None:
        """Rounds of ``dls_solve`` over the unsolved targets until all succeed, the attempts
        are used up, ``timeout`` passes or another thread sets the kernels' stop flag
        (``algorithm.ik.request_stop``); keeps each target's best pose over the rounds."""

        t_end = None if timeout is None else time.perf_counter() + timeout
        ikt = self._ik_threads()
        lim, sc = ikt.lim, ikt.scratch()
        todo = np.arange(T.shape[0])
        used = np.zeros(T.shape[0], dtype=np.int64)
        rnd = 0
        while todo.size:
            # the first call may take all attempts when there is no time limit
            k_att = attempts if t_end is None else min(attempts, 8)
            k_att = min(k_att, attempts - int(used[todo[0]]))
            s = np.uint64((seed * 1_000_003 + rnd * 7_919) % (1 << 63))
            if todo.size == 1:
                i = int(todo[0])
                qi, ii = np.empty(self.dof), np.empty(ikmod.NINFO)
                ikmod.dls_solve(self._mp, sc.ws, sc.S, T[i], q0[i], use_q0 and rnd == 0, lim, rows,
                                tol_p, tol_o, max_iter, k_att, s + np.uint64(i), qi, ii)
                qn, inn = qi[None], ii[None]
            else:
                qn, inn = np.empty((todo.size, self.dof)), np.empty((todo.size, ikmod.NINFO))
                Tt = T if rnd == 0 else np.ascontiguousarray(T[todo])
                q0t = q0 if rnd == 0 else np.ascontiguousarray(q0[todo])
                ikmod.dls_solve_batch(self._mp, sc.wss, sc.Ss, self._chunks(todo.size), Tt, q0t,
                                      use_q0 and rnd == 0, lim, rows, tol_p, tol_o, max_iter, k_att,
                                      s, qn, inn)
            err = inn[:, 1] ** 2 + inn[:, 2] ** 2
            better = (rnd == 0) | (inn[:, 0] > 0.5) | (err < info[todo, 1] ** 2 + info[todo, 2] ** 2)
            iters = inn[:, 3] + (info[todo, 3] if rnd else 0.0)
            q[todo[better]] = qn[better]
            info[todo[better]] = inn[better]
            info[todo, 3] = iters
            used[todo] += inn[:, 4].astype(np.int64)
            info[todo, 4] = used[todo]
            rnd += 1
            todo = todo[(info[todo, 0] < 0.5) & (used[todo] < attempts)]
            if t_end is not None and time.perf_counter() > t_end:
                break
            if ikmod.stop_requested(sc.S) or ikmod.stop_requested(sc.Ss):  # ikmod.request_stop
                break


#: IKResult's names before issue 29 -> its names now (one vocabulary with the service's
#: response and ``DynamicsClient.inverse_kinematics``); the old ones warn for one release
IK_OLD_NAMES = {"q": "positions", "success": "solved", "position_error": "position_errors",
                "orientation_error": "orientation_errors"}


class IKResult:
    """Result of ``Robot.ik``, of ``/rbd/inverse_kinematics`` (its response's fields of the
    same names) and of ``DynamicsClient.inverse_kinematics``: ``positions`` (n,) [or (N, n)]
    the joint positions found (the best pose found when not solved), ``solved`` (bool: both
    tolerances met inside the limits), ``position_errors`` (m), ``orientation_errors`` (rad,
    0 for position-only targets), ``iterations`` (damped steps over all attempts),
    ``attempts``; scalars for one target, arrays for a batch.

    The names before issue 29 (``q``, ``success``, ``position_error``, ``orientation_error``)
    still read, with a ``DeprecationWarning``, for one release."""

    __slots__ = ("positions", "solved", "position_errors", "orientation_errors", "iterations",
                 "attempts")

    def __init__(self, positions: np.ndarray, solved: Any, position_errors: Any,
                 orientation_errors: Any, iterations: Any, attempts: Any) -> None:
        self.positions, self.solved, self.position_errors = positions, solved, position_errors
        self.orientation_errors, self.iterations, self.attempts = orientation_errors, iterations, attempts

    def __getattr__(self, name: str) -> Any:  # only for names that are not slots
        new = IK_OLD_NAMES.get(name)
        if new is None:
            raise AttributeError(f"'IKResult' object has no attribute '{name}'")

        warnings.warn(f"IKResult.{name} is deprecated, use IKResult.{new} ({name} goes in the "
                      "next release)", DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    def first(self) -> "IKResult":
        """The single-target form (scalars, ``positions`` of shape (n,))."""
        return IKResult(self.positions[0], bool(self.solved[0]), float(self.position_errors[0]),
                        float(self.orientation_errors[0]), int(self.iterations[0]),
                        int(self.attempts[0]))

    def __repr__(self) -> str:
        return (f"IKResult(solved={self.solved}, position_errors={self.position_errors}, "
                f"orientation_errors={self.orientation_errors}, iterations={self.iterations})")


__all__ = ["IKResult", "StaticsAndIK"]
