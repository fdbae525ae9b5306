#!/usr/bin/env python3
"""Generate the bundled robots: ``urdf/<name>.urdf`` (via ``rbd_ros.urdf_export``) and
``config/<name>.yaml`` (the full ``MdhModel``, actuators included) from the MDH tables below.

    .venv/bin/python scripts/make_robots.py

Tables use Craig's modified DH (003_871da85b02213601.txt §1.6): per joint
``a_{i-1}, alpha_{i-1}, d_i, theta_i``; centres of mass in frame i; inertias about the centre
of mass in frame i axes.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rbd_ros.model import MdhModel  # noqa: E402
from rbd_ros.model.urdf_export import model_to_urdf  # noqa: E402

DEG = np.pi / 180.0


def _rx(angle: float) -> np.ndarray:
    T = np.eye(4)
    c, s = np.cos(angle), np.sin(angle)
    T[1:3, 1:3] = [[c, -s], [s, c]]
    return T


def _inertia(ixx: float, iyy: float, izz: float, ixy: float = 0.0, ixz: float = 0.0,
             iyz: float = 0.0) -> list[list[float]]:
    return [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]


def planar2() -> MdhModel:
    """Two-link planar arm of 003 Fig. 1.11: l1 = l2 = 1 m, m1 = m2 = 1 kg, centres of mass
    at mid-link, slender-rod inertias (m l^2 / 12) plus a small radial term.  The base
    turns the arm plane (frame-0 x-y) vertical: world = Rx(+90 deg) frame 0, so gravity
    (world -z) acts along frame-0 -y and the textbook closed forms apply in frame 0."""
    l1 = l2 = 1.0
    m1 = m2 = 1.0
    tool = np.eye(4)
    tool[0, 3] = l2
    rod = lambda m, l: _inertia(1e-3, m * l * l / 12.0, m * l * l / 12.0)  # noqa: E731
    return MdhModel(
        name="planar2", joint_names=("joint1", "joint2"), joint_type=("revolute", "revolute"),
        link_names=("link1", "link2"), a=[0.0, l1], alpha=[0.0, 0.0], d=[0.0, 0.0],
        theta=[0.0, 0.0], mass=[m1, m2], com=[[l1 / 2, 0, 0], [l2 / 2, 0, 0]],
        inertia=[rod(m1, l1), rod(m2, l2)], base=_rx(np.pi / 2), tool=tool,
        lower=[-np.pi, -np.pi], upper=[np.pi, np.pi], effort_limit=[50.0, 50.0],
        velocity_limit=[10.0, 10.0], base_link="base_link", tip_link="tool0")


def puma560() -> MdhModel:
    """Unimation PUMA 560 in modified DH with the Armstrong-Khatib-Burdick (1986) inertial
    parameters, as in Corke's Robotics Toolbox ``mdl_puma560akb``.

    Actuators: gear ratios are Corke's G = [-62.6111, 107.815, -53.7063, 76.0364, 71.923,
    76.686]; we store magnitudes (the armature G^2 Jm and reflected friction do not depend on
    the sign; the sign only says the motor turns opposite to the joint, and the joint
    direction is kept).  Jm from ``mdl_puma560akb``.  ``mdl_puma560akb`` gives no friction
    ("unknown"), so viscous B and Coulomb Tc are the motor-referenced values of Corke's
    ``mdl_puma560`` reflected to the joint: ``B_joint = G^2 B``, ``Tc_joint = |G| Tc`` with
    Tc the mean of its (+, -) magnitudes (our model has symmetric Coulomb friction).
    Limits: Corke's ``mdl_puma560`` ranges with joints 2 and 3 sign-flipped to this model's
    zero (``qr`` = [0, -90, 90, 0, 0, 0] deg here); effort limits of Armstrong et al.
    Link 1: Armstrong et al. give only Izz = 0.35 (it turns about its own fixed z axis, so
    Ixx and Iyy act on no joint); Ixx = Iyy = 0.175 makes the tensor physical (I1 + I2 >= I3,
    ``rbd_ros.physical``) without changing any joint torque."""
    G = np.abs([-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686])
    Jm = [291e-6, 409e-6, 299e-6, 35e-6, 35e-6, 35e-6]
    B = np.array([1.48e-3, 0.817e-3, 1.38e-3, 71.2e-6, 82.6e-6, 36.7e-6])
    Tc = np.array([(0.395 + 0.435) / 2, (0.126 + 0.071) / 2, (0.132 + 0.105) / 2,
                   (11.2e-3 + 16.9e-3) / 2, (9.26e-3 + 14.5e-3) / 2, (3.96e-3 + 10.5e-3) / 2])
    return MdhModel(
        name="puma560", joint_names=tuple(f"joint{i}" for i in range(1, 7)),
        joint_type=["revolute"] * 6, link_names=tuple(f"link{i}" for i in range(1, 7)),
        a=[0.0, 0.0, 0.4318, -0.0203, 0.0, 0.0],
        alpha=[0.0, -np.pi / 2, 0.0, np.pi / 2, -np.pi / 2, np.pi / 2],
        d=[0.0, 0.2435, -0.0934, 0.4331, 0.0, 0.0], theta=[0.0] * 6,
        mass=[0.0, 17.4, 4.8, 0.82, 0.34, 0.09],
        com=[[0, 0, 0], [0.068, 0.006, -0.016], [0, -0.070, 0.014], [0, 0, -0.019], [0, 0, 0],
             [0, 0, 0.032]],
        inertia=[_inertia(0.175, 0.175, 0.35), _inertia(0.13, 0.524, 0.539),
                 _inertia(0.066, 0.0125, 0.066), _inertia(1.8e-3, 1.8e-3, 1.3e-3),
                 _inertia(0.3e-3, 0.3e-3, 0.4e-3), _inertia(0.15e-3, 0.15e-3, 0.04e-3)],
        lower=np.array([-160, -225, -45, -110, -100, -266]) * DEG,
        upper=np.array([160, 45, 225, 170, 100, 266]) * DEG,
        effort_limit=[97.6, 186.4, 89.4, 24.2, 20.1, 21.3],
        gear_ratio=G, rotor_inertia=Jm, viscous=G**2 * B, coulomb=G * Tc,
        base_link="base_link", tip_link="tool0")


def arm7() -> MdhModel:
    """A 7-DoF Panda-like arm: the modified-DH table of Franka Emika's Panda documentation
    (flange 0.107 m along z7 as the tool) and link inertias of the published identification
    of Gaz et al. (IEEE RA-L 2019), as recalled; they are realistic, not authoritative.
    Actuator data (G = 100, Jm, friction) are illustrative round numbers."""
    tool = np.eye(4)
    tool[2, 3] = 0.107
    masses = [4.970684, 0.646926, 3.228604, 3.587895, 1.225946, 1.666555, 0.735522]
    coms = [[3.875e-3, 2.081e-3, -0.04762], [-3.141e-3, -0.02872, 3.495e-3],
            [0.027518, 0.039252, -0.066502], [-0.05317, 0.104419, 0.027454],
            [-0.011953, 0.041065, -0.038437], [0.060149, -0.014117, -0.010517],
            [0.010517, -4.252e-3, 0.061597]]
    inertias = [
        _inertia(0.70337, 0.70661, 0.009117, -1.39e-4, 6.772e-3, 0.019169),
        _inertia(7.962e-3, 0.02811, 0.025995, -3.925e-3, 0.010254, 7.04e-4),
        _inertia(0.037242, 0.036155, 0.01083, -4.761e-3, -0.011396, -0.012805),
        _inertia(0.025853, 0.019552, 0.028323, 7.796e-3, -1.332e-3, 8.641e-3),
        _inertia(0.035549, 0.029474, 8.627e-3, -2.117e-3, -4.037e-3, 2.29e-4),
        _inertia(1.964e-3, 4.354e-3, 5.433e-3, 1.09e-4, -1.158e-3, 3.41e-4),
        _inertia(0.012516, 0.010027, 4.815e-3, -4.28e-4, -1.196e-3, -7.41e-4),
    ]
    return MdhModel(
        name="arm7", joint_names=tuple(f"joint{i}" for i in range(1, 8)),
        joint_type=["revolute"] * 7, link_names=tuple(f"link{i}" for i in range(1, 8)),
        a=[0.0, 0.0, 0.0, 0.0825, -0.0825, 0.0, 0.088],
        alpha=[0.0, -np.pi / 2, np.pi / 2, np.pi / 2, -np.pi / 2, np.pi / 2, np.pi / 2],
        d=[0.333, 0.0, 0.316, 0.0, 0.384, 0.0, 0.0], theta=[0.0] * 7,
        mass=masses, com=coms, inertia=inertias,
        lower=[-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973],
        upper=[2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973],
        velocity_limit=[2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61],
        effort_limit=[87, 87, 87, 87, 12, 12, 12],
        gear_ratio=[100.0] * 7, rotor_inertia=[5e-5, 5e-5, 5e-5, 5e-5, 1e-5, 1e-5, 1e-5],
        viscous=[0.5] * 4 + [0.2] * 3, coulomb=[0.8] * 4 + [0.3] * 3,
        base_link="base_link", tip_link="tool0")


ROBOTS = {"planar2": planar2, "puma560": puma560, "arm7": arm7}

HEADER = """\
# {name}: the full rbd_ros MdhModel (MdhModel.to_dict form under the top-level `model:` key),
# generated by scripts/make_robots.py together with urdf/{name}.urdf.  URDF cannot hold gear
# ratios and rotor inertias, so this file is the complete description (actuators included):
# load it with rbd_ros.Robot.from_yaml("config/{name}.yaml") or MdhModel.from_yaml.
# Units: SI; gear_ratio = |G| (motor turns per joint turn), rotor_inertia = Jm (kg m^2, motor
# side), viscous (N m s/rad) and coulomb (N m) friction at the joint.
"""


# ---- mobile manipulators (issue 17) ----------------------------------------------------------
# The URDF is written from the spec below; the YAML is the URDF converted with its base
# (``base_type`` planar / diff_drive, base body, wheels found from the wheel joints) plus arm7's
# actuator data, which URDF cannot hold.
MOBILE_BASE = {"mobile_arm7": "diff_drive", "omni_arm7": "planar"}
MOBILE = {
    # diff drive: base_link origin on the wheel-axle midpoint; ros2_control wheel_radius 0.08,
    # wheel_separation 0.45; a passive caster (fixed, no dynamics of its own)
    "mobile_arm7": dict(box=(0.60, 0.45, 0.25), box_at=(-0.08, 0.0, 0.10), mass=40.0,
                        mount=(0.10, 0.0, 0.225), radius=0.08, width=0.04, wheel_mass=1.2,
                        wheels={"left_wheel": (0.0, 0.225), "right_wheel": (0.0, -0.225)},
                        caster=(-0.30, 0.0, -0.05)),
    # holonomic (mecanum) base: base_link origin at the wheel-axis height, centre of the wheels
    "omni_arm7": dict(box=(0.60, 0.50, 0.20), box_at=(0.0, 0.0, 0.08), mass=50.0,
                      mount=(0.15, 0.0, 0.18), radius=0.076, width=0.05, wheel_mass=1.5,
                      wheels={"front_left_wheel": (0.22, 0.28), "front_right_wheel": (0.22, -0.28),
                              "rear_left_wheel": (-0.22, 0.28), "rear_right_wheel": (-0.22, -0.28)},
                      caster=None),
}


def _f(*x: float) -> str:
    return " ".join(f"{v:.6g}" for v in x)


def _box_inertia(m: float, a: float, b: float, c: float) -> tuple[float, float, float]:
    return m * (b * b + c * c) / 12.0, m * (a * a + c * c) / 12.0, m * (a * a + b * b) / 12.0


def mobile_urdf(name: str, spec: dict) -> str:
    """arm7 (``model_to_urdf``, its root renamed ``arm_base_link``) on a box base with wheel
    joints (continuous, axis y, cylinder geometry giving radius and separation)."""
    arm = model_to_urdf(arm7().replace(base_link="arm_base_link"), frame0_name="frame0")
    body = arm.split("\n", 2)[2].rsplit("</robot>", 1)[0]  # drop <?xml>, <robot>, </robot>
    bx, by, bz = spec["box"]
    ixx, iyy, izz = _box_inertia(spec["mass"], bx, by, bz)
    r, w, mw = spec["radius"], spec["width"], spec["wheel_mass"]
    ia, it = mw * r * r / 2.0, mw * (3 * r * r + w * w) / 12.0
    L = ['<?xml version="1.0"?>', f'<robot name="{name}">',
         '  <link name="base_link">',
         f'    <inertial><origin xyz="{_f(*spec["box_at"])}" rpy="0 0 0"/><mass value="{spec["mass"]}"/>',
         f'      <inertia ixx="{ixx:.6g}" ixy="0" ixz="0" iyy="{iyy:.6g}" iyz="0" izz="{izz:.6g}"/></inertial>',
         f'    <visual><origin xyz="{_f(*spec["box_at"])}"/><geometry><box size="{_f(bx, by, bz)}"/></geometry></visual>',
         f'    <collision><origin xyz="{_f(*spec["box_at"])}"/><geometry><box size="{_f(bx, by, bz)}"/></geometry></collision>',
         '  </link>']
    for wheel, (x, y) in spec["wheels"].items():
        cyl = f'<origin rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="{r}" length="{w}"/></geometry>'
        L += [f'  <link name="{wheel}">',
              f'    <inertial><origin xyz="0 0 0"/><mass value="{mw}"/>',
              f'      <inertia ixx="{it:.6g}" ixy="0" ixz="0" iyy="{ia:.6g}" iyz="0" izz="{it:.6g}"/></inertial>',
              f'    <visual>{cyl}</visual>', f'    <collision>{cyl}</collision>', '  </link>',
              f'  <joint name="{wheel}_joint" type="continuous">',
              f'    <parent link="base_link"/><child link="{wheel}"/>',
              f'    <origin xyz="{_f(x, y, 0.0)}" rpy="0 0 0"/><axis xyz="0 1 0"/>',
              '    <limit effort="30" velocity="20"/>', '  </joint>']
    if spec["caster"] is not None:
        cr = r + spec["caster"][2]
        L += ['  <link name="caster">',
              '    <inertial><origin xyz="0 0 0"/><mass value="0.3"/>',
              '      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial>',
              f'    <collision><geometry><sphere radius="{cr:.6g}"/></geometry></collision>', '  </link>',
              '  <joint name="caster_joint" type="fixed">',
              f'    <parent link="base_link"/><child link="caster"/><origin xyz="{_f(*spec["caster"])}"/>',
              '  </joint>']
    L += ['  <joint name="arm_mount" type="fixed">',
          '    <parent link="base_link"/><child link="arm_base_link"/>',
          f'    <origin xyz="{_f(*spec["mount"])}" rpy="0 0 0"/>', '  </joint>']
    return "\n".join(L) + "\n" + body + "</robot>\n"


def main() -> None:
    import yaml

    for name, make in ROBOTS.items():
        model = make()
        for k, I in enumerate(model.inertia):
            ev = np.linalg.eigvalsh(I)
            if ev.min() < 0 or 2 * ev.max() > ev.sum() + 1e-12:
                raise SystemExit(f"{name}: inertia of link {k + 1} is not physical: {ev}")
        (ROOT / "urdf").mkdir(exist_ok=True)
        (ROOT / "config").mkdir(exist_ok=True)
        (ROOT / "urdf" / f"{name}.urdf").write_text(model_to_urdf(model, frame0_name="frame0"))
        text = yaml.safe_dump({"model": model.to_dict()}, sort_keys=False,
                              default_flow_style=None, width=100)
        (ROOT / "config" / f"{name}.yaml").write_text(HEADER.format(name=name) + text)
        print(f"wrote urdf/{name}.urdf and config/{name}.yaml ({model.dof} joints)")
    from rbd_ros.urdf import load_model

    arm = arm7()
    for name, spec in MOBILE.items():
        path = ROOT / "urdf" / f"{name}.urdf"
        path.write_text(mobile_urdf(name, spec))
        model = load_model(str(path), tip_link="tool0", base_type=MOBILE_BASE[name]).replace(
            gear_ratio=arm.gear_ratio, rotor_inertia=arm.rotor_inertia, viscous=arm.viscous, coulomb=arm.coulomb)
        text = yaml.safe_dump({"model": model.to_dict()}, sort_keys=False, default_flow_style=None, width=100)
        (ROOT / "config" / f"{name}.yaml").write_text(HEADER.format(name=name) + text)
        print(f"wrote urdf/{name}.urdf and config/{name}.yaml ({MOBILE_BASE[name]} base, {model.dof} joints)")


if __name__ == "__main__":
    main()
