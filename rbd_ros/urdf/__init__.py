"""URDF/xacro -> modified Denavit-Hartenberg model (issue 4).

``load_model(source, base_link=None, tip_link=None, locked_joints=None, xacro_args=None,
gravity=(0, 0, -9.81)) -> MdhModel`` is the entry point (``Robot.from_urdf`` calls it);
``load_conversion`` returns the same model with link offsets, axis cases and diagnostics.
Frames follow Craig's modified DH, 003 §1.6: see :mod:`.geometry` for
how each axis configuration is handled and :mod:`.chain` for base/tip selection and locking.
"""
from rbd_ros.urdf.convert import UrdfConversion, convert_tree, load_conversion, load_model
from rbd_ros.urdf.errors import UrdfError

__all__ = ["UrdfConversion", "UrdfError", "convert_tree", "load_conversion", "load_model"]
