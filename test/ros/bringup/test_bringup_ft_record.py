"""``rbd-ros bringup --record`` records the bridge's F/T topics in any task (issue 41): a tour
of the Puma 560 with a 0.5 kg tool welded at its F/T sensor (``ft_tool``) and the payload
below the sensor given (``ft_payload``) has ``/ft_sensor/wrench_raw``, ``/ft_sensor/wrench``
and ``/ft_sensor/wrench_compensated`` in its bag, one reading per state, none lost, and
``rbd-ros identify --payload`` reads the run's directory directly.

Oracles: the bag's ``/joint_states`` (the bridge publishes a reading with every state, at the
state's rate); the payload below the sensor combined by hand (``payload_data.below_sensor``)."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from payload_data import below_sensor

from ros_helpers import REPO

pytestmark = pytest.mark.slow  # end to end: ROS processes and a 1.2 s closed loop (~25 s)

FT = ("/ft_sensor/wrench_raw", "/ft_sensor/wrench", "/ft_sensor/wrench_compensated")
TOOL = (0.5, np.array([0.0, 0.0, 0.05]), np.diag([1e-3, 1e-3, 5e-4]))


def test_a_tour_records_the_ft_topics_and_identify_reads_them(tmp_path) -> None:
    from rbd_ros.identification.cli import main as identify
    from rbd_ros.identification.payload import Payload, load_payload, save_payload
    from rbd_ros.model import MdhModel
    from rbd_ros.ros.bringup.recorder import read_bag
    from rbd_ros.util.resources import config_file

    model = MdhModel.from_yaml(str(config_file("puma560")))
    m, c, inertia = below_sensor(model, *TOOL)
    save_payload(Payload(*TOOL, np.zeros(6)), str(tmp_path / "tool.yaml"))
    save_payload(Payload(m, c, inertia, np.zeros(6)), str(tmp_path / "below.yaml"))
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", "--robot", "puma560", "--controller",
         "computed_torque", "--mode", "lockstep", "--duration", "1.2", "--segment-time", "1.0",
         "--record", str(out), "--no-video", "-p", "mujoco_bridge:ft_sensor:=true",
         "-p", f"mujoco_bridge:ft_tool:={tmp_path / 'tool.yaml'}",
         "-p", f"mujoco_bridge:ft_payload:={tmp_path / 'below.yaml'}"],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    bag = read_bag(out / "bag")
    states = np.array([s for s, _ in bag["/joint_states"]])
    assert len(states) >= 1150
    rec = json.loads((out / "report.json").read_text())["recording"]
    for topic in FT:
        stamps = np.array([s for s, _ in bag[topic]])
        assert len(np.unique(stamps)) == len(stamps), topic  # a paused bridge's repeats written once
        assert np.all(np.diff(stamps) == 1_000_000), topic  # the sensor's rate: 1 kHz, no gap
        # a reading per state (stamped with the state it was read at): every state's but the
        # last one's, whose reading goes out with the next state, after the recording's end;
        # and the one that went out with the first (the paused) state, a step before it
        # (written at the recording's start with the paused state: Inbox.start_recording)
        assert set(states[:-1]) <= set(stamps) <= set(states) | {states[0] - 1_000_000}, topic
        assert rec[topic]["lost"] == 0 and rec[topic]["received"] == len(stamps), (topic, rec[topic])
        assert all(msg.header.frame_id == "ft_sensor" for _, msg in bag[topic][:3])
    assert f"{FT[2]} ({len(bag[FT[2]])})" in proc.stdout  # the report's recording line names it
    # the compensated stream is the raw one less the payload's wrench: ~0 in free motion, and
    # the raw one carries the tool's weight
    raw = np.array([[w.wrench.force.x, w.wrench.force.y, w.wrench.force.z] for _, w in bag[FT[0]]])
    comp = np.array([[w.wrench.force.x, w.wrench.force.y, w.wrench.force.z, w.wrench.torque.x,
                      w.wrench.torque.y, w.wrench.torque.z] for _, w in bag[FT[2]]])
    assert np.linalg.norm(raw, axis=1).min() > 0.9 * m * 9.81
    assert np.abs(comp[:, :3]).max() < 0.1 and np.abs(comp[:, 3:]).max() < 0.01
    # identify --payload reads the run's directory as it is
    assert identify([str(out), "--payload", "--robot", "puma560", "-o", str(tmp_path / "p.yaml")]) == 0
    p = load_payload(str(tmp_path / "p.yaml"))
    assert p.mass == pytest.approx(m, rel=0.02) and np.linalg.norm(p.com - c) < 2e-3, (p.mass, p.com)
