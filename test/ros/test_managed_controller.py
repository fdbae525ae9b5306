"""The controller as a managed (lifecycle) node (``managed:=true``, issue 28): driven through
``lifecycle_msgs`` ChangeState by this test as a real process.  No command before
``activate``; after it, the command holding the arm where it is *then* equals the gravity
torque of Pinocchio (oracle) at that pose; ``deactivate`` sends exactly one zero command,
then silence; cleanup and a second configure work; a bad parameter fails ``configure``."""
from __future__ import annotations

import time

import numpy as np
import pytest
from test_control_node import Peer

from ros_helpers import REPO, ros_context

PLANAR2_URDF = str(REPO / "urdf" / "planar2.urdf")
NAMES = ["joint1", "joint2"]
CONFIGURE, CLEANUP, ACTIVATE, DEACTIVATE = 1, 2, 3, 4  # lifecycle_msgs/Transition ids


def _call(peer: Peer, srv_type, name: str, request, timeout: float = 20.0):
    client = peer.node.create_client(srv_type, name)
    assert client.wait_for_service(timeout_sec=timeout), f"no {name}"
    future = client.call_async(request)
    deadline = time.monotonic() + timeout
    while not future.done():
        assert time.monotonic() < deadline, f"no answer from {name}"
        time.sleep(0.01)
    return future.result()


def _transition(peer: Peer, transition_id: int) -> bool:
    from lifecycle_msgs.srv import ChangeState

    req = ChangeState.Request()
    req.transition.id = transition_id
    return _call(peer, ChangeState, "/controller/change_state", req).success


def _state(peer: Peer) -> str:
    from lifecycle_msgs.srv import GetState

    return _call(peer, GetState, "/controller/get_state", GetState.Request()).current_state.label


def _stream(peer: Peer, q, seconds: float, t0: float) -> float:
    """Publish /joint_states at q (zero velocity) at ~100 Hz for ``seconds``; the last stamp."""
    t = t0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t += 0.01
        peer.publish_state(NAMES, q, t=t)
        time.sleep(0.01)
    return t


def _gravity(q: np.ndarray) -> np.ndarray:
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromUrdf(PLANAR2_URDF)
    assert model.nq == 2
    return pin.computeGeneralizedGravity(model, model.createData(), q)


@pytest.mark.slow
def test_lifecycle_commands_only_while_active(node_process) -> None:
    with ros_context() as ctx:
        peer = Peer(ctx)
        try:
            _run(node_process, peer)
        finally:
            peer.close()


def _run(node_process, peer: Peer) -> None:
    proc = node_process(["controller", "--ros-args", "-p", "managed:=true", "-p", f"urdf_path:={PLANAR2_URDF}",
                         "-p", "type:=pd_gravity", "-p", "model_actuators:=false", "-p", "state_timeout:=0.0"],
                        ready="controller: unconfigured (managed)")
    assert _state(peer) == "unconfigured"
    q1, q2 = np.array([0.3, -0.4]), np.array([0.7, 0.5])
    t = _stream(peer, q1, 0.5, 0.0)
    assert _transition(peer, CONFIGURE) and _state(peer) == "inactive"
    peer.wait_subscribed(peer.joint_pub)
    t = _stream(peer, q1, 0.5, t)  # the first state: gains, a hold at q1
    t = _stream(peer, q2, 0.5, t)  # the arm moved while inactive
    with peer.cv:
        assert peer.commands == [], "a command before activate"
    assert _transition(peer, ACTIVATE) and _state(peer) == "active"
    tau = peer.send_command_and_wait(NAMES, q2, t=t + 0.01)
    # holding where the arm is at activation, at rest: exactly the gravity torque (a hold of
    # q1 would add kp (q1 - q2), hundreds of N m)
    np.testing.assert_allclose(tau, _gravity(q2), rtol=1e-9, atol=1e-9)
    t += 0.01
    assert _transition(peer, DEACTIVATE) and _state(peer) == "inactive"
    peer.wait(lambda: np.all(peer.commands[-1] == 0.0), 10.0, "the zero command")
    with peer.cv:
        k = len(peer.commands)
        assert np.all(peer.commands[-1] == 0.0) and not np.all(peer.commands[-2] == 0.0)
    _stream(peer, q2, 0.5, t)
    with peer.cv:
        assert len(peer.commands) == k, "commands after deactivate"
    assert _transition(peer, CLEANUP) and _state(peer) == "unconfigured"
    assert _transition(peer, CONFIGURE) and _state(peer) == "inactive", "\n".join(proc.lines)
    assert proc.proc.poll() is None


@pytest.mark.slow
def test_bad_parameter_fails_configure(node_process) -> None:
    with ros_context() as ctx:
        peer = Peer(ctx)
        try:
            proc = node_process(["controller", "--ros-args", "-p", "managed:=true", "-p", "type:=pd_gravity",
                                 "-p", f"urdf_path:={PLANAR2_URDF}", "-p", "joints:=[joint1]"],
                                ready="controller: unconfigured (managed)")
            assert not _transition(peer, CONFIGURE)
            assert _state(peer) == "unconfigured"
            line = proc.wait_for("configure failed", 10)
            assert "must be the model's joints" in line
        finally:
            peer.close()


def test_mobile_law_managed_transitions_and_cleanup_release_everything() -> None:
    """A mobile (whole-body) law under the lifecycle: commands only while active, and cleanup
    destroys every subscription, publisher and timer configure made (counted on the node)."""
    from rclpy.lifecycle import TransitionCallbackReturn as R
    from rclpy.parameter import Parameter

    from rbd_ros.ros.nodes.controller import make_controller
    from rbd_ros.ros.nodes.managed import managed_node_class

    with ros_context() as ctx:
        node = managed_node_class(make_controller)("controller", context=ctx, parameter_overrides=[
            Parameter("model_yaml", value=str(REPO / "config" / "mobile_arm7.yaml")),
            Parameter("type", value="whole_body_computed_torque")])
        try:
            counts = lambda: (len(list(node.subscriptions)), len(list(node.publishers)),  # noqa: E731
                              len(list(node.timers)))
            before = counts()
            assert node.trigger_configure() == R.SUCCESS and not node.controller.active
            assert counts()[0] > before[0]
            from types import SimpleNamespace as NS

            loop = node.controller.loop  # a state and an odometry sample while inactive
            loop.joint_state(list(loop.model.joint_names), np.zeros(loop.dof), np.zeros(loop.dof), 1.0)
            loop.odom(NS(x=0.4, y=-0.2, z=0.0), NS(x=0.0, y=0.0, z=0.0, w=1.0), NS(x=0.0, y=0.0, z=0.0),
                      NS(x=0.0, y=0.0, z=0.0), 1.0)
            loop.odom(NS(x=1.5, y=0.5, z=0.0), NS(x=0.0, y=0.0, z=0.0, w=1.0), NS(x=0.0, y=0.0, z=0.0),
                      NS(x=0.0, y=0.0, z=0.0), 1.1)  # the base moved before activation
            assert node.trigger_activate() == R.SUCCESS and node.controller.active
            p, pd, pdd = np.zeros(3), np.zeros(3), np.zeros(3)
            loop.base_reference.evaluate(1.1, p, pd, pdd)
            np.testing.assert_array_equal(p, [1.5, 0.5, 0.0])  # held where it is, not at the first sample
            assert node.trigger_deactivate() == R.SUCCESS and not node.controller.active
            assert node.trigger_cleanup() == R.SUCCESS and node.controller is None
            assert counts() == before
            assert node.trigger_configure() == R.SUCCESS  # again, on the declared parameters
        finally:
            node.destroy_node()
