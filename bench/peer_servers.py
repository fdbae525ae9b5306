"""Peer servers for the services benchmark (``bench/bench_services.py``), in their own process.

    python bench/peer_servers.py NAMESPACE [single|multi|lean]

Serves, under ``/NAMESPACE/``, with the dynamics server's QoS and callback groups:

* ``trigger``: ``std_srvs/Trigger`` that returns the empty response (the floor: rclpy + DDS);
* ``inverse_dynamics``: our ``InverseDynamics`` type, ``efforts = positions`` (the message
  cost of a request and response of that size, no validation and no dynamics);
* ``forward_simulate``: our ``ForwardSimulate`` type, answered with zero arrays of the size
  the real server would return (times + 3 x K x n; K from duration/efforts, dt, output_period).

``single`` (default) spins rclpy's ``SingleThreadedExecutor`` (an ordinary rclpy server);
``multi`` a ``MultiThreadedExecutor(num_threads=3)`` (the quick services and the simulation
echo in two mutually exclusive callback groups); ``lean`` rbd_ros's ``LeanExecutor``, which
``dynamics_server`` spins. Prints ``peer_servers: ready``.
"""
from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    import numpy as np
    import rclpy
    from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
    from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor
    from std_srvs.srv import Trigger

    from rbd_ros.ros.nodes.dynamics_server import SERVICE_QOS, f64
    from rbd_ros_interfaces.srv import ForwardSimulate, InverseDynamics

    ns = argv[0].strip("/") if argv else "bench_peer"
    kind = argv[1] if len(argv) > 1 else "single"
    rclpy.init()
    node = rclpy.create_node("peer_servers")
    quick, slow = MutuallyExclusiveCallbackGroup(), MutuallyExclusiveCallbackGroup()

    def trigger(_req, res):
        return res

    def echo(req, res):
        res.efforts = req.positions
        res.success, res.message = True, "ok"
        return res

    cache: dict = {}

    def sim(req, res):
        n = max(1, len(req.joint_names))
        rows = len(req.efforts) // n
        horizon = req.duration if req.duration > 0 else rows * req.effort_period
        steps = int(round(horizon / req.dt))
        stride = max(1, int(round(req.output_period / req.dt))) if req.output_period > 0 else 1
        k = len(range(0, steps + 1, stride))
        if (k, n) not in cache:
            # array.array, as the real server assigns (rbd_ros.services.f64): a numpy value
            # would be copied element by element by the generated setter and inflate the echo.
            cache[(k, n)] = (f64(np.arange(k) * req.dt * stride), f64(np.zeros(k * n)))
        t, z = cache[(k, n)]
        res.times, res.positions, res.velocities, res.accelerations = t, z, z, z
        res.success, res.message = True, "ok"
        return res

    qos = SERVICE_QOS()
    node.create_service(Trigger, f"/{ns}/trigger", trigger, qos_profile=qos, callback_group=quick)
    node.create_service(InverseDynamics, f"/{ns}/inverse_dynamics", echo, qos_profile=qos,
                        callback_group=quick)
    node.create_service(ForwardSimulate, f"/{ns}/forward_simulate", sim, qos_profile=qos,
                        callback_group=slow)
    if kind == "multi":
        executor = MultiThreadedExecutor(num_threads=3)
    elif kind == "lean":
        from rbd_ros.ros.lean_executor import LeanExecutor

        executor = LeanExecutor()
    else:
        executor = SingleThreadedExecutor()
    executor.add_node(node)
    print(f"peer_servers: ready /{ns}/* ({kind})", flush=True)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    node.destroy_node()
    if rclpy.ok():
        rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
