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
import importlib.util
import os
import sys
import warnings
from typing import Any, cast

from rbd_ros.algorithm import jit_cache, numba_start

# before any kernel is decorated: numba's caches are stamped with all of rbd_ros's sources, so a
# cached kernel never runs an old callee from another module (rbd_ros/algorithm/jit_cache.py)
jit_cache.register(os.path.dirname(os.path.abspath(__file__)), exclude=("ros",))
# and numba's start-up imports that no process of ours needs trimmed (scipy.linalg, coverage.py)
numba_start.trim()

from rbd_ros.model import PRISMATIC, REVOLUTE, MdhModel  # noqa: E402

#: the public names (``from rbd_ros import *``, ``dir(rbd_ros)``); all but the model's are lazy
__all__ = ["MdhModel", "REVOLUTE", "PRISMATIC", "Robot", "FloatingBaseRobot", "MobileBaseRobot",
           "RigidBody", "two_link_ik", "IKResult", "SimulationResult", "SimulationError",
           "SingularMassMatrixError", "NonFiniteResultError", "load_model"]
__version__ = "0.3.0"

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
}
#: old module name -> its home since the server's request rules got their own floor (issue 40)
_MOVED_40 = {"rbd_ros.robot.services": "rbd_ros.services.requests"}
#: old module name -> its home since the ROS code got its own floor, ``rbd_ros.ros`` (commit
#: 19e156b, before issue 28): the README's ``from rbd_ros.client import DynamicsClient`` and
#: ``import rbd_ros.dds``, the launch files' and bench's ``rbd_ros.nodes.*``, ``rbd_ros.bringup.*``
_MOVED_ROS = {
    "rbd_ros.client": "rbd_ros.ros.client",
    "rbd_ros.dds": "rbd_ros.ros.dds",
    "rbd_ros.bringup": "rbd_ros.ros.bringup",
    "rbd_ros.nodes": "rbd_ros.ros.nodes",
    "rbd_ros.nodes.common": "rbd_ros.ros.common",
    "rbd_ros.nodes.lean_executor": "rbd_ros.ros.lean_executor",
}
#: why each moved (the warning says it)
_WHY = {**dict.fromkeys(_MOVED, "issue 28"), **dict.fromkeys(_MOVED_ROS, "the ROS floor, rbd_ros.ros"),
        **dict.fromkeys(_MOVED_40, "issue 40")}
_MOVED.update(_MOVED_ROS)
_MOVED.update(_MOVED_40)
#: moved packages: their submodules moved with them (``rbd_ros.nodes.controller``)
_MOVED_PACKAGES = ("rbd_ros.bringup", "rbd_ros.nodes")
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

    @staticmethod
    def new_name(name: str) -> tuple[str, str] | None:
        """``(new module name, why)`` of an old one, or None (a submodule of a moved package
        moved with it)."""
        if name in _MOVED:
            return _MOVED[name], _WHY[name]
        package = name.rpartition(".")[0]
        if package in _MOVED_PACKAGES:
            new = _MOVED[package] + name[len(package):]
            if importlib.util.find_spec(new) is not None:  # else: no such module, under either name
                return new, _WHY[package]
        return None

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if not name.startswith("rbd_ros.") or self.new_name(name) is None:
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec: Any) -> Any:
        new, why = cast(tuple[str, str], self.new_name(spec.name))  # find_spec: a moved name's spec only
        module = importlib.import_module(new)  # first: a module that is not there raises, no warning
        warnings.warn(f"{spec.name} moved to {new} ({why}); import it from there",
                      DeprecationWarning, stacklevel=2)
        return module

    def exec_module(self, module: Any) -> None:
        """Nothing to run: the module was executed at its new place."""


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    # first: a moved package's submodule would otherwise be found at its new place by the path
    # finder and run a second time under the old name (two module objects, two classes)
    sys.meta_path.insert(0, _MovedModules())


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'rbd_ros' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names (the lazy ones included) and the subpackages imported so far."""
    return sorted({*__all__, "__version__", *(k for k, v in globals().items() if isinstance(v, type(sys)))}
                  - {"importlib", "os", "sys", "warnings"})
