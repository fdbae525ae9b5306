"""The simulated arm behind the MuJoCo bridge, without ROS.

``Simulator(model, BridgeConfig(...))`` holds the ``MjModel``/``MjData`` built from the
``MdhModel`` (``mujoco_model.build_mujoco_model``) and the actuator and sensor models of 003
§6.1 (``motor``).  ``command(values, now)`` latches a command (in ``config.joints`` order),
``step(now)`` advances one timestep, ``measure()`` returns position, velocity and effort as the
drives would report them.  Every part of the motor model is switchable in ``BridgeConfig``
(all keys, their defaults and meaning: ``config/bridge.yaml``).

Safety:
* a command older than ``command_timeout`` (seconds of the caller's clock; the node passes
  the wall clock in realtime and max modes, nothing in lockstep) -> zero torque and an extra
  joint damping ``brake_damping`` (N m s/rad, or N s/m), until a fresh command arrives.  The
  change is logged once each way.  No command yet counts as stale.
* a NaN/Inf or wrong-length command is rejected (error logged at most once a second) and the
  last safe command is kept.
"""
from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.sim.motor import COMMAND_MODES, MotorModel, SensorModel
from rbd_ros.sim.mujoco_model import build_mujoco_model, integrator_enum

MODES = ("realtime", "lockstep", "max")
LogFn = Callable[[str, str], None]  # (level: "info" | "warn" | "error", message)


@dataclass(frozen=True)
class BridgeConfig:
    """Every bridge setting; defaults are those of ``config/bridge.yaml``."""

    # physics
    timestep: float = 0.001
    integrator: str = "RK4"
    contacts: bool = False
    # node
    mode: str = "realtime"
    publish_every: int = 1
    joints: tuple[str, ...] = ()
    initial_positions: tuple[float, ...] = ()
    initial_velocities: tuple[float, ...] = ()
    diagnostics_period: float = 1.0
    stats_period: float = 10.0
    rt_priority: int = 0
    # safety
    command_timeout: float = 0.05
    brake_damping: float = 10.0
    # actuator model (003 §6.1)
    command_mode: str = "torque"
    saturation: bool = True
    armature: bool = True
    viscous_friction: bool = True
    coulomb_friction: bool = True
    voltage_limit: Any = math.inf
    latency_steps: int = 0
    # sensors
    encoder_resolution: Any = 0.0
    position_noise: Any = 0.0
    velocity_noise: Any = 0.0
    effort_noise: Any = 0.0
    noise_seed: int = 0
    # inertia fix-ups (mujoco_model.fix_inertia)
    min_mass: float = 1e-6
    min_inertia: float = 1e-9

    def __post_init__(self) -> None:
        put = object.__setattr__
        for name in ("joints", "initial_positions", "initial_velocities"):
            value = getattr(self, name)
            value = () if value is None else tuple(value)
            put(self, name, tuple(str(v) for v in value) if name == "joints"
                else tuple(float(v) for v in value))
        if not (self.timestep > 0 and math.isfinite(self.timestep)):
            raise ValueError(f"timestep must be > 0 s, got {self.timestep}")
        integrator_enum(self.integrator)  # ValueError naming the choices (one table: the core's)
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got '{self.mode}'")
        if self.command_mode not in COMMAND_MODES:
            raise ValueError(f"command_mode must be one of {', '.join(COMMAND_MODES)}, "
                             f"got '{self.command_mode}'")
        if int(self.publish_every) < 1:
            raise ValueError(f"publish_every must be >= 1, got {self.publish_every}")
        if int(self.latency_steps) < 0:
            raise ValueError(f"latency_steps must be >= 0, got {self.latency_steps}")
        if not self.command_timeout >= 0:
            raise ValueError(f"command_timeout must be >= 0 s (0 disables), got "
                             f"{self.command_timeout}")
        if not (self.brake_damping >= 0 and math.isfinite(self.brake_damping)):
            raise ValueError(f"brake_damping must be >= 0, got {self.brake_damping}")
        for name in ("diagnostics_period", "stats_period"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0 s, got {getattr(self, name)}")
        put(self, "publish_every", int(self.publish_every))
        put(self, "latency_steps", int(self.latency_steps))
        put(self, "noise_seed", int(self.noise_seed))
        if not 0 <= int(self.rt_priority) <= 99:
            raise ValueError(f"rt_priority must be 0 (off) to 99, got {self.rt_priority}")
        put(self, "rt_priority", int(self.rt_priority))

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "BridgeConfig":
        """From a flat mapping of the keys above (unknown keys are an error)."""
        data = dict(data or {})
        if "bridge" in data and isinstance(data["bridge"], dict) and len(data) == 1:
            data = data["bridge"]
        unknown = sorted(set(data) - set(cls.keys()))
        if unknown:
            raise ValueError(f"unknown bridge setting(s) {unknown}; known: {cls.keys()}")
        return cls(**data)

    @classmethod
    def from_yaml(cls, path: str | Path) -> "BridgeConfig":
        import yaml

        with open(path, encoding="utf-8") as fh:
            return cls.from_dict(yaml.safe_load(fh) or {})

    def replace(self, **changes: Any) -> "BridgeConfig":
        data = {k: getattr(self, k) for k in self.keys()}
        data.update(changes)
        return BridgeConfig.from_dict(data)


@dataclass
class SimStats:
    steps: int = 0
    commands_received: int = 0  # valid commands
    commands_rejected: int = 0  # NaN/Inf or wrong length
    steps_without_new_command: int = 0
    stale_steps: int = 0  # steps under the timeout brake
    saturated_steps: int = 0  # steps with at least one joint clamped


def _default_log(level: str, message: str) -> None:
    print(f"[{level}] {message}", flush=True)


class Simulator:
    """One simulated arm: MuJoCo physics + motor model + sensors (see the module docstring)."""

    def __init__(self, model: MdhModel, config: BridgeConfig | None = None,
                 log: LogFn | None = None) -> None:
        import mujoco

        self._mj = mujoco
        self.model = model
        self.config = cfg = config or BridgeConfig()
        self.log = log or _default_log
        n = model.dof
        self.joint_names = cfg.joints or model.joint_names
        missing = sorted(set(model.joint_names) - set(self.joint_names))
        extra = sorted(set(self.joint_names) - set(model.joint_names))
        if missing or extra or len(self.joint_names) != n:
            raise ValueError(f"joints must list each of the model's joints once "
                             f"{list(model.joint_names)}; missing {missing}, unknown {extra}")
        #: model index of the k-th joint in command/state order
        self.order = np.array([model.joint_names.index(j) for j in self.joint_names])
        self.motor = MotorModel(model, cfg.command_mode, cfg.saturation, cfg.voltage_limit)
        self.sensors = SensorModel(n, cfg.encoder_resolution, cfg.position_noise,
                                   cfg.velocity_noise, cfg.effort_noise, cfg.noise_seed)
        # sensor parameters are per joint in command order; store them in model order
        self.sensors.reorder(self.order)
        self.mj_model, self.warnings = build_mujoco_model(
            model, cfg.timestep, cfg.integrator, cfg.contacts, actuators=True,
            armature=cfg.armature, viscous=cfg.viscous_friction, coulomb=cfg.coulomb_friction,
            min_mass=cfg.min_mass, min_inertia=cfg.min_inertia)
        for w in self.warnings:
            self.log("warn", f"inertia fix-up: {w}")
        self.mj_data = mujoco.MjData(self.mj_model)
        self.dof_adr = np.array([self.mj_model.jnt_dofadr[mujoco.mj_name2id(
            self.mj_model, mujoco.mjtObj.mjOBJ_JOINT, name)] for name in model.joint_names])
        self.qpos_adr = np.array([self.mj_model.jnt_qposadr[mujoco.mj_name2id(
            self.mj_model, mujoco.mjtObj.mjOBJ_JOINT, name)] for name in model.joint_names])
        self.base_damping = self.mj_model.dof_damping.copy()
        self.base_damping[self.dof_adr] += self.motor.emf_damping
        self.mj_model.dof_damping[:] = self.base_damping
        self.q0 = self._initial(cfg.initial_positions, "initial_positions")
        self.qd0 = self._initial(cfg.initial_velocities, "initial_velocities")
        outside = [model.joint_names[i] for i in range(n)
                   if not model.lower[i] <= self.q0[i] <= model.upper[i]]
        if outside and not cfg.initial_positions:
            # default start: zeros, moved onto the nearest limit where zero is outside the range
            self.q0 = np.clip(self.q0, model.lower, model.upper)
            self.log("info", f"initial positions: 0 is outside the limits of {outside}; those "
                             f"start at their nearest limit")
        elif outside:
            self.log("warn", f"initial positions outside the joint limits for {outside}")
        self.stats = SimStats()
        self._last_error_log = -math.inf
        self._suppressed = 0
        self.reset(keep_time=False)

    # ---- order conversion -------------------------------------------------------------------
    def _to_model(self, values: np.ndarray) -> np.ndarray:
        out = np.empty(len(values))
        out[self.order] = values
        return out

    def _initial(self, values: Sequence[float], name: str) -> np.ndarray:
        n = self.model.dof
        if not values:
            return np.zeros(n)
        arr = np.array(values, dtype=float)
        if arr.shape != (n,) or not np.isfinite(arr).all():
            raise ValueError(f"{name} must be {n} finite numbers (in joints order "
                             f"{list(self.joint_names)}), got {list(values)}")
        return self._to_model(arr)

    # ---- state ------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.model.dof

    @property
    def time(self) -> float:
        return float(self.mj_data.time)

    @property
    def q(self) -> np.ndarray:
        """True joint positions, model order."""
        return self.mj_data.qpos[self.qpos_adr].copy()

    @property
    def qd(self) -> np.ndarray:
        """True joint velocities, model order."""
        return self.mj_data.qvel[self.dof_adr].copy()

    @property
    def braking(self) -> bool:
        return self._braking

    def reset(self, keep_time: bool = True) -> None:
        """Back to the initial state: positions, velocities, zero command, empty latency line,
        sensor noise reseeded, brake released.  The clock keeps running (``keep_time``) so a
        ROS ``/clock`` never goes backwards."""
        t = self.mj_data.time if keep_time else 0.0
        self._mj.mj_resetData(self.mj_model, self.mj_data)
        self.mj_data.time = t
        self.mj_data.qpos[self.qpos_adr] = self.q0
        self.mj_data.qvel[self.dof_adr] = self.qd0
        self._mj.mj_forward(self.mj_model, self.mj_data)
        n = self.n
        self._command = np.zeros(n)  # last safe command, model order
        self._command_time: float | None = None
        self._fresh = False
        self._queue: deque[np.ndarray] = deque([np.zeros(n)] * self.config.latency_steps)
        self._ctrl = np.zeros(n)
        self._braking = False
        self.mj_model.dof_damping[:] = self.base_damping
        self.sensors.reset()

    # ---- commands ---------------------------------------------------------------------------
    def command(self, values: Sequence[float], now: float | None = None) -> bool:
        """Latch a command (``config.joints`` order) received at ``now``; False if rejected."""
        arr = np.asarray(values, dtype=float).reshape(-1) if len(values) else np.zeros(0)
        if arr.shape != (self.n,):
            return self._reject(f"command has {arr.size} values, expected {self.n} "
                                f"({list(self.joint_names)})")
        if not np.isfinite(arr).all():
            bad = [self.joint_names[k] for k in np.flatnonzero(~np.isfinite(arr))]
            return self._reject(f"command has NaN/Inf for {bad}")
        self._command = self._to_model(arr)
        self._command_time = now
        self._fresh = True
        self.stats.commands_received += 1
        return True

    def _reject(self, why: str) -> bool:
        self.stats.commands_rejected += 1
        wall = time.monotonic()
        if wall - self._last_error_log >= 1.0:
            more = f" (+{self._suppressed} more rejected since the last message)" \
                if self._suppressed else ""
            self.log("error", f"rejected command: {why}; keeping the last safe command{more}")
            self._last_error_log = wall
            self._suppressed = 0
        else:
            self._suppressed += 1
        return False

    def _stale(self, now: float | None) -> bool:
        timeout = self.config.command_timeout
        if now is None or timeout <= 0:
            return False
        return self._command_time is None or now - self._command_time > timeout

    # ---- stepping ---------------------------------------------------------------------------
    def step(self, now: float | None = None) -> None:
        """One physics step with the latched command (see the module docstring)."""
        stale = self._stale(now)
        if stale != self._braking:
            self._braking = stale
            if stale:
                brake = self._stable_brake()
                self.mj_model.dof_damping[:] = self.base_damping
                self.mj_model.dof_damping[self.dof_adr] += brake
                age = "no command yet" if self._command_time is None else \
                    f"last command {1e3 * (now - self._command_time):.0f} ms ago"
                capped = "" if np.all(brake >= self.config.brake_damping) else \
                    f" (capped for the explicit integrator at {np.array2string(brake, precision=3)})"
                self.log("warn", f"command timeout ({age}, timeout "
                                 f"{1e3 * self.config.command_timeout:.0f} ms): zero torque, "
                                 f"brake damping {self.config.brake_damping:g}{capped}")
            else:
                self.mj_model.dof_damping[:] = self.base_damping
                self.log("info", "commands resumed: brake released")
        if not self._fresh:
            self.stats.steps_without_new_command += 1
        self._fresh = False
        if stale:
            self.stats.stale_steps += 1
            self._queue = deque([np.zeros(self.n)] * self.config.latency_steps)
            ctrl = np.zeros(self.n)
        else:
            if self.config.latency_steps:
                self._queue.append(self._command)
                command = self._queue.popleft()
            else:
                command = self._command
            ctrl, clamped = self.motor.actuator_torque(command)
            if clamped.any():
                self.stats.saturated_steps += 1
        self._ctrl = ctrl
        self.mj_data.ctrl[:] = ctrl
        self._mj.mj_step(self.mj_model, self.mj_data)
        self.stats.steps += 1

    def _stable_brake(self) -> np.ndarray:
        """Brake damping per joint (model order). Euler and RK4 integrate damping explicitly
        and blow up once ``b dt / m`` passes about 2 (RK4: 2.8); a light wrist without armature
        (m ~ 1e-4 kg m^2) with b = 10 does. So with those integrators each joint's brake is
        capped at ``0.5 m_ii / dt`` (m_ii: the joint-space inertia diagonal, armature included,
        at the current pose); implicit integrators take the configured value."""
        b = np.full(self.n, float(self.config.brake_damping))
        mj = self._mj
        if integrator_enum(self.config.integrator) not in (mj.mjtIntegrator.mjINT_EULER,
                                                           mj.mjtIntegrator.mjINT_RK4):
            return b
        mj.mj_forward(self.mj_model, self.mj_data)
        M = np.zeros((self.mj_model.nv, self.mj_model.nv))
        mj.mj_fullM(self.mj_model, self.mj_data, M)
        m_ii = np.diag(M)[self.dof_adr]
        return np.minimum(b, 0.5 * m_ii / self.mj_model.opt.timestep)

    def measure(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(position, velocity, effort)`` in ``config.joints`` order, through the sensors."""
        q, qd = self.q, self.qd
        effort = self.motor.measured_effort(self._ctrl, qd)
        q, qd, effort = self.sensors.measure(q, qd, effort)
        o = self.order
        return q[o], qd[o], effort[o]
