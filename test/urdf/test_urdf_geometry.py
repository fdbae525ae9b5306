"""Axis lines -> modified DH frames (rbd_ros.urdf.geometry), 003 §1.6.

Every axis case is checked against the MDH frame rules (z_i on axis i in the URDF direction,
x_i a common normal of axes i and i+1, origin on axis i), and a URDF whose link frames are
MDH frames converts back to exactly its MDH table.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rbd_ros.algorithm.mdh import mdh_transform
from rbd_ros.model import MdhModel
from rbd_ros.urdf import load_conversion
from rbd_ros.urdf.geometry import AxisLine, classify, closest_x_on_circle, mdh_geometry
from urdf_oracles import mdh_to_urdf


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def _frame_rules(lines: list[AxisLine], geo) -> None:
    """F_i (composed with mdh_transform) have z on the axis, origin on the axis and
    x_{i-1} perpendicular to both neighbouring axes (a common normal)."""
    F = geo.frames
    for i, ln in enumerate(lines):
        z = F[i + 1][:3, 2]
        assert np.allclose(z, ln.direction, atol=1e-12)  # same direction, never negated
        o = F[i + 1][:3, 3] - ln.point
        # nearly parallel skew axes have far-away normals: rounding scales with that distance
        scale = max(1.0, float(np.abs(F[:, :3, 3]).max()))
        assert np.linalg.norm(o - (o @ z) * z) < 1e-12 * scale  # origin on the axis
        x_prev = F[i][:3, 0]
        assert abs(x_prev @ z) < 1e-12 and abs(x_prev @ F[i][:3, 2]) < 1e-12
    assert np.allclose(F[0][:3, 2], lines[0].direction, atol=1e-12)


CASES = {
    # name: (line 2 point, line 2 direction) relative to line 1 = z axis through (0, 0, 0.2)
    "skew": ([0.3, 0.1, 0.5], [0.0, 1.0, 1.0]),
    "intersecting": ([0.0, 0.3, 0.5], [0.0, 1.0, 0.3]),
    "parallel": ([0.4, -0.1, 0.7], [0.0, 0.0, 1.0]),
    "anti-parallel": ([0.4, -0.1, 0.7], [0.0, 0.0, -1.0]),
    "collinear": ([0.0, 0.0, 0.9], [0.0, 0.0, 1.0]),
    "anti-collinear": ([0.0, 0.0, 0.9], [0.0, 0.0, -1.0]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_axis_case(case: str) -> None:
    p, u = CASES[case]
    lines = [AxisLine(np.array([0.0, 0.0, 0.2]), np.array([0.0, 0.0, 1.0])), AxisLine(np.array(p), _unit(u))]
    link_frames = [np.eye(4), np.eye(4)]
    link_frames[1][:3, 3] = p
    geo = mdh_geometry(lines, link_frames)
    assert geo.cases == (case,)
    _frame_rules(lines, geo)
    a, alpha = geo.a[1], geo.alpha[1]
    if case in ("intersecting", "collinear", "anti-collinear"):
        assert a == 0.0
    if case in ("parallel", "collinear"):
        assert alpha == 0.0
    if case in ("anti-parallel", "anti-collinear"):
        assert alpha == np.pi
    if case in ("parallel", "anti-parallel"):
        assert a == pytest.approx(np.hypot(0.4, 0.1))  # x_1 across to axis 2: a >= 0 (closest to URDF)
        assert np.allclose(geo.frames[1][:3, 3], [0, 0, 0.2])  # origin = URDF joint origin
    if case == "skew":  # the unique common normal: |a| is the distance between the lines
        n = _unit(np.cross([0, 0, 1], _unit(u)))
        assert abs(a) == pytest.approx(abs(n @ (np.array(p) - [0, 0, 0.2])), rel=1e-12)
    # base: axis 1 is base z through the origin -> frame 0 is base_link, a_0 = alpha_0 = 0
    assert np.allclose(geo.frames[0], np.eye(4))
    assert geo.a[0] == 0.0 and geo.alpha[0] == 0.0 and geo.d[0] == pytest.approx(geo.frames[1][2, 3])
    if case == "skew":  # foot of the normal on axis 1: where line 2 crosses the plane y = 0
        assert geo.d[0] == pytest.approx(0.4)


def test_anti_parallel_first_axis_base_flip() -> None:
    """Axis 1 along -z of base_link: frame 0 keeps base x, so base = Rx(pi), no negated joint."""
    lines = [AxisLine(np.array([0.1, 0.0, 0.0]), np.array([0.0, 0.0, -1.0]))]
    geo = mdh_geometry(lines, [np.eye(4)])
    assert np.allclose(geo.frames[0][:3, :3], np.diag([1.0, -1.0, -1.0]))
    assert np.allclose(geo.frames[0][:3, 3], [0.1, 0.0, 0.0])


def test_nearly_parallel_axes_are_parallel() -> None:
    """Rounding noise (1e-15) must not turn parallel axes into a far-away skew normal."""
    u2 = _unit([1e-15, 0.0, 1.0])
    lines = [AxisLine(np.zeros(3), np.array([0.0, 0.0, 1.0])), AxisLine(np.array([0.3, 0.0, 0.0]), u2)]
    geo = mdh_geometry(lines, [np.eye(4), np.eye(4)])
    assert geo.cases == ("parallel",)
    assert abs(geo.d[1]) < 1e-12 and geo.a[1] == pytest.approx(0.3)


def test_closest_x_on_circle() -> None:
    z = _unit([0.0, 0.0, 1.0])
    assert np.allclose(closest_x_on_circle(z, np.eye(3)), [1, 0, 0])
    R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # Rz(90)
    assert np.allclose(closest_x_on_circle(z, R), [0, 1, 0])
    # z opposite to the reference z: the reference x projection is used
    assert np.allclose(closest_x_on_circle(-z, np.eye(3)), [1, 0, 0])


vec = st.tuples(*[st.floats(-1, 1) for _ in range(3)]).map(np.array).filter(lambda v: np.linalg.norm(v) > 0.1)


@settings(max_examples=150, deadline=None)
@given(p1=vec, u1=vec, p2=vec, u2=vec, kind=st.sampled_from(["random", "parallel", "anti", "through"]))
def test_random_line_pairs_obey_mdh_rules(p1, u1, p2, u2, kind) -> None:
    u1 = _unit(u1)
    u2 = {"random": _unit(u2), "parallel": u1, "anti": -u1, "through": _unit(u2)}[kind]
    if kind == "through":  # intersecting
        p2 = p1 + 0.3 * u1
    lines = [AxisLine(p1, u1), AxisLine(p2, u2)]
    case, origin, _ = classify(*lines)
    if np.linalg.norm(np.cross(u1, u2)) > 1e-6:
        geo = mdh_geometry(lines, [np.eye(4), np.eye(4)])
        _frame_rules(lines, geo)
    if kind == "parallel":
        assert case in ("parallel", "collinear")
    if kind == "anti":
        assert case in ("anti-parallel", "anti-collinear")


# ---- MDH table -> URDF with MDH link frames -> same table -----------------------------------
# well-conditioned twists: exactly parallel, or clearly not (near-parallel axes determine the
# frames only up to noise / angle, so they are checked kinematically in test_urdf_convert.py)
angles = st.one_of(st.sampled_from([0.0, np.pi / 2, -np.pi / 2, np.pi]),
                   st.floats(-3.1, 3.1).filter(lambda x: abs(np.sin(x)) > 1e-3))
lengths = st.one_of(st.just(0.0), st.floats(-0.5, 0.5).filter(lambda x: abs(x) > 1e-3))


@st.composite
def mdh_tables(draw):
    n = draw(st.integers(1, 7))
    rows = [draw(st.tuples(lengths, angles, lengths, st.floats(-3.1, 3.1), st.sampled_from([0, 0, 1])))
            for _ in range(n)]
    a, alpha, d, theta, kind = (np.array(c, dtype=float) for c in zip(*rows))
    a[0] = alpha[0] = 0.0  # frame 0 on base_link needs a_0 = alpha_0 = 0
    return MdhModel(joint_names=[f"j{i}" for i in range(n)], joint_type=kind.astype(int), a=a, alpha=alpha,
                    d=d, theta=theta, mass=np.ones(n), com=np.zeros((n, 3)), inertia=np.tile(np.eye(3), (n, 1, 1)),
                    base_link="base", link_names=[f"l{i}" for i in range(n)], tip_link=f"l{n - 1}")


def _wrap(x):
    return (np.asarray(x) + np.pi) % (2 * np.pi) - np.pi


@settings(max_examples=60, deadline=None)
@given(model=mdh_tables())
def test_mdh_urdf_round_trip_recovers_table(model: MdhModel) -> None:
    conv = load_conversion(mdh_to_urdf(model), "base", model.tip_link)
    m = conv.model
    assert np.allclose(m.base, np.eye(4), atol=1e-12) and np.allclose(m.tool, np.eye(4), atol=1e-12)
    assert np.allclose(m.a, model.a, atol=1e-12)
    assert np.allclose(m.d, model.d, atol=1e-12)
    assert np.allclose(_wrap(m.alpha - model.alpha), 0, atol=1e-12)
    assert np.allclose(_wrap(m.theta - model.theta), 0, atol=1e-12)
    assert list(m.joint_type) == list(model.joint_type)
    for i in range(model.dof):  # every MDH frame is the URDF link frame
        assert np.allclose(conv.link_offsets[model.link_names[i]][1], np.eye(4), atol=1e-12)


def test_mdh_transform_is_the_frame_formula() -> None:
    """The frames the converter composes are Rx(alpha) Tx(a) Rz(theta) Tz(d) (misprint 003 (4.40),
    docs/references.md)."""
    a, alpha, d, theta = 0.3, 0.7, -0.2, 1.1
    T = mdh_transform(a, alpha, d, theta)
    ca, sa, ct, st_ = np.cos(alpha), np.sin(alpha), np.cos(theta), np.sin(theta)
    Rx = np.array([[1, 0, 0, 0], [0, ca, -sa, 0], [0, sa, ca, 0], [0, 0, 0, 1.0]])
    Tx = np.eye(4)
    Tx[0, 3] = a
    Rz = np.array([[ct, -st_, 0, 0], [st_, ct, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
    Tz = np.eye(4)
    Tz[2, 3] = d
    assert np.allclose(T, Rx @ Tx @ Rz @ Tz, atol=1e-15)
