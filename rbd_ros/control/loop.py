"""One control cycle without ROS: state intake, reference handling, the law, saturation, faults.

``ControlLoop(model, law, joints, log)`` is everything the ``controller`` node does between a
message in and a message out, so that the same code runs in the node (``rbd_ros.ros.nodes
.controller``, states from ``/joint_states``) and inside the MuJoCo bridge in composed mode
(``rbd_ros.ros.nodes.mujoco_bridge``, states straight from the simulator, as ros2_control's
controller_manager calls ``update()`` in the loop that reads and writes the hardware):

* ``joint_state(names, position, velocity, t)``: a measured state (any joint order, extra joints
  ignored; missing velocities -> finite differences ``qd = (q - q_prev) / dt``);
* ``trajectory(msg)`` / ``target_pose(msg)``: references, from any object with the fields of a
  ``trajectory_msgs/JointTrajectory`` / ``geometry_msgs/PoseStamped`` (no ROS import here:
  ``rbd_ros.control.references`` reads them; a pose for a joint-space law goes through IK);
  interpolated like ros2_control's joint_trajectory_controller (``trajectory.JointSpline``),
  holding the last point; before any trajectory the reference holds the first measured
  position; references received before the first state start with it.  Both go through the
  FollowJointTrajectory goals' planner (``follow_trajectory.plan_reference``, issue 37):
  checked along the whole path for position, velocity, acceleration and effort, and retimed
  (``retime``) or refused; a retimed trajectory keeps its start (its stamp) and runs longer,
  its acceptance line says "retimed to T s (given T0 s)";
* ``cycle(t)``: reference at ``t`` -> law -> torque ``tau_out`` in ``joints`` order.  Torques are
  saturated at the effort limits (the law's ``effort_limit``); a NaN anywhere gives zero torque
  (``law.fault``, logged once per episode); per joint, the cycles at the limit, at the limit
  with a sign flip, and the peak torque are counted (``saturation``: ``rbd_ros.control
  .saturation``);
* ``watchdog(now)``: True once when the latest state is older than ``state_timeout`` s of
  ``now``'s clock (the caller then sends one zero command and stays silent until states return).

Nothing stalls the cycle (issue 26).  References are built outside it, by whoever receives them
(a callback thread), and handed over through a one-slot ``Handoff`` that the cycle reads with a
try-lock: it adopts a new reference at its start when one is there, and otherwise goes on with
the last one; gain changes (``set_gains_later``) go the same way.  Inverse kinematics for a
joint-space law's ``target_pose`` runs on a worker thread (``LatestJob``), its kernels loaded at
construction (``warm_up`` solves one pose; with ``ik_warm_up_on_worker``, as the controller node
does, that pose is the worker's first job, after the law's kernels: on a cold cache the IK then
compiles there, off the cycle, and the node's start does not wait for it); the move starts
from where the reference is when the solution is ready.  A ``trajectory`` is planned on a
worker of its own (``_plan_trajectory``; the call checks the names and the stamp only): the
node's executor, which calls it, runs the cycle too, and 10 000 points take ~1 s to plan (one
minute before issue 37, inline).  A reference received after a pose or a trajectory but before
its IK or plan finished wins (the older one is dropped, with a line saying so).  The watchdog
judges the states' arrival only over the time the controller itself was attentive: when its own
calls were late (the process was busy or not scheduled), it restarts the count rather than
blaming the states.

One clock: every time here (states, references, the cycle) is the states' control time — the
stamps of ``/joint_states`` (issue 27).  The caller runs ``cycle(t)`` at the latest state's time,
whatever triggers it.  A reference stamped more than ``FUTURE_STAMP`` s after the latest state is
refused: it was stamped on another clock (wall time against a simulation's states).  States
whose time goes back by more than ``CLOCK_JUMP`` s changed clock (the node times unstamped
states by its own clock: a simulation's first states at t = 0, then stamped ones): the reference
then holds where it is (one warning line; nothing when it was holding anyway).

A new model (``swap_model``, issue 44: an identified model without a restart) is checked
(``model_swap.swap_refusal``), its law built and warmed off the cycle, and handed over like a
reference: the cycle adopts it at its start, between two cycles, and blends the torque from the
old law's into the new law's over ``SWAP_CYCLES`` cycles, ``tau = (1 - a) tau_old + a tau_new``,
``a = k / SWAP_CYCLES`` in cycle ``k = 1 ..``: the torque then steps by at most the feedback's
own change in one cycle plus ``|tau_new - tau_old| / SWAP_CYCLES`` at that state, where an
instant switch would step by the whole model difference (tens of N m on an arm's shoulder for a
30 % different model).

Test hook: the environment variable ``RBD_ROS_TEST_IK_DELAY`` (s) makes the IK worker sleep that
long before each solve (a slow solver, to show the cycle does not wait for it).
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from types import SimpleNamespace as NS
from typing import Any, cast

import numpy as np

from rbd_ros.algorithm.gather import gather, gather2
from rbd_ros.control.handoff import Handoff, LatestJob
from rbd_ros.control.laws import Reference
from rbd_ros.control.references import from_joint_trajectory, to_seconds
from rbd_ros.control.saturation import SaturationStats
from rbd_ros.control.trajectory import INTERPOLATIONS, CartesianMove, HoldPosition, JointSpline, quintic_point_to_point
from rbd_ros.lie.so3 import pose_matrix
from rbd_ros.model import MOBILE_BASES

LogFn = Callable[[str, str], None]  # (level: "info" | "warn" | "error", message)
IK_DELAY_ENV = "RBD_ROS_TEST_IK_DELAY"  # test hook: s the IK worker sleeps before each solve
FUTURE_STAMP = 3600.0  # s: a reference stamped further ahead of the states is on another clock
IK_TIMEOUT = 0.05  # s per target pose
CLOCK_JUMP = 1.0  # s: the states' time going back more than this is a change of clock
MIN_LEAD = 0.005  # s of control time a goal's start lies ahead of its planning, at least
PLAN_ATTEMPTS = 3  # plans of one goal whose start passed before it is refused
SWAP_CYCLES = 20  # cycles over which a swapped model's torque is blended in (module docstring)
PENDING_TRAJECTORIES = 16  # serialized trajectories waiting to be read, at most (the oldest dropped)
PENDING_BEFORE_STATE = 16  # references kept for the first state, at most (the oldest dropped)
IGNORED_CAUSES = 16  # distinct causes of ignored /joint_states said, at most (``ControlLoop._ignored``)
_READ = object()  # the planning worker's one job: "plan the newest trajectory waiting"


def _shift(spline: JointSpline, dt: float) -> None:
    """Move a planned ``JointSpline`` ``dt`` s later (before the cycle has it)."""
    spline.knots = spline.knots + dt
    spline.start_time, spline.end_time = float(spline.knots[0]), float(spline.knots[-1])


def _start_at(spline: JointSpline) -> Callable[[float], None]:
    """``_startable``'s ``start_at`` of a planned spline: ``_shift`` it to start at ``t``."""
    return lambda t: _shift(spline, t - spline.start_time)


def _print_log(level: str, message: str) -> None:
    print(f"[{level}] {message}", flush=True)


class ControlLoop:
    """State, references and the law of one controller (see the module docstring)."""

    def __init__(self, model: Any, law: Any, joints: list[str] | None = None,
                 log: LogFn | None = None, state_timeout: float = 0.5,
                 interpolation: str = "auto", pose_duration: float = 2.0, ik_warm_up_on_worker: bool = False) -> None:
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {INTERPOLATIONS}")
        self.model = model
        self.law = law
        self.ik_warm_up_on_worker = ik_warm_up_on_worker  # warm_up: the IK's pose on its worker
        self.log = log or _print_log
        self.state_timeout = float(state_timeout)
        self.interpolation = interpolation
        self.pose_duration = float(pose_duration)
        n = self.dof = model.dof
        names = list(model.joint_names)
        joints = [j for j in (joints or []) if j] or names
        if sorted(joints) != sorted(names):
            raise ValueError(f"joints {joints} must be the model's joints {names} in any order")
        self.joints = joints
        self.cmd_index = np.array([names.index(j) for j in joints], dtype=np.intp)

        # ---- state -----------------------------------------------------------------------------
        self.q = np.zeros(n)
        self.qd = np.zeros(n)
        self.q_prev = np.zeros(n)
        self.t = math.nan  # control time of the latest state
        self.have_state = False
        self.last_state_wall = 0.0
        self.stale = False
        self._state_names: list[str] | None = None
        self._state_index = np.zeros(n, dtype=np.intp)
        self._ignored_said: set[tuple] = set()  # the causes of ignored states said (``_ignored``)
        self._pending: list[tuple[Any, Any]] = []  # references received before any state (bounded)
        self._early_said: set[str] = set()  # the kinds of reference said to wait for the first state
        self._pending_lock = threading.Lock()  # (taken before and at the first state only)
        self._fault_logged = False
        self._no_velocity_warned = False
        self.ref = Reference(n)
        self.reference: Any = None  # joint reference (HoldPosition / JointSpline)
        self.cartesian: Any = None  # CartesianMove for task-space laws
        self._watch: Any = None  # the reference's ``watch`` (a FollowJointTrajectory goal's checks)
        self.tau_out = np.zeros(n)  # the command, ``joints`` order
        self.ref_out = np.zeros(n)  # reference q_d, ``joints`` order (NaN for a Cartesian target)
        self.q_out = np.zeros(n)  # measured q, ``joints`` order
        self.cycles = 0
        #: called with the first measured q (model order) before its reference is set: the
        #: node derives the model's gains at that pose there (``ControlLaw.derive_gains``)
        self.on_first_state: Callable[[np.ndarray], None] | None = None
        # ---- handing work to the cycle (module docstring) ---------------------------------------
        self._refs = Handoff()  # (joint reference, Cartesian move) for the next cycle
        self._gains = Handoff()  # {gain: value} for the next cycle
        self._swap = Handoff()  # (model, law, tool robot) for the next cycle (swap_model)
        self._blend_from: Any = None  # the previous law while a swapped one is blended in
        self._blend_k = 0
        self._tau_blend = np.zeros(n)
        #: called in the cycle that adopted a swapped model (the node updates its references)
        self.on_swap: Callable[[Any, Any], None] | None = None
        self._seq = 0  # references submitted so far: an IK result older than the latest is dropped
        self._robot: Any = None  # rbd_ros.Robot for IK and fk off the cycle (its own workspace)
        self._ik: LatestJob | None = None
        self.ik_delay = float(os.environ.get(IK_DELAY_ENV, "") or 0.0)
        self._watch_prev = math.nan  # time of the watchdog's previous call
        self._attentive_since = -math.inf  # the watchdog's calls were late until then
        self._busy_logged = -math.inf
        self.saturation = SaturationStats(n)  # per joint, model order
        self._lead_rate: float | None = None  # control s per goal point planning took (plan_lead)
        self._effort: Any = None  # the reference's efforts (a goal's ``plan.efforts``) or None
        self._effort_scratch = (np.zeros(n), np.zeros(n))
        self.retime = "when_infeasible"  # how goals are retimed (``follow_trajectory.plan_goal``)
        self.acceleration_limits: Any = None  # rad/s^2 per joint or one (None: the model's)
        self._limits: Any = None  # (acceleration_limits, effort limits, PathLimits) of the last plan
        self._plan_took: Any = None  # (control time, wall s, points, reference) of the last plan
        #: ``~/joint_trajectory`` is planned here (``_plan_trajectory``), off the cycle's thread
        self._planner = LatestJob(self._plan_trajectory, "rbd_ros-plan-trajectory",
                                  lambda exc: self.log("error", f"trajectory refused: {exc!r}"))
        self._traj_lock = threading.Lock()
        #: trajectories not planned yet, oldest first: ``(message, seq, wall time, counted)``; a
        #: message given directly is checked and counted as a reference at once (``seq`` its
        #: number), a serialized one (a callable) when read (``seq`` the number when it arrived)
        self._traj_pending: list[tuple[Any, int, float, bool]] = []
        self.warm_up()

    # ---- set-up -------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Load the jitted kernels now (numba cache), not in the first control cycle."""
        n = self.model.dof
        q = np.zeros(n)
        self.law.compute(0.0, q, q, Reference(n).set_joint(q))
        if self.law.task_space:
            self.law.compute(0.0, q, q, Reference(n).set_task(np.eye(4)))
        self.law.reset()
        traj = quintic_point_to_point(q, q + 0.1, 1.0)
        traj.evaluate(0.5, q.copy(), q.copy(), q.copy())
        idx = np.arange(n, dtype=np.intp)
        gather(q, idx, q.copy())
        gather2(q, q, idx, q.copy(), q.copy())
        self.saturation.update(q, np.zeros(n, dtype=np.bool_))
        self.saturation.reset()
        from rbd_ros.control.follow_trajectory import (  # lazy: the planner, not at the controller's import
            sample_and_check,
        )

        sample_and_check(q, q, q, q, np.zeros((2, n)), np.zeros((2, n)), q, q)  # a goal's checks
        if self.law.task_space:
            move = CartesianMove(np.eye(4), np.eye(4), 0.0, 1.0)
            move.evaluate(0.5, np.empty((4, 4)), np.empty(6), np.empty(6))
            move.pose_at(0.5)
        elif self.model.dof:  # IK for target poses: its kernels on the worker, first (issue 39)
            self._ik = LatestJob(self._ik_job, "rbd_ros-ik",
                                 lambda exc: self.log("error", f"target pose refused: {exc!r}"))
            if self.ik_warm_up_on_worker:
                self._ik.submit(self._warm_ik)
            else:
                self._warm_ik()

    def _warm_ik(self) -> None:
        """The IK worker's first job: solve one pose, which loads the IK kernels (on a cold cache
        compiles them: seconds, which the node's start no longer waits for)."""
        robot = self._tool_robot()
        q = np.clip(np.zeros(self.model.dof), self.model.lower, self.model.upper)
        robot.ik(robot.fk(q), seeds=q, timeout=IK_TIMEOUT)

    def _ik_job(self, job: Any) -> None:
        """The IK worker's job: the warm-up (a callable) or a target pose (``_solve_pose``)."""
        if callable(job):
            job()
        else:
            self._solve_pose(job)

    def _tool_robot(self) -> Any:
        """An ``rbd_ros.Robot`` of the model for IK and forward kinematics off the cycle (its
        own workspace: the law's is the cycle's)."""
        if self._robot is None:
            from rbd_ros.robot import Robot  # lazy: the robot front, not at the controller's import

            self._robot = Robot(self.model)
        return self._robot

    def close(self) -> None:
        """Stop the IK and planning workers (daemon threads: also end with the process)."""
        if self._ik is not None:
            self._ik.close()
        self._planner.close()

    # ---- inputs -------------------------------------------------------------------------------
    def joint_state(self, names: list[str], pos: Any, vel: Any, t: float) -> bool:
        """A measured state at control time ``t``; False if it was ignored (joints missing)."""
        if names != self._state_names and not self._new_state_order(names):
            return False
        if len(pos) != len(names):
            return self._ignored(("lengths", len(names), len(pos)),
                                 f"/joint_states has {len(pos)} positions for {len(names)} names")
        if not isinstance(pos, np.ndarray):  # a message's array.array: a view, not a copy
            pos = np.frombuffer(pos)
        if len(vel) == len(names):
            if not isinstance(vel, np.ndarray):
                vel = np.frombuffer(vel)
            gather2(pos, vel, self._state_index, self.q, self.qd)
        else:
            gather(pos, self._state_index, self.q)
            if not self._no_velocity_warned:
                self.log("warn", "/joint_states has no velocities: estimating them by finite "
                                 "differences")
                self._no_velocity_warned = True
            dt = t - self.t
            if self.have_state and dt > 0:
                np.subtract(self.q, self.q_prev, out=self.qd)
                self.qd /= dt
            else:
                self.qd[:] = 0.0
            self.q_prev[:] = self.q
        if t < self.t - CLOCK_JUMP:
            self._clock_jumped(t)
        self.t = t
        self.last_state_wall = time.monotonic()
        if self.stale:
            self.stale = False
            self.log("info", "/joint_states fresh again: commanding")
        if not self.have_state:
            if self.on_first_state is not None:
                self.on_first_state(self.q)
            self.reference = HoldPosition(self.q)
            with self._pending_lock:  # a reference arriving now queues before or sees the state
                self.have_state = True
                pending, self._pending = self._pending, []
            for handler, early in pending:
                handler(early)
        return True

    def _queued_before_state(self, handler: Callable[[Any], bool], msg: Any, what: str) -> bool:
        """True when no state came yet: the reference is kept for the first state (the newest
        ``PENDING_BEFORE_STATE``, older ones dropped) and said once per kind ``what``."""
        if self.have_state:
            return False
        with self._pending_lock:
            if self.have_state:
                return False
            self._keep_early(self._pending, (handler, msg), what, "received before any /joint_states")
        return True

    def _keep_early(self, queue: list, item: Any, what: str, when: str) -> None:
        """``item`` appended to ``queue``, which keeps the newest ``PENDING_BEFORE_STATE`` (a
        publisher streaming before the first state grows neither it nor the log): the wait is
        said once per kind ``what``, a drop once."""
        queue.append(item)
        dropped = len(queue) - PENDING_BEFORE_STATE
        del queue[:max(0, dropped)]
        if what not in self._early_said:
            self._early_said.add(what)
            self.log("info", f"{what} {when}: it starts with the first state")
        if dropped > 0 and "dropped" not in self._early_said:
            self._early_said.add("dropped")
            self.log("info", f"references dropped {when.removeprefix('received ')}: only the newest "
                             f"{PENDING_BEFORE_STATE} are kept for the first state")

    def _clock_jumped(self, t: float) -> None:
        """The states' time went back by more than ``CLOCK_JUMP`` s: their clock changed
        (unstamped states timed by the node clock, then stamped ones from a simulation starting
        at 0).  A reference planned on the old clock would wait for its time: it is replaced by
        a hold where it is now, and one line says so (a hold alone needs nothing)."""
        self.law.reset()  # (the integral's time)
        self._seq += 1  # a trajectory or pose still being planned, on the old clock, is dropped
        if (self._refs.item is None and self.cartesian is None
                and isinstance(self.reference, HoldPosition)):
            return
        q = self._current_reference(self.t)[0]
        reference, cartesian = HoldPosition(q), None
        if self.cartesian is not None:
            T = self.cartesian.pose_at(self.t)
            cartesian = CartesianMove(T, T, t, 0.0)
        self._refs.item = None  # (the cycle thread: nothing to race)
        self.reference, self.cartesian = reference, cartesian
        self._watch = self._effort = None
        self.ref.feedforward = False
        self.log("warn", f"the states' time went back from t = {self.t:.3f} s to {t:.3f} s (their "
                         "clock changed: unstamped states, then stamped ones?): holding the "
                         "reference where it was; send references again")

    def _ignored(self, cause: tuple, what: str) -> bool:
        """An ignored state (False), said once per distinct cause: a gripper's own
        ``/joint_states`` lacking the arm's joints, then a driver's message of the wrong length,
        each once (one flag for all said only the first; a length mismatch said nothing).  At
        most ``IGNORED_CAUSES`` causes are kept, so a publisher of ever-new names cannot grow it."""
        if cause not in self._ignored_said and len(self._ignored_said) < IGNORED_CAUSES:
            self._ignored_said.add(cause)
            self.log("error", f"{what}: ignored")
        return False

    def _new_state_order(self, names: list[str]) -> bool:
        """Where the model's joints are in ``names`` (False, logged once, if some are missing).
        Its own method: a comprehension over ``names`` in ``joint_state`` would make ``names``
        a closure cell, allocated on every call."""
        try:
            index = [names.index(j) for j in self.model.joint_names]
        except ValueError:
            missing = tuple(j for j in self.model.joint_names if j not in names)
            return self._ignored(("missing", missing), f"/joint_states lacks joints {list(missing)}")
        self._state_names = list(names)
        self._state_index[:] = index
        return True

    def watchdog(self, now: float, period: float = 0.05) -> bool:
        """True (once) when the latest state is older than ``state_timeout`` s at ``now``
        (``time.monotonic``): the caller sends ``tau_out`` (zeroed here) once, then nothing.
        ``period``: how often the caller calls; a call later than ``4 period`` after the
        previous one means this process was busy (states may be waiting, unread): the count
        restarts from ``now`` (one line says so, at most every 10 s)."""
        prev, self._watch_prev = self._watch_prev, now
        gap = now - prev
        if gap > 4.0 * period:
            self._attentive_since = now
            if self.have_state and not self.stale and now - self._busy_logged > 10.0:
                self._busy_logged = now
                self.log("warn", f"the controller itself was busy for {gap:.3f} s (its watchdog "
                                 "ran late; not a sign of stale states): states judged from now")
            return False
        if (self.have_state and not self.stale and self.state_timeout > 0
                and now - max(self.last_state_wall, self._attentive_since) > self.state_timeout):
            self.stale = True
            self.log("error", f"/joint_states older than {self.state_timeout} s (after "
                              f"{self.cycles} cycles): sent zero torque, commanding nothing "
                              "until states return")
            self.tau_out[:] = 0.0
            return True
        return False

    def _latest(self) -> tuple[Any, Any]:
        """(joint reference, Cartesian move) the cycle will use: the one handed over and not
        yet adopted, else the current one.  (The cycle adopts before it clears the slot, so a
        slot read empty means the reference attributes are already the new ones.)"""
        item = self._refs.item
        return item if item is not None else (self.reference, self.cartesian)

    def _current_reference(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The joint reference at ``t`` (fresh arrays: safe beside the cycle)."""
        q, qd, qdd = np.zeros(self.dof), np.zeros(self.dof), np.zeros(self.dof)
        reference = self._latest()[0]
        if reference is not None:
            reference.evaluate(t, q, qd, qdd)
        else:
            q[:] = self.q
        return q, qd, qdd

    def _post(self, reference: Any, cartesian: Any) -> None:
        """Hand a new reference (from a message) to the next cycle; a target pose whose IK is
        still running is superseded by it."""
        self._seq += 1
        self._refs.put((reference, cartesian))

    def hold_here(self) -> None:
        """Hold the latest measured position from the next cycle on (a managed node's
        activation, as ros2_control's joint_trajectory_controller holds on activate)."""
        if self.have_state:
            self._post(HoldPosition(self.q.copy()), None)

    def set_gains_later(self, gains: dict[str, Any]) -> None:
        """Gains (validated) for the law from the next cycle on (``ControlLaw.set_gains``)."""
        self._gains.merge(gains)

    def idle(self) -> bool:
        """No target pose waiting for its IK, no trajectory waiting for its plan."""
        return (self._ik is None or self._ik.idle()) and self._planner.idle()

    def trajectory(self, msg: Any) -> bool:
        """A ``JointTrajectory``-shaped reference (``~/joint_trajectory``, the bringup's tour);
        False (reason logged) if refused at once: joint names, a stamp on another clock.  The
        rest is planned on the planning worker (``_plan_trajectory``: the goals' planner, along
        the whole path, retimed by ``retime``), never on the caller's thread (the node's
        executor, which runs the cycle too); its answer is the worker's log line, "trajectory
        accepted: ..." or "trajectory refused: ...".  Meanwhile the cycle goes on with its
        reference; a newer reference drops a trajectory not yet handed over.  ``msg`` may also
        be a callable returning the message (a serialized message's deserialization, which
        for 10 000 points takes rclpy ~0.7 s): called on the worker, every check there."""
        if self._queued_before_state(self.trajectory, msg, "trajectory"):
            return True
        counted = not callable(msg)
        if counted:  # checked here; a serialized one is read on the worker, newest first
            if not self._trajectory_taken(msg):
                return False
            if not msg.points:
                return True
            self._seq += 1
        with self._traj_lock:  # (a refused one, read later, never drops a good one)
            self._traj_pending.append((msg, self._seq, time.monotonic(), counted))
            dropped = len(self._traj_pending) - PENDING_TRAJECTORIES
            del self._traj_pending[:max(0, dropped)]
        if dropped > 0:
            self.log("info", f"trajectory dropped: {dropped} unread, more than {PENDING_TRAJECTORIES} waiting")
        self._planner.submit(_READ)
        return True

    def _trajectory_taken(self, msg: Any) -> bool:
        """The checks a trajectory gets at once: its joint names, its stamp's clock (False,
        logged: refused); no points holds the current position."""
        try:
            names = list(msg.joint_names)
            if sorted(names) != sorted(self.model.joint_names) or len(set(names)) != len(names):
                raise ValueError(f"joint names {names} do not match the controlled joints "
                                 f"{list(self.model.joint_names)}")
            self._check_stamp(to_seconds(msg.header.stamp), self.t)
        except ValueError as exc:
            self.log("error", f"trajectory refused: {exc}")
            return False
        if not msg.points:
            self._post(HoldPosition(self.q), None)
            self.log("info", "empty trajectory: holding the current position")
        return True

    def _read_pending(self) -> tuple[Any, int, float] | None:
        """The newest trajectory waiting that passes ``_trajectory_taken`` (a serialized one
        read and checked here, then given its reference number), as a planning job; the refused
        ones logged, the older good ones dropped (a newer one came); None when none is left or
        another reference (a goal, a pose) came after it."""
        with self._traj_lock:
            pending, self._traj_pending = self._traj_pending, []
        for k in range(len(pending) - 1, -1, -1):
            msg, seq, received, counted = pending[k]
            if not counted:  # a serialized message: deserialized here, checked as trajectory() does
                msg = msg()
                if not self._trajectory_taken(msg):
                    continue  # refused (logged): an older one may still be good
            if k:
                self.log("info", f"trajectory dropped: {k} older, a newer trajectory came before they were planned")
            if not msg.points:
                return None
            with self._traj_lock:
                if self._seq != seq:
                    self.log("info", "trajectory dropped: a newer reference came while it was read")
                    return None
                if not counted:
                    self._seq += 1
                return msg, self._seq, received
        return None

    def _plan_trajectory(self, job: Any) -> None:
        """The planning worker: a trajectory planned (``_plan_trajectory_once``), again with more
        lead when its start passed meanwhile (``_startable``, as a goal), and handed to the
        cycle unless a newer reference came; one line either way.  ``job``: ``_READ``, the
        newest trajectory waiting (``_read_pending``)."""
        if self.ik_delay > 0.0:  # (the test hook of a slow worker, as for the IK)
            time.sleep(self.ik_delay)
        job = self._read_pending()
        if job is None:
            return
        msg, seq, received = job
        m = len(msg.points)
        try:
            for _ in range(PLAN_ATTEMPTS):
                if seq != self._seq:
                    self.log("info", f"trajectory dropped: {m} points, a newer reference came while it was planned")
                    return
                traj, plan, took = self._plan_trajectory_once(msg)
                if self._startable(traj.start_time, _start_at(traj), took):
                    break
            else:
                raise ValueError(f"planning took {took[1]:.3f} s ({self.t - took[0]:.3f} s of control time) for "
                                 f"{m} points, longer than the lead it was given, {PLAN_ATTEMPTS} times: the "
                                 "start passed every time (a loaded machine?); send it again")
        except ValueError as exc:  # (GoalError is one)
            self.log("error", f"trajectory refused: {exc}")
            return
        with self._refs.lock:  # checked and handed over at once: a reference posted since wins
            current = seq == self._seq
            if current:
                self._refs.item = (traj, None)
        if not current:
            self.log("info", f"trajectory dropped: {m} points, a newer reference came while it was planned")
            return
        note = plan.summary()
        self.log("info", f"trajectory accepted: {m} points, {took[4]}, {traj.end_time - traj.start_time:.3f} s "
                         f"from t = {traj.start_time:.3f}{'; ' + note if note else ''} (planned in "
                         f"{time.monotonic() - received:.3f} s, off the control cycle)")

    def _plan_trajectory_once(self, msg: Any) -> tuple[Any, Any, Any]:
        """``(reference, Plan, took)`` of a ``JointTrajectory`` through the goals' planner
        (``follow_trajectory.plan_reference`` under ``plan_limits``, by ``retime``): from the
        reference at its start, the header stamp, or when planned (``plan_lead`` after now)
        when the stamp is 0, past or nearer than that; a retimed trajectory keeps its start
        and runs longer.  ``ValueError`` with the reason (nothing changes)."""
        from rbd_ros.control.follow_trajectory import (  # lazy: the planner, not at the controller's import
            join_lead,
            plan_from_start,
        )

        now, wall = self.t, time.monotonic()
        names = list(msg.joint_names)
        cols = [names.index(j) for j in self.model.joint_names]
        _, tfs, P, V, A = from_joint_trajectory(msg)
        P = P[:, cols]  # model order
        V, A = (None if X is None else X[:, cols] for X in (V, A))
        lo, hi = self.model.lower, self.model.upper
        bad = np.flatnonzero(((P < lo - 1e-9) | (P > hi + 1e-9)).any(axis=0))
        if bad.size:
            raise ValueError(f"positions outside the joint limits for "
                             f"{[self.model.joint_names[i] for i in bad]}")
        stamp = to_seconds(msg.header.stamp)
        self._check_stamp(stamp, now)
        t0 = max(stamp, now + self.plan_lead(len(tfs)))
        running = self._latest()[0]
        previous = running if t0 > now else None
        start, limits = self._current_reference(t0), self.plan_limits()
        lead, joined = join_lead(tfs, P[0], start[0], limits, self.retime)  # a point at 0 away: no jump
        traj, plan, _, kind = plan_from_start(t0, tfs, P, V, A, start, lead, joined, limits, self.retime,
                                              self.interpolation, previous)
        return traj, plan, (now, time.monotonic() - wall, len(tfs), running, kind)

    def follow_goal(self, goal: Any, defaults: Any, retime: str | None = None) -> Any:
        """A ``FollowJointTrajectory``-shaped goal: planned (``plan_goal``) and handed to the
        next cycle (``start_goal``), planned again with more lead when its start passed
        meanwhile; its ``GoalExecution``, or ``GoalError`` (code and reason; nothing changes).
        ``rbd_ros.control.follow_trajectory`` has the semantics."""
        from rbd_ros.control.follow_trajectory import (  # lazy: the planner, not at the controller's import
            INVALID_GOAL,
            GoalError,
        )

        for _ in range(PLAN_ATTEMPTS):
            execution = self.plan_goal(goal, defaults, retime)
            if self.start_goal(execution):
                return execution
        raise GoalError(INVALID_GOAL, self.late_reason())

    def plan_goal(self, goal: Any, defaults: Any, retime: str | None = None) -> Any:
        """The ``GoalExecution`` of a goal (``follow_trajectory.plan_goal``: checks along the
        whole path, retiming by ``retime``, default ``self.retime``), planned in the caller's
        thread -- never the cycle's, under no lock the cycle takes: the cycle goes on with its
        reference meanwhile -- to start ``plan_lead`` s of control time after now (0 until a
        plan missed its start, ``start_goal``); until its start the reference in use goes on.
        Efforts in the points are refused by a law that cannot add them.  ``GoalError``;
        nothing changes."""
        from rbd_ros.control import follow_trajectory as ft  # lazy: the planner, not at the controller's import

        if not self.have_state:
            raise ft.GoalError(ft.INVALID_GOAL, "no /joint_states yet: send the goal once states flow")
        points = len(goal.trajectory.points)
        now, wall = self.t, time.monotonic()
        running = self._latest()[0]
        execution = ft.plan_goal(goal, self.model, now + self.plan_lead(points), self._current_reference,
                                 running, defaults, self.interpolation, FUTURE_STAMP,
                                 retime=retime or self.retime, limits=self.plan_limits())
        if execution.plan.efforts is not None and not ft.takes_efforts(self.law.name):
            raise ft.GoalError(ft.INVALID_GOAL, f"the points carry efforts, which the {self.law.name} law "
                                                f"cannot add ({' and '.join(ft.FEED_FORWARD_LAWS)} add "
                                                "them as a feed-forward torque): send them without effort")
        if execution.spline.previous is None and running is not None:
            execution.spline.previous = running  # until its start: the reference in use goes on
        if self.law.task_space:  # a force law's contact, named by the result (issue 41.3)
            from rbd_ros.control.force_laws import contact_note  # lazy: the force laws, not at the controller's import

            execution.contact = lambda: contact_note(self.law)
        execution.took = self._plan_took = (now, time.monotonic() - wall, points, running)  # (its own: plans race)
        return execution

    def plan_limits(self) -> Any:
        """The limits goals are planned under (``path_limits.PathLimits``): the model's
        position and velocity limits, ``acceleration_limits``, the law's effort limits (the
        ``effort_limit`` gain tightens the model's); built once, again when those change.  A
        mobile manipulator's arm (``MobileControlLoop``: its whole-body law's limits are the
        base's, then the arm's) is checked without the effort: its torques depend on how the
        base moves, which a joint trajectory does not say."""

        from rbd_ros.control.path_limits import PathLimits  # lazy: the path limits, not at the controller's import

        limit = np.asarray(self.law.limit, dtype=float)
        limit = limit[limit.size - self.dof:]  # (a whole-body law's: the arm's, after the base's)
        cached = self._limits
        if cached is None or cached[0] is not self.acceleration_limits or not np.array_equal(cached[1], limit):
            mobile = getattr(self.model, "base_type", None) in MOBILE_BASES
            robot: dict[str, Any] = {"robot": None} if mobile else {}
            base = PathLimits.from_model(self.model, self.acceleration_limits, **robot)
            self._limits = (self.acceleration_limits, limit.copy(),
                            replace(base, effort_limit=np.minimum(base.effort_limit, limit)))
        return self._limits[2]

    def warm_planner(self) -> None:
        """Load the planner's kernels and TOPP-RA (~3 s the first time in a process) by
        planning one small goal, retimed, on a private reference: the node calls it on a
        thread of its own at start, so that the first goal is planned at full speed."""

        from rbd_ros.control import follow_trajectory as ft  # lazy: the planner, not at the controller's import

        n, names = self.model.dof, list(self.model.joint_names)
        q = np.clip(np.zeros(n), self.model.lower, self.model.upper)
        stamp = NS(sec=0, nanosec=0)
        point = NS(time_from_start=NS(sec=1, nanosec=0), positions=list(q), velocities=[], accelerations=[],
                   effort=[])
        goal = NS(trajectory=NS(header=NS(stamp=stamp), joint_names=names, points=[point]),
                  multi_dof_trajectory=NS(joint_names=[], points=[]), path_tolerance=[], goal_tolerance=[],
                  component_path_tolerance=[], component_goal_tolerance=[], goal_time_tolerance=stamp)
        hold = HoldPosition(q)
        ft.plan_goal(goal, self.model, 0.0, lambda t: (q.copy(), np.zeros(n), np.zeros(n)), hold,
                     retime="always", limits=self.plan_limits())

    def plan_lead(self, points: int) -> float:
        """Control time (s) planning ``points`` points is expected to take: 1.5 x the last
        measured rate (control time per point, 50 points of fixed cost), 0 before any plan
        missed its start."""
        if self._lead_rate is None:
            return 0.0
        return MIN_LEAD + 1.5 * self._lead_rate * (points + 50)

    def start_goal(self, execution: Any) -> bool:
        """Hand a planned goal to the next cycle if its start is still ahead of the control
        time, or if the reference it was planned from has not moved since (a hold: the plan is
        moved to start now, ``GoalExecution.start_at``); else False, nothing changes: plan
        again, with the lead learnt here.  A goal never starts in its own past: no part of it
        is skipped, and the reference never jumps; nor from a reference no longer in use (another
        goal started, or a cancel's hold, while it was planned: False, plan again from this one)."""
        took = getattr(execution, "took", None) or self._plan_took
        if took is not None and self._latest()[0] is not took[3]:
            return False
        if not self._startable(execution.start_time, execution.start_at, took):
            return False
        self._post(execution, None)
        return True

    def _startable(self, start_time: float, start_at: Callable[[float], None], took: Any) -> bool:
        """``start_goal``'s rule for a plan starting at ``start_time`` made from ``took =
        (control time, wall s, points, reference in use)``; learns the lead (``plan_lead``)."""
        late = start_time < self.t
        if took is not None:  # control time per point this plan took, until now
            rate = (self.t - took[0]) / (took[2] + 50)
            old = self._lead_rate
            if late:
                self._lead_rate = max(rate, 2.0 * old if old else rate)
            elif old is not None:
                self._lead_rate = max(rate, 0.9 * old)
        if late and took is not None and self._unmoved(took[3], start_time, self.t):
            start_at(self.t)
            late = False
        return not late

    def _unmoved(self, planned_from: Any, t0: float, t1: float) -> bool:
        """The reference in use is still ``planned_from`` and rests at one place over
        ``[t0, t1]`` (the state the plan starts from is the same at ``t1``)."""
        if self._latest()[0] is not planned_from or planned_from is None:
            return False
        a, b = self._current_reference(t0), self._current_reference(t1)
        return (np.array_equal(a[0], b[0]) and not a[1].any() and not a[2].any()
                and not b[1].any() and not b[2].any())

    def late_reason(self) -> str:
        """Why a goal could not start (its plans kept missing their starts)."""
        took = getattr(self, "_plan_took", (self.t, math.nan, 0, None))
        return (f"planning took {took[1]:.3f} s ({self.t - took[0]:.3f} s of control time) for {took[2]} "
                f"points, longer than the lead it was given, {PLAN_ATTEMPTS} times: the start "
                "passed every time (a loaded machine?); send the goal again")

    def runs(self, reference: Any) -> bool:
        """``reference`` is the joint reference in use (or handed over) and no Cartesian move
        overrides it: False once another reference replaced it."""
        joint, cartesian = self._latest()
        return joint is reference and cartesian is None

    def target_pose(self, msg: Any) -> bool:
        """A ``PoseStamped``-shaped Cartesian target (task-space laws); False if refused."""

        if self._queued_before_state(self.target_pose, msg, "target pose"):
            return True
        try:
            frame = msg.header.frame_id
            if frame not in ("", self.model.base_link):
                raise ValueError(f"frame '{frame}' is not the base frame '{self.model.base_link}'")
            p, o = msg.pose.position, msg.pose.orientation
            T1 = pose_matrix([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
            if not np.isfinite(T1).all():
                raise ValueError("pose contains NaN or Inf")
            if not self.law.task_space:  # IK on the worker: the cycle goes on meanwhile
                self._seq += 1
                # not task-space: warm made the worker (a model with joints)
                cast(LatestJob, self._ik).submit((T1, self._seq, time.monotonic()))
                return True
            now = self.t
            reference, cartesian = self._latest()
            if cartesian is not None:
                T0 = cartesian.pose_at(now)
            else:
                T0 = self._tool_robot().fk(self._current_reference(now)[0])
            move = CartesianMove(T0, T1, now, self.pose_duration)
        except ValueError as exc:
            self.log("error", f"target pose refused: {exc}")
            return False
        self._post(reference, move)
        self.log("info", f"target pose accepted: p = {np.round(T1[:3, 3], 4).tolist()}, "
                         f"{self.pose_duration:.3f} s")
        return True

    def _check_stamp(self, stamp: float, now: float) -> None:
        """``ValueError`` for a stamp on another clock than the states' (module docstring)."""
        if stamp - now > FUTURE_STAMP:
            raise ValueError(f"header stamp {stamp:.3f} s is {stamp - now:.0f} s after the latest "
                             f"/joint_states (t = {now:.3f} s): stamped on another clock? Stamp it "
                             "on the states' clock, or 0 to start on receipt")

    def _solve_pose(self, job: tuple[np.ndarray, int, float]) -> None:
        """The IK worker (joint-space laws): ``T1`` by IK seeded with the current reference,
        then a rest-to-rest joint move of ``pose_duration`` s (a step if 0) from where the
        reference is once solved, handed to the cycle; refused (logged) when no solution
        lies inside the limits."""
        T1, seq, received = job
        if self.ik_delay > 0.0:
            time.sleep(self.ik_delay)
        res = self._tool_robot().ik(T1, seeds=self._current_reference(self.t)[0], timeout=IK_TIMEOUT)
        if not res.solved:
            self.log("error", f"target pose refused: no joint solution inside the limits (best pose "
                              f"{res.position_errors:.3g} m, {res.orientation_errors:.3g} rad away)")
            return
        if seq != self._seq:
            self.log("info", "target pose dropped: a newer reference came while its IK ran")
            return
        if self.pose_duration <= 0.0:
            self._refs.put((HoldPosition(res.positions), None))
            self.log("info", f"target pose accepted: IK q = {np.round(res.positions, 4).tolist()}, a step "
                             f"(IK took {time.monotonic() - received:.3f} s, off the control cycle)")
            return
        for _ in range(PLAN_ATTEMPTS):  # the move from where the reference is when planned
            move, note, took = self._plan_pose_move(res.positions)
            if move is None:
                return
            if seq != self._seq:
                self.log("info", "target pose dropped: a newer reference came while its move was planned")
                return
            if self._startable(move.start_time, _start_at(move), took):
                break
        else:
            self.log("error", f"target pose refused: {self.late_reason()}")
            return
        self._refs.put((move, None))
        self.log("info", f"target pose accepted: IK q = {np.round(res.positions, 4).tolist()}, "
                         f"{move.end_time - move.start_time:.3f} s from t = {move.start_time:.3f}"
                         f"{'; ' + note if note else ''} (IK and plan took "
                         f"{time.monotonic() - received:.3f} s, off the control cycle)")

    def _plan_pose_move(self, q1: np.ndarray) -> tuple[Any, str, Any]:
        """A rest-to-rest joint move to ``q1`` of ``pose_duration`` s from the reference at a
        start ``plan_lead`` ahead, through the goals' planner (``follow_trajectory
        .plan_reference``: checked along its whole path, retimed by ``retime``); ``(None, "",
        None)`` when refused (logged)."""
        from rbd_ros.control.follow_trajectory import (  # lazy: the planner, not at the controller's import
            GoalError,
            plan_reference,
        )

        now, wall = self.t, time.monotonic()
        running = self._latest()[0]
        t0 = now + self.plan_lead(1)
        z = np.zeros((1, self.dof))
        move = JointSpline.from_points(t0, [self.pose_duration], q1[None], z, z,
                                       start=self._current_reference(t0),
                                       interpolation=self.interpolation, previous=running)
        try:
            move, plan = plan_reference(move, self.plan_limits(), self.retime)
        except GoalError as exc:
            self.log("error", f"target pose refused: {exc}")
            return None, "", None
        return move, plan.summary(), (now, time.monotonic() - wall, 1, running)

    # ---- the cycle ----------------------------------------------------------------------------
    def cycle(self, t: float) -> np.ndarray:
        """Reference at ``t``, law, saturated torque ``tau_out`` (``joints`` order); also fills
        ``ref_out`` / ``q_out`` (reference and measured q in ``joints`` order)."""
        self._adopt()
        ref = self.ref
        if self.cartesian is not None:
            self.cartesian.evaluate(t, ref.T, ref.v, ref.a)
            ref.joint, ref.task, ref.feedforward = False, True, False
            ref.q.fill(math.nan)
        else:
            self.reference.evaluate(t, ref.q, ref.qd, ref.qdd)
            ref.joint, ref.task = True, False
            if self._watch is not None:  # a goal's tolerances (rbd_ros.control.follow_trajectory)
                self._watch(t, self.q, self.qd, ref.q, ref.qd)
            if self._effort is not None:  # a goal's efforts: the law's feed-forward
                self._feed_forward(t, ref)
        law = self.law
        tau = law.compute(t, self.q, self.qd, ref)
        if self._blend_from is not None:
            tau = self._blend(t, tau, ref)
        if law.fault:
            if not self._fault_logged:
                self.log("error", f"{law.status}")
                self._fault_logged = True
        elif self._fault_logged:
            self.log("info", "inputs finite again: control resumed")
            self._fault_logged = False
        self.saturation.update(tau, law.saturated)
        gather(tau, self.cmd_index, self.tau_out)
        gather2(ref.q, self.q, self.cmd_index, self.ref_out, self.q_out)
        self.cycles += 1
        return self.tau_out

    def _blend(self, t: float, tau: np.ndarray, ref: Any) -> np.ndarray:
        """A swapped law's first ``SWAP_CYCLES`` cycles: ``(1 - a) tau_old + a tau_new`` with
        ``a = k / SWAP_CYCLES`` (module docstring); both saturated, so the blend is too."""
        self._blend_k += 1
        a = self._blend_k / SWAP_CYCLES
        old = self._blend_from.compute(t, self.q, self.qd, ref)
        out = self._tau_blend
        np.multiply(old, 1.0 - a, out=out)
        out += a * tau
        if self._blend_k >= SWAP_CYCLES:
            self._blend_from = None
        return out

    def swap_model(self, model: Any, law: Any) -> str | None:
        """Hand ``model`` and its ``law`` (built by the caller off the cycle: ``model_swap
        .law_for_model``) to the next cycle; the reason (nothing changes) when refused
        (``model_swap.swap_refusal``, or the law failing on the latest state).  Runs in the
        caller's thread: the law's kernels and a tool robot are loaded here, not in the cycle."""
        from rbd_ros.control.model_swap import swap_refusal  # lazy: the model swap, not at the controller's import

        reason = swap_refusal(self.model, model)
        if reason is None and (law.name != self.law.name or law.dof != self.dof):
            reason = f"the new law is a {law.name} on {law.dof} joints, the running one a {self.law.name}"
        if reason is not None:
            return reason
        q, qd = self.q.copy(), self.qd.copy()
        law.compute(self.t if math.isfinite(self.t) else 0.0, q, qd, Reference(self.dof).set_joint(q))
        if law.fault:
            return f"the new model's law fails at the latest state: {law.status}"
        law.reset()
        if law.task_space:
            law.compute(0.0, q, qd, Reference(self.dof).set_task(np.eye(4)))
            law.reset()
        from rbd_ros.robot import Robot  # lazy: the robot front, not at the controller's import

        self._swap.put((model, law, Robot(model)))
        return None

    def _adopt_model(self) -> None:
        """A swapped model handed over (``swap_model``): the new law from this cycle on, the
        old one's torque blended out (``_blend``)."""
        item = self._swap.take()
        if item is None:
            return
        model, law, robot = item
        law.set_gains({k: v for k, v in self.law.gains.items() if k in self._gains_changed_since(law)})
        self._blend_from = self.law if self._blend_from is None else self._blend_from
        self._blend_k = 0
        self.law, self.model, self._robot, self._limits = law, model, robot, None
        if self.on_swap is not None:
            self.on_swap(model, law)

    def _gains_changed_since(self, law: Any) -> tuple[str, ...]:
        """Gains changed at runtime (``set_gains_later``) since ``law`` was built from the
        running law, that are not the model's: kept."""
        return tuple(k for k, src in law.gain_source.items() if src != "model"
                     and k in self.law.gains and k in law.gains
                     and not np.array_equal(self.law.gains[k], law.gains[k]))

    def _adopt(self) -> None:
        """At the start of a cycle: a model, a reference or gains handed over, if any (never
        waits)."""
        if self._swap.item is not None:
            self._adopt_model()
        refs = self._refs
        if refs.item is not None and refs.lock.acquire(blocking=False):
            item = refs.item
            if item is not None:
                self.reference, self.cartesian = item
                self._fold_offset()
                self._watch = getattr(self.reference, "watch", None)
                plan = getattr(self.reference, "plan", None)
                self._effort = getattr(plan, "efforts", None)
                if self._effort is None:
                    ref = self.ref
                    ref.feedforward = False
                    ref.effort.fill(0.0)
                refs.item = None
            refs.lock.release()
        if self._gains.item is not None:
            gains = self._gains.take()
            if gains is not None:
                self.law.set_gains(gains)

    def _feed_forward(self, t: float, ref: Any) -> None:
        """``ref.effort``: the goal's efforts at ``t`` (linear between its points) from its
        start on, frozen while it holds after a violation, zero before its start."""
        goal = self.reference
        if t < goal.start_time:
            ref.effort.fill(0.0)
        elif not goal.holding:
            self._effort.evaluate(t, ref.effort, *self._effort_scratch)
        ref.feedforward = True

    def _fold_offset(self) -> None:
        """A new Cartesian move starts where the law's compliant reference is (an admittance's
        offset along free axes folded into its start: ``Admittance.fold_offset``)."""
        move = self.cartesian
        fold = getattr(self.law, "fold_offset", None)
        if move is None or fold is None:
            return
        T0 = move.T0.copy()
        if fold(T0):
            self.cartesian = CartesianMove(T0, move.T1, move.t0, move.duration)

    def saturation_report(self) -> dict[str, Any]:
        """``SaturationStats.report`` in the ``joints`` order, with the limits (N m; None for
        none) and the joint names."""
        report = self.saturation.report(self.cycles, self.cmd_index)
        limit = self.law.limit[self.cmd_index]
        return {"joints": list(self.joints),
                "effort_limit": [float(x) if math.isfinite(x) else None for x in limit], **report}

    def saturation_warnings(self, report: dict[str, Any]) -> list[str]:
        """Warning lines for the joints of ``report`` past 1 % (once per crossing)."""
        return self.saturation.crossings(report, self.joints, self.law.limit, self.cmd_index)
