"""The checker's view of BridgeConfig (sim.bridge_fields) names the schema's keys, in order."""
from rbd_ros.sim.bridge_fields import FIELDS
from rbd_ros.sim.simulator import BridgeConfig


def test_declared_fields_are_the_schema_keys():
    assert FIELDS == tuple(BridgeConfig.keys())
