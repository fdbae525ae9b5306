"""Where an arm touches a surface: the placement of a scene's ``pose: auto`` objects (ROS-free).

The arm touches with a probe: a stylus ``PROBE_LENGTH`` long along its last joint axis from
the tool origin, ending in the tip sphere (``mujoco_model.TIP_RADIUS``).  The MDH frame
origins of many wrists sit level with the flange (a UR arm's last three), so without it the
wrist's own collision capsules would scrape the surface.  With the URDF's collision shapes
(``urdf_visuals.urdf_collisions``) the last link's own mesh reaches past the tool origin
(the UR5's wrist 3 mesh: to 3 mm short of the 6 cm probe's tip): the probe is then longer,
its tip ``PROBE_MARGIN`` beyond that mesh (:func:`probe_lengths`), so the tip, not the
link, touches.  The probe is the contact tasks' tool: ``model.replace(tool=site.tool)``.

:func:`contact_site` finds, for an ``MdhModel``, a surface point the probe reaches with the
last joint axis along the surface normal (the probe pointing into it), from ``approach``
above it, and along the surface for ``slide`` metres
(a straight path sampled every 1 cm, each pose reached by IK from the previous one inside
the limits, at least ``LIMIT_MARGIN`` inside them, with every frame origin at least
``clearance`` off the surface: the xArm 7's IK put its second joint on its lower limit,
where MuJoCo's limit held the joint the law drove and the approach ran 7 cm off).  Candidates:
the tool at 0.3 to 0.7 of the arm's reach from the base, level with the base or below it
(a table top: normal ``up``, the slide across the radial direction) or in front of it (a wall:
normal toward the base).  Deterministic: the same arm gets the same site.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.sim.mujoco_model import TIP_RADIUS, workspace

PROBE_LENGTH = 0.06  # m, from the tool origin along the last joint axis to the tip's centre
PROBE_MARGIN = 0.02  # m, the tip sphere's far side beyond the last body's collision shapes
LIMIT_MARGIN = 0.1  # rad (m), every pose of the site this far inside the joint limits


@dataclass(frozen=True)
class ContactSite:
    """The surface point ``point`` (world; the slide starts there), outward ``normal``, unit
    ``slide`` direction and length, the probe as the tool transform ``tool`` (frame n -> probe
    tip centre; for ``MdhModel.replace(tool=...)``), its ``rotation`` (world) while touching,
    and the joint positions with the tool ``approach`` m above the start (``q_above``) and touching
    it (``q_touch``: the tip sphere's centre ``TIP_RADIUS`` off the surface)."""

    point: np.ndarray
    normal: np.ndarray
    slide: np.ndarray
    length: float
    tool: np.ndarray
    rotation: np.ndarray
    q_above: np.ndarray
    q_touch: np.ndarray
    approach: float
    mass: float = 0.0  # kg, the arm's effective mass along the normal at the probe, q_touch


    @property
    def middle(self) -> np.ndarray:
        """The middle of the slide, on the surface (where ``place_scene`` centres a face)."""
        return self.point + 0.5 * self.length * self.slide

    def tool_pose(self, s: float, height: float = 0.0) -> np.ndarray:
        """The tool pose ``s`` m along the slide, the tip sphere touching the surface plus
        ``height`` m off it."""
        T = np.eye(4)
        T[:3, :3] = self.rotation
        T[:3, 3] = self.point + s * self.slide + (TIP_RADIUS + height) * self.normal
        return T


def probe_lengths(model: MdhModel, shapes=()) -> tuple[float, float]:
    """The probe's length (m) along +z and along -z of frame n (module docstring):
    ``PROBE_LENGTH``, or longer where the last body's collision ``shapes`` (the URDF's,
    ``urdf_visuals.urdf_collisions``) reach farther, so that the tip sphere's far side is
    ``PROBE_MARGIN`` beyond every point of them and the tip, not the tool link, touches."""
    from rbd_ros.sim.mujoco_model import shape_points

    points = shape_points([s for s in shapes if s.body == model.dof - 1])
    if not len(points):
        return PROBE_LENGTH, PROBE_LENGTH
    z = points[:, 2] - model.tool[2, 3]  # along the last joint axis, from the tool origin
    return tuple(max(PROBE_LENGTH, float(h) + PROBE_MARGIN - TIP_RADIUS)
                 for h in (z.max(), -z.min()))


def contact_site(model: MdhModel, surface: str = "top", length: float = 0.1,
                 approach: float = 0.08, clearance: float = 0.03,
                 probe: tuple[float, float] = (PROBE_LENGTH, PROBE_LENGTH)) -> ContactSite:
    """The :class:`ContactSite` of the module docstring; ``surface`` ``top`` (a table) or
    ``front`` (a wall); ``probe``: its length along +z and -z (:func:`probe_lengths`).
    ``ValueError`` when no candidate works (an arm too short or too constrained), naming
    what was tried."""
    from rbd_ros.robot import Robot

    if surface not in ("top", "front"):
        raise ValueError(f"surface must be 'top' or 'front', got '{surface}'")
    ws = workspace(model)
    up = ws.up
    radial0 = _horizontal(model.base[:3, 0], up)
    tried = 0
    for frac in (0.5, 0.4, 0.6, 0.3, 0.7):
        for height in ((-0.25, -0.1, -0.4, 0.0) if surface == "top" else (0.0, 0.2, -0.2)):
            for az in (0.0, 0.5 * np.pi, -0.5 * np.pi, np.pi):
                radial = _rotate(radial0, up, az)
                side = np.cross(up, radial)
                centre = ws.centre + frac * ws.reach * radial + height * ws.reach * up
                normal, slide = (up, side) if surface == "top" else (-radial, side)
                start = centre - 0.5 * length * slide
                for sign in (1.0, -1.0):
                    tried += 1
                    tool = model.tool.copy()
                    tool[:3, 3] += sign * probe[sign < 0] * np.array([0.0, 0.0, 1.0])
                    robot = Robot(model.replace(tool=tool))
                    site = _try(robot, start, normal, slide, length, approach, clearance,
                                sign, radial)
                    if site is not None:
                        return site
    raise ValueError(f"no contact site on a '{surface}' surface for '{model.name}': {tried} "
                     f"candidates tried (tool at 0.3-0.7 of the reach {ws.reach:.3g} m, the last "
                     f"joint axis along the normal, a {length:g} m slide): place the scene "
                     "objects by hand (pose: {xyz: ..., rpy: ...})")


def _horizontal(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    h = v - (v @ up) * up
    if np.linalg.norm(h) < 1e-9:
        h = np.cross(up, [1.0, 0.0, 0.0] if abs(up[0]) < 0.9 else [0.0, 1.0, 0.0])
    return h / np.linalg.norm(h)


def _rotate(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues: ``v`` turned by ``angle`` about unit ``axis``."""
    return (v * np.cos(angle) + np.cross(axis, v) * np.sin(angle)
            + axis * (axis @ v) * (1.0 - np.cos(angle)))


def _try(robot, start: np.ndarray, normal: np.ndarray, slide: np.ndarray, length: float,
         approach: float, clearance: float, sign: float, radial: np.ndarray) -> ContactSite | None:
    """One candidate: frame n's z along ``-sign normal`` (the probe, ``sign`` z_n, into the
    surface), x along ``radial`` projected."""
    model = robot.model
    z = -sign * normal
    x = radial - (radial @ z) * z
    if np.linalg.norm(x) < 1e-6:
        x = slide - (slide @ z) * z
    x /= np.linalg.norm(x)
    Rn = np.column_stack([x, np.cross(z, x), z])
    R = Rn @ model.tool[:3, :3]  # the tool's orientation
    T = np.eye(4)
    T[:3, :3] = R
    q = None
    steps = [(0.0, approach)] + [(s, 0.0) for s in np.linspace(0.0, length, int(round(length / 0.01)) + 1)]
    out = []
    for s, h in steps:
        T[:3, 3] = start + s * slide + (TIP_RADIUS + h) * normal
        res = robot.ik(T, seeds=q, timeout=0.2, max_restarts=20 if q is None else 0,
                       max_iterations=200)
        if not res.solved:
            return None
        if q is not None and np.abs(res.positions - q).max() > 0.3:  # a jump: not a smooth slide
            return None
        if (np.minimum(res.positions - model.lower, model.upper - res.positions) < LIMIT_MARGIN).any():
            return None  # on a joint limit: MuJoCo's limit would hold the joint the law moves
        origins = robot.link_poses(res.positions)[:, :3, 3]
        near_tip = np.linalg.norm(origins - T[:3, 3], axis=1) <= TIP_RADIUS  # inside the probe
        heights = (origins[~near_tip] - start) @ normal
        if heights.size and heights.min() < clearance:
            return None
        q = res.positions
        out.append(q.copy())
    return ContactSite(start.copy(), normal.copy(), slide.copy(), float(length),
                       model.tool.copy(), R.copy(),
                       out[0], out[1], float(approach), normal_mass(robot, out[1], normal))


def normal_mass(robot, q: np.ndarray, normal: np.ndarray) -> float:
    """The arm's effective mass along unit ``normal`` at its tool origin, ``1 / (n^T J_v
    M^-1 J_v^T n)`` (the operational-space inertia of one direction, 003 (6.48)): the mass a
    contact there meets, which MuJoCo's soft contacts scale their stiffness by
    (``rbd_ros.sim.scene.contact_solref``)."""
    Jv = robot.jacobian(q)[:3]
    w = Jv.T @ normal
    return float(1.0 / (w @ np.linalg.solve(robot.mass_matrix(q, include_actuators=True), w)))
