"""Contact in a payload recording (issue 41): ``rbd-ros identify --payload`` names the stretch
the payload cannot explain and leaves it out (``identification.payload_contact``).

Oracle: MuJoCo.  The UR3 with a 0.6 kg tool welded at its F/T sensor (``ft_tool``) runs a
1.5 s excitation under computed torque; from 0.6 s to 0.9 s the tool is pressed with 10 N
(the simulator's push on the last body, below the sensor: what a contact does to the sensor).
The truth: the press's own times, and the tool and last body combined by hand
(``payload_data.below_sensor``)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from payload_data import below_sensor, write_bag

from robots_data import example_robot_urdf

UR3 = "ur_description/urdf/ur3_robot.urdf"
TOOL_MASS, TOOL_COM = 0.6, np.array([0.012, -0.008, 0.06])
TOOL_INERTIA = np.array([[2.0e-3, 1.0e-4, -2.0e-4], [1.0e-4, 1.6e-3, 5.0e-5], [-2.0e-4, 5.0e-5, 9.0e-4]])
PRESS = (0.6, 0.9)  # s


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The excitation with the press: ``(model, robot, t, q, qd, raw wrench, dir)``."""
    from rbd_ros import Robot
    from rbd_ros.control.tour import plan_tour
    from rbd_ros.identification.excitation import plan_excitation
    from rbd_ros.identification.payload import Payload, save_payload
    from rbd_ros.sim.simulator import BridgeConfig, Simulator
    from rbd_ros.urdf import load_model

    d = tmp_path_factory.mktemp("payload_contact")
    save_payload(Payload(TOOL_MASS, TOOL_COM, TOOL_INERTIA, np.zeros(6)), str(d / "tool.yaml"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = load_model(str(example_robot_urdf(UR3)))
        exc = plan_excitation(model, plan_tour(model, floor=None).start, floor=None, evaluations=10,
                              period=1.5, periods=1)
    robot = Robot(model)
    sim = Simulator(model, BridgeConfig(timestep=1e-3, mode="lockstep", command_timeout=0.0, ft_sensor=True,
                                        initial_positions=tuple(exc.sample([0.0])[0][0]),
                                        ft_tool=str(d / "tool.yaml")))
    n = int(round(exc.duration / 1e-3))
    t, q, qd, w = np.zeros(n), np.zeros((n, model.dof)), np.zeros((n, model.dof)), np.zeros((n, 6))
    for k in range(n):
        x, v, _ = (np.array(s, dtype=float) for s in sim.measure())
        if k == round(PRESS[0] / 1e-3):
            sim.push("", [0.0, 0.0, -10.0, 0.0, 0.0, 0.0], PRESS[1] - PRESS[0])
        qr, qdr, qddr = (s[0] for s in exc.sample([sim.time]))
        t[k], q[k], qd[k] = sim.time, x, v
        sim.command(robot.inverse_dynamics(x, v, qddr + 400 * (qr - x) + 40 * (qdr - v), include_actuators=True))
        sim.step()  # the sensor reads at the state the step started from
        w[k] = sim.ft.raw
    return model, robot, t, q, qd, w, d


def test_a_press_during_the_excitation_is_named_and_left_out(run, capsys) -> None:
    from rbd_ros.identification.cli import main
    from rbd_ros.identification.payload import identify_payload, load_payload, payload_from_states, sensor_motion

    model, robot, t, q, qd, w, d = run
    m, c, _ = below_sensor(model, TOOL_MASS, TOOL_COM, TOOL_INERTIA)
    # fitted through the press, the payload is wrong (what the warning is for)
    qdd = np.gradient(qd, t, axis=0)
    naive = identify_payload(w[1:-1], *sensor_motion(robot, q[1:-1], qd[1:-1], qdd[1:-1]))
    assert abs(naive.mass - m) > 0.05 * m, naive.mass
    p = payload_from_states(robot, t, q, qd, w)
    assert len(p.left_out) == 1, p.left_out
    span = p.left_out[0]
    # the press's stretch (its start and end within 50 ms: the arm rings a little after the push)
    assert PRESS[0] - 0.05 < span.t0 <= PRESS[0] + 0.01 and PRESS[1] - 0.01 <= span.t1 < PRESS[1] + 0.05, span
    assert span.force == pytest.approx(10.0, rel=0.05)
    assert p.mass == pytest.approx(m, rel=0.01) and np.linalg.norm(p.com - c) < 1e-3
    # free motion alone: nothing left out, the same payload
    free = t < PRESS[0] - 0.05
    alone = payload_from_states(robot, t[free], q[free], qd[free], w[free])
    assert alone.left_out == () and alone.mass == pytest.approx(m, rel=0.01)
    # through the command line: the warning names the stretch; the file records it
    write_bag(d / "bag", model.joint_names, t, q, qd, w)
    assert main([str(d / "bag"), "--payload", "--urdf", str(example_robot_urdf(UR3)), "-o", str(d / "p.yaml")]) == 0
    err = capsys.readouterr().err
    assert f"warning: the F/T readings at t = {span.t0:.3f}-{span.t1:.3f} s" in err and "contact?" in err, err
    assert load_payload(str(d / "p.yaml")).mass == pytest.approx(p.mass, rel=1e-9)
    assert "left_out_s:" in (d / "p.yaml").read_text()


def test_a_recording_that_never_turns_the_sensor_is_refused(run) -> None:
    """A press holds the tool's orientation: its steady force and the tool's weight are the same
    constant wrench in the sensor's axes (the offset), so no payload can be told from it."""
    from rbd_ros.identification.payload import payload_from_states

    model, robot, t, q, qd, w, _ = run
    held = np.repeat(q[:1], len(t), axis=0)  # the arm held at the start, the press on
    still = np.zeros_like(qd)
    press = (t >= PRESS[0]) & (t < PRESS[1])
    reading = np.repeat(w[:1], len(t), axis=0) + np.outer(press, [0.0, 0.0, 10.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"turned only 0\.0 degrees against gravity"):
        payload_from_states(robot, t, held, still, reading)
