"""``rbd-ros bringup --controller diff_drive_velocity``: the twist profile played on the
controller's ``~/cmd_vel`` on the simulated clock (issue 29).

A process of its own (``python -m rbd_ros.ros.bringup.twist_player``, node
``rbd_bringup_twist``), started by the bringup: it takes the profile's start from the tour's
header stamp (``/controller/joint_trajectory``: base and arm start together), follows
``/clock`` through a depth-1 best-effort subscription, and publishes the profile's twist
(``rbd_ros.control.twist_profile``) every ``--period`` s of simulated time; zeros from 0.05 s
before the profile and after its end, so the base rests without a timeout.  Each twist is the
profile's at ``AHEAD`` s past the clock it answers, stamped with that time: the controller holds
a twist stamped ahead until its time (``rbd_ros.control.mobile_loop``, ``HOLD_AHEAD``), so the
base follows the profile's own timeline even when this process lags the lockstep simulation by
up to ``AHEAD`` s (on a loaded machine twists stamped on receipt reached the controller late in
simulated time: at 2 s segments the reference strayed 0.143 m from the profile's path).

Not from the bringup's own process: its subscriptions keep every state for the report and the
bag, and on a busy machine their queue (and the GIL they hold) lags the simulation by up to a
second -- twists sent from there reached the controller that late, and the base's reference
strayed 0.07-0.13 m from the profile's path (PR2, measured); here the newest clock is the one
answered.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from rbd_ros.control.twist_profile import TwistProfile
from rbd_ros.ros import topics
from rbd_ros.ros.bringup.processes import stop_with_parent
from rbd_ros.ros.dds import use_large_data_profile
from rbd_ros.ros.messages import header_stamp_ns, set_stamp

LEAD = 0.05  # s: zero twists from this long before the profile (the base rests, no timeout)
AHEAD = 0.25  # s: each twist is sent this far ahead of its stamp (the lag it absorbs)
MATCHED = "twist_player: matched"  # the line once --subscribers readers matched its publisher
#: the line once the tour's stamp reached it: the bringup keeps the bridge paused until then
#: (one CI run: a player starved while the simulation resumed learnt the stamp ~1.5 s of simulated
#: time into the profile, sent nothing before, and the base ended 0.46 m short of its path)
PROFILE_FROM = "twist_player: profile from t ="


class TwistPlayer:
    """The node (see the module docstring) on ``node``."""

    def __init__(self, node: Any, profile: Any, topic: str, tour_topic: str, period: float) -> None:
        from geometry_msgs.msg import TwistStamped
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock
        from trajectory_msgs.msg import JointTrajectory

        self.profile, self.period = profile, float(period)
        self.start = float("inf")  # simulated time from which twists are sent
        self.sent_at = -float("inf")
        self._msg_type = TwistStamped
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.publisher = node.create_publisher(TwistStamped, topic, reliable)
        node.create_subscription(JointTrajectory, tour_topic, self._on_tour,
                                 QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
        latest = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
        node.create_subscription(Clock, topics.CLOCK, self._on_clock, latest, raw=True)

    def _on_tour(self, msg: Any) -> None:
        t0 = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.profile.t0 = t0
        self.start = t0 - LEAD
        print(f"{PROFILE_FROM} {t0:.3f} s", flush=True)

    def _on_clock(self, raw: bytes) -> None:
        t = 1e-9 * header_stamp_ns(raw) + AHEAD  # the time this twist acts at
        if t < self.start or t - self.sent_at < self.period - 1e-9:
            return
        out = self._msg_type()
        set_stamp(out.header.stamp, t)
        v = self.profile.twist(t)
        out.twist.linear.x, out.twist.linear.y, out.twist.angular.z = float(v[0]), float(v[1]), float(v[2])
        self.sent_at = t
        self.publisher.publish(out)


def report_matches(node: Any, publisher: Any, count: int, topic: str) -> None:
    """Print ``MATCHED`` once ``publisher`` has matched ``count`` subscriptions (a wall timer,
    10 ms; none for ``count`` 0).  Twists are volatile: those sent before the controller's
    reader matched are lost, and the bringup's own graph query cannot see that match (its own
    recording reader counts too), so it waits for this line before the tour (one CI run
    matched 0.8 s of simulated time into the profile: the base started that late and ended
    0.31 m short)."""
    if count <= 0:
        return
    from rclpy.clock import Clock, ClockType

    def check() -> None:
        if publisher.get_subscription_count() >= count:
            timer.cancel()
            print(f"{MATCHED} {count} subscribers of {topic}", flush=True)

    timer = node.create_timer(0.01, check, clock=Clock(clock_type=ClockType.STEADY_TIME))


def main(argv: list[str] | None = None) -> int:
    stop_with_parent()
    p = argparse.ArgumentParser(prog="twist_player")
    p.add_argument("--segment-time", type=float, required=True)
    p.add_argument("--planar", action="store_true")
    p.add_argument("--topic", required=True)
    p.add_argument("--tour-topic", required=True)
    p.add_argument("--period", type=float, default=0.01)
    p.add_argument("--subscribers", type=int, default=0, help="print MATCHED once this many readers matched")
    args = p.parse_args(argv)
    import rclpy
    from rclpy.executors import ExternalShutdownException

    use_large_data_profile()  # as the bringup and its nodes (rbd_ros.ros.dds)
    rclpy.init()
    node = rclpy.create_node("rbd_bringup_twist", start_parameter_services=False)
    player = TwistPlayer(node, TwistProfile(args.segment_time, args.planar), args.topic, args.tour_topic,
                         args.period)
    report_matches(node, player.publisher, args.subscribers, args.topic)
    print("twist_player: ready", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
