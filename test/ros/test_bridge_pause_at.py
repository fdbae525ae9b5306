"""The bridge's ``pause_at`` parameter: set at runtime, the bridge pauses itself at that
simulated time, however late its client reads the clock (the bringup's tour and press phases
end with it; before, a composed run went on for seconds past each phase's end while the
bringup caught up, 43 000 states for a 6.6 s press).  Oracle: the stamps of the states it
published (the step grid), against the time asked for."""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from test_bridge_node import DT, Client, bridge_args, client, model_file  # noqa: F401 - client: the fixture

from rbd_ros.sim.examples import three_link


def set_pause_at(peer: Client, value: float):
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    req = SetParameters.Request(parameters=[Parameter("pause_at", value=value).to_parameter_msg()])
    return peer.call(SetParameters, "/mujoco_bridge/set_parameters", req).results[0]


def wait_paused_at(peer: Client, seen: int, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout  # load-proof: progress, not a rate
    while True:
        fresh = [d for d in peer.diagnostics[seen:] if d["paused"]]
        if fresh:
            return fresh[0]
        assert time.monotonic() < deadline, peer.diagnostics[seen:]
        time.sleep(0.02)


@pytest.mark.slow
def test_max_mode_pauses_itself_at_pause_at_and_refuses_the_past(tmp_path, node_process, client) -> None:  # noqa: F811
    from std_srvs.srv import SetBool

    proc = node_process(bridge_args(model_file(tmp_path, three_link()), mode="max", publish_every=10,
                                    command_timeout=0.0, diagnostics_period=0.0),
                        ready="mujoco_bridge: ready")
    client.wait_connected()
    assert client.call(SetBool, "/mujoco_bridge/pause", SetBool.Request(data=True)).success
    # the paused time: the latest state once no newer one comes (at max speed the states still in
    # flight under load were 0.9 simulated s behind the pause after 0.1 s: a suite run)
    t0, deadline = math.nan, time.monotonic() + 10
    while t0 != client.latest()[0]:
        assert time.monotonic() < deadline, "the states never settled after the pause"
        t0 = client.latest()[0]
        time.sleep(0.2)
    # refused: not after the current time, negative, not finite (the clock is untouched)
    for bad, words in ((t0, "is not after the simulated time"), (-1.0, "out of range"),
                       (math.nan, "pause_at")):
        res = set_pause_at(client, bad)
        assert not res.successful and words in res.reason, res.reason
    # 0.3037 s ahead: off the publish_every grid (10 steps), on the step grid
    target = round((t0 + 0.3037) / DT) * DT
    assert set_pause_at(client, target).successful
    seen = len(client.diagnostics)
    assert client.call(SetBool, "/mujoco_bridge/pause", SetBool.Request(data=False)).success
    diag = wait_paused_at(client, seen)
    assert abs(diag["sim_time"] - target) < 0.5 * DT, (diag["sim_time"], target)
    proc.wait_for("(pause_at)")
    deadline = time.monotonic() + 10  # the state of the pause step was published, then none
    while abs(client.latest()[0] - target) > 0.5 * DT:
        assert time.monotonic() < deadline, (client.latest()[0], target)
        time.sleep(0.02)
    time.sleep(0.3)
    assert abs(client.latest()[0] - target) < 0.5 * DT
    # disarmed once reached: a resume runs on past it
    assert client.call(SetBool, "/mujoco_bridge/pause", SetBool.Request(data=False)).success
    deadline = time.monotonic() + 30
    while client.latest()[0] < target + 0.1:
        assert time.monotonic() < deadline, client.latest()[0]
        time.sleep(0.02)
    assert proc.stop() == 0 and "Traceback" not in proc.output


@pytest.mark.slow
def test_lockstep_stops_stepping_at_pause_at_while_commands_keep_coming(tmp_path, node_process,
                                                                        client) -> None:  # noqa: F811
    proc = node_process(bridge_args(model_file(tmp_path, three_link()), mode="lockstep",
                                    diagnostics_period=0.0),
                        ready="mujoco_bridge: ready")
    client.wait_connected()
    t0 = client.latest()[0]
    target = t0 + 20 * DT
    assert set_pause_at(client, target).successful
    seen = len(client.diagnostics)
    for _ in range(20):
        client.step(np.zeros(3))
    diag = wait_paused_at(client, seen)
    assert abs(diag["sim_time"] - target) < 0.5 * DT
    n = len(client.states)
    for _ in range(5):  # commands while paused: taken, no step
        client.send(np.zeros(3))
    time.sleep(0.3)
    stamps = [s[0] for s in client.states[n:]]
    assert all(abs(t - target) < 0.5 * DT for t in stamps), stamps
    assert proc.stop() == 0 and "Traceback" not in proc.output
