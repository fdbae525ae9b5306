"""The API a newcomer guesses (issue 33): ``dir(rbd_ros)`` / ``__all__`` list the public names
(lazy ones included, and resolvable), ``robot.dof``, ``joint_names``, ``link_names``, ``fk``.
Oracles: the URDF itself (parsed with the standard library) and Pinocchio's frame placements."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import rbd_ros
from rbd_ros.util.resources import bundled_urdf
from robots_data import UR5, example_robot_urdf


def test_all_names_resolve_and_dir_lists_them() -> None:
    assert len(set(rbd_ros.__all__)) == len(rbd_ros.__all__)
    listed = dir(rbd_ros)
    for name in rbd_ros.__all__:
        assert name in listed, name
        assert getattr(rbd_ros, name) is not None, name
    assert {"Robot", "MdhModel", "IKResult", "SimulationError", "load_model"} <= set(rbd_ros.__all__)
    assert rbd_ros.SingularMassMatrixError.__module__ == "rbd_ros.robot.arm"


@pytest.mark.slow
def test_import_stays_lazy_and_star_import_works() -> None:
    """``import rbd_ros`` does not compile the kernels' home (``rbd_ros.robot``); a star import
    gives every name of ``__all__``."""
    code = ("import sys, rbd_ros; assert 'rbd_ros.robot.arm' not in sys.modules, 'eager';"
            "assert 'Robot' in dir(rbd_ros); ns = {}; exec('from rbd_ros import *', ns);"
            "missing = set(rbd_ros.__all__) - set(ns); assert not missing, missing")
    subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], check=True)


def test_unknown_name_is_a_clear_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Robto'"):
        rbd_ros.Robto  # noqa: B018


def _urdf_names(path: str) -> tuple[set[str], list[str]]:
    root = ET.parse(path).getroot()
    links = {e.get("name") for e in root.findall("link")}
    movable = [e.get("name") for e in root.findall("joint") if e.get("type") != "fixed"]
    return links, movable


@pytest.mark.parametrize("name", ["puma560", "arm7"])
def test_robot_names_against_the_urdf(name: str) -> None:
    path = str(bundled_urdf(name))
    robot = rbd_ros.Robot.from_urdf(path)
    links, movable = _urdf_names(path)
    assert robot.dof == len(movable) == robot.model.dof
    assert list(robot.joint_names) == movable
    assert set(robot.link_names) == links  # every URDF link, fixed ones included
    q = np.linspace(-0.5, 0.5, robot.dof)
    tip = robot.link_names.index(robot.model.tip_link)
    np.testing.assert_allclose(robot.urdf_link_poses(q)[tip], robot.fk(q), atol=1e-12)


def test_link_names_of_a_real_arm_match_pinocchio() -> None:
    """UR5 from example-robot-data: ``robot.link_names`` are Pinocchio's body frames, and every
    link's pose is Pinocchio's placement of that frame."""
    pin = pytest.importorskip("pinocchio")
    path = str(example_robot_urdf(UR5))
    robot = rbd_ros.Robot.from_urdf(path, tip_link="tool0")
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    bodies = {f.name for f in pm.frames if f.type == pin.FrameType.BODY}
    assert set(robot.link_names) <= bodies and robot.dof == 6
    q = np.array([0.3, -1.1, 1.4, -0.6, 0.9, 0.2])
    pin.framesForwardKinematics(pm, pd, q)
    poses = robot.urdf_link_poses(q)
    for k, link in enumerate(robot.link_names):
        np.testing.assert_allclose(poses[k], pd.oMf[pm.getFrameId(link)].homogeneous, atol=1e-10,
                                   err_msg=link)
