"""Issue 38, item 6: the converter's replacement of a physically impossible link inertia is
warned once per model and message (not once per process location, and not again for each copy
of the model), has a switch (``keep_inertia=True`` / ``urdf2mdh --keep-inertia``: the raw
URDF, refused by MuJoCo with the reason), and the raw model compares like for like.

The description: Aldebaran Romeo (example-robot-data ``romeo_small.urdf``), its right arm from
``body`` to ``RElbowYawLink``: two links break the triangle inequality I1 + I2 >= I3.  Oracles:
the URDF's own ``<inertial>`` values (the triangle test on their eigenvalues) and Pinocchio's
``rnea`` on the same URDF (its other joints locked), which takes the inertias as given."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pinocchio as pin
import pytest

from rbd_ros.model import MdhModel
from rbd_ros.model.physical import InertiaWarning
from rbd_ros.robot import Robot
from rbd_ros.sim.mujoco_model import build_mujoco_model
from rbd_ros.urdf import load_model
from rbd_ros.urdf.cli import main as urdf2mdh
from robots_data import example_robot_urdf

ROMEO = "romeo_description/urdf/romeo_small.urdf"
CHAIN = {"base_link": "body", "tip_link": "RElbowYawLink"}
BAD = ("RShoulderYawLink", "RElbowYawLink")


@pytest.fixture
def romeo(tmp_path) -> str:
    """A copy of Romeo's URDF with its inertias scaled by a factor of this test's own, so its
    notes are new to this process whatever loaded Romeo before."""
    factor = 1.0 + np.random.default_rng().uniform(0.01, 0.5)
    xml = example_robot_urdf(ROMEO).read_text()

    def scale(m: re.Match) -> str:
        return m.group(1) + f"{float(m.group(2)) * factor!r}" + '"'

    path = tmp_path / "romeo.urdf"
    path.write_text(re.sub(r'(\bi(?:xx|xy|xz|yy|yz|zz)=")([^"]+)"', scale, xml))
    return str(path)


def _inertia_warnings(caught: list) -> list[str]:
    return [str(w.message) for w in caught if w.category is InertiaWarning]


def test_the_replacement_is_warned_once_per_model_and_the_raw_urdf_is_kept_on_request(romeo: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # the cache, not the warnings filter, keeps it to one
        fixed = load_model(romeo, **CHAIN)
        again = load_model(romeo, **CHAIN)  # the same file and model: no second warning
        fixed.replace(gravity=np.array([0.0, 0.0, -9.8]))  # a copy (a sweep's perturbation): none
    msgs = _inertia_warnings(caught)
    assert len(msgs) == 2 and all(any(f"link '{b}'" in m for m in msgs) for b in BAD), msgs
    assert all("triangle inequality" in m for m in msgs)
    assert fixed.inertia_notes == again.inertia_notes and len(fixed.inertia_notes) == 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = load_model(romeo, keep_inertia=True, **CHAIN)
    assert _inertia_warnings(caught) == []  # asked for: not warned, noted
    assert raw.inertia_fix is False and len(raw.inertia_notes) == 2
    assert all("kept as given" in n for n in raw.inertia_notes)
    for i, link in enumerate(raw.link_names):  # the raw model keeps what the URDF says
        w = np.linalg.eigvalsh(raw.inertia[i])
        assert (w[0] + w[1] < w[2] * (1 - 1e-9)) == (link in BAD), link
        w = np.linalg.eigvalsh(fixed.inertia[i])
        assert w[0] + w[1] >= w[2] * (1 - 1e-9)
    assert MdhModel.from_yaml(raw.to_yaml()).inertia_fix is False  # the file keeps the choice
    assert "inertia_fix" not in fixed.to_yaml()


def test_the_raw_model_compares_like_for_like_with_pinocchio() -> None:
    path = str(example_robot_urdf(ROMEO))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InertiaWarning)
        fixed = Robot.from_urdf(path, **CHAIN)
    raw = Robot.from_urdf(path, keep_inertia=True, **CHAIN)
    full = pin.buildModelFromUrdf(path)
    keep = {full.getJointId(n) for n in raw.joint_names}
    pm = pin.buildReducedModel(full, [j for j in range(1, full.njoints) if j not in keep], pin.neutral(full))
    pd = pm.createData()
    assert list(pm.names)[1:] == list(raw.joint_names)
    rng = np.random.default_rng(38)
    worst_raw = worst_fixed = 0.0
    for _ in range(5):
        q, v, a = rng.uniform(-1.0, 1.0, (3, raw.dof))
        ref = pin.rnea(pm, pd, q, v, a)
        worst_raw = max(worst_raw, float(np.abs(raw.inverse_dynamics(q, v, a) - ref).max()))
        worst_fixed = max(worst_fixed, float(np.abs(fixed.inverse_dynamics(q, v, a) - ref).max()))
    assert worst_raw < 1e-10
    assert worst_fixed > 1e-4  # the replacement changed the dynamics: the switch is needed


def test_mujoco_refuses_the_raw_model_naming_the_link_and_the_switch(romeo: str) -> None:
    raw = load_model(romeo, keep_inertia=True, **CHAIN)
    with pytest.raises(ValueError, match=r"MuJoCo cannot simulate .* link 'RShoulderYawLink'.*"
                                         r"triangle inequality.*without keep_inertia"):
        build_mujoco_model(raw, 0.001, "RK4", False)


def test_urdf2mdh_keep_inertia_writes_the_raw_model(romeo: str, tmp_path, capsys) -> None:
    out_raw, out_fixed = tmp_path / "raw.yaml", tmp_path / "fixed.yaml"
    argv = [romeo, "--base-link", "body", "--tip-link", "RElbowYawLink", "-o"]
    assert urdf2mdh([*argv, str(out_fixed)]) == 0
    err_fixed = capsys.readouterr().err
    assert urdf2mdh([*argv, str(out_raw), "--keep-inertia"]) == 0
    err_raw = capsys.readouterr().err
    assert err_fixed.count("inertia is physically impossible") == 2 and "Using" in err_fixed
    assert err_raw.count("kept as given") == 2
    raw, fixed = MdhModel.from_yaml(str(out_raw)), MdhModel.from_yaml(str(out_fixed))
    assert raw.inertia_fix is False and fixed.inertia_fix is True
    assert not np.allclose(raw.inertia, fixed.inertia)


@pytest.mark.ros
def test_the_nodes_parameter_inertia_fix_false_loads_the_raw_urdf(romeo: str) -> None:
    from rbd_ros.ros.common import NodeConfigError
    from rbd_ros.ros.robot_params import ROBOT_PARAMETERS, robot_model

    assert ROBOT_PARAMETERS["inertia_fix"] is True
    raw = robot_model({"urdf_path": romeo, **CHAIN, "inertia_fix": False}).model
    direct = load_model(romeo, keep_inertia=True, **CHAIN)
    assert raw.inertia_fix is False
    np.testing.assert_array_equal(raw.inertia, direct.inertia)
    with pytest.raises(NodeConfigError, match="inertia_fix must be true or false, got 'no'"):
        robot_model({"urdf_path": romeo, **CHAIN, "inertia_fix": "no"})
