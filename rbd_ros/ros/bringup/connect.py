"""The bringup's wait for its nodes to connect, once each has said ``ready`` (``Runner.run``):
in stages under one deadline, each stage that does not end in time an error naming what did
not arrive, so a run never stalls later ("the simulation stalled") for a cause said only here.

1. the bridge publishes ``/joint_states``;
2. the controller's subscriptions (the tour, a mobile base's path) and publishers (commands,
   controller state) matched this process's, so the recording is complete from the first
   message (on a loaded machine discovery can take seconds while the lockstep loop runs);
3. the controller published a controller state: it receives states and acts on them (it
   cycles once it has ``/joint_states``, and a mobile base's ``/odom``);
4. the bridge's F/T readings came (a warning if not: the bag may miss their start);
5. the state publisher's ``/tf`` and latched ``/tf_static``, ``/robot_description`` came.

A node that exits meanwhile is named at once (``Runner.check_nodes``)."""
from __future__ import annotations

import time
from typing import Any, Callable

from rbd_ros.ros import topics
from rbd_ros.ros.bringup.inbox import CONTROLLER_STATE, STATES

#: s: how long the nodes may take, all together, to connect once they said ``ready``
CONNECT_TIMEOUT = 60.0
LATCHED = ("/tf_static", "/robot_description")


def wait_until_connected(runner: Any, node: Any, traj_pub: Any, path_pub: Any,
                         timeout: float = CONNECT_TIMEOUT) -> None:
    """Block until the stages of the module docstring are done, for ``runner``'s nodes as seen
    from ``node`` (this process's), whose publishers ``traj_pub`` and ``path_pub`` (or None)
    the controller subscribes; RuntimeError naming the first stage not done in ``timeout`` s."""
    deadline = time.monotonic() + timeout

    def wait(done: Callable[[], bool]) -> bool:  # True when done before the deadline
        while not done():
            if time.monotonic() >= deadline:
                return False
            runner.check_nodes()
            time.sleep(0.01)
        return True

    if not wait(lambda: runner.last_state is not None):
        raise RuntimeError(f"no {STATES} from the bridge within {timeout:g} s of its start "
                           f"({last_lines(runner, 'mujoco_bridge')})")

    def unmatched() -> list[str]:
        return [what for what, ok in (
            (f"no subscriber of {traj_pub.topic_name}", traj_pub.get_subscription_count() > 0),
            (f"no subscriber of {path_pub.topic_name if path_pub else ''}",
             path_pub is None or path_pub.get_subscription_count() > 0),
            (f"no publisher of {runner.command_topic}", node.count_publishers(runner.command_topic) > 0),
            (f"no publisher of {CONTROLLER_STATE}", node.count_publishers(CONTROLLER_STATE) > 0),
        ) if not ok]
    if not wait(lambda: not unmatched()):
        raise RuntimeError(f"the controller's topics did not match this process's within {timeout:g} s: "
                           f"{'; '.join(unmatched())}")
    if not wait(lambda: bool(runner.controller_state)):
        inputs = law_inputs(runner)
        raise RuntimeError(
            f"the controller published no {CONTROLLER_STATE} within {timeout:g} s: it cycles once it "
            f"has {' and '.join(inputs)}; publishers seen here: "
            + ", ".join(f"{t} {node.count_publishers(t)}" for t in inputs)
            + f" ({last_lines(runner, runner.law_executable())})")
    ft = runner.ft
    if not wait(lambda: ft is None or not ft.waiting()):
        runner.say(f"[bringup] warning: no reading of {', '.join(ft.waiting())} within {timeout:g} s: "
                   "the recording of those topics may miss their start")
    if any(spec.name == "state_publisher" for spec in runner.specs):
        def missing() -> list[str]:
            return [topics.TF] * (not runner.tf_seen) + [t for t in LATCHED if t not in runner.latched]
        if not wait(lambda: not missing()):
            raise RuntimeError(f"no {', '.join(missing())} from the state publisher within {timeout:g} s "
                               f"({last_lines(runner, 'state_publisher')})")


def law_inputs(runner: Any) -> list[str]:
    """The topics the control law cycles on: the states, and a mobile base's odometry."""
    return [STATES] + ([topics.ODOM] if runner.mobile else [])


def last_lines(runner: Any, executable: str, n: int = 3) -> str:
    """The last ``n`` output lines of ``runner``'s node running ``executable``: what it said
    before a wait ran out."""
    proc = next((p for s, p in zip(runner.specs, runner.procs) if s.executable == executable), None)
    if proc is None:
        return f"no {executable} process"
    lines = [x.strip() for x in proc.output.splitlines()[-n:] if x.strip()]
    return f"{executable}'s last lines: {' | '.join(lines)}" if lines else f"{executable} printed nothing"
