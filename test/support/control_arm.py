"""A stand-in "real arm" for the controller's process tests: the core model integrated with
RK4, speaking only ros2_control's topics.

    python test/support/control_arm.py --model-yaml M.yaml [--urdf F] [--dt 0.001] [--q0 a,b,...]
                               [--actuators] [--no-velocity] [--stop-after N]

Lockstep, like the MuJoCo bridge's ``mode:=lockstep``: it publishes the initial
``/joint_states`` (stamped t = 0) at 20 Hz until the first ``/effort_controller/commands``;
then every command gives exactly one step of ``dt`` under that torque (zero-order hold)
and one ``/joint_states`` stamped with the simulated time.  With ``--stop-after N`` it stops
publishing after N steps (to test the controller's stale-state watchdog).  It prints
``control_arm: ready`` once serving and ``control_arm: step K q=[...]`` every 100 steps.
"""
from __future__ import annotations

import argparse
import sys
import threading

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-yaml", default="")
    ap.add_argument("--urdf", default="")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--q0", default="")
    ap.add_argument("--actuators", action="store_true")
    ap.add_argument("--no-velocity", action="store_true")
    ap.add_argument("--stop-after", type=int, default=0)
    args = ap.parse_args(argv)

    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from rbd_ros.robot import Robot

    robot = Robot.from_yaml(args.model_yaml) if args.model_yaml else Robot.from_urdf(args.urdf)
    n = robot.dof
    q = np.array([float(x) for x in args.q0.split(",")]) if args.q0 else np.zeros(n)
    qd = np.zeros(n)
    robot.simulate(q, qd, np.zeros((1, n)), args.dt, include_actuators=args.actuators)  # JIT warm-up
    state = {"t": 0.0, "steps": 0, "started": False}
    lock = threading.Lock()

    rclpy.init()
    node = rclpy.create_node("control_arm")
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    pub = node.create_publisher(JointState, "/joint_states", qos)
    names = list(robot.joint_names)

    def publish() -> None:
        msg = JointState()
        t = state["t"]
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(round(t * 1e9)), 1_000_000_000)
        msg.name = names
        msg.position = q.tolist()
        if not args.no_velocity:
            msg.velocity = qd.tolist()
        pub.publish(msg)

    def on_command(msg: Float64MultiArray) -> None:
        with lock:
            tau = np.array(msg.data, dtype=float)
            if tau.shape != (n,) or not np.isfinite(tau).all():
                print(f"control_arm: bad command {list(msg.data)}", flush=True)
                return
            if args.stop_after and state["steps"] >= args.stop_after:
                if not any(tau):
                    print("control_arm: zero command after stop", flush=True)
                return
            state["started"] = True
            res = robot.simulate(q, qd, tau[None], args.dt, include_actuators=args.actuators)
            q[:], qd[:] = res.q[-1], res.qd[-1]
            state["t"] += args.dt
            state["steps"] += 1
            if state["steps"] % 100 == 0:
                print(f"control_arm: step {state['steps']} q={np.round(q, 6).tolist()}", flush=True)
            publish()

    def initial() -> None:
        with lock:
            if not state["started"]:
                publish()

    node.create_subscription(Float64MultiArray, "/effort_controller/commands", on_command, qos)
    node.create_timer(0.05, initial)
    print("control_arm: ready", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
