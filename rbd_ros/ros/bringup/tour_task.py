"""The tour tasks of a bringup run (``RunPlan.task``; ``runner.Task`` their interface):
``TourTask`` sends the planned tour (``rbd_ros.control.tour``) to the controller stamped just
after the bridge's pause, waits for its acceptance, follows it to its horizon with the progress
line, pauses, drains and reports (``tour_report.finish``); ``ExcitationTask`` the same with the
identification excitation (``--tour excitation``); ``MobileTourTask`` a mobile base's tour with
its figure eight on ``~/base_path`` or the twist profile on ``~/cmd_vel`` (``twist_player``).
ROS-free to build (the plan holds them); rclpy is imported when they run."""
from __future__ import annotations

import math
import os
import re
import sys
import time
from typing import Any

import numpy as np

from rbd_ros.ros import topics
from rbd_ros.ros.bringup.excitation import rates
from rbd_ros.ros.bringup.inbox import BASE_PATH, CMD_VEL, COMMANDS, TOUR
from rbd_ros.ros.bringup.mobile import base_path_message
from rbd_ros.ros.bringup.processes import REACHED, STALL_SECONDS, STOP_WITH_PARENT, NodeProcess, StallWatch
from rbd_ros.ros.bringup.report import progress_factor, real_time_factor
from rbd_ros.ros.bringup.tour_report import finish
from rbd_ros.ros.bringup.twist_player import MATCHED, PROFILE_FROM
from rbd_ros.ros.common import recordable_qos
from rbd_ros.ros.messages import set_stamp, to_joint_trajectory

#: what the controller's acceptance line says of a trajectory its planner retimed
#: (``ControlLoop.trajectory``, ``follow_trajectory.Plan.summary``)
RETIMED = re.compile(r"retimed to ([0-9.]+) s \(given ([0-9.]+) s\)")


class TourTask:
    """An arm's tour through the nodes (module docstring); ``tour`` as planned."""

    #: the controller's answers to a reference (rbd_ros.control.loop, mobile_loop): one line each
    ANSWERS = ("trajectory accepted", "trajectory refused", "base path accepted", "base path refused",
               "target pose accepted", "target pose refused")

    def __init__(self, tour: Any, eight: Any = None, profile: Any = None) -> None:
        self.tour, self.eight, self.profile = tour, eight, profile
        self.runner: Any = None  # the Runner (start)
        self.traj_pub: Any = None
        self.path_pub: Any = None
        # the controller's log lines from sending the tour on, and the last one looked at
        self.answers_from = self.answers_seen = 0
        self.tour_stamp = float("nan")  # s, the tour's header stamp
        self.path_poses = -1  # poses of the base path sent (mobile)
        self.accepted = ""  # the controller's line accepting the tour

    # ---- runner.Task ----------------------------------------------------------------------------
    def topics(self) -> dict[str, str]:
        return {}

    def start(self, runner: Any) -> None:
        self.runner = runner
        self.say_tour()

    def connect(self, node: Any) -> tuple[Any, Any]:
        """The tour's publisher."""
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from trajectory_msgs.msg import JointTrajectory

        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        self.traj_pub = node.create_publisher(JointTrajectory, TOUR, reliable)
        return self.traj_pub, self.path_pub

    def drive(self, node: Any, spin: Any, record: Any, diag_start: dict, t_now: float) -> int:
        """The tour sent, followed to its horizon, paused again and drained, the report."""
        r = self.runner
        t_start = self.send_tour(node, self.traj_pub, self.path_pub, diag_start["sim_time"], t_now)
        # the bridge pauses itself at the horizon: not past it by as much as this process lags
        r.set_parameters(node, "mujoco_bridge", pause_at=t_start + self.horizon())
        r.set_paused(node, False)
        sim_end = self.follow_tour(spin, t_start, t_now)
        diag_end, rtf = self.pause_after_tour(node, diag_start, t_start, sim_end)
        r.stop_controller_and_drain(sim_end)
        return finish(self, r, record, t_start, sim_end, rtf, diag_start, diag_end)

    # ---- the tour ---------------------------------------------------------------------------------
    def say_tour(self) -> None:
        """The tour's line (not with ``--quiet``) and its notes (always)."""
        model = self.runner.model
        self.runner.joint_names = list(model.joint_names)
        self.runner.say(f"[bringup] tour: {self.summary()}", show=not self.runner.args.quiet)
        for note in self.tour.notes:  # what was moved or shrunk to fit: said even when quiet
            self.runner.say(f"[bringup] tour: {note}")

    def summary(self) -> str:
        """The tour's line: its segments, start, amplitude and floor."""
        amp = ", ".join(f"{a:.3g}" for a in self.tour.amplitude)
        return (f"3 segments of {self.tour.segment_time:g} s from "
                f"{np.round(self.tour.start, 3).tolist()}, amplitude [{amp}], "
                + (f"above the floor z = {self.tour.floor:g} m" if self.tour.floor is not None
                   else "no floor"))

    def send_tour(self, node, traj_pub, path_pub, t_pause: float, t_now: float) -> float:
        """Start recording, publish the tour (and a mobile base's figure eight) stamped just
        after the pause, record them, and wait until the controller accepted them; returns
        the tour's start ``t_start`` (s, simulated)."""

        # no point at time 0: the controller starts the tour from its own reference
        # (holding the bridge's initial pose, the tour's start), so the reference never jumps
        t_start = t_pause + 0.1
        waypoints, times = self.tour.waypoints, self.tour.times
        traj = to_joint_trajectory(self.runner.joint_names, times, waypoints, *rates(self.tour, waypoints))
        set_stamp(traj.header.stamp, t_start)
        # /odom and /joint_states kept for the base's report; a position arm's for its drives' torques
        self.runner.collecting = self.runner.mobile or self.runner.command_topic != COMMANDS
        self.runner.start_recording(t_now)
        self.answers_from = len(self.runner.law_process().lines)  # the controller's answers from here
        if self.runner.player is not None:  # the player too takes the tour (its stamp starts the profile)
            deadline = time.monotonic() + 30
            while traj_pub.get_subscription_count() < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
            # its twists reach the controller (and this recording) from the start: both readers
            # matched its writer (twist_player.report_matches; this says its publisher exists too)
            try:
                self.runner.player.wait_for(MATCHED, timeout=max(1.0, deadline - time.monotonic()))
            except TimeoutError:
                print(f"[bringup] warning: the twist player's {CMD_VEL} matched neither the controller nor "
                      "this recording in 30 s: the profile's first twists may be lost", flush=True)
        self.tour_stamp = t_start
        traj_pub.publish(traj)
        if self.runner.recorder:
            self.runner.recorder.write_message(TOUR, int(t_now * 1e9),
                                        traj)
        if self.profile is not None:  # the player starts the twist profile with the tour's stamp
            self.profile.t0 = t_start
            self.wait_for_player_start()
        elif path_pub is not None:  # the base's figure eight from the same stamp
            path = base_path_message(self.eight, t_start)
            self.path_poses = len(path.poses)
            path_pub.publish(path)
            if self.runner.recorder:
                self.runner.recorder.write_message(BASE_PATH, int(t_now * 1e9), path)
        self.wait_for_tour_accepted(
            others=lambda kind: node.count_publishers(TOUR if kind == "trajectory" else BASE_PATH) - 1)
        return t_start

    def horizon(self) -> float:
        """The run's simulated length from the tour's start (s): ``--duration`` or the tour's
        end as the controller runs it (``run_duration``) plus 0.5 s."""
        return self.runner.args.duration or float(self.run_duration() + 0.5)

    def retimed(self) -> tuple[float, float] | None:
        """``(duration run, duration given)`` (s) when the controller's planner retimed the
        tour (its acceptance line says so: ``~/joint_trajectory`` goes through the goals'
        planner, which slows a tour its limits do not allow), else None: it runs as planned
        (``control.tour`` plans it inside the planner's own check)."""
        found = RETIMED.search(self.accepted)
        return None if found is None else (float(found.group(1)), float(found.group(2)))

    def run_duration(self) -> float:
        """The tour's duration as the controller runs it (s): retimed or its own."""
        r = self.retimed()
        return float(self.tour.times[-1]) if r is None else r[0]

    def timing(self) -> str:
        """What the report says of the tour's timing: as planned, or retimed (by how much)."""
        r = self.retimed()
        if r is None:
            return f"as planned, {float(self.tour.times[-1]):.3f} s (not retimed by the controller)"
        return (f"retimed by the controller's planner to {r[0]:.3f} s (given {r[1]:.3f} s): the tracking "
                "is against the reference it ran")

    def follow_tour(self, spin, t_start: float, t_now: float) -> float:
        """The resumed run until the simulated time reaches the horizon, with the progress
        line (not with ``--quiet``); an error when the ROS executor (``spin``) stopped, a
        node exited or the simulation stalled.  Returns the horizon's end ``sim_end`` (s)."""
        horizon = self.horizon()
        controller = self.runner.law_process()
        sim_end = t_start + horizon
        # realtime: the bridge steps on until paused, states and commands after the horizon
        # stay out of the bag (set before the loop: this process sees the horizon late).
        # Lockstep: commands carry no stamp and their queue may lag the states'
        # differently, so the bag keeps every pair up to the pause (past the horizon by as
        # much as this process lagged) rather than cut the two streams apart
        if self.runner.args.mode == "realtime":
            self.runner.record_until = sim_end + REACHED  # (processes.within)
        tty = sys.stdout.isatty()
        last_print = 0.0
        watch = StallWatch()  # stalled = no simulated progress for STALL_SECONDS of wall
        while True:
            with self.runner.lock:
                t_now = self.runner.last_state[0]
            now = time.monotonic()
            if not self.runner.args.quiet and (now - last_print >= (0.2 if tty else 2.0)):
                last_print = now
                # the final line's factor (the bridge's clocks) over [t_start, its latest
                # sample]: this process's own clock measured how late it read the states
                with self.runner.lock:
                    samples = [(d["wall_time"], d["sim_time"]) for d in self.runner.diagnostics]
                factor = progress_factor(samples, t_start)
                rtf = f"{factor:5.2f}" if math.isfinite(factor) else "    -"
                line = (f"[bringup] t = {max(t_now - t_start, 0.0):6.2f} / {horizon:.2f} s   "
                        f"real-time factor {rtf} since the tour's start")
                print("\r" + line if tty else line, end="" if tty else "\n", flush=True)
            self.runner.check_executor_and_nodes(spin)
            self.report_foreign_answers(controller)  # the tour was accepted: not its
            if t_now >= sim_end - REACHED:
                break
            if watch.stalled(t_now, now):
                raise RuntimeError(f"the simulation stalled: no simulated time passed in "
                                   f"{STALL_SECONDS:.0f} s (at t = {max(t_now - t_start, 0.0):.2f} "
                                   f"of {horizon:.2f} s)")
            time.sleep(0.05)
        if not self.runner.args.quiet and tty:
            print(flush=True)
        return sim_end

    def pause_after_tour(self, node, diag_start: dict, t_start: float,
                         sim_end: float) -> tuple[dict, float]:
        """Pause the bridge at the end; returns its diagnostics then and the real-time factor
        over the reported window ``[t_start, sim_end]``."""
        diag_end = self.runner.set_paused(node, True)  # its counters stopped at the pause
        with self.runner.lock:
            i0 = next(i for i, d in enumerate(self.runner.diagnostics) if d is diag_start)
            samples = [(d["wall_time"], d["sim_time"]) for d in self.runner.diagnostics[i0:]]
        # the bridge's own clocks over exactly the reported window (this process reads
        # the states late, on a busy machine by seconds: its own clock would measure that)
        rtf = real_time_factor(samples, t_start, sim_end)
        return diag_end, rtf

    def our_acceptance(self, kind: str, line: str) -> bool:
        """Whether ``line`` is the controller accepting the bringup's own ``kind`` ('trajectory':
        its point count and stamp; 'base path': its pose count)."""
        if kind == "trajectory":
            return (f"trajectory accepted: {len(self.tour.waypoints)} points," in line
                    and f"from t = {self.tour_stamp:.3f}" in line)
        return f"base path accepted: {self.path_poses} poses," in line

    def wait_for_player_start(self, timeout: float = 30.0) -> None:
        """Until the twist player has the tour's stamp (``PROFILE_FROM``), the bridge still
        paused: a player that learns it after the simulation resumed sends nothing before, and
        the base misses the profile's start (reproduced: a player 1.5 s late in its tour callback
        left the base 0.49 m off the profile's path)."""
        try:
            self.runner.player.wait_for(PROFILE_FROM, timeout=timeout)
        except TimeoutError:
            print(f"[bringup] warning: the twist player did not receive the tour's stamp in {timeout:g} s: "
                  "the base may miss the profile's first twists", flush=True)

    def wait_for_tour_accepted(self, timeout: float = 30.0, others=None, grace: float = 3.0) -> None:
        """Block until the controller logged that it accepted the tour (and the base path)
        the bringup sent: only lines after sending count (``answers_from``), and an acceptance
        must carry the tour's point count and stamp.  A refusal is the tour's when nobody else
        publishes that kind (``others(kind)``: the number of other publishers) -- an error
        with the controller's reason; with other publishers it may be theirs: an error only
        when the tour's acceptance has not come ``grace`` s later, a warning when it has."""
        proc = self.runner.law_process()
        others = others or (lambda kind: 0)
        kinds = ["trajectory"] + (["base path"] if self.eight is not None else [])
        deadline = time.monotonic() + timeout
        refused_at: dict[str, float] = {}
        while time.monotonic() < deadline:
            lines = list(proc.lines)[self.answers_from:]
            accepted = {k: any(self.our_acceptance(k, line) for line in lines) for k in kinds}
            for kind in kinds:
                refusals = [line for line in lines if f"{kind} refused" in line]
                if accepted[kind] or not refusals:
                    continue
                reason = refusals[0].split("refused:", 1)[-1].strip()
                n_others = others(kind)
                if n_others <= 0:
                    raise RuntimeError(f"the controller refused the tour: {reason}")
                refused_at.setdefault(kind, time.monotonic())
                if time.monotonic() - refused_at[kind] > grace:
                    raise RuntimeError(f"the controller refused a {kind} and has not accepted the tour's "
                                       f"within {grace:g} s ({n_others} other publisher(s) of {kind}s, so "
                                       f"the refusal may be theirs): {reason}")
            if all(accepted.values()):
                self.accepted = next(line for line in lines if self.our_acceptance("trajectory", line))
                if self.retimed() is not None:  # said even when quiet: the run is longer
                    self.runner.say(f"[bringup] tour: {self.timing()} "
                                    f"({self.accepted.split('; ', 1)[-1].strip()})")
                self.answers_seen = self.answers_from
                self.report_foreign_answers(proc)
                return
            if not proc.alive():
                code = proc.wait(0, drain=2.0)  # its last lines read
                tail = "\n".join(proc.lines[-5:])
                raise RuntimeError(f"the controller exited ({code}) before accepting the tour; its last lines:\n{tail}")
            time.sleep(0.01)
        tail = "\n".join(proc.lines[-5:])
        raise RuntimeError(f"the controller did not accept the tour within {timeout} s; its last lines:\n{tail}")

    def report_foreign_answers(self, proc) -> None:
        """One warning line per answer of the controller (since ``answers_seen``) to a reference
        that is not the bringup's own: another publisher's trajectory refused (the run goes
        on) or accepted (it replaced the tour: the report covers it)."""
        lines = list(proc.lines)
        for line in lines[self.answers_seen:]:
            if not any(a in line for a in self.ANSWERS):
                continue
            if any(self.our_acceptance(k, line) for k in ("trajectory", "base path")):
                continue
            what = line.split("]: ", 1)[-1].strip()
            effect = ("the run goes on with the tour" if "refused" in what
                      else "it replaced the tour, the report covers what the arm did")
            self.runner.say(f"[bringup] warning: not the tour's: the controller logged '{what}' for a "
                     f"reference from another publisher; {effect}")
        self.answers_seen = len(lines)


class ExcitationTask(TourTask):
    """``--tour excitation``: the identification excitation (``rbd_ros.identification.excitation``,
    planned by ``excitation.plan``) sent and followed as the tour; its line is its summary."""

    def summary(self) -> str:
        return self.tour.summary()


class MobileTourTask(TourTask):
    """A mobile base's tour: the arm's tour with the base's figure eight (``~/base_path``), or
    with ``diff_drive_velocity`` the twist profile played on ``~/cmd_vel`` by ``twist_player``;
    ``/odom`` and the wheel rates kept for the base's report (``mobile.base_report``)."""

    def topics(self) -> dict[str, str]:
        return ({topics.ODOM: "nav_msgs/msg/Odometry", BASE_PATH: "nav_msgs/msg/Path"}
                if self.profile is None else
                {topics.ODOM: "nav_msgs/msg/Odometry", CMD_VEL: "geometry_msgs/msg/TwistStamped"})

    def connect(self, node: Any) -> tuple[Any, Any]:
        """The tour's publisher, ``/odom``, and the twists' player (its twists recorded) or the
        base path's publisher."""
        from nav_msgs.msg import Odometry
        from nav_msgs.msg import Path as PathMsg
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        super().connect(node)
        r, qos = self.runner, recordable_qos()
        reliable = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
        node.create_subscription(Odometry, topics.ODOM, r.on_odom, qos, raw=True)
        if self.profile is not None:  # the twists, on the simulated clock (twist_player)
            from geometry_msgs.msg import TwistStamped

            self.start_player()
            node.create_subscription(TwistStamped, CMD_VEL, r.record_twist, qos, raw=True)
        else:
            self.path_pub = node.create_publisher(PathMsg, BASE_PATH, reliable)
        return self.traj_pub, self.path_pub

    def start_player(self) -> None:
        """``diff_drive_velocity``: the process that plays the twist profile on ``~/cmd_vel``
        on the simulated clock from the tour's stamp (``rbd_ros.ros.bringup.twist_player``)."""


        r = self.runner

        args = ["--segment-time", repr(self.profile.segment_time), "--topic", CMD_VEL,
                "--tour-topic", TOUR, "--subscribers", "2"] + (["--planar"] if self.profile.planar else [])
        r.player = NodeProcess(args, env={STOP_WITH_PARENT: str(os.getpid())},
                                  module="rbd_ros.ros.bringup.twist_player")
        r.player.wait_for("twist_player: ready", timeout=120)
