"""rbd_ros: rigid-body dynamics of robot arms, fast and verified, usable from ROS 2.

The core (model, algorithms, URDF conversion, simulation, control laws) imports no ROS;
``rbd_ros.nodes`` holds the thin ROS 2 adapters.
"""
from rbd_ros.model import PRISMATIC, REVOLUTE, MdhModel

__all__ = ["MdhModel", "REVOLUTE", "PRISMATIC"]
__version__ = "0.1.0"
