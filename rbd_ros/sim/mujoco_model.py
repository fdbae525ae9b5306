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
``contacts=True`` adds crude link capsules that collide with each other (geom group 3, hidden
in pictures).  A ``scene`` adds the robot's collision geoms that touch it (group 3 too):
the URDF's ``collision`` shapes where given, else capsules, and the tool sphere
(:func:`add_robot_collision`).

Looks (``visuals=True``, the default; they never touch the dynamics: every visual geom has
``contype = conaffinity = 0`` and the bodies keep their explicit inertials, so MuJoCo's
masses and inertias are those above): per link a capsule along the common normal
``a_i x_i`` and one along the next joint axis ``d_{i+1} z_{i+1}`` (both fixed in frame i),
a housing cylinder on each joint axis, a tool sphere, a pedestal from the floor to the base,
a checkered floor below everything the arm can reach (:func:`workspace`), and lights.  A
URDF's own shapes (``shapes``: ``urdf_visuals.urdf_visuals``, meshes where MuJoCo can load
them) replace a body's capsules and housing.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rbd_ros.algorithm.integrators import INTEGRATORS
from rbd_ros.algorithm.mdh import mdh_transform
from rbd_ros.lie.so3 import rotation_to_quaternion
from rbd_ros.model import PRISMATIC, MdhModel
from rbd_ros.model.physical import balance_moments
from rbd_ros.urdf import load_model

if TYPE_CHECKING:  # pragma: no cover
    import mujoco

DEFAULT_MIN_MASS = 1e-6  # kg
FRICTION_IMPEDANCE = 0.9999  # solimp of the dry-friction constraint (MuJoCo default 0.9-0.95)
DEFAULT_MIN_INERTIA = 1e-9  # kg m^2
ROBOT_RADIUS = 0.02  # m, the link capsules that touch a scene (``add_robot_collision``)
TIP_RADIUS = 0.025  # m, the tool sphere (the probe the contact tasks press with; larger than
#                     ROBOT_RADIUS, so a capsule ending at the tool stays inside it)
SCENE_BITS = (1, 2)  # contype, conaffinity of a scene object
ROBOT_BITS = (2, 1)  # of the robot's geoms that touch it
ROBOT_FRICTION = (1e-5, 1e-5, 1e-5)  # below any object's: MuJoCo takes the larger
COLLISION_GROUP = 3  # the robot's collision geoms: a geom group pictures do not show
COLLISION_RGBA = (0.3, 0.6, 0.9, 0.4)  # where a viewer shows that group


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


def mj_quaternion(R: np.ndarray) -> np.ndarray:
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
                       capsule_radius: float = 0.03,
                       visuals: bool = True, shapes: Sequence = (), scene: Any = None,
                       sensor: Any = None,
                       collision: Sequence = (), gripper: Any = None) -> tuple["mujoco.MjModel", list[str]]:
    """The MuJoCo model of ``model`` (see the module docstring) and the fix-up warnings.

    ``actuators``: a torque (``motor``) actuator per joint, and the actuator model of 003
    §6.1 on the joints: ``armature`` (Gamma^T J_M Gamma, (6.17)), ``viscous`` (D of (6.16)
    as joint damping) and ``coulomb`` (joint frictionloss), each switchable.  Joint ranges are
    set where both limits are finite; joints are named as in the model, bodies after
    ``model.link_names``, actuators after the joints.  ``visuals``: the looks of the module
    docstring (no effect on the dynamics), with the URDF's ``shapes`` where given.
    ``scene``: a placed ``rbd_ros.sim.scene.Scene`` (objects the arm touches, contacts on;
    ``None``: nothing added, the model built before scenes existed); ``collision``: with a
    scene, the URDF's collision shapes (``urdf_visuals.urdf_collisions``) that replace the
    capsules of their bodies (:func:`add_robot_collision`); ``sensor``: an
    ``rbd_ros.sim.ft_sensor.FTSensor`` (its site and MuJoCo sensors; they read, never push).
    ``gripper``: an ``rbd_ros.sim.gripper.Gripper`` of the model's URDF: its links move as a
    mechanism below their chain body, which keeps its other links' inertia only
    (its ``add_to``; contact geoms from the URDF's collisions with a scene)."""
    spec = new_spec(model, timestep, integrator, contacts)
    looks = ArmLooks(spec, model, shapes) if visuals else None
    arm = model
    if gripper is not None:
        arm = gripper.rigid(model)
    warnings = add_arm(spec, spec.worldbody, arm, timestep, contacts, actuators,
                       armature=armature, viscous=viscous, coulomb=coulomb, min_mass=min_mass,
                       min_inertia=min_inertia, capsule_radius=capsule_radius, looks=looks,
                       touch=scene is not None, collision=collision, probe=gripper is None)
    if gripper is not None:
        warnings += gripper.add_to(spec, spec.body(model.link_names[gripper.body - 1]), timestep,
                                   scene is not None, min_mass, min_inertia)
    if scene is not None:
        scene.add_to(spec)
    if sensor is not None:
        sensor.add_to(spec)
    if actuators:
        add_motors(spec, model.joint_names)
    if gripper is not None:
        gripper.add_actuator(spec)
    return compile_spec(spec, model.name), warnings


def new_spec(model: MdhModel, timestep: float, integrator: str, contacts: bool) -> "mujoco.MjSpec":
    """An empty ``MjSpec`` with the options of ``build_mujoco_model`` (radians, timestep,
    integrator, the model's gravity; contacts off unless ``contacts``)."""
    import mujoco

    if not (np.isfinite(timestep) and timestep > 0):
        raise ValueError(f"timestep must be a positive number of seconds, got {timestep}")
    spec = mujoco.MjSpec()
    spec.modelname = model.name or "robot"
    spec.compiler.degree = False
    spec.option.timestep = float(timestep)
    spec.option.integrator = integrator_enum(integrator)
    spec.option.gravity = [float(g) for g in model.gravity]
    if not contacts:
        spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    return spec


def compile_spec(spec, name: str) -> "mujoco.MjModel":
    """``spec.compile()``, MuJoCo's refusal as a ValueError naming the model."""
    try:
        return spec.compile()
    except Exception as exc:  # MuJoCo raises a plain ValueError/Exception
        raise ValueError(f"MuJoCo refused the model built from '{name}': {exc}") from exc


def add_arm(spec, parent, model: MdhModel, timestep: float, contacts: bool = False,
            actuators: bool = True, *, armature: bool = True, viscous: bool = True,
            coulomb: bool = True, min_mass: float = DEFAULT_MIN_MASS,
            min_inertia: float = DEFAULT_MIN_INERTIA, capsule_radius: float = 0.03,
            looks: "ArmLooks | None" = None, touch: bool = False,
            collision: Sequence = (), probe: bool = True) -> list[str]:
    """The arm's bodies and joints (module docstring) under ``parent`` (the world body, or a
    mobile base's body: ``model.base`` is then the mount in ``base_link``); the fix-up
    warnings.  ``actuators``: the joints' armature, damping and frictionloss (003 §6.1).
    ``touch``: the collision geoms a scene's objects touch (:func:`add_robot_collision`; the
    URDF's ``collision`` shapes where given)."""
    import mujoco

    warnings: list[str] = []
    by_body: dict[int, list] = {}
    for shape in collision:  # urdf_visuals.Visual, by body
        by_body.setdefault(int(shape.body), []).append(shape)
    if not model.inertia_fix and model.inertia_notes:  # the raw URDF: MuJoCo cannot simulate it
        raise ValueError(f"MuJoCo cannot simulate '{model.name}' as its description gives it: "
                         f"{model.inertia_notes[0]}; load it without keep_inertia (--keep-inertia, "
                         f"inertia_fix: false) to simulate the nearest physical inertia")
    for i in range(model.dof):
        T = np.asarray(mdh_transform(float(model.a[i]), float(model.alpha[i]), float(model.d[i]),
                                     float(model.theta[i])))
        if i == 0:
            T = model.base @ T
        body = parent.add_body(name=model.link_names[i], pos=T[:3, 3].tolist(),
                               quat=mj_quaternion(T[:3, :3]).tolist())
        warnings += set_inertial(body, float(model.mass[i]), model.com[i], model.inertia[i],
                                 f"link '{model.link_names[i]}' (joint '{model.joint_names[i]}')",
                                 min_mass, min_inertia)
        jtype = (mujoco.mjtJoint.mjJNT_SLIDE if model.joint_type[i] == PRISMATIC
                 else mujoco.mjtJoint.mjJNT_HINGE)
        joint = body.add_joint(name=model.joint_names[i], type=jtype, axis=[0.0, 0.0, 1.0])
        lo, hi = float(model.lower[i]), float(model.upper[i])
        if np.isfinite(lo) and np.isfinite(hi):
            if not lo < hi:  # MdhModel refuses it first; MuJoCo's own message would not name the joint
                raise ValueError(f"joint '{model.joint_names[i]}' has lower limit {lo:g} >= upper {hi:g}: "
                                 f"a joint that cannot move; declare it fixed or lock it")
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
        if touch:
            add_robot_collision(body, model, i, shapes=by_body.get(i, ()), spec=spec, probe=probe)
        if looks is not None:
            looks.link(body, i)
        parent = body
    parent.add_site(name="tool", pos=model.tool[:3, 3].tolist(),
                    quat=mj_quaternion(model.tool[:3, :3]).tolist())
    return warnings


def set_inertial(body, mass: float, com: np.ndarray, inertia: np.ndarray, label: str,
                 min_mass: float, min_inertia: float) -> list[str]:
    """``body``'s explicit inertial: :func:`fix_inertia` of ``(mass, com, inertia about com)``
    in the body frame, as principal axes; returns the fix-up warnings."""
    inertial, warnings = fix_inertia(mass, com, inertia, label=label, min_mass=min_mass,
                                     min_inertia=min_inertia)
    body.explicitinertial = True
    body.mass = inertial.mass
    body.ipos = inertial.com.tolist()
    body.iquat = mj_quaternion(inertial.axes).tolist()
    body.inertia = inertial.principal.tolist()
    return warnings


def add_motors(spec, names) -> None:
    """One torque (``motor``) actuator per joint of ``names`` (gear 1, unlimited: the motor
    model clamps), named after the joint."""
    import mujoco

    for name in names:
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_motor()
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_FALSE


def _add_capsule(body, model: MdhModel, i: int, radius: float, **geom: Any) -> None:
    """A massless collision capsule from this frame's origin to the next frame's origin
    (``geom``: more of its attributes, e.g. the contact bits)."""
    import mujoco

    if i + 1 < model.dof:
        end = np.asarray(mdh_transform(float(model.a[i + 1]), float(model.alpha[i + 1]),
                                       float(model.d[i + 1]), float(model.theta[i + 1])))[:3, 3]
    else:
        end = model.tool[:3, 3]
    if np.linalg.norm(end) < 1e-6:
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[radius, 0, 0], mass=0.0, group=3,
                      **geom)
        return
    body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[radius, 0, 0], mass=0.0,
                  fromto=[0.0, 0.0, 0.0, *end.tolist()], group=3, **geom)


def add_robot_collision(body, model: MdhModel, i: int, radius: float = ROBOT_RADIUS,
                        tip_radius: float = TIP_RADIUS, shapes: Sequence = (),
                        spec: Any = None, probe: bool = True) -> None:
    """Body ``i``'s collision geoms for a scene (``rbd_ros.sim.scene``): the URDF's collision
    ``shapes`` on it (``urdf_visuals.Visual``, meshes added to ``spec``) where given, else the
    capsule from its frame origin to the next one; on the last body the tool sphere (named
    ``tip``) as well, instead of the capsule.  They touch scene objects only (``ROBOT_BITS``)
    with MuJoCo's smallest friction (the object's then decides: MuJoCo takes the larger of
    the two), massless, in the hidden geom group ``COLLISION_GROUP``.  ``probe`` False (a
    gripper's fingers touch instead: ``rbd_ros.sim.gripper``): no tool sphere."""
    import mujoco

    common: dict[str, Any] = dict(contype=ROBOT_BITS[0], conaffinity=ROBOT_BITS[1], friction=list(ROBOT_FRICTION))
    for shape in shapes:
        add_shape(spec, body, shape, mass=0.0, group=COLLISION_GROUP, condim=3,
                   rgba=list(COLLISION_RGBA), **common)
    if i + 1 < model.dof or not probe:
        if not shapes and i + 1 < model.dof:
            _add_capsule(body, model, i, radius, **common)
        return
    body.add_geom(name="tip", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[tip_radius, 0.0, 0.0],
                  pos=model.tool[:3, 3].tolist(), mass=0.0, group=COLLISION_GROUP, condim=3,
                  **common)


def scene_touches(m, d, tip: int = -1) -> set[int]:
    """The bodies whose robot collision geoms (``ROBOT_BITS``) other than geom ``tip`` (the
    probe) are in an active contact now (with the scene: nothing else has those bits)."""
    out = set()
    for i in range(d.ncon):
        c = d.contact[i]
        if c.exclude != 0 or c.efc_address < 0:
            continue
        for g in (c.geom1, c.geom2):
            if g != tip and (m.geom_contype[g], m.geom_conaffinity[g]) == ROBOT_BITS:
                out.add(int(m.geom_bodyid[g]))
    return out


def add_shape(spec, body, shape, prefix: str = "", **geom: Any) -> None:
    """One ``urdf_visuals.Visual`` as a geom of ``body`` (its pose is in the body frame), a
    mesh added to ``spec`` under a unique name that says which file; ``geom``: the rest of
    its attributes."""
    import mujoco

    mjg = mujoco.mjtGeom
    kind = {"mesh": mjg.mjGEOM_MESH, "box": mjg.mjGEOM_BOX,
            "cylinder": mjg.mjGEOM_CYLINDER, "sphere": mjg.mjGEOM_SPHERE}[shape.kind]
    if shape.kind == "mesh":
        name = f"{prefix}{Path(shape.file).stem}_{len(spec.meshes)}"
        spec.add_mesh(name=name, file=shape.file, scale=list(shape.scale))
        geom["meshname"] = name
    else:
        geom["size"] = list(shape.size) + [0.0] * (3 - len(shape.size))
    body.add_geom(type=kind, pos=shape.pose[:3, 3].tolist(),
                  quat=mj_quaternion(shape.pose[:3, :3]).tolist(), **geom)


def shape_points(shapes: Sequence) -> np.ndarray:
    """(k, 3) points in their body's frame whose convex hull holds ``shapes``
    (``urdf_visuals.Visual``): a mesh's vertices as MuJoCo loads them (scaled; MuJoCo collides
    with their convex hull), the corners of a primitive's bounding box."""
    import mujoco

    if not shapes:
        return np.zeros((0, 3))
    spec = mujoco.MjSpec()
    for shape in shapes:
        add_shape(spec, spec.worldbody, shape, contype=0, conaffinity=0)
    m = spec.compile()
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    points = []
    for g in range(m.ngeom):
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, m.geom_quat[g])
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_MESH:
            k = m.geom_dataid[g]
            local = m.mesh_vert[m.mesh_vertadr[k]:m.mesh_vertadr[k] + m.mesh_vertnum[k]]
        else:
            local = m.geom_aabb[g, :3] + corners * m.geom_aabb[g, 3:]
        points.append(local @ R.reshape(3, 3).T + m.geom_pos[g])  # geom frame -> body frame
    return np.vstack(points)


@dataclass(frozen=True)
class Workspace:
    """Where the arm can be: ``up`` (unit, against gravity; +z without gravity), ``centre`` of
    the reach sphere (the base origin), its ``reach`` radius (m), ``floor`` and ``top``, the
    heights along ``up`` just below and above every frame origin over a sample of joint
    positions."""

    up: np.ndarray
    centre: np.ndarray
    reach: float
    floor: float
    top: float


def workspace(model: MdhModel, samples: int = 256, seed: int = 0) -> Workspace:
    """:class:`Workspace` of ``model`` from its frame origins over ``samples`` random joint
    positions inside the limits (a fixed ``seed``; ±pi where a revolute joint has none)."""
    g = np.asarray(model.gravity, dtype=float)
    up = -g / np.linalg.norm(g) if np.linalg.norm(g) > 0 else np.array([0.0, 0.0, 1.0])
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    rng = np.random.default_rng(seed)
    centre = model.base[:3, 3].astype(float)
    reach, lowest, highest = 0.0, float(up @ centre), float(up @ centre)
    for q in np.vstack([np.zeros(model.dof), rng.uniform(lo, hi, (samples, model.dof))]):
        T = model.base.copy()
        for i in range(model.dof):  # 0T_n = base prod_i ^{i-1}T_i(q_i) (003 §1.6)
            prismatic = model.joint_type[i] == PRISMATIC
            T = T @ np.asarray(mdh_transform(
                float(model.a[i]), float(model.alpha[i]),
                float(model.d[i] + (q[i] if prismatic else 0.0)),
                float(model.theta[i] + (0.0 if prismatic else q[i]))))
            reach, lowest, highest = _extend(reach, lowest, highest, T[:3, 3], centre, up)
        reach, lowest, highest = _extend(reach, lowest, highest, (T @ model.tool)[:3, 3],
                                         centre, up)
    reach = max(reach, 0.1)
    return Workspace(up, centre, reach, lowest - 0.05 * reach, highest + 0.05 * reach)


def _extend(reach: float, lowest: float, highest: float, p: np.ndarray, centre: np.ndarray,
            up: np.ndarray) -> tuple[float, float, float]:
    h = float(up @ p)
    return max(reach, float(np.linalg.norm(p - centre))), min(lowest, h), max(highest, h)


class ArmLooks:
    """The visual-only geoms and lights of the module docstring, sized from the arm's reach."""

    LINK = [0.93, 0.55, 0.16, 1.0]  # orange
    JOINT = [0.25, 0.27, 0.30, 1.0]  # dark grey
    TOOL = [0.85, 0.15, 0.15, 1.0]

    def __init__(self, spec, model: MdhModel, shapes: Sequence = (), ground: bool = True) -> None:
        import mujoco

        self.mujoco, self.model, self.spec = mujoco, model, spec
        self.shapes: dict[int, list] = {}
        for shape in shapes:  # urdf_visuals.Visual, by body (-1: the world)
            self.shapes.setdefault(int(shape.body), []).append(shape)
        ws = workspace(model)
        self.radius = float(np.clip(0.035 * ws.reach, 0.008, 0.06))
        world = spec.worldbody
        spec.visual.headlight.ambient = [0.35, 0.35, 0.35]
        spec.visual.headlight.diffuse = [0.45, 0.45, 0.45]
        spec.visual.headlight.specular = [0.1, 0.1, 0.1]
        spec.stat.center = ws.centre.tolist()
        spec.stat.extent = 2.0 * ws.reach
        tex = spec.add_texture(name="floor_checker", type=mujoco.mjtTexture.mjTEXTURE_2D,
                               builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, width=256,
                               height=256, rgb1=[0.82, 0.84, 0.87], rgb2=[0.70, 0.72, 0.76])
        spec.add_texture(name="sky", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                         builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, width=64, height=64,
                         rgb1=[0.55, 0.65, 0.78], rgb2=[0.95, 0.96, 0.98])
        mat = spec.add_material(name="floor", texrepeat=[8.0, 8.0])
        mat.textures[int(mujoco.mjtTextureRole.mjTEXROLE_RGB)] = tex.name
        self.lights(world, ws)
        if not ground:  # a mobile base: its floor and base are drawn by ``mobile_model``
            return
        # the floor: a plane through the lowest point, normal ``up``
        z = np.array([0.0, 0.0, 1.0])
        floor_point = ws.centre + (ws.floor - ws.up @ ws.centre) * ws.up
        self._geom(world, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[2.5 * ws.reach] * 2 + [0.1],
                   pos=floor_point.tolist(), quat=mj_quaternion(rotation_onto(z, ws.up)).tolist(),
                   material="floor", rgba=[1.0, 1.0, 1.0, 1.0], name="floor")
        height = float(ws.up @ ws.centre - ws.floor)
        if height > 2 * self.radius:  # a pedestal from the floor up to the base
            self._geom(world, type=mujoco.mjtGeom.mjGEOM_CYLINDER, rgba=self.JOINT,
                       size=[2.2 * self.radius, 0.0, 0.0], name="pedestal",
                       fromto=[*floor_point.tolist(), *(ws.centre - 1.2 * self.radius
                                                         * ws.up).tolist()])
        self.link(world, -1)  # base -> joint 1

    def lights(self, world, ws: Workspace) -> None:
        for k, (pos, direction) in enumerate((((1.0, -1.0, 2.0), (-0.3, 0.3, -1.0)),
                                              ((-1.5, 1.0, 2.5), (0.5, -0.3, -1.0)))):
            world.add_light(name=f"light{k}", pos=(ws.centre + ws.reach * np.array(pos)).tolist(),
                            dir=list(direction), castshadow=k == 0,
                            diffuse=[0.55, 0.55, 0.55] if k == 0 else [0.25, 0.25, 0.25],
                            specular=[0.2, 0.2, 0.2])

    def _geom(self, body, **kwargs) -> None:
        body.add_geom(contype=0, conaffinity=0, mass=0.0, group=kwargs.pop("group", 1), **kwargs)

    def link(self, body, i: int) -> None:
        """Body i: its joint housing, and capsules to the next joint (or the tool); ``i = -1``:
        the world body from the base frame to joint 1.  The URDF's shapes instead if given."""
        mjg = self.mujoco.mjtGeom
        m, r = self.model, self.radius
        if self.shapes.get(i):
            for shape in self.shapes[i]:
                self._shape(body, shape)
            return
        if i >= 0:
            self._geom(body, type=mjg.mjGEOM_CYLINDER, size=[1.5 * r, 1.3 * r, 0.0],
                       rgba=self.JOINT, name=f"{m.link_names[i]}_joint")
        if i + 1 < m.dof:
            corner = np.array([float(m.a[i + 1]), 0.0, 0.0])  # a_i along x_i
            end = np.asarray(mdh_transform(float(m.a[i + 1]), float(m.alpha[i + 1]),
                                           float(m.d[i + 1]), float(m.theta[i + 1])))[:3, 3]
            points = [np.zeros(3), corner, end]  # then d_{i+1} along z_{i+1}
            if i < 0:  # the base frame in world coordinates
                points = [(m.base @ np.append(p, 1.0))[:3] for p in points]
        else:
            points = [np.zeros(3), m.tool[:3, 3].astype(float)]
            self._geom(body, type=mjg.mjGEOM_SPHERE, size=[1.1 * r, 0.0, 0.0],
                       pos=points[1].tolist(), rgba=self.TOOL, name="tool_tip")
        for p0, p1 in zip(points, points[1:]):
            if np.linalg.norm(p1 - p0) > 1e-6:
                self._geom(body, type=mjg.mjGEOM_CAPSULE, size=[r, 0.0, 0.0],
                           fromto=[*p0.tolist(), *p1.tolist()], rgba=self.LINK)


    def _shape(self, body, shape) -> None:
        """One ``urdf_visuals.Visual`` (its pose is in the body frame; the world: base_link,
        so ``model.base``-independent)."""
        add_shape(self.spec, body, shape, contype=0, conaffinity=0, mass=0.0, group=1,
                   rgba=list(shape.rgba))


def rotation_onto(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The rotation taking unit ``a`` onto unit ``b`` (Rodrigues; ``a = -b``: a half turn
    about x, or about z when ``a`` is along x, which a turn about x leaves as it is)."""
    v, c = np.cross(a, b), float(a @ b)
    if c < -1.0 + 1e-12:
        return np.diag([1.0, -1.0, -1.0]) if abs(a[0]) < 0.9 else np.diag([-1.0, -1.0, 1.0])
    K = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return np.eye(3) + K + K @ K / (1.0 + c)


def from_urdf(path_or_xml: str | Path, base_link: str | None = None,
              tip_link: str | None = None, **kwargs) -> tuple["mujoco.MjModel", list[str]]:
    """:func:`build_mujoco_model` of ``rbd_ros.urdf.load_model(src, base_link, tip_link)``:
    the converter's MDH model, so the bridge and the dynamics core share one description."""
    src = str(path_or_xml)
    return build_mujoco_model(load_model(src, base_link, tip_link), **kwargs)
