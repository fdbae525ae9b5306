"""A root joint's front: the ``Robot`` methods a moving root joint answers differently.

There is one ``Robot`` class (``robot.arm``).  Its own methods are those of a fixed base (the
``fixed`` root joint: ``q`` = the joints).  A moving root joint of ``rbd_ros.bases``
(``floating``, ``planar``, ``diff_drive``) names, in its registry entry (``RootJoint.front``), a
``RootFront``: a plain class (not a ``Robot`` subclass) holding the methods whose arguments or
answers its ``q``/``v`` blocks change (``inverse_dynamics(q, v, a)`` with ``nv = nv0 + n``, its
``integrate``, ``fk`` carried by the base pose, ...), and ``setup``, its per-robot state.
``Robot.__init__`` binds them onto the instance (``RootFront.attach``), so
``type(Robot(model)) is Robot`` for every base and a call costs what a class method costs (an
instance attribute is found without building a bound method per call).  Inside a front's
methods ``self`` is the ``Robot``; the fixed-base ones stay reachable as ``Robot.fk(self, q)``.

``deprecated_front`` keeps the old class names (``FloatingBaseRobot``, ``MobileBaseRobot``):
calling one warns (``DeprecationWarning``) and returns ``Robot(model)``; ``isinstance(robot,
FloatingBaseRobot)`` is true for a ``Robot`` on that root joint.
"""
from __future__ import annotations

import warnings
from types import FunctionType
from typing import TYPE_CHECKING, Any, Self, cast

from rbd_ros.robot.arm import Robot

_HOOKS = ("setup", "attach", "members")

if TYPE_CHECKING:
    # for the type checker a front is a Robot: inside its methods ``self`` is the Robot they are
    # bound onto (module docstring); at run time a plain class, never a Robot's base
    _Host = Robot
else:
    _Host = object


class RootFront(_Host):
    """The methods of one moving root joint, bound onto each ``Robot`` on it (module docstring)."""

    @classmethod
    def setup(cls, robot: Self) -> None:
        """Check the model for this root and add the per-robot state its methods use (``robot``:
        the Robot being attached, typed as the front whose state it receives)."""

    @classmethod
    def members(cls) -> dict[str, Any]:
        """The names bound onto a robot: the front's methods and constants (subclasses last)."""
        found: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            if klass in (object, RootFront):
                continue
            for name, value in vars(klass).items():
                if not (name.startswith("__") or name in _HOOKS):
                    found[name] = value
        return found

    @classmethod
    def attach(cls, robot: Robot) -> None:
        """``setup``, then bind the front's methods onto ``robot`` as instance attributes.

        First the robot's attribute dict gets a key table of its own (a non-``str`` key in and
        out: CPython then stops sharing the table the dicts of all robots share), so the
        front's names never enter the shared table: were ``inverse_dynamics`` in it, every
        fixed-base robot's method lookups would lose their specialisation (~10 ns a call,
        measured in one process, interleaved)."""
        d: dict[Any, Any] = robot.__dict__  # str keys, and the one int key below
        d[0] = None  # a non-str key: the dict leaves the shared key table
        del d[0]
        cls.setup(cast(Self, robot))  # the robot this front is attached to (for the checker a front)
        for name, value in cls.members().items():
            d[name] = value.__get__(robot, Robot) if isinstance(value, (FunctionType, staticmethod)) else value


class _DeprecatedFront(type):
    """Metaclass of the old front class names (``deprecated_front``)."""

    kinds: tuple[str, ...]

    def __call__(cls, model: Any) -> Robot:
        warnings.warn(f"{cls.__name__}(model) is deprecated: Robot(model) serves every base "
                      f"(its root joint, rbd_ros.bases, picks the methods)", DeprecationWarning, stacklevel=2)
        kind = getattr(model, "base_type", None)
        if kind not in cls.kinds:
            raise ValueError(f"{cls.__name__} needs a model with base_type {' or '.join(map(repr, cls.kinds))}, "
                             f"got {kind!r}; use Robot(model)")
        return Robot(model)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Robot) and obj.root.kind in cls.kinds


def deprecated_front(name: str, kinds: tuple[str, ...], doc: str, module: str) -> type:
    """The old class ``name`` (of module ``module``) of the robots on root joints ``kinds``
    (module docstring)."""
    return _DeprecatedFront(name, (), {"kinds": kinds, "__doc__": doc, "__module__": module})


__all__ = ["RootFront", "deprecated_front"]
