"""A URDF's gripper as a MuJoCo mechanism (issue 43.2), ROS-free.

The converter locks every movable joint off the arm's chain and merges its links into the
chain body they hang from (``rbd_ros.urdf.chain``): right for the arm's dynamics, but the
gripper cannot move.  Here the simulated arm gets it back:

* **What the gripper is** (``find_gripper``): one independent movable joint off the chain (the
  *actuated* joint; ``joint`` names it when there are several) and every off-chain joint that
  mimics it (``<mimic>``, directly or through another mimic joint), with the links they move.  Other
  off-chain joints stay locked as before.
* **The mechanism** (``add_gripper``, called by ``mujoco_model.build_mujoco_model``): the
  moving links become MuJoCo bodies below the chain body they hang from, placed at the
  converter's reference configuration (the same poses the arm's model merged them at), their
  joints hinge or slide joints with the URDF's axis and limits, ``ref`` the reference position
  (so ``qpos`` is the URDF joint value).  The chain body keeps the inertia of its other links
  only (``rigid_body_inertia``).  A mimic joint is a MuJoCo joint equality
  ``q_m = offset + multiplier q_a`` (the URDF's ``<mimic multiplier offset>``), stiff
  (``solref`` two timesteps); the actuated joint carries the one actuator: a PD servo
  ``force = kp (q_r - q) - kd qd`` clamped to the goal's max effort (at most the URDF's
  ``effort``), as a gripper's position drive with a current limit.  The URDF's ``<collision>``
  primitives (and loadable meshes) of the moving links are their contact geoms.
* **The action's semantics** (``GripperGoal``): ros2_controllers' gripper_action_controller
  (``GripperCommand``: position and max_effort in; position, effort, stalled, reached_goal
  out): reached when ``|q_r - q| < goal_tolerance``; stalled when the joint's mean speed over
  ``stall_timeout`` s stayed below ``stall_velocity_threshold`` short of the target (succeeded
  when ``allow_stalling``, else aborted; a grasp is a stall on the object).

Gains: ``kp = m w^2``, ``kd = 2 m w`` (``drives.derived_gains``) with ``m`` the mechanism's
inertia seen at the actuated joint (``MuJoCo``'s joint-space inertia through the equality's
multipliers) and ``w = 2 pi bandwidth``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from rbd_ros.sim.drives import derived_gains
from rbd_ros.sim.mujoco_model import ROBOT_BITS, ROBOT_FRICTION, add_shape, mj_quaternion, set_inertial
from rbd_ros.sim.urdf_visuals import names_a_file, shape_of
from rbd_ros.urdf.convert import load_conversion
from rbd_ros.urdf.inertia import link_body, merge
from rbd_ros.urdf.parse import load_tree, parse_with_urdf_parser_py

Mimic = tuple[str, float, float]  # a <mimic>: (joint, multiplier, offset)
#: MuJoCo's equality and limit constraint time constant, in timesteps (stiffest stable)
STIFF_TIMESTEPS = 2.0
DEFAULT_BANDWIDTH = 10.0  # Hz, the servo's
#: the mimic equalities' impedance (MuJoCo's solimp): 0.99 over MuJoCo's 0.9-0.95 default
#: (RK4, Panda hand: the relation held to 5e-7 instead of 5e-6 while moving)
EQUALITY_IMPEDANCE = (0.99, 0.99, 0.001, 0.5, 2.0)
ACTUATOR_PREFIX = "gripper:"


@dataclass(frozen=True)
class GripperJoint:
    """One joint of the mechanism: URDF ``name``, ``joint_type`` (revolute | continuous |
    prismatic), ``axis`` (unit, child frame), limits, and its ``mimic`` ``(joint, multiplier,
    offset)`` or None (the actuated joint)."""

    name: str
    joint_type: str
    parent: str
    child: str
    axis: np.ndarray
    lower: float
    upper: float
    effort: float
    velocity: float
    reference: float  # the converter's locked position (mimic-consistent)
    mimic: Mimic | None = None


@dataclass(frozen=True)
class Gripper:
    """The gripper of a URDF (module docstring): its ``joints`` (the actuated one first),
    the ``links`` they move, the chain ``body`` (1-based MDH index) it hangs from and the
    conversion it was found in."""

    joints: tuple[GripperJoint, ...]
    links: tuple[str, ...]
    body: int
    conversion: Any  # rbd_ros.urdf.convert.UrdfConversion
    tree: Any  # rbd_ros.urdf.parse.UrdfTree
    source: str

    @property
    def actuated(self) -> GripperJoint:
        return self.joints[0]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    def mimic_positions(self, q: float) -> np.ndarray:
        """Every joint's position (``names`` order) for the actuated joint at ``q``: the
        URDF's ``<mimic>`` relations, composed (the oracle of the equalities)."""
        out = {self.actuated.name: float(q)}
        pending = list(self.joints[1:])
        while pending:
            j = pending.pop(0)
            src, mult, off = cast(Mimic, j.mimic)  # joints[1:] all mimic (the gripper's members)
            if src in out:
                out[j.name] = mult * out[src] + off
            else:
                pending.append(j)
        return np.array([out[n] for n in self.names])

    # ---- build_mujoco_model's hooks (as ``Scene.add_to`` and ``FTSensor.add_to``: the model
    # builder calls them and imports no part of this module, which builds on it) ----
    def rigid(self, model: Any) -> Any:
        """``model`` with this gripper's links as part of its chain body (``rigid_model``)."""
        return rigid_model(model, self)

    def add_to(self, spec: Any, parent: Any, timestep: float, contacts: bool, min_mass: float,
               min_inertia: float) -> list[str]:
        """The mechanism below ``parent`` (``add_gripper``); its fix-up warnings."""
        return add_gripper(spec, self, parent, timestep, contacts, min_mass, min_inertia)

    def add_actuator(self, spec: Any) -> None:
        """The servo of the actuated joint (``add_gripper_actuator``)."""
        add_gripper_actuator(spec, self)


def find_gripper(source: str | Path, base_link: str | None = None, tip_link: str | None = None,
                 joint: str | None = None, conversion: Any = None) -> Gripper | None:
    """The gripper of the URDF ``source`` (a file or URDF text) for the chain ``base_link``
    -> ``tip_link`` (module docstring), or None when no movable joint hangs off the chain.
    ``joint``: the actuated joint, when several independent ones do (else a ValueError naming
    them); a ``joint`` that is not one is a ValueError too."""
    conv = conversion if conversion is not None else load_conversion(source, base_link, tip_link)
    tree = load_tree(source)
    on_chain = set(conv.model.joint_names)
    placed = conv.link_offsets  # link -> (body >= 1, offset)
    off_chain = {jn: j for jn, j in tree.joints.items()
                 if j.movable and jn not in on_chain and j.parent in placed
                 and j.type in ("revolute", "continuous", "prismatic")}
    if not off_chain:
        if joint:
            raise ValueError(f"gripper_joint '{joint}': {tree.source} has no movable joint off the "
                             f"chain {conv.model.base_link} -> {conv.model.tip_link}")
        return None
    independent = [jn for jn, j in off_chain.items() if j.mimic is None]
    if joint:
        if joint not in independent:
            raise ValueError(f"gripper_joint '{joint}' is not an independent movable joint off the "
                             f"chain; those are {independent}")
        actuated = joint
    elif len(independent) == 1:
        actuated = independent[0]
    else:
        raise ValueError(f"{tree.source} has {len(independent)} independent joints off the chain "
                         f"({independent}): name the gripper's with gripper_joint")
    members = [actuated]
    grew = True
    while grew:  # the joints mimicking a member, transitively
        grew = False
        for jn, j in off_chain.items():
            if jn not in members and j.mimic is not None and j.mimic.joint in members:
                members.append(jn)
                grew = True
    bodies = {placed[tree.joints[jn].child][0] for jn in members}
    if bodies != {conv.model.dof}:  # its dofs after the arm's in MuJoCo's (depth-first) order
        raise ValueError(f"the gripper joints {members} must hang from the chain's last body "
                         f"('{conv.model.link_names[-1]}'), not {sorted(bodies)}")
    moving: list[str] = []
    for jn in members:
        for link in tree.subtree(tree.joints[jn].child):
            if link not in moving:
                moving.append(link)
    joints = []
    for jn in members:
        j = tree.joints[jn]
        if not (np.isfinite(j.lower) and np.isfinite(j.upper)) and j.type != "continuous":
            raise ValueError(f"gripper joint '{jn}' has no finite limits")
        mimic = None if j.mimic is None else (j.mimic.joint, float(j.mimic.multiplier), float(j.mimic.offset))
        joints.append(GripperJoint(jn, j.type, j.parent, j.child, np.asarray(j.axis, dtype=float),
                                   float(j.lower), float(j.upper), float(j.effort), float(j.velocity),
                                   float(conv.positions.get(jn, 0.0)), mimic))
    return Gripper(tuple(joints), tuple(moving), bodies.pop(), conv, tree, str(source))


def rigid_body_inertia(gripper: Gripper) -> tuple[float, np.ndarray, np.ndarray]:
    """``(mass, com, inertia about com)`` of the chain body the gripper hangs from, in its MDH
    frame, without the gripper's moving links (the converter's merge, ``urdf.inertia``)."""
    conv = gripper.conversion
    parts = [link_body(gripper.tree.links[ln], off) for ln, (i, off) in conv.link_offsets.items()
             if i == gripper.body and ln not in gripper.links]
    b = merge(parts)
    return float(b.mass), np.asarray(b.com, dtype=float), np.asarray(b.inertia, dtype=float)


def rigid_model(model: Any, gripper: Gripper) -> Any:
    """``model`` (``MdhModel``) with the gripper's body holding its other links only."""
    i = gripper.body - 1
    m, c, inertia = rigid_body_inertia(gripper)
    mass, com, inert = np.array(model.mass, dtype=float), np.array(model.com, dtype=float), \
        np.array(model.inertia, dtype=float)
    mass[i], com[i], inert[i] = m, c, inertia
    return model.replace(mass=mass, com=com, inertia=inert)


def add_gripper(spec: Any, gripper: Gripper, parent: Any, timestep: float, contacts: bool,
                min_mass: float, min_inertia: float) -> list[str]:
    """The mechanism (module docstring) under ``parent`` (the MuJoCo body of the chain body
    ``gripper.body``); returns the inertia fix-up warnings.  The actuator is added with zero
    gains (``GripperServo`` sets them)."""
    import mujoco

    conv, tree = gripper.conversion, gripper.tree
    offsets = conv.link_offsets
    by_child = {j.child: j for j in gripper.joints}
    bodies: dict[str, Any] = {}  # link -> its MuJoCo spec body
    warnings: list[str] = []
    shapes = _collision_shapes(gripper) if contacts else {}
    for link in gripper.links:  # parents before children (subtree order)
        jn = tree.parent_joint[link]
        up = tree.joints[jn].parent
        # the reference poses (all in the chain body's MDH frame): relative to the parent's
        # MuJoCo body, the chain body itself for a link hanging from it
        T = offsets[link][1] if up not in bodies else np.linalg.inv(offsets[up][1]) @ offsets[link][1]
        mj_parent = bodies.get(up, parent)
        body = mj_parent.add_body(name=f"{link}", pos=T[:3, 3].tolist(), quat=mj_quaternion(T[:3, :3]).tolist())
        bodies[link] = body
        info = tree.links[link]
        local = link_body(info, np.eye(4))
        gj = by_child.get(link)
        if gj is not None or local.mass > 0:
            warnings += set_inertial(body, local.mass, local.com, local.inertia, f"gripper link '{link}'",
                                     min_mass, min_inertia)
        if gj is not None:
            jtype = mujoco.mjtJoint.mjJNT_SLIDE if gj.joint_type == "prismatic" else mujoco.mjtJoint.mjJNT_HINGE
            joint = body.add_joint(name=gj.name, type=jtype, axis=gj.axis.tolist(), ref=gj.reference)
            if np.isfinite(gj.lower) and np.isfinite(gj.upper):
                joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
                joint.range = [gj.lower, gj.upper]
                joint.solref_limit = [STIFF_TIMESTEPS * float(timestep), 1.0]
            j = tree.joints[gj.name]
            joint.damping = [float(j.damping), 0.0, 0.0]
            joint.frictionloss = float(j.friction)
        for shape in shapes.get(link, ()):
            add_shape(spec, body, shape, prefix="gripper_", contype=ROBOT_BITS[0],
                       conaffinity=ROBOT_BITS[1], friction=list(ROBOT_FRICTION), condim=4,
                       rgba=list(shape.rgba))
    for gj in gripper.joints[1:]:
        src, mult, off = cast(Mimic, gj.mimic)  # joints[1:] all mimic (the gripper's members)
        eq = spec.add_equality(name=f"mimic:{gj.name}")
        eq.type = mujoco.mjtEq.mjEQ_JOINT
        eq.objtype = mujoco.mjtObj.mjOBJ_JOINT
        eq.name1, eq.name2 = gj.name, src
        # q1 = data[0] + data[1] q2 + ... about the joints' ref positions: MuJoCo's joint
        # equality is on qpos - ref; rewritten for the URDF's q_m = off + mult q_a
        ref_m, ref_a = gj.reference, _reference_of(gripper, src)
        data = np.zeros(len(eq.data))
        data[0], data[1] = off + mult * ref_a - ref_m, mult
        eq.data = data.tolist()
        eq.solref = [STIFF_TIMESTEPS * float(timestep), 1.0]
        eq.solimp = list(EQUALITY_IMPEDANCE)
    return warnings


def add_gripper_actuator(spec: Any, gripper: Gripper) -> None:
    """The servo's actuator at the actuated joint (zero gains: ``GripperServo`` sets them),
    after the arm's: the arm's actuators keep their indices."""
    import mujoco

    a = gripper.actuated
    act = spec.add_actuator(name=ACTUATOR_PREFIX + a.name, target=a.name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
    act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
    act.ctrllimited = 0
    limit = a.effort if np.isfinite(a.effort) and a.effort > 0 else 0.0
    if limit:
        act.forcelimited = 1
        act.forcerange = [-limit, limit]


def _reference_of(gripper: Gripper, name: str) -> float:
    return next(j.reference for j in gripper.joints if j.name == name)


def _collision_shapes(gripper: Gripper) -> dict[str, list]:
    """The URDF ``<collision>`` shapes of the moving links MuJoCo can load, in each link's
    own frame (``urdf_visuals``' reader)."""
    robot = parse_with_urdf_parser_py(gripper.conversion.urdf_xml, gripper.source)[0]
    folder = Path(gripper.source).resolve().parent if names_a_file(gripper.source) else None
    out: dict[str, list] = {}
    for link in gripper.links:
        shapes = [shape_of(e, 0, np.eye(4), folder, {}) for e in robot.link_map[link].collisions]
        out[link] = [s for s in shapes if s is not None]
    return out


class GripperServo:
    """The mechanism's actuator in a compiled ``MjModel`` (module docstring): target and max
    effort in, the actuated joint's position, velocity and force out."""

    def __init__(self, mj_model: Any, gripper: Gripper, bandwidth: float = DEFAULT_BANDWIDTH) -> None:
        import mujoco

        self.model, self.gripper = mj_model, gripper
        a = gripper.actuated
        self.actuator = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_ACTUATOR, ACTUATOR_PREFIX + a.name)
        self.joints = [mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in gripper.names]
        self.qpos = np.array([mj_model.jnt_qposadr[j] for j in self.joints])
        self.dof = np.array([mj_model.jnt_dofadr[j] for j in self.joints])
        self.effort_limit = a.effort if np.isfinite(a.effort) and a.effort > 0 else np.inf
        data = mujoco.MjData(mj_model)
        mujoco.mj_forward(mj_model, data)
        M = np.zeros((mj_model.nv, mj_model.nv))
        mujoco.mj_fullM(mj_model, data, M)
        # the mechanism's inertia at the actuated joint: d(mimic q)/d(q_a) = composed multipliers
        lever = self._levers()
        m = float(lever @ M[np.ix_(self.dof, self.dof)] @ lever)
        kp, kd = derived_gains(np.array([m]), bandwidth)
        self.kp, self.kd = float(kp[0]), float(kd[0])
        mj_model.actuator_gainprm[self.actuator, 0] = self.kp
        mj_model.actuator_biasprm[self.actuator, :3] = (0.0, -self.kp, -self.kd)
        self.max_effort = self.effort_limit
        self.target: float | None = None  # where the servo goes (``command``)
        self.reference: float | None = None  # where it is going now (``advance``)

    def _levers(self) -> np.ndarray:
        g = self.gripper
        return g.mimic_positions(1.0) - g.mimic_positions(0.0)

    def set_max_effort(self, max_effort: float) -> float:
        """The force limit (N or N m) of the servo: ``max_effort`` (<= 0: the URDF's effort),
        at most the URDF's effort; returns the one set."""
        limit = self.effort_limit if not max_effort > 0 else min(float(max_effort), self.effort_limit)
        self.max_effort = limit
        m = self.model
        if np.isfinite(limit):
            m.actuator_forcelimited[self.actuator] = 1
            m.actuator_forcerange[self.actuator] = (-limit, limit)
        else:
            m.actuator_forcelimited[self.actuator] = 0
        return limit

    def command(self, position: float) -> float:
        """The target position, clipped into the actuated joint's limits (returned); the
        servo's reference moves there at most at the URDF's velocity limit (``advance``)."""
        a = self.gripper.actuated
        self.target = float(np.clip(position, a.lower, a.upper))
        return self.target

    def advance(self, data: Any, dt: float) -> None:
        """One step of the servo's reference toward the target (at most ``velocity dt``: a
        gripper drive's speed limit; none given: a step) into ``data.ctrl``."""
        if self.target is None:
            self.target = self.reference = self.position(data)
        if self.reference is None:
            self.reference = self.position(data)
        vmax = self.gripper.actuated.velocity
        step = self.target - self.reference
        if np.isfinite(vmax) and vmax > 0:
            step = float(np.clip(step, -vmax * dt, vmax * dt))
        self.reference += step
        data.ctrl[self.actuator] = self.reference

    def position(self, data: Any) -> float:
        return float(data.qpos[self.qpos[0]])

    def velocity(self, data: Any) -> float:
        return float(data.qvel[self.dof[0]])

    def effort(self, data: Any) -> float:
        return float(data.actuator_force[self.actuator])

    def positions(self, data: Any) -> np.ndarray:
        """Every gripper joint's position (``gripper.names`` order)."""
        return np.array(data.qpos[self.qpos])

    def velocities(self, data: Any) -> np.ndarray:
        return np.array(data.qvel[self.dof])


@dataclass
class GripperGoal:
    """One GripperCommand goal (module docstring) over simulated time: ``update(t, q, qd,
    effort)`` each step returns None while running, else the result ``dict`` (position,
    effort, stalled, reached_goal, succeeded)."""

    position: float
    max_effort: float
    start: float
    goal_tolerance: float = 0.01
    stall_velocity_threshold: float = 0.001
    stall_timeout: float = 1.0
    allow_stalling: bool = False

    def __post_init__(self) -> None:
        self._anchor: tuple[float, float] | None = None  # (t, q) the joint last moved from

    def update(self, t: float, q: float, qd: float, effort: float) -> dict | None:
        """The stall test is on the mean speed over ``stall_timeout`` (moved less than
        ``stall_velocity_threshold * stall_timeout``), not the instantaneous ``qd`` the
        controller reads: a finger pressed on an object in MuJoCo's soft contact jitters at
        about +-1e-3 m/s (1 um), which never reads as still."""
        if abs(self.position - q) < self.goal_tolerance:
            return self._result(q, effort, False, True)
        if self._anchor is None or abs(q - self._anchor[1]) > self.stall_velocity_threshold * self.stall_timeout:
            self._anchor = (t, q)
        elif t - self._anchor[0] > self.stall_timeout:
            return self._result(q, effort, True, False)
        return None

    def _result(self, q: float, effort: float, stalled: bool, reached: bool) -> dict:
        return {"position": q, "effort": effort, "stalled": stalled, "reached_goal": reached,
                "succeeded": reached or (stalled and self.allow_stalling)}


__all__ = ["Gripper", "GripperGoal", "GripperJoint", "GripperServo", "add_gripper", "add_gripper_actuator",
           "find_gripper",
           "rigid_body_inertia", "rigid_model"]
