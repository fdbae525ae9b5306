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
  (``law.fault``, logged once per episode);
* ``watchdog(now)``: True once when the latest state is older than ``state_timeout`` s of
  ``now``'s clock (the caller then sends one zero command and stays silent until states return).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from rbd_ros.algorithm.gather import gather, gather2
from rbd_ros.control.laws import Reference
from rbd_ros.control.references import from_joint_trajectory, to_seconds
from rbd_ros.control.trajectory import INTERPOLATIONS, CartesianMove, HoldPosition, JointSpline, quintic_point_to_point

LogFn = Callable[[str, str], None]  # (level: "info" | "warn" | "error", message)


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
        self._fault_logged = False
        self._no_velocity_warned = False
        self.ref = Reference(n)
        self.reference: Any = None  # joint reference (HoldPosition / JointSpline)
        self.cartesian: Any = None  # CartesianMove for task-space laws
        self.tau_out = np.zeros(n)  # the command, ``joints`` order
        self.ref_out = np.zeros(n)  # reference q_d, ``joints`` order (NaN for a Cartesian target)
        self.q_out = np.zeros(n)  # measured q, ``joints`` order
        self.cycles = 0
        #: called with the first measured q (model order) before its reference is set: the
        #: node derives the model's gains at that pose there (``ControlLaw.derive_gains``)
        self.on_first_state: Callable[[np.ndarray], None] | None = None
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
        self.t = t
        self.last_state_wall = time.monotonic()
        if self.stale:
            self.stale = False
            self.log("info", "/joint_states fresh again: commanding")
        if not self.have_state:
            self.have_state = True
            if self.on_first_state is not None:
                self.on_first_state(self.q)
            self.reference = HoldPosition(self.q)
            pending, self._pending = self._pending, []
            for handler, early in pending:
                handler(early)
        return True

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

    def watchdog(self, now: float) -> bool:
        """True (once) when the latest state is older than ``state_timeout`` s at ``now``
        (``time.monotonic``): the caller sends ``tau_out`` (zeroed here) once, then nothing."""
        if (self.have_state and not self.stale and self.state_timeout > 0
                and now - self.last_state_wall > self.state_timeout):
            self.stale = True
            self.log("error", f"/joint_states older than {self.state_timeout} s (after "
                              f"{self.cycles} cycles): sent zero torque, commanding nothing "
                              "until states return")
            self.tau_out[:] = 0.0
            return True
        return False

    def _current_reference(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, qd, qdd = np.zeros(self.dof), np.zeros(self.dof), np.zeros(self.dof)
        if self.reference is not None:
            self.reference.evaluate(t, q, qd, qdd)
        else:
            q[:] = self.q
        return q, qd, qdd

    def trajectory(self, msg: Any) -> bool:
        """A ``JointTrajectory``-shaped reference; False (reason logged) if refused."""
        if not self.have_state:
            self._pending.append((self.trajectory, msg))
            self.log("info", "trajectory received before any /joint_states: it starts with the "
                             "first state")
            return True
        try:
            names = list(msg.joint_names)
            if sorted(names) != sorted(self.model.joint_names) or len(set(names)) != len(names):
                raise ValueError(f"joint names {names} do not match the controlled joints "
                                 f"{list(self.model.joint_names)}")
            now = self.t
            if not msg.points:
                self.reference = HoldPosition(self.q)
                self.cartesian = None
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
            t0 = stamp if stamp > now else now
            start = self._current_reference(t0)
            previous = self.reference if t0 > now else None
            traj = JointSpline.from_points(t0, tfs, P, V, A, start=start,
                                           interpolation=self.interpolation, previous=previous)
            why = traj.limit_violation(self.model.joint_names, lo, hi, self.model.velocity_limit)
            if why is not None:  # between the points (issue 19): refused, never clamped silently
                raise ValueError(why)
        except ValueError as exc:
            self.log("error", f"trajectory refused: {exc}")
            return False
        self.reference = traj
        self.cartesian = None
        self.log("info", f"trajectory accepted: {m} points, {traj.kind}, "
                         f"{traj.end_time - t0:.3f} s from t = {t0:.3f}")
        return True

    def target_pose(self, msg: Any) -> bool:
        """A ``PoseStamped``-shaped Cartesian target (task-space laws); False if refused."""
        from rbd_ros.lie.so3 import pose_matrix

        if not self.have_state:
            self._pending.append((self.target_pose, msg))
            self.log("info", "target pose received before any /joint_states: it starts with the "
                             "first state")
            return True
        try:
            frame = msg.header.frame_id
            if frame not in ("", self.model.base_link):
                raise ValueError(f"frame '{frame}' is not the base frame '{self.model.base_link}'")
            p, o = msg.pose.position, msg.pose.orientation
            T1 = pose_matrix([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])
            if not np.isfinite(T1).all():
                raise ValueError("pose contains NaN or Inf")
            now = self.t
            if not self.law.task_space:
                self.reference, q1 = self._ik_move(T1, now)
                self.log("info", f"target pose accepted: IK q = {np.round(q1, 4).tolist()}, "
                                 f"{self.pose_duration:.3f} s")
                return True
            T0 = np.empty((4, 4))
            v, a = np.zeros(6), np.zeros(6)
            if self.cartesian is not None:
                self.cartesian.evaluate(now, T0, v, a)
            else:
                q, qd, qdd = self._current_reference(now)
                self.law.task_reference(self.ref.set_joint(q, qd, qdd))
                T0[:] = self.law.ref_T
            move = CartesianMove(T0, T1, now, self.pose_duration)
        except ValueError as exc:
            self.log("error", f"target pose refused: {exc}")
            return False
        self.cartesian = move
        self.log("info", f"target pose accepted: p = {np.round(T1[:3, 3], 4).tolist()}, "
                         f"{self.pose_duration:.3f} s")
        return True

    def _ik_move(self, T1: np.ndarray, now: float) -> tuple[Any, np.ndarray]:
        """Joint-space laws: ``T1`` by IK from the current reference, then a rest-to-rest joint
        move of ``pose_duration`` s (a step if 0); ``ValueError`` if no solution inside the
        limits.  Returns the reference and the IK solution."""
        from rbd_ros.robot import Robot

        robot = self.__dict__.get("_ik_robot") or self.__dict__.setdefault("_ik_robot", Robot(self.model))
        start = self._current_reference(now)
        res = robot.ik(T1, q0=start[0], timeout=0.05)
        if not res.success:
            raise ValueError(f"no joint solution inside the limits (best pose {res.position_error:.3g} m, "
                             f"{res.orientation_error:.3g} rad away)")
        if self.pose_duration <= 0.0:  # a step
            return HoldPosition(res.q), res.q
        z = np.zeros((1, self.dof))
        return JointSpline.from_points(now, [self.pose_duration], res.q[None], z, z,
                                       start=start, interpolation=self.interpolation), res.q

    # ---- the cycle ----------------------------------------------------------------------------
    def cycle(self, t: float) -> np.ndarray:
        """Reference at ``t``, law, saturated torque ``tau_out`` (``joints`` order); also fills
        ``ref_out`` / ``q_out`` (reference and measured q in ``joints`` order)."""
        ref = self.ref
        if self.cartesian is not None:
            self.cartesian.evaluate(t, ref.T, ref.v, ref.a)
            ref.joint, ref.task = False, True
            ref.q.fill(math.nan)
        else:
            self.reference.evaluate(t, ref.q, ref.qd, ref.qdd)
            ref.joint, ref.task = True, False
        law = self.law
        tau = law.compute(t, self.q, self.qd, ref)
        if law.fault:
            if not self._fault_logged:
                self.log("error", f"{law.status}")
                self._fault_logged = True
        elif self._fault_logged:
            self.log("info", "inputs finite again: control resumed")
            self._fault_logged = False
        gather(tau, self.cmd_index, self.tau_out)
        gather2(ref.q, self.q, self.cmd_index, self.ref_out, self.q_out)
        self.cycles += 1
        return self.tau_out
