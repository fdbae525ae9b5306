"""``rbd-ros bringup --task press`` through the nodes: the bridge with the scene and its F/T
sensor, the controller (or the law composed into the bridge), and this process sending the
phases' references, as the tour run sends its tour.

The scene (default the bundled table) is placed by the bridge where its arm reaches it
(``rbd_ros.sim.contact_site``); this process computes the same site from the same model and
starts the bridge with the probe ``approach`` m above the slide's start.  The controller's
tool is the URDF's tip, 6 cm (or as the URDF's collision shapes make it:
``contact_site.probe_lengths``) short of the probe along the last joint axis: references are
sent for the tip (the probe's pose times the constant probe offset; the orientation is held,
so the probe follows the tip rigidly, and a force along the normal has no moment about it).

Each phase starts with the bridge paused (lockstep: no step is taken) at the simulated time
it reached: the references go out (``/controller/target_pose``, a minimum-jerk Cartesian move
of ``pose_duration`` s, set first; ``/controller/target_wrench``; gains as parameters), the
controller's acceptance is awaited in its log, and the bridge resumes; the phase lasts its
planned simulated time.  Phases (``rbd_ros.sim.contact_task`` runs the same task in one
process, ROS-free):

* settle (0.3 s): hold the start;
* approach (1.5 s): the law's gains for pressing along the normal ``n`` as parameters,
  ``run_press``'s (``contact_task.press_gains``: hybrid ``selection``, admittance
  ``stiffness`` and ``mass``, impedance ``stiffness`` unless the user gave one: ``-p``,
  ``--params-file`` or the controller's ``gains_file``); ``hybrid_force_position``: target
  wrench ``-force n`` (force control along the normal: the probe comes down at the law's
  velocity bound until it touches), pose reference to the surface's start (its normal part
  unused while force-controlled); ``admittance``: the same wrench, the pose reference stays
  above (the outer loop brings the probe down); ``impedance``: pose reference to the surface;
* press (0.7 s): ``impedance``: the reference steps ``force / K_n`` into the surface (a
  quasi-static set point: a moving one adds ``D r_d'`` to the force); the others hold;
* slide (3 s): the reference 0.1 m along the surface;
* retreat (1.1 s): target wrench zero; ``hybrid``: ``selection`` all position; the pose
  reference ``approach`` m up from where it is (``admittance``: the controller folds the
  offset its press left along the normal into the move's start as it takes the pose,
  ``force_laws.Admittance.fold_offset``, the rule ``run_press`` uses too).

Measured from the topics (recorded in the bag with ``--record``): ``/ft_sensor/wrench`` (the
payload-compensated F/T reading, which equals MuJoCo's contact force on the probe to round-off
in steady contact: test/sim/test_scene_contact.py), rotated to world axes with the forward
kinematics of the measured joint positions (``/controller/controller_state``, same stamps);
the normal force ``f_n``; contact lost = a slide cycle with ``f_n`` under 1 % of the set force;
the probe's position error along the surface from the same kinematics against the slide's
planned reference.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from rbd_ros.ros import topics
from rbd_ros.ros.contact_topics import FT_RAW, FT_WRENCH
from rbd_ros.sim.contact_task import PRESS_GAINS, press_gains, retreat_gains

APPROACH, SETTLE, APPROACH_TIME, PRESS_TIME, SLIDE_TIME, RETREAT_TIME = 0.08, 0.3, 1.5, 0.7, 3.0, 1.1
LOST_FRACTION = 0.01  # a slide cycle with f_n under this fraction of the force: contact lost
TARGET_POSE = topics.node_topic("controller", topics.TARGET_POSE)
TARGET_WRENCH = "/controller/target_wrench"
PRESS_TOPICS = {FT_WRENCH: "geometry_msgs/msg/WrenchStamped", FT_RAW: "geometry_msgs/msg/WrenchStamped",
                TARGET_POSE: "geometry_msgs/msg/PoseStamped",
                TARGET_WRENCH: "geometry_msgs/msg/WrenchStamped"}


class PressTask:
    """The press task through the nodes (module docstring): a mixin over the tour run's
    ``Bringup`` (``rbd_ros.ros.bringup.cli``, which composes ``PressTask, Bringup`` and sets
    ``recorded_topics``, its bag's topics: no import of it here), whose connection, pause,
    drain and recording helpers it reuses; ``run()`` as ``Bringup.run``."""

    recorded_topics: dict[str, str] = {}

    def __init__(self, args: Any) -> None:  # the run's state, as Bringup's
        from rbd_ros.ros.bringup.description import describe, robot_parameters
        from rbd_ros.ros.robot_params import robot_model
        from rbd_ros.sim.contact_site import contact_site, probe_lengths
        from rbd_ros.sim.scene import load_scene, place_scene
        from rbd_ros.sim.simulator import collision_shapes
        from rbd_ros.util.resources import DEFAULT_ROBOT

        self.args = args
        params = robot_parameters(args.robot or DEFAULT_ROBOT, args.urdf, args.base_link,
                                  args.tip_link, args.base)
        self.model = self.load_model(params)
        self.sim_model, self.mismatch, self.mobile, self.profile, self.eight = self.model, [], False, None, None
        scene = load_scene(args.scene or "table")
        if scene.placed or not any(o.pose is None for o in scene.objects):
            raise ValueError("--task press places the scene itself: give a scene whose objects "
                             "have pose 'auto'")
        anchor = next(o.anchor for o in scene.objects if o.pose is None)
        # the bridge's probe: as long as its URDF's collision shapes make it (Simulator)
        shapes = collision_shapes(self.model, robot_model(params).urdf, lambda level, msg: None)
        self.site = contact_site(self.model, anchor, probe=probe_lengths(self.model, shapes))
        self.scene = place_scene(scene, self.site.middle, self.site.normal, self.site.mass)
        self.probe = self.model.replace(tool=self.site.tool)
        # tip pose = probe pose @ tip_of_probe (both tools on frame n)
        self.tip_of_probe = np.linalg.solve(self.site.tool, self.model.tool)
        bridge = {"scene": args.scene or "table",
                  "initial_positions": [float(x) for x in self.site.q_above]}
        controller: dict[str, Any] = {}
        if args.integrator:
            bridge["integrator"] = args.integrator
        if args.timestep is not None:
            bridge["timestep"] = float(args.timestep)
            controller["rate"] = 1.0 / float(args.timestep)
        self.specs = describe(robot=args.robot or DEFAULT_ROBOT, urdf=args.urdf,
                              base_link=args.base_link, tip_link=args.tip_link, base=args.base,
                              controller=args.controller, mode=args.mode, bridge=bridge,
                              controller_parameters=controller, composed=args.composed,
                              rt_priority=args.rt_priority)
        self.specs = self.user_parameters(self.specs)
        self._init_run_state()
        self.tour = _NoTour(self.site.q_above)
        self.ft_raw: list[tuple[float, bytes]] = []
        self.phases: dict[str, float] = {}

    def _init_run_state(self) -> None:
        import threading

        self.procs, self.lock = [], threading.Lock()
        self.last_state = None
        self.controller_state, self.commands_seen, self.diagnostics = [], 0, []
        self.joint_names = list(self.model.joint_names)
        self.recorder, self.recording, self.collecting = None, False, False
        self.last_odom_stamp = self.last_stamp = -1
        self.record_until = float("inf")
        self.answers_from = self.answers_seen = 0
        self.tour_stamp = float("nan")
        self.said, self.path_poses, self.player = [], -1, None

    # ---- ROS side -----------------------------------------------------------------------------
    def open_recording(self):  # noqa: ANN201
        """As the tour's, with the contact's topics in the bag too."""
        import shutil
        from pathlib import Path

        from rbd_ros.ros.bringup.recorder import BagRecorder

        record = Path(self.args.record) if self.args.record else None
        if record is not None:
            shutil.rmtree(record / "bag", ignore_errors=True)
            record.mkdir(parents=True, exist_ok=True)
            self.recorder = BagRecorder(record / "bag", {**self.recorded_topics, **PRESS_TOPICS})
        return record

    def open_ros(self):  # noqa: ANN201
        from geometry_msgs.msg import PoseStamped, WrenchStamped
        from rclpy.qos import QoSProfile, ReliabilityPolicy

        from rbd_ros.ros.common import recordable_qos

        node, traj_pub, _ = super().open_ros()
        node.create_subscription(WrenchStamped, FT_WRENCH, self.on_ft, recordable_qos(), raw=True)
        if self.recorder is not None:
            node.create_subscription(WrenchStamped, FT_RAW, self.on_ft_raw, recordable_qos(), raw=True)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.pose_pub = node.create_publisher(PoseStamped, TARGET_POSE, reliable)
        self.wrench_pub = node.create_publisher(WrenchStamped, TARGET_WRENCH, reliable)
        return node, traj_pub, None

    def on_ft(self, raw: bytes) -> None:
        from rbd_ros.ros.messages import header_stamp_ns

        stamp = header_stamp_ns(raw)
        with self.lock:
            self.ft_raw.append((1e-9 * stamp, raw))
        if self.recording:
            self.recorder.write(FT_WRENCH, stamp, raw)

    def on_ft_raw(self, raw: bytes) -> None:
        from rbd_ros.ros.messages import header_stamp_ns

        if self.recording:
            self.recorder.write(FT_RAW, header_stamp_ns(raw), raw)

    def run(self) -> int:

        from rbd_ros.ros.lean_executor import LeanExecutor, spin_in_thread

        record = self.open_recording()
        self.say(f"[bringup] press task: {self.model.name} ({self.model.dof} joints), "
                 f"{self.args.controller}, {self.args.force:g} N on '{self.args.scene or 'table'}' "
                 f"({'composed' if self.args.composed else 'separate'}, {self.args.mode}); surface "
                 f"at {np.round(self.site.middle, 4).tolist()}, normal {np.round(self.site.normal, 3).tolist()}")
        node, traj_pub, _ = self.open_ros()
        executor = LeanExecutor()
        executor.add_node(node)
        spin = spin_in_thread(executor, "bringup_ros")
        try:
            self.start_nodes()
            self.wait_until_connected(node, self.pose_pub, None)
            diag_start, t_pause, t_now = self.pause_for_tour(node)
            self.recording = self.recorder is not None
            if self.recorder:
                self.record_frames(t_now)
            t_start = t_now
            sim_end = self.run_phases(node, spin, t_now)
            diag_end = self.set_paused(node, True)
            self.stop_controller_and_drain(sim_end)
            return self.finish_press(record, t_start, sim_end, diag_start, diag_end)
        finally:
            self.shut_down(executor, node)

    # ---- the phases ---------------------------------------------------------------------------
    def run_phases(self, node: Any, spin: Any, t0: float) -> float:
        """Each phase from a pause: its references sent and accepted, resumed, run for its
        simulated time, paused (module docstring); returns the last pause's time."""
        site, law, F = self.site, self.args.controller, float(self.args.force)
        n, L = site.normal, site.length
        start, end = site.tool_pose(0.0), site.tool_pose(L)
        self.press_depth = 0.0
        lift = APPROACH * n if law == "admittance" else 0.0 * n
        push = -F * np.concatenate([n, np.zeros(3)])

        def approach() -> None:
            self.set_controller(node, pose_duration=APPROACH_TIME)
            self.set_press_gains(node)
            if law != "impedance":
                self.send_wrench(push)
            if law != "admittance":
                self.send_pose(start)

        def press() -> None:
            if law == "impedance":
                # a step of the set point into the surface: a moving one would add its damping
                # term D r_d' to the press (hundreds of N at the model's damping)
                self.set_controller(node, pose_duration=0.0)
                self.send_pose(_shift(start, -self.press_depth * n))

        def slide() -> None:
            self.set_controller(node, pose_duration=SLIDE_TIME)
            self.send_pose(_shift(end, lift - self.press_depth * n))

        def retreat() -> None:
            if law != "impedance":
                self.send_wrench(np.zeros(6))
            self.set_controller(node, pose_duration=RETREAT_TIME - 0.3,
                                **{k: v.tolist() for k, v in retreat_gains(law).items()})
            # admittance: the controller folds its offset (the press's depth below the
            # reference above) into the move's start as it takes the pose (fold_offset): the
            # pose sent is where the probe goes, as for the others
            self.send_pose(_shift(end, (APPROACH - self.press_depth) * n))

        t = t0
        for name, duration, act in (("settle", SETTLE, None), ("approach", APPROACH_TIME, approach),
                                    ("press", PRESS_TIME, press), ("slide", SLIDE_TIME, slide),
                                    ("retreat", RETREAT_TIME, retreat)):
            self.phases[name] = t
            if act is not None:
                act()
            # the bridge pauses itself at the phase's end (not past it by this process's lag)
            self.set_parameters(node, "mujoco_bridge", pause_at=t + duration)
            self.set_paused(node, False)
            self.follow_until(spin, t + duration)
            t = self.set_paused(node, True)["sim_time"]
            self.wait_for_state_at(t)
        return t

    def set_press_gains(self, node: Any) -> None:
        """The law's gains for pressing along the surface's normal, from its current ones
        (``contact_task.press_gains``: the values ``run_press`` sets; a gain the user gave,
        ``user_gains``, is kept), and for impedance the set point's depth into the surface
        that gives the force with them."""
        law, n, F = self.args.controller, self.site.normal, float(self.args.force)
        now = {k: np.array(self.get_controller(node, k), dtype=float) for k in PRESS_GAINS[law]}
        values = press_gains(law, now, n, F, given=self.user_gains())
        if values:
            self.set_controller(node, **{k: v.tolist() for k, v in values.items()})
        if law == "impedance":  # F / (n^T K n), with the stiffness the law presses with
            K = values.get("stiffness", now["stiffness"])
            self.press_depth = F / float(n**2 @ K[:3])

    def user_gains(self) -> set[str]:
        """The gains of the law the user gave: the controller's parameters (``-p``,
        ``--params-file``; composed, the bridge's) and its gains file (``gains_file``, else the
        bundled one), as the controller node's law sees them (``ControlLaw.gain_source``:
        not "model")."""
        from rbd_ros.control.gains import load_gains

        law = self.args.controller
        names = {"controller", "mujoco_bridge"} if self.args.composed else {"controller"}
        params = {k: v for s in self.specs if s.name in names for k, v in s.parameters.items()}
        given = {k for k in PRESS_GAINS[law] if params.get(k) is not None}
        return given | set(load_gains(law, robot_names=[self.model.name],
                                      path=params.get("gains_file") or None))

    def follow_until(self, spin: Any, t_end: float) -> None:
        """Wait until the states reach ``t_end`` (an error when a node exited, the executor
        stopped or the simulation stalled)."""
        from rbd_ros.ros.bringup.processes import REACHED, STALL_SECONDS, StallWatch

        watch = StallWatch()  # as Bringup's tour: a loaded machine slows the simulation, not stops it
        while True:
            with self.lock:
                t_now = self.last_state[0]
            if t_now >= t_end - REACHED:
                return
            self.check_executor_and_nodes(spin)
            if watch.stalled(t_now, time.monotonic()):
                raise RuntimeError(f"the simulation stalled: no simulated time passed in {STALL_SECONDS:.0f} s")
            time.sleep(0.005)

    def send_pose(self, probe_T: np.ndarray) -> None:
        """The tip's target pose for the probe at ``probe_T`` (world), accepted or an error."""
        from geometry_msgs.msg import PoseStamped

        from rbd_ros.lie.so3 import rotation_to_quaternion

        T = probe_T @ self.tip_of_probe
        msg = PoseStamped()
        msg.header.frame_id = self.model.base_link
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = (float(x) for x in T[:3, 3])
        o.x, o.y, o.z, o.w = (float(x) for x in rotation_to_quaternion(T[:3, :3]))
        mark = len(self.law_process().lines)
        self.pose_pub.publish(msg)
        if self.recorder:
            self.recorder.write_message(TARGET_POSE, int(self.last_state[0] * 1e9), msg)
        self.await_answer(mark, "target pose accepted", "target pose refused")

    def send_wrench(self, wrench: np.ndarray) -> None:
        from geometry_msgs.msg import WrenchStamped

        msg = WrenchStamped()
        f, m = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, m.x, m.y, m.z = (float(x) for x in wrench)
        mark = len(self.law_process().lines)
        self.wrench_pub.publish(msg)
        if self.recorder:
            self.recorder.write_message(TARGET_WRENCH, int(self.last_state[0] * 1e9), msg)
        self.await_answer(mark, "target wrench: ", "target wrench refused")

    def await_answer(self, mark: int, ok: str, bad: str, timeout: float = 30.0) -> None:
        proc = self.law_process()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(proc.lines)[mark:]:
                if bad in line:
                    raise RuntimeError(f"the controller refused the press task's reference: "
                                       f"{line.split('refused:', 1)[-1].strip()}")
                if ok in line:
                    return
            time.sleep(0.005)
        raise RuntimeError(f"the controller did not answer ('{ok}') within {timeout:g} s")

    def set_controller(self, node: Any, **values: Any) -> None:
        """Set the controller's parameters (its node ``controller``, composed too)."""
        self.set_parameters(node, "controller", **values)

    def get_controller(self, node: Any, name: str) -> list[float]:
        from rcl_interfaces.srv import GetParameters

        res = self.call_service(node, GetParameters, "/controller/get_parameters",
                                GetParameters.Request(names=[name]))
        return list(res.values[0].double_array_value)

    # ---- the report ---------------------------------------------------------------------------
    def series(self, t0: float, t1: float) -> dict[str, np.ndarray]:
        """Per F/T sample in ``[t0, t1]``: time, the normal force (world axes by the measured
        pose's kinematics) and the probe's error along the surface against the slide's plan."""
        from geometry_msgs.msg import WrenchStamped
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        from rbd_ros.robot import Robot
        from rbd_ros.ros.bringup.processes import within

        with self.lock:
            cs = [c for c in self.controller_state if within(c[0], t0 - 0.01, t1)]
            ft = sorted((c for c in self.ft_raw if within(c[0], t0, t1)), key=lambda c: c[0])
        tq = np.array([c[0] for c in cs])
        qs = np.array([deserialize_message(raw, JointState).velocity for _, raw in cs])
        robot, site, n = Robot(self.probe), self.site, self.site.normal
        t3 = self.phases["slide"]
        rows = []
        for ts, raw in ft:
            w = deserialize_message(raw, WrenchStamped).wrench.force
            k = min(int(np.searchsorted(tq, ts - 1e-7)), len(tq) - 1)
            T = robot.fk(qs[k])
            f = T[:3, :3] @ np.array([w.x, w.y, w.z])
            x = min(max((ts - t3) / SLIDE_TIME, 0.0), 1.0) if ts >= t3 else 0.0
            sig = x**3 * (10 - 15 * x + 6 * x * x)
            e = site.tool_pose(sig * site.length)[:3, 3] - T[:3, 3]
            rows.append((ts, -(n @ f), np.linalg.norm(e - (e @ n) * n)))
        arr = np.array(rows).reshape(-1, 3)
        return {"t": arr[:, 0], "f_n": arr[:, 1], "e_free": arr[:, 2]}

    def press_report(self, s: dict[str, np.ndarray], sim_end: float) -> dict[str, Any]:
        F, p = float(self.args.force), self.phases
        t = s["t"]
        # the slide's planned time (a phase may run on past it: the pause comes when this
        # process sees the time, late when the bridge runs fast, composed)
        t3 = p["slide"]
        t4 = min(p["retreat"], t3 + SLIDE_TIME)
        span = t4 - t3
        mid = (t >= t3 + 0.1 * span) & (t < t4 - 0.1 * span)
        whole = (t >= t3) & (t < t4)
        if not mid.any():
            raise RuntimeError("no F/T readings arrived over the slide")
        err = s["f_n"][mid] - F
        before = t < t3
        return {"law": self.args.controller, "robot": self.model.name, "force_N": F,
                "force_error_rms_N": float(np.sqrt(np.mean(err**2))),
                "force_error_max_N": float(np.abs(err).max()),
                "impact_peak_ratio": float(s["f_n"][before].max() / F) if before.any() else 0.0,
                "contact_lost_cycles": int(np.sum(s["f_n"][whole] < LOST_FRACTION * F)),
                "slide_cycles": int(whole.sum()),
                "position_error_rms_m": float(np.sqrt(np.mean(s["e_free"][mid] ** 2))),
                "position_error_max_m": float(s["e_free"][mid].max()),
                "phases_s": {k: round(v - p["settle"], 6) for k, v in p.items()},
                "mode": f"{'composed' if self.args.composed else 'separate'}, {self.args.mode}",
                "source": "/ft_sensor/wrench and /controller/controller_state"}

    def finish_press(self, record: Any, t_start: float, sim_end: float, diag_start: dict,
                     diag_end: dict) -> int:
        import json
        from types import SimpleNamespace

        from rbd_ros.ros.bringup.press import plot, report_lines

        s = self.series(t_start, sim_end)
        report = self.press_report(s, sim_end)
        report["missed_cycles"] = self.missed_cycles(diag_start, diag_end, self.args.composed)
        lines = report_lines(report)
        for line in lines:
            print(line, flush=True)
        if self.args.json:
            from pathlib import Path

            Path(self.args.json).write_text(json.dumps(report, indent=2))
        if record is None:
            return 0
        (record / "report.json").write_text(json.dumps(report, indent=2))
        title = f"press: {self.model.name}, {self.args.controller}, {self.args.force:g} N"
        plot(SimpleNamespace(series={**s, "t": s["t"] - t_start}, force=float(self.args.force),
                             robot=self.model.name, law=self.args.controller,
                             phases={k: v - t_start for k, v in self.phases.items() if k != "settle"}),
             record / "plot.png")
        counts = ", ".join(f"{k} {v}" for k, v in self.recorder.counts.items())
        print(f"recorded {record}/report.json, {record}/plot.png, {record}/bag ({counts})", flush=True)
        from rbd_ros.ros.bringup.press import press_video_and_page

        for line in press_video_and_page(record, self, t_start, sim_end, report, lines, title):
            print(line, flush=True)
        return 0


class _NoTour:
    """What ``Bringup``'s helpers read of a tour (the press task has none)."""

    def __init__(self, start: np.ndarray) -> None:
        self.start, self.waypoints, self.times = start, [], np.zeros(1)
        self.segment_time, self.floor, self.notes = 0.0, None, []


def _shift(T: np.ndarray, d: np.ndarray) -> np.ndarray:
    out = T.copy()
    out[:3, 3] += d
    return out
