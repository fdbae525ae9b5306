"""``rbd-ros bringup``: an arm in MuJoCo, the dynamics services and a controller, a demo
trajectory, and a report.

    rbd-ros bringup (--robot NAME | --urdf PATH [--base-link L] [--tip-link L] [--base-type T])
                    --controller TYPE [--duration S] [--mode lockstep|realtime] [--composed]
                    [--record DIR [--no-video]] [--json FILE] [--start JOINT=VALUE|POSE ...]
                    [--floor Z|none] [--integrator auto|Euler|RK4|implicit|implicitfast]
                    [--timestep S] [--tour demo|excitation] [--model FILE.yaml]
                    [--sim-model FILE] [--perturb PERCENT [--seed N]] [--noise]

Starts the nodes of ``rbd_ros.ros.bringup.description.describe`` as processes (the launch files
start the same ones), sends a smooth quintic tour to the controller -- planned for the arm
before anything starts (``rbd_ros.control.tour``: from where the arm is, inside the position,
velocity and effort limits and above the floor, moved or shrunk until it fits, or refused with
the reason; ``--start`` keeps a given start exactly) --, shows a progress line, and at the end
prints RMS and maximum tracking error per joint, peak torques, the % of cycles at the effort
limit and chattering there, the achieved real-time factor and missed cycles. With ``--record DIR`` it writes
``DIR/report.json``, ``DIR/plot.png``, a rosbag2 recording ``DIR/bag/`` of
``/joint_states``, the commands, the reference, the controller state and the bridge's F/T
topics when it has a sensor (``record_ft``), and (``page.py``)
the video ``DIR/video.mp4`` / ``DIR/preview.gif`` rendered after the run (not with
``--no-video``) and the page ``DIR/index.html``.  ``--composed`` runs the control law inside
the MuJoCo bridge's loop (as ros2_control's controller_manager does) instead of a controller
process; the report says which ran.  Issue 31: ``--tour excitation`` (``excitation.py``) and a
simulated arm other than the controller's model, ``--model``, ``--sim-model``, ``--perturb``,
``--noise`` (``mismatch.py``).

The run in three parts: ``args.parse_args`` reads the command line; ``plan.build_plan`` (or
``press_nodes.press_plan``) makes the ``RunPlan``, ROS-free -- the robot loaded once, the tour
or the press task planned, the nodes and their parameters --; ``runner.Runner`` starts and
supervises the nodes over ROS and runs the plan's task (``tour_task.TourTask``,
``ExcitationTask``, ``MobileTourTask``, ``press_nodes.PressTask``), which reports.
"""
from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path

from rbd_ros.ros.bringup import fork_server
from rbd_ros.ros.bringup.args import (  # noqa: F401 - the command line's names, here as before
    TIMESTEP_RANGE,
    check_json_file,
    check_record_dir,
    check_timestep,
    parse_args,
    parse_floor,
    use_package_paths,
)
from rbd_ros.ros.bringup.inbox import TOPICS  # noqa: F401 - the bag's topics, here as before
from rbd_ros.ros.bringup.plan import RunPlan, build_plan
from rbd_ros.ros.bringup.press import check_press_law
from rbd_ros.ros.bringup.press_nodes import press_plan
from rbd_ros.ros.bringup.runner import Runner


def make_plan(args) -> RunPlan:
    """The run's plan for these arguments: the press task's (``--task press``) or the tour's."""
    if getattr(args, "task", "tour") == "press":
        check_press_law(args.controller)
        check_timestep(args.timestep)
        return press_plan(args)
    return build_plan(args)


class Interrupted(KeyboardInterrupt):
    """A termination signal (SIGTERM, SIGHUP, SIGQUIT) raised in the main thread, so the run
    unwinds like Ctrl-C: the nodes stopped, the bag closed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signals() -> None:
    """Every termination signal (Ctrl-C included) becomes an exception in the main thread;
    once one arrived, later ones are ignored so the clean-up (stopping every node, closing
    the bag) runs to its end.  The nodes run in sessions of their own, so closing the
    terminal (SIGHUP) reaches only this process: it must stop them."""

    def handler(signum: int, _frame) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_IGN)
        raise KeyboardInterrupt if signum == signal.SIGINT else Interrupted(signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:

    args = parse_args(list(sys.argv[1:] if argv is None else argv))
    if threading.current_thread() is threading.main_thread():
        _on_signals()
    try:
        if args.record:
            check_record_dir(Path(args.record))
        if args.json:
            check_json_file(Path(args.json))
        fork_server.prestart()  # the nodes' imports, once, while the plan is made (issue 39)
        plan = make_plan(args)
        return Runner(plan).run(plan.task)
    except (ValueError, RuntimeError, OSError) as exc:  # TimeoutError, FileExistsError ...
        print(f"\nrbd-ros bringup: error: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        kept = f"; the bag in {args.record}/bag keeps what was recorded" if args.record else ""
        print(f"\nrbd-ros bringup: interrupted ({signal.Signals(signum).name}): every node "
              f"stopped{kept}", file=sys.stderr, flush=True)
        return 128 + signum


if __name__ == "__main__":
    sys.exit(main())

