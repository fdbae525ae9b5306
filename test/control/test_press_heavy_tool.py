"""Issue 41.3: a force law that takes the F/T wrench compensated with the identified payload
(``use_compensated_wrench``, ``/ft_sensor/wrench_compensated``) presses with the force it is
asked for under a heavy tool the model does not know; with the model's compensation alone
(``/ft_sensor/wrench``, the code before) the tool's weight biases the press by about its weight.

Oracle: MuJoCo's contact force on the probe (``run_press``'s ``f_n``).  The tool: 1 kg welded
at the sensor in the MuJoCo model only (``ft_tool``); the payload file is what hangs below the
sensor (the last body and the tool, combined by hand as ``test_payload_compensation`` does,
here exact: the identification itself is that test's).  The human model's right arm from its
clavicle, hybrid force/position, 10 N on the bundled table, a short slide."""
from __future__ import annotations

import numpy as np
import pytest
from payload_data import below_sensor

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow

TOOL_MASS = 1.0
SHORT = {"slide_time": 1.0, "length": 0.03, "retreat_time": 0.2}


def test_a_heavy_tool_biases_the_press_unless_the_identified_payload_compensates_it(tmp_path) -> None:
    from rbd_ros.identification.payload import Payload, save_payload
    from rbd_ros.sim.contact_task import run_press
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.sim.simulator import BridgeConfig, Simulator
    from rbd_ros.urdf import load_model

    arm = load_model(str(example_robot_urdf("human_description/robots/human.urdf")),
                     base_link="right_clavicle", tip_link="right_hand")
    tool = Payload(TOOL_MASS, np.array([0.0, 0.0, -0.02]), np.diag([1e-3, 1e-3, 5e-4]), np.zeros(6))
    save_payload(tool, str(tmp_path / "tool.yaml"))
    probe = Simulator(arm, BridgeConfig(mode="lockstep", command_timeout=0.0),
                      scene=load_scene("table")).model  # the sensor frame: the probe's tool frame
    m, c, inertia = below_sensor(probe, tool.mass, tool.com, tool.inertia)
    save_payload(Payload(m, c, inertia, np.zeros(6)), str(tmp_path / "payload.yaml"))
    bridge = {"ft_tool": str(tmp_path / "tool.yaml"), "ft_payload": str(tmp_path / "payload.yaml")}

    def mean_force(r):
        t, f = r.series["t"], r.series["f_n"]
        slide = (t >= r.phases["slide"] + 0.1) & (t < r.phases["retreat"] - 0.1)
        return float(f[slide].mean())

    compensated = run_press(arm, "hybrid_force_position", 10.0, bridge=bridge, use_compensated_wrench=True, **SHORT)
    plain = run_press(arm, "hybrid_force_position", 10.0, bridge=bridge, **SHORT)
    weight = TOOL_MASS * 9.81
    assert compensated.contact_lost == 0
    assert abs(mean_force(compensated) - 10.0) < 0.1 and compensated.force_rms < 0.3, \
        (mean_force(compensated), compensated.force_rms)
    assert abs(abs(mean_force(plain) - 10.0) - weight) < 0.1 * weight, mean_force(plain)
    with pytest.raises(ValueError, match="ft_payload"):
        run_press(arm, "hybrid_force_position", 10.0, bridge={"ft_tool": bridge["ft_tool"]},
                  use_compensated_wrench=True, **SHORT)
