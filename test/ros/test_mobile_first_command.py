"""Lockstep's first exchange on a mobile base (``MobileController._resend_first_command``): the
bridge repeats its initial state and odometry at 10 Hz until a command reaches it.  A first
command lost to discovery (published before the bridge's subscription matched) must be sent
again on a later repeat, or the run stalls at t = 0 (a CI run did); a command still in flight
must not become a second step; and once the simulation moves, repeats resend nothing.  The
controller in process, its inputs called directly, its published commands counted."""
from __future__ import annotations

import time
from contextlib import contextmanager

import numpy as np

from ros_helpers import REPO, ros_context

MOBILE = str(REPO / "config" / "mobile_arm7.yaml")


@contextmanager
def _controller(monkeypatch, resend_after: float):
    """A mobile controller (whole-body computed torque, ``mobile_arm7``) with ``RESEND_AFTER``
    set; yields it, the commands it publishes (``tau_out`` at each publication) and its arm's
    joint names."""
    import rclpy

    from rbd_ros.ros.nodes import mobile_controller as mc

    monkeypatch.setattr(mc, "RESEND_AFTER", resend_after)
    with ros_context() as ctx:
        node = rclpy.create_node("controller", context=ctx,
                                 cli_args=["--ros-args", "-p", f"model_yaml:={MOBILE}"])
        try:
            ctrl = mc.MobileController(node, "whole_body_computed_torque")
            sent: list[np.ndarray] = []
            publish = ctrl._publish_command
            ctrl._publish_command = lambda: (sent.append(np.array(ctrl.tau_out)), publish())
            yield ctrl, sent, [j for j in ctrl.joints if j.startswith("joint")]
        finally:
            node.destroy_node()


def _joint_state(ctrl, arm: list[str], t: float) -> None:
    """The bridge's /joint_states of stamp ``t`` into the controller."""
    from sensor_msgs.msg import JointState

    from rbd_ros.ros.messages import set_stamp

    js = JointState(name=arm, position=[0.1] * len(arm), velocity=[0.0] * len(arm))
    set_stamp(js.header.stamp, t)
    ctrl._on_joint_state(js)


def test_a_repeat_of_the_answered_first_state_resends_its_command_once(monkeypatch):
    from nav_msgs.msg import Odometry

    from rbd_ros.ros.messages import set_stamp

    with _controller(monkeypatch, 0.05) as (ctrl, sent, arm):
        def pair(t: float) -> None:  # the bridge's /joint_states, then its /odom, of one stamp
            _joint_state(ctrl, arm, t)
            od = Odometry()
            od.header.frame_id, od.child_frame_id = "odom", ctrl.loop.base_frame
            od.pose.pose.orientation.w = 1.0
            set_stamp(od.header.stamp, t)
            ctrl._on_odom(od)

        pair(0.0)
        assert len(sent) == 1  # the first cycle's command
        pair(0.0)  # a repeat at once: the answer may still be in flight, nothing sent
        assert len(sent) == 1
        time.sleep(0.06)
        pair(0.0)  # a repeat after RESEND_AFTER: the command was lost, sent again (once)
        assert len(sent) == 2 and np.array_equal(sent[1], sent[0])
        time.sleep(0.06)
        pair(0.0)
        assert len(sent) == 3
        pair(0.001)  # the bridge stepped: a new cycle
        assert len(sent) == 4
        time.sleep(0.06)
        pair(0.001)  # a paused bridge's repeat later in the run: not resent (one step each)
        assert len(sent) == 4


def test_no_command_is_resent_before_a_first_cycle(monkeypatch):
    """A repeat with no cycle yet (no odometry: the law cannot run) sends nothing."""
    with _controller(monkeypatch, 0.0) as (ctrl, sent, arm):
        for _ in range(3):
            _joint_state(ctrl, arm, 0.0)
        assert sent == [] and ctrl.loop.cycles == 0


def test_a_full_inbox_refuses_the_newest_message_and_says_so(monkeypatch):
    """The subscriptions' buffer (``MobileController._buffer``) holds ``MAX_INBOX`` messages
    between drains; one more is refused with an error naming it, and the buffered ones stay, in
    order (a ``deque(maxlen=...)`` had dropped the oldest without a word: a trajectory among
    them would have vanished)."""
    from geometry_msgs.msg import TwistStamped

    from rbd_ros.ros.nodes import mobile_controller as mc

    monkeypatch.setattr(mc, "MAX_INBOX", 5)
    with _controller(monkeypatch, 0.05) as (ctrl, _, _arm):
        errors: list[str] = []
        ctrl.log = type("Log", (), {"error": lambda self, text: errors.append(text)})()
        twists = [TwistStamped() for _ in range(7)]
        for k, tw in enumerate(twists):
            tw.twist.linear.x = 0.01 * k
            ctrl._buffer(ctrl._cmd_vel, tw)
        ctrl._on_trajectory("a trajectory")  # the eighth: refused too
        assert [m for _, m in ctrl.inbox] == twists[:5]
        assert ctrl.dropped == 3 and len(errors) == 1  # the first refusal said, the next counted
        assert "cmd_vel dropped: 5 messages already wait" in errors[0], errors
