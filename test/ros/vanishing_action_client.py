"""A ``FollowJointTrajectory`` client that vanishes (a test peer run as its own process):
``python vanishing_action_client.py ACTION JOINT Q``: sends two refused goals (an unknown
joint, a NaN), a long goal on ``JOINT`` toward ``Q``, preempts it with a second, cancels the
second, sends a third long one and exits at once (``os._exit``: no goodbye to DDS) while it runs.
Prints ``vanished`` just before exiting."""
from __future__ import annotations

import os
import sys
import time


def _goal(Action, names, points):
    from trajectory_msgs.msg import JointTrajectoryPoint

    g = Action.Goal()
    g.trajectory.joint_names = list(names)
    for tfs, q in points:
        p = JointTrajectoryPoint(positions=[float(x) for x in q])
        p.time_from_start.sec, p.time_from_start.nanosec = int(tfs), int(round((tfs % 1) * 1e9))
        g.trajectory.points.append(p)
    return g


T0 = time.monotonic()


def _wait(ask, what: str, timeout: float = 30.0, again: float | None = 5.0):
    """The result of the future ``ask()`` returns; a ``TimeoutError`` naming the step ``what``
    after ``timeout`` s.  ``again``: asked again (a new request) every ``again`` s without an
    answer, said on stderr: the first request on each of the action's services (a goal, a
    result, a cancel) goes out just after ``wait_for_server``, which sees only this side's
    matches; the server's reader of that new connection may match this writer after the
    request went out, and the request is then lost without the server seeing it (the
    middleware's discovery race).  A real client (MoveIt) times out and sends it again
    likewise; a goal that would start a motion is sent once (``again=None``).  Each answer's
    wait is said on stderr."""
    start = time.monotonic()
    future, asked = ask(), start
    while not future.done():
        now = time.monotonic()
        if now > start + timeout:
            raise TimeoutError(f"no answer from the action server: {what} (waited {timeout:g} s, "
                               f"{start - T0:.1f} s after the start)")
        if again is not None and now > asked + again:
            _say(f"{what}: no answer in {again:g} s: asked again")
            future, asked = ask(), now
        time.sleep(0.005)
    _say(f"{what}: answered in {time.monotonic() - start:.2f} s")
    return future.result()


def _on_executor(executor, make):
    """``make()`` run by ``executor``'s spinning thread (a task), its return value.  Goals go
    out this way: rclpy 9.1's ``ActionClient.send_goal_async`` registers the future it returns
    after releasing its lock (a second copy of the registration, outside the lock), so a goal
    response taken by the spinning thread in between completes a future nobody holds, and the
    one returned never completes (a CI one-off of the retime test; shown with the window widened
    in test_ros_helpers.py; the in-process tests send through ``spin_in_background(...).send_goal``,
    this script has its own executor)."""
    task = executor.create_task(make)
    deadline = time.monotonic() + 30.0
    while not task.done():
        if time.monotonic() > deadline:
            raise TimeoutError("the executor did not run a task in 30 s")
        time.sleep(0.002)
    return task.result()


def _say(text: str) -> None:
    """A step on stderr, with the time since the start (the test shows it on a failure)."""
    print(f"vanishing_action_client: {time.monotonic() - T0:.2f} s: {text}", file=sys.stderr, flush=True)


def main(action: str, joint: str, q: float) -> None:
    import rclpy
    from control_msgs.action import FollowJointTrajectory as Action
    from rclpy.action import ActionClient
    from rclpy.executors import SingleThreadedExecutor

    rclpy.init()
    node = rclpy.create_node("vanishing_action_client")
    client = ActionClient(node, Action, action)
    if "--listen" in sys.argv:  # also a reliable reader of the controller's state, gone with it
        from sensor_msgs.msg import JointState

        node.create_subscription(JointState, action.rsplit("/", 1)[0] + "/controller_state", lambda m: None, 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    import threading

    threading.Thread(target=executor.spin, daemon=True).start()
    _say("waiting for the server")
    assert client.wait_for_server(timeout_sec=60), "no server"
    servers = node.count_services(action + "/_action/send_goal")  # more than 1: goals go to each matched
    _say(f"server found ({servers} send_goal server(s) of {action}; the nodes: {node.get_node_names()})")
    feedback = lambda msg: None  # noqa: E731 - the feedback subscription matched, then gone

    def send(goal):  # the future of a goal's response (``_on_executor``)
        return _on_executor(executor, lambda: client.send_goal_async(goal, feedback_callback=feedback))
    for what, bad in (("unknown-joint", _goal(Action, [joint, "no_such_joint"], [(1.0, [q, 0.0])])),
                      ("NaN", _goal(Action, [joint], [(1.0, [float("nan")])]))):
        handle = _wait(lambda bad=bad: send(bad), f"{what} goal: its response")
        _wait(handle.get_result_async, f"{what} goal: its result")
    first = _wait(lambda: send(_goal(Action, [joint], [(30.0, [q])])), "first long goal: its response", again=None)
    time.sleep(0.3)
    second = _wait(lambda: send(_goal(Action, [joint], [(30.0, [q])])), "second long goal: its response", again=None)
    _wait(first.get_result_async, "first long goal: its result (preempted)")
    time.sleep(0.3)
    _wait(second.cancel_goal_async, "second long goal: the cancel's response")
    _wait(second.get_result_async, "second long goal: its result (canceled)")
    third = _wait(lambda: send(_goal(Action, [joint], [(3.0, [q])])), "third goal: its response", again=None)
    third.get_result_async()  # a result request left unanswered
    time.sleep(0.3)
    print("vanished", flush=True)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
