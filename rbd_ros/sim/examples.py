"""Hand-written MDH models for the bridge's tests and benchmark (no URDF, no converter).

``three_link()`` is a small spatial arm with full (non-diagonal) inertias; ``seven_dof()``
uses the Franka Panda's published modified-DH table (Craig's convention, as in 003 §1.6) with
plausible link masses and inertias (not Franka's identified values).
"""
from __future__ import annotations

import numpy as np

from rbd_ros.model import MdhModel


def _inertia(ixx: float, iyy: float, izz: float, ixy: float = 0.0, ixz: float = 0.0,
             iyz: float = 0.0) -> list[list[float]]:
    return [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]


def three_link(**changes) -> MdhModel:
    """A 3-DoF spatial arm (revolute, revolute, revolute) with off-diagonal inertias."""
    pi2 = np.pi / 2
    model = MdhModel(  # arrays: the fields' stored type (MdhModel copies them as float/int64)
        joint_names=("j1", "j2", "j3"),
        joint_type=np.array([0, 0, 0]),
        a=np.array([0.0, 0.1, 0.45]),
        alpha=np.array([0.0, pi2, 0.0]),
        d=np.array([0.3, 0.05, 0.0]),
        theta=np.array([0.0, 0.2, -0.1]),
        mass=np.array([4.0, 3.0, 2.0]),
        com=np.array([[0.0, 0.02, -0.05], [0.2, 0.01, 0.03], [0.15, -0.02, 0.01]]),
        inertia=np.array([_inertia(0.05, 0.04, 0.03, 0.002, -0.001, 0.003),
                          _inertia(0.02, 0.09, 0.085, 0.004, 0.002, -0.001),
                          _inertia(0.01, 0.04, 0.038, -0.002, 0.001, 0.0015)]),
        lower=np.array([-np.pi, -2.5, -2.8]),
        upper=np.array([np.pi, 2.5, 2.8]),
        effort_limit=np.array([80.0, 60.0, 30.0]),
        velocity_limit=np.array([3.0, 3.0, 4.0]),
        name="three_link", base_link="base", tip_link="link3",
        link_names=("link1", "link2", "link3"),
    )
    return model.replace(**changes) if changes else model


def seven_dof(**changes) -> MdhModel:
    """A Panda-like 7-DoF arm: Franka's MDH table, plausible inertial parameters."""
    pi2 = np.pi / 2
    masses = [4.97, 0.65, 3.23, 3.59, 1.23, 1.67, 0.74]
    coms = [[0.0035, -0.0009, -0.0446], [-0.0032, -0.0297, 0.0029], [0.0277, 0.0394, -0.0675],
            [-0.0532, 0.1044, 0.0274], [-0.0120, 0.0410, -0.0387], [0.0601, -0.0141, -0.0104],
            [0.0105, -0.0043, 0.0616]]
    inertias = [_inertia(0.70, 0.70, 0.0091, -0.0001, 0.0068, 0.0192),
                _inertia(0.0120, 0.0280, 0.0260, -0.0039, 0.0103, 0.0007),
                _inertia(0.0372, 0.0361, 0.0108, -0.0048, -0.0114, -0.0128),
                _inertia(0.0259, 0.0195, 0.0283, 0.0078, -0.0013, 0.0086),
                _inertia(0.0355, 0.0294, 0.0086, -0.0021, -0.0040, 0.0003),
                _inertia(0.0020, 0.0043, 0.0054, 0.0001, -0.0012, 0.0003),
                _inertia(0.0126, 0.0101, 0.0048, -0.0004, -0.0012, 0.0012)]
    model = MdhModel(
        joint_names=tuple(f"panda_joint{i}" for i in range(1, 8)),
        joint_type=np.array([0] * 7),
        a=np.array([0.0, 0.0, 0.0, 0.0825, -0.0825, 0.0, 0.088]),
        alpha=np.array([0.0, -pi2, pi2, pi2, -pi2, pi2, pi2]),
        d=np.array([0.333, 0.0, 0.316, 0.0, 0.384, 0.0, 0.0]),
        theta=np.array([0.0] * 7),
        mass=np.array(masses), com=np.array(coms), inertia=np.array(inertias),
        lower=np.array([-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973]),
        upper=np.array([2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973]),
        effort_limit=np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0]),
        velocity_limit=np.array([2.175] * 4 + [2.61] * 3),
        name="seven_dof", base_link="panda_link0", tip_link="panda_link7",
        link_names=tuple(f"panda_link{i}" for i in range(1, 8)),
    )
    return model.replace(**changes) if changes else model


#: a non-trivial pose of ``seven_dof`` inside its limits
SEVEN_DOF_POSE = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])
