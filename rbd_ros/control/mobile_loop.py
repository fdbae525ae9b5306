"""``MobileControlLoop``: the ROS-free loop of a mobile manipulator's controller (issue 18).

A ``ControlLoop`` (arm state from ``/joint_states``, arm trajectories, watchdog: all as for an
arm) with the base added:

* **state**: the arm from ``/joint_states`` (the base entries there are ignored), the base
  from ``/odom`` (``odom``: pose in the odom frame -> ``[x, y, yaw]``, twist in the base frame
  -> ``[v_x, v_y, omega]``).  With ``sync="stamp"`` (default) a cycle runs when both carry the
  same stamp (the bridge publishes them together each step; whichever arrives second
  triggers), so the law never sees an odometry one step old; ``sync="latest"`` cycles on every
  ``/joint_states`` with the latest odometry (a robot whose odometry runs on its own clock).
* **base references** (``MobileReference``): ``base_path`` (a ``nav_msgs/Path``-shaped message
  in the odom frame, not empty, finite, unit quaternions): a C2 spline through the poses
  (``JointSpline`` over ``[x, y, yaw]``, the heading unwrapped from the current reference) from
  the current base reference, ending at rest on the last pose; times from the poses' stamps
  relative to the header's (a header stamp of 0: the pose stamps are times from start), or,
  when no pose carries a time, from the arc length at ``path_speed``.  ``cmd_vel`` (a
  ``TwistStamped``-shaped message, frame '' or the base frame, finite): the velocity law takes
  it as its command; the whole-body law drives its path reference with it (``TwistPath``),
  and the velocity law's reported reference pose is the same integral of its commands.
  Received commands are stamped with the control time of the latest state when they are
  read (so ``cmd_vel_timeout`` is in the same clock as the loop: a paused or slowed
  simulation does not age a command).  A header stamp ahead of the latest state by at most
  ``HOLD_AHEAD`` s is a time to act: the twist, checked at once, waits (up to
  ``MAX_HELD_TWISTS``, in stamp order) until the first cycle at or past its stamp, as a base
  path stamped ahead starts then; so a publisher that sends its twists a little ahead is
  followed on its own timeline however late its messages arrive (the bringup's twist
  player, 0.25 s ahead).  A stamp of 0, in the past, or further ahead (another clock: a
  teleop node on wall time beside a simulation) acts on receipt, as before; the latter is
  said once.  A refusal, or the managed node's activation, drops the held twists.  When the last
  accepted command grows older than ``cmd_vel_timeout`` the base brakes and one line says
  when, in control time (``cmd_vel timed out at t = ... s: the last command came at t =
  ... s ...``; once, until the next command).  Before the first arm state and odometry only
  the newest twist waits, and it is applied then only if it waited at most
  ``cmd_vel_timeout`` s of wall time (there is no control time yet); base paths wait as the
  arm's references do (the newest ``PENDING_BEFORE_STATE``).
* a path may come read already (``read_path``: a ``PathPoses``; the node reads a large one
  off the executor that runs the cycle);
* **refusals**: a malformed path or twist (NaN/Inf, wrong frame, empty, no timing) is refused
  with one logged line (ending ``(t = ... s)``, the control time from which the base brakes)
  and the base **stops safely**: the command becomes zero (velocity
  law) or the path reference brakes to rest at the acceleration limit from where it is
  (``TwistPath`` with no command), never a jump.

Commands: the ``joints`` order of the wheel joints (diff drive; wheel torques N m) or
``base_x, base_y, base_yaw`` (planar; base force and moment N, N m, base frame) and the arm's
joints, as the MuJoCo bridge's ``/effort_controller/commands``.  ``state_names`` /
``ref_out`` / ``q_out`` / ``effort_out``: ``base_x, base_y, base_yaw`` and the arm (``joints``
order) with the reference, the measurement and the generalized effort ``[F_x, F_y, M_z, arm]``.
"""
from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from rbd_ros.control.loop import ControlLoop, LogFn
from rbd_ros.control.mobile_laws import MobileReference, RateLimitedTwist
from rbd_ros.control.references import to_seconds
from rbd_ros.control.trajectory import HoldPosition, JointSpline

BASE_STATE_NAMES = ("base_x", "base_y", "base_yaw")
SYNCS = ("stamp", "latest")
DEFAULT_PATH_SPEED = 0.3  # m/s along an untimed path
HOLD_AHEAD = 1.0  # s: a cmd_vel stamped at most this far ahead of the latest state waits for its time
MAX_HELD_TWISTS = 1000  # twists held at once (0.25 s ahead at 100 Hz: 25)


def yaw_of(x: float, y: float, z: float, w: float) -> float:
    """The yaw (about z) of the quaternion ``(x, y, z, w)``."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


@dataclass
class PathPoses:
    """A ``nav_msgs/Path``-shaped message read into arrays (``read_path``): its frame, header
    stamp (s), poses ``[x, y, yaw]`` (m, 3) and pose stamps (m,); ``error`` the reason a
    malformed one is refused ("" when well formed)."""

    frame: str
    head: float
    P: np.ndarray
    stamps: np.ndarray
    error: str = ""


def read_path(msg: Any) -> PathPoses:
    """The arrays of a path (``PathPoses``), without the loop's state: a node reads a large path
    off its cycle's executor (10 000 poses: ~0.2 s here, after rclpy's ~0.4 s to deserialize
    it), then ``base_path`` checks and plans it in the cycle."""
    frame, head = msg.header.frame_id, to_seconds(msg.header.stamp)
    rows = [(ps.pose.position.x, ps.pose.position.y, ps.pose.position.z, ps.pose.orientation.x,
             ps.pose.orientation.y, ps.pose.orientation.z, ps.pose.orientation.w) for ps in msg.poses]
    stamps = np.array([to_seconds(ps.header.stamp) for ps in msg.poses], dtype=float)
    if not rows:
        return PathPoses(frame, head, np.zeros((0, 3)), stamps, "the path is empty")
    X = np.array(rows, dtype=float)
    quat = X[:, 3:]
    finite = np.isfinite(X).all(axis=1)
    norm = np.linalg.norm(np.where(finite[:, None], quat, 0.0), axis=1)
    bad = np.flatnonzero(~finite | (np.abs(norm - 1.0) > 1e-3))
    error = ""
    if bad.size:
        k = int(bad[0])
        error = (f"pose {k} contains NaN or Inf" if not finite[k]
                 else f"pose {k} has a quaternion of norm {norm[k]:.4g}, not 1")
    x, y, z, w = quat.T
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))  # (yaw_of, every pose)
    return PathPoses(frame, head, np.column_stack([X[:, 0], X[:, 1], yaw]), stamps, error)


class TwistPath:
    """A base path driven by a twist: the pose integrates the rate-limited reference twist
    (``RateLimitedTwist``, base frame of the reference heading) from ``start``; with no
    (fresh) command it brakes to rest.  ``evaluate(t, p, pd, pdd)`` as a ``JointReference`` over
    ``[x, y, yaw]`` (world rates ``pd = [R w_xy, w_z]``, ``pdd = [R (w' + w_z S w), w_z']``);
    called with increasing ``t`` (once per cycle)."""

    def __init__(self, start: np.ndarray, twist0: np.ndarray, t0: float, limiter: RateLimitedTwist) -> None:
        self.p = np.array(start, dtype=float)
        self.limiter = limiter
        limiter.w[:] = twist0
        limiter.t_prev = t0
        self.cmd = np.zeros(3)
        self.cmd_time = -math.inf
        self.t = t0

    def command(self, twist: np.ndarray, t: float) -> None:
        self.cmd[:] = twist
        self.cmd_time = t

    def evaluate(self, t: float, p: np.ndarray, pd: np.ndarray, pdd: np.ndarray) -> None:
        lim = self.limiter
        if t > self.t:
            lim.update(t, self.cmd, self.cmd_time)
            dt = t - self.t
            c, s = math.cos(self.p[2] + 0.5 * lim.w[2] * dt), math.sin(self.p[2] + 0.5 * lim.w[2] * dt)
            self.p[0] += dt * (c * lim.w[0] - s * lim.w[1])  # midpoint heading
            self.p[1] += dt * (s * lim.w[0] + c * lim.w[1])
            self.p[2] += dt * lim.w[2]
            self.t = t
        w, wd = lim.w, lim.wd
        c, s = math.cos(self.p[2]), math.sin(self.p[2])
        p[:] = self.p
        pd[0], pd[1], pd[2] = c * w[0] - s * w[1], s * w[0] + c * w[1], w[2]
        ax, ay = wd[0] - w[2] * w[1], wd[1] + w[2] * w[0]
        pdd[0], pdd[1], pdd[2] = c * ax - s * ay, s * ax + c * ay, wd[2]


class MobileControlLoop(ControlLoop):
    """State, references and the mobile law of one controller (module docstring)."""

    def __init__(self, robot: Any, law: Any, joints: list[str] | None = None, log: LogFn | None = None,
                 state_timeout: float = 0.5, interpolation: str = "auto", odom_frame: str = "odom",
                 base_frame: str = "", sync: str = "stamp", path_speed: float = DEFAULT_PATH_SPEED) -> None:
        if sync not in SYNCS:
            raise ValueError(f"sync must be one of {SYNCS}, got '{sync}'")
        if not (math.isfinite(path_speed) and path_speed > 0):
            raise ValueError(f"path_speed must be a positive number of m/s, got {path_speed}")
        self.robot = robot
        self.mobile_law = law
        super().__init__(robot.model, law, None, log, state_timeout, interpolation)
        model = robot.model
        self.diff = robot.base_type == "diff_drive"
        self.base_names = list(model.wheel_joints) if self.diff else list(BASE_STATE_NAMES)
        if self.diff and len(self.base_names) != 2:
            raise ValueError(f"'{model.name}' names no wheel joints (model.wheel_joints)")
        names = self.base_names + list(model.joint_names)
        joints = [j for j in (joints or []) if j] or names
        if sorted(joints) != sorted(names):
            raise ValueError(f"joints {joints} must be {names} in any order (base entries then the arm)")
        self.joints = joints
        self.cmd_index = np.array([names.index(j) for j in joints], dtype=np.intp)
        self.tau_out = np.zeros(len(names))
        arm_order = [j for j in joints if j in model.joint_names]
        self.state_names = list(BASE_STATE_NAMES) + arm_order
        self._out_index = np.r_[0, 1, 2, [3 + list(model.joint_names).index(j) for j in arm_order]].astype(np.intp)
        self.ref_out = np.zeros(3 + self.dof)
        self._ref_buf = np.zeros(3 + self.dof)  # [base, arm] before the reorder
        self.q_out = np.zeros(3 + self.dof)
        self.effort_out = np.zeros(3 + self.dof)
        self.odom_frame, self.base_frame = odom_frame, base_frame or model.base_link
        self.sync = sync
        self.path_speed = float(path_speed)
        self.mref = MobileReference(self.dof)
        self.qb = np.zeros(3)  # base pose, world
        self.vb = np.zeros(3)  # base twist, base frame
        self.t_odom = math.nan
        self.have_base = False
        self.t_cycled = -math.inf
        self.base_reference: Any = None  # HoldPosition / JointSpline / TwistPath over [x, y, yaw]
        self._base_pending: list[tuple[Any, Any]] = []  # base paths before the first state (bounded)
        self._early_twist: tuple[float, tuple] | None = None  # the newest cmd_vel before it: (wall s, fields)
        self._q = np.zeros(3 + self.dof)
        self._v = np.zeros(3 + self.dof)
        self._y_warned = False
        self._cmd_watch = math.nan  # control time of the last accepted twist, until its timeout is logged
        self._held: list[tuple[float, int, np.ndarray]] = []  # twists stamped ahead: (stamp, order, twist), sorted
        self._held_count = 0
        self._said: set[str] = set()  # what the twist hold said once

    def warm_up(self) -> None:
        """Nothing to compile beyond the arm's trajectories (the mobile laws are numpy)."""

    def hold_here(self) -> None:
        """Hold the arm and the base where they are now, base at rest (a managed node's
        activation; ``ControlLoop.hold_here``).  On the executor thread, as the cycle."""
        super().hold_here()
        self._held.clear()
        if self.have_base:
            self.base_reference = HoldPosition(self.qb.copy())
            self.mref.twist[:] = 0.0
            self.mref.twist_time = -math.inf

    # ---- inputs -------------------------------------------------------------------------------
    def odom(self, position: Any, orientation: Any, linear: Any, angular: Any, t: float,
             frame_id: str = "", child_frame_id: str = "") -> bool:
        """An odometry sample (``nav_msgs/Odometry`` fields); False if ignored (said once per
        cause: its frames, NaN/Inf)."""
        if frame_id not in ("", self.odom_frame) or child_frame_id not in ("", self.base_frame):
            return self._ignored(("odom frames", frame_id, child_frame_id),
                                 f"/odom in frames '{frame_id}' -> '{child_frame_id}', not "
                                 f"'{self.odom_frame}' -> '{self.base_frame}'")
        o = orientation
        pose = (float(position.x), float(position.y), yaw_of(o.x, o.y, o.z, o.w))
        twist = (float(linear.x), float(linear.y), float(angular.z))
        if not all(map(math.isfinite, pose + twist)):
            return self._ignored(("odom non-finite",), f"/odom has NaN/Inf (pose x, y, yaw {pose}, "
                                                       f"twist {twist})")
        qb, vb = self.qb, self.vb
        qb[0], qb[1], qb[2] = pose
        vb[0], vb[1], vb[2] = twist
        self.t_odom = float(t)
        if not self.have_base:
            self.have_base = True
            self.base_reference = HoldPosition(self.qb.copy())
        return True

    def _flush_pending(self) -> None:
        """Base references that came before the first arm state and odometry, now both here."""
        pending, self._base_pending = self._base_pending, []
        for handler, early in pending:
            handler(early)
        if self._early_twist is not None:  # the newest twist, unless it waited past its timeout
            (received, fields), self._early_twist = self._early_twist, None
            waited = time.monotonic() - received
            if waited <= self.mobile_law.cmd_vel_timeout:
                self.cmd_vel(*fields)
            else:
                self.log("info", f"cmd_vel received {waited:.3g} s before the first state and odometry: "
                                 f"older than cmd_vel_timeout = {self.mobile_law.cmd_vel_timeout:g} s, "
                                 "not applied (the base holds)")

    def ready(self) -> bool:
        """A new state to cycle on: arm and base of the same stamp (``sync="stamp"``) or any new
        arm state with some odometry (``"latest"``)."""
        if not (self.have_state and self.have_base) or self.t <= self.t_cycled:
            return False
        if self._base_pending or self._early_twist is not None:
            self._flush_pending()
        return self.sync == "latest" or self.t == self.t_odom

    def _stop(self, why: str) -> None:
        """Refusal: one line (with the control time from which the base brakes), and the base
        stops safely (module docstring)."""
        self.log("error", f"{why} (t = {self.t:.6f} s)")
        self._cmd_watch = math.nan  # braking for the refusal, not a timeout
        self._held.clear()  # stop means stop: nothing sent ahead restarts the base
        ref = self.mref
        ref.twist[:] = 0.0
        ref.twist_time = -math.inf
        if self.have_base:  # the reference brakes with the law (velocity law: as reported)
            self._twist_path()

    def _current_base(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        p, pd, pdd = np.zeros(3), np.zeros(3), np.zeros(3)
        if isinstance(self.base_reference, TwistPath):
            p[:] = self.base_reference.p
            lim = self.base_reference.limiter
            c, s = math.cos(p[2]), math.sin(p[2])
            pd[:] = c * lim.w[0] - s * lim.w[1], s * lim.w[0] + c * lim.w[1], lim.w[2]
        elif self.base_reference is not None:
            self.base_reference.evaluate(t, p, pd, pdd)
        else:
            p[:] = self.qb
        return p, pd, pdd

    def _twist_path(self) -> TwistPath:
        """The base reference as a ``TwistPath`` from where it is now (kept if it is one)."""
        if isinstance(self.base_reference, TwistPath):
            return self.base_reference
        law = self.mobile_law
        p, pd, _ = self._current_base(self.t)
        c, s = math.cos(p[2]), math.sin(p[2])
        w0 = np.array([c * pd[0] + s * pd[1], -s * pd[0] + c * pd[1], pd[2]])
        limiter = RateLimitedTwist(law.max_velocity, law.max_acceleration, law.cmd_vel_timeout, self.diff)
        self.base_reference = TwistPath(p, w0, self.t, limiter)
        return self.base_reference

    def cmd_vel(self, frame_id: str, linear: Any, angular: Any, stamp: float = 0.0) -> bool:
        """A ``TwistStamped``'s fields and its header stamp (s); False (reason logged, base
        stopping) if refused.  Stamped ahead by at most ``HOLD_AHEAD``: held until its time
        (module docstring)."""
        if not self.have_base or not self.have_state:  # only the newest twist waits, with its age
            self._early_twist = (time.monotonic(), (frame_id, linear, angular, stamp))
            return True
        try:
            if frame_id not in ("", self.base_frame):
                raise ValueError(f"frame '{frame_id}' is not the base frame '{self.base_frame}'")
            twist = np.array([linear.x, linear.y, angular.z], dtype=float)
            if not np.isfinite(twist).all() or not np.isfinite([linear.z, angular.x, angular.y]).all():
                raise ValueError("twist contains NaN or Inf")
        except ValueError as exc:
            self._stop(f"cmd_vel refused: {exc}; stopping the base")
            return False
        if self.diff and twist[1] != 0.0:
            if not self._y_warned:
                self.log("warn", "cmd_vel linear.y ignored: a differential drive cannot move sideways")
                self._y_warned = True
            twist[1] = 0.0
        ahead = float(stamp) - self.t
        if ahead > 0.0 and math.isfinite(ahead):
            if ahead <= HOLD_AHEAD:
                return self._hold(float(stamp), twist)
            self._say_once("far", f"cmd_vel stamped {ahead:.3g} s ahead of the latest state (another clock?): "
                                  f"applied on receipt; a stamp at most {HOLD_AHEAD:g} s ahead waits for its time")
        self._apply(twist)
        return True

    def _say_once(self, key: str, text: str) -> None:
        if key not in self._said:
            self._said.add(key)
            self.log("warn", text)

    def _hold(self, stamp: float, twist: np.ndarray) -> bool:
        """Keep a checked twist until the first cycle at or past ``stamp`` (stamp order; the
        newest of one stamp last)."""
        if len(self._held) >= MAX_HELD_TWISTS:
            self._say_once("full", f"cmd_vel: {MAX_HELD_TWISTS} twists already wait for their stamps; "
                                   "this one is dropped (a publisher far ahead of the states' clock?)")
            return True
        self._held_count += 1
        bisect.insort(self._held, (stamp, self._held_count, twist))
        return True

    def _release_held(self, t: float) -> None:
        """Apply the held twists stamped at or before ``t`` (the newest of them commands)."""
        due = 0
        while due < len(self._held) and self._held[due][0] <= t:
            due += 1
        if due:
            twist = self._held[due - 1][2]
            del self._held[:due]
            self._apply(twist)

    def _apply(self, twist: np.ndarray) -> None:
        """A checked twist commands from now (control time ``self.t``)."""
        self.mref.twist[:] = twist
        self.mref.twist_time = self.t
        self._cmd_watch = self.t
        # whole body: the path it tracks; velocity law (which follows the twist itself): the
        # reference pose its controller state reports, the commanded twists integrated
        self._twist_path().command(twist, self.t)

    def base_path(self, msg: Any) -> bool:
        """A ``nav_msgs/Path``-shaped reference; False (reason logged, base stopping) if refused."""
        if not self.have_base or not self.have_state:
            self._keep_early(self._base_pending, (self.base_path, msg), "base path",
                             "received before the first state")
            return True
        try:
            if self.mobile_law.name != "whole_body_computed_torque":
                raise ValueError(f"{self.mobile_law.name} follows ~/cmd_vel; paths are for "
                                 "whole_body_computed_torque")
            path = msg if isinstance(msg, PathPoses) else read_path(msg)  # (a node reads it off the cycle)
            if path.frame != self.odom_frame:
                raise ValueError(f"frame '{path.frame}' is not the odom frame '{self.odom_frame}'")
            if path.error:
                raise ValueError(path.error)
            P, stamps, head = path.P.copy(), path.stamps, path.head
            self._check_stamp(head, self.t)  # one clock: the states' (ControlLoop)
            now = head if head > self.t else self.t  # a path stamped ahead starts then
            start = self._current_base(now)
            P[:, 2] = np.unwrap(np.r_[start[0][2], P[:, 2]])[1:]  # each heading within pi of the last
            if np.any(stamps != 0.0):
                tfs = stamps - head if head > 0 else stamps
                if tfs[0] < 0 or np.any(np.diff(tfs) <= 0):
                    raise ValueError("pose times must increase from 0 (stamps relative to the header stamp)")
            else:  # untimed: arc length (and turning) at path_speed
                seg = np.diff(np.vstack([start[0], P]), axis=0)
                dist = np.hypot(seg[:, 0], seg[:, 1])
                turn = np.abs(seg[:, 2]) * self.path_speed / max(self.mobile_law.max_velocity[2] * 0.5, 1e-9)
                tfs = np.cumsum(np.maximum(np.maximum(dist, turn) / self.path_speed * 1.875, 0.05))
            spline = JointSpline.from_points(now, tfs, P, None, None, start=start,
                                             interpolation=self.interpolation)
        except ValueError as exc:
            self._stop(f"base path refused: {exc}; stopping the base")
            return False
        self.base_reference = spline
        self._cmd_watch = math.nan  # the path replaces the twist-driven reference
        self.log("info", f"base path accepted: {len(P)} poses, {tfs[-1]:.3f} s from t = {now:.3f}")
        return True

    # ---- the cycle ----------------------------------------------------------------------------
    def cycle(self, t: float) -> np.ndarray:
        """References at ``t``, the law, efforts ``tau_out`` (``joints`` order)."""
        self._adopt()  # an arm trajectory handed over (``ControlLoop``)
        if self._held:
            self._release_held(t)
        ref = self.mref
        self.base_reference.evaluate(t, ref.base, ref.base_d, ref.base_dd)
        self.reference.evaluate(t, ref.q, ref.qd, ref.qdd)
        q, v = self._q, self._v
        q[:3], q[3:], v[:3], v[3:] = self.qb, self.q, self.vb, self.qd
        law = self.mobile_law
        tau = law.compute(t, q, v, ref)
        if law.fault:
            if not self._fault_logged:
                self.log("error", law.status)
                self._fault_logged = True
        elif self._fault_logged:
            self.log("info", "inputs finite again: control resumed")
            self._fault_logged = False
        tc = self._cmd_watch
        if t - tc > law.cmd_vel_timeout:  # the limiter's test (RateLimitedTwist.update): braking from this cycle
            self.log("warn", f"cmd_vel timed out at t = {t:.6f} s: the last command came at t = {tc:.6f} s, "
                             f"more than cmd_vel_timeout = {law.cmd_vel_timeout:g} s (control time) before; "
                             "braking to rest")
            self._cmd_watch = math.nan
        np.take(tau, self.cmd_index, out=self.tau_out)
        idx, buf = self._out_index, self._ref_buf
        buf[:3], buf[3:] = ref.base, ref.q
        np.take(buf, idx, out=self.ref_out)
        np.take(q, idx, out=self.q_out)
        np.take(law.generalized, idx, out=self.effort_out)
        self.t_cycled = t
        self.cycles += 1
        return self.tau_out
