"""``Robot``: the public Python API over the jitted kernels of ``rbd_ros.algorithm``.

Conventions (all SI, world frame = the URDF ``base_link``):

* states ``q, qd, qdd, tau`` have shape ``(n,)`` (one state) or ``(N, n)`` (a batch; batch
  kernels run ``prange``-parallel over states from ``base_batch.PARALLEL_MIN`` states on, on
  one thread below); results have the matching leading shape.
  Shapes and finiteness are checked here (``ValueError`` naming the argument); the kernels
  trust their inputs.
* dynamics: ``tau = M(q) qdd + h(q, qd)``, ``h = C(q, qd) qd + g(q)``
  (003 (5.1)), rigid body only by default.  With
  ``include_actuators=True``: ``+ G^2 Jm qdd + B qd + Tc sign(qd)`` (003 (6.16)-(6.17)).
* ``tool_wrench = [f; m]``: applied *by the environment on the tool*, world frame, moment
  about the tool origin; ``inverse_dynamics`` returns ``ID - J_tool^T w`` (the joint torques
  that produce the motion while the environment pushes with ``w``).
* Jacobians are geometric, ``(6, n)`` rows ``[linear; angular]`` in the world frame, of the
  origin of the tool (default) or of a link frame.

A lower-level API, ``robot.kernels``, calls the kernels with no validation at all and
returns preallocated buffers (like Pinocchio's ``data.tau``), overwritten by the next call.

Threads: every method is right from any number of threads, on every base
(``test/core/test_thread_stress.py``).  A ``Robot`` owns one workspace (``robot.data``) shared
by the calls whose kernels hold the GIL (a kernel call then runs whole before another thread's
starts); a kernel that releases the GIL never touches it: ``simulate`` integrates on a private
workspace (a few kB per call) and ``ik`` solves on per-thread workspaces and scratch
(``statics.IKThreads``).  For real parallelism use the batch calls or one ``Robot`` per thread
(``Robot(robot.model)`` is cheap once the kernels are compiled).  ``robot.kernels`` returns
``robot.data``'s buffers and is not for concurrent use.

Errors: ``ValueError`` for bad arguments (one rule per kind of argument: ``rbd_ros.util.validate``);
``SingularMassMatrixError`` (a ``ValueError``) when M(q) is singular (a massless end of the
chain), naming the joints; ``NonFiniteResultError`` (a ``ValueError``, ``rbd_ros.util.validate``)
when finite inputs give a NaN or Inf result (every result is checked before it leaves, e.g.
``qd = 1e200`` overflows), naming the cause; ``SimulationError`` when a simulation diverges
(NaN or Inf), with the time it happened.

Three concerns live in modules of their own, mixins ``Robot`` inherits: statics and inverse
kinematics (``rbd_ros.robot.statics``: ``static_torques``, ``joint_wrenches``, ``ik``,
``IKResult``), simulation (``rbd_ros.robot.simulation``: ``simulate``, ``SimulationResult``,
``SimulationError``) and the dynamics' analytical derivatives (``rbd_ros.robot.derivatives``:
``inverse_dynamics_derivatives``, ``forward_dynamics_derivatives``); all names stay importable
from here.
"""
from __future__ import annotations

import importlib
from typing import Any, Sequence, cast

import numba
import numpy as np

from rbd_ros.algorithm import checked, coriolis, crba, energy, kinematics, rnea
from rbd_ros.algorithm import forward_dynamics as fdmod
from rbd_ros.algorithm.f8vector import NATIVE_CHECK
from rbd_ros.algorithm.first_use import on_first_call
from rbd_ros.algorithm.rnea import PARALLEL_MIN
from rbd_ros.bases import ROOT_JOINTS, root_joint
from rbd_ros.model import BASE_COORDINATES, BASE_TYPES, MdhModel
from rbd_ros.model.data import Workspace, pack_model
from rbd_ros.model.link_frames import LinkFrames
from rbd_ros.robot.derivatives import Derivatives
from rbd_ros.robot.fast_path import fast_path
from rbd_ros.robot.kernels import Kernels
from rbd_ros.robot.simulation import Simulation, SimulationError, SimulationResult
from rbd_ros.robot.statics import IKResult, StaticsAndIK
from rbd_ros.util import validate

_empty = np.empty
# Fast path of the single-state calls: the compiled checked entry points called directly
# (no dispatcher typing; ``algorithm.checked``; each compiled on its first call), whose
# unboxing refuses all but 1-D float64 ndarrays (``algorithm.f8vector``; where its field
# offsets are not verified, behind the type check of ``robot.fast_path``); anything else takes
# the full validation path.
_rnea_checked = on_first_call(checked.rnea_checked, globals(), "_rnea_checked")
_fd_checked = on_first_call(checked.forward_dynamics_checked, globals(), "_fd_checked")
_crba_checked = on_first_call(checked.crba_checked, globals(), "_crba_checked")
_gravity_checked = on_first_call(checked.gravity_checked, globals(), "_gravity_checked")
_bias_checked = on_first_call(checked.bias_checked, globals(), "_bias_checked")
_UNBOX = NATIVE_CHECK  # their state arguments are f8vectors: no Python type check needed (fast_path)

#: the front of each moving root joint (``rbd_ros.bases``): ``"module:Class"`` of the
#: ``rbd_ros.robot.front.RootFront`` whose methods ``Robot.__init__`` binds onto a robot on that
#: root (the fixed base has none: ``Robot``'s own methods).  Names on this floor, imported at the
#: first robot on that root: a fixed-base arm never loads them, and the fronts extend ``Robot``
#: (test/core/test_layout.py reads these names as imports)
FRONTS: dict[str, str] = {
    "floating": "rbd_ros.robot.floating:FloatingFront",
    "planar": "rbd_ros.robot.mobile:GroundFront",
    "diff_drive": "rbd_ros.robot.mobile:GroundFront",
}
assert set(FRONTS) == {k for k, r in ROOT_JOINTS.items() if r.nv0}  # every moving root


def front_class(kind: str) -> Any:
    """The ``RootFront`` class of root joint ``kind`` (``FRONTS``), ``None`` for a fixed base."""
    name = FRONTS.get(kind)
    if name is None:
        return None
    module, cls = name.split(":")
    return getattr(importlib.import_module(module), cls)
_RNEA, _CRBA = "rnea", "crba"  # default methods: identity check first keeps the fast path fast


class SingularMassMatrixError(ValueError):
    """M(q) is singular, so ``M qdd = tau - h`` has no unique solution (the message names the
    joints that move no mass or inertia)."""


class Robot(StaticsAndIK, Simulation, Derivatives):
    """Rigid-body dynamics of one serial arm on its root joint (see the module docstring).

    One class for every base: the model's root joint (``robot.root``, ``rbd_ros.bases``,
    keyed by ``model.base_type``) gives the sizes ``nq``, ``nv``, ``nu`` and the base
    coordinate names, and, for a moving base, the front whose methods ``__init__`` binds onto
    this robot (``rbd_ros.robot.front``: ``floating.FloatingFront``, ``mobile.GroundFront``);
    the methods below are the fixed base's (``q = qd`` layout = the joints)."""

    #: base coordinates ahead of the joints in ``q`` and ``qd`` (none for a fixed base; set
    #: per robot from its root joint: ``model.BASE_COORDINATES``)
    base_position_names, base_velocity_names = BASE_COORDINATES["fixed"]

    def __init__(self, model: MdhModel) -> None:
        if not isinstance(model, MdhModel):
            raise TypeError(f"Robot(model) needs an MdhModel, got {type(model).__name__}")
        self.model = model
        self.dof = model.dof
        self._nn = (model.dof, model.dof)
        self.joint_names = model.joint_names
        self.data = Workspace(self.dof, pack_model(model))
        self._mp = cast(np.ndarray, self.data.mp)  # views of one array (mp given: not None), mw: see
        # data.model_workspace
        self._ws = self.data.ws
        self._mw = self.data.mw
        self.root = root = root_joint(model.base_type)  # the base as a root joint (rbd_ros.bases)
        self.base_type = root.kind
        self.nq, self.nv, self.nu = root.sizes(self.dof)  # q, v and input sizes (fixed: n, n, n)
        self.base_position_names, self.base_velocity_names = root.position_names, root.velocity_names
        d = self.data
        fixed = {"rnea": d.tau, "forward_dynamics": d.qdd, "crba": d.M, "gravity": d.g, "jacobian": d.J}
        self.kernels = Kernels(root, self._mp, self._ws, self.dof, fixed if root.nv0 == 0 else None)
        self._formulations: Any = None  # rbd_ros.formulations.Formulations, built on first use
        #: every URDF link on the model's bodies (``Robot.from_urdf``; a bare model: base and tip)
        self.link_frames = LinkFrames.from_model(model)
        self._ik_buf: Any = None  # statics.IKThreads: ik's per-thread buffers, made on first use
        # Every attribute above is set for every base, in this order, so all robots share one
        # key table (CPython's split instance dicts: an attribute read costs ~6 ns more on a
        # robot whose dict left it); a moving base's front adds its own after them.
        front = front_class(root.kind)  # a moving base's methods (FRONTS), bound onto self
        if front is not None:
            front.attach(self)

    # ---- construction ------------------------------------------------------------------------
    @classmethod
    def from_urdf(cls, path_or_xml: str, base_link: str | None = None,
                  tip_link: str | None = None, base_type: str = "fixed", left_wheel: str | None = None,
                  right_wheel: str | None = None, wheel_radius: float | None = None,
                  wheel_separation: float | None = None, base: str | None = None,
                  **kw: Any) -> "Robot":
        """From an URDF file or XML string via ``rbd_ros.urdf.load_model`` (the converter);
        ``base_type`` (``base`` before: deprecated): ``"fixed"``, ``"floating"`` (``base_link`` a
        free body), ``"planar"`` or ``"diff_drive"`` (a ground base, ``rbd_ros.robot.mobile``; the
        wheel options override what ``rbd_ros.urdf.wheels`` finds in the URDF); ``kw`` are passed
        on (e.g. ``gravity``)."""
        from rbd_ros.urdf import load_conversion  # lazy: the URDF converter (25 ms): Robot(model) needs none

        base = validate.renamed("Robot.from_urdf", "base", "base_type", base, base_type, "fixed")
        if base not in BASE_TYPES:
            raise ValueError(f"base_type '{base}' unknown; use one of {list(BASE_TYPES)}")
        given = {"left": left_wheel, "right": right_wheel, "radius": wheel_radius,
                 "separation": wheel_separation}
        wheels = {k: v for k, v in given.items() if v is not None}
        conv = load_conversion(path_or_xml, base_link=base_link, tip_link=tip_link, base_type=base,
                               wheels=wheels or None, **kw)
        return cls(conv.model).with_link_frames(conv.link_frames)

    def with_link_frames(self, link_frames: LinkFrames) -> "Robot":
        """Give the robot its URDF's links (``UrdfConversion.link_frames``, same model); ``self``."""
        if not isinstance(link_frames, LinkFrames) or int(link_frames.body.max(initial=0)) > self.dof:
            raise ValueError(f"with_link_frames needs the LinkFrames of this {self.dof}-joint model's URDF")
        self.link_frames = link_frames
        return self

    @classmethod
    def from_yaml(cls, path_or_text: str, base_type: str | None = None,
                  base: str | None = None) -> "Robot":
        """From a YAML model (``MdhModel.to_yaml`` form, optionally under ``model:``);
        ``base_type`` (``base`` before: deprecated) overrides the file's ``base_type``."""
        base = validate.renamed("Robot.from_yaml", "base", "base_type", base, base_type)
        model = MdhModel.from_yaml(path_or_text)
        if base is not None and base != model.base_type:
            if base == "diff_drive":
                raise ValueError("from_yaml: base_type='diff_drive' needs the file's wheels section "
                                 "(radius, separation); use a diff_drive model file")
            model = model.with_base_type(base)
        return cls(model)

    @classmethod
    def from_mdh(cls, a: Sequence[float], alpha: Sequence[float], d: Sequence[float],
                 theta: Sequence[float], mass: Sequence[float], com: Any, inertia: Any,
                 joint_type: Sequence[int | str] | None = None,
                 joint_names: Sequence[str] | None = None, **kw: Any) -> "Robot":
        """From an MDH table (Craig: ``a_{i-1}, alpha_{i-1}, d_i, theta_i`` per joint) with
        link masses, centres of mass (frame i) and inertias about them (frame i axes);
        other ``MdhModel`` fields (base, tool, gravity, limits, actuators...) as keywords.
        Joints default to revolute and to names ``joint1..jointn``; ``base_type="floating"``,
        ``"planar"`` or ``"diff_drive"`` (a string ``base``: deprecated) is the base (a ground base takes
        ``base_mass``, ``base_com``, ``base_inertia`` and, for ``diff_drive``, ``wheel_radius``,
        ``wheel_separation``), a 4x4 ``base`` the world -> frame 0 transform (the mount)."""
        n = len(a)
        if isinstance(kw.get("base"), str):
            kw["base_type"] = validate.renamed("Robot.from_mdh", "base", "base_type", kw.pop("base"),
                                               kw.get("base_type"))
        # MdhModel converts each table to its field's array (``MdhModel.__post_init__``)
        table: dict[str, Any] = dict(joint_type=list(joint_type) if joint_type is not None else [0] * n,
                                     a=a, alpha=alpha, d=d, theta=theta, mass=mass, com=com, inertia=inertia)
        return cls(MdhModel(
            joint_names=tuple(joint_names) if joint_names is not None
            else tuple(f"joint{i + 1}" for i in range(n)), **table, **kw))

    @property
    def link_names(self) -> tuple[str, ...]:
        """Every URDF link the robot knows (``robot.link_frames.links``: the URDF's links for
        ``from_urdf``, fixed ones included; ``base_link`` and ``tip_link`` for a bare model),
        the names ``urdf_link_poses`` takes (``model.link_names``: the n moving bodies' links)."""
        return self.link_frames.links

    def __repr__(self) -> str:
        if not self.root.nv0:
            return f"Robot({self.model.name!r}, dof={self.dof}, joints={list(self.joint_names)})"
        return (f"Robot({self.model.name!r}, base={self.base_type!r}, nq={self.nq}, nv={self.nv}, "
                f"joints={list(self.joint_names)})")

    def _chunks(self, N: int) -> int:
        """How many parallel chunks a batch of N states is cut into."""
        return max(1, min(numba.get_num_threads(), len(self.data.wss), N))

    def _run_batch(self, parallel: Any, serial: Any, N: int, *args: Any) -> None:
        """A batch kernel over N states: ``serial(mp, ws, 0, N, *args)`` on this thread below
        ``PARALLEL_MIN`` states (or with one thread), else ``parallel(mp, wss, chunks, *args)``.
        A ``prange`` launch waits for a free core: on the loaded 2-core machine 2048 states of
        inverse dynamics took 34 ms in median on two threads, 0.7 ms on one (issue 32)."""
        chunks = self._chunks(N) if N >= PARALLEL_MIN else 1
        if chunks > 1:
            parallel(self._mp, self.data.wss, chunks, *args)
        else:
            serial(self._mp, self._ws, 0, N, *args)

    # ---- validation --------------------------------------------------------------------------
    _real = staticmethod(validate.real_array)  # complex values refused, not cut to their real part

    def _states(self, name: str, x: Any, batch_ok: bool = True) -> np.ndarray:
        n = self.dof
        arr = self._real(name, x)
        if not (arr.shape == (n,) or (batch_ok and arr.ndim == 2 and arr.shape[1] == n)):
            want = f"({n},) or (N, {n})" if batch_ok else f"({n},)"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
        return validate.finite_array(name, arr)

    def _batch(self, **arrays: Any) -> tuple[bool, list[np.ndarray]]:
        """Validate several state arguments that must agree: all ``(n,)`` or all ``(N, n)``."""
        out = [self._states(k, v) for k, v in arrays.items()]
        names = list(arrays)
        shapes = [a.shape for a in out]
        if any(s != shapes[0] for s in shapes):
            desc = ", ".join(f"{k} {s}" for k, s in zip(names, shapes))
            raise ValueError(f"{' and '.join(names)} must have the same shape, got {desc}")
        return out[0].ndim == 2, out

    def _wrench(self, w: Any) -> np.ndarray:
        arr = self._real("tool_wrench", w)
        if arr.shape != (6,):
            raise ValueError(f"tool_wrench must have shape (6,) [force; moment], got {arr.shape}")
        return validate.finite_array("tool_wrench", arr)

    # ---- dynamics ----------------------------------------------------------------------------
    @fast_path(("q", "qd", "qdd"), "_rnea_checked(self._mw, q, qd, qdd, out)",
               when="(method is _RNEA or method == _RNEA) and tool_wrench is None and include_actuators is False",
               checked_unbox=_UNBOX)
    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any, tool_wrench: Any = None,
                         include_actuators: bool = False, method: str = "rnea") -> np.ndarray:
        """``tau = M qdd + h [+ actuators] - J_tool^T w`` (003 §4.5, RNEA); ``method`` picks
        another formulation (``rbd_ros.formulations.METHODS``)."""
        if method is not _RNEA and method != _RNEA:
            return self._formulation("inverse_dynamics", method, q, qd, qdd, tool_wrench=tool_wrench,
                                     include_actuators=include_actuators)
        batch, (q, qd, qdd) = self._batch(q=q, qd=qd, qdd=qdd)
        act = validate.flag("include_actuators", include_actuators)
        use_w = tool_wrench is not None
        w = self._wrench(tool_wrench) if use_w else np.zeros(6)
        if batch:
            tau = np.empty_like(q)
            self._run_batch(rnea.rnea_batch, rnea.rnea_rows, q.shape[0], q, qd, qdd, w, use_w, act, tau)
        else:
            tau = np.empty(self.dof)
            rnea.rnea_full(self._mp, self._ws, q, qd, qdd, w, use_w, act, tau)
        return validate.finite_result("inverse_dynamics", tau, q=q, qd=qd, qdd=qdd, tool_wrench=w)

    @fast_path(("q", "qd", "tau"), "_fd_checked(self._mw, q, qd, tau, out)", when="include_actuators is False",
               checked_unbox=_UNBOX)
    def forward_dynamics(self, q: Any, qd: Any, tau: Any,
                         include_actuators: bool = False) -> np.ndarray:
        """``qdd = M^{-1}(tau - h)`` (003 (5.2); ``algorithm.forward_dynamics``).  Raises
        ``SingularMassMatrixError`` naming the joints when M(q) is singular."""
        try:
            batch, (q, qd, tau) = self._batch(q=q, qd=qd, tau=tau)
            act = validate.flag("include_actuators", include_actuators)
            qdd = np.empty_like(q)
            if batch:
                self._run_batch(fdmod.forward_dynamics_batch, fdmod.forward_dynamics_rows, q.shape[0], q, qd, tau,
                           act, qdd)
            else:
                fdmod.forward_dynamics(self._mp, self._ws, q, qd, tau, act, qdd)
        except (ZeroDivisionError, SystemError) as exc:  # SystemError: from the prange kernel
            raise self._singular(q, include_actuators) from exc
        if not np.isfinite(qdd).all():  # a singular M that did not divide by exactly zero, or overflow
            try:
                validate.finite_result("forward_dynamics", qdd, q=q, qd=qd, tau=tau)
            except validate.NonFiniteResultError as exc:
                raise self._singular(q, act, fallback=exc) from None
        return qdd

    def _singular(self, q: Any, include_actuators: bool = False,
                  fallback: Exception | None = None) -> Exception:
        """The error for a forward dynamics that divided by zero: which joints span the null
        space of M(q) (at the first state of a batch where M is singular); ``fallback`` (when
        given) if M is regular everywhere."""
        states = np.atleast_2d(np.asarray(q, dtype=float))
        for k, qk in enumerate(states):
            M = self.mass_matrix(np.ascontiguousarray(qk), include_actuators)
            w, V = np.linalg.eigh(M)
            null = V[:, w <= 1e-12 * max(float(np.abs(w).max()), 1.0)]
            if null.size:
                names = [*self.base_velocity_names, *self.joint_names]  # M's coordinates (a floating base: v)
                joints = [names[i] for i in np.flatnonzero(np.abs(null).max(axis=1) > 1e-6)]
                where = f" (state {k})" if len(states) > 1 else ""
                return SingularMassMatrixError(
                    f"singular mass matrix{where}: joints {joints} move no mass or inertia, so "
                    f"their accelerations are undetermined; give the links they carry a mass "
                    f"and inertia")
        if fallback is not None:
            return fallback
        return SingularMassMatrixError("singular mass matrix: the forward dynamics divided by zero")

    @fast_path(("q",), "_crba_checked(self._mw, q, out)", alloc="out = _empty(self._nn)",
               when="(method is _CRBA or method == _CRBA) and include_actuators is False", checked_unbox=_UNBOX)
    def mass_matrix(self, q: Any, include_actuators: bool = False, method: str = "crba") -> np.ndarray:
        """M(q), ``(n, n)`` or ``(N, n, n)`` (CRBA, or ``method``: ``rbd_ros.formulations``);
        ``+ diag(G^2 Jm)`` with actuators."""
        if method is not _CRBA and method != _CRBA:
            return self._formulation("mass_matrix", method, q, include_actuators=include_actuators)
        q = self._states("q", q)
        act = validate.flag("include_actuators", include_actuators)
        if q.ndim == 2:
            M = np.empty((q.shape[0], self.dof, self.dof))
            self._run_batch(crba.crba_batch, crba.crba_rows, q.shape[0], q, M)
        else:
            M = np.empty((self.dof, self.dof))
            crba.crba(self._mp, self._ws, q, M)
        if act:
            M += np.diag(self.model.armature)
        return validate.finite_result("mass_matrix", M, q=q)

    @fast_path(("q",), "_gravity_checked(self._mw, q, out)", checked_unbox=_UNBOX)
    def gravity(self, q: Any) -> np.ndarray:
        """Generalized gravity g(q) (RNEA at rest)."""
        q = self._states("q", q)
        g = np.empty_like(q)
        if q.ndim == 2:
            self._run_batch(rnea.gravity_batch, rnea.gravity_rows, q.shape[0], q, g)
        else:
            rnea.gravity(self._mp, self._ws, q, g)
        return validate.finite_result("gravity", g, q=q)

    @fast_path(("q", "qd"), "_bias_checked(self._mw, q, qd, out)", checked_unbox=_UNBOX)
    def bias(self, q: Any, qd: Any) -> np.ndarray:
        """Bias ``h(q, qd) = C(q, qd) qd + g(q)`` (RNEA at qdd = 0)."""
        batch, (q, qd) = self._batch(q=q, qd=qd)
        h = np.empty_like(q)
        if batch:
            self._run_batch(rnea.bias_batch, rnea.bias_rows, q.shape[0], q, qd, h)
        else:
            rnea.bias(self._mp, self._ws, q, qd, h)
        return validate.finite_result("bias", h, q=q, qd=qd)

    nonlinear_effects = bias

    def coriolis_matrix(self, q: Any, qd: Any, method: str = "spatial") -> np.ndarray:
        """C(q, qd) with ``C qd = h - g`` and ``M-dot - 2C`` skew (``algorithm.coriolis``, or
        ``method`` ``kane`` / ``gauss``: ``rbd_ros.formulations``)."""
        if method != "spatial":
            return self._formulation("coriolis_matrix", method, q, qd)
        batch, (q, qd) = self._batch(q=q, qd=qd)
        if batch:
            out = np.empty((q.shape[0], self.dof, self.dof))
            for k in range(q.shape[0]):
                coriolis.coriolis_matrix(self._mp, self._ws, q[k], qd[k], out[k])
        else:
            out = np.empty((self.dof, self.dof))
            coriolis.coriolis_matrix(self._mp, self._ws, q, qd, out)
        return validate.finite_result("coriolis_matrix", out, q=q, qd=qd)

    def _formulation(self, kind: str, method: str, *states: Any, tool_wrench: Any = None,
                     include_actuators: bool = False) -> np.ndarray:
        """``kind`` (``inverse_dynamics``, ``mass_matrix``, ``coriolis_matrix``) by one of
        ``rbd_ros.formulations``; same checks and shapes as the fast path (batches row by row)."""
        from rbd_ros import formulations  # lazy: the cross-checks (18 ms), only for method=

        formulations.check_method(kind, method)
        batch, arrs = self._batch(**dict(zip(("q", "qd", "qdd"), states)))
        w = None if tool_wrench is None else self._wrench(tool_wrench)
        if self._formulations is None:
            self._formulations = formulations.Formulations(self.model)
        call = getattr(self._formulations, kind)
        extra = (w,) if kind == "inverse_dynamics" else ()
        rows = list(zip(*arrs)) if batch else [tuple(arrs)]
        act = validate.flag("include_actuators", include_actuators)
        with np.errstate(all="ignore"):  # an overflow is reported below, naming the cause
            out = np.array([call(method, *row, *extra) for row in rows])
        if act and kind == "inverse_dynamics":
            for k, (_, qd, qdd) in enumerate(rows):
                rnea.add_actuator_torques(self._mp, qd, qdd, out[k])
        elif act:
            out += np.diag(self.model.armature)
        validate.finite_result(f"{kind} (method={method!r})", out, **dict(zip(("q", "qd", "qdd"), arrs)))
        return out if batch else out[0]

    def kinetic_energy(self, q: Any, qd: Any) -> float | np.ndarray:
        """Kinetic energy (003 (3.35)), a float or ``(N,)``."""
        batch, (q, qd) = self._batch(q=q, qd=qd)
        if batch:
            out = np.array([energy.kinetic_energy(self._mp, self._ws, a, b) for a, b in zip(q, qd)])
            return validate.finite_result("kinetic_energy", out, q=q, qd=qd)
        return float(validate.finite_result("kinetic_energy", energy.kinetic_energy(self._mp, self._ws, q, qd),
                                            q=q, qd=qd))

    def potential_energy(self, q: Any) -> float | np.ndarray:
        """Gravitational potential energy ``-sum m_k g . c_k`` (zero at the world origin)."""
        q = self._states("q", q)
        if q.ndim == 2:
            out = np.array([energy.potential_energy(self._mp, self._ws, a) for a in q])
            return validate.finite_result("potential_energy", out, q=q)
        return float(validate.finite_result("potential_energy", energy.potential_energy(self._mp, self._ws, q), q=q))

    # ---- kinematics --------------------------------------------------------------------------
    def _frame(self, link: int | str | None) -> int:
        """Frame index for a link argument: tool = n + 1, frames 0 (base) .. n."""
        n, m = self.dof, self.model
        if link is None:
            return n + 1
        if isinstance(link, str):
            if link in m.link_names:
                return m.link_names.index(link) + 1
            if link == m.tip_link:
                return n + 1
            if link == m.base_link:
                return 0
            raise ValueError(f"unknown link '{link}'; links are {[m.base_link, *m.link_names]} "
                             f"and the tool '{m.tip_link}'")
        k = validate.integer("link", link)
        if not 0 <= k <= n + 1:
            raise ValueError(f"link index must be 0..{n} (or {n + 1} for the tool), got {link}")
        return k

    def fk(self, q: Any) -> np.ndarray:
        """World pose (4x4) of the tool, or ``(N, 4, 4)``."""
        q = self._states("q", q)
        if q.ndim == 2:
            out = np.empty((q.shape[0], 4, 4))
            kinematics.tool_poses(self._mp, self._ws, q, out)  # one kernel call for the batch
            return validate.finite_result("fk", out, q=q)
        T = np.empty((4, 4))
        kinematics.tool_pose(self._mp, self._ws, q, T)
        return validate.finite_result("fk", T, q=q)

    def link_poses(self, q: Any) -> np.ndarray:
        """World poses of frames 0 (base) .. n, ``(n + 1, 4, 4)``, or ``(N, n + 1, 4, 4)`` for
        ``(N, n)`` (one kernel call; a moving base's ``link_poses`` takes one state)."""
        q = self._states("q", q)
        if q.ndim == 2:
            out = np.empty((q.shape[0], self.dof + 1, 4, 4))
            kinematics.link_poses_rows(self._mp, self._ws, q, out)
        else:
            out = np.empty((self.dof + 1, 4, 4))
            kinematics.link_poses(self._mp, self._ws, q, out)
        return validate.finite_result("link_poses", out, q=q)

    def urdf_link_poses(self, q: Any, links: Sequence[str] | None = None) -> np.ndarray:
        """World poses ``(L, 4, 4)`` of URDF links by name (default every link of
        ``self.link_frames``, in its order; fixed links included): ``F_body(q) @ offset`` from
        the MDH frames (``rbd_ros.model.link_frames``); an unknown name: ``ValueError`` naming it."""
        return self.link_frames.poses(self.link_poses(q), list(links) if links is not None else None)

    def jacobian(self, q: Any, link: int | str | None = None) -> np.ndarray:
        """Geometric Jacobian ``(6, n)`` [linear; angular], world frame, of the tool origin
        or of a link frame origin (name, or frame index 0..n); ``(N, 6, n)`` for a batch."""
        frame = self._frame(link)
        q = self._states("q", q)
        if q.ndim == 2:
            out = np.empty((q.shape[0], 6, self.dof))
            for k in range(q.shape[0]):
                kinematics.jacobian(self._mp, self._ws, q[k], frame, out[k])
            return validate.finite_result("jacobian", out, q=q)
        J = np.empty((6, self.dof))
        kinematics.jacobian(self._mp, self._ws, q, frame, J)
        return validate.finite_result("jacobian", J, q=q)

    def jacobian_dot_times_qd(self, q: Any, qd: Any) -> np.ndarray:
        """``J-dot qd`` (6,) of the tool Jacobian: the tool's acceleration at ``qdd = 0``."""
        q = self._states("q", q, batch_ok=False)
        qd = self._states("qd", qd, batch_ok=False)
        out = np.empty(6)
        kinematics.jacobian_dot_times_qd(self._mp, self._ws, q, qd, out)
        return validate.finite_result("jacobian_dot_times_qd", out, q=q, qd=qd)

    def analytic_jacobian(self, q: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(J_a, eta)``: the tool's analytic Jacobian with Z-Y-Z Euler-angle rates
        (003 (1.34)-(1.37)) and the angles ``eta = (phi, theta, psi)``.  Raises at the
        representation singularity ``sin(theta) = 0``."""
        q = self._states("q", q, batch_ok=False)
        J = np.empty((6, self.dof))
        eta = np.empty(3)
        if not kinematics.analytic_jacobian(self._mp, self._ws, q, J, eta):
            raise ValueError("Euler-angle representation singular at this q (sin(theta) = 0)")
        return validate.finite_result("analytic_jacobian", J, q=q), eta


__all__ = ["IKResult", "Kernels", "Robot", "SimulationError", "SimulationResult",
           "SingularMassMatrixError"]
