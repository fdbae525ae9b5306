"""``LeanExecutor`` (the dynamics server's and the controller's executor): runs the timers,
subscriptions and services of its nodes, the built-in parameter services included; hands nodes
with other entities to rclpy's executor; stops on ``shutdown`` and on context shutdown; falls back
to rclpy's executor when an rclpy internal it uses is missing.  Oracle: rclpy's own clients and
parameter semantics, in this process, on contexts of the tests' own."""
from __future__ import annotations

import threading
import time

import numpy as np

from ros_helpers import call, ros_context, spin_in_background, wait_for_service


def _spin(loop) -> tuple[threading.Thread, list]:
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


def _stop(loop, thread: threading.Thread, outcome: list) -> None:
    """shutdown() from another thread: spin returns normally within 5 s."""
    assert loop.shutdown(timeout_sec=5.0)
    thread.join(5.0)
    assert not thread.is_alive() and outcome == ["returned"]


def test_serves_services_and_parameter_services_then_stops():
    import rclpy
    from rcl_interfaces.srv import GetParameters, SetParameters
    from rclpy.parameter import Parameter
    from std_srvs.srv import Trigger

    from rbd_ros.ros.lean_executor import LeanExecutor

    with ros_context() as ctx:
        server = rclpy.create_node("loop_server", context=ctx)
        server.declare_parameter("gain", 1.5)
        calls = []
        server.create_service(Trigger, "/loop/trigger",
                              lambda req, res: (calls.append(1), setattr(res, "message", "hi"),
                                                res)[-1])
        loop = LeanExecutor(context=ctx)
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
        _stop(loop, thread, outcome)
        assert time.monotonic() - t0 < 10.0  # promptly (a load-proof bound)


def test_context_shutdown_ends_spin_like_rclpy_executors():
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from std_srvs.srv import Trigger

    from rbd_ros.ros.lean_executor import LeanExecutor

    with ros_context() as ctx:
        node = rclpy.create_node("loop_ctx", context=ctx)
        node.create_service(Trigger, "/loop_ctx/trigger", lambda req, res: res)
        loop = LeanExecutor(context=ctx)
        loop.add_node(node)
        thread, outcome = _spin(loop)
        time.sleep(0.2)
        rclpy.shutdown(context=ctx)
        thread.join(5.0)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], ExternalShutdownException)


def test_subscriptions_are_served_and_use_sim_time_follows_clock():
    """A node with use_sim_time:=true (a /clock subscription) and a subscription of its own
    stays on LeanExecutor; both subscriptions get their messages, the node's clock follows the
    published /clock, and its services still answer."""
    import rclpy
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock
    from std_msgs.msg import Float64
    from std_srvs.srv import Trigger

    from rbd_ros.ros.lean_executor import LeanExecutor

    with ros_context() as ctx:
        node = rclpy.create_node("loop_subs", context=ctx, parameter_overrides=[
            Parameter("use_sim_time", value=True)])
        got: list[float] = []
        node.create_subscription(Float64, "/loop_subs/x", lambda m: got.append(m.data), 10)
        node.create_service(Trigger, "/loop_subs/trigger", lambda req, res: res)
        loop = LeanExecutor(context=ctx)
        loop.add_node(node)
        assert loop.unsupported() == []
        thread, outcome = _spin(loop)

        other = rclpy.create_node("loop_pub", context=ctx)
        pub = other.create_publisher(Float64, "/loop_subs/x", 10)
        clock = other.create_publisher(Clock, "/clock", 10)
        trig = other.create_client(Trigger, "/loop_subs/trigger")
        wait_for_service(trig)
        assert call(other, trig, Trigger.Request()) is not None
        deadline = time.monotonic() + 10
        stamp = Clock()
        stamp.clock.sec, stamp.clock.nanosec = 1234, 500_000_000
        while (not got or node.get_clock().now().nanoseconds != 1_234_500_000_000) \
                and time.monotonic() < deadline:
            pub.publish(Float64(data=4.0))
            clock.publish(stamp)
            time.sleep(0.05)
        assert got and got[0] == 4.0
        assert node.get_clock().now().nanoseconds == 1_234_500_000_000
        _stop(loop, thread, outcome)


def test_timers_wall_and_with_timer_info():
    """A wall-clock timer and a ROS-clock timer whose callback takes ``TimerInfo`` both fire
    at their periods (within a loose band) on the executor itself, beside a service."""
    import rclpy
    from rclpy.clock import Clock, ClockType
    from rclpy.timer import TimerInfo
    from std_srvs.srv import Trigger

    from rbd_ros.ros.lean_executor import LeanExecutor

    with ros_context() as ctx:
        node = rclpy.create_node("loop_timer", context=ctx)
        wall: list[float] = []
        infos: list[TimerInfo] = []

        def with_info(info: TimerInfo) -> None:
            infos.append(info)

        node.create_timer(0.01, lambda: wall.append(time.monotonic()),
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        node.create_timer(0.02, with_info)
        node.create_service(Trigger, "/loop_timer/trigger", lambda req, res: res)
        loop = LeanExecutor(context=ctx)
        loop.add_node(node)
        assert loop.unsupported() == []
        thread, outcome = _spin(loop)
        other = rclpy.create_node("loop_caller2", context=ctx)
        trig = other.create_client(Trigger, "/loop_timer/trigger")
        wait_for_service(trig)
        assert call(other, trig, Trigger.Request()) is not None
        time.sleep(1.0)
        _stop(loop, thread, outcome)
    # wall-clock rates depend on the machine's load: only that the timer ran, never early
    # (median period >= its 10 ms less jitter), and that its schedule is the 20 ms grid
    period = np.diff(wall)
    assert len(wall) > 5 and np.median(period) > 0.008, (len(wall), np.median(period))
    assert len(infos) > 3 and all(isinstance(i, TimerInfo) for i in infos)
    expected = np.array([i.expected_call_time.nanoseconds for i in infos])
    steps = np.diff(expected)
    assert np.all(steps > 0) and np.all(steps % 20_000_000 == 0), steps


def test_node_with_a_client_is_spun_by_rclpys_executor():
    """LeanExecutor does not wait on clients: a node with one gets a SingleThreadedExecutor,
    so a call made from inside one of its timers is answered, and shutdown() still stops it."""
    import rclpy
    from std_srvs.srv import Trigger

    from rbd_ros.ros.lean_executor import LeanExecutor

    with ros_context() as ctx:
        server = rclpy.create_node("loop_srv", context=ctx)
        server.create_service(Trigger, "/loop_srv/trigger",
                              lambda req, res: (setattr(res, "message", "pong"), res)[-1])
        node = rclpy.create_node("loop_with_client", context=ctx)
        client = node.create_client(Trigger, "/loop_srv/trigger")
        answers: list[str] = []
        pending: list = []

        def tick() -> None:
            if not pending and client.service_is_ready():
                future = client.call_async(Trigger.Request())
                future.add_done_callback(lambda f: answers.append(f.result().message))
                pending.append(future)

        node.create_timer(0.02, tick)
        loop = LeanExecutor(context=ctx)
        loop.add_node(server)
        loop.add_node(node)
        assert loop.unsupported() == ["loop_with_client: 1 clients"]
        thread, outcome = _spin(loop)
        deadline = time.monotonic() + 10
        while not answers and time.monotonic() < deadline:
            time.sleep(0.02)
        assert answers == ["pong"]
        _stop(loop, thread, outcome)


def test_environment_switch_hands_every_node_to_rclpy(monkeypatch):
    import rclpy

    from rbd_ros.ros.lean_executor import LeanExecutor

    with ros_context() as ctx:
        node = rclpy.create_node("loop_switch", context=ctx)
        loop = LeanExecutor(context=ctx)
        loop.add_node(node)
        assert loop.unsupported() == []
        monkeypatch.setenv("RBD_ROS_EXECUTOR", "rclpy")
        assert loop.unsupported() == ["RBD_ROS_EXECUTOR=rclpy"]


def test_a_missing_rclpy_internal_falls_back_to_rclpys_executor_with_one_log_line(monkeypatch, capfd):
    """On an rclpy without one of the internals LeanExecutor uses (simulated by deleting one),
    spin logs one line naming it and serves the node with rclpy's executor: calls answered,
    shutdown() still stops it."""
    import rclpy
    import rclpy.signals
    from std_srvs.srv import Trigger

    from rbd_ros.ros.lean_executor import LeanExecutor, missing_internals

    assert missing_internals() == []
    monkeypatch.delattr(rclpy.signals, "SignalHandlerGuardCondition")
    assert missing_internals() == ["rclpy.signals.SignalHandlerGuardCondition"]
    with ros_context() as ctx:
        server = rclpy.create_node("loop_old_rclpy", context=ctx)
        server.create_service(Trigger, "/loop_old_rclpy/trigger",
                              lambda req, res: (setattr(res, "message", "served"), res)[-1])
        loop = LeanExecutor(context=ctx)
        loop.add_node(server)
        assert loop.unsupported() == ["rclpy lacks rclpy.signals.SignalHandlerGuardCondition"]
        thread, outcome = _spin(loop)
        caller = rclpy.create_node("loop_old_caller", context=ctx)
        trig = caller.create_client(Trigger, "/loop_old_rclpy/trigger")
        wait_for_service(trig)
        assert [call(caller, trig, Trigger.Request()).message for _ in range(3)] == ["served"] * 3
        _stop(loop, thread, outcome)
    logged = [line for line in capfd.readouterr().err.splitlines() if "LeanExecutor" in line]
    assert len(logged) == 1 and "SignalHandlerGuardCondition" in logged[0]
    assert "SingleThreadedExecutor instead" in logged[0]


def test_the_dynamics_client_takes_rclpys_path_without_the_internals(monkeypatch):
    """DynamicsClient checks the same internals and then calls through call_async: a stand-in
    gravity service (rclpy's executor, this process) answers it."""
    import rclpy
    import rclpy.signals

    from rbd_ros.ros.client import DynamicsClient
    from rbd_ros_interfaces.srv import Gravity

    monkeypatch.delattr(rclpy.signals, "SignalHandlerGuardCondition")
    with ros_context() as ctx:
        server = rclpy.create_node("fake_gravity", context=ctx)

        def gravity(req, res):
            res.efforts = [2.0 * q for q in req.positions]
            res.success = True
            return res

        server.create_service(Gravity, "/fake/gravity", gravity)
        executor = spin_in_background(server)
        client_node = rclpy.create_node("fake_gravity_client", context=ctx)
        dyn = DynamicsClient(namespace="fake", node=client_node, timeout=10.0)
        own = DynamicsClient(namespace="fake", timeout=10.0)  # its own context and node
        try:
            assert dyn._lean is False and own._lean is False
            assert dyn.gravity([0.25], joint_names=["j1"]).tolist() == [0.5]
            assert own.gravity([0.75], joint_names=["j1"]).tolist() == [1.5]
        finally:
            own.close()
            dyn.close()
            executor.shutdown(timeout_sec=1.0)
