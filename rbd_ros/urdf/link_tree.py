"""Every link of the URDF tree on the MDH model's bodies: ``rbd_ros.model.link_frames.LinkFrames``.

The chain (``rbd_ros.urdf.chain``) placed every link below ``base_link`` (and, for a ground base,
the links fixed to it from above) at its reference pose (chain joints at 0, locked joints at
their positions) with the body it rides on. The rest of the tree (links above ``base_link``
and their other branches: the fixed world) is placed here from the joint origins, at rest
(movable joints there at 0), on body 0. Offsets: ``inv(F_body) @ reference`` with ``F`` the
MDH frames at the reference (003 §1.6), so that ``P_link(q) = F_body(q) @ offset``.
"""
from __future__ import annotations

import numpy as np

from rbd_ros.model.link_frames import LinkFrames, TreeJoint
from rbd_ros.urdf.chain import Chain
from rbd_ros.urdf.parse import UrdfTree
from rbd_ros.urdf.transforms import inverse, joint_motion


def _place_rest(tree: UrdfTree, reference: dict[str, np.ndarray], body: dict[str, int]) -> None:
    """Place the links the chain left out (above base_link) from placed neighbours, on body 0."""
    pending = True
    while pending:
        pending = False
        for j in tree.joints.values():
            at_rest = j.origin @ joint_motion(j.type, j.axis, 0.0)  # origin @ motion(0)
            if j.parent in reference and j.child not in reference:
                reference[j.child] = reference[j.parent] @ at_rest
            elif j.child in reference and j.parent not in reference:
                reference[j.parent] = reference[j.child] @ inverse(at_rest)
            else:
                continue
            body.setdefault(j.child, 0)
            body.setdefault(j.parent, 0)
            pending = True


def link_frames(tree: UrdfTree, chain: Chain, frames: np.ndarray) -> LinkFrames:
    """All URDF links (tree order from the root) on the bodies of the MDH model whose frames at
    the reference are ``frames`` ((n + 1, 4, 4), base_link frame); joints in document order."""
    reference, body = dict(chain.reference), dict(chain.body)
    _place_rest(tree, reference, body)
    names = tuple(tree.subtree(tree.root))
    rows = np.array([body[ln] for ln in names], dtype=np.int64)
    offsets = np.array([inverse(frames[body[ln]]) @ reference[ln] for ln in names])
    joints = tuple(TreeJoint(jn, j.parent, j.child, j.type, static=body[j.parent] == body[j.child])
                   for jn, j in tree.joints.items())
    return LinkFrames(names, rows, offsets, joints, tree.root)
