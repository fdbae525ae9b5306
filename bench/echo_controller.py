"""A trivial controller for the bridge benchmark: for every /joint_states it publishes one
command, ``tau = -kd * qd`` (a damper), on /effort_controller/commands.

``python bench/echo_controller.py [kd]``; on SIGINT it prints
``echo_controller: states=N commands=N first_to_last=T s rate=R Hz``.
"""
from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> int:
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    kd = float(argv[0]) if argv else 1.0
    rclpy.init()
    node = rclpy.create_node("echo_controller")
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    pub = node.create_publisher(Float64MultiArray, "/effort_controller/commands", qos)
    count = [0, 0.0, 0.0]  # states, first, last (wall)

    def on_state(msg: JointState) -> None:
        now = time.monotonic()
        if count[0] == 0:
            count[1] = now
        count[0] += 1
        count[2] = now
        pub.publish(Float64MultiArray(data=[-kd * v for v in msg.velocity]))

    node.create_subscription(JointState, "/joint_states", on_state, qos)
    print("echo_controller: ready", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    span = count[2] - count[1]
    rate = (count[0] - 1) / span if span > 0 else 0.0
    print(f"echo_controller: states={count[0]} commands={count[0]} first_to_last={span:.3f} s "
          f"rate={rate:.1f} Hz", flush=True)
    node.destroy_node()
    if rclpy.ok():
        rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
