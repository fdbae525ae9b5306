"""Analytical derivatives of the dynamics of a ``Robot`` (a mixin ``Robot`` inherits; the public
API is ``Robot.inverse_dynamics_derivatives`` and ``Robot.forward_dynamics_derivatives``).

* ``inverse_dynamics_derivatives(q, qd, qdd[, tool_wrench, include_actuators])`` ->
  ``(dtau_dq, dtau_dqd, M)``: the partial derivatives of ``inverse_dynamics`` (Pinocchio's
  ``computeRNEADerivatives``: ``dtau_dq``, ``dtau_dv``, ``dtau_da = M``);
* ``forward_dynamics_derivatives(q, qd, tau[, include_actuators])`` ->
  ``(dqdd_dq, dqdd_dqd, Minv)``: those of ``forward_dynamics`` (``computeABADerivatives``:
  ``ddq_dq``, ``ddq_dv``, ``ddq_dtau = M^{-1}``).

Each matrix is ``(n, n)``, row i the derivative of output i; batches of ``(N, n)`` states give
``(N, n, n)``.  Kernels and the derivation (CM18, docs/references.md): ``algorithm.rnea_derivatives``.
With ``include_actuators=True`` the armature is in ``M`` and the viscous friction in the
velocity derivative; Coulomb friction ``Tc sign(qd)`` contributes 0 (its derivative away from
``qd = 0``; at ``qd = 0`` it has none).  On a floating or planar base (``algorithm.root_derivatives``)
the matrices are ``(nv, nv)`` in the base's tangent space (Pinocchio's convention: ``dq`` the
right perturbation ``T exp(dq^)`` of the base pose, the base twist held in the base frame),
batches state by state; the planar base has no actuator model.  A ``diff_drive`` base's are
in its wheel inputs ``u`` and its independent speeds ``s = [v_x, omega, qd]``
(``robot.diff_drive_derivatives``): ``(du/dq, du/ds, du/ds-dot)`` and ``(ds-dot/dq, ds-dot/ds,
ds-dot/du)``, ``q`` in the tangent space as the planar base's.

The mixin uses the host's model and workspace (``dof``, ``root``, ``_mp``, ``_ws``, ``_mw``) and
its argument checks and batch runner (``_batch``, ``_wrench``, ``_run_batch``, ``_singular``),
all defined by ``Robot``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from rbd_ros.algorithm import rnea_derivatives as rd
from rbd_ros.algorithm.f8vector import NATIVE_CHECK
from rbd_ros.algorithm.first_use import on_first_call
from rbd_ros.bases.root_joint import MAX_YAW
from rbd_ros.lie import so3
from rbd_ros.robot import diff_drive_derivatives as ddd
from rbd_ros.robot import discrete
from rbd_ros.robot.discrete import twist_ad as _ad  # its home: the discrete steps use it per stage
from rbd_ros.util import validate

if TYPE_CHECKING:
    from rbd_ros.bases.root_joint import RootJoint
    from rbd_ros.model.mdh_model import MdhModel

_empty = np.empty
_PLANAR = np.array([0, 1, 5])  # the planar root's columns of the free-flyer's (root_derivatives)
_BLAS_FROM = rd.BLAS_FROM  # from this many joints the forward dynamics' entry point with numba's runtime
# The fast path: the checked entry points (``algorithm.rnea_derivatives``) called directly, each
# compiled on its first call (``first_use.on_first_call`` puts the compiled function here);
# where f8vector's unboxing checks are not verified, through their dispatchers (which type-check).
if NATIVE_CHECK:
    _id_entry = on_first_call(rd.rnea_derivatives_entry, globals(), "_id_entry")
    _fd_entry = on_first_call(rd.aba_derivatives_entry, globals(), "_fd_entry")
else:  # pragma: no cover - an interpreter whose ndarray layout f8vector does not know
    _id_entry, _fd_entry = rd.rnea_derivatives_entry, rd.aba_derivatives_entry
_fd_blas_entry = rd.aba_derivatives_blas_entry  # its dispatcher (numba's runtime: no f8vector)
_floating_entry = None  # root_derivatives.floating_derivatives_entry, compiled on first use (_floating_fast)


def _floating_fast(robot: Any, q: Any, v: Any, x: Any,
                   forward: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """A floating base's single state through ``root_derivatives.floating_derivatives_entry``
    (its module loaded, and the entry compiled, on the first call); ``None`` when the entry
    refuses anything (the full path then names it)."""
    global _floating_entry
    if _floating_entry is None:
        from rbd_ros.algorithm import root_derivatives as rt  # lazy: the moving bases' kernels, for a moving root only

        _floating_entry = (on_first_call(rt.floating_derivatives_entry, globals(), "_floating_entry")
                           if NATIVE_CHECK else rt.floating_derivatives_entry)
    nv = robot.nv
    out = _empty((4, nv, nv))
    try:
        if _floating_entry(robot._mw, q, v, x, forward, out) == 0:
            return out[0], out[1], out[2]
    except TypeError:  # not 1-D float64 arrays
        pass
    return None


_planar_entry = None  # root_derivatives.planar_derivatives_entry, compiled on first use (_planar_fast)


def _planar_fast(robot: Any, q: Any, v: Any, x: Any,
                 forward: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``_floating_fast`` for a planar base (``root_derivatives.planar_derivatives_entry``)."""
    global _planar_entry

    if _planar_entry is None:
        from rbd_ros.algorithm import root_derivatives as rt  # lazy: the moving bases' kernels, for a moving root only

        _planar_entry = (on_first_call(rt.planar_derivatives_entry, globals(), "_planar_entry")
                         if NATIVE_CHECK else rt.planar_derivatives_entry)
    nv = robot.nv
    out, full = _empty((4, nv, nv)), _empty((4, nv + 3, nv + 3))
    try:
        if _planar_entry(robot._mw, q, v, x, forward, full, out, MAX_YAW) == 0:
            return out[0], out[1], out[2]
    except TypeError:  # not 1-D float64 arrays
        pass
    return None


class Derivatives:
    """``Robot``'s dynamics derivatives (see the module docstring)."""

    # the host's members the mixin uses, all set or defined by ``Robot`` and its fronts (the
    # floating and mobile ones have their own _q, _vec, _rows, forward_dynamics, _singular);
    # declared for the type checker only: annotations, no class attributes
    model: MdhModel
    dof: int
    nv: int
    nu: int
    base_type: str
    root: RootJoint
    _nn: tuple[int, int]
    _mp: np.ndarray
    _ws: np.ndarray
    _mw: np.ndarray | None  # Workspace.mw's type (a Robot's workspace has it: given the packed model)
    _wrench: Callable[[Any], np.ndarray]
    _q: Callable[..., np.ndarray]
    _vec: Callable[..., np.ndarray]
    _rows: Callable[..., list[np.ndarray]]
    _batch: Callable[..., tuple[bool, list[np.ndarray]]]
    _run_batch: Callable[..., None]
    forward_dynamics: Callable[..., np.ndarray]
    _singular: Callable[..., Exception]

    # ---- a moving base (algorithm.root_derivatives) --------------------------------------------
    def _root_only(self, what: str, include_actuators: bool) -> None:
        """Refuse, by name, what the moving-base derivatives do not cover."""
        if include_actuators and self.base_type != "floating":
            raise NotImplementedError(f"{what}(include_actuators=True): a {self.base_type} base has no "
                                      "actuator model (its dynamics refuse it too)")

    def _root_embed(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(q_joints, g_b, R, index)`` of a validated moving-base ``q``: base-frame gravity
        ``R^T g``, the base rotation and the free-flyer velocity index of each of our
        velocity coordinates (``root_derivatives``: the planar root is columns 0, 1, 5)."""
        if self.base_type == "floating":
            R = so3.quaternion_to_rotation(q[3:7] / np.linalg.norm(q[3:7]))
            idx = np.arange(v.shape[-1])
            qj = q[7:]
        else:
            c, s = np.cos(q[2]), np.sin(q[2])
            R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
            idx = np.concatenate([_PLANAR, 6 + np.arange(self.dof)])
            qj = q[3:]
        return np.ascontiguousarray(qj), R.T @ self.model.gravity, R, idx

    def _root_rnea_derivatives(self, q: np.ndarray, v: np.ndarray, a: np.ndarray, w: np.ndarray | None,
                               act: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One validated state: ``(dtau/dq, dtau/dv, M)`` in our velocity coordinates."""
        from rbd_ros.algorithm import root_derivatives as rt  # lazy: the moving bases' kernels, for a moving root only

        qj, g, R, idx = self._root_embed(q, v)
        nf = 6 + self.dof
        V, A = np.zeros(nf), np.zeros(nf)
        V[idx], A[idx] = v, a
        wb = np.zeros(6) if w is None else np.concatenate([R.T @ w[:3], R.T @ w[3:]])  # base axes
        out = _empty((3, nf, nf))
        rt.rnea_derivatives_root(self._mp, self._ws, qj, g, V, A, wb, w is not None, act, out[0], out[1], out[2])
        if idx.shape[0] != nf:
            out = out[:, idx][:, :, idx]
        return out[0], out[1], out[2]

    def _root_inverse_dynamics_derivatives(self, q: Any, v: Any, a: Any, tool_wrench: Any,
                                           include_actuators: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        act = validate.flag("include_actuators", include_actuators)
        self._root_only("inverse_dynamics_derivatives", act)
        w = None if tool_wrench is None else self._wrench(tool_wrench)
        rolling = self.base_type == "diff_drive"  # v_y = a_y = 0
        if np.ndim(q) == 2:
            q, v, a = self._root_rows(q, ("v", v), ("a", a))
            res = [self._root_rnea_derivatives(*x, w, act) for x in zip(q, v, a)]
        else:
            more = (True,) if rolling else ()  # (the floating front's _vec has no rolling check)
            q, v, a = self._q(q), self._vec("v", v, self.nv, *more), self._vec("a", a, self.nv, *more)
            fast = _planar_fast(self, q, v, a, False) if rolling and w is None and not act else None
            res = [fast or self._root_rnea_derivatives(q, v, a, w, act)]
        if rolling:  # in the wheel inputs and the independent speeds (robot.diff_drive_derivatives)
            res = [ddd.inverse(self, *x) for x in res]
        dq, dv, M = (np.stack(r) for r in zip(*res)) if np.ndim(q) == 2 else res[0]
        inputs = {"q": q, "v": v, "a": a}
        return (validate.finite_result("inverse_dynamics_derivatives (dtau_dq)", dq, **inputs),
                validate.finite_result("inverse_dynamics_derivatives (dtau_dv)", dv, **inputs),
                validate.finite_result("inverse_dynamics_derivatives (M)", M, **inputs))

    def _root_rows(self, q: Any, *rates: tuple[str, Any]) -> list[np.ndarray]:
        """A validated batch of a moving base (the front's ``_rows``)."""
        if self.base_type == "floating":
            return self._rows(q, *rates)
        rolling = self.base_type == "diff_drive"  # v_y = a_y = 0 in every row; tau: the nu inputs
        return self._rows(q, *((name, x, self.nu if name == "tau" else self.nv, rolling and name != "tau")
                               for name, x in rates))

    def _root_forward_dynamics_derivatives(self, q: Any, v: Any, tau: Any,
                                           include_actuators: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        act = validate.flag("include_actuators", include_actuators)
        self._root_only("forward_dynamics_derivatives", act)
        kw = {"include_actuators": act} if self.base_type == "floating" else {}
        if np.ndim(q) == 2:
            q, v, tau = self._root_rows(q, ("v", v), ("tau", tau))
            res = [self._root_forward_dynamics_derivatives(*x, include_actuators) for x in zip(q, v, tau)]
            return tuple(np.stack(r) for r in zip(*res))  # type: ignore[return-value]
        qdd = self.forward_dynamics(q, v, tau, **kw)  # validates q, v, tau; names a singular M
        q, v = self._q(q), self._vec("v", v, self.nv)
        fast = _planar_fast(self, q, v, qdd, False) if self.base_type == "diff_drive" else None
        dq, dv, M = fast or self._root_rnea_derivatives(q, v, qdd, None, act)
        if self.base_type == "diff_drive":  # in the independent speeds (robot.diff_drive_derivatives)
            try:
                dq, dv, du = ddd.forward(self, dq, dv, M)
            except np.linalg.LinAlgError as exc:
                raise self._singular(q) from exc
            for name, x in (("dsdot_dq", dq), ("dsdot_ds", dv), ("dsdot_du", du)):
                validate.finite_result(f"forward_dynamics_derivatives ({name})", x, q=q, v=v, tau=tau)
            return dq, dv, du
        try:
            L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError as exc:
            raise self._singular(q, act) if self.base_type == "floating" else self._singular(q) from exc
        Linv = np.linalg.solve(L, np.eye(M.shape[0]))
        Minv = Linv.T @ Linv  # M^{-1} = L^{-T} L^{-1}
        dq, dv = -Minv @ dq, -Minv @ dv
        for name, x in (("dqdd_dq", dq), ("dqdd_dv", dv), ("Minv", Minv)):
            validate.finite_result(f"forward_dynamics_derivatives ({name})", x, q=q, v=v, tau=tau)
        return dq, dv, Minv

    def inverse_dynamics_derivatives(self, q: Any, qd: Any, qdd: Any, tool_wrench: Any = None,
                                     include_actuators: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dtau/dq, dtau/dqd, M)`` of ``inverse_dynamics(q, qd, qdd, tool_wrench,
        include_actuators)`` (``algorithm.rnea_derivatives``): ``(n, n)`` each, or ``(N, n, n)``."""
        if tool_wrench is None and include_actuators is False:
            if not self.root.nv0:
                out = _empty((3, *self._nn))  # one buffer, three views: one allocation
                try:
                    if _id_entry(self._mw, q, qd, qdd, out) == 0:
                        return out[0], out[1], out[2]
                except TypeError:  # not 1-D float64 arrays: the full path
                    pass
            elif self.base_type != "diff_drive":
                res = (_floating_fast if self.base_type == "floating" else _planar_fast)(self, q, qd, qdd, False)
                if res is not None:
                    return res
        return self._inverse_dynamics_derivatives(q, qd, qdd, tool_wrench, include_actuators)

    def _inverse_dynamics_derivatives(self, q: Any, qd: Any, qdd: Any, tool_wrench: Any,
                                      include_actuators: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The validated path of ``inverse_dynamics_derivatives`` (any input, batches)."""
        if self.root.nv0:
            return self._root_inverse_dynamics_derivatives(q, qd, qdd, tool_wrench, include_actuators)
        batch, (q, qd, qdd) = self._batch(q=q, qd=qd, qdd=qdd)
        act = validate.flag("include_actuators", include_actuators)
        use_w = tool_wrench is not None
        w = self._wrench(tool_wrench) if use_w else np.zeros(6)
        shape = (*q.shape[:-1], self.dof, self.dof)
        dq, dqd, M = _empty(shape), _empty(shape), _empty(shape)
        if batch:
            self._run_batch(rd.rnea_derivatives_batch, rd.rnea_derivatives_rows, q.shape[0], q, qd, qdd, w, use_w,
                            act, dq, dqd, M)
        else:
            rd.rnea_derivatives(self._mp, self._ws, q, qd, qdd, w, use_w, act, dq, dqd, M)
        inputs = {"q": q, "qd": qd, "qdd": qdd, "tool_wrench": w}
        return (validate.finite_result("inverse_dynamics_derivatives (dtau_dq)", dq, **inputs),
                validate.finite_result("inverse_dynamics_derivatives (dtau_dqd)", dqd, **inputs),
                validate.finite_result("inverse_dynamics_derivatives (M)", M, **inputs))

    def forward_dynamics_derivatives(self, q: Any, qd: Any, tau: Any,
                                     include_actuators: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(dqdd/dq, dqdd/dqd, M^{-1} = dqdd/dtau)`` of ``forward_dynamics(q, qd, tau,
        include_actuators)`` (``algorithm.rnea_derivatives``): ``(n, n)`` each, or ``(N, n, n)``.
        Raises ``SingularMassMatrixError`` naming the joints when M(q) is singular."""
        if include_actuators is False:
            if not self.root.nv0:
                out = _empty((3, *self._nn))
                try:
                    if (_fd_entry if self.dof < _BLAS_FROM else _fd_blas_entry)(self._mw, q, qd, tau, out) == 0:
                        return out[0], out[1], out[2]
                except (TypeError, ZeroDivisionError):  # the full path names the cause
                    pass
            elif self.base_type != "diff_drive":
                res = (_floating_fast if self.base_type == "floating" else _planar_fast)(self, q, qd, tau, True)
                if res is not None:
                    return res
        return self._forward_dynamics_derivatives(q, qd, tau, include_actuators)

    def _forward_dynamics_derivatives(self, q: Any, qd: Any, tau: Any,
                                      include_actuators: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The validated path of ``forward_dynamics_derivatives`` (any input, batches)."""
        if self.root.nv0:
            return self._root_forward_dynamics_derivatives(q, qd, tau, include_actuators)
        batch, (q, qd, tau) = self._batch(q=q, qd=qd, tau=tau)
        act = validate.flag("include_actuators", include_actuators)
        shape = (*q.shape[:-1], self.dof, self.dof)
        dq, dqd, Minv = _empty(shape), _empty(shape), _empty(shape)
        try:
            if batch:
                self._run_batch(rd.aba_derivatives_batch, rd.aba_derivatives_rows, q.shape[0], q, qd, tau, act,
                                dq, dqd, Minv)
            else:
                rd.aba_derivatives(self._mp, self._ws, q, qd, tau, act, dq, dqd, Minv)
        except (ZeroDivisionError, SystemError) as exc:  # SystemError: from the prange kernel
            raise self._singular(q, act) from exc
        for name, out in (("dqdd_dq", dq), ("dqdd_dqd", dqd), ("Minv", Minv)):
            if not np.isfinite(out).all():  # a singular M (NaN from the kernel), or an overflow
                try:
                    validate.finite_result(f"forward_dynamics_derivatives ({name})", out, q=q, qd=qd, tau=tau)
                except validate.NonFiniteResultError as exc:
                    raise self._singular(q, act, fallback=exc) from None
        return dq, dqd, Minv

    def linearize(self, q: Any, v: Any, tau: Any, dt: float | None = None, integrator: str | None = None,
                  include_actuators: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(A, B)`` of the dynamics at ``(q, v, tau)``.  ``dt`` None: continuous time (below);
        ``dt > 0``: the discrete time ``[dq+; dv+] = A_d [dq; dv] + B_d du`` of ONE step of
        ``integrator`` (``Robot.simulate``'s names: ``rk4`` (default), ``semi_implicit_euler`` /
        ``euler`` on a fixed base; ``rkmk4`` (default), ``lie_euler`` on a floating base; ``rk4``
        on a planar or diff-drive one), ``tau`` held over the step: its exact Jacobians by the chain rule
        through the stages (``robot.discrete``), in the same tangent coordinates.  A bad ``dt``
        (<= 0, NaN, Inf) or an unknown integrator: ``ValueError`` naming it.

        Continuous time: ``d/dt [dq; dv] = A [dq; dv]
        + B du`` in the tangent space (``dq`` as in ``forward_dynamics_derivatives``),

            ``A = [[A_qq, I], [dqdd/dq, dqdd/dv]]``,  ``B = [[0], [M^{-1}]]``

        ``(2 nv, 2 nv)`` and ``(2 nv, nv)`` (or ``(N, ...)`` for batches); a diff_drive base:
        the state ``[dq; ds]`` in its independent speeds ``s`` (``nv + ns``, ``ns = nv - 1``),
        ``dq-dot = A_qq dq + S ds``, the inputs its ``nu`` wheel and joint efforts (``dt``
        given: its rolling RK4, ``rk4``, in the same coordinates).  ``A_qq = 0`` on a
        fixed base; on a floating or planar base its base block is ``-ad(v_b)`` (the error
        ``q' = q exp(dq^)`` of two motions with base twists ``v_b``, ``v_b + dv_b`` moves as
        ``dq-dot = dv_b - ad(v_b) dq``; ``ad`` in the [linear; angular] order of ``v``), zero
        on the joints.  As ``dt -> 0``, ``(A_d - I) / dt -> A`` and ``B_d / dt -> B``."""

        dt, integrator = discrete.check_step(self.base_type, dt, integrator)
        if dt is not None:
            act = validate.flag("include_actuators", include_actuators)
            # dt given: check_step named the integrator (its default, or the one asked for)
            return discrete.discrete_linearize(self, q, v, tau, dt, cast(str, integrator), act)
        fq, fv, Minv = self.forward_dynamics_derivatives(q, v, tau, include_actuators)
        nv, ns = fq.shape[-1], fv.shape[-1]  # a diff drive: the ns = nv - 1 independent speeds
        A = np.zeros((*fq.shape[:-2], nv + ns, nv + ns))
        A[..., :nv, nv:] = ddd.projections(self)[0] if ns < nv else np.eye(nv)  # dq-dot = v = S s
        A[..., nv:, :nv] = fq
        A[..., nv:, nv:] = fv
        B = np.zeros((*fq.shape[:-2], nv + ns, Minv.shape[-1]))
        B[..., nv:, :] = Minv
        if self.root.nv0:
            vb = np.asarray(v, dtype=float)  # validated by forward_dynamics_derivatives
            idx = np.arange(6) if self.base_type == "floating" else _PLANAR
            V = np.zeros((*vb.shape[:-1], 6))
            V[..., idx] = vb[..., :idx.size]
            A[..., :idx.size, :idx.size] = -_ad(V)[..., idx[:, None], idx]
        return A, B


__all__ = ["Derivatives"]
