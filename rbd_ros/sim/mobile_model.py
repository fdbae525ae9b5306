"""The MuJoCo model of an arm on a mobile base (``MdhModel.base_type`` planar | diff_drive).

The base body is ``base_link`` (its frame is the core's base point B; the arm hangs below it
exactly as on a fixed base, ``mujoco_model.add_arm``, with ``model.base`` the mount).  The
world is z up with a floor plane at z = 0; B sits ``height`` above it.

``base_model`` (what carries the base):

* ``wheels`` (diff_drive; the default): a **free joint** (``base_free``) on the base body, two
  wheel bodies on hinge joints (named ``model.wheel_joints``, axles along the base y axis at
  ``y = +-s/2``, ``model.wheel_axle_height`` above B, cylinders of radius r) driven by torque
  actuators, touching the floor through a sphere of radius r (one contact point under the
  axle: a cylinder's contacts at both rims would scrub when turning, Coulomb friction 4 cm
  apart braking the yaw), and passive
  **casters**: frictionless spheres (``condim = 1``, ``priority = 1`` over the floor) fixed
  to the base where ``model.casters`` says (the URDF's, ``rbd_ros.urdf.wheels``) when they hold
  it both ahead of and behind the axle, else at the four corners (``casters``; a single
  caster leaves the base to tip over the axle), touching the floor through soft contacts
  (``CASTER_TIME_CONSTANT``, a suspension: the drive wheels carry ~95 % of the weight, as
  they must for traction; with contacts as stiff as the tyres' the casters took 80 %).
  Tyres and floor have Coulomb friction ``friction`` (MuJoCo's default pyramidal cone,
  ``condim = 3``), so the wheels roll and can slip as on a real floor; the tyre contacts
  have a time constant of ``CONTACT_TIME_CONSTANT`` (at least 4 timesteps; with MuJoCo's
  default 0.02 s a loaded wheel creeps sideways by ~1 cm/s in a turn).  The wheel mass is a uniform disc's,
  ``m_w = 2 I_a / r^2`` from the model's spin inertia ``I_a`` (``rbd_ros.urdf.wheels``),
  taken out of the lumped base body (mass, centre of mass and inertia by the parallel-axis
  theorem), so MuJoCo's total mass and inertia are the core's.
* ``ideal`` (both base types) and every ``planar`` base: the base body on three joints
  ``base_x``, ``base_y`` (world slides) and ``base_yaw`` (hinge about z through B): ``qpos`` =
  the core's ``q[:3]``.  The diff-drive wheels are then kinematic hinges (no contact); the
  ideal bridge does not step MuJoCo (``mobile_sim``).  A planar base is driven by three site
  actuators at B (``trntype = site``, gears along the base frame's x, y and about z): the
  core's generalized forces ``[F_x, F_y, M_z]`` in the base frame.

Actuator order (= ``ctrl``): the base's (wheels left, right | base_x, base_y, base_yaw), then
the arm's joints.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from rbd_ros.model import BASE_COORDINATES, MdhModel
from rbd_ros.services import DEFAULT_WHEELS
from rbd_ros.sim.mujoco_model import ArmLooks, add_arm, add_motors, compile_spec, fix_inertia, mj_quaternion, new_spec

if TYPE_CHECKING:  # pragma: no cover
    import mujoco

BASE_MODELS = ("wheels", "ideal")
PLANAR_JOINTS = BASE_COORDINATES["planar"][0]  # base_x, base_y, base_yaw
FREE_JOINT = "base_free"
CONTACT_TIME_CONSTANT = 0.004  # s: floor contacts stiffer than MuJoCo's 0.02 s (less creep)
CASTER_TIME_CONSTANT = 0.03  # s: softer caster contacts, a suspension (the drive wheels carry the load)
WHEEL_HALF_WIDTH = 0.02  # m, the wheel cylinders' half length (contact is on the tread)
BASE_COLOUR = [0.35, 0.38, 0.42, 1.0]
WHEEL_COLOUR = [0.12, 0.12, 0.12, 1.0]


def wheel_joint_names(model: MdhModel) -> tuple[str, str]:
    """(left, right) wheel joint names: the model's, else ``left_wheel_joint``/``right_...``."""
    # MdhModel holds wheel_joints as (left, right) or empty (its __post_init__ refuses others)
    return cast("tuple[str, str]", tuple(model.wheel_joints)) if model.wheel_joints else DEFAULT_WHEELS


def base_actuator_names(model: MdhModel) -> tuple[str, ...]:
    """The base's actuated entries: the wheel joints (diff_drive) or ``PLANAR_JOINTS``."""
    return wheel_joint_names(model) if model.base_type == "diff_drive" else PLANAR_JOINTS


def wheel_mass(model: MdhModel) -> float:
    """A uniform disc's mass for the spin inertia: ``m_w = 2 I_a / r^2`` (0 without ``I_a``)."""
    return 2.0 * model.wheel_spin_inertia / model.wheel_radius ** 2


def _base_without_wheels(model: MdhModel, m_w: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com, inertia about com) of the base body less two wheels of mass ``m_w`` at
    ``(0, +-s/2, z_axle)`` with disc inertia ``diag(I_a/2, I_a, I_a/2)``: parallel-axis theorem."""
    M, c, Ic = model.base_mass, np.asarray(model.base_com, float), np.asarray(model.base_inertia, float)
    s, Ia = model.wheel_separation, model.wheel_spin_inertia
    if m_w <= 0.0 or M - 2.0 * m_w <= 0.0:
        return M, c, Ic
    z = model.wheel_axle_height
    wheels = [np.array([0.0, 0.5 * s, z]), np.array([0.0, -0.5 * s, z])]
    Mb = M - 2.0 * m_w
    cb = (M * c - m_w * sum(wheels)) / Mb

    def shift(m: float, d: np.ndarray) -> np.ndarray:  # m (|d|^2 1 - d d^T)
        return m * (d @ d * np.eye(3) - np.outer(d, d))

    I_about_c = Ic - sum(np.diag([0.5 * Ia, Ia, 0.5 * Ia]) + shift(m_w, p - c) for p in wheels)
    return Mb, cb, I_about_c - shift(Mb, cb - c)


def build_mobile_model(model: MdhModel, base_model: str = "wheels", timestep: float = 0.001,
                       integrator: str = "implicitfast", *, height: float | None = None,
                       friction: float = 1.0, casters: Sequence[tuple[float, float]] | None = None,
                       contacts: bool = False, armature: bool = True, viscous: bool = True,
                       coulomb: bool = True, wheel_armature: float = 0.0,
                       wheel_viscous: float = 0.0, wheel_coulomb: float = 0.0,
                       min_mass: float = 1e-6, min_inertia: float = 1e-9,
                       visuals: bool = True) -> tuple["mujoco.MjModel", list[str]]:
    """The MuJoCo model of the module docstring and the inertia fix-up warnings.

    ``height``: B above the floor (default: the wheel radius less the axle's height above B,
    or 0.1 m for a planar base);
    ``casters``: (x, y) (m, base frame) of the caster spheres (default the four corners
    ``(+-0.6 s, +-0.3 s)``: casters on the centre line only would let the base roll onto one
    wheel in a fast turn, lifting the other off the floor); the wheel
    joints' ``wheel_armature`` (kg m^2), ``wheel_viscous`` (N m s/rad), ``wheel_coulomb``
    (N m) are the wheels' motor model (003 §6.1, as the arm joints' ``armature`` ...)."""
    import mujoco

    if model.base_type not in ("planar", "diff_drive"):
        raise ValueError(f"build_mobile_model: '{model.name}' has a {model.base_type} base, not a "
                         "planar or diff_drive one")
    if base_model not in BASE_MODELS:
        raise ValueError(f"base_model must be one of {', '.join(BASE_MODELS)}, got '{base_model}'")
    if not (np.isfinite(friction) and friction > 0):
        raise ValueError(f"friction must be a positive number, got {friction}")
    diff = model.base_type == "diff_drive"
    rolling = diff and base_model == "wheels"
    r, s = model.wheel_radius, model.wheel_separation
    h = float(height) if height is not None else (r - model.wheel_axle_height if diff else 0.1)
    if not (np.isfinite(h) and h >= 0):
        raise ValueError(f"base height must be a number >= 0 (m), got {height}")
    spec = new_spec(model, timestep, integrator, contacts or rolling)
    looks = ArmLooks(spec, model, (), ground=False) if visuals else None
    world = spec.worldbody
    mjg = mujoco.mjtGeom
    stiff = [max(CONTACT_TIME_CONSTANT, 4.0 * float(timestep)), 1.0]  # contact solref
    floor = dict(type=mjg.mjGEOM_PLANE, size=[50.0, 50.0, 0.1], name="floor",
                 friction=[friction, 0.005, 0.0001], solref=stiff)
    if visuals:
        floor.update(material="floor", rgba=[1.0, 1.0, 1.0, 1.0])
    world.add_geom(**floor)
    base = world.add_body(name=model.base_link, pos=[0.0, 0.0, h])
    if rolling:
        base.add_joint(name=FREE_JOINT, type=mujoco.mjtJoint.mjJNT_FREE)
    else:
        for name, axis in zip(PLANAR_JOINTS, ([1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0])):
            kind = mujoco.mjtJoint.mjJNT_HINGE if name == "base_yaw" else mujoco.mjtJoint.mjJNT_SLIDE
            base.add_joint(name=name, type=kind, axis=axis, limited=mujoco.mjtLimited.mjLIMITED_FALSE)
    m_w = wheel_mass(model) if diff else 0.0
    mass, com, inertia = _base_without_wheels(model, m_w) if diff else \
        (model.base_mass, model.base_com, model.base_inertia)
    inertial, warnings = fix_inertia(mass, com, inertia, label=f"base '{model.base_link}'",
                                     min_mass=min_mass, min_inertia=min_inertia)
    base.explicitinertial = True
    base.mass, base.ipos = inertial.mass, inertial.com.tolist()
    base.iquat, base.inertia = mj_quaternion(inertial.axes).tolist(), inertial.principal.tolist()
    base.add_site(name="base_point")
    span = 0.6 * s if diff else 0.3
    if visuals:  # a box for the chassis (no contact, no mass)
        half, z = (0.5 * r, model.wheel_axle_height + 0.5 * r) if diff else (0.5 * h, 0.5 * h)
        base.add_geom(type=mjg.mjGEOM_BOX, size=[span + 0.05, 0.4 * s if diff else 0.25, half],
                      pos=[0.0, 0.0, z], rgba=BASE_COLOUR, contype=0, conaffinity=0,
                      mass=0.0, group=1, name="chassis")
    if diff:
        axle = mj_quaternion(np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]))  # cylinder z -> base y
        for name, side in zip(wheel_joint_names(model), (1.0, -1.0)):
            wheel = base.add_body(name=name.removesuffix("_joint") or name,
                                  pos=[0.0, side * 0.5 * s, model.wheel_axle_height])
            winertial, warn = fix_inertia(max(m_w, min_mass), np.zeros(3), np.diag(
                [0.5, 1.0, 0.5]) * model.wheel_spin_inertia, label=f"wheel '{name}'",
                min_mass=min_mass, min_inertia=min_inertia)
            warnings += warn
            wheel.explicitinertial = True
            wheel.mass, wheel.ipos = winertial.mass, [0.0, 0.0, 0.0]
            wheel.iquat, wheel.inertia = mj_quaternion(winertial.axes).tolist(), winertial.principal.tolist()
            joint = wheel.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0.0, 1.0, 0.0],
                                    limited=mujoco.mjtLimited.mjLIMITED_FALSE)
            joint.armature = float(wheel_armature)
            joint.damping = [float(wheel_viscous), 0.0, 0.0]
            if wheel_coulomb > 0:
                joint.frictionloss = float(wheel_coulomb)
                joint.solref_friction = [2.0 * float(timestep), 1.0]
            wheel.add_geom(type=mjg.mjGEOM_CYLINDER, size=[r, WHEEL_HALF_WIDTH, 0.0],
                           quat=axle.tolist(), rgba=WHEEL_COLOUR, mass=0.0, name=f"{name}_tyre",
                           contype=0, conaffinity=0, group=1)
            if rolling:  # one contact point under the axle (a cylinder's two rim points scrub)
                wheel.add_geom(type=mjg.mjGEOM_SPHERE, size=[r, 0.0, 0.0], mass=0.0, group=3,
                               name=f"{name}_contact", condim=3, contype=1, conaffinity=1,
                               friction=[friction, 0.005, 0.0001], solref=stiff)
        if rolling:
            corners = [(x, y, 0.5 * r) for x in (span, -span) for y in (0.3 * s, -0.3 * s)]
            both_sides = {np.sign(c[0]) for c in model.casters} >= {-1.0, 1.0}
            spheres = [(x, y, 0.5 * r) for x, y in casters] if casters is not None else \
                (model.casters if both_sides else corners)
            for k, (x, y, rc) in enumerate(spheres):
                base.add_geom(type=mjg.mjGEOM_SPHERE, size=[rc, 0.0, 0.0], name=f"caster{k}",
                              pos=[float(x), float(y), rc - h], condim=1, priority=1, contype=1, conaffinity=1,
                              mass=0.0, rgba=WHEEL_COLOUR, solref=[CASTER_TIME_CONSTANT, 1.0])
    if looks is not None:
        looks.link(base, -1)  # base_link -> joint 1 (model.base: the mount)
    warnings += add_arm(spec, base, model, timestep, contacts, True, armature=armature,
                        viscous=viscous, coulomb=coulomb, min_mass=min_mass,
                        min_inertia=min_inertia, looks=looks)
    if diff:
        add_motors(spec, wheel_joint_names(model))
    else:
        for name, gear in zip(PLANAR_JOINTS, ([1.0, 0, 0, 0, 0, 0], [0, 1.0, 0, 0, 0, 0],
                                              [0, 0, 0, 0, 0, 1.0])):
            act = spec.add_actuator(name=name, target="base_point", trntype=mujoco.mjtTrn.mjTRN_SITE,
                                    gear=gear)
            act.set_to_motor()
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE
    add_motors(spec, model.joint_names)
    return compile_spec(spec, model.name), warnings
