"""Choose the serial chain base_link -> tip_link in a URDF tree and freeze everything else.

* The chain's MDH joints are the revolute, continuous and prismatic joints on the path from
  ``base_link`` down to ``tip_link`` that are not locked.  Fixed (and locked) joints on the
  path are folded: the links they carry ride on the previous moving link.
* Movable joints off the chain (hands, fingers, sensors on a pan joint, ...) are locked, like
  Pinocchio's ``buildReducedModel``: at the position given in ``locked_joints``, else the
  ``<mimic>`` relation applied to the mimicked joint's locked position, else 0.  Their links
  ride on the chain link they hang from.  Floating/planar joints off the chain are frozen
  at the identity.
* Everything that is not below ``base_link`` (including joints above it) is the fixed
  world: ``base_link`` is the world frame, so those links neither move nor load the chain.
  With ``carry_above`` (a moving ground base) the links fixed to ``base_link`` from above
  (e.g. ``base_footprint`` when ``base_link`` is its child, and whatever is fixed to it:
  covers, sensors) ride on the base instead (body 0, their off-chain movable joints locked
  as below); the walk up stops at the first non-fixed joint (what lies beyond is the world).

:func:`select_chain` returns a :class:`Chain` holding, for the reference configuration
(chain joints at q = 0, locked joints at their values), every link's pose in the
``base_link`` frame and the index of the moving body it rides on (0 = the fixed world);
those bodies become the links of the modified-DH chain (003 §1.6).
"""
from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from rbd_ros.urdf.errors import UrdfError
from rbd_ros.urdf.parse import MOVABLE, UrdfTree
from rbd_ros.urdf.transforms import inverse, joint_motion


@dataclass(frozen=True)
class Chain:
    """The selected chain and the frozen reference configuration (see module docstring)."""

    base: str
    tip: str
    joints: tuple[str, ...]  # MDH joints, base -> tip
    path: tuple[str, ...]  # every joint on the path base -> tip
    positions: dict[str, float]  # position of every locked / off-chain movable joint below base
    reference: dict[str, np.ndarray]  # link -> pose in the base_link frame at the reference
    body: dict[str, int]  # link below base -> moving body it rides on (0 = world, i = joint i)
    children: tuple[str, ...]  # URDF link moved directly by each MDH joint

    def links_of(self, i: int) -> list[str]:
        """URDF links rigidly attached to moving body ``i`` (1-based), chain link first."""
        first = self.children[i - 1]
        return [first] + [ln for ln, b in self.body.items() if b == i and ln != first]


def _unknown(kind: str, name: str, known, label: str) -> UrdfError:
    close = difflib.get_close_matches(name, list(known), n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else \
        f"; known {kind}s: {', '.join(sorted(known))}"
    return UrdfError(f"{label}: unknown {kind} '{name}'{hint}")


def _check_locked(tree: UrdfTree, locked: Mapping[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in locked.items():
        if name not in tree.joints:
            raise _unknown("joint", name, tree.joints, tree.source)
        kind = tree.joints[name].type
        if kind not in MOVABLE:
            raise UrdfError(f"{tree.source}: joint '{name}' is {kind}; only revolute, continuous and "
                            f"prismatic joints can be locked at a position")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise UrdfError(f"{tree.source}: locked position of joint '{name}' is not a number: {value!r}") from None
        if not np.isfinite(v):
            raise UrdfError(f"{tree.source}: locked position of joint '{name}' is not finite: {v}")
        out[name] = v
    return out


def _path(tree: UrdfTree, base: str, tip: str) -> list[str]:
    """Joints from ``base`` down to ``tip``; error if ``tip`` is not below ``base``."""
    out: list[str] = []
    link = tip
    while link != base:
        if link not in tree.parent_joint:
            raise UrdfError(f"{tree.source}: tip_link '{tip}' is not below base_link '{base}' in the URDF "
                            f"tree (root '{tree.root}'); the chain must run from parent to child links")
        jn = tree.parent_joint[link]
        out.append(jn)
        link = tree.joints[jn].parent
    return out[::-1]


def _infer_tip(tree: UrdfTree, base: str, locked: Mapping[str, float]) -> str:
    """The tip of the single chain of free joints below ``base`` (see :func:`select_chain`)."""
    below = tree.subtree(base)
    free = [tree.parent_joint[ln] for ln in below[1:]
            if tree.joints[tree.parent_joint[ln]].type != "fixed" and tree.parent_joint[ln] not in locked]
    if not free:
        raise UrdfError(f"{tree.source}: no movable joint below base_link '{base}'")
    depth = {j: len(tree.ancestors(tree.joints[j].child)) for j in free}
    deepest = max(free, key=lambda j: depth[j])
    on_path = set(tree.ancestors(tree.joints[deepest].child))
    if not all(j in on_path for j in free):
        free_set = set(free)
        leaves = [ln for ln in below if not tree.child_joints.get(ln)
                  and free_set & set(tree.ancestors(ln))]
        raise UrdfError(
            f"{tree.source}: robot '{tree.name}' branches below base_link '{base}' (movable joints on "
            f"several branches); give tip_link, one of: {', '.join(leaves)} "
            f"(or lock the other branches' joints)")
    tip = tree.joints[deepest].child
    while True:  # follow an unbranched run of fixed/locked joints to the end effector
        kids = tree.child_joints.get(tip, ())
        if len(kids) != 1 or (tree.joints[kids[0]].type != "fixed" and kids[0] not in locked):
            return tip
        tip = tree.joints[kids[0]].child


def select_chain(tree: UrdfTree, base_link: str | None = None, tip_link: str | None = None,
                 locked_joints: Mapping[str, float] | None = None, carry_above: bool = False,
                 ignore: tuple[str, ...] = ()) -> Chain:
    """Select the chain and freeze the rest (see the module docstring).

    ``base_link`` defaults to the URDF root.  Without ``tip_link`` the robot must have a
    single chain of movable (non-locked) joints below ``base_link``; the tip is then the
    link moved by the last of them, followed through any unbranched fixed joints.  A
    branching robot raises a :class:`UrdfError` listing the candidate tips; joints in
    ``ignore`` (a mobile base's wheels) are no branches for that.  ``carry_above``: see the
    module docstring.
    """
    locked = _check_locked(tree, locked_joints or {})
    base = base_link if base_link is not None else tree.root
    if base not in tree.links:
        raise _unknown("base_link", base, tree.links, tree.source)
    if tip_link is not None and tip_link not in tree.links:
        raise _unknown("tip_link", tip_link, tree.links, tree.source)
    tip = tip_link if tip_link is not None else _infer_tip(tree, base, {**dict.fromkeys(ignore, 0.0), **locked})
    path = _path(tree, base, tip)

    chain_joints: list[str] = []
    for jn in path:
        j = tree.joints[jn]
        if j.type == "fixed" or jn in locked:
            continue
        if j.type in ("floating", "planar"):
            raise UrdfError(f"{tree.source}: joint '{jn}' between '{base}' and '{tip}' is {j.type}; only "
                            f"revolute, continuous and prismatic joints can be modified-DH joints")
        if j.mimic is not None:
            raise UrdfError(f"{tree.source}: joint '{jn}' between '{base}' and '{tip}' mimics joint "
                            f"'{j.mimic.joint}'; a serial MDH chain has independent joints "
                            f"(lock it with locked_joints / --lock {jn}=VALUE)")
        chain_joints.append(jn)
    if not chain_joints:
        raise UrdfError(f"{tree.source}: no movable joint between base_link '{base}' and tip_link '{tip}'"
                        + (" (all of them are locked)" if any(j in locked for j in path) else ""))

    on_chain = set(chain_joints)
    below = tree.subtree(base)
    positions: dict[str, float] = {}

    def position(jn: str, seen: tuple[str, ...] = ()) -> float:
        if jn in on_chain:
            return 0.0
        if jn in locked:
            return locked[jn]
        j = tree.joints[jn]
        if j.mimic is None:
            return 0.0
        if j.mimic.joint in on_chain:
            raise UrdfError(f"{tree.source}: off-chain joint '{jn}' mimics chain joint '{j.mimic.joint}', so its "
                            f"links move with the chain in a way MDH cannot express; lock it explicitly "
                            f"(locked_joints / --lock {jn}=VALUE) to freeze it")
        if j.mimic.joint in seen:
            raise UrdfError(f"{tree.source}: mimic joints form a cycle: {' -> '.join(seen + (jn,))}")
        return j.mimic.multiplier * position(j.mimic.joint, seen + (jn,)) + j.mimic.offset

    reference = {base: np.eye(4)}
    body = {base: 0}
    index = {jn: i + 1 for i, jn in enumerate(chain_joints)}

    def hang(links: list[str]) -> None:  # place links below an already placed parent
        for link in links:
            jn = tree.parent_joint[link]
            j = tree.joints[jn]
            q = 0.0
            if j.movable and jn not in on_chain:
                q = positions[jn] = position(jn)
            reference[link] = reference[j.parent] @ j.origin @ joint_motion(j.type, j.axis, q)
            body[link] = index.get(jn, body[j.parent])

    hang(below[1:])
    link = base
    while carry_above and link in tree.parent_joint and tree.joints[tree.parent_joint[link]].type == "fixed":
        j = tree.joints[tree.parent_joint[link]]
        reference[j.parent] = reference[link] @ inverse(j.origin)
        body[j.parent] = 0
        for jn in tree.child_joints[j.parent]:
            if jn != j.name:
                hang(tree.subtree(tree.joints[jn].child))
        link = j.parent
    return Chain(base=base, tip=tip, joints=tuple(chain_joints), path=tuple(path),
                 positions=positions, reference=reference, body=body,
                 children=tuple(tree.joints[jn].child for jn in chain_joints))
