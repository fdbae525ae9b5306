"""Shared helpers of the core tests: random MDH chains, bundled robots, and independent
oracles (Pinocchio and MuJoCo built from the URDF that ``model_to_urdf`` writes)."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.model.urdf_export import model_to_urdf

REPO = Path(__file__).resolve().parents[2]


def random_model(n: int, seed: int, prismatic: tuple[int, ...] = (), offsets: bool = True,
                 actuators: bool = True) -> MdhModel:
    """A random serial chain: random MDH table (with theta/d offsets), physical inertias,
    general base and tool transforms, random gravity direction."""
    rng = np.random.default_rng(seed)
    inertias = []
    for _ in range(n):
        s = rng.uniform(0.01, 0.15, 3)  # second moments -> physical principal moments
        pm = np.array([s[1] + s[2], s[0] + s[2], s[0] + s[1]])
        Q, _r = np.linalg.qr(rng.normal(size=(3, 3)))
        inertias.append(Q @ np.diag(pm) @ Q.T)

    def pose() -> np.ndarray:
        T = np.eye(4)
        T[:3, :3], _r = np.linalg.qr(rng.normal(size=(3, 3)))
        if np.linalg.det(T[:3, :3]) < 0:
            T[:3, 0] *= -1
        T[:3, 3] = rng.uniform(-0.3, 0.3, 3)
        return T

    kw = {}
    if actuators:
        kw = dict(gear_ratio=rng.uniform(10, 100, n), rotor_inertia=rng.uniform(1e-6, 1e-4, n),
                  viscous=rng.uniform(0.0, 2.0, n), coulomb=rng.uniform(0.0, 1.0, n))
    g = rng.normal(size=3)
    return MdhModel(
        name=f"chain{n}", joint_names=[f"j{i}" for i in range(n)],
        joint_type=[1 if i in prismatic else 0 for i in range(n)],
        a=rng.uniform(-0.4, 0.4, n), alpha=rng.uniform(-np.pi, np.pi, n),
        d=rng.uniform(-0.3, 0.3, n) if offsets else np.zeros(n),
        theta=rng.uniform(-np.pi, np.pi, n) if offsets else np.zeros(n),
        mass=rng.uniform(0.2, 5.0, n), com=rng.uniform(-0.15, 0.15, (n, 3)),
        inertia=np.array(inertias), base=pose(), tool=pose(),
        gravity=9.81 * g / np.linalg.norm(g), base_link="base_link", tip_link="tool0", **kw)


def bundled(name: str) -> MdhModel:
    return MdhModel.from_yaml(str(REPO / "config" / f"{name}.yaml"))


def mujoco_compatible(model: MdhModel) -> MdhModel:
    """MuJoCo refuses a massless body or an inertia with a zero principal moment; PUMA's
    link 1 has mass 0 and only Izz = 0.35.  Link 1 of any fixed-base chain only turns about
    its own z axis with its centre of mass given, so giving it a small mass at that centre
    and Ixx = Iyy = Izz/2 changes no joint torque: the test uses this model on both sides."""
    mass, inertia = model.mass.copy(), model.inertia.copy()
    if mass[0] == 0.0:
        mass[0] = 1e-3
    if np.linalg.eigvalsh(inertia[0]).min() <= 0.0:
        inertia[0][0, 0] = inertia[0][1, 1] = max(inertia[0][2, 2], 1e-6) / 2.0
        inertia[0][2, 2] = max(inertia[0][2, 2], 1e-6)
    return model.replace(mass=mass, inertia=inertia)


def pinocchio_model(model: MdhModel, urdf: str | None = None):
    import pinocchio as pin

    pm = pin.buildModelFromXML(urdf if urdf is not None else model_to_urdf(model))
    pm.gravity.linear[:] = model.gravity
    return pm, pm.createData()


def mujoco_model(model: MdhModel, urdf: str | None = None):
    """MuJoCo from the same URDF: visuals/collisions stripped, no damping/friction, contacts
    off, joint limits off (mj_inverse would add limit forces), the model's gravity."""
    import mujoco

    xml = urdf if urdf is not None else model_to_urdf(model)
    xml = re.sub(r"<(visual|collision)\b.*?</\1>", "", xml, flags=re.S)
    xml = re.sub(r"<dynamics[^>]*/>", "", xml)
    xml = xml.replace("</robot>", '<mujoco><compiler discardvisual="true" fusestatic="false" '
                      'balanceinertia="false"/></mujoco></robot>')
    spec = mujoco.MjSpec.from_string(xml)
    spec.option.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
                                 | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    spec.option.gravity = model.gravity
    m = spec.compile()
    return m, mujoco.MjData(m)


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max(1, max |b|): relative for large values, absolute near zero."""
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))
