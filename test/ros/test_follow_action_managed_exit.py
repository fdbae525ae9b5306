"""A managed controller (``managed:=true``) that served FollowJointTrajectory goals ends with
status 0 on SIGINT and on SIGTERM (issue 37: its action server's threads and the IK worker
joined before rclpy shuts down, ``managed.main``'s cleanup): configured, activated, a goal
(preempted), a cancel, a refused goal, then the signal.  The lifecycle helpers are
test_managed_controller's; the goal sequence test_follow_action_clients'."""
from __future__ import annotations

import signal

import pytest
from test_follow_action_clients import _clean_exit, _goal_sequence
from test_managed_controller import ACTIVATE, CONFIGURE, NAMES, PLANAR2_URDF, _state, _stream, _transition

from ros_helpers import NodeProcess, ros_context

pytestmark = pytest.mark.slow  # node processes


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_a_managed_controller_exits_0_after_goals(sig: int) -> None:
    from test_control_node import Peer

    proc = NodeProcess(["controller", "--ros-args", "-p", "managed:=true", "-p", f"urdf_path:={PLANAR2_URDF}",
                        "-p", "type:=pd_gravity", "-p", "state_timeout:=0.0"])
    with ros_context() as ctx:
        peer = Peer(ctx)
        try:
            proc.wait_for("controller: unconfigured (managed)", 180)
            t = _stream(peer, [0.3, -0.4], 0.3, 0.0)
            assert _transition(peer, CONFIGURE) and _transition(peer, ACTIVATE) and _state(peer) == "active"
            stop = _background_states(peer, t)
            try:
                _goal_sequence(peer.node, "controller", peer.executor)
            finally:
                stop()
            _clean_exit(proc, sig)
        finally:
            proc.stop(5)
            peer.close()


def _background_states(peer, t0: float):
    """/joint_states at ~100 Hz from a thread until the returned ``stop()``."""
    import threading
    import time

    done = threading.Event()

    def run() -> None:
        t = t0
        while not done.is_set():
            t += 0.01
            peer.publish_state(NAMES, [0.3, -0.4], t=t)
            time.sleep(0.01)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def stop() -> None:
        done.set()
        thread.join(2.0)

    return stop
