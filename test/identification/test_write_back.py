"""The identified model written back into the user's URDF (issue 44, ``identification.write_back``).

Oracle: Pinocchio reads the written URDF by itself; its inverse dynamics must be the model's
(rigid body: ``Robot.inverse_dynamics``) to 1e-9, its joint damping and friction the model's
viscous and Coulomb friction, and every byte of the URDF outside the rewritten ``<inertial>``
and ``<dynamics>`` elements unchanged.  The "identified" models are the URDF's own perturbed by
30 % (``identification.perturb``: physically consistent), on the SO-100 arm, the UR3 (whose
URDF declares xacro: written over its expansion) and the Z1, whose gripper stator is fixed to
link 6 and heavier than the perturbed link 6 (the whole body then goes to link 6)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from rbd_ros import Robot
from rbd_ros.identification.perturb import perturb
from rbd_ros.identification.write_back import write_back
from rbd_ros.urdf import load_model
from rbd_ros.urdf.parse import read_description
from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")

ARMS = {"so100": ("so_arm_description/urdf/so100.urdf", None),
        "z1": ("z1_description/urdf/z1.urdf", None),
        "ur3": ("ur_description/urdf/ur3_robot.urdf", "tool0")}


def _pinocchio_tau(text: str, model, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray):
    """Pinocchio's RNEA of the URDF ``text`` (joints off the model's chain locked at 0) at the
    model's joints, and the reduced model (for its damping and friction)."""
    full = pin.buildModelFromXML(text)
    lock = [full.getJointId(n) for n in full.names[1:] if n not in model.joint_names]
    red = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    idx = [red.joints[red.getJointId(n)].idx_q for n in model.joint_names]
    data = red.createData()
    out = []
    for a, b, c in zip(q, qd, qdd, strict=True):
        Q, V, A = (np.zeros(red.nq), np.zeros(red.nv), np.zeros(red.nv))
        Q[idx], V[idx], A[idx] = a, b, c
        out.append(pin.rnea(red, data, Q, V, A)[idx])
    return np.array(out), red, idx


def _strip(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<inertial>.*?</inertial>|<dynamics[^>]*/>", "", text, flags=re.S))


@pytest.mark.parametrize("arm", list(ARMS))
def test_pinocchio_on_the_written_urdf_is_the_identified_model(arm: str) -> None:
    rel, tip = ARMS[arm]
    urdf = str(example_robot_urdf(rel))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prior = load_model(urdf, tip_link=tip)
        identified = perturb(prior, 30.0, seed=3).replace(gear_ratio=np.ones(prior.dof),
                                                         rotor_inertia=np.zeros(prior.dof))
        written = write_back(urdf, identified)
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-1.5, 1.5, (6, prior.dof)) for _ in range(3))
    theirs, red, idx = _pinocchio_tau(written.text, identified, q, qd, qdd)
    ours = Robot(identified).inverse_dynamics(q, qd, qdd)
    assert np.abs(theirs - ours).max() < 1e-9 * max(1.0, np.abs(ours).max())
    before, _, _ = _pinocchio_tau(open(urdf).read(), identified, q, qd, qdd)
    assert np.abs(before - ours).max() > 1e-3  # the URDF's own inertials are not the identified ones
    np.testing.assert_allclose(red.damping[idx], identified.viscous, rtol=0, atol=1e-15)
    np.testing.assert_allclose(red.friction[idx], identified.coulomb, rtol=0, atol=1e-15)
    # the rest unchanged: the file's text (the UR3's declares xacro: as xacro expands it)
    assert _strip(written.text) == _strip(read_description(urdf)[0])
    if arm == "z1":
        assert any("gripperStator" in n and "massless" in n for n in written.notes), written.notes
    else:
        assert written.notes == ()


def test_the_armature_is_named_as_not_written_and_a_wrong_model_is_refused() -> None:
    so100, z1 = (str(example_robot_urdf(ARMS[a][0])) for a in ("so100", "z1"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prior = load_model(so100)
        other = load_model(z1)
    notes = write_back(so100, perturb(prior, 30.0, seed=3)).notes
    assert len(notes) == 1 and "armature" in notes[0] and "no URDF element" in notes[0]
    with pytest.raises(ValueError, match="unknown base_link 'world'"):
        write_back(so100, other)  # the Z1's model over the SO-100's URDF
    renamed = prior.replace(joint_names=("a",) + tuple(prior.joint_names[1:]))
    with pytest.raises(ValueError, match=r"the model's joints \['a', "):
        write_back(so100, renamed)
