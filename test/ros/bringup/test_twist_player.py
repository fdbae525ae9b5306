"""The bringup's twist player (``rbd_ros.ros.bringup.twist_player``, issue 29) in process, the
fast tier's test of it (the end-to-end one is ``test_bringup_twist_profile``, ``slow``): it waits
for the tour's header stamp, then on each ``/clock`` publishes the profile's body twist at
``AHEAD`` s past that simulated time, stamped with it, at most every ``period`` s, zeros from
``LEAD`` s before the profile and after its end, and no ``v_y`` for a differential drive."""
from __future__ import annotations

import math
import threading
import time

import numpy as np
import pytest

from ros_helpers import publish_until, ros_context, spin_in_background

SEGMENT = 0.2  # s: three segments, 0.6 s of profile
T0 = 1.0  # s: the tour's header stamp
PERIOD = 0.02  # s: the player's output period
PEAKS = np.array([[0.5, 0.0, 0.0], [0.4, 0.2, 0.8], [-0.3, -0.2, -0.8]])  # twist_profile's, restated


def _expected(t: float, planar: bool) -> np.ndarray:
    """The sin^2 bump of each segment (twist_profile's docstring), written out again here."""
    tau = t - T0
    if not 0.0 <= tau < 3 * SEGMENT:
        return np.zeros(3)
    seg = min(int(tau // SEGMENT), 2)
    peak = PEAKS[seg] * (1.0, 1.0 if planar else 0.0, 1.0)
    return peak * math.sin(math.pi * (tau - seg * SEGMENT) / SEGMENT) ** 2


@pytest.mark.parametrize("planar", [False, True], ids=["diff_drive", "planar"])
def test_the_player_publishes_the_profile_on_the_simulated_clock(planar: bool) -> None:
    import rclpy
    from geometry_msgs.msg import TwistStamped
    from rosgraph_msgs.msg import Clock
    from trajectory_msgs.msg import JointTrajectory

    from rbd_ros.control.twist_profile import TwistProfile
    from rbd_ros.ros.bringup.twist_player import AHEAD, LEAD, TwistPlayer
    from rbd_ros.ros.messages import set_stamp

    got: list[tuple[float, np.ndarray]] = []
    published = [0.0]  # the latest /clock sent
    lead: list[float] = []  # per twist: its stamp less the latest clock sent when it came
    cv = threading.Condition()
    with ros_context() as ctx:
        player_node = rclpy.create_node("twist_player_under_test", context=ctx)
        player = TwistPlayer(player_node, TwistProfile(SEGMENT, planar), "/test_twist/cmd_vel",
                             "/test_twist/joint_trajectory", PERIOD)
        peer = rclpy.create_node("twist_player_peer", context=ctx)

        def on_twist(msg) -> None:
            with cv:
                got.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec,
                            np.array([msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z])))
                lead.append(got[-1][0] - published[0])
                cv.notify_all()

        peer.create_subscription(TwistStamped, "/test_twist/cmd_vel", on_twist, 100)
        tour_pub = peer.create_publisher(JointTrajectory, "/test_twist/joint_trajectory", 10)
        clock_pub = peer.create_publisher(Clock, "/clock", 10)
        spinners = [spin_in_background(player_node), spin_in_background(peer)]
        try:
            tour = JointTrajectory()
            set_stamp(tour.header.stamp, T0)
            assert publish_until(tour_pub, tour, lambda: math.isfinite(player.start), timeout=20), \
                "the player never heard the tour"
            assert player.start == pytest.approx(T0 - LEAD)
            clock = Clock()
            for k in range(int(round((T0 + 3 * SEGMENT) / 0.005))):  # 0 .. 1.6 s by 5 ms
                set_stamp(clock.clock, 0.005 * k)
                published[0] = 0.005 * k
                clock_pub.publish(clock)
                time.sleep(0.004)  # the player's /clock subscription is best effort, depth 1
            set_stamp(clock.clock, T0 + 3 * SEGMENT + 0.2)  # past the profile's end: a zero twist
            published[0] = T0 + 3 * SEGMENT + 0.2
            assert publish_until(clock_pub, clock, lambda: got and got[-1][0] > T0 + 3 * SEGMENT,
                                 timeout=20, period=0.05), "no twist after the profile's end"
        finally:
            for s in spinners:
                s.shutdown()
            peer.destroy_node()
            player_node.destroy_node()
    stamps = np.array([t for t, _ in got])
    assert len(got) >= 10, f"only {len(got)} twists"
    assert stamps.min() >= T0 - LEAD - 1e-9, "a twist before the profile's lead"
    assert np.all(np.diff(stamps) >= PERIOD - 1e-6), "twists closer than the period"
    clocks = stamps - AHEAD  # each answers a published clock (a multiple of 5 ms), AHEAD s ahead
    np.testing.assert_allclose(clocks, np.round(clocks / 0.005) * 0.005, atol=1e-6)
    # ... sent when that clock came, so it arrives ahead of its stamp (less the delivery's few ms)
    assert AHEAD > 0.1 and np.median(lead) > AHEAD / 2, f"twists {np.median(lead):.3f} s ahead of the clock"
    for t, v in got:
        np.testing.assert_allclose(v, _expected(t, planar), atol=1e-9, err_msg=f"at t = {t}")
    inside = [v for t, v in got if T0 < t < T0 + 3 * SEGMENT]
    assert inside and max(np.abs(v).max() for v in inside) > 0.1, "no moving twist inside the profile"
    assert np.all(got[-1][1] == 0.0), "the base is not brought to rest after the profile"
    if not planar:
        assert all(v[1] == 0.0 for _, v in got), "a differential drive got a sideways velocity"



def test_the_player_says_when_its_readers_matched(capsys) -> None:
    """``report_matches``: ``MATCHED`` once, after the publisher has matched the count asked for
    (the bringup waits for it before the tour: twists sent before a reader matched are lost)."""
    import rclpy
    from geometry_msgs.msg import TwistStamped

    from rbd_ros.ros.bringup.twist_player import MATCHED, report_matches

    with ros_context() as ctx:
        node = rclpy.create_node("twist_player_matches", context=ctx)
        pub = node.create_publisher(TwistStamped, "/test_twist_matches/cmd_vel", 10)
        report_matches(node, pub, 2, "/test_twist_matches/cmd_vel")
        spinner = spin_in_background(node)
        peers = []
        try:
            time.sleep(0.3)
            assert MATCHED not in capsys.readouterr().out  # no reader yet
            for k in range(2):
                peer = rclpy.create_node(f"twist_player_reader{k}", context=ctx)
                peer.create_subscription(TwistStamped, "/test_twist_matches/cmd_vel", lambda m: None, 10)
                peers.append(peer)
                if k == 0:
                    time.sleep(0.3)
                    assert MATCHED not in capsys.readouterr().out  # one of two
            deadline, out = time.monotonic() + 20, ""
            while MATCHED not in out and time.monotonic() < deadline:
                time.sleep(0.02)
                out += capsys.readouterr().out
            assert out.count(MATCHED) == 1 and "2 subscribers of /test_twist_matches/cmd_vel" in out, out
            time.sleep(0.1)
            assert MATCHED not in capsys.readouterr().out  # once
        finally:
            spinner.shutdown()
            for peer in peers:
                peer.destroy_node()
            node.destroy_node()

@pytest.mark.parametrize("heard", [True, False], ids=["heard", "never_heard"])
def test_the_bringup_resumes_the_simulation_only_once_the_player_has_the_tour(monkeypatch, capsys, heard) -> None:
    """``TourTask.send_tour`` (the bridge paused) returns only after the player printed
    ``PROFILE_FROM`` for the published tour: ``drive`` resumes the simulation after it.  A player
    that learnt the stamp late (1.5 s, reproduced) sent nothing before and left the base 0.49 m
    off the profile's path.  A player that never says so: a warning naming it, not a hang."""
    from types import SimpleNamespace

    from rbd_ros.ros.bringup import tour_task
    from rbd_ros.ros.bringup.inbox import COMMANDS
    from rbd_ros.ros.bringup.twist_player import MATCHED, PROFILE_FROM

    events: list[str] = []

    class Player:
        def wait_for(self, text: str, timeout: float = 60.0) -> str:
            events.append(f"wait {text}")
            if text == PROFILE_FROM and not heard:
                raise TimeoutError(text)
            return text

    runner = SimpleNamespace(joint_names=["a"], mobile=True, command_topic=COMMANDS, collecting=False,
                             recorder=None, player=Player(), start_recording=lambda t: None,
                             law_process=lambda: SimpleNamespace(lines=[]))
    traj_pub = SimpleNamespace(get_subscription_count=lambda: 2, publish=lambda msg: events.append("publish"))
    monkeypatch.setattr(tour_task, "rates", lambda tour, waypoints: ())
    monkeypatch.setattr(tour_task, "to_joint_trajectory", lambda *a: SimpleNamespace(
        header=SimpleNamespace(stamp=SimpleNamespace(sec=0, nanosec=0))))
    task = tour_task.TourTask(SimpleNamespace(waypoints=np.zeros((2, 1)), times=np.array([0.0, 1.0])),
                              profile=SimpleNamespace(t0=None))
    task.runner = runner
    monkeypatch.setattr(task, "wait_for_tour_accepted", lambda **kw: events.append("accepted"))
    t_start = task.send_tour(None, traj_pub, None, t_pause=2.0, t_now=2.0)
    assert t_start == pytest.approx(2.1) and task.profile.t0 == t_start
    assert events == [f"wait {MATCHED}", "publish", f"wait {PROFILE_FROM}", "accepted"], events
    warned = "the twist player did not receive the tour's stamp" in capsys.readouterr().out
    assert warned is not heard
