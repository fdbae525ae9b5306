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
  position; references received before the first state start with it;
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
construction (``warm_up`` solves one pose); the move starts from where the reference is when
the solution is ready.  A reference received after a pose but before its IK finished wins (the
IK result is dropped, with a line saying so).  The watchdog judges the states' arrival only
over the time the controller itself was attentive: when its own calls were late (the process
was busy or not scheduled), it restarts the count rather than blaming the states.

One clock: every time here (states, references, the cycle) is the states' control time — the
stamps of ``/joint_states`` (issue 27).  The caller runs ``cycle(t)`` at the latest state's time,
whatever triggers it.  A reference stamped more than ``FUTURE_STAMP`` s after the latest state is
refused: it was stamped on another clock (wall time against a simulation's states).  States
whose time goes back by more than ``CLOCK_JUMP`` s changed clock (the node times unstamped
states by its own clock: a simulation's first states at t = 0, then stamped ones): the reference
then holds where it is (one warning line; nothing when it was holding anyway).

Test hook: the environment variable ``RBD_ROS_TEST_IK_DELAY`` (s) makes the IK worker sleep that
long before each solve (a slow solver, to show the cycle does not wait for it).
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rbd_ros.algorithm.gather import gather, gather2
from rbd_ros.control.handoff import Handoff, LatestJob
from rbd_ros.control.laws import Reference
from rbd_ros.control.references import from_joint_trajectory, to_seconds
from rbd_ros.control.saturation import SaturationStats
from rbd_ros.control.trajectory import INTERPOLATIONS, CartesianMove, HoldPosition, JointSpline, quintic_point_to_point

LogFn = Callable[[str, str], None]  # (level: "info" | "warn" | "error", message)
IK_DELAY_ENV = "RBD_ROS_TEST_IK_DELAY"  # test hook: s the IK worker sleeps before each solve
FUTURE_STAMP = 3600.0  # s: a reference stamped further ahead of the states is on another clock
IK_TIMEOUT = 0.05  # s per target pose
CLOCK_JUMP = 1.0  # s: the states' time going back more than this is a change of clock


def _print_log(level: str, message: str) -> None:
    print(f"[{level}] {message}", flush=True)


class ControlLoop:
    """State, references and the law of one controller (see the module docstring)."""

    def __init__(self, model: Any, law: Any, joints: list[str] | None = None,
                 log: LogFn | None = None, state_timeout: float = 0.5,
                 interpolation: str = "auto", pose_duration: float = 2.0) -> None:
        if interpolation not in INTERPOLATIONS:
            raise ValueError(f"interpolation must be one of {INTERPOLATIONS}")
        self.model = model
        self.law = law
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
        self._missing_warned = False
        self._pending: list[tuple[Any, Any]] = []  # references received before any state
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
        self._seq = 0  # references submitted so far: an IK result older than the latest is dropped
        self._robot: Any = None  # rbd_ros.Robot for IK and fk off the cycle (its own workspace)
        self._ik: LatestJob | None = None
        self.ik_delay = float(os.environ.get(IK_DELAY_ENV, "") or 0.0)
        self._watch_prev = math.nan  # time of the watchdog's previous call
        self._attentive_since = -math.inf  # the watchdog's calls were late until then
        self._busy_logged = -math.inf
        self.saturation = SaturationStats(n)  # per joint, model order
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
        from rbd_ros.control.follow_trajectory import sample_and_check

        sample_and_check(q, q, q, q, np.zeros((2, n)), np.zeros((2, n)), q, q)  # a goal's checks
        if self.law.task_space:
            move = CartesianMove(np.eye(4), np.eye(4), 0.0, 1.0)
            move.evaluate(0.5, np.empty((4, 4)), np.empty(6), np.empty(6))
            move.pose_at(0.5)
        elif self.model.dof:  # IK for target poses: its kernels now, not with the first pose
            robot = self._tool_robot()
            q = np.clip(np.zeros(n), self.model.lower, self.model.upper)
            robot.ik(robot.fk(q), seeds=q, timeout=IK_TIMEOUT)
            self._ik = LatestJob(self._solve_pose, "rbd_ros-ik",
                                 lambda exc: self.log("error", f"target pose refused: {exc!r}"))

    def _tool_robot(self) -> Any:
        """An ``rbd_ros.Robot`` of the model for IK and forward kinematics off the cycle (its
        own workspace: the law's is the cycle's)."""
        if self._robot is None:
            from rbd_ros.robot import Robot

            self._robot = Robot(self.model)
        return self._robot

    def close(self) -> None:
        """Stop the IK worker (a daemon thread: also ends with the process)."""
        if self._ik is not None:
            self._ik.close()

    # ---- inputs -------------------------------------------------------------------------------
    def joint_state(self, names: list[str], pos: Any, vel: Any, t: float) -> bool:
        """A measured state at control time ``t``; False if it was ignored (joints missing)."""
        if names != self._state_names and not self._new_state_order(names):
            return False
        if len(pos) != len(names):
            return False
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
        """True (the reference kept for the first state, logged) when no state came yet."""
        if self.have_state:
            return False
        with self._pending_lock:
            if self.have_state:
                return False
            self._pending.append((handler, msg))
        self.log("info", f"{what} received before any /joint_states: it starts with the first state")
        return True

    def _clock_jumped(self, t: float) -> None:
        """The states' time went back by more than ``CLOCK_JUMP`` s: their clock changed
        (unstamped states timed by the node clock, then stamped ones from a simulation starting
        at 0).  A reference planned on the old clock would wait for its time: it is replaced by
        a hold where it is now, and one line says so (a hold alone needs nothing)."""
        self.law.reset()  # (the integral's time)
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
        self._watch = None
        self.log("warn", f"the states' time went back from t = {self.t:.3f} s to {t:.3f} s (their "
                         "clock changed: unstamped states, then stamped ones?): holding the "
                         "reference where it was; send references again")

    def _new_state_order(self, names: list[str]) -> bool:
        """Where the model's joints are in ``names`` (False, logged once, if some are missing).
        Its own method: a comprehension over ``names`` in ``joint_state`` would make ``names``
        a closure cell, allocated on every call."""
        try:
            index = [names.index(j) for j in self.model.joint_names]
        except ValueError:
            if not self._missing_warned:
                missing = [j for j in self.model.joint_names if j not in names]
                self.log("error", f"/joint_states lacks joints {missing}: ignored")
                self._missing_warned = True
            return False
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
        """No target pose waiting for its IK."""
        return self._ik is None or self._ik.idle()

    def trajectory(self, msg: Any) -> bool:
        """A ``JointTrajectory``-shaped reference; False (reason logged) if refused."""
        if self._queued_before_state(self.trajectory, msg, "trajectory"):
            return True
        try:
            names = list(msg.joint_names)
            if sorted(names) != sorted(self.model.joint_names) or len(set(names)) != len(names):
                raise ValueError(f"joint names {names} do not match the controlled joints "
                                 f"{list(self.model.joint_names)}")
            now = self.t
            if not msg.points:
                self._post(HoldPosition(self.q), None)
                self.log("info", "empty trajectory: holding the current position")
                return True
            cols = [names.index(j) for j in self.model.joint_names]
            m = len(msg.points)
            _, tfs, P, V, A = from_joint_trajectory(msg)
            P, V, A = (None if X is None else X[:, cols] for X in (P, V, A))  # model order
            lo, hi = self.model.lower, self.model.upper
            bad = np.flatnonzero(((P < lo - 1e-9) | (P > hi + 1e-9)).any(axis=0))
            if bad.size:
                raise ValueError(f"positions outside the joint limits for "
                                 f"{[self.model.joint_names[i] for i in bad]}")
            stamp = to_seconds(msg.header.stamp)
            self._check_stamp(stamp, now)
            t0 = stamp if stamp > now else now
            start = self._current_reference(t0)
            previous = self._latest()[0] if t0 > now else None
            traj = JointSpline.from_points(t0, tfs, P, V, A, start=start,
                                           interpolation=self.interpolation, previous=previous)
            why = traj.limit_violation(self.model.joint_names, lo, hi, self.model.velocity_limit)
            if why is not None:  # between the points (issue 19): refused, never clamped silently
                raise ValueError(why)
        except ValueError as exc:
            self.log("error", f"trajectory refused: {exc}")
            return False
        self._post(traj, None)
        self.log("info", f"trajectory accepted: {m} points, {traj.kind}, "
                         f"{traj.end_time - t0:.3f} s from t = {t0:.3f}")
        return True

    def follow_goal(self, goal: Any, defaults: Any) -> Any:
        """A ``FollowJointTrajectory``-shaped goal: its ``GoalExecution``, handed to the next
        cycle, or ``GoalError`` (code and reason; nothing changes).
        ``rbd_ros.control.follow_trajectory`` has the semantics."""
        from rbd_ros.control.follow_trajectory import INVALID_GOAL, GoalError, plan_goal

        if not self.have_state:
            raise GoalError(INVALID_GOAL, "no /joint_states yet: send the goal once states flow")
        execution = plan_goal(goal, self.model, self.t, self._current_reference, self._latest()[0],
                              defaults, self.interpolation, FUTURE_STAMP)
        self._post(execution, None)
        return execution

    def runs(self, reference: Any) -> bool:
        """``reference`` is the joint reference in use (or handed over) and no Cartesian move
        overrides it: False once another reference replaced it."""
        joint, cartesian = self._latest()
        return joint is reference and cartesian is None

    def target_pose(self, msg: Any) -> bool:
        """A ``PoseStamped``-shaped Cartesian target (task-space laws); False if refused."""
        from rbd_ros.lie.so3 import pose_matrix

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
                self._ik.submit((T1, self._seq, time.monotonic()))
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
        now = self.t  # the move starts where the reference is now, after the IK
        if self.pose_duration <= 0.0:
            move: Any = HoldPosition(res.positions)
        else:
            z = np.zeros((1, self.dof))
            move = JointSpline.from_points(now, [self.pose_duration], res.positions[None], z, z,
                                           start=self._current_reference(now),
                                           interpolation=self.interpolation)
        self._refs.put((move, None))
        self.log("info", f"target pose accepted: IK q = {np.round(res.positions, 4).tolist()}, "
                         f"{self.pose_duration:.3f} s from t = {now:.3f} (IK took "
                         f"{time.monotonic() - received:.3f} s, off the control cycle)")

    # ---- the cycle ----------------------------------------------------------------------------
    def cycle(self, t: float) -> np.ndarray:
        """Reference at ``t``, law, saturated torque ``tau_out`` (``joints`` order); also fills
        ``ref_out`` / ``q_out`` (reference and measured q in ``joints`` order)."""
        self._adopt()
        ref = self.ref
        if self.cartesian is not None:
            self.cartesian.evaluate(t, ref.T, ref.v, ref.a)
            ref.joint, ref.task = False, True
            ref.q.fill(math.nan)
        else:
            self.reference.evaluate(t, ref.q, ref.qd, ref.qdd)
            ref.joint, ref.task = True, False
            if self._watch is not None:  # a goal's tolerances (rbd_ros.control.follow_trajectory)
                self._watch(t, self.q, self.qd, ref.q, ref.qd)
        law = self.law
        tau = law.compute(t, self.q, self.qd, ref)
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

    def _adopt(self) -> None:
        """At the start of a cycle: a reference or gains handed over, if any (never waits)."""
        refs = self._refs
        if refs.item is not None and refs.lock.acquire(blocking=False):
            item = refs.item
            if item is not None:
                self.reference, self.cartesian = item
                self._fold_offset()
                self._watch = getattr(self.reference, "watch", None)
                refs.item = None
            refs.lock.release()
        if self._gains.item is not None:
            gains = self._gains.take()
            if gains is not None:
                self.law.set_gains(gains)

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
