"""The bridge publishes no F/T reading before its sensor has made one (``BridgeContact.publish``,
``FTSensor.has_reading``): a lockstep bridge publishes its state before the first command, and
a zero wrench published with it claimed a reading no sensor made -- the tool's weight missing
(a bringup's bag once began ``/ft_sensor/wrench_raw`` with it: |f| = 0 against the 0.59 kg
tool's 5.8 N).  The oracle: MuJoCo's own force sensor after the first step (the tool's weight)."""
from __future__ import annotations

import threading

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.ros.contact_topics import FT_RAW, BridgeContact
from rbd_ros.sim.simulator import BridgeConfig, Simulator
from rbd_ros.util.resources import config_file


class _Pub:
    def __init__(self, topic: str, sent: list) -> None:
        self.topic, self.sent = topic, sent

    def publish(self, msg) -> None:
        f = msg.wrench.force
        self.sent.append((self.topic, np.array([f.x, f.y, f.z])))


class _Node:
    def __init__(self) -> None:
        self.sent: list = []

    def create_publisher(self, kind, topic, qos):
        return _Pub(topic, self.sent)

    def create_subscription(self, *a, **k):
        return None


def test_no_reading_before_the_first_step_then_the_sensors() -> None:
    model = MdhModel.from_yaml(str(config_file("puma560")))
    sim = Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0, ft_sensor=True),
                    log=lambda level, msg: None)
    node = _Node()
    contact = BridgeContact(node, sim, threading.Lock(), 0.1, None)
    contact.publish()  # the idle state before the first command
    assert node.sent == [] and not sim.ft.has_reading
    sim.command(np.zeros(model.dof))
    sim.step()
    contact.publish()
    raw = [f for topic, f in node.sent if topic == FT_RAW]
    assert len(raw) == 1 and sim.ft.has_reading
    d = sim.mj_data
    measured = d.sensordata[sim.ft._adr:sim.ft._adr + 3]  # MuJoCo's force sensor, this step
    assert np.linalg.norm(raw[0]) > 0 and np.allclose(raw[0], measured), (raw[0], measured)
    sim.reset()
    assert not sim.ft.has_reading  # a reset starts again without a reading
