"""The bridge's position and velocity command interfaces through their topics (issue 43.1):
``/position_controller/commands`` and ``/velocity_controller/commands`` as ros2_control's
forward command controllers publish them, from a plain rclpy publisher, against the same
``Simulator`` stepped in this process (the oracle of the plumbing: the same joints, the same
order, the same refusals)."""
from __future__ import annotations

import numpy as np
import pytest
from test_bridge_node import DT, Client, bridge_args, model_file

from rbd_ros.sim.examples import three_link
from rbd_ros.sim.simulator import BridgeConfig, Simulator

MIXED = ["position", "velocity", "position"]  # j1, j2, j3


class Commands(Client):
    """The test client, with a publisher on each interface's topic."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        from rbd_ros.ros.common import recordable_qos

        self.pubs = {i: self.node.create_publisher(self._msg, f"/{i}_controller/commands",
                                                   recordable_qos())
                     for i in ("position", "velocity", "effort")}

    def send_to(self, interface: str, values) -> None:
        self.pubs[interface].publish(self._msg(data=[float(v) for v in values]))

    def connected(self, timeout: float = 20.0) -> None:
        import time

        deadline = time.monotonic() + timeout
        while any(p.get_subscription_count() == 0 for p in self.pubs.values()) or not self.states:
            if time.monotonic() > deadline:
                raise TimeoutError("bridge not connected on every command topic")
            time.sleep(0.02)


@pytest.fixture
def commands():
    from ros_helpers import ros_context

    with ros_context() as ctx:
        c = Commands(ctx)
        yield c
        c.close()


@pytest.mark.slow
def test_lockstep_mixed_interfaces_step_on_each_pair_as_in_process(tmp_path, node_process,
                                                                   commands) -> None:
    model = three_link()
    q0 = [0.2, -0.5, 0.7]
    args = bridge_args(model_file(tmp_path, model), mode="lockstep", initial_positions=q0)
    args += ["-p", f"command_interface:=[{', '.join(MIXED)}]"]
    proc = node_process(args, ready="mujoco_bridge: ready")
    assert "command_interface=j1 position, j2 velocity, j3 position" in proc.output
    commands.connected()
    twin = Simulator(model, BridgeConfig(mode="lockstep", initial_positions=q0,
                                         command_interface=MIXED), log=lambda *_: None)
    position, velocity = np.array([0.5, 0.2]), np.array([0.8])
    for k in range(300):
        t = commands.latest()[0]
        commands.send_to("position", position)  # j1, j3
        if k == 10:  # refused, not applied, no step: no joint is in effort mode
            commands.send_to("effort", [1.0, 2.0, 3.0])
            commands.send_to("position", [1.0, 2.0, 3.0])  # 3 values for 2 joints: refused
        commands.send_to("velocity", velocity)  # j2: the pair is complete, one step
        stamp, q, qd, effort = commands.wait_state(after=t)
        twin.command(position, None, "position")
        twin.command(velocity, None, "velocity")
        twin.step()
        assert stamp == pytest.approx((k + 1) * DT, abs=1e-9)
    tq, tqd, teffort = twin.measure()
    np.testing.assert_allclose(q, tq, rtol=0, atol=1e-12)
    np.testing.assert_allclose(qd, tqd, rtol=0, atol=1e-12)
    np.testing.assert_allclose(effort, teffort, rtol=0, atol=1e-9)
    start = np.abs(np.array(q0)[[0, 2]] - position)
    assert (np.abs(q[[0, 2]] - position) < 0.3 * start).all()  # the position drives went there
    assert qd[1] == pytest.approx(0.8, abs=0.05)  # the velocity drive follows its command
    assert (np.abs(effort) <= model.effort_limit).all()
    proc.wait_for("effort command, but no joint uses the effort interface")
    assert proc.alive() and "Traceback" not in proc.output
    assert proc.stop() == 0


@pytest.mark.slow
def test_realtime_position_arm_holds_its_target_and_refuses_effort(tmp_path, node_process,
                                                                  commands) -> None:
    import time

    model = three_link()
    target = np.array([0.4, -0.3, 0.5])
    args = bridge_args(model_file(tmp_path, model), mode="realtime", command_timeout=0.5,
                       publish_every=10)
    args += ["-p", "command_interface:=[position]"]
    proc = node_process(args, ready="mujoco_bridge: ready")
    assert "command_interface=position for every joint" in proc.output
    commands.connected()
    t0 = commands.latest()[0]
    deadline = time.monotonic() + 60
    sent_effort = False
    # simulated seconds, however loaded the machine: 3 s (likely cause, not proven: the first commands lost until
    # the bridge's subscription matches (the arm then falls, drive off, and has to come back:
    # 1.5 s was short in 2 of ~10 runs, joint 2 still at 2.4 rad/s)
    while commands.latest()[0] < t0 + 3.0:
        assert time.monotonic() < deadline, commands.latest()[0]
        commands.send_to("position", target)
        if not sent_effort:  # an unused interface's topic: read rarely, refused
            commands.send_to("effort", [1.0, 1.0, 1.0])
            sent_effort = True
        time.sleep(0.005)
    _, q, qd, effort = commands.latest()
    assert np.abs(q - target).max() < 0.05 and np.abs(qd).max() < 0.05, (q, qd)
    assert (np.abs(effort) <= model.effort_limit).all() and np.abs(effort).max() > 0.1
    proc.wait_for("effort command, but no joint uses the effort interface")
    assert proc.stop() == 0 and "Traceback" not in proc.output
