"""An identified model written back into the user's URDF (issue 44): ``write_back(urdf, model)``.

The identified ``MdhModel`` has one body per joint ``i``: mass ``m_i``, centre of mass ``c_i``
and inertia ``I_i`` about it, in MDH frame ``i`` (``rbd_ros.model.mdh_model``).  The URDF has
links: every link that rides on frame ``i`` (``UrdfConversion.link_offsets``: link ->
``(i, T_iL)``, frame ``i`` -> link) was merged into body ``i`` by the converter
(``rbd_ros.urdf.inertia.merge``, the parallel-axis theorem).  Writing back undoes that merge
for one link per body, the joint's own child link ``L_i``, and keeps every other link's
``<inertial>`` as the URDF had it:

    body(L_i) = body_i - sum_{k on frame i, k != L_i} body_k        (about frame i's origin)

with the second moments about the origin ``J = I + m (|c|^2 E - c c^T)`` subtracted and the
result moved back to its own centre of mass.  When that difference is not a body (mass <= 0,
or its inertia fails the triangle inequality of its principal moments: the fixed links of the
URDF are heavier than what was identified), the whole body goes to ``L_i`` and the other
links on frame ``i`` are written massless, with a note.  ``L_i``'s ``<inertial>`` is then in
its own link frame: ``c_L = R^T (c_i - p)``, ``I_L = R^T I R`` for ``T_iL = [R p]``, its
``<origin rpy="0 0 0">``.  Joint ``i``'s ``<dynamics damping friction>`` are the model's
viscous and Coulomb friction.  The armature (``gear_ratio^2 rotor_inertia``) has no URDF home:
a note says so when it is not zero.

Everything else is left as it was, to the byte: the output is the (xacro-expanded) URDF text
with only those ``<inertial>`` and ``<dynamics>`` elements replaced or inserted.  Pinocchio's
inverse dynamics of the written URDF is the identified model's (test:
``test/identification/test_write_back.py``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.model.physical import physical_inertia
from rbd_ros.urdf.convert import load_conversion
from rbd_ros.urdf.inertia import Body, link_body, merge
from rbd_ros.urdf.parse import parse_urdf


@dataclass(frozen=True)
class WriteBack:
    """The written URDF ``text`` and what could not be written as the model has it (``notes``)."""

    text: str
    notes: tuple[str, ...]


def _second_moment(b: Body) -> np.ndarray:
    """J = I + m (|c|^2 E - c c^T): the inertia about the frame's origin."""
    return b.inertia + b.mass * ((b.com @ b.com) * np.eye(3) - np.outer(b.com, b.com))


def _subtract(total: Body, part: Body) -> Body | None:
    """The body that merged with ``part`` gives ``total``, or None if it is not a body."""
    mass = total.mass - part.mass
    if not mass > 1e-12 * max(total.mass, 1.0):
        return None
    com = (total.mass * total.com - part.mass * part.com) / mass
    J = _second_moment(total) - _second_moment(part)
    inertia = J - mass * ((com @ com) * np.eye(3) - np.outer(com, com))
    inertia = 0.5 * (inertia + inertia.T)
    if physical_inertia(inertia)[1] is not None:  # a negative moment, or I1 + I2 < I3
        return None
    return Body(float(mass), com, inertia)


def _in_link(b: Body, T_iL: np.ndarray) -> Body:
    """``b`` (frame i coordinates) in the coordinates of the link at ``T_iL`` in frame i."""
    R, p = T_iL[:3, :3], T_iL[:3, 3]
    return Body(b.mass, R.T @ (b.com - p), 0.5 * (R.T @ b.inertia @ R + (R.T @ b.inertia @ R).T))


def _num(x: float) -> str:
    return repr(float(x))


def _inertial_xml(b: Body) -> str:
    """An ``<inertial>`` element, its lines indented relative to its first."""
    c, I = b.com, b.inertia
    return (f"<inertial>\n  <origin xyz=\"{_num(c[0])} {_num(c[1])} {_num(c[2])}\" rpy=\"0 0 0\"/>\n"
            f"  <mass value=\"{_num(b.mass)}\"/>\n"
            f"  <inertia ixx=\"{_num(I[0, 0])}\" ixy=\"{_num(I[0, 1])}\" ixz=\"{_num(I[0, 2])}\" "
            f"iyy=\"{_num(I[1, 1])}\" iyz=\"{_num(I[1, 2])}\" izz=\"{_num(I[2, 2])}\"/>\n</inertial>")


def _element(text: str, tag: str, name: str) -> re.Match[str]:
    """The span of ``<tag name="name" ...>...</tag>`` (or self-closing) in ``text``."""
    pattern = re.compile(rf"<{tag}\b[^>]*?\bname\s*=\s*([\"']){re.escape(name)}\1[^>]*?(/>|>.*?</{tag}\s*>)",
                         re.S)
    found = pattern.search(_masked(text))
    if found is None:
        raise ValueError(f"write_back: no <{tag} name='{name}'> in the URDF text")
    return found


def _masked(text: str) -> str:
    """``text`` with every comment's characters replaced by spaces (same offsets): an element
    commented out is not found."""
    return re.sub(r"<!--.*?-->", lambda m: " " * len(m.group()), text, flags=re.S)


def _edit(text: str, tag: str, name: str, child: str, new: str) -> str:
    """``text`` with the ``<child>`` of ``<tag name="name">`` replaced by ``new`` (one element,
    its lines indented as the element's children), or ``new`` inserted before the element's
    end tag (a self-closing element is opened)."""
    span = _element(text, tag, name)
    line = text[text.rfind("\n", 0, span.start()) + 1:span.start()]
    indent = line if line.isspace() else ""
    new = new.replace("\n", "\n" + indent + "  ")
    element = text[span.start():span.end()]
    masked = _masked(element)
    found = re.search(rf"<{child}\b[^>]*?(/>|>.*?</{child}\s*>)", masked, re.S)
    if found:
        element = element[:found.start()] + new + element[found.end():]
    elif masked.endswith("/>"):
        element = f"{element[:-2].rstrip()}>\n{indent}  {new}\n{indent}</{tag}>"
    else:
        end = masked.rfind("</")
        element = element[:end] + "  " + new + "\n" + indent + element[end:]
    return text[:span.start()] + element + text[span.end():]


def write_back(source: str | os.PathLike, model: MdhModel, **conversion: object) -> WriteBack:
    """The URDF ``source`` (a file or text; xacro expanded) with ``model``'s inertials and joint
    friction written in (module docstring).  ``model`` must be a model of ``source``'s chain
    ``model.base_link`` -> ``model.tip_link`` (same joints, same kinematics); ``conversion``:
    the options it was converted with (``locked_joints``, ``xacro_args``)."""
    conv = load_conversion(source, model.base_link, model.tip_link, **conversion)  # type: ignore[arg-type]
    mine = conv.model
    if tuple(mine.joint_names) != tuple(model.joint_names):
        raise ValueError(f"write_back: the model's joints {list(model.joint_names)} are not the URDF "
                         f"chain's {list(mine.joint_names)}")
    key = mine.mdh_difference(model)
    if key is not None:
        raise ValueError(f"write_back: the model's MDH '{key}' is not the URDF's: another robot?")
    tree = parse_urdf(conv.urdf_xml)
    text, notes = conv.urdf_xml, []
    for i in range(model.dof):
        main = mine.link_names[i]
        riders = {link: off for link, (body, off) in conv.link_offsets.items() if body == i + 1}
        if main not in riders:
            raise ValueError(f"write_back: link '{main}' of joint '{model.joint_names[i]}' is not on "
                             f"its frame (converter link offsets)")
        identified = Body(float(model.mass[i]), np.asarray(model.com[i], float),
                          np.asarray(model.inertia[i], float))
        others = [link for link in riders if link != main]
        rest = merge(link_body(tree.links[link], riders[link]) for link in others)
        body = _subtract(identified, rest) if others else identified
        if body is None:
            body = identified
            notes.append(f"link '{main}': the identified body {model.joint_names[i]} is lighter than "
                         f"the links fixed to it ({', '.join(others)}, {rest.mass:.4g} kg): all of it "
                         f"written on '{main}', those links written massless")
            for link in others:
                text = _edit(text, "link", link, "inertial", _inertial_xml(Body(0.0)))
        text = _edit(text, "link", main, "inertial", _inertial_xml(_in_link(body, riders[main])))
        damping = 0.0 if model.viscous is None else float(model.viscous[i])
        friction = 0.0 if model.coulomb is None else float(model.coulomb[i])
        text = _edit(text, "joint", model.joint_names[i], "dynamics",
                     f"<dynamics damping=\"{_num(damping)}\" friction=\"{_num(friction)}\"/>")
    armature = np.asarray(model.armature, dtype=float)
    if np.any(armature != 0.0):
        notes.append("the armature (gear_ratio^2 rotor_inertia: "
                     f"{np.round(armature, 6).tolist()} kg m^2) has no URDF element: kept "
                     "in the model YAML only")
    return WriteBack(text, tuple(notes))
