"""The controller's parameters as a running node sees them (issue 28): declared from
``config/schema/controller.yaml`` (``ros2 param describe`` shows its description, range and
read-only flag), an integer given for a double parameter read as that number, and a runtime
change refused by the schema's rule with its one-line reason while a valid one applies."""
from __future__ import annotations

import time

import pytest
import yaml
from test_control_node import Peer

from ros_helpers import REPO, ros_context

PLANAR2_URDF = str(REPO / "urdf" / "planar2.urdf")


def _describe(peer: Peer, names: list[str]):
    from rcl_interfaces.srv import DescribeParameters

    client = peer.node.create_client(DescribeParameters, "/controller/describe_parameters")
    assert client.wait_for_service(timeout_sec=20)
    req = DescribeParameters.Request()
    req.names = names
    future = client.call_async(req)
    deadline = time.monotonic() + 20
    while not future.done():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return {d.name: d for d in future.result().descriptors}


@pytest.mark.slow
def test_declared_from_the_schema_and_checked_at_runtime(node_process) -> None:
    raw = yaml.safe_load((REPO / "config" / "schema" / "controller.yaml").read_text())["parameters"]
    with ros_context() as ctx:
        peer = Peer(ctx)
        try:
            node_process(["controller", "--ros-args", "-p", f"urdf_path:={PLANAR2_URDF}", "-p", "type:=pd_gravity",
                          "-p", "rate:=500"], ready="controller: ready")
            got = _describe(peer, ["rate", "state_timeout", "interpolation", "rt_priority"])
            for name in got:
                assert got[name].description == " ".join(raw[name]["description"].split())
            assert got["rate"].read_only and not got["state_timeout"].read_only
            fp = got["state_timeout"].floating_point_range[0]
            assert fp.from_value == 0.0 and fp.to_value == float("inf")
            ir = got["rt_priority"].integer_range[0]
            assert (ir.from_value, ir.to_value) == (0, 99)
            assert "cubic" in got["interpolation"].additional_constraints
            res = peer.set_parameter("interpolation", "linear")
            assert not res.successful
            assert res.reason == "interpolation must be one of ('auto', 'cubic', 'quintic'), got 'linear'"
            res = peer.set_parameter("state_timeout", -1.0)
            assert not res.successful and "state_timeout" in res.reason
            assert peer.set_parameter("state_timeout", 0.25).successful
            assert peer.set_parameter("interpolation", "quintic").successful
            assert not peer.set_parameter("rate", 100.0).successful  # read-only
        finally:
            peer.close()
