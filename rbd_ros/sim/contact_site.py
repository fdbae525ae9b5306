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
from typing import cast

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.sim.mujoco_model import TIP_RADIUS, shape_points, workspace

PROBE_LENGTH = 0.06  # m, from the tool origin along the last joint axis to the tip's centre
PROBE_MARGIN = 0.02  # m, the tip sphere's far side beyond the last body's collision shapes
LIMIT_MARGIN = 0.1  # rad (m), every pose of the site this far inside the joint limits
SHAPE_CLEARANCE = 0.01  # m, every collision shape but the last body's this far off the surface


class Probe(tuple):
    """The probe's lengths ``(+z, -z)`` (a tuple, :func:`probe_lengths`) and the collision
    ``shapes`` they came from, which :func:`contact_site` then keeps off the surface."""

    shapes: tuple = ()

    def __new__(cls, lengths, shapes=()) -> "Probe":
        obj = super().__new__(cls, lengths)
        obj.shapes = tuple(shapes)
        return obj


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

    points = shape_points([s for s in shapes if s.body == model.dof - 1])
    if not len(points):
        return Probe((PROBE_LENGTH, PROBE_LENGTH), shapes)
    z = points[:, 2] - model.tool[2, 3]  # along the last joint axis, from the tool origin
    return Probe((max(PROBE_LENGTH, float(h) + PROBE_MARGIN - TIP_RADIUS)
                  for h in (z.max(), -z.min())), shapes)


def contact_site(model: MdhModel, surface: str = "top", length: float = 0.1,
                 approach: float = 0.08, clearance: float = 0.03,
                 probe: tuple[float, float] = (PROBE_LENGTH, PROBE_LENGTH),
                 force: float = 10.0) -> ContactSite:
    """The :class:`ContactSite` of the module docstring; ``surface`` ``top`` (a table, a
    shelf) or ``front`` (a wall); ``probe``: its length along +z and -z
    (:func:`probe_lengths`); ``force`` (N): what the site must be able to press along the
    normal within the effort limits, gravity held (``|g(q) + J^T m| <= tau_max``).

    Candidates, in order (the first that works is returned; deterministic), first with
    every collision shape ``probe`` carries (:class:`Probe`) but the last body's
    ``SHAPE_CLEARANCE`` off the surface (TIAGo Pro's wrist meshes lay on the table of a site
    whose frame origins cleared it: every cycle of the press lost), then, if none, without
    (the press and the bridge then name the link that touches: ``run_press``'s notes):

    1. the grid about the base (module docstring);
    2. the arm's actual workspace (:func:`workspace_candidates`): random joint positions
       inside the limits whose probe points into a surface of that kind (a table under a
       hanging arm, a wall beside a side-mounted one, a shelf above the base), each tried
       from its own joint positions (the redundancy: several seeds per region, not random
       restarts only).

    Both again, if none works, with the approach walked down in 1 cm steps where a single IK
    step from above to the surface moves a joint more than ``JUMP`` (a small arm's: the iCub's
    elbow 0.45 rad over 8 cm; the SO-100 and SO-101 get their sites so).

    ``ValueError`` when none works, naming the constraint that failed for the best candidate
    (the one that got furthest along its poses): ``reach``, ``orientation`` (the position
    is reachable, the probe along the normal is not), ``joint limit`` (inside
    ``LIMIT_MARGIN`` of one), ``effort limit`` (the press needs more torque than the URDF
    allows), ``clearance`` (another link nearer the surface than ``clearance``) or ``jump``
    (the slide needs a joint to jump)."""
    from rbd_ros.robot import Robot  # lazy: the robot front (35 ms of import)

    if surface not in SURFACES:
        raise ValueError(f"surface must be one of {', '.join(SURFACES)}, got '{surface}'")
    if not (np.isfinite(force) and force >= 0.0):
        raise ValueError(f"force must be a finite number >= 0 N, got {force}")
    ws = workspace(model)
    robots = {}
    for sign in (1.0, -1.0):
        tool = model.tool.copy()
        tool[:3, 3] += sign * probe[sign < 0] * np.array([0.0, 0.0, 1.0])
        robots[sign] = Robot(model.replace(tool=tool))
    tried = 0
    best: _Miss | None = None
    points = _body_points(model, probe)
    # without the shapes: the site the press then notes a link touching; with the approach
    # walked (_descend) only when nothing fits without: the sites found before stay
    for walk, shapes in [(w, s) for w in (False, True) for s in ([points, {}] if points else [{}])]:
        limits = (length, approach, clearance, float(force), shapes, walk)
        for cand in _candidates(model, ws, surface, length, robots):
            tried += 1
            got = _try(robots[cand.sign], cand, limits)
            if isinstance(got, ContactSite):
                return got
            if best is None or got.progress > best.progress:
                best = got
    why = "" if best is None else f"; the best candidate: {best.describe(robots, length)}"
    raise ValueError(f"no contact site on a '{surface}' surface for '{model.name}': {tried} "
                     f"candidates tried (the tool at 0.3-0.7 of the reach {ws.reach:.3g} m about "
                     f"the base, then {WORKSPACE_SAMPLES} joint positions of the arm's workspace; "
                     f"the last joint axis along the normal, a {length:g} m slide, {force:g} N)"
                     f"{why}: place the scene objects by hand (pose: {{xyz: ..., rpy: ...}})")


SURFACES = ("top", "front")
WORKSPACE_SAMPLES = 768  # joint positions the workspace search draws (a fixed seed)
WORKSPACE_TRIES = 24  # of them, the candidates tried (the best aligned, 5 cm apart)
ALIGN_MIN = 0.7  # the sampled probe axis within 45 deg of the inward normal
CHECKS = ("reach", "jump", "joint limit", "clearance", "effort limit")  # _try's, in order
JUMP = 0.3  # rad (m): the most a joint may move between two poses 1 cm apart (a smooth path)


@dataclass(frozen=True)
class _Candidate:
    """One try: the slide from ``start`` along ``slide`` on a surface of outward ``normal``,
    the probe ``sign`` z_n into it, frame n's x near ``x_hint``; IK from ``seed`` (None:
    random restarts)."""

    start: np.ndarray
    normal: np.ndarray
    slide: np.ndarray
    sign: float
    x_hint: np.ndarray
    seed: np.ndarray | None = None
    patient: bool = False  # the workspace's: IK to 10 um / 1e-4 rad, 400 iterations


@dataclass(frozen=True)
class _Miss:
    """Why a candidate failed: ``constraint`` at pose ``step`` (0: above the start, 1: touching
    it, then along the slide), ``detail``; ``target`` the tool pose it failed at."""

    constraint: str
    step: int
    detail: str
    cand: _Candidate
    target: np.ndarray
    q: np.ndarray | None = None

    @property
    def progress(self) -> float:
        """How far it got: the pose, then the checks it passed there (``_try``'s order)."""
        return self.step + 0.2 * CHECKS.index(self.constraint)

    def describe(self, robots: dict, length: float) -> str:
        c = self.cand
        where = (f"the probe at {np.round(self.target[:3, 3], 3).tolist()} on a surface of "
                 f"normal {np.round(c.normal, 3).tolist()}")
        constraint, detail = self.constraint, self.detail
        if constraint == "reach":  # position alone reachable: it is the orientation
            res = robots[c.sign].ik(self.target[:3, 3], seeds=self.q, position_only=True,
                                    timeout=0.2, max_restarts=20, max_iterations=200)
            if res.solved:
                constraint = "orientation"
                detail = (f"the position is reachable but not with the last joint axis along "
                          f"the normal ({detail})")
        steps = int(round(length / 0.01)) + 2
        return f"{where}, {self.step} of {steps} poses, failed on {constraint}: {detail}"


def _candidates(model: MdhModel, ws, surface: str, length: float, robots: dict):
    """The grid about the base, then the workspace's (``contact_site``)."""
    up = ws.up
    radial0 = _horizontal(model.base[:3, 0], up)
    if surface == "front":  # a wall's normal along a world axis (the laws' gains are per axis)
        radial0 = _world_axis(radial0)
    for frac in (0.5, 0.4, 0.6, 0.3, 0.7):
        for height in ((-0.25, -0.1, -0.4, 0.0) if surface == "top" else (0.0, 0.2, -0.2)):
            for az in (0.0, 0.5 * np.pi, -0.5 * np.pi, np.pi):
                radial = _rotate(radial0, up, az)
                side = np.cross(up, radial)
                centre = ws.centre + frac * ws.reach * radial + height * ws.reach * up
                normal, slide = (up, side) if surface == "top" else (-radial, side)
                start = centre - 0.5 * length * slide
                for sign in (1.0, -1.0):
                    yield _Candidate(start, normal, slide, sign, radial)
    yield from workspace_candidates(model, ws, surface, length, robots)


def workspace_candidates(model: MdhModel, ws, surface: str, length: float, robots: dict):
    """Candidates from the arm's actual workspace: ``WORKSPACE_SAMPLES`` joint positions
    inside the limits (``LIMIT_MARGIN`` in), the probe tip of each (either probe ``sign``,
    ``robots[sign]``) and its axis; a surface of the kind (``top``: normal up; ``front``:
    normal a horizontal world axis, the one facing the base first) where that axis points
    within 45 deg of the inward normal and every other frame origin is on the surface's
    outer side, its middle at the tip (minus the tip radius).  The ``WORKSPACE_TRIES`` best
    aligned, at least 5 cm apart, each seeded by its own joint positions; the slide along
    the world axis in the surface that keeps it closest to the base's height."""
    up = ws.up
    lo = np.where(np.isfinite(model.lower), model.lower + LIMIT_MARGIN, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper - LIMIT_MARGIN, np.pi)
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    Q = np.random.default_rng(1).uniform(lo, hi, (WORKSPACE_SAMPLES, model.dof))
    horizontal = [a for a in np.eye(3) if abs(a @ up) < 1e-9]
    scored = []
    for sign, robot in robots.items():
        tool = robot.model.tool
        for i, q in enumerate(Q):
            P = robot.link_poses(q)  # the base, then frames 1..n
            tip = P[-1, :3, :3] @ tool[:3, 3] + P[-1, :3, 3]  # the probe's tip centre
            axis = sign * P[-1, :3, 2]  # and its direction (frame n's z)
            others = P[:, :3, 3]
            if surface == "top":
                normals = [up]
            else:  # the horizontal axes, facing the base first
                away = tip - ws.centre
                normals = sorted((s * a for a in horizontal for s in (1.0, -1.0)),
                                 key=lambda n: float(n @ away))
            for n in normals:
                align = float(-(axis @ n))
                if align < ALIGN_MIN:
                    continue
                if ((others - tip) @ n).min() < 0.5 * TIP_RADIUS:  # a link at or below it
                    continue
                scored.append((-align, i, sign, n, tip))
    scored.sort(key=lambda s: s[0])
    chosen: list[np.ndarray] = []
    for _, i, sign, n, tip in scored:
        if len(chosen) >= WORKSPACE_TRIES:
            return
        if any(np.linalg.norm(tip - TIP_RADIUS * n - c) < 0.05 for c in chosen):
            continue
        robot = robots[sign]
        q = align_axis(robot, Q[i], tip, -sign * n, lo, hi)
        if q is None:
            continue
        P = robot.link_poses(q)
        point = P[-1, :3, :3] @ robot.model.tool[:3, 3] + P[-1, :3, 3] - TIP_RADIUS * n
        chosen.append(point)
        in_plane = [a for a in np.eye(3) if abs(a @ n) < 1e-9]
        slide = min(in_plane, key=lambda a: abs(a @ up))  # horizontal where it can be
        slide = slide if slide @ (ws.centre - point) >= 0.0 else -slide  # toward the base
        yield _Candidate(point - 0.5 * length * slide, n.copy(), slide.copy(), sign,
                         P[-1, :3, 0].copy(), q, patient=True)


def align_axis(robot, q: np.ndarray, tip: np.ndarray, z_d: np.ndarray, lo: np.ndarray,
               hi: np.ndarray, iterations: int = 100) -> np.ndarray | None:
    """Joint positions near ``q`` with the tool origin at ``tip`` and frame n's z along unit
    ``z_d``, the rotation about it free (5 constraints: the redundancy a full pose target
    would spend), by damped least squares on ``r = [p - p_d; z - z_d]``, ``dr/dq = [J_v;
    -[z]x J_w]`` (``z' = w x z``), each iterate clamped into ``[lo, hi]``; None if it does
    not converge to 0.1 mm and 1e-4 rad."""
    q = q.copy()
    for _ in range(iterations):
        T = robot.fk(q)
        z = robot.link_poses(q)[-1, :3, 2]
        r = np.concatenate([T[:3, 3] - tip, z - z_d])
        if np.abs(r[:3]).max() < 1e-4 and np.abs(r[3:]).max() < 1e-4:
            return q
        J = robot.jacobian(q)
        zx = np.array([[0.0, -z[2], z[1]], [z[2], 0.0, -z[0]], [-z[1], z[0], 0.0]])
        A = np.vstack([J[:3], -zx @ J[3:]])
        dq = A.T @ np.linalg.solve(A @ A.T + 1e-4 * np.eye(6), -r)  # DLS step
        q = np.clip(q + dq, lo, hi)
    return None


def _body_points(model: MdhModel, probe) -> dict[int, np.ndarray]:
    """The collision shapes' points (``mujoco_model.shape_points``) per body but the last
    (the probe's), when ``probe`` carries them (:class:`Probe`)."""

    shapes = getattr(probe, "shapes", ())
    bodies = sorted({s.body for s in shapes if s.body != model.dof - 1})
    return {b: shape_points([s for s in shapes if s.body == b]) for b in bodies}


def _world_axis(v: np.ndarray) -> np.ndarray:
    """The signed world axis nearest unit ``v``."""
    k = int(np.argmax(np.abs(v)))
    out = np.zeros(3)
    out[k] = np.sign(v[k])
    return out


def _horizontal(v: np.ndarray, up: np.ndarray) -> np.ndarray:
    h = v - (v @ up) * up
    if np.linalg.norm(h) < 1e-9:
        h = np.cross(up, [1.0, 0.0, 0.0] if abs(up[0]) < 0.9 else [0.0, 1.0, 0.0])
    return h / np.linalg.norm(h)


def _rotate(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues: ``v`` turned by ``angle`` about unit ``axis``."""
    return (v * np.cos(angle) + np.cross(axis, v) * np.sin(angle)
            + axis * (axis @ v) * (1.0 - np.cos(angle)))


def _try(robot, cand: _Candidate, limits: tuple) -> ContactSite | _Miss:
    """One candidate: frame n's z along ``-sign normal`` (the probe, ``sign`` z_n, into the
    surface), x along ``x_hint`` projected; every pose (above the start, then along the
    slide every 1 cm) by IK from the last, checked against the joint limits (with
    ``LIMIT_MARGIN``), a smooth slide (with ``walk`` in ``limits``, an approach that moves a
    joint more than ``JUMP`` is walked down in 1 cm steps: ``_descend``), the clearance of the
    other frame origins and the effort the press ``force`` needs (``|g(q) + J^T m|``, ``m = -force n``: 003 (2.2))."""
    length, approach, clearance, force, body_points, walk = limits
    model = robot.model
    start, normal, slide, sign = cand.start, cand.normal, cand.slide, cand.sign
    z = -sign * normal
    x = cand.x_hint - (cand.x_hint @ z) * z
    if np.linalg.norm(x) < 1e-6:
        x = slide - (slide @ z) * z
    x /= np.linalg.norm(x)
    Rn = np.column_stack([x, np.cross(z, x), z])
    R = Rn @ model.tool[:3, :3]  # the tool's orientation
    T = np.eye(4)
    T[:3, :3] = R
    q = None
    steps = [(0.0, approach)] + [(s, 0.0) for s in np.linspace(0.0, length, int(round(length / 0.01)) + 1)]
    wrench = np.concatenate([-force * normal, np.zeros(3)])  # what the probe exerts
    limit = np.where(np.isfinite(model.effort_limit), model.effort_limit, np.inf)
    ik_kw = ({"max_iterations": 400, "position_tolerance": 1e-5, "orientation_tolerance": 1e-4}
             if cand.patient else {"max_iterations": 200})
    out = []
    for k, (s, h) in enumerate(steps):
        T[:3, 3] = start + s * slide + (TIP_RADIUS + h) * normal
        seed = cand.seed if q is None else q
        res = robot.ik(T, seeds=seed, timeout=0.2, max_restarts=20 if seed is None else 0,
                       **ik_kw)
        if not res.solved and q is None and seed is not None:  # its own seed, then restarts
            res = robot.ik(T, seeds=None, timeout=0.2, max_restarts=20, **ik_kw)

        def miss(constraint: str, detail: str, k=k, res=res) -> _Miss:
            return _Miss(constraint, k, detail, cand, T.copy(), res.positions.copy())

        if not res.solved:
            return miss("reach", f"IK left {res.position_errors * 1e3:.3g} mm and "
                                 f"{np.degrees(res.orientation_errors):.3g} deg")
        walked = None
        if walk and k == 1 and np.abs(res.positions - q).max() > JUMP:  # the approach: walked down
            # k == 1: q is step 0's solved pose (an unsolved step returned above)
            walked = _descend(robot, T, cast(np.ndarray, q), approach * normal, ik_kw)
            res = walked or res
        if walked is None and q is not None and np.abs(res.positions - q).max() > JUMP:  # a jump
            j = int(np.argmax(np.abs(res.positions - q)))
            return miss("jump", f"'{model.joint_names[j]}' by "
                                f"{abs(res.positions[j] - q[j]):.3g} rad from the pose before")
        room = np.minimum(res.positions - model.lower, model.upper - res.positions)
        if (room < LIMIT_MARGIN).any():  # on a limit: MuJoCo's limit would hold the joint the law moves
            j = int(np.argmin(room))
            return miss("joint limit", f"'{model.joint_names[j]}' {room[j]:.3g} rad (m) from "
                                       f"its limit (< {LIMIT_MARGIN:g})")
        poses = robot.link_poses(res.positions)
        origins = poses[:, :3, 3]
        near_tip = np.linalg.norm(origins - T[:3, 3], axis=1) <= TIP_RADIUS  # inside the probe
        heights = (origins[~near_tip] - start) @ normal
        if heights.size and heights.min() < clearance:
            return miss("clearance", f"a frame origin {heights.min() * 1e3:.3g} mm off the "
                                     f"surface (< {clearance * 1e3:g} mm)")
        for b, pts in body_points.items():  # body b's shapes, in frame b + 1
            gap = float(((pts @ poses[b + 1, :3, :3].T + poses[b + 1, :3, 3] - start) @ normal).min())
            if gap < SHAPE_CLEARANCE:
                return miss("clearance", f"the collision shapes of body {b} "
                                         f"('{model.joint_names[b]}') {gap * 1e3:.3g} mm off the "
                                         f"surface (< {SHAPE_CLEARANCE * 1e3:g} mm)")
        # every pose holds the arm against gravity, touching it presses too: within the limits
        need = robot.gravity(res.positions)
        if h == 0.0:
            need = need + robot.jacobian(res.positions).T @ wrench
        over = np.abs(need) / limit
        if over.max() > 1.0:
            j = int(np.argmax(over))
            return miss("effort limit", f"'{model.joint_names[j]}' needs {abs(need[j]):.4g} "
                                        f"N m (limit {limit[j]:.4g}) "
                                        + ("to press" if h == 0.0 else "to hold the arm above the surface"))
        q = res.positions
        out.append(q.copy())
    return ContactSite(start.copy(), normal.copy(), slide.copy(), float(length),
                       model.tool.copy(), R.copy(),
                       out[0], out[1], float(approach), normal_mass(robot, out[1], normal))


def _descend(robot, T: np.ndarray, q: np.ndarray, up: np.ndarray, ik_kw: dict):
    """The touching pose ``T`` from ``q`` (the pose ``up`` above it) by IK every 1 cm along
    the approach, each step from the last (``_try``: a small arm's 8 cm approach is a larger
    joint step than ``JUMP`` in one solve, the iCub's elbow 0.45 rad, though no branch
    changes); the last step's result, or None when a step fails or jumps."""
    steps = max(int(np.ceil(np.linalg.norm(up) / 0.01)), 1)
    Tk = T.copy()
    res = None
    for f in np.linspace(1.0, 0.0, steps + 1)[1:]:
        Tk[:3, 3] = T[:3, 3] + f * up
        res = robot.ik(Tk, seeds=q, timeout=0.2, max_restarts=0, **ik_kw)
        if not res.solved or np.abs(res.positions - q).max() > JUMP:
            return None
        q = res.positions
    return res


def normal_mass(robot, q: np.ndarray, normal: np.ndarray) -> float:
    """The arm's effective mass along unit ``normal`` at its tool origin, ``1 / (n^T J_v
    M^-1 J_v^T n)`` (the operational-space inertia of one direction, 003 (6.48)): the mass a
    contact there meets, which MuJoCo's soft contacts scale their stiffness by
    (``rbd_ros.sim.scene.contact_solref``)."""
    Jv = robot.jacobian(q)[:3]
    w = Jv.T @ normal
    return float(1.0 / (w @ np.linalg.solve(robot.mass_matrix(q, include_actuators=True), w)))
