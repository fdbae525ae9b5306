"""``model_to_urdf``: an URDF equivalent to an ``MdhModel``.

Gives Pinocchio and MuJoCo an oracle of any MDH model that is independent of our kernels
(``pin.buildModelFromXML(model_to_urdf(m))``), and generates the bundled robots.

Layout: ``base_link`` (the world) -[fixed: ``base``]-> ``<prefix>frame0`` -[joint 1]->
link 1 -> ... -> link n -[fixed: ``tool``]-> ``tip_link``.  Joint i's origin is the MDH
transform ``mdh_transform(a, alpha, d, theta)`` at q = 0 (003 §1.6,
constant theta/d offsets included), its axis z.  Inertials: origin ``xyz`` = centre of mass,
``rpy`` = 0 (the inertia tensor is in link-frame axes), the full tensor.  Limits: URDF has
no infinity, so infinite limits are written as +-``BIG`` (1e6).  ``<dynamics damping=
viscous friction=coulomb>``.  Gear ratios and rotor inertias have no URDF home (see the
``config/<robot>.yaml`` files).  When ``base`` is the identity the first joint hangs
directly from ``base_link``.  When ``tip_link`` is the last joint's own link (a URDF converted
up to that link), link n is named ``<tip>_mdh`` and ``tip_link`` hangs from it by ``tool``.
"""
from __future__ import annotations

from xml.sax.saxutils import quoteattr

import numpy as np

from rbd_ros.algorithm.mdh import mdh_transform
from rbd_ros.lie.so3 import to_rpy
from rbd_ros.model.mdh_model import PRISMATIC, MdhModel

BIG = 1e6


def _f(x: float) -> str:
    return repr(float(x))


def _origin(T: np.ndarray) -> str:
    r, p, y = to_rpy(T[:3, :3])
    x = T[:3, 3]
    return f'<origin xyz="{_f(x[0])} {_f(x[1])} {_f(x[2])}" rpy="{_f(r)} {_f(p)} {_f(y)}"/>'


def _lim(x: float) -> float:
    return max(-BIG, min(BIG, float(x)))


def _unique(name: str, taken: set[str]) -> str:
    out, k = name, 1
    while out in taken:
        k += 1
        out = f"{name}{k}"
    return out


def model_to_urdf(model: MdhModel, frame0_name: str | None = None) -> str:
    """URDF text equivalent to ``model`` (see the module docstring)."""
    n = model.dof
    base, tip = model.base_link, model.tip_link
    frame0 = frame0_name or f"{model.name}_frame0"
    lines = ['<?xml version="1.0"?>', f"<robot name={quoteattr(model.name)}>",
             f"  <link name={quoteattr(base)}/>"]
    parent = base
    if not np.allclose(model.base, np.eye(4), atol=0.0, rtol=0.0):
        lines += [f"  <link name={quoteattr(frame0)}/>",
                  f"  <joint name={quoteattr(frame0 + '_fixed')} type=\"fixed\">",
                  f"    <parent link={quoteattr(base)}/><child link={quoteattr(frame0)}/>",
                  f"    {_origin(model.base)}", "  </joint>"]
        parent = frame0
    names = list(model.link_names)
    if names and names[-1] == tip:
        # the tip is the last joint's own link (a URDF converted with tip_link = that link): its
        # MDH frame gets a name of its own, the tip keeps the URDF's name (and its frame: tool)
        names[-1] = _unique(f"{tip}_mdh", set(names) | {base, frame0})
    for i in range(n):
        link = names[i]
        m = float(model.mass[i])
        lines.append(f"  <link name={quoteattr(link)}>")
        if m > 0.0 or np.any(model.inertia[i]):
            c, I = model.com[i], model.inertia[i]
            lines += ["    <inertial>",
                      f'      <origin xyz="{_f(c[0])} {_f(c[1])} {_f(c[2])}" rpy="0 0 0"/>',
                      f'      <mass value="{_f(m)}"/>',
                      f'      <inertia ixx="{_f(I[0, 0])}" ixy="{_f(I[0, 1])}" ixz="{_f(I[0, 2])}" '
                      f'iyy="{_f(I[1, 1])}" iyz="{_f(I[1, 2])}" izz="{_f(I[2, 2])}"/>',
                      "    </inertial>"]
        lines.append("  </link>")
        T = mdh_transform(float(model.a[i]), float(model.alpha[i]), float(model.d[i]),
                          float(model.theta[i]))
        jtype = "prismatic" if model.joint_type[i] == PRISMATIC else "revolute"
        lines += [f"  <joint name={quoteattr(model.joint_names[i])} type=\"{jtype}\">",
                  f"    <parent link={quoteattr(parent)}/><child link={quoteattr(link)}/>",
                  f"    {_origin(T)}",
                  '    <axis xyz="0 0 1"/>',
                  f'    <limit lower="{_f(_lim(model.lower[i]))}" upper="{_f(_lim(model.upper[i]))}" '
                  f'effort="{_f(_lim(model.effort_limit[i]))}" '
                  f'velocity="{_f(_lim(model.velocity_limit[i]))}"/>',
                  f'    <dynamics damping="{_f(model.viscous[i])}" friction="{_f(model.coulomb[i])}"/>',
                  "  </joint>"]
        parent = link
    lines += [f"  <link name={quoteattr(tip)}/>",
              f"  <joint name={quoteattr(tip + '_fixed')} type=\"fixed\">",
              f"    <parent link={quoteattr(parent)}/><child link={quoteattr(tip)}/>",
              f"    {_origin(model.tool)}", "  </joint>", "</robot>", ""]
    return "\n".join(lines)
