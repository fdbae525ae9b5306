"""``ServiceLoop`` (the dynamics server's executor): serves every service of its nodes, the
built-in parameter services included; hands nodes with other entities to rclpy's executor;
stops on ``shutdown`` and on context shutdown.  Oracle: rclpy's own clients and parameter
semantics, in this process, on contexts of the tests' own."""
from __future__ import annotations

import threading
import time

import pytest

from ros_helpers import call, ros_context, wait_for_service

pytest.importorskip("rclpy")


def _spin(loop) -> tuple[threading.Thread, list]:  # noqa: ANN001
    outcome: list = []

    def run() -> None:
        try:
            loop.spin()
            outcome.append("returned")
        except Exception as exc:  # noqa: BLE001
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_serves_services_and_parameter_services_then_stops():
    import rclpy
    from rcl_interfaces.srv import GetParameters, SetParameters
    from rclpy.parameter import Parameter
    from std_srvs.srv import Trigger

    from rbd_ros.nodes.service_loop import ServiceLoop

    with ros_context() as ctx:
        server = rclpy.create_node("loop_server", context=ctx)
        server.declare_parameter("gain", 1.5)
        calls = []
        server.create_service(Trigger, "/loop/trigger",
                              lambda req, res: (calls.append(1), setattr(res, "message", "hi"),
                                                res)[-1])
        loop = ServiceLoop(context=ctx)
        loop.add_node(server)
        thread, outcome = _spin(loop)

        caller = rclpy.create_node("loop_caller", context=ctx)
        trig = caller.create_client(Trigger, "/loop/trigger")
        wait_for_service(trig)
        for _ in range(20):
            assert call(caller, trig, Trigger.Request()).message == "hi"
        assert len(calls) == 20

        setp = caller.create_client(SetParameters, "/loop_server/set_parameters")
        getp = caller.create_client(GetParameters, "/loop_server/get_parameters")
        wait_for_service(setp)
        wait_for_service(getp)
        res = call(caller, setp, SetParameters.Request(
            parameters=[Parameter("gain", value=2.5).to_parameter_msg()]))
        assert res.results[0].successful
        assert server.get_parameter("gain").value == 2.5
        got = call(caller, getp, GetParameters.Request(names=["gain"]))
        assert got.values[0].double_value == 2.5

        t0 = time.monotonic()
        assert loop.shutdown(timeout_sec=5.0)
        thread.join(5.0)
        assert not thread.is_alive() and outcome == ["returned"]
        assert time.monotonic() - t0 < 1.0


def test_context_shutdown_ends_spin_like_rclpy_executors():
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from std_srvs.srv import Trigger

    from rbd_ros.nodes.service_loop import ServiceLoop

    with ros_context() as ctx:
        node = rclpy.create_node("loop_ctx", context=ctx)
        node.create_service(Trigger, "/loop_ctx/trigger", lambda req, res: res)
        loop = ServiceLoop(context=ctx)
        loop.add_node(node)
        thread, outcome = _spin(loop)
        time.sleep(0.2)
        rclpy.shutdown(context=ctx)
        thread.join(5.0)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], ExternalShutdownException)


def test_node_with_a_subscription_is_spun_by_rclpys_executor():
    """ServiceLoop only waits on services: a node that also subscribes gets a
    SingleThreadedExecutor, so its subscription and its services both work."""
    import rclpy
    from std_msgs.msg import Float64
    from std_srvs.srv import Trigger

    from rbd_ros.nodes.service_loop import ServiceLoop

    with ros_context() as ctx:
        node = rclpy.create_node("loop_mixed", context=ctx)
        got: list[float] = []
        node.create_subscription(Float64, "/loop_mixed/x", lambda m: got.append(m.data), 10)
        node.create_service(Trigger, "/loop_mixed/trigger", lambda req, res: res)
        loop = ServiceLoop(context=ctx)
        loop.add_node(node)
        thread, outcome = _spin(loop)

        other = rclpy.create_node("loop_pub", context=ctx)
        pub = other.create_publisher(Float64, "/loop_mixed/x", 10)
        trig = other.create_client(Trigger, "/loop_mixed/trigger")
        wait_for_service(trig)
        assert call(other, trig, Trigger.Request()) is not None
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            pub.publish(Float64(data=4.0))
            time.sleep(0.05)
        assert got and got[0] == 4.0
        loop.shutdown(timeout_sec=5.0)
        thread.join(5.0)
        assert not thread.is_alive()
