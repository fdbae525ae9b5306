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
* approach (1.5 s; the hybrid law's guarded approach longer, below): the law's gains for
  pressing along the normal ``n`` as parameters,
  ``run_press``'s (``control.press_gains.press_gains``: hybrid ``selection``, admittance
  ``stiffness`` and ``mass``, impedance ``stiffness`` unless the user gave one: ``-p``,
  ``--params-file`` or the controller's ``gains_file``); ``hybrid_force_position``: target
  wrench ``-force n`` (force control along the normal: the probe comes down at the law's
  velocity bound until it touches), pose reference to the surface's start (its normal part
  unused while force-controlled); ``admittance``: the same wrench, the pose reference stays
  above (the outer loop brings the probe down); ``impedance``: pose reference to the surface.
  The hybrid law's approach is guarded unless ``--no-guard``: paused where ``run_press``
  lowers its bound (``contact_task.guarded_bound``: at least 1 cm above the surface), the
  controller's ``velocity_limit`` set to the guard's, the phase longer by the time that adds;
  the slide gives the bound back;
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

from rbd_ros.control.gains import load_gains
from rbd_ros.control.press_gains import PRESS_GAINS, press_gains, retreat_gains
from rbd_ros.lie.so3 import rotation_to_quaternion
from rbd_ros.ros import topics
from rbd_ros.ros.bringup.inbox import TOUR
from rbd_ros.ros.bringup.plan import RunPlan, load_robot, node_specs, robot_params_of
from rbd_ros.ros.bringup.press import (
    APPROACH,
    APPROACH_TIME,
    PRESS_TIME,
    RETREAT_TIME,
    SETTLE,
    SLIDE_TIME,
    finish_press,
)
from rbd_ros.ros.bringup.processes import REACHED, STALL_SECONDS, StallWatch
from rbd_ros.ros.contact_topics import FT_WRENCH
from rbd_ros.sim.contact_site import contact_site, probe_lengths
from rbd_ros.sim.contact_task import guarded_bound, scene_stiffness
from rbd_ros.sim.scene import DEFAULT_STIFFNESS, load_scene, place_scene
from rbd_ros.sim.simulator import collision_shapes

TARGET_POSE = topics.node_topic("controller", topics.TARGET_POSE)
TARGET_WRENCH = "/controller/target_wrench"
PRESS_TOPICS = {TARGET_POSE: "geometry_msgs/msg/PoseStamped",  # the F/T topics: record_ft
                TARGET_WRENCH: "geometry_msgs/msg/WrenchStamped"}


def press_plan(args: Any) -> RunPlan:
    """The press run's plan, ROS-free: the robot loaded once (its URDF's collision shapes make
    the probe), the scene placed where the arm reaches it (``contact_site``), the nodes, and
    the task (``PressTask``)."""
    loaded = load_robot(robot_params_of(args))
    model = loaded.model
    scene = load_scene(args.scene or "table")
    if scene.placed or not any(o.pose is None for o in scene.objects):
        raise ValueError("--task press places the scene itself: give a scene whose objects "
                         "have pose 'auto'")
    anchor = next(o.anchor for o in scene.objects if o.pose is None)
    # the bridge's probe: as long as its URDF's collision shapes make it (Simulator)
    shapes = collision_shapes(model, loaded.urdf, lambda level, msg: None, loaded.conversion)
    site = contact_site(model, anchor, probe=probe_lengths(model, shapes))
    bridge = {"scene": args.scene or "table",
              "initial_positions": [float(x) for x in site.q_above]}
    controller: dict[str, Any] = {}
    if args.integrator:
        bridge["integrator"] = args.integrator
    if args.timestep is not None:
        bridge["timestep"] = float(args.timestep)
        controller["rate"] = 1.0 / float(args.timestep)
    specs = node_specs(args, bridge, controller)
    task = PressTask(args, model, specs, site, place_scene(scene, site.middle, site.normal, site.mass),
                     scene_stiffness(scene))  # as loaded (placed, its objects carry solref)
    return RunPlan(args, loaded, model, model, None, [], False, specs, bridge, task)


class PressTask:
    """The press task through the nodes (module docstring), a ``runner.Task``: ``site`` where
    it presses (``contact_site.ContactSite``), ``scene`` placed there; ``start`` gives it the
    runner, whose connection, pause, drain and recording it uses."""

    def __init__(self, args: Any, model: Any, specs: list, site: Any, scene: Any,
                 stiffness: float = DEFAULT_STIFFNESS) -> None:
        self.args, self.model, self.specs, self.site, self.scene = args, model, specs, site, scene
        self.stiffness = stiffness  # N/m, the scene's stiffest contact (guarded approach)
        self.probe = model.replace(tool=site.tool)
        # tip pose = probe pose @ tip_of_probe (both tools on frame n)
        self.tip_of_probe = np.linalg.solve(site.tool, model.tool)
        self.tour = NoTour(site.q_above)
        self.ft_raw: list[tuple[float, bytes]] = []
        self.phases: dict[str, float] = {}
        self.runner: Any = None

    # ---- runner.Task ----------------------------------------------------------------------------
    def topics(self) -> dict[str, str]:
        """The contact's topics in the bag too."""
        return dict(PRESS_TOPICS)

    def start(self, runner: Any) -> None:
        self.runner = runner
        self.runner.say(f"[bringup] press task: {self.model.name} ({self.model.dof} joints), "
                        f"{self.args.controller}, {self.args.force:g} N on '{self.args.scene or 'table'}' "
                        f"({'composed' if self.args.composed else 'separate'}, {self.args.mode}); surface "
                        f"at {np.round(self.site.middle, 4).tolist()}, normal {np.round(self.site.normal, 3).tolist()}")

    def connect(self, node: Any) -> tuple[Any, Any]:
        """The F/T readings' subscriptions and the references' publishers."""
        from geometry_msgs.msg import PoseStamped, WrenchStamped
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from trajectory_msgs.msg import JointTrajectory

        # the tour's publisher as the tour run has it (unused here: the references are poses)
        node.create_publisher(JointTrajectory, TOUR, QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
        # the readings for the report; the runner records the F/T topics (record_ft)
        self.runner.ft.listen(FT_WRENCH, self.on_ft)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.pose_pub = node.create_publisher(PoseStamped, TARGET_POSE, reliable)
        self.wrench_pub = node.create_publisher(WrenchStamped, TARGET_WRENCH, reliable)
        return self.pose_pub, None

    def drive(self, node: Any, spin: Any, record: Any, diag_start: dict, t_now: float) -> int:
        """The phases from the pause, then paused, drained and reported."""
        r = self.runner
        r.start_recording(t_now)
        t_start = t_now
        sim_end = self.run_phases(node, spin, t_now)
        diag_end = r.set_paused(node, True)
        r.stop_controller_and_drain(sim_end)
        return finish_press(self, record, t_start, sim_end, diag_start, diag_end)

    def on_ft(self, stamp: int, raw: bytes) -> None:
        with self.runner.lock:
            self.ft_raw.append((1e-9 * stamp, raw))

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
        slow, extra = APPROACH_TIME, 0.0
        bound: np.ndarray | None = None  # the guarded approach's (hybrid): the law's bound
        guard: np.ndarray | None = None  # and the guard's
        if law == "hybrid_force_position" and getattr(self.args, "guard", True):
            bound = np.array(self.get_controller(node, "velocity_limit"), dtype=float)
            t_slow, guard, extra, note = guarded_bound(site, self.stiffness, F, bound, APPROACH)
            if np.isfinite(t_slow):
                slow = t_slow
                self.runner.say(f"[bringup] {note}")
            else:
                bound = guard = None

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

        def slow_down() -> None:  # the guarded approach: the bound lowered (run_press's)
            self.set_controller(node, velocity_limit=np.asarray(guard).tolist())

        def slide() -> None:
            self.set_controller(node, pose_duration=SLIDE_TIME,
                                **({} if bound is None else {"velocity_limit": bound.tolist()}))
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
        steps: list[tuple[str, float, Any]] = [("settle", SETTLE, None), ("approach", slow, approach)]
        if guard is not None:  # the rest of the approach, slower: no phase of the report's
            steps.append(("", APPROACH_TIME + extra - slow, slow_down))
        steps += [("press", PRESS_TIME, press), ("slide", SLIDE_TIME, slide), ("retreat", RETREAT_TIME, retreat)]
        for name, duration, act in steps:
            if name:
                self.phases[name] = t
            if act is not None:
                act()
            # the bridge pauses itself at the phase's end (not past it by this process's lag)
            self.runner.set_parameters(node, "mujoco_bridge", pause_at=t + duration)
            self.runner.set_paused(node, False)
            self.follow_until(spin, t + duration)
            t = self.runner.set_paused(node, True)["sim_time"]
            self.runner.wait_for_state_at(t)
        return t

    def set_press_gains(self, node: Any) -> None:
        """The law's gains for pressing along the surface's normal, from its current ones
        (``control.press_gains.press_gains``: the values ``run_press`` sets; a gain the user gave,
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

        law = self.args.controller
        names = {"controller", "mujoco_bridge"} if self.args.composed else {"controller"}
        params = {k: v for s in self.specs if s.name in names for k, v in s.parameters.items()}
        given = {k for k in PRESS_GAINS[law] if params.get(k) is not None}
        return given | set(load_gains(law, robot_names=[self.model.name],
                                      path=params.get("gains_file") or None))

    def follow_until(self, spin: Any, t_end: float) -> None:
        """Wait until the states reach ``t_end`` (an error when a node exited, the executor
        stopped or the simulation stalled)."""

        watch = StallWatch()  # as Bringup's tour: a loaded machine slows the simulation, not stops it
        while True:
            with self.runner.lock:
                t_now = self.runner.last_state[0]
            if t_now >= t_end - REACHED:
                return
            self.runner.check_executor_and_nodes(spin)
            if watch.stalled(t_now, time.monotonic()):
                raise RuntimeError(f"the simulation stalled: no simulated time passed in {STALL_SECONDS:.0f} s")
            time.sleep(0.005)

    def send_pose(self, probe_T: np.ndarray) -> None:
        """The tip's target pose for the probe at ``probe_T`` (world), accepted or an error."""
        from geometry_msgs.msg import PoseStamped


        T = probe_T @ self.tip_of_probe
        msg = PoseStamped()
        msg.header.frame_id = self.model.base_link
        p, o = msg.pose.position, msg.pose.orientation
        p.x, p.y, p.z = (float(x) for x in T[:3, 3])
        o.x, o.y, o.z, o.w = (float(x) for x in rotation_to_quaternion(T[:3, :3]))
        mark = len(self.runner.law_process().lines)
        self.pose_pub.publish(msg)
        if self.runner.recorder:
            self.runner.recorder.write_message(TARGET_POSE, int(self.runner.last_state[0] * 1e9), msg)
        self.await_answer(mark, "target pose accepted", "target pose refused")

    def send_wrench(self, wrench: np.ndarray) -> None:
        from geometry_msgs.msg import WrenchStamped

        msg = WrenchStamped()
        f, m = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, m.x, m.y, m.z = (float(x) for x in wrench)
        mark = len(self.runner.law_process().lines)
        self.wrench_pub.publish(msg)
        if self.runner.recorder:
            self.runner.recorder.write_message(TARGET_WRENCH, int(self.runner.last_state[0] * 1e9), msg)
        self.await_answer(mark, "target wrench: ", "target wrench refused")

    def await_answer(self, mark: int, ok: str, bad: str, timeout: float = 30.0) -> None:
        proc = self.runner.law_process()
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
        self.runner.set_parameters(node, "controller", **values)

    def get_controller(self, node: Any, name: str) -> list[float]:
        from rcl_interfaces.srv import GetParameters

        res = self.runner.call_service(node, GetParameters, "/controller/get_parameters",
                                GetParameters.Request(names=[name]))
        return list(res.values[0].double_array_value)


class NoTour:
    """What the runner and the report read of a tour (the press task has none)."""

    def __init__(self, start: np.ndarray) -> None:
        self.waypoints: list[np.ndarray] = []
        self.notes: list[str] = []
        self.start, self.times = start, np.zeros(1)
        self.segment_time, self.floor = 0.0, None


def _shift(T: np.ndarray, d: np.ndarray) -> np.ndarray:
    out = T.copy()
    out[:3, 3] += d
    return out
