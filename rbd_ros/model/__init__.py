"""The model floor: what a robot *is*, read by every kernel (Pinocchio's ``Model``/``Data`` split).

* ``mdh_model``: ``MdhModel``, the immutable description (MDH table, inertias, limits,
  actuators, base type) and the joint / base type tables
* ``data``: the packed model array and the per-robot workspace the kernels write (``Workspace``,
  ``pack_model``; the layout of ``algorithm.layout``)
* ``physical``: the physical-consistency check of link inertias at load time
* ``urdf_export``: ``MdhModel`` -> URDF (``MdhModel.to_urdf``)
* ``link_frames``: every URDF link on the model's bodies (``LinkFrames``: poses, tf joints)

``from rbd_ros.model import MdhModel`` imports only the description (no numba).
"""
from rbd_ros.model.mdh_model import (  # the model floor's public names
    BASE_COORDINATES,
    BASE_TYPES,
    JOINT_TYPE_CODES,
    JOINT_TYPE_NAMES,
    MOBILE_BASES,
    PRISMATIC,
    REVOLUTE,
    MdhModel,
)

__all__ = ["BASE_COORDINATES", "BASE_TYPES", "JOINT_TYPE_CODES", "JOINT_TYPE_NAMES", "MOBILE_BASES",
           "PRISMATIC", "REVOLUTE", "MdhModel"]
