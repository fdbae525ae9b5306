"""Oracles and generators for the URDF -> MDH converter tests (test_urdf_*.py).

* :func:`pin_reference`: Pinocchio on the ORIGINAL URDF, off-chain joints locked with
  ``buildReducedModel`` at the converter's positions, gravity turned into the root frame
  when base_link is not the URDF root.
* :func:`pin_from_mdh`: a Pinocchio model built from an :class:`MdhModel` (joint placements
  from :func:`mdh_transform`), so the converted inertias are checked with no dependency on
  rbd_ros's own kernels.
* :func:`random_chain_urdf`: URDF chains whose consecutive joint axes are in a chosen
  relation (skew, intersecting, parallel, ...), with random ``rpy`` everywhere, fixed links
  in between, prismatic/continuous joints, side branches and a locked joint above the base.
* :func:`stl_vertices`, :func:`pinocchio_link_poses`: for the collision-mesh tests, an STL
  file's vertices read with numpy and every URDF link's pose by Pinocchio's FK of the URDF.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from rbd_ros.algorithm.mdh import mdh_transform
from rbd_ros.lie.so3 import axis_rotation, rpy_matrix
from rbd_ros.lie.so3 import to_rpy as matrix_rpy
from rbd_ros.model import REVOLUTE, MdhModel


# ---- Pinocchio on the original URDF ----------------------------------------------------------
@dataclass
class PinReference:
    model: pin.Model
    data: pin.Data
    joint_names: tuple[str, ...]
    base_pose: pin.SE3  # root -> base_link

    def config(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio configuration of chain positions ``q`` (continuous joints are cos/sin)."""
        out = pin.neutral(self.model)
        for name, value in zip(self.joint_names, q):
            j = self.model.joints[self.model.getJointId(name)]
            if j.nq == 2:
                out[j.idx_q:j.idx_q + 2] = np.cos(value), np.sin(value)
            else:
                out[j.idx_q] = value
        return out

    def vector(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nv)
        for name, value in zip(self.joint_names, v):
            out[self.model.joints[self.model.getJointId(name)].idx_v] = value
        return out

    def unvector(self, tau: np.ndarray) -> np.ndarray:
        return np.array([tau[self.model.joints[self.model.getJointId(n)].idx_v] for n in self.joint_names])

    def link_pose(self, q: np.ndarray, link: str) -> np.ndarray:
        """Pose of ``link`` in the base_link frame."""
        pin.framesForwardKinematics(self.model, self.data, self.config(q))
        return (self.base_pose.inverse() * self.data.oMf[self.model.getFrameId(link)]).homogeneous

    def link_poses(self, q: np.ndarray, links) -> dict[str, np.ndarray]:
        pin.framesForwardKinematics(self.model, self.data, self.config(q))
        inv = self.base_pose.inverse()
        return {ln: (inv * self.data.oMf[self.model.getFrameId(ln)]).homogeneous for ln in links}

    def rnea(self, q, v, a) -> np.ndarray:
        return self.unvector(pin.rnea(self.model, self.data, self.config(q), self.vector(v), self.vector(a)))

    def mass_matrix(self, q) -> np.ndarray:
        M = pin.crba(self.model, self.data, self.config(q))
        M = np.triu(M) + np.triu(M, 1).T
        idx = [self.model.joints[self.model.getJointId(n)].idx_v for n in self.joint_names]
        return M[np.ix_(idx, idx)]

    def gravity(self, q) -> np.ndarray:
        return self.unvector(pin.computeGeneralizedGravity(self.model, self.data, self.config(q)))


def pin_reference(xml: str, model: MdhModel, positions: dict[str, float]) -> PinReference:
    """Pinocchio oracle for a converted ``model`` (see module docstring)."""
    full = pin.buildModelFromXML(xml)
    q_ref = pin.neutral(full)
    lock = []
    for jid in range(1, full.njoints):
        name = full.names[jid]
        if name in model.joint_names:
            continue
        lock.append(jid)
        j = full.joints[jid]
        value = positions.get(name, 0.0)
        if j.nq == 2:
            q_ref[j.idx_q:j.idx_q + 2] = np.cos(value), np.sin(value)
        elif j.nq == 1:
            q_ref[j.idx_q] = value
    reduced = pin.buildReducedModel(full, lock, q_ref) if lock else full
    data = reduced.createData()
    pin.framesForwardKinematics(reduced, data, pin.neutral(reduced))
    base_pose = data.oMf[reduced.getFrameId(model.base_link)].copy()
    reduced.gravity.linear = base_pose.rotation @ np.asarray(model.gravity)
    return PinReference(reduced, reduced.createData(), model.joint_names, base_pose)


def pin_from_mdh(model: MdhModel) -> pin.Model:
    """Pinocchio model of an :class:`MdhModel`: joint i placed at
    ``mdh_transform(a, alpha, d, theta)`` (q then rotates/translates along its z axis)."""
    m = pin.Model()
    parent = 0
    for i in range(model.dof):
        M = mdh_transform(model.a[i], model.alpha[i], model.d[i], model.theta[i])
        if i == 0:
            M = model.base @ M
        jm = pin.JointModelRZ() if model.joint_type[i] == REVOLUTE else pin.JointModelPZ()
        parent = m.addJoint(parent, jm, pin.SE3(M[:3, :3], M[:3, 3]), model.joint_names[i])
        m.appendBodyToJoint(parent, pin.Inertia(model.mass[i], model.com[i], model.inertia[i]), pin.SE3.Identity())
    m.gravity.linear = np.asarray(model.gravity)
    return m


def mdh_to_urdf(model: MdhModel) -> str:
    """A URDF whose link frames ARE the MDH frames of ``model`` (base = identity assumed)."""
    parts = [f'<robot name="{model.name}">', f'<link name="{model.base_link}"/>']
    parent = model.base_link
    for i in range(model.dof):
        T = mdh_transform(model.a[i], model.alpha[i], model.d[i], model.theta[i])
        kind = "revolute" if model.joint_type[i] == REVOLUTE else "prismatic"
        parts.append(_link(model.link_names[i], model.mass[i], model.com[i], model.inertia[i]))
        parts.append(
            f'<joint name="{model.joint_names[i]}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{model.link_names[i]}"/>{_origin(T)}<axis xyz="0 0 1"/>'
            f'<limit effort="10" velocity="2" lower="-3" upper="3"/></joint>')
        parent = model.link_names[i]
    parts.append("</robot>")
    return "\n".join(parts)


# ---- random chains ---------------------------------------------------------------------------
def _fmt(v) -> str:
    return " ".join(repr(float(x)) for x in v)


def _origin(T: np.ndarray) -> str:
    return f'<origin xyz="{_fmt(T[:3, 3])}" rpy="{_fmt(matrix_rpy(T[:3, :3]))}"/>'


def _link(name: str, mass: float | None = None, com=None, inertia=None, rpy=None) -> str:
    if mass is None:
        return f'<link name="{name}"/>'
    I = np.asarray(inertia)
    rpy = np.zeros(3) if rpy is None else rpy
    return (f'<link name="{name}"><inertial><origin xyz="{_fmt(com)}" rpy="{_fmt(rpy)}"/>'
            f'<mass value="{float(mass)!r}"/><inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" '
            f'iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/></inertial></link>')


def _random_link(rng: np.random.Generator, name: str) -> str:
    m = float(rng.uniform(0.3, 3.0))
    p = rng.uniform(0.01, 0.1, 3)
    moments = np.array([p[1] + p[2], p[0] + p[2], p[0] + p[1]])  # triangle inequality holds
    R = rpy_matrix(rng.uniform(-0.5, 0.5, 3))
    I = R @ np.diag(moments) @ R.T  # non-diagonal tensor in the inertial frame
    return _link(name, m, rng.uniform(-0.1, 0.1, 3), I, rng.uniform(-np.pi, np.pi, 3))


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    return rpy_matrix(rng.uniform(-np.pi, np.pi, 3))


def _align(v: np.ndarray, u: np.ndarray) -> np.ndarray:
    """A rotation taking unit ``v`` onto unit ``u``."""
    c = np.cross(v, u)
    s = np.linalg.norm(c)
    if s < 1e-12:
        if v @ u > 0:
            return np.eye(3)
        perp = np.cross(v, [1.0, 0, 0] if abs(v[0]) < 0.9 else [0, 1.0, 0])
        return axis_rotation(perp / np.linalg.norm(perp), np.pi)
    return axis_rotation(c / s, np.arctan2(s, v @ u))


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


LOCAL_AXES = ([0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0, -1], [0.6, 0, -0.8], [0, -1, 0])


@dataclass
class RandomChain:
    xml: str
    base: str
    tip: str
    chain: list[str]
    locked: dict[str, float] = field(default_factory=dict)  # joints the test should lock


def random_chain_urdf(rng: np.random.Generator, cases: list[str], kinds: list[str],
                      fixed_between: bool = True, branch: bool = True, above_base: bool = False) -> RandomChain:
    """A URDF chain with ``len(kinds)`` joints (``revolute``/``continuous``/``prismatic``)
    whose consecutive axes are in the relations ``cases`` (see module docstring)."""
    n = len(kinds)
    assert len(cases) == n - 1
    points, dirs = [rng.uniform(-0.3, 0.3, 3)], [_unit(rng)]
    for case in cases:
        p, u = points[-1], dirs[-1]
        perp = np.cross(u, _unit(rng))
        perp *= rng.uniform(0.05, 0.4) / np.linalg.norm(perp)
        along = rng.uniform(-0.3, 0.3)
        if case == "skew":
            new_u = _unit(rng)
            new_p = p + rng.uniform(-0.4, 0.4, 3)
        elif case == "intersecting":
            new_u = _unit(rng)
            new_p = p + rng.uniform(-0.3, 0.3) * u + along * new_u
        elif case == "perpendicular":  # intersecting at 90 degrees
            new_u = np.cross(u, _unit(rng))
            new_u /= np.linalg.norm(new_u)
            new_p = p + rng.uniform(-0.3, 0.3) * u + along * new_u
        elif case in ("parallel", "anti-parallel"):
            new_u = u if case == "parallel" else -u
            new_p = p + perp + along * u
        elif case in ("collinear", "anti-collinear"):
            new_u = u if case == "collinear" else -u
            new_p = p + along * u
        else:
            raise ValueError(case)
        points.append(new_p)
        dirs.append(new_u)

    parts = ['<robot name="random_chain">']
    base = "base"
    if above_base:
        parts += [_random_link(rng, "world"), _random_link(rng, base)]
        mount = np.eye(4)
        mount[:3, :3], mount[:3, 3] = _random_rotation(rng), rng.uniform(-0.5, 0.5, 3)
        parts.append(f'<joint name="mount" type="revolute"><parent link="world"/><child link="{base}"/>'
                     f'{_origin(mount)}<axis xyz="{_fmt(_unit(rng))}"/>'
                     f'<limit effort="1" velocity="1" lower="-2" upper="2"/></joint>')
    else:
        parts.append(_random_link(rng, base))
    parent, W_parent = base, np.eye(4)
    chain, locked = [], {}
    for i, kind in enumerate(kinds):
        if fixed_between and rng.random() < 0.6:  # a fixed link in between
            W = np.eye(4)
            W[:3, :3], W[:3, 3] = _random_rotation(rng), rng.uniform(-0.3, 0.3, 3)
            name = f"fixed{i}"
            parts.append(_random_link(rng, name) if rng.random() < 0.7 else _link(name))
            parts.append(f'<joint name="fixed_joint{i}" type="fixed"><parent link="{parent}"/>'
                         f'<child link="{name}"/>{_origin(np.linalg.inv(W_parent) @ W)}</joint>')
            parent, W_parent = name, W
        local = np.asarray(LOCAL_AXES[int(rng.integers(len(LOCAL_AXES)))], dtype=float)
        local /= np.linalg.norm(local)
        R0 = _random_rotation(rng)
        W = np.eye(4)
        W[:3, :3] = _align(R0 @ local, dirs[i]) @ R0
        W[:3, 3] = points[i]
        link, joint = f"link{i + 1}", f"joint{i + 1}"
        parts.append(_random_link(rng, link))
        limit = "" if kind == "continuous" else \
            f'<limit effort="{float(rng.uniform(5, 50))!r}" velocity="{float(rng.uniform(1, 3))!r}" lower="-2.5" upper="2.5"/>'
        if kind == "continuous" and rng.random() < 0.5:
            limit = '<limit effort="7.5" velocity="3.5"/>'
        parts.append(f'<joint name="{joint}" type="{kind}"><parent link="{parent}"/><child link="{link}"/>'
                     f'{_origin(np.linalg.inv(W_parent) @ W)}<axis xyz="{_fmt(local)}"/>{limit}'
                     f'<dynamics damping="{float(rng.uniform(0, 1))!r}" friction="{float(rng.uniform(0, 1))!r}"/></joint>')
        chain.append(joint)
        if branch and i == n // 2:  # a side branch: locked revolute + prismatic with mass
            parts += [_random_link(rng, "side1"), _random_link(rng, "side2")]
            parts.append(f'<joint name="side_rev" type="revolute"><parent link="{link}"/><child link="side1"/>'
                         f'<origin xyz="{_fmt(rng.uniform(-.2, .2, 3))}" rpy="{_fmt(rng.uniform(-3, 3, 3))}"/>'
                         f'<axis xyz="{_fmt(_unit(rng))}"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>')
            parts.append(f'<joint name="side_pri" type="prismatic"><parent link="side1"/><child link="side2"/>'
                         f'<origin xyz="{_fmt(rng.uniform(-.2, .2, 3))}" rpy="{_fmt(rng.uniform(-3, 3, 3))}"/>'
                         f'<axis xyz="{_fmt(_unit(rng))}"/><limit effort="1" velocity="1" lower="-1" upper="1"/></joint>')
            locked["side_rev"] = float(rng.uniform(-2, 2))
        parent, W_parent = link, W
    parts.append(_random_link(rng, "flange"))
    parts.append(f'<joint name="flange_joint" type="fixed"><parent link="{parent}"/><child link="flange"/>'
                 f'<origin xyz="{_fmt(rng.uniform(-.2, .2, 3))}" rpy="{_fmt(rng.uniform(-3, 3, 3))}"/></joint>')
    parts.append(_link("tip"))
    parts.append('<joint name="tip_joint" type="fixed"><parent link="flange"/><child link="tip"/>'
                 f'<origin xyz="{_fmt(rng.uniform(-.2, .2, 3))}" rpy="{_fmt(rng.uniform(-3, 3, 3))}"/></joint>')
    parts.append("</robot>")
    return RandomChain("\n".join(parts), base, "tip", chain, locked)


# ---- collision meshes ---------------------------------------------------------------------------
def stl_vertices(path: Path) -> np.ndarray:
    """The vertices (k, 3) of an STL file, binary or ASCII."""
    raw = path.read_bytes()
    count = int(np.frombuffer(raw[80:84], "<u4")[0]) if len(raw) >= 84 else -1
    if len(raw) == 84 + 50 * count:  # binary: 80-byte header, count, 50-byte facets
        rec = np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
        return np.frombuffer(raw, rec, count, 84)["v"].reshape(-1, 3).astype(float)
    return np.array([[float(x) for x in line.split()[1:4]]
                     for line in raw.decode().splitlines() if line.strip().startswith("vertex")])


def pinocchio_link_poses(path: Path, model, q: np.ndarray) -> dict[str, np.ndarray]:
    """Every URDF link's pose in ``model.base_link``'s frame at our joint positions ``q``."""
    pm = pin.buildModelFromUrdf(str(path))
    pd = pm.createData()
    qp = pin.neutral(pm)
    for name, value in zip(model.joint_names, q):
        qp[pm.idx_qs[pm.getJointId(name)]] = value
    pin.framesForwardKinematics(pm, pd, qp)
    poses = {f.name: pd.oMf[k].homogeneous for k, f in enumerate(pm.frames)
             if f.type == pin.FrameType.BODY}
    base = np.linalg.inv(poses[model.base_link])
    return {name: base @ T for name, T in poses.items()}
