"""Simulation of the arm in MuJoCo, ROS-free: the model builder, motor and sensor models, and
the ``Simulator`` the ``mujoco_bridge`` node wraps.  Imports of MuJoCo are lazy."""
from __future__ import annotations

__all__ = ["BridgeConfig", "Simulator", "build_mujoco_model", "from_urdf"]


def __getattr__(name: str):
    if name in ("BridgeConfig", "Simulator"):
        from rbd_ros.sim import simulator

        return getattr(simulator, name)
    if name in ("build_mujoco_model", "from_urdf"):
        from rbd_ros.sim import mujoco_model

        return getattr(mujoco_model, name)
    raise AttributeError(name)
