"""The robot floor: the public Python API over the kernels (one ``Robot`` front per model).

* ``arm``: ``Robot``, validated single-state and batch calls (dynamics, kinematics)
* ``statics``: ``static_torques``, ``joint_wrenches``, ``ik`` (mixed into ``Robot``)
* ``simulation``: ``simulate``, ``SimulationResult``, ``SimulationError`` (mixed into ``Robot``)
* ``front``: ``RootFront``, the methods a moving root joint (``rbd_ros.bases``) binds onto
  ``Robot``, one class for every base; ``floating``, ``mobile``: the fronts of a floating
  (SE(3)) and of a ground (planar, diff-drive) root joint (and the deprecated class names
  ``FloatingBaseRobot``, ``MobileBaseRobot``)
* ``fast_path``: the one fast-path type check of the single-state calls

The dynamics server's ROS-free request rules are on a floor of their own, ``rbd_ros.services``.
"""
from rbd_ros.robot.arm import IKResult, Kernels, Robot, SimulationError, SimulationResult, SingularMassMatrixError

__all__ = ["IKResult", "Kernels", "Robot", "SimulationError", "SimulationResult", "SingularMassMatrixError"]
