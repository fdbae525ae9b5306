"""A MuJoCo model built from the ``MdhModel`` itself (ROS-free).

The bridge simulates exactly the model the dynamics core uses: the same converter output
(same URDF, ``base_link``, ``tip_link``, locked joints merged the same way), not MuJoCo's own
URDF import.  One body per MDH frame ``i`` (003 §1.6, ``rbd_ros.algorithm.mdh``):

    body i pose in body i-1 = ^{i-1}T_i(q_i = 0) = Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)

and because ``Rz(theta + q) Tz(d) = Rz(theta) Tz(d) Rz(q)`` (and ``Tz(d + q) = Tz(d) Tz(q)``),
joint ``i`` is a hinge (revolute) or slide (prismatic) along body ``i``'s own z axis through
its origin, with ``qpos = q``.  World -> body 0 carries ``model.base``; ``model.tool`` becomes
a site ``tool`` on the last body.

Inertial: ``mass[i]`` at ``com[i]`` with ``inertia[i]`` (about the CoM, frame-i axes),
diagonalised here (principal moments + ``iquat``) so the values MuJoCo checks are exactly
those we fixed up.  Physically impossible inertias (indefinite, or breaking the triangle
inequality ``I1 + I2 >= I3``, e.g. the PUMA 560's link 3 of Armstrong et al.:
0.066 + 0.0125 < 0.086) never get here: ``MdhModel`` replaced them when the model was made
(``rbd_ros.physical``), so the bridge simulates the model the core computes with.  MuJoCo
also refuses some physical ones; :func:`fix_inertia` makes the smallest documented change
and every change comes back as a warning string:

* mass below ``min_mass`` (zero-mass links) -> ``min_mass`` (default 1e-6 kg);
* principal moments below ``min_inertia`` (a point mass, a thin rod) -> ``min_inertia``
  (default 1e-9 kg m^2);
* the triangle inequality, should a tensor given directly still break it, as in
  ``rbd_ros.physical.balance_moments``.

Actuators (003 §6.1): one ``motor`` actuator per joint (gear 1: ``ctrl`` is the joint torque
``tau`` of (6.10)/(6.16)); the reflected rotor inertia ``Gamma^T J_M Gamma`` of (6.17) is the
joint ``armature``, the viscous coefficient ``D`` of (6.16) the joint ``damping`` and Coulomb
friction the joint ``frictionloss`` (MuJoCo's soft dry-friction constraint with a time
constant of two timesteps and impedance 0.9999: exact while slipping, a slow creep while
sticking).

Joint limits (where both are finite) are MuJoCo's limit constraints, stiffened to a time
constant of two timesteps.  Contacts are off by default (the MDH model carries no geometry);
``contacts=True`` adds crude link capsules that collide with each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rbd_ros.algorithm.integrators import INTEGRATORS
from rbd_ros.lie.so3 import rotation_to_quaternion
from rbd_ros.model import PRISMATIC, MdhModel
from rbd_ros.physical import balance_moments

if TYPE_CHECKING:  # pragma: no cover
    import mujoco

DEFAULT_MIN_MASS = 1e-6  # kg
FRICTION_IMPEDANCE = 0.9999  # solimp of the dry-friction constraint (MuJoCo default 0.9-0.95)
DEFAULT_MIN_INERTIA = 1e-9  # kg m^2


@dataclass(frozen=True)
class Inertial:
    """A MuJoCo-acceptable inertial: mass, CoM, principal moments and their axes."""

    mass: float
    com: np.ndarray  # (3,) frame i
    principal: np.ndarray  # (3,) moments about the CoM
    axes: np.ndarray  # (3, 3) columns: principal axes in frame i (det +1)

    @property
    def tensor(self) -> np.ndarray:
        """The (possibly fixed) inertia about the CoM in frame-i axes."""
        return self.axes @ np.diag(self.principal) @ self.axes.T


def fix_inertia(mass: float, com: np.ndarray, inertia: np.ndarray, label: str = "link",
                min_mass: float = DEFAULT_MIN_MASS,
                min_inertia: float = DEFAULT_MIN_INERTIA) -> tuple[Inertial, list[str]]:
    """Diagonalise one link's inertia and apply the minimal fix-ups of the module docstring.

    Returns the inertial MuJoCo will accept and one warning per change (empty if none)."""
    warnings: list[str] = []
    sym = 0.5 * (np.asarray(inertia, dtype=float) + np.asarray(inertia, dtype=float).T)
    w, v = np.linalg.eigh(sym)  # ascending
    if np.linalg.det(v) < 0:
        v[:, 2] = -v[:, 2]
    if mass < min_mass:
        warnings.append(f"{label}: mass {mass:.6g} kg is below MuJoCo's minimum for a moving "
                        f"body; set to {min_mass:.3g} kg")
        mass = min_mass
    if (w < min_inertia).any():
        kind = "not positive definite" if (w <= 0).any() else "too small"
        new = np.maximum(w, min_inertia)
        warnings.append(f"{label}: inertia {kind} (principal moments {_fmt(w)}); moments "
                        f"raised to {_fmt(new)} kg m^2")
        w = new
    if w[0] + w[1] < w[2]:
        deficit = w[2] - w[0] - w[1]
        new = balance_moments(w)
        warnings.append(f"{label}: inertia breaks the triangle inequality (principal moments "
                        f"{_fmt(w)}, {w[0]:.6g} + {w[1]:.6g} < {w[2]:.6g}); the two smaller "
                        f"raised by {0.5 * deficit:.6g} each -> {_fmt(new)} kg m^2")
        w = new
    return Inertial(float(mass), np.asarray(com, dtype=float).copy(), w, v), warnings


def _fmt(x: np.ndarray) -> str:
    return "[" + ", ".join(f"{float(t):.6g}" for t in x) + "]"


def _quat(R: np.ndarray) -> np.ndarray:
    """MuJoCo's scalar-first quaternion (w, x, y, z) of ``R``."""
    return np.roll(rotation_to_quaternion(R), 1)


def integrator_enum(name: str) -> "mujoco.mjtIntegrator":
    """A name of ``rbd_ros.algorithm.integrators.INTEGRATORS`` (any case: ``Euler`` =
    ``semi_implicit_euler``, ``RK4``, ``implicit``, ``implicitfast``) as MuJoCo's enum."""
    import mujoco

    key = str(name).strip().lower()
    if key not in INTEGRATORS:
        raise ValueError(f"integrator must be one of {', '.join(INTEGRATORS)}; got '{name}'")
    return getattr(mujoco.mjtIntegrator, INTEGRATORS[key][1])


def build_mujoco_model(model: MdhModel, timestep: float = 0.001, integrator: str = "RK4",
                       contacts: bool = False, actuators: bool = True, *,
                       armature: bool = True, viscous: bool = True, coulomb: bool = True,
                       min_mass: float = DEFAULT_MIN_MASS,
                       min_inertia: float = DEFAULT_MIN_INERTIA,
                       capsule_radius: float = 0.03) -> tuple["mujoco.MjModel", list[str]]:
    """The MuJoCo model of ``model`` (see the module docstring) and the fix-up warnings.

    ``actuators``: a torque (``motor``) actuator per joint, and the actuator model of 003
    §6.1 on the joints: ``armature`` (Gamma^T J_M Gamma, (6.17)), ``viscous`` (D of (6.16)
    as joint damping) and ``coulomb`` (joint frictionloss), each switchable.  Joint ranges are
    set where both limits are finite; joints are named as in the model, bodies after
    ``model.link_names``, actuators after the joints."""
    import mujoco

    if not (np.isfinite(timestep) and timestep > 0):
        raise ValueError(f"timestep must be a positive number of seconds, got {timestep}")
    from rbd_ros.algorithm.mdh import mdh_transform

    spec = mujoco.MjSpec()
    spec.modelname = model.name or "robot"
    spec.compiler.degree = False
    spec.option.timestep = float(timestep)
    spec.option.integrator = integrator_enum(integrator)
    spec.option.gravity = [float(g) for g in model.gravity]
    if not contacts:
        spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    warnings: list[str] = []
    parent = spec.worldbody
    for i in range(model.dof):
        T = np.asarray(mdh_transform(float(model.a[i]), float(model.alpha[i]), float(model.d[i]),
                                     float(model.theta[i])))
        if i == 0:
            T = model.base @ T
        body = parent.add_body(name=model.link_names[i], pos=T[:3, 3].tolist(),
                               quat=_quat(T[:3, :3]).tolist())
        inertial, warn = fix_inertia(float(model.mass[i]), model.com[i], model.inertia[i],
                                     label=f"link '{model.link_names[i]}' (joint "
                                           f"'{model.joint_names[i]}')",
                                     min_mass=min_mass, min_inertia=min_inertia)
        warnings += warn
        body.explicitinertial = True
        body.mass = inertial.mass
        body.ipos = inertial.com.tolist()
        body.iquat = _quat(inertial.axes).tolist()
        body.inertia = inertial.principal.tolist()
        jtype = (mujoco.mjtJoint.mjJNT_SLIDE if model.joint_type[i] == PRISMATIC
                 else mujoco.mjtJoint.mjJNT_HINGE)
        joint = body.add_joint(name=model.joint_names[i], type=jtype, axis=[0.0, 0.0, 1.0])
        lo, hi = float(model.lower[i]), float(model.upper[i])
        if np.isfinite(lo) and np.isfinite(hi):
            joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
            joint.range = [lo, hi]
            # a hard stop: the stiffest stable constraint time constant (2 timesteps) instead
            # of MuJoCo's default 0.02 s, which lets a falling arm sink ~0.05 rad past a limit
            joint.solref_limit = [2.0 * float(timestep), 1.0]
        else:
            joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        if actuators:
            if armature:
                joint.armature = float(model.armature[i])
            if viscous:
                joint.damping = [float(model.viscous[i]), 0.0, 0.0]
            if coulomb:
                joint.frictionloss = float(model.coulomb[i])
                # MuJoCo's dry friction is a soft constraint: below the friction level the
                # joint creeps at a speed proportional to the time constant; use the stiffest
                # stable one (2 timesteps) instead of the default 0.02 s
                joint.solref_friction = [2.0 * float(timestep), 1.0]
                # and nearly no regularisation: with the default impedance (0.9-0.95) the
                # constraint gives only part of the friction torque where the joint is light
                # (xArm 7 joint 7, 1.4e-4 kg m^2 behind a damped drive: 0.41 of its 1 N m
                # while slipping, so a controller compensating 1 N m overshot by 0.25 rad)
                joint.solimp_friction = [FRICTION_IMPEDANCE, FRICTION_IMPEDANCE, 0.001, 0.5, 2.0]
        if contacts:
            _add_capsule(body, model, i, capsule_radius)
        parent = body
    parent.add_site(name="tool", pos=model.tool[:3, 3].tolist(),
                    quat=_quat(model.tool[:3, :3]).tolist())
    if actuators:
        for name in model.joint_names:
            act = spec.add_actuator(name=name, target=name,
                                    trntype=mujoco.mjtTrn.mjTRN_JOINT)
            act.set_to_motor()
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
    try:
        mj_model = spec.compile()
    except Exception as exc:  # noqa: BLE001 - MuJoCo raises a plain ValueError/Exception
        raise ValueError(f"MuJoCo refused the model built from '{model.name}': {exc}") from exc
    return mj_model, warnings


def _add_capsule(body, model: MdhModel, i: int, radius: float) -> None:
    """A massless collision capsule from this frame's origin to the next frame's origin."""
    import mujoco

    if i + 1 < model.dof:
        from rbd_ros.algorithm.mdh import mdh_transform

        end = np.asarray(mdh_transform(float(model.a[i + 1]), float(model.alpha[i + 1]),
                                       float(model.d[i + 1]), float(model.theta[i + 1])))[:3, 3]
    else:
        end = model.tool[:3, 3]
    if np.linalg.norm(end) < 1e-6:
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[radius, 0, 0], mass=0.0)
        return
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[radius, 0, 0], mass=0.0,
                  fromto=[0.0, 0.0, 0.0, *end.tolist()])


def from_urdf(path_or_xml: str | Path, base_link: str | None = None,
              tip_link: str | None = None, **kwargs) -> tuple["mujoco.MjModel", list[str]]:
    """:func:`build_mujoco_model` of ``rbd_ros.urdf.load_model(src, base_link, tip_link)``:
    the converter's MDH model, so the bridge and the dynamics core share one description."""
    from rbd_ros.urdf import load_model  # lazy: the converter is its own module

    src = str(path_or_xml)
    return build_mujoco_model(load_model(src, base_link, tip_link), **kwargs)
