"""rbd_ros: rigid-body dynamics of robot arms, fast and verified, usable from ROS 2.

The core (model, algorithms, URDF conversion, simulation, control laws) imports no ROS;
``rbd_ros.ros`` holds the thin ROS 2 adapters.  ``rbd_ros.Robot`` (the jitted dynamics
core) is imported lazily, so ``import rbd_ros`` stays light for tools that only need the model.

Floors, lowest first (each imports only from below; ``test/core/test_layout.py`` checks it):
``util`` (validation, resources), ``lie``, ``algorithm`` (kernels), ``model``, ``formulations``
and ``urdf``, ``bases`` (the root joints), ``robot`` (the Python API), ``control``, ``sim``,
``ros``.  Modules that moved keep their old names for a while (``_MOVED``: a
``DeprecationWarning`` on first import, then the new module itself).
"""
import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import warnings
from typing import Any

from rbd_ros.algorithm import jit_cache

# before any kernel is decorated: numba's caches are stamped with all of rbd_ros's sources, so a
# cached kernel never runs an old callee from another module (rbd_ros/algorithm/jit_cache.py)
jit_cache.register(os.path.dirname(os.path.abspath(__file__)), exclude=("ros",))

from rbd_ros.model import PRISMATIC, REVOLUTE, MdhModel  # noqa: E402

#: the public names (``from rbd_ros import *``, ``dir(rbd_ros)``); all but the model's are lazy
__all__ = ["MdhModel", "REVOLUTE", "PRISMATIC", "Robot", "FloatingBaseRobot", "MobileBaseRobot",
           "RigidBody", "two_link_ik", "IKResult", "SimulationResult", "SimulationError",
           "SingularMassMatrixError", "NonFiniteResultError", "load_model"]
__version__ = "0.1.0"

#: old module name -> its home since issue 28
_MOVED = {
    "rbd_ros.data": "rbd_ros.model.data",
    "rbd_ros.physical": "rbd_ros.model.physical",
    "rbd_ros.urdf_export": "rbd_ros.model.urdf_export",
    "rbd_ros.validate": "rbd_ros.util.validate",
    "rbd_ros.resources": "rbd_ros.util.resources",
    "rbd_ros.jit_cache": "rbd_ros.algorithm.jit_cache",
    "rbd_ros.spatial": "rbd_ros.lie.so3",
    "rbd_ros.robot_statics": "rbd_ros.robot.statics",
    "rbd_ros.robot_simulation": "rbd_ros.robot.simulation",
    "rbd_ros.floating_base": "rbd_ros.robot.floating",
    "rbd_ros.mobile_base": "rbd_ros.robot.mobile",
    "rbd_ros.services": "rbd_ros.robot.services",
}
_LAZY = {"Robot": "rbd_ros.robot.arm", "FloatingBaseRobot": "rbd_ros.robot.floating",
         "MobileBaseRobot": "rbd_ros.robot.mobile", "RigidBody": "rbd_ros.lie.rigid_body",
         "two_link_ik": "rbd_ros.algorithm.ik",  # analytic planar 2-link IK, 003 (1.24)
         "IKResult": "rbd_ros.robot.statics",  # the result of Robot.ik, the service, DynamicsClient
         "SimulationResult": "rbd_ros.robot.simulation", "SimulationError": "rbd_ros.util.validate",
         "SingularMassMatrixError": "rbd_ros.robot.arm", "NonFiniteResultError": "rbd_ros.util.validate",
         "load_model": "rbd_ros.urdf"}  # URDF/xacro -> MdhModel (the converter)


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import rbd_ros.<old>`` gives the module at its new place (the same object, so patches
    and ``isinstance`` agree) after one ``DeprecationWarning`` naming the new import."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in _MOVED:
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec: Any) -> Any:
        warnings.warn(f"{spec.name} moved to {_MOVED[spec.name]} (issue 28); import it from there",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(_MOVED[spec.name])

    def exec_module(self, module: Any) -> None:
        """Nothing to run: the module was executed at its new place."""


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rbd_ros' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names (the lazy ones included) and the subpackages imported so far."""
    return sorted({*__all__, "__version__", *(k for k, v in globals().items() if isinstance(v, type(sys)))}
                  - {"importlib", "os", "sys", "warnings"})
