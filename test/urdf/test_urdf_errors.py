"""Bad input to the URDF converter: one UrdfError whose message names the culprit, no chained
traceback from the parsers underneath."""
from __future__ import annotations

from pathlib import Path

import pytest

from rbd_ros.urdf import UrdfError, load_model
from robots_data import PANDA, example_robot_urdf

LIMIT = '<limit effort="1" velocity="1" lower="-1" upper="1"/>'


def _robot(*joints: str, links: tuple[str, ...] = ("base", "l1", "l2")) -> str:
    body = "".join(f'<link name="{ln}"/>' for ln in links)
    return f'<robot name="r">{body}{"".join(joints)}</robot>'


def _joint(name: str, parent: str, child: str, kind: str = "revolute", extra: str = "") -> str:
    lim = LIMIT if kind in ("revolute", "prismatic") else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<axis xyz="0 0 1"/>{lim}{extra}</joint>')


TWO = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2"))


def _raises(match: str, *args, **kw) -> UrdfError:
    with pytest.raises(UrdfError, match=match) as info:
        load_model(*args, **kw)
    exc = info.value
    assert isinstance(exc, ValueError)
    assert exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__)  # no chain
    assert "\n" not in str(exc)
    return exc


def test_broken_xml_string_and_file(tmp_path: Path) -> None:
    _raises(r"robot_description string: not well-formed XML", "<robot name='r'><link name='a'></robot>")
    f = tmp_path / "bad.urdf"
    f.write_text("<robot name='r'><link name='a'>")
    _raises(rf"{f}: not well-formed XML", f)


def test_missing_file_and_wrong_root(tmp_path: Path) -> None:
    _raises(r"nope\.urdf: no such URDF/xacro file", tmp_path / "nope.urdf")
    _raises(r"root element is <sdf>, expected <robot>", "<sdf version='1.6'/>")


def test_xacro_failure(tmp_path: Path) -> None:
    f = tmp_path / "bad.xacro"
    f.write_text('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                 '<link name="${undefined_thing}"/></robot>')
    _raises(r"bad\.xacro: xacro failed: .*undefined_thing", f)


def test_invalid_urdf_element() -> None:
    bad_limit = TWO.replace(LIMIT, '<limit lower="-1" upper="1"/>', 1)  # effort/velocity are required
    _raises(r"invalid URDF: .*effort", bad_limit)
    _raises(r"joint\[@name='j1'\]: Invalid joint type: hinge", TWO.replace('type="revolute"', 'type="hinge"', 1))


def test_tree_structure_errors() -> None:
    _raises(r"duplicate link name 'l1'", _robot(_joint("j1", "base", "l1"), links=("base", "l1", "l1")))
    _raises(r"joint 'j1' names unknown child link 'l9'", _robot(_joint("j1", "base", "l9")))
    _raises(r"link 'l2' is the child of two joints, 'j1' and 'j2'",
            _robot(_joint("j1", "base", "l2"), _joint("j2", "l1", "l2")))
    _raises(r"several root links", _robot(_joint("j1", "base", "l1")))


def test_unknown_link_names_suggest() -> None:
    _raises(r"unknown base_link 'bsae'; did you mean 'base'", TWO, base_link="bsae")
    _raises(r"unknown tip_link 'gripper'; known tip_links: base, l1, l2", TWO, tip_link="gripper")
    _raises(r"unknown joint 'j7'", TWO, locked_joints={"j7": 0.0})


def test_zero_axis() -> None:
    _raises(r"joint 'j2' has a zero axis", TWO.replace('<axis xyz="0 0 1"/>', "", 1).replace(
        '<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>'))


def test_mimic_on_chain() -> None:
    xml = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2", extra='<mimic joint="j1"/>'))
    _raises(r"joint 'j2' between 'base' and 'l2' mimics joint 'j1'.*--lock j2=VALUE", xml)
    assert load_model(xml, locked_joints={"j2": 0.1}).dof == 1  # locking it is the way out
    _raises(r"joint 'j2' mimics unknown joint 'jX'", xml.replace('joint="j1"', 'joint="jX"'))


@pytest.mark.parametrize("kind", ["floating", "planar"])
def test_floating_or_planar_on_chain(kind: str) -> None:
    xml = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2", kind=kind))
    _raises(rf"joint 'j2' between 'base' and 'l2' is {kind}", xml)
    _raises(rf"joint 'j2' is {kind}; only revolute, continuous and prismatic joints can be locked",
            xml, locked_joints={"j2": 0.0})


def test_branching_without_tip_lists_candidates() -> None:
    xml = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2"), _joint("j3", "l1", "l3"),
                 links=("base", "l1", "l2", "l3"))
    _raises(r"branches below base_link 'base'.*give tip_link, one of: l2, l3", xml)
    assert load_model(xml, tip_link="l3").joint_names == ("j1", "j3")
    _raises(r"give tip_link, one of: panda_hand_tcp, panda_leftfinger, panda_rightfinger",
            example_robot_urdf(PANDA))


def test_no_movable_joint_between_base_and_tip() -> None:
    xml = _robot(_joint("j1", "base", "l1"), _joint("f", "l1", "l2", kind="fixed"))
    _raises(r"no movable joint between base_link 'l1' and tip_link 'l2'", xml, base_link="l1", tip_link="l2")
    _raises(r"no movable joint between base_link 'base' and tip_link 'l1' \(all of them are locked\)",
            xml, tip_link="l1", locked_joints={"j1": 0.0})
    _raises(r"no movable joint below base_link 'l2'", xml, base_link="l2")


def test_tip_not_below_base() -> None:
    _raises(r"tip_link 'l1' is not below base_link 'l2'", TWO, base_link="l2", tip_link="l1")


def test_bad_locked_values() -> None:
    _raises(r"locked position of joint 'j1' is not a number: 'x'", TWO, locked_joints={"j1": "x"})
    _raises(r"locked position of joint 'j1' is not finite", TWO, locked_joints={"j1": float("nan")})
    xml = _robot(_joint("j1", "base", "l1"), _joint("f", "l1", "l2", kind="fixed"))
    _raises(r"joint 'f' is fixed", xml, locked_joints={"f": 0.0})


def test_off_chain_mimic_of_chain_joint() -> None:
    xml = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2"),
                 _joint("j3", "l1", "l3", extra='<mimic joint="j1"/>'), links=("base", "l1", "l2", "l3"))
    _raises(r"off-chain joint 'j3' mimics chain joint 'j1'", xml, tip_link="l2")
    assert load_model(xml, tip_link="l2", locked_joints={"j3": 0.0}).dof == 2


def test_bad_inertial() -> None:
    xml = TWO.replace('<link name="l1"/>', '<link name="l1"><inertial><mass value="-1"/></inertial></link>')
    _raises(r"link 'l1' inertial has negative mass", xml)
