"""rbd_ros: rigid-body dynamics of robot arms, fast and verified, usable from ROS 2.

The core (model, algorithms, URDF conversion, simulation, control laws) imports no ROS;
``rbd_ros.ros.nodes`` holds the thin ROS 2 adapters.  ``rbd_ros.Robot`` (the jitted dynamics
core) is imported lazily, so ``import rbd_ros`` stays light for tools that only need the model.
"""
import os
from typing import Any

from rbd_ros import jit_cache

# before any kernel is decorated: numba's caches are stamped with all of rbd_ros's sources, so a
# cached kernel never runs an old callee from another module (rbd_ros/jit_cache.py)
jit_cache.register(os.path.dirname(os.path.abspath(__file__)), exclude=("ros",))

from rbd_ros.model import PRISMATIC, REVOLUTE, MdhModel  # noqa: E402

__all__ = ["MdhModel", "REVOLUTE", "PRISMATIC", "Robot", "RigidBody", "two_link_ik"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "Robot":
        from rbd_ros.robot import Robot

        return Robot
    if name == "RigidBody":
        from rbd_ros.lie.rigid_body import RigidBody

        return RigidBody
    if name == "two_link_ik":  # analytic planar 2-link IK, 003 (1.24)
        from rbd_ros.algorithm.ik import two_link_ik

        return two_link_ik
    raise AttributeError(f"module 'rbd_ros' has no attribute {name!r}")
