"""Where an admittance's offset goes when the press ends (issue 30): along an axis with no
spring and no target force the offset stays where the last wrench left it, so a new target
pose starts from the compliant reference (``Admittance.fold_offset``: folded into the move's
start, the offset restarts at 0) and the tool goes to the pose sent.  The rule's one home is
the law; the control loop (the controller node, composed mode) applies it as it adopts a
Cartesian move, ``run_press`` at its retreat.  Oracles: the hand-composed pose (reference
plus offset), the continuity of the compliant reference, and, in the MuJoCo press on the
joint-limited UR5, the scene geometry (the probe ends ``approach`` above the slide's end)."""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

from robots_data import example_robot_urdf

KINOVA = "kinova_description/robots/kinova.urdf"


@pytest.fixture(scope="module")
def kinova():
    from rbd_ros.urdf import load_model

    return load_model(str(example_robot_urdf(KINOVA)))


def _pose_msg(T: np.ndarray) -> NS:
    from rbd_ros.lie.so3 import rotation_to_quaternion

    p, o = T[:3, 3], rotation_to_quaternion(T[:3, :3])
    return NS(header=NS(frame_id="", stamp=NS(sec=0, nanosec=0)),
              pose=NS(position=NS(x=p[0], y=p[1], z=p[2]), orientation=NS(x=o[0], y=o[1], z=o[2], w=o[3])))


def _compliant(loop) -> np.ndarray:
    """The compliant reference's position and rotation (``x_c = x_d + x``)."""
    from rbd_ros.lie.so3 import exp

    law = loop.law
    return np.concatenate([law.ref_T[:3, 3] + law.offset[:3],
                           (exp(law.offset[3:]) @ law.ref_T[:3, :3]).ravel()])


def test_a_new_pose_starts_from_the_compliant_reference(kinova) -> None:
    from rbd_ros.control.laws import make_law
    from rbd_ros.control.loop import ControlLoop
    from rbd_ros.lie.so3 import exp
    from rbd_ros.robot import Robot

    q0 = np.array([0.2, 3.6, 1.5, 4.2, 1.4, 0.3])[: kinova.dof]
    law = make_law("admittance", kinova, None, q0=q0, rate=1000.0)
    K = law.gains["stiffness"].copy()
    K[2] = K[5] = 0.0  # force along z, free about z; x, y and the tilts keep their springs
    law.set_gains(stiffness=K)
    loop = ControlLoop(kinova, law, log=lambda *_: None, pose_duration=1.0)
    names, t, dt = list(kinova.joint_names), 0.0, 1e-3
    loop.joint_state(names, q0, np.zeros(kinova.dof), t)
    loop.cycle(t)
    T_here = Robot(kinova).fk(q0)
    loop.target_pose(_pose_msg(T_here))
    for _ in range(3):
        t += dt
        loop.joint_state(names, q0, np.zeros(kinova.dof), t)
        loop.cycle(t)
    press = np.array([0.004, 0.0, -0.08, 0.0, 0.0, 0.1])  # what a press and a twist left
    law.offset[:] = press
    # the slide: a new pose while pressing (target force along z): the offset is the press
    law.set_target_wrench([0, 0, -10.0, 0, 0, 0], q0)
    T_slide = T_here.copy()
    T_slide[0, 3] += 0.1
    loop.target_pose(_pose_msg(T_slide))
    t += dt
    loop.cycle(t)
    assert np.allclose(law.offset[[0, 2]], press[[0, 2]], atol=1e-4)  # kept (x's spring: 1 cycle)
    assert law.offset[5] == 0.0 and np.allclose(loop.cartesian.T0[:3, :3],
                                                 exp([0, 0, 0.1]) @ T_here[:3, :3], atol=1e-12)
    law.offset[5] = press[5]  # (about z: no spring, no target torque: folded at once)
    # the retreat: the target wrench cleared, then a new pose
    law.set_target_wrench(np.zeros(6), q0)
    before, x = _compliant(loop), law.offset.copy()
    T_ref = loop.cartesian.pose_at(t)
    T_up = T_slide.copy()
    T_up[2, 3] += 0.08
    loop.target_pose(_pose_msg(T_up))
    t += dt
    loop.cycle(t)
    move = loop.cartesian
    assert np.allclose(move.T0[:3, 3], T_ref[:3, 3] + [0.0, 0.0, x[2]], atol=1e-12)
    assert np.allclose(move.T0[:3, :3], exp([0, 0, x[5]]) @ T_ref[:3, :3], atol=1e-12)
    assert law.offset[2] == law.offset[5] == law.offset_v[2] == 0.0
    assert law.offset[0] == pytest.approx(press[0], abs=1e-4)  # along a spring: not folded
    assert np.allclose(_compliant(loop), before, atol=1e-4)  # no jump (0.08 m without the fold)
    for _ in range(1100):  # the move's end: the tool is sent to the pose sent
        t += dt
        loop.cycle(t)
    assert np.allclose(law.ref_T, T_up, atol=1e-12) and law.offset[2] == 0.0


@pytest.mark.slow
def test_the_press_retreats_to_where_it_was_sent(monkeypatch) -> None:
    """``run_press`` with admittance on the joint-limited UR5: after the retreat the law's
    offset is what the last of the contact force pushed after the fold (under the pad's 1 mm
    at 10 N) and the probe rests ``approach`` above the slide's end (the site's geometry)
    within that."""
    import rbd_ros.control.laws as laws
    import rbd_ros.sim.simulator as simulator
    from rbd_ros.robot import Robot
    from rbd_ros.sim.contact_task import run_press
    from rbd_ros.urdf import load_model

    seen: dict = {}
    make_law, Simulator = laws.make_law, simulator.Simulator

    class Spy(Simulator):
        def __init__(self, *a, **k) -> None:
            super().__init__(*a, **k)
            seen["sim"] = self

    def spy_law(*a, **k):
        seen["law"] = make_law(*a, **k)
        return seen["law"]

    monkeypatch.setattr(simulator, "Simulator", Spy)
    monkeypatch.setattr(laws, "make_law", spy_law)
    path = str(example_robot_urdf("ur_description/urdf/ur5_joint_limited_robot.urdf"))
    r = run_press(load_model(path), "admittance", force=10.0, retreat_time=0.8, urdf=path)
    assert r.contact_lost == 0 and r.force_rms < 0.5
    sim, law = seen["sim"], seen["law"]
    site = sim.site
    probe = Robot(sim.model).fk(sim.q)[:3, 3]
    goal = site.tool_pose(site.length, site.approach)[:3, 3]
    assert np.abs(law.offset).max() < 1e-3, law.offset
    assert np.linalg.norm(probe - goal) < 1e-3, probe - goal
