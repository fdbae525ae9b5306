"""The gains a force law presses with (issue 40 item 5: the press gains' home in ``control``).

``press_gains`` gives the overrides of one law's gains that press a force along an axis-aligned
surface normal, from the law's current gains; ``retreat_gains`` those it leaves the surface
with.  Their one home: the ROS-free press (``rbd_ros.sim.contact_task.run_press``,
``law.set_gains(**values)``) and bringup's press through the nodes
(``rbd_ros.ros.bringup.press_nodes``, the controller's parameters) both read them here.
"""
from __future__ import annotations

from typing import Any

import numpy as np

PRESS_LAWS = ("hybrid_force_position", "impedance", "admittance")
DEPTH = 0.04  # m: impedance's spring along the normal is force / DEPTH (press_gains)
#: the gains press_gains reads and overrides, per law (bringup's press reads them from the node)
PRESS_GAINS = {"hybrid_force_position": ("selection",), "admittance": ("stiffness", "mass"),
               "impedance": ("stiffness",)}


def world_axis(normal: np.ndarray) -> int:
    """The world axis of an axis-aligned ``normal`` (the laws' gains are per world axis)."""
    axis = int(np.argmax(np.abs(normal)))
    if abs(abs(normal[axis]) - 1.0) > 1e-9:
        raise ValueError(f"the press needs a surface normal along a world axis, got "
                         f"{np.round(normal, 4).tolist()}")
    return axis


def press_gains(law_name: str, gains: Any, normal: np.ndarray, force: float,
                depth: float = DEPTH, given: Any = ()) -> dict[str, np.ndarray]:
    """The gains (by name) ``law_name`` presses ``force`` N with along the (axis-aligned)
    surface ``normal``, from its current ``gains`` (a mapping holding at least
    ``PRESS_GAINS[law_name]``); the one home of these overrides, for ``run_press``
    (``law.set_gains(**values)``) and bringup's press through the nodes (the controller's
    parameters).  The model's defaults force ``z`` (a table); here:

    * ``hybrid_force_position``: ``selection`` 0 (force) along the normal, 1 (position) along
      the other translations (a wall: a horizontal force axis), the rotations as they are;
    * ``admittance``: ``stiffness`` 0 along the normal (its ``mass`` there as it is) and
      ``mass`` 0 on every other axis: no admittance, the inner loop holds the pose there.  With
      the model's admittance on the rotations (``K_r = Lambda_r omega^2``, 0.8-12 N m/rad about
      the xArm 7's light wrist: 0.1 N m of friction moment on the 6 cm probe gives ~0.1 rad)
      the xArm 7's wrist joints broke away in bursts while it pressed: 3.7 N RMS, 2.5x
      impact; held: 0.02 N;
    * ``impedance``: ``stiffness`` along the normal ``force / depth`` (the reference goes
      ``depth`` m into the surface), unless ``"stiffness"`` is in ``given`` (the user's); the
      damping stays the model's (``2 zeta Lambda omega``: overdamped in free space for the
      softer spring, about critical against the surface's own stiffness in contact)."""
    if law_name not in PRESS_GAINS:
        raise ValueError(f"the press task needs a force law: one of {', '.join(PRESS_LAWS)}; "
                         f"got '{law_name}'")
    axis = world_axis(np.asarray(normal, dtype=float))
    now = {k: np.array(gains[k], dtype=float).reshape(6) for k in PRESS_GAINS[law_name]}
    if law_name == "hybrid_force_position":
        S = now["selection"]
        S[:3] = 1.0
        S[axis] = 0.0
        return {"selection": S}
    if law_name == "admittance":
        K, M = now["stiffness"], now["mass"]
        M[np.arange(6) != axis] = 0.0
        K[axis] = 0.0
        return {"stiffness": K, "mass": M}
    if "stiffness" in given:
        return {}
    K = now["stiffness"]
    K[axis] = force / depth
    return {"stiffness": K}


def retreat_gains(law_name: str) -> dict[str, np.ndarray]:
    """The gains ``law_name`` retreats with (``run_press`` and bringup's press): the hybrid
    law's normal axis back to position control; the others keep theirs."""
    return {"selection": np.ones(6)} if law_name == "hybrid_force_position" else {}
