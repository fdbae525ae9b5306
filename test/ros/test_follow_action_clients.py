"""Clients that misbehave cannot take the controller down (issue 37), and the controller's
tolerance parameters act as named (issue 45, survivor 1), through plain rclpy ``ActionClient``s
speaking only ``control_msgs/action/FollowJointTrajectory`` to controller processes:

* a client that sends refused goals, a preempt and a cancel, leaves a goal running with its
  result unasked and a reliable reader of ``~/controller_state`` behind, and vanishes
  (``os._exit``: no goodbye to DDS) leaves the controller serving: a second client's goals get
  their results, and the run ends with status 0 and no traceback;
* the parameters ``path_tolerance``, ``goal_tolerance`` and ``goal_time`` set on the node each
  show in a goal that gives no tolerance of its own: with a path tolerance of 1e-8 rad (computed
  torque tracks to ~1e-6) a goal aborts PATH_TOLERANCE_VIOLATED naming it; with its path
  tolerances erased (-1), a goal tolerance of 1e-9 and goal_time 0.3 s it aborts
  GOAL_TOLERANCE_VIOLATED naming both (swapping the two parameters fails both); a goal with
  tolerances of its own succeeds;
* SIGINT (and SIGTERM) after a goal sequence (a goal, its preemption, a cancel, a refused goal)
  ends the controller with status 0, 20 times out of 20 (it aborted with ``terminate called
  without an active exception`` in 1 of 2 runs: a thread still inside rclpy at the end).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest
from test_follow_joint_trajectory_action import JOINTS, Q0, Z1, MoveItLikeClient

from robots_data import example_robot_urdf
from ros_helpers import NodeProcess, raise_callback_errors, ros_context

pytestmark = pytest.mark.slow  # ROS processes and a closed loop

PEER = Path(__file__).with_name("vanishing_action_client.py")


def _robot() -> list[str]:
    return ["-p", f"urdf_path:={example_robot_urdf(Z1)}", "-p", "tip_link:=link06"]


def _clean_exit(proc: NodeProcess, sig: int = signal.SIGINT) -> None:
    """Signal the process; it ends with status 0 and without a traceback or an abort."""
    if sig != signal.SIGINT:
        os.killpg(proc.proc.pid, sig)
        proc.proc.wait(20)  # stop() below joins the output reader
    rc = proc.stop(20)
    out = proc.output
    assert rc == 0 and "Traceback" not in out and "terminate called" not in out, (rc, out[-4000:])


# "the arm did not settle within 10 s after t = 0.2" (a suite run at load ~6; 3 of 3 runs beside
# two CPU burners): the check began at simulated 0.2 s, but this client's states begin where the
# peer's run ended (8-10 simulated s under load), so no window could hold any; it begins at the
# client's first state now.  The rerun stays for the load the CI machine adds
@pytest.mark.flaky(reruns=1, reruns_delay=1)
def test_a_vanished_client_leaves_the_controller_serving_and_the_parameters_act() -> None:
    from action_msgs.msg import GoalStatus

    bridge = NodeProcess(["mujoco-bridge", "--ros-args", *_robot(), "-p", "mode:=lockstep",
                          "-p", f"initial_positions:={Q0.tolist()}"])
    procs = [bridge]
    with ros_context() as ctx:
        client = None
        try:
            bridge.wait_for("mujoco_bridge: ready", 180)
            ctl = NodeProcess(["controller", "--ros-args", *_robot(), "-p", "type:=computed_torque",
                               "-p", "rate:=1000.0", "-p", "path_tolerance:=1e-8", "-p", "goal_tolerance:=1e-9",
                               "-p", "goal_time:=0.3"])
            procs.append(ctl)
            ctl.wait_for("controller: ready", 180)
            peer = subprocess.run([sys.executable, str(PEER), "/controller/follow_joint_trajectory", "joint2",
                                   "1.2", "--listen"], capture_output=True, text=True, timeout=120)
            last = peer.stderr.strip().splitlines()[-1:]  # first: the step that timed out
            assert peer.returncode == 0 and "vanished" in peer.stdout, (last, peer.stdout, peer.stderr[-3000:])
            again = [line for line in peer.stderr.splitlines() if "asked again" in line]
            if again:  # a request lost on its way (the peer's _wait): in the run's warnings summary
                warnings.warn("vanishing_action_client asked again: " + "; ".join(again), stacklevel=1)
            client = MoveItLikeClient(ctx)
            R = client.Action.Result
            client.wait_sim(0.0)  # from its first state: the peer's run took simulated seconds
            here = client.state_at(client.wait_still(client.now()))  # (8-10 s under load: 0.2 failed)
            # path_tolerance (the node's, 1e-8): tighter than computed torque tracks (~1e-6 rad)
            status, code, text = client.result(client.send(client.goal(["joint2"], [(0.8, [here[1] - 0.2])])))
            assert (status, code) == (GoalStatus.STATUS_ABORTED, R.PATH_TOLERANCE_VIOLATED), text
            assert "position error" in text and "path tolerance 1e-08" in text, text
            # goal_tolerance (1e-9) and goal_time (0.3 s), the node's: the path unchecked (-1)
            here = client.state_at(client.wait_still(client.now()))
            erased = [(j, -1.0) for j in JOINTS]
            status, code, text = client.result(client.send(client.goal(["joint2"], [(0.8, [here[1] + 0.1])],
                                                                       path=erased)))
            assert (status, code) == (GoalStatus.STATUS_ABORTED, R.GOAL_TOLERANCE_VIOLATED), text
            assert "goal tolerance 1e-09" in text and "goal_time_tolerance 0.3 s" in text, text
            # and a goal with tolerances of its own succeeds
            here = client.state_at(client.wait_still(client.now()))
            status, code, text = client.result(client.send(client.goal(
                ["joint2"], [(0.8, [here[1] + 0.1])], path=[(j, 0.05) for j in JOINTS],
                goal=[(j, 0.02) for j in JOINTS])))
            assert (status, code) == (GoalStatus.STATUS_SUCCEEDED, R.SUCCESSFUL), text
            assert ctl.alive() and bridge.alive()
        except BaseException:
            for p in procs:
                print(p.output[-6000:])
                p.stop()
            raise
        finally:
            if client is not None:
                client.close()
        _clean_exit(procs[1])
        _clean_exit(bridge)


def _publish_states(stop: threading.Event, ctx) -> None:
    """``/joint_states`` at ~200 Hz, stamped on a clock of their own (an arm holding still)."""
    import rclpy
    from sensor_msgs.msg import JointState

    from rbd_ros.ros.common import recordable_qos
    from rbd_ros.ros.messages import set_stamp

    node = rclpy.create_node("fake_arm", context=ctx)
    pub = node.create_publisher(JointState, "/joint_states", recordable_qos())
    msg = JointState(name=JOINTS, position=Q0.tolist(), velocity=[0.0] * len(JOINTS))
    t0 = time.monotonic()
    try:
        while not stop.is_set():
            set_stamp(msg.header.stamp, 1.0 + time.monotonic() - t0)
            pub.publish(msg)
            time.sleep(0.005)
    finally:
        node.destroy_node()


def _goal_sequence(node, name: str, spinner) -> None:
    """A goal, a second that preempts it, a cancel of the second, a refused goal, through an
    ``ActionClient`` on ``node`` (spun by ``spinner``, a ``spin_in_background``), made and
    destroyed by the spinning thread (``spinner.call``: made or destroyed by this one mid-wait,
    it failed the spinner)."""
    from control_msgs.action import FollowJointTrajectory as Action
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint

    from rbd_ros.ros.messages import set_stamp

    def goal(joint: str, q: float):
        g = Action.Goal()
        g.trajectory.joint_names = [joint]
        p = JointTrajectoryPoint(positions=[q])
        set_stamp(p.time_from_start, 5.0)
        g.trajectory.points.append(p)
        return g

    def wait(future, what: str):
        deadline = time.monotonic() + 30
        while not future.done():
            raise_callback_errors(spinner)  # (a spinner that died answers nothing)
            assert time.monotonic() < deadline, f"{name}: no {what}"
            time.sleep(0.005)
        return future.result()

    client = spinner.call(lambda: ActionClient(node, Action, f"/{name}/follow_joint_trajectory"))

    def send(g, **kwargs):  # by the spinning thread (``send_goal``)
        return spinner.send_goal(client, g, **kwargs)

    try:
        _run_sequence(client, name, goal, wait, send)
    finally:
        spinner.destroy(client)


def _run_sequence(client, name: str, goal, wait, send) -> None:
    """``_goal_sequence``'s goals on ``client``, sent by ``send(goal, **kwargs)``."""
    assert client.wait_for_server(timeout_sec=60), f"no server {name}"
    deadline = time.monotonic() + 30
    while True:  # the first goal running (its feedback): states may still be on their way
        running = threading.Event()
        first = wait(send(goal("joint2", 1.0), feedback_callback=lambda _, ev=running: ev.set()), "goal response")
        done = first.get_result_async()
        while not (running.is_set() or done.done()):
            assert time.monotonic() < deadline, f"{name}: the first goal neither ran nor ended"
            time.sleep(0.005)
        if running.is_set():
            break
        assert "no /joint_states yet" in done.result().result.error_string, done.result().result
        time.sleep(0.2)  # (discovery under load): again
    second = wait(send(goal("joint2", 1.1)), "goal response")
    assert wait(first.get_result_async(), "result").result.error_code == -1  # preempted
    time.sleep(0.1)
    wait(second.cancel_goal_async(), "cancel response")
    wait(second.get_result_async(), "result")
    refused = wait(send(goal("elbow", 0.0)), "goal response")
    assert wait(refused.get_result_async(), "result").result.error_code == -2


# One SIGSEGV in about 185 SIGINTs after ba49157: rclpy's signal thread walking its lock-free
# list of SIGINT guard conditions while the lean executor (woken by that walk) unregistered and
# destroyed its own (faulthandler: main thread in SignalHandlerGuardCondition.destroy, no Python
# thread current; 2 in 18 SIGINTs at "ready"), fixed in lean_executor.spin and
# follow_action (issue 37). The controllers still run with PYTHONFAULTHANDLER so a crash shows
# its stacks; one rerun stays for the rare crash no one has found yet, a rerun's failure fails
@pytest.mark.flaky(reruns=1, reruns_delay=1)
def test_sigint_and_sigterm_after_a_goal_sequence_exit_0_twenty_times() -> None:
    import rclpy

    from ros_helpers import spin_in_background

    with ros_context() as ctx:
        stop = threading.Event()
        feeder = threading.Thread(target=_publish_states, args=(stop, ctx), daemon=True)
        feeder.start()
        node = rclpy.create_node("sigint_client", context=ctx)
        spinner = spin_in_background(node)
        try:
            for k in range(0, 20, 2):  # two controllers at a time
                names = [f"c{k}", f"c{k + 1}"]
                procs = [NodeProcess(["controller", "--ros-args", "-r", f"__node:={name}", *_robot(),
                                      "-p", "type:=computed_torque", "-p", "rate:=200.0"],
                                     env={"PYTHONFAULTHANDLER": "1"})  # a crash shows every thread
                         for name in names]
                try:
                    for p in procs:
                        p.wait_for("controller: ready", 180)
                    for name in names:
                        _goal_sequence(node, name, spinner)
                    for i, p in enumerate(procs):  # SIGTERM for every fourth
                        _clean_exit(p, signal.SIGTERM if (k + i) % 4 == 3 else signal.SIGINT)
                finally:
                    for p in procs:
                        p.stop(5)
        finally:
            stop.set()
            feeder.join(2)
            spinner.shutdown(timeout_sec=2.0)
            node.destroy_node()
