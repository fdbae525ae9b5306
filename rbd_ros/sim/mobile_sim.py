"""The simulated mobile manipulator behind the MuJoCo bridge (ROS-free): ``MobileSimulator``.

A ``Simulator`` (motor model, sensors, command checks, timeout brake, instability undo: all as
for an arm) whose actuated "joints" are the base's entries followed by the arm's joints:

* diff_drive: the two wheel joints (``model.wheel_joints``; left, right): wheel torques (N m),
  wheel angles (rad) and rates (rad/s);
* planar: ``base_x``, ``base_y``, ``base_yaw``: positions are the base pose in the world
  (``q[:3]`` of the core: x, y m; yaw rad), velocities the base twist in the base frame (the
  core's ``v[:3]``: v_x, v_y m/s, omega rad/s), efforts the base force and moment in the base
  frame at ``base_link``'s origin (``[F_x, F_y, M_z]``, N and N m).

The motor model of the arm applies to the base entries too, with the settings of
``MobileConfig``: ``wheel_effort_limit`` / ``base_effort_limit`` (saturation),
``wheel_armature``, ``wheel_viscous``, ``wheel_coulomb`` (MuJoCo joint armature, damping,
frictionloss on the wheel hinges).

``base_model`` (``MobileConfig``; MJCF in ``mobile_model``):

* ``wheels`` (default): MuJoCo steps the model; a diff-drive base is a free body on two rolling
  wheels and casters (it can slip); a planar base sits on planar joints.
* ``ideal``: the **core** integrates: every step is ``Robot.simulate(q, v, u, dt, 1)`` (a ground base)
  (RK4; diff drive in Kane's generalized speeds, so ``v_y`` stays exactly 0: the rolling
  constraint holds through the core's constraint force ``lam``), with ``u`` the torques after
  the motor model's saturation and latency; MuJoCo is only set to the state (viewer, sensors).
  A run therefore equals the core's own ``simulate`` to round-off.  The arm's armature,
  viscous and Coulomb friction and its joint limits are not in the core and not applied (an
  arm left without commands falls freely); the timeout brake is an explicit damping torque
  ``-b * rate`` (held over the step; capped as ``Simulator`` caps it for explicit
  integrators, by MuJoCo's inertia, which for a wheel is its spin inertia alone).  The wheel angles (diff drive)
  integrate the rolling wheel rates ``(v_x -/+ omega s/2) / r`` by the trapezoid rule.

``initial_base_pose`` ``[x, y, yaw]`` places the base (a planar base: or the base entries of
``initial_positions``, not both differing; its twist from ``initial_velocities``); initial wheel
rates of a diff-drive base give it the matching rolling twist.  ``base_state()`` is the ground
truth of the base for ``/odom``: pose (position, quaternion x y z w) and the twist in the base
frame.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numba import njit

from rbd_ros.model import MOBILE_BASES, MdhModel
from rbd_ros.robot import Robot, SimulationError
from rbd_ros.sim.mobile_model import BASE_MODELS, FREE_JOINT, PLANAR_JOINTS, base_actuator_names, build_mobile_model
from rbd_ros.sim.simulator import AUTO, BridgeConfig, LogFn, Simulator

if TYPE_CHECKING:
    from rbd_ros.robot.mobile import GroundFront

ODOM_SOURCES = ("ground_truth", "wheel_odometry")
SETTLE_STEPS = 200  # steps letting a wheeled base sink onto the floor at reset
TIP_TILT = math.radians(30.0)  # a wheeled base tilted further has tipped over (warned)
SLIP_WARN = 0.05  # m/s of wheel slip (rolling: < 2 mm/s) that is warned
SAY_EVERY = 1.0  # s of simulation time between repeats of those warnings


@dataclass(frozen=True)
class MobileConfig:
    """The mobile bridge's settings beside ``BridgeConfig`` (module docstring)."""

    base_model: str = "wheels"  # wheels | ideal
    odom_source: str = "ground_truth"  # ground_truth | wheel_odometry
    initial_base_pose: tuple[float, ...] = (0.0, 0.0, 0.0)  # x, y (m), yaw (rad)
    wheel_effort_limit: float | None = None  # N m; None: the model's (URDF <limit effort>)
    base_effort_limit: tuple[float, ...] = (math.inf, math.inf, math.inf)  # N, N, N m (planar)
    wheel_armature: float = 0.0  # kg m^2
    wheel_viscous: float = 0.0  # N m s/rad
    wheel_coulomb: float = 0.0  # N m
    floor_friction: float = 1.0  # Coulomb coefficient wheel/floor
    base_height: float = 0.0  # m, base_link above the floor; 0 = wheel radius - axle height (planar 0.1)

    def __post_init__(self) -> None:
        put = object.__setattr__
        if self.base_model not in BASE_MODELS:
            raise ValueError(f"base_model must be one of {', '.join(BASE_MODELS)}, got '{self.base_model}'")
        if self.odom_source not in ODOM_SOURCES:
            raise ValueError(f"odom_source must be one of {', '.join(ODOM_SOURCES)}, got '{self.odom_source}'")
        pose = tuple(float(v) for v in self.initial_base_pose)
        if len(pose) != 3 or not np.isfinite(pose).all():
            raise ValueError(f"initial_base_pose must be 3 finite numbers [x, y, yaw], got {list(pose)}")
        put(self, "initial_base_pose", pose)
        try:
            limits = tuple(float(v) for v in np.broadcast_to(np.asarray(self.base_effort_limit, float), 3))
        except (TypeError, ValueError):
            raise ValueError(f"base_effort_limit must be one number or 3 [F_x, F_y, M_z] (N, N, N m), "
                             f"got {self.base_effort_limit!r}") from None
        put(self, "base_effort_limit", limits)
        for name in ("wheel_effort_limit", "wheel_armature", "wheel_viscous", "wheel_coulomb",
                     "floor_friction", "base_height"):
            if name == "wheel_effort_limit" and self.wheel_effort_limit is None:
                continue
            value = float(getattr(self, name))
            if not value >= 0 or math.isnan(value):
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
            put(self, name, value)
        if any(not v > 0 for v in limits) or (self.wheel_effort_limit is not None
                                               and self.wheel_effort_limit <= 0):
            raise ValueError("wheel_effort_limit and base_effort_limit must be > 0")
        if self.floor_friction <= 0:
            raise ValueError(f"floor_friction must be > 0, got {self.floor_friction}")


def actuated_model(model: MdhModel, mobile: MobileConfig) -> MdhModel:
    """The actuator table the ``Simulator`` works on: a fixed-base ``MdhModel`` whose joints
    are the base's entries (``mobile_model.base_actuator_names``) then the arm's, with the arm's
    limits and motor data and the base's from ``mobile``.  Its MDH geometry is the arm's behind
    massless placeholders for the base entries and is not used (MuJoCo's model comes from
    ``mobile_model``)."""
    names = base_actuator_names(model)
    k = len(names)
    diff = model.base_type == "diff_drive"
    wheel_limit = model.wheel_effort_limit if mobile.wheel_effort_limit is None else mobile.wheel_effort_limit
    limit = np.full(k, wheel_limit) if diff else np.asarray(mobile.base_effort_limit)
    pad = lambda value, arr: np.concatenate([np.full(k, value), arr])  # noqa: E731
    return MdhModel(
        joint_names=(*names, *model.joint_names),
        joint_type=np.concatenate([np.zeros(k, np.int64), model.joint_type]),
        a=pad(0.0, model.a), alpha=pad(0.0, model.alpha), d=pad(0.0, model.d),
        theta=pad(0.0, model.theta), mass=pad(0.0, model.mass),
        com=np.concatenate([np.zeros((k, 3)), model.com]),
        inertia=np.concatenate([np.zeros((k, 3, 3)), model.inertia]),
        lower=pad(-np.inf, model.lower), upper=pad(np.inf, model.upper),
        velocity_limit=pad(np.inf, model.velocity_limit),
        effort_limit=np.concatenate([limit, model.effort_limit]),
        gear_ratio=pad(1.0, model.gear_ratio),
        rotor_inertia=pad(mobile.wheel_armature if diff else 0.0, model.rotor_inertia),
        viscous=pad(mobile.wheel_viscous if diff else 0.0, model.viscous),
        coulomb=pad(mobile.wheel_coulomb if diff else 0.0, model.coulomb),
        torque_constant=pad(0.0, model.torque_constant),
        back_emf_constant=pad(0.0, model.back_emf_constant),
        resistance=pad(0.0, model.resistance),
        gravity=model.gravity, name=model.name, base_link=model.base_link,
        tip_link=model.tip_link, link_names=(*names, *model.link_names))


@njit(cache=True)
def _free_twist(qpos: np.ndarray, qvel: np.ndarray, a: int, b: int, out: np.ndarray) -> None:
    """``out = [v_x, v_y, omega_z]`` of a free joint (qpos at ``a``: position, quaternion
    w x y z; qvel at ``b``: world linear, body angular velocity): ``R^T v`` of the unit
    quaternion's rotation ``R`` (only its first two columns)."""
    w, x, y, z = qpos[a + 3], qpos[a + 4], qpos[a + 5], qpos[a + 6]
    vx, vy, vz = qvel[b], qvel[b + 1], qvel[b + 2]
    out[0] = (1.0 - 2.0 * (y * y + z * z)) * vx + 2.0 * (x * y + w * z) * vy + 2.0 * (x * z - w * y) * vz
    out[1] = 2.0 * (x * y - w * z) * vx + (1.0 - 2.0 * (x * x + z * z)) * vy + 2.0 * (y * z + w * x) * vz
    out[2] = qvel[b + 5]


def _yaw_quat(yaw: float) -> np.ndarray:
    """MuJoCo's (w, x, y, z) of a rotation by ``yaw`` about z."""
    return np.array([math.cos(0.5 * yaw), 0.0, 0.0, math.sin(0.5 * yaw)])


class MobileSimulator(Simulator):
    """An arm on a planar or diff-drive base in MuJoCo (module docstring)."""

    def __init__(self, model: MdhModel, config: BridgeConfig | None = None,
                 mobile: MobileConfig | None = None, log: LogFn | None = None) -> None:
        if model.base_type not in MOBILE_BASES:
            raise ValueError(f"MobileSimulator: '{model.name}' has a {model.base_type} base; "
                             f"mobile bases are {', '.join(MOBILE_BASES)}")
        self.robot_model = model
        self.mobile = mobile = mobile or MobileConfig()
        self.base_type = model.base_type
        self.diff_drive = model.base_type == "diff_drive"
        self.ideal = mobile.base_model == "ideal"
        self.free_base = self.diff_drive and not self.ideal
        self.base_names = base_actuator_names(model)
        self.k = len(self.base_names)  # base entries ahead of the arm's (model order)
        self.core = None
        if self.ideal:

            self.core = Robot(model)
        super().__init__(actuated_model(model, mobile), config, log)
        # joints-order positions of the base entries (for measure and odometry)
        self.base_index = np.array([list(self.joint_names).index(n) for n in self.base_names])
        if self.ideal and (self.config.armature or self.config.viscous_friction
                           or self.config.coulomb_friction):
            self.log("info", "base_model ideal: the core's rigid-body dynamics; the arm's armature, "
                             "viscous and Coulomb friction are not applied")

    # ---- model ------------------------------------------------------------------------------
    def _build_model(self, model: MdhModel, cfg: BridgeConfig) -> tuple[Any, list[str]]:
        m = self.mobile
        integrator = cfg.integrator if cfg.integrator.lower() != AUTO else "implicitfast"
        # ideal: no motor model in MuJoCo's joints (the core has none; the brake's cap reads M)
        armature, viscous, coulomb = ((False, False, False) if self.ideal else
                                      (cfg.armature, cfg.viscous_friction, cfg.coulomb_friction))
        return build_mobile_model(
            self.robot_model, m.base_model, cfg.timestep, integrator,
            height=m.base_height or None, friction=m.floor_friction, contacts=cfg.contacts,
            armature=armature, viscous=viscous, coulomb=coulomb,
            wheel_armature=m.wheel_armature if armature else 0.0,
            wheel_viscous=m.wheel_viscous if viscous else 0.0,
            wheel_coulomb=m.wheel_coulomb if coulomb else 0.0,
            min_mass=cfg.min_mass, min_inertia=cfg.min_inertia)

    def _choose_integrator(self) -> str:
        """``auto``: implicitfast (floor contacts and the free base want it; the ideal base does
        not step MuJoCo); an explicit choice is kept."""
        chosen = self.config.integrator
        if chosen.lower() == AUTO:
            chosen = "implicitfast"
        return "RK4" if self.ideal else chosen  # ideal: the core's RK4, the brake explicit

    def _locate(self) -> None:
        import mujoco

        m = self.mj_model
        if self.free_base:
            j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, FREE_JOINT)
            self._free_q, self._free_v = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
        else:
            ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n) for n in PLANAR_JOINTS]
            self._planar_q = np.array([m.jnt_qposadr[j] for j in ids])
            self._planar_v = np.array([m.jnt_dofadr[j] for j in ids])
        self._good_qpos = np.zeros(m.nq)
        self._twist = np.zeros(3)  # base_slip's buffer

    # ---- state --------------------------------------------------------------------------------
    def reset(self, keep_time: bool = True) -> None:
        """``Simulator.reset``, then the base at its initial pose and twist (module docstring)."""
        super().reset(keep_time)
        if not hasattr(self, "_good_qpos"):
            self._locate()
        d, k = self.mj_data, self.k
        arm_q, arm_v = self.q0[k:], self.qd0[k:]
        if self.diff_drive:
            pose = np.array(self.mobile.initial_base_pose)
            w = self.qd0[:2]  # wheel rates -> the rolling twist
            r, s = self.robot_model.wheel_radius, self.robot_model.wheel_separation
            v3 = np.array([0.5 * r * (w[0] + w[1]), 0.0, r * (w[1] - w[0]) / s])
        else:  # the base entries of initial_positions, or initial_base_pose (not two poses)
            pose, v3 = self.q0[:3].copy(), self.qd0[:3].copy()
            given = np.array(self.mobile.initial_base_pose)
            if given.any():
                if pose.any() and not np.allclose(pose, given, rtol=0.0, atol=1e-12):
                    raise ValueError(f"initial_base_pose {list(given)} and the base entries of "
                                     f"initial_positions {list(pose)} disagree; give the pose once")
                pose = given
                self.q0[:3] = given
        self._wheel_angles = self.q0[:k].copy() if self.diff_drive else None
        self._q = np.concatenate([pose, arm_q])  # the core's state (ideal)
        self._v = np.concatenate([v3, arm_v])
        if self.free_base:
            self._settle(pose)
        self._write_base(pose, v3)
        self._mj.mj_forward(self.mj_model, d)
        self.slip_max = self.lateral_max = 0.0
        self.upset_steps = 0  # steps with the wheeled base tipped over or off the floor
        self._floor_z = float(d.qpos[self._free_q + 2]) if self.free_base else 0.0
        self._said_upset = self._said_slip = -math.inf

    def _settle(self, pose: np.ndarray) -> None:
        """Let the free base sink onto its contacts (``SETTLE_STEPS`` steps without torque,
        the joints held at their start, the base at ``pose``), so the wheels start loaded:
        placed at the wheel radius exactly, they carry no weight for the first steps and spin
        freely under a torque.  The base stays level; the clock is not advanced."""
        d, m = self.mj_data, self.mj_model
        t, qpos = d.time, d.qpos.copy()
        a = self._free_q
        qpos[a:a + 2] = pose[:2]
        qpos[a + 3:a + 7] = _yaw_quat(pose[2])
        d.qpos[:] = qpos
        d.qvel[:] = 0.0
        d.ctrl[:] = 0.0
        for _ in range(SETTLE_STEPS):
            self._mj.mj_step(m, d)
            qpos[a + 2] = d.qpos[a + 2]  # the base's height only (level, at its pose)
            d.qpos[:] = qpos
            d.qvel[:] = 0.0
        d.time = t

    def _write_base(self, pose: np.ndarray, v3: np.ndarray) -> None:
        """Base pose ``(x, y, yaw)`` and base-frame twist ``(v_x, v_y, omega)`` into MuJoCo."""
        d = self.mj_data
        c, s = math.cos(pose[2]), math.sin(pose[2])
        world = [c * v3[0] - s * v3[1], s * v3[0] + c * v3[1]]
        if self.free_base:
            a, b = self._free_q, self._free_v
            d.qpos[a:a + 2] = pose[:2]
            d.qpos[a + 3:a + 7] = _yaw_quat(pose[2])
            d.qvel[b:b + 2] = world
            d.qvel[b + 2:b + 5] = 0.0
            d.qvel[b + 5] = v3[2]  # angular velocity in the body frame (z)
        else:
            d.qpos[self._planar_q] = pose
            d.qvel[self._planar_v] = [world[0], world[1], v3[2]]

    def base_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Ground truth: ``(position (3), quaternion (x, y, z, w), linear velocity, angular
        velocity)``, the velocities in the base frame (``base_link``)."""
        d = self.mj_data
        if self.free_base:
            a, b = self._free_q, self._free_v
            w, x, y, z = d.qpos[a + 3:a + 7]
            R = np.empty(9)
            self._mj.mju_quat2Mat(R, d.qpos[a + 3:a + 7])
            lin = R.reshape(3, 3).T @ d.qvel[b:b + 3]
            return d.qpos[a:a + 3].copy(), np.array([x, y, z, w]), lin, d.qvel[b + 3:b + 6].copy()
        x, y, yaw = d.qpos[self._planar_q]
        if self.ideal:
            v3 = self._v[:3]
        else:
            c, s = math.cos(yaw), math.sin(yaw)
            vx, vy, wz = d.qvel[self._planar_v]
            v3 = np.array([c * vx + s * vy, -s * vx + c * vy, wz])
        h = float(self.mj_model.body_pos[1][2])
        q = _yaw_quat(yaw)
        return (np.array([x, y, h]), np.array([q[1], q[2], q[3], q[0]]),
                np.array([v3[0], v3[1], 0.0]), np.array([0.0, 0.0, v3[2]]))

    def measure(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``Simulator.measure``; a planar base's velocities in the base frame (docstring)."""
        q, qd, effort = super().measure()
        if not self.diff_drive:
            qd = np.array(qd, dtype=float)
            ix, iy = self.base_index[0], self.base_index[1]
            yaw = float(self.mj_data.qpos[self._planar_q[2]])
            c, s = math.cos(yaw), math.sin(yaw)
            qd[ix], qd[iy] = c * qd[ix] + s * qd[iy], -s * qd[ix] + c * qd[iy]
        return q, qd, effort

    def base_slip(self) -> tuple[float, float]:
        """Ground truth now: ``(wheel slip, lateral velocity)`` (m/s).  Wheel slip: the largest
        speed of a wheel's contact point over the floor, ``|(v_x -/+ omega s/2 - r w_i, v_y)|``
        (0 while rolling; 0 for a planar base); lateral: ``|v_y|`` at B (0 for the ideal diff
        drive by construction)."""
        if self.free_base:  # allocation-free: the step calls this each time
            d, t = self.mj_data, self._twist
            _free_twist(d.qpos, d.qvel, self._free_q, self._free_v, t)
            vx, vy, wz = t[0], t[1], t[2]
        else:
            _, _, lin, ang = self.base_state()
            vx, vy, wz = float(lin[0]), float(lin[1]), float(ang[2])
        if not self.diff_drive:
            return 0.0, abs(vy)
        r, s = self.robot_model.wheel_radius, self.robot_model.wheel_separation
        qvel, adr = self.mj_data.qvel, self.dof_adr
        along_l = vx - 0.5 * s * wz - r * qvel[adr[0]]
        along_r = vx + 0.5 * s * wz - r * qvel[adr[1]]
        return float(max(math.hypot(along_l, vy), math.hypot(along_r, vy))), abs(vy)

    # ---- stepping -----------------------------------------------------------------------------
    def step(self, now: float | None = None) -> None:
        """``Simulator.step``, then the running maxima of ``base_slip`` (``slip_max``,
        ``lateral_max``, since the start or the last reset)."""
        super().step(now)
        slip, lateral = self.base_slip()
        self.slip_max = max(self.slip_max, slip)
        self.lateral_max = max(self.lateral_max, lateral)
        if self.free_base:
            self._check_ground(slip)

    def _check_ground(self, slip: float) -> None:
        """A wheeled base that tipped over (tilt > ``TIP_TILT``), left the floor or sank
        through it (height off by more than a wheel radius), or whose wheels slip (>
        ``SLIP_WARN``) is warned, at most every ``SAY_EVERY`` s: its state is no longer a
        ground robot rolling as the model (and wheel odometry) assume."""
        d, a, t = self.mj_data, self._free_q, self.time
        qx, qy = d.qpos[a + 4], d.qpos[a + 5]
        tilt = 2.0 * math.asin(min(1.0, math.hypot(qx, qy)))  # angle of body z from world z
        dz = float(d.qpos[a + 2]) - self._floor_z
        limit = f"wheel_effort_limit {float(self.model.effort_limit[0]):g} N m"
        if tilt > TIP_TILT or abs(dz) > self.robot_model.wheel_radius:
            self.upset_steps += 1
            if t - self._said_upset >= SAY_EVERY:
                self._said_upset = t
                self.log("warn", f"the base tipped over or left the floor at t = {t:.3f} s (tilt "
                                 f"{math.degrees(tilt):.0f} deg, height {dz:+.3f} m from its rest): "
                                 f"it no longer rolls on the floor, its /odom and wheel states are "
                                 f"not a ground robot's; lower the wheel torques ({limit}) and reset")
        if slip > SLIP_WARN and t - self._said_slip >= SAY_EVERY:
            self._said_slip = t
            odom = ("wheel odometry (odom_source) drifts from the truth" if
                    self.mobile.odom_source == "wheel_odometry" else
                    "the base does not roll as the model assumes (wheel odometry would drift)")
            self.log("warn", f"the wheels slip on the floor at t = {t:.3f} s ({slip:.3g} m/s; "
                             f"floor_friction {self.mobile.floor_friction:g}, {limit}): {odom}")

    def _advance(self) -> None:
        np.copyto(self._good_qpos, self.mj_data.qpos)
        if not self.ideal:
            super()._advance()
            return

        d, k, dt = self.mj_data, self.k, self.mj_model.opt.timestep
        u = np.array(d.ctrl, dtype=float)  # base entries then the arm, model order
        if self._braking:  # explicit brake torque on the rates (module docstring)
            brake = (self.mj_model.dof_damping - self.base_damping)[self.dof_adr]
            rates = self._rates()
            u -= brake * rates
        try:
            with np.errstate(all="ignore"):
                # ideal: core is the ground-base Robot, its simulate mobile.GroundFront's (bound
                # onto the robot at run time, unseen by the checker)
                res = cast("GroundFront", self.core).simulate(self._q, self._v, u, dt, 1)
            q, v = res.q[1], res.qd[1]
        except (SimulationError, ValueError):
            d.qvel[:] = np.nan  # Simulator.step sees the bad state and undoes the step
            return
        if self.diff_drive:
            w0, w1 = self._wheel_rates(self._v), self._wheel_rates(v)
            self._wheel_angles += 0.5 * dt * (w0 + w1)
            d.qpos[self.qpos_adr[:k]] = self._wheel_angles
            d.qvel[self.dof_adr[:k]] = w1
        self._q, self._v = q, v
        d.qpos[self.qpos_adr[k:]] = q[3:]
        d.qvel[self.dof_adr[k:]] = v[3:]
        self._write_base(q[:3], v[:3])
        d.time += dt
        self._mj.mj_kinematics(self.mj_model, d)

    def _wheel_rates(self, v: np.ndarray) -> np.ndarray:
        """Rolling wheel rates (left, right) of the base twist: ``(v_x -/+ omega s/2) / r``."""
        r, s = self.robot_model.wheel_radius, self.robot_model.wheel_separation
        return np.array([v[0] - 0.5 * s * v[2], v[0] + 0.5 * s * v[2]]) / r

    def _rates(self) -> np.ndarray:
        """The actuated entries' rates (model order) of the core's state (ideal)."""
        base = self._wheel_rates(self._v) if self.diff_drive else self._v[:3]
        return np.concatenate([base, self._v[3:]])

    def _undo_unstable_step(self, t_before: float, ctrl: np.ndarray) -> None:
        """``Simulator``'s undo, with the whole configuration (the base too) put back at rest."""
        good = self._good_qpos.copy()
        super()._undo_unstable_step(t_before, ctrl)
        d = self.mj_data
        d.qpos[:] = good
        d.qvel[:] = 0.0
        if self.ideal:
            self._q = np.concatenate([self._q[:3], good[self.qpos_adr[self.k:]]])
            self._v[:] = 0.0
        self._mj.mj_forward(self.mj_model, d)
