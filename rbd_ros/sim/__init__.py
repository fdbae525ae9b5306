"""Simulation of the arm in MuJoCo, ROS-free: the model builder, motor and sensor models, and
the ``Simulator`` the ``mujoco_bridge`` node wraps; for an arm on a mobile base
``MobileSimulator`` (``mobile_model``, ``odometry``).  Imports of MuJoCo are lazy."""
from __future__ import annotations

__all__ = ["BridgeConfig", "MobileConfig", "MobileSimulator", "Simulator", "WheelOdometry",
           "build_mobile_model", "build_mujoco_model", "from_urdf"]


def __getattr__(name: str):
    if name in ("BridgeConfig", "Simulator"):
        from rbd_ros.sim import simulator  # lazy: a package name, not at the controller's import

        return getattr(simulator, name)
    if name in ("build_mujoco_model", "from_urdf"):
        from rbd_ros.sim import mujoco_model  # lazy: a package name, not at the controller's import

        return getattr(mujoco_model, name)
    if name in ("MobileConfig", "MobileSimulator"):
        from rbd_ros.sim import mobile_sim  # lazy: a package name, not at the controller's import

        return getattr(mobile_sim, name)
    if name == "build_mobile_model":
        from rbd_ros.sim.mobile_model import build_mobile_model  # lazy: a package name, not at the controller's import

        return build_mobile_model
    if name == "WheelOdometry":
        from rbd_ros.sim.odometry import WheelOdometry  # lazy: a package name, not at the controller's import

        return WheelOdometry
    raise AttributeError(name)
