"""A base is a root joint (as Pinocchio's free-flyer and planar joints): the one family of the
bases a chain can stand on, ``fixed``, ``floating``, ``planar``, ``diff_drive``, keyed by
``MdhModel.base_type``.

Each ``RootJoint`` (``root_joint``) describes its ``q``/``v`` blocks ahead of the joints (sizes,
coordinate names), its ``integrate`` (``q (+) v dt`` on its group), its constraint
(``diff_drive``'s nonholonomic ``v_y = 0``, 001 (64)), the kernels it plugs into (``kernels``:
the unchecked RNEA / ABA / CRBA calls of ``algorithm``, loaded on first use).  The methods
``Robot`` binds for a moving root are the robot floor's (``rbd_ros.robot.arm.FRONTS``), above
this one.  ``ROOT_JOINTS`` is the registry; a new base is one more entry here and, when it
moves, one in ``FRONTS``.
"""
from rbd_ros.bases.root_joint import ROOT_JOINTS, KernelCall, RootJoint, root_joint

__all__ = ["ROOT_JOINTS", "KernelCall", "RootJoint", "root_joint"]
