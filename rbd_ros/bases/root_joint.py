"""``RootJoint``: one base kind as a root joint ahead of the MDH chain, and the registry of them.

``q = [q_0 (nq0), joints (n)]``, ``v = [v_0 (nv0), joint rates (n)]``:

* ``fixed``: no block; ``q (+) v dt = q + dt v``.
* ``floating``: ``q_0 = [p (3), quaternion x y z w (4)]``, ``v_0 = [v_b, w_b]`` (base frame,
  linear first; Pinocchio's free-flyer); ``integrate``: ``T exp(dt V^)`` on SE(3)
  (``algorithm.floating_integrators.integrate_config``).
* ``planar``: ``q_0 = [x, y, yaw]``, ``v_0 = [v_x, v_y, omega]`` (base frame, as ``cmd_vel``);
  ``integrate``: the SE(2) ``exp`` (``lie.se2.planar_exp``).
* ``diff_drive``: the planar blocks under the rolling constraint ``v_y = 0`` at the base point
  (001 (64)); inputs ``[tau_left, tau_right, joints]`` (``nu0 = 2``).

Kernels (``kernels``): each root joint names the unchecked calls its robot makes, as
``KernelCall``\\ s: ``algorithm`` module, function, and the constant arguments between the
inputs and the output; ``rbd_ros.robot.kernels.Kernels`` binds them to one robot's model and
workspace (the one wrapper for every base).  Names, not imports: a kernel module compiles its
checked entry points when first imported, so a fixed-base arm never loads the floating ones.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import numpy as np

from rbd_ros.algorithm.f8vector import NATIVE_CHECK
from rbd_ros.lie import se2
from rbd_ros.model import BASE_COORDINATES, BASE_TYPES

#: the largest ``abs(yaw)`` a ground base accepts (rad): a double's spacing there is 1.2e-10
#: rad; beyond ~1e15 it is a turn (``Robot`` on a planar or diff-drive root refuses more, naming it)
MAX_YAW = 1e6


class KernelCall(NamedTuple):
    """``module.function(mp, ws, *inputs, *constants, out)``: an unchecked kernel call
    (``module`` under ``rbd_ros.algorithm`` unless dotted).  Constants ``"wrench0"`` (no tool
    wrench, six zeros) and ``"tool"`` (the tool's frame index, n + 1) are bound per robot.
    ``entry``: the same call's entry point in ``rbd_ros.algorithm.entries`` (tried first, a
    cheaper call: that module's docstring), ``""`` for none."""

    module: str
    function: str
    constants: tuple = ()
    entry: str = ""

    @property
    def path(self) -> str:
        """The dotted module of the kernel (what the layout test reads as an import)."""
        return self.module if "." in self.module else f"rbd_ros.algorithm.{self.module}"

    def load(self) -> Callable[..., Any]:
        return getattr(importlib.import_module(self.path), self.function)

    def load_entry(self) -> Callable[..., Any] | None:
        """The compiled entry point (``checked.entry``), or ``None`` (none named, or the
        unboxing's checks not verified here: ``algorithm.f8vector.NATIVE_CHECK``)."""
        if not self.entry:
            return None
        from rbd_ros.algorithm import checked, entries  # lazy: the compiled entries (46 ms), at the first call

        return checked.entry(entries.compiled(self.entry)) if NATIVE_CHECK else None


def _integrate_fixed(q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
    """``q + dt v`` (joints only)."""
    return q + dt * v


def _integrate_floating(q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
    """Base ``T exp(dt [v_b; w_b]^)`` on SE(3), joints ``q + dt qd`` (Pinocchio's ``integrate``)."""
    from rbd_ros.algorithm.floating_integrators import integrate_config  # lazy: kernels for a floating root only

    out = np.empty(q.shape[0])
    integrate_config(q, v, dt, out)
    return out


def _integrate_planar(q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
    """B moves by ``R(yaw) V_l (v_x dt, v_y dt)``, yaw by ``omega dt`` (the SE(2) exp, as
    ``pin.integrate`` on a planar joint); joints ``q + dt qd``."""
    c, s = np.cos(q[2]), np.sin(q[2])
    with np.errstate(all="ignore"):
        dx, dy = se2.planar_exp(v[0] * dt, v[1] * dt, v[2] * dt)
        out = q + dt * v
        out[0], out[1] = q[0] + c * dx - s * dy, q[1] + s * dx + c * dy
    return out


def _no_constraint(v: np.ndarray, name: str) -> None:
    """A holonomic root: every ``v`` is admissible."""


def check_rolling(v: np.ndarray, what: str, tol: float = 1e-9) -> None:
    """The rolling constraint of a differential drive, ``v_y = 0`` at the base point (001 (64)),
    on the base rates ``v = (v_x, v_y, omega, ...)``: ``ValueError`` naming ``what`` when the
    lateral rate exceeds ``tol`` relative to the largest rate (its one home: the robot's checks
    and the ``formulations.diff_drive`` cross-checks use it)."""
    if abs(v[1]) > tol * max(1.0, np.abs(v).max()):
        raise ValueError(f"diff_drive: {what}[1] (lateral, v_y) = {v[1]:.3g} violates the rolling "
                         "constraint v_y = 0 at the base point (001 (64))")


@dataclass(frozen=True)
class RootJoint:
    """One base kind (module docstring).  ``nq0``/``nv0``/``nu0``: the root's blocks of ``q``,
    ``v`` and of the inputs.  The methods ``Robot`` binds for a moving root (its front) are
    the robot floor's to name (``rbd_ros.robot.arm.FRONTS``): this floor names nothing above it."""

    kind: str
    nq0: int
    nv0: int
    nu0: int
    integrate: Callable[[np.ndarray, np.ndarray, float], np.ndarray]
    check_velocity: Callable[[np.ndarray, str], None]
    kernels: dict[str, KernelCall]
    constraint: str = ""
    neutral0: tuple[float, ...] = field(default=())

    @property
    def position_names(self) -> tuple[str, ...]:
        return BASE_COORDINATES[self.kind][0]

    @property
    def velocity_names(self) -> tuple[str, ...]:
        return BASE_COORDINATES[self.kind][1]

    def sizes(self, dof: int) -> tuple[int, int, int]:
        """``(nq, nv, nu)`` of a chain of ``dof`` joints on this root."""
        return self.nq0 + dof, self.nv0 + dof, self.nu0 + dof

    def neutral(self, dof: int) -> np.ndarray:
        """``q`` with the base at the world origin and all joints at zero."""
        return np.concatenate([np.array(self.neutral0, dtype=float), np.zeros(dof)])


_GROUND = {"rnea": KernelCall("planar_base", "rnea_planar", ("wrench0", False)),
           "forward_dynamics": KernelCall("rbd_ros.bases.ground_kernels", "aba_planar", (False,)),
           "crba": KernelCall("planar_base", "crba_planar")}

#: the registry, keyed by ``MdhModel.base_type``
ROOT_JOINTS: dict[str, RootJoint] = {
    "fixed": RootJoint(
        "fixed", 0, 0, 0, _integrate_fixed, _no_constraint,
        {"rnea": KernelCall("rnea", "rnea", entry="rnea_entry"),
         "forward_dynamics": KernelCall("forward_dynamics", "forward_dynamics", (False,),
                                        entry="forward_dynamics_entry"),
         "crba": KernelCall("crba", "crba", entry="crba_entry"),
         "gravity": KernelCall("rnea", "gravity", entry="gravity_entry"),
         "jacobian": KernelCall("kinematics", "jacobian", ("tool",), entry="jacobian_entry")}),
    "floating": RootJoint(
        "floating", 7, 6, 6, _integrate_floating, _no_constraint,
        {"rnea": KernelCall("floating_base", "rnea_floating"),
         "forward_dynamics": KernelCall("floating_base", "aba_floating", (False,)),
         "crba": KernelCall("floating_base", "crba_floating")},
        neutral0=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)),
    "planar": RootJoint(
        "planar", 3, 3, 3, _integrate_planar, _no_constraint, _GROUND,
        neutral0=(0.0, 0.0, 0.0)),
    "diff_drive": RootJoint(
        "diff_drive", 3, 3, 2, _integrate_planar, check_rolling,
        {**_GROUND, "rnea": KernelCall("planar_base", "rnea_diff_drive", ("wrench0", False)),
         "forward_dynamics": KernelCall("planar_base", "aba_diff_drive")},
        constraint="v_y = 0 at the base point (001 (64))",
        neutral0=(0.0, 0.0, 0.0)),
}
assert tuple(ROOT_JOINTS) == BASE_TYPES  # one entry per base type of the model


def root_joint(kind: str) -> RootJoint:
    """The root joint of ``MdhModel.base_type`` ``kind``."""
    try:
        return ROOT_JOINTS[kind]
    except KeyError:
        raise ValueError(f"base type {kind!r} unknown; use one of {list(ROOT_JOINTS)}") from None
