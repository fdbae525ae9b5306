"""URDF -> MDH conversion against Pinocchio on the ORIGINAL URDF (003 §1.6).

What is compared (the converter's documented contract):

* poses: every URDF link riding on the chain sits at ``F_i(q) @ link_offsets[link]`` where
  ``F_i(q) = base @ prod mdh_transform`` (frames composed here from :func:`mdh_transform`);
  the tool pose ``F_n(q) @ tool`` is the ``tip_link`` frame.  Both equal Pinocchio's
  ``oMf`` (relative to base_link) to 1e-12 at hundreds of random q.
* dynamics: inverse dynamics, mass matrix and gravity equal Pinocchio's (off-chain joints
  locked with ``buildReducedModel``) to 1e-9 relative, both for a Pinocchio model built
  from the MDH table (checks the converted inertias independently of our kernels) and for
  ``rbd_ros.Robot``.
"""
from __future__ import annotations

import functools
import glob
import math
import warnings
import zlib
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from rbd_ros.model import PRISMATIC, REVOLUTE, MdhModel
from rbd_ros.urdf import UrdfConversion, load_conversion, load_model
from robots_data import BUNDLED_URDF, PANDA, UR5, example_robot_urdf
from urdf_oracles import PinReference, mdh_to_urdf, pin_from_mdh, pin_reference, random_chain_urdf

N_POSES = 200
N_DYN = 40
POSE_TOL = 1e-12
DYN_TOL = 1e-9


def _rel(x: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(x - ref).max() / max(1.0, np.abs(ref).max()))


def _random_q(model: MdhModel, rng: np.random.Generator, k: int) -> np.ndarray:
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    lo, hi = np.maximum(lo, -np.pi), np.minimum(hi, np.pi)
    return rng.uniform(lo, hi, (k, model.dof))


def check_poses(conv: UrdfConversion, ref: PinReference, rng: np.random.Generator) -> float:
    """Every chain link and the tool vs Pinocchio at N_POSES random q; returns the max error."""
    links = list(conv.link_offsets) + [conv.model.tip_link]
    worst = 0.0
    for q in _random_q(conv.model, rng, N_POSES):
        mine = conv.link_poses(q)
        mine[conv.model.tip_link] = conv.tool_pose(q)
        theirs = ref.link_poses(q, links)
        worst = max(worst, max(float(np.abs(mine[ln] - theirs[ln]).max()) for ln in links))
    assert worst < POSE_TOL, worst
    return worst


def check_dynamics(model: MdhModel, ref: PinReference, rng: np.random.Generator) -> None:
    """Pinocchio-from-MDH and rbd_ros.Robot vs Pinocchio-from-URDF."""
    from rbd_ros import Robot

    pm = pin_from_mdh(model)
    pd = pm.createData()
    robot = Robot(model)
    qs = _random_q(model, rng, N_DYN)
    for q in qs:
        v, a = rng.uniform(-2, 2, (2, model.dof))
        tau = ref.rnea(q, v, a)
        M = ref.mass_matrix(q)
        g = ref.gravity(q)
        assert _rel(pin.rnea(pm, pd, q, v, a), tau) < DYN_TOL
        Mp = pin.crba(pm, pd, q)
        assert _rel(np.triu(Mp) + np.triu(Mp, 1).T, M) < DYN_TOL
        assert _rel(pin.computeGeneralizedGravity(pm, pd, q), g) < DYN_TOL
        assert _rel(robot.inverse_dynamics(q, v, a), tau) < DYN_TOL
        assert _rel(robot.mass_matrix(q), M) < DYN_TOL
        assert _rel(robot.gravity(q), g) < DYN_TOL


def check_all(conv: UrdfConversion, seed: int, extra_positions: dict[str, float] | None = None) -> None:
    rng = np.random.default_rng(seed)
    ref = pin_reference(conv.urdf_xml, conv.model, {**(extra_positions or {}), **conv.positions})
    check_poses(conv, ref, rng)
    check_dynamics(conv.model, ref, rng)


# ---- generated chains: every axis case, random rpy, fixed links, branches ---------------------
ALL_CASES = ["skew", "intersecting", "perpendicular", "parallel", "anti-parallel", "collinear", "anti-collinear"]
EXPECTED = {"perpendicular": "intersecting"}


@pytest.mark.parametrize("seed", range(6))
def test_random_chains_match_pinocchio(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    cases = list(rng.permutation(ALL_CASES))
    kinds = ["revolute", "continuous", "prismatic"] * 3
    kinds = list(rng.permutation(kinds[:len(cases) + 1]))
    above = seed % 2 == 1  # base_link is not the URDF root: a movable joint above it
    rc = random_chain_urdf(rng, cases, kinds, above_base=above)
    locked = dict(rc.locked)
    if above:
        locked["mount"] = float(rng.uniform(-1, 1))
    conv = load_conversion(rc.xml, rc.base, rc.tip, locked)
    assert conv.cases == tuple(EXPECTED.get(c, c) for c in cases)
    assert conv.model.joint_names == tuple(rc.chain)
    assert list(conv.model.joint_type) == [PRISMATIC if k == "prismatic" else REVOLUTE for k in kinds]
    assert conv.max_error < 1e-13
    check_all(conv, seed, locked)


@pytest.mark.parametrize("pair", [("parallel", "revolute"), ("anti-parallel", "prismatic"),
                                  ("collinear", "prismatic"), ("anti-collinear", "revolute"),
                                  ("intersecting", "prismatic"), ("skew", "prismatic")])
def test_prismatic_and_degenerate_pairs(pair: tuple[str, str]) -> None:
    """Prismatic joints next to every case, no fixed links between, no branch."""
    case, kind = pair
    rng = np.random.default_rng(zlib.crc32(" ".join(pair).encode()))  # hash() changes per run
    rc = random_chain_urdf(rng, [case, case], [kind, kind, "revolute"], fixed_between=False, branch=False)
    conv = load_conversion(rc.xml)  # single chain: base = root, tip inferred through fixed links
    assert conv.model.tip_link == "tip" and conv.model.base_link == "base"
    assert conv.cases == (case, case)
    check_all(conv, 7)


@pytest.mark.parametrize("angle", [1e-13, 1e-10, 1e-7, 1e-4])
def test_nearly_parallel_axes_keep_kinematics(angle: float) -> None:
    """Axes meeting at tiny angles (intersecting or skew): poses still exact to 1e-12."""
    n = 4
    model = MdhModel(joint_names=[f"j{i}" for i in range(n)], joint_type=[0, 0, 1, 0],
                     a=[0, 0.4, 0.0, 0.3], alpha=[0, angle, -angle, angle], d=[0.1, 0.2, 0.3, -0.1],
                     theta=[0.3, 0.0, 0.5, -1.0], mass=[1, 2, 3, 4], com=np.full((n, 3), 0.05),
                     inertia=np.tile(np.diag([0.1, 0.2, 0.25]), (n, 1, 1)), base_link="base",
                     link_names=[f"l{i}" for i in range(n)], tip_link=f"l{n - 1}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fidelity warning
        conv = load_conversion(mdh_to_urdf(model), "base", model.tip_link)
    check_all(conv, 3)


# ---- real robots --------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _panda(tip: str = "panda_link8", base: str = "panda_link0") -> UrdfConversion:
    return load_conversion(example_robot_urdf(PANDA), base, tip, {"panda_finger_joint1": 0.02})


def test_panda_matches_pinocchio_and_franka_table() -> None:
    conv = _panda()
    m = conv.model
    assert m.joint_names == tuple(f"panda_joint{i}" for i in range(1, 8))
    # Franka's published modified-DH table (frames exactly where Franka documents them)
    h = math.pi / 2
    assert np.allclose(m.a, [0, 0, 0, 0.0825, -0.0825, 0, 0.088], atol=1e-15)
    assert np.allclose(m.d, [0.333, 0, 0.316, 0, 0.384, 0, 0], atol=1e-15)
    assert np.allclose(m.alpha, [0, -h, h, h, -h, h, h], atol=1e-15)
    assert np.allclose(m.theta, 0, atol=1e-15)
    assert np.allclose(m.base, np.eye(4)) and np.allclose(m.tool[:3, 3], [0, 0, 0.107])
    # the mimic finger follows the locked finger; both ride on link 7
    assert conv.positions["panda_finger_joint2"] == 0.02
    assert conv.link_offsets["panda_leftfinger"][0] == 7 and conv.link_offsets["panda_hand_tcp"][0] == 7
    assert m.lower[3] == -3.0718 and m.upper[5] == 3.7525 and m.effort_limit[0] == 87.0
    assert m.velocity_limit[6] == 2.61 and np.all(m.viscous == 0.003) and np.all(m.coulomb == 0.0)
    check_all(conv, 11)


def test_panda_base_above_root_and_hand_tip() -> None:
    """base_link = panda_link3 (joints 1-3 above it are the fixed world), tip = the TCP."""
    conv = _panda("panda_hand_tcp", "panda_link3")
    assert conv.model.joint_names == tuple(f"panda_joint{i}" for i in range(4, 8))
    check_all(conv, 12)


@pytest.mark.parametrize("tip", ["tool0", "ee_link"])
def test_ur5_matches_pinocchio(tip: str) -> None:
    conv = load_conversion(example_robot_urdf(UR5), "base_link", tip)
    m = conv.model
    assert m.dof == 6 and m.tip_link == tip
    assert conv.cases == ("intersecting", "parallel", "parallel", "intersecting", "intersecting")
    assert np.allclose(m.a, [0, 0, 0.425, 0.39225, 0, 0], atol=1e-15)
    check_all(conv, 13)


def test_ur5_tip_inferred_stops_at_branch() -> None:
    """wrist_3_link carries two fixed children (ee_link, tool0): the inferred tip stops there."""
    m = load_model(example_robot_urdf(UR5))
    assert m.tip_link == "wrist_3_link" and m.dof == 6


BUNDLED = sorted(glob.glob(str(BUNDLED_URDF / "*.urdf")))


@pytest.mark.parametrize("path", BUNDLED or [pytest.param(None, marks=pytest.mark.skip("no bundled URDF"))],
                         ids=[Path(p).stem for p in BUNDLED] or ["none"])
def test_bundled_urdf(path: str) -> None:
    # single chains: base and tip inferred; the mobile manipulators (wheels on other branches
    # than the arm) name the arm's tip
    tip = "tool0" if Path(path).stem in ("mobile_arm7", "omni_arm7") else None
    conv = load_conversion(path, tip_link=tip)
    check_all(conv, 17)
    cfg = BUNDLED_URDF.parent / "config" / f"{Path(path).stem}.yaml"
    if cfg.exists():  # generated from this model by urdf_export: the same frames come back
        src = MdhModel.from_yaml(str(cfg))
        m = conv.model
        for key in ("a", "alpha", "d", "theta", "mass", "base", "tool", "com", "inertia"):
            assert np.allclose(getattr(m, key), getattr(src, key), atol=1e-12), key
        assert m.joint_names == src.joint_names and m.tip_link == src.tip_link


# ---- model content ------------------------------------------------------------------------
def _one_link(inertial: str, joint_extra: str = "", kind: str = "revolute") -> str:
    return f"""<robot name="one"><link name="base"/>
      <link name="l1"><inertial>{inertial}</inertial></link>
      <joint name="j1" type="{kind}"><parent link="base"/><child link="l1"/>
        <axis xyz="0 0 1"/>{joint_extra}</joint></robot>"""


def test_inertial_rpy_rotates_the_tensor() -> None:
    """Inertia diag(1, 2, 3) in an inertial frame yawed 90 deg reads diag(2, 1, 3) in link axes."""
    xml = _one_link('<origin xyz="0.1 0.2 0.3" rpy="0 0 1.5707963267948966"/><mass value="2"/>'
                    '<inertia ixx="1" iyy="2" izz="3" ixy="0" ixz="0" iyz="0"/>',
                    '<limit effort="1" velocity="1" lower="-1" upper="1"/>')
    m = load_model(xml)
    assert np.allclose(m.inertia[0], np.diag([2.0, 1.0, 3.0]), atol=1e-15)
    assert np.allclose(m.com[0], [0.1, 0.2, 0.3]) and m.mass[0] == 2.0


def test_fixed_links_merge_by_parallel_axis_theorem() -> None:
    xml = """<robot name="m"><link name="base"/>
      <link name="l1"><inertial><mass value="1"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="l2"><inertial><origin xyz="0 0 0"/><mass value="1"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
      <joint name="f" type="fixed"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/></joint></robot>"""
    m = load_model(xml)
    assert m.tip_link == "l2" and m.mass[0] == 2.0
    assert np.allclose(m.com[0], [0.5, 0, 0])
    # two point masses 0.5 m from their centre along x: I = diag(0, 0.5, 0.5)
    assert np.allclose(m.inertia[0], np.diag([0.0, 0.5, 0.5]))
    assert m.lower[0] == -np.inf and m.upper[0] == np.inf  # continuous


def test_limits_and_friction() -> None:
    xml = _one_link('<mass value="1"/>', '<limit effort="12" velocity="3" lower="-0.5" upper="0.7"/>'
                    '<dynamics damping="0.25" friction="1.5"/>', kind="prismatic")
    m = load_model(xml)
    assert m.joint_type[0] == PRISMATIC
    assert (m.lower[0], m.upper[0], m.velocity_limit[0], m.effort_limit[0]) == (-0.5, 0.7, 3.0, 12.0)
    assert (m.viscous[0], m.coulomb[0]) == (0.25, 1.5)
    m = load_model(_one_link('<mass value="1"/>', '<limit effort="4" velocity="2"/>', kind="continuous"))
    assert (m.lower[0], m.upper[0], m.velocity_limit[0], m.effort_limit[0]) == (-np.inf, np.inf, 2.0, 4.0)
    m = load_model(_one_link('<mass value="1"/>'))  # no <limit>: unlimited
    assert np.isinf([m.lower[0], m.upper[0], m.velocity_limit[0], m.effort_limit[0]]).all()


def test_reversed_axis_keeps_joint_sign() -> None:
    """axis 0 0 -1: the MDH z axis follows it (base flips), never a negated joint."""
    xml = _one_link('<mass value="1"/>').replace('xyz="0 0 1"', 'xyz="0 0 -1"')
    conv = load_conversion(xml)
    assert np.allclose(conv.model.base[:3, 2], [0, 0, -1])
    q = 0.4
    R = conv.tool_pose([q])[:3, :3]
    assert np.allclose(R, [[np.cos(q), np.sin(q), 0], [-np.sin(q), np.cos(q), 0], [0, 0, 1]])


def test_locking_a_chain_joint_folds_it() -> None:
    rng = np.random.default_rng(5)
    rc = random_chain_urdf(rng, ["skew", "parallel", "intersecting"], ["revolute"] * 4, branch=False)
    conv = load_conversion(rc.xml, rc.base, rc.tip, {"joint2": 0.7})
    assert conv.model.joint_names == ("joint1", "joint3", "joint4")
    assert conv.positions["joint2"] == 0.7
    check_all(conv, 5)


def test_gravity_is_passed_through() -> None:
    m = load_model(_one_link('<mass value="1"/>'), gravity=(0.0, -9.81, 0.0))
    assert np.array_equal(m.gravity, [0.0, -9.81, 0.0])


def test_yaml_round_trip_is_exact(tmp_path: Path) -> None:
    from rbd_ros import Robot

    for m in (_panda().model, load_model(_one_link('<mass value="1"/>', kind="continuous"))):
        back = MdhModel.from_yaml(m.to_yaml())
        path = tmp_path / "m.yaml"
        m.to_yaml(str(path))
        robot = Robot.from_yaml(str(path))
        for other in (back, robot.model):
            for key, value in m.to_dict().items():
                assert other.to_dict()[key] == value, key
            assert np.array_equal(other.inertia, m.inertia) and np.array_equal(other.upper, m.upper)


def test_sources_path_string_pathlike_and_xacro(tmp_path: Path) -> None:
    xml = _one_link('<mass value="1"/>')
    f = tmp_path / "one.urdf"
    f.write_text(xml)
    ref = load_model(xml)
    for src in (str(f), f):
        assert np.array_equal(load_model(src).d, ref.d)
    xacro = tmp_path / "arm.urdf.xacro"
    xacro.write_text("""<?xml version="1.0"?>
<robot name="xarm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="length" default="0.5"/>
  <xacro:property name="L" value="$(arg length)"/>
  <xacro:macro name="seg" params="i parent">
    <link name="l${i}"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
    <joint name="j${i}" type="revolute"><parent link="${parent}"/><child link="l${i}"/>
      <origin xyz="${L} 0 0" rpy="${pi/2} 0 0"/><axis xyz="0 0 1"/>
      <limit effort="1" velocity="1" lower="${-pi}" upper="${pi}"/></joint>
  </xacro:macro>
  <link name="base"/>
  <xacro:seg i="1" parent="base"/><xacro:seg i="2" parent="l1"/>
</robot>""")
    m = load_model(xacro, xacro_args={"length": "0.25"})
    assert m.name == "xarm" and m.dof == 2 and m.a[1] == pytest.approx(0.25) and m.upper[0] == math.pi
    assert load_model(xacro).a[1] == pytest.approx(0.5)
    assert load_model(xacro.read_text(), xacro_args={"length": "0.1"}).a[1] == pytest.approx(0.1)


def test_missing_axis_defaults_to_x_like_urdf() -> None:
    xml = _one_link('<mass value="1"/><inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/>',
                    kind="continuous").replace('<axis xyz="0 0 1"/>', '<origin xyz="0 0 0.25"/>')
    conv = load_conversion(xml)
    assert np.allclose(conv.model.base[:3, 2], [1, 0, 0])
    check_all(conv, 21)


def test_robot_from_urdf_uses_the_converter() -> None:
    from rbd_ros import Robot

    robot = Robot.from_urdf(str(example_robot_urdf(PANDA)), "panda_link0", "panda_link8",
                            locked_joints={"panda_finger_joint1": 0.02})
    assert robot.model.to_dict() == _panda().model.to_dict()
    q = np.linspace(-1, 1, 7)
    assert np.allclose(robot.fk(q), _panda().tool_pose(q), atol=1e-13)
