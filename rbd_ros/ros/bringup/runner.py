"""The bringup's runner: starts the plan's nodes as processes (``RunPlan.specs``), supervises
them (an exited node, a stopped executor, a stalled simulation: an error naming it), pauses and
resumes the bridge, sets the nodes' parameters over their services, drains what is queued at
the end and stops every process, whatever happens.  The task (``RunPlan.task``) drives the run
in between through one small interface (``Task``)."""
from __future__ import annotations

import os
import re
import tempfile
import time
from typing import Any, Protocol, cast

from rbd_ros.ros import topics
from rbd_ros.ros.bringup import connect
from rbd_ros.ros.bringup.inbox import CONTROLLER_STATE, Inbox
from rbd_ros.ros.bringup.params import node_arguments
from rbd_ros.ros.bringup.processes import REACHED, STOP_WITH_PARENT, NodeProcess
from rbd_ros.ros.bringup.record_ft import FTRecorder, ft_topics
from rbd_ros.ros.dds import remove_zombie_segments
from rbd_ros.ros.lean_executor import LeanExecutor, call_once, spin_in_thread


class Task(Protocol):
    """What a run does between the nodes' start and their stop (``tour_task.TourTask``,
    ``ExcitationTask``, ``MobileTourTask``, ``press_nodes.PressTask``)."""

    tour: Any  # what the bridge starts at and the report's run parameters read

    def topics(self) -> dict[str, str]:
        """The task's own topics for the bag (name: type), over ``inbox.TOPICS``."""

    def start(self, runner: Runner) -> None:
        """Before ROS: the task takes the runner and says what it will do."""

    def connect(self, node: Any) -> tuple[Any, Any]:
        """Its subscriptions and publishers on this process's node; returns the publisher(s)
        the run waits to be matched (``Runner.wait_until_connected``: the second may be None)."""

    def drive(self, node: Any, spin: Any, record: Any, diag_start: dict, t_now: float) -> int:
        """From the bridge paused at ``diag_start`` (its latest state at ``t_now``): the run to
        its end and the report; returns the exit status."""


class Runner(Inbox):
    """Runs a ``RunPlan``'s nodes and its task (module docstring)."""

    def __init__(self, plan: Any) -> None:
        super().__init__(plan.args)
        self.plan, self.specs, self.model, self.mobile = plan, plan.specs, plan.model, plan.mobile
        self.joint_names = list(plan.model.joint_names)
        self.procs: list[Any] = []
        self.ft: Any = None  # the F/T topics' recorder (record_ft.FTRecorder), made by run
        self.params_dir: Any = None
        self.player: Any = None  # another process of the task's (the twist player)

    @property
    def said(self) -> list[str]:
        return self.plan.said

    def say(self, line: str, show: bool = True) -> None:
        """Print one of the run's lines (``show``) and keep it for the page."""
        self.plan.say(line, show)

    def run(self, task: Task) -> int:
        """The run in stages: the bag opened and the task said, this process's ROS node, the
        nodes started and connected, the bridge paused, then the task (``Task.drive``: the
        tour sent and followed, or the press's phases, and the report).  Whatever happens,
        the ROS side is shut down, every node stopped and the bag closed."""
        ft = ft_topics(self.specs)  # the bridge's F/T readings, recorded by every task (issue 41)
        record = self.open_recording({**ft, **task.topics()})
        self.ft = FTRecorder(self, ft)
        task.start(self)
        node = self.open_ros()
        pubs = task.connect(node)
        self.ft.connect(node)
        # single-threaded: a MultiThreadedExecutor adds ~0.2 ms per callback, too much for three
        # topics at the lockstep rate (messages were lost on a loaded machine); and lean: rclpy's
        # SingleThreadedExecutor spent ~0.1 ms per message here, CPU the bridge and controller
        # need on two cores (lean_executor.py)
        executor = LeanExecutor()
        executor.add_node(node)
        spin = spin_in_thread(executor, "bringup_ros")
        try:
            self.start_nodes()
            self.wait_until_connected(node, *pubs)
            diag_start, t_pause, t_now = self.pause_for_tour(node)
            return task.drive(node, spin, record, diag_start, t_now)
        finally:
            self.shut_down(executor, node)

    # ---- processes --------------------------------------------------------------------------
    def start_nodes(self) -> None:
        env = {STOP_WITH_PARENT: str(os.getpid())}  # even a SIGKILL of this process stops them

        # every node's parameters in a file (any URDF text or path; rbd_ros.ros.bringup.params)
        self.params_dir = tempfile.TemporaryDirectory(prefix="rbd_ros-bringup-")
        for spec in self.specs:
            self.procs.append(NodeProcess(node_arguments(spec, self.params_dir.name), env=env))
        for spec, proc in zip(self.specs, self.procs):
            proc.wait_for(f"{spec.executable}: ready", timeout=180)

    def stop_nodes(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        # a node that had to be killed (or crashed) leaves its Fast DDS segment in /dev/shm
        removed, freed = remove_zombie_segments()
        if removed:
            print(f"[bringup] removed {removed} Fast DDS shared-memory segment(s) of killed processes "
                  f"({freed / 1e6:.0f} MB of /dev/shm)", flush=True)
        if getattr(self, "params_dir", None) is not None:
            self.params_dir.cleanup()
        if getattr(self, "player", None) is not None:
            self.player.stop()

    def shut_down(self, executor, node) -> None:
        """Whatever happened: this process's ROS side shut down, every node stopped, the bag
        closed."""
        import rclpy

        executor.shutdown(timeout_sec=2.0)
        node.destroy_node()
        rclpy.shutdown()
        self.stop_nodes()
        if self.recorder:
            self.recorder.close()

    def check_executor_and_nodes(self, spin) -> None:
        """An error when this process's ROS executor (``spin``) stopped or a node exited (named
        with its exit status and last output lines)."""
        if not spin.is_alive():
            raise RuntimeError("the bringup's ROS executor stopped")
        self.check_nodes()

    def check_nodes(self) -> None:
        """An error when a node exited (named with its exit status and last output lines)."""
        if any(not p.alive() for p in self.procs):
            dead = [f"{s.name} (exit {p.wait(0, drain=2.0)}: {' | '.join(x.strip() for x in p.lines[-3:])})"
                    for s, p in zip(self.specs, self.procs) if not p.alive()]  # (wait: its last lines read)
            raise RuntimeError(f"node(s) {', '.join(dead)} exited during the run")

    def wait_until_connected(self, node, traj_pub, path_pub) -> None:
        """Block until the nodes are connected (``connect.wait_until_connected``)."""
        connect.wait_until_connected(self, node, traj_pub, path_pub)

    def pause_for_tour(self, node) -> tuple[dict, float, float]:
        """Pause the bridge and wait for its state at the pause and the commands sent up to
        it; returns the diagnostics at the pause, its simulated time and the latest state's."""
        diag_start = self.set_paused(node, True)
        t_pause = diag_start["sim_time"]
        self.wait_for_state_at(t_pause)
        self.wait_for_commands_until(t_pause)
        with self.lock:
            t_now = cast(tuple[float, bytes], self.last_state)[0]  # a state has come (wait_for_state_at)
        return diag_start, t_pause, t_now

    def set_parameters(self, node, target: str, **values) -> None:
        """Set node ``target``'s parameters (its ``set_parameters`` service), all accepted or an
        error naming the refusals."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        req = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg()
                                                for k, v in values.items()])
        res = self.call_service(node, SetParameters, f"/{target}/set_parameters", req)
        bad = [r.reason for r in res.results if not r.successful]
        if bad:
            raise RuntimeError(f"{target} refused {sorted(values)}: {'; '.join(bad)}")

    def call_service(self, node, kind, service: str, request, timeout: float = 30.0):
        """One call of ``service`` on a helper node of its own that no executor spins; the
        response, or an error when the service is absent or does not answer in ``timeout`` s."""
        import rclpy

        helper = rclpy.create_node("rbd_bringup_call", context=node.context,
                                   start_parameter_services=False, enable_rosout=False)
        try:
            client: Any = helper.create_client(kind, service)  # (the interfaces are untyped)
            if not client.wait_for_service(timeout_sec=timeout):
                raise RuntimeError(f"no {service} service")
            res = call_once(helper, client, request, timeout)
        finally:
            helper.destroy_node()
        if res is None:
            raise RuntimeError(f"{service}: no answer within {timeout:g} s")
        return res

    def set_paused(self, node, paused: bool, timeout: float = 30.0) -> dict:
        """``/mujoco_bridge/pause`` (no more steps, or resume) and the bridge's diagnostics
        published at that moment (its ``sim_time`` and ``wall_time`` of the pause).  Called on
        a helper node of its own that no executor spins (``call_service``)."""
        from std_srvs.srv import SetBool

        with self.lock:
            seen = len(self.diagnostics)
        self.call_service(node, SetBool, topics.node_topic("mujoco_bridge", topics.PAUSE),
                          SetBool.Request(data=paused), timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                fresh = [d for d in self.diagnostics[seen:] if d["paused"] == paused]
            if fresh:
                return fresh[0]
            time.sleep(0.01)
        raise RuntimeError(f"no diagnostics from the bridge within {timeout} s of "
                           f"{'pausing' if paused else 'resuming'} it")

    def law_process(self):
        """The process that runs the control law and logs what it accepts or refuses: the
        controller node's, or composed, the bridge's."""
        name = self.law_executable()
        return next(p for s, p in zip(self.specs, self.procs) if s.executable == name)

    def law_executable(self) -> str:
        """The executable that runs the control law: the controller, or composed, the bridge."""
        return "mujoco_bridge" if self.args.composed else "controller"

    #: the controller's answers to a reference (rbd_ros.control.loop, mobile_loop): one line each
    ANSWERS = ("trajectory accepted", "trajectory refused", "base path accepted", "base path refused",
               "target pose accepted", "target pose refused")

    def stop_controller_and_drain(self, sim_end: float, quiet_for: float = 0.3,
                                  limit: float = 10.0) -> None:
        """End the run without losing what is still queued (on a busy machine one
        subscription's queue lags another's): after ``set_paused``, wait until the controller
        has answered (lockstep: every recorded state has its command and controller state;
        realtime, where missed cycles never get one: a controller state at or past
        ``sim_end`` arrived), stop the controller, then wait until nothing has arrived for
        ``quiet_for`` seconds."""
        def received() -> tuple[int, ...]:  # not /joint_states: a paused bridge repeats its state
            with self.lock:
                counts = (len(self.controller_state),)
            return counts + tuple(self.recorder.counts.values() if self.recorder else ())

        t_last = self.answer_time(sim_end)
        # the F/T readings' last stamp (ns): a step before the controller's last answer
        ft_end = (t_last - self.bridge_timestep() - REACHED) * 1e9

        def answered() -> bool:
            if self.args.mode == "realtime" or self.recorder is None:
                with self.lock:
                    return bool(self.controller_state) and self.controller_state[-1][0] >= t_last - REACHED
            # lockstep: the controller's state at the pause is in the bag (the controller answers
            # the states in order, over a reliable topic: every earlier one is in too), and a
            # command with each of its states. Not a count of states: the tour's first recorded
            # state is the paused one, which a mobile controller answered before the recording
            # began (it does not answer the paused bridge's repeats): one state more than its
            # answers, and this waited its 8 s to the end every mobile run
            last = self.recorder.last_stamp(CONTROLLER_STATE)
            counts = self.recorder.counts
            return (last is not None and last >= (t_last - REACHED) * 1e9
                    and counts[self.command_topic] >= counts[CONTROLLER_STATE] and ft_arrived())

        def ft_arrived() -> bool:
            # the bridge's F/T readings up to a step before the controller's last answer (each
            # goes out with the next state): one subscription's queue can lag the others' (a CI
            # run's bag ended /ft_sensor/wrench 0.93 s of readings early, its wrench_raw whole)
            return all((self.recorder.last_stamp(topic) or -1) >= ft_end for topic in self.ft.recorded())

        deadline = time.monotonic() + limit
        # all delivered before the controller stops: samples still in its writer's history
        # (not yet acknowledged by this process) would die with it
        wait = 8.0
        wait_until = time.monotonic() + wait
        while not answered() and time.monotonic() < wait_until:
            time.sleep(0.02)
        if not answered():  # the report (and bag) end short of the pause: said, never silent
            with self.lock:
                latest = self.controller_state[-1][0] if self.controller_state else float("nan")
            self.say(f"[bringup] warning: the controller's answers (and F/T readings) up to the pause at "
                     f"t = {t_last:.3f} s had not all arrived {wait:g} s after it (its latest state: "
                     f"t = {latest:.3f} s); the report ends with what arrived")
        for spec, proc in zip(self.specs, self.procs):
            if spec.executable == "controller":
                proc.stop()
        last, since = received(), time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = received()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet_for:
                break

    def bridge_timestep(self) -> float:
        """The bridge's timestep (s; 0 before it said)."""
        return float(self.ready_values("mujoco_bridge").get("timestep", 0.0))

    def answer_time(self, t_pause: float) -> float:
        """The stamp of the controller's last state when the bridge paused at ``t_pause``: that
        of the paused state (a separate controller answers it), composed one timestep earlier
        (the law runs on each state before its step, and no step follows the pause; waiting for
        ``t_pause`` there cost 10 s before the tour and 8 s after it)."""
        if not self.args.composed:
            return t_pause
        return t_pause - self.bridge_timestep()

    def ready_values(self, executable: str) -> dict[str, str]:
        """``key=value`` pairs of a node's ready line (the bridge's integrator, timestep ...)."""

        for spec, proc in zip(self.specs, self.procs):
            if spec.executable == executable:
                line = next((x for x in proc.lines if f"{executable}: ready" in x), "")
                return {k: v.rstrip(" s") for k, v in re.findall(r"(\w+)=([^,;()]+)", line)}
        return {}

    def gains_used(self) -> dict[str, str]:
        """The gains the control law ran with, from its last log line that lists them
        (``gains kp=[...] (model), ...``: the node derives them at the first state)."""

        try:
            lines = list(self.law_process().lines)
        except StopIteration:
            return {}
        for line in reversed(lines):
            if "gains " in line:
                text = line.split("gains ", 1)[1].split("; ", 1)[0]
                return {k: f"{v} ({src})" for k, v, src in
                        re.findall(r"(\w+)=(\[[^\]]*\]|[^ ,]+) \((\w+)\)", text)}
        return {}
