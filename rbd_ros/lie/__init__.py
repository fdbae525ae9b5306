"""Lie groups of rigid motion (004, From, singularity-free dynamics) and the one home of
rotations in rbd_ros.

* :mod:`.so3` (rotations; quaternion and roll-pitch-yaw conversions, orientation error),
  :mod:`.se2`, :mod:`.se3`, :mod:`.xz` (Schoenflies): hat/vee, closed-form exp/log, ``ad``,
  004's ``ad~`` and dexp with its inverse, each module the same interface (``name``,
  ``dim``, 004's selection ``H`` into se(3), ``to_se3``/``from_se3`` for poses);
* :mod:`.rigid_body`: ``RigidBody(group, inertia)``, ``M v-dot + ad~_{(Mv)} v = tau``
  (004 (107)-(108), misprint 004 (74)) with gravity, integrated by Lie-Euler or RKMK4.
* :mod:`.integrators`: Lie-Euler and RKMK4 (the one home of both schemes and their names),
  stage by stage, for ``rigid_body`` and ``algorithm.floating_integrators``.

Conventions: twists ``[v; w]`` linear first (004, Pinocchio), body frame; quaternions
``(x, y, z, w)`` scalar last; 004's ``S(phi) = dexp(-phi)``.
"""
import importlib
from typing import Any

__all__ = ["RigidBody", "so3", "se2", "se3", "xz"]


def __getattr__(name: str) -> Any:
    if name == "RigidBody":
        from rbd_ros.lie.rigid_body import RigidBody  # lazy: a package name: lie.so3's users need no rigid body

        return RigidBody
    if name in ("so3", "se2", "se3", "xz"):
        return importlib.import_module(f"rbd_ros.lie.{name}")
    raise AttributeError(f"module 'rbd_ros.lie' has no attribute {name!r}")
