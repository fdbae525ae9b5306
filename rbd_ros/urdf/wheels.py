"""The two drive wheels of a differential-drive base in a URDF: ros2_control
``diff_drive_controller``'s ``wheel_radius`` r and ``wheel_separation`` s, and the wheels'
spin inertia (``MdhModel`` wheel fields).

A wheel is a movable joint off the arm chain whose child link rides on ``base_link`` (the
converter freezes it, so its mass is in the base body).  With its joint frame ``T`` (pose in
``base_link`` at the reference) and axis ``a``:

* left / right: the wheel at ``+y`` / ``-y`` of ``base_link``; both axles along ``+-y``;
* ``s = |y_left - y_right|`` (the contact points' distance);
* ``r``: the ``<cylinder>`` (or ``<sphere>``) radius of the wheel link's collision geometry,
  else its visual geometry;
* spin inertia ``I_a = a^T I_c a + m |a x c|^2`` (about the axle through the joint origin;
  ``c`` the centre of mass in the joint frame, parallel-axis theorem).

The base point of ``diff_drive`` is ``base_link``'s origin, which must lie on the vertical
through the axle midpoint (its x and the midpoint's x, y agree to 1 mm; every point of that
line has the same planar velocity, so ``base_link`` or a ``base_footprint`` under it give the
same dynamics); otherwise the constraint would be wrong and the conversion refuses.  The axle's
height above it (``wheel_axle_height``, the midpoint's z) places the wheels in a simulator,
and the collision spheres on the base touching the same floor are its casters
(``find_casters``).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import cast

import numpy as np

from rbd_ros.urdf.chain import Chain
from rbd_ros.urdf.errors import UrdfError
from rbd_ros.urdf.parse import UrdfTree

_TOL = 1e-3  # m: how far the axle midpoint may sit from base_link's origin


def _candidates(tree: UrdfTree, chain: Chain) -> list[str]:
    """Movable joints off the chain whose child rides on the base body, axle along +-y."""
    out = []
    for jn, j in tree.joints.items():
        if not j.movable or jn in chain.joints or chain.body.get(j.child, -1) != 0:
            continue
        axis = chain.reference[j.child][:3, :3] @ j.axis
        if abs(abs(axis[1]) - 1.0) < 1e-6:
            out.append(jn)
    return out


def wheel_like(tree: UrdfTree, base: str) -> tuple[str, ...]:
    """Movable joints hanging from ``base`` through fixed joints only, axle along its +-y (at
    the joints' zero): the drive wheels, before any chain is chosen (the tip inference of a
    ``diff_drive`` base skips them, as it skips locked joints)."""
    out, stack = [], [(base, np.eye(4))]
    while stack:
        link, T = stack.pop()
        for jn in tree.child_joints.get(link, ()):
            j = tree.joints[jn]
            Tc = T @ j.origin
            if j.type == "fixed":
                stack.append((j.child, Tc))
            elif j.movable and abs(abs((Tc[:3, :3] @ j.axis)[1]) - 1.0) < 1e-6:
                out.append(jn)
    return tuple(out)


def _round_shapes(root: ET.Element, link: str, kinds: tuple[str, ...] = ("collision", "visual")):
    """``(shape, radius, xyz of its origin in the link frame)`` of the link's ``<cylinder>`` and
    ``<sphere>`` geometries, collision before visual."""
    for lk in root.iter("link"):
        if lk.get("name") != link:
            continue
        for kind in kinds:
            for el in lk.iter(kind):
                for shape in ("cylinder", "sphere"):
                    g = el.find(f"geometry/{shape}")
                    r = None if g is None else g.get("radius")
                    if r is not None:
                        o = el.find("origin")
                        xyz = [float(x) for x in (o.get("xyz") or "0 0 0").split()] if o is not None else [0.0] * 3
                        yield shape, float(r), np.array(xyz)


def _radius(tree: UrdfTree, link: str) -> float | None:
    return next((r for _, r, _ in _round_shapes(ET.fromstring(tree.xml), link)), None)


def find_casters(tree: UrdfTree, chain: Chain, wheels: tuple[str, str], radius: float,
                 axle_height: float) -> tuple[tuple[float, float, float], ...]:
    """``(x, y, radius)`` in ``base_link`` of the base's passive ground contacts: collision
    spheres on links riding on the base (not the drive wheels) whose lowest point is on the
    floor the wheels stand on (``z = axle_height - radius``, within ``_TOL``).  A simulator
    puts its casters there."""
    root = ET.fromstring(tree.xml)
    skip = {tree.joints[w].child for w in wheels}
    floor = axle_height - radius
    out = []
    for link, body in chain.body.items():
        if body != 0 or link in skip:
            continue
        for shape, rc, xyz in _round_shapes(root, link, ("collision",)):
            p = chain.reference[link][:3, :3] @ xyz + chain.reference[link][:3, 3]
            if shape == "sphere" and abs(p[2] - rc - floor) < _TOL:
                out.append((float(p[0]), float(p[1]), rc))
    return tuple(sorted(out))


def _spin_inertia(tree: UrdfTree, chain: Chain, jn: str) -> float:
    j = tree.joints[jn]
    lk = tree.links[j.child]
    axis = cast(np.ndarray, j.axis)  # a wheel turns (a movable joint): it has an axis
    a = axis / np.linalg.norm(axis)
    R, c = lk.frame[:3, :3], lk.frame[:3, 3]  # child link = joint frame at the reference
    Ic = R @ lk.inertia @ R.T
    return float(a @ Ic @ a + lk.mass * np.dot(np.cross(a, c), np.cross(a, c)))


def find_wheels(tree: UrdfTree, chain: Chain, left: str | None = None, right: str | None = None,
                radius: float | None = None, separation: float | None = None) -> dict:
    """``MdhModel`` wheel fields (module docstring); given values win over the URDF's."""
    cands = _candidates(tree, chain)
    given = {"left": left, "right": right}
    for role, sign, where in (("left", 1.0, "+y"), ("right", -1.0, "-y")):
        if given[role] is None:
            found = [jn for jn in cands if sign * chain.reference[tree.joints[jn].child][1, 3] > 0]
            if len(found) != 1:
                raise UrdfError(f"{tree.source}: cannot tell the {role} drive wheel of '{chain.base}' "
                                f"(wheel joints with an axle along y at {where}: {found or 'none'}); "
                                f"name it with {role}_wheel=")
            given[role] = found[0]
    left, right = cast(str, given["left"]), cast(str, given["right"])  # each given or found above
    for role, jn in (("left_wheel", left), ("right_wheel", right)):
        if jn not in tree.joints:
            raise UrdfError(f"{tree.source}: {role} '{jn}' is not a joint of the URDF")
        if not tree.joints[jn].movable:
            raise UrdfError(f"{tree.source}: {role} '{jn}' is a {tree.joints[jn].type} joint; a drive wheel "
                            f"turns (continuous or revolute); wheels of '{chain.base}': {cands or 'none'}")
        if jn not in cands:
            raise UrdfError(f"{tree.source}: {role} '{jn}' is not a wheel of '{chain.base}' (a movable "
                            f"joint off the arm chain, riding on the base, axle along y); wheels: {cands}")
    pl = chain.reference[tree.joints[left].child][:3, 3]
    pr = chain.reference[tree.joints[right].child][:3, 3]
    mid = 0.5 * (pl + pr)
    if abs(mid[0]) > _TOL or abs(mid[1]) > _TOL or abs(pl[0] - pr[0]) > _TOL:
        raise UrdfError(f"{tree.source}: the axle midpoint of '{left}' and '{right}' is at "
                        f"({mid[0]:.4g}, {mid[1]:.4g}) in '{chain.base}'; a diff_drive base point is "
                        f"base_link's origin, which must sit on (or under) the axle midpoint")
    if separation is None:
        separation = float(pl[1] - pr[1])
    if radius is None:
        rl, rr = _radius(tree, tree.joints[left].child), _radius(tree, tree.joints[right].child)
        if rl is None or rr is None or abs(rl - rr) > 1e-9:
            raise UrdfError(f"{tree.source}: no common cylinder/sphere radius on the wheel links of "
                            f"'{left}' and '{right}' (found {rl}, {rr}); give wheel_radius=")
        radius = rl
    spin = 0.5 * (_spin_inertia(tree, chain, left) + _spin_inertia(tree, chain, right))
    casters = find_casters(tree, chain, (left, right), float(radius), float(mid[2]))
    return {"wheel_radius": float(radius), "wheel_separation": float(separation),
            "wheel_joints": (left, right), "wheel_spin_inertia": spin, "wheel_axle_height": float(mid[2]),
            "wheel_effort_limit": float(min(tree.joints[left].effort, tree.joints[right].effort)),
            "casters": casters}
