"""The simulated arm behind the MuJoCo bridge, without ROS.

``Simulator(model, BridgeConfig(...))`` holds the ``MjModel``/``MjData`` built from the
``MdhModel`` (``mujoco_model.build_mujoco_model``) and the actuator and sensor models of 003
§6.1 (``motor``).  ``command(values, now)`` latches a command (in ``config.joints`` order),
``step(now)`` advances one timestep, ``measure()`` returns position, velocity and effort as the
drives would report them.  Every part of the motor model is switchable in ``BridgeConfig``
(all keys, their defaults and meaning: ``config/schema/mujoco_bridge.yaml``).

Command interfaces (``command_interface``, one for all or per joint: ros2_control's
``effort``, ``position``, ``velocity``): ``command(values, now, interface)`` latches the values
of that interface's joints (``config.joints`` order); position and velocity joints are driven by
servos in their MuJoCo actuators (``rbd_ros.sim.drives``), clamped to the URDF's effort limits,
the applied torque their measured effort.  The newest command on any interface is what the
timeout looks at.

Safety:

* a command older than ``command_timeout`` (seconds of the caller's clock; the node passes
  the wall clock in realtime and max modes, nothing in lockstep) -> zero torque and an extra
  joint damping ``brake_damping`` (N m s/rad, or N s/m), until a fresh command arrives.  The
  change is logged once each way.  No command yet counts as stale.
* a NaN/Inf or wrong-length command, or one for an interface no joint uses, is rejected
  (error logged at most once a second per cause: interface and kind) and the last safe
  command is kept.
* **instability**: MuJoCo's own reset on a NaN/huge acceleration (which would send the arm to
  q = 0 and the clock back to 0) is switched off.  A step that leaves a non-finite or huge
  state, or raises MuJoCo's bad-state warnings, is undone: the arm is put back at the last
  good positions at rest, the clock still advances by one step (it never goes backwards),
  ``stats.unstable_steps`` counts it and the log says so (at most once a second).
* MuJoCo's warnings go to ``log`` instead of ``MUJOCO_LOG.TXT`` in the working directory.
* initial positions outside the joint limits are clamped onto them, with a warning.

Integrator (``integrator``): ``auto`` (the default) picks implicitfast with a scene (contacts;
RK4 re-solves them at each stage), else RK4 unless a joint's damping makes
RK4 unstable, then ``implicitfast``, which treats damping implicitly.  The criterion: RK4
integrates the joint damping ``b`` explicitly; on a joint of inertia ``m`` it is the decay
``qd' = -(b/m) qd``, whose RK4 step is stable while ``b dt / m < 2.785`` (the real-axis limit
of RK4's stability region).  ``m`` is the smallest inertia the joint can see,
``1 / (M^-1)_ii`` (armature included), the least of it at the initial pose and at 64 poses
inside the limits (fixed seed: it changes with the pose); ``auto`` keeps a margin
(``b dt / m <= 1``).  Euler in MuJoCo already integrates damping implicitly.  An explicitly
chosen RK4 that fails the criterion is kept, with a warning naming the joint, the ratio and
the timestep that would be stable.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numba import njit

from rbd_ros.algorithm.gather import gather, gather2, scatter_finite
from rbd_ros.algorithm.integrators import INTEGRATORS
from rbd_ros.model import MdhModel
from rbd_ros.robot.damping import RK4_DAMPING_LIMIT, damping_why
from rbd_ros.sim import drives
from rbd_ros.sim.contact_site import contact_site, probe_lengths
from rbd_ros.sim.gripper import GripperServo, find_gripper
from rbd_ros.sim.motor import MotorModel, SensorModel, per_joint
from rbd_ros.sim.mujoco_model import build_mujoco_model, integrator_enum, scene_touches
from rbd_ros.sim.realtime import check_priority
from rbd_ros.sim.scene import load_scene, place_scene
from rbd_ros.sim.urdf_visuals import urdf_collisions
from rbd_ros.util import yaml_io
from rbd_ros.util.schema import check, config_keys, settings

if TYPE_CHECKING:  # the schema's fields, declared for the checker (bridge_fields)
    from rbd_ros.sim.bridge_fields import BridgeFields
    from rbd_ros.sim.gripper import GripperServo
else:
    BridgeFields = object

MODES = tuple(config_keys("mujoco_bridge", "bridge")["mode"]["one_of"])  # realtime, lockstep, max
AUTO = "auto"  # integrator: RK4 unless damping makes it unstable, then implicitfast
AUTO_DAMPING_MARGIN = 1.0  # 'auto' keeps b dt / m below this
HUGE_STATE = 1e10  # |qpos| or |qvel| beyond this counts as unstable (MuJoCo's mjMAXVAL)
LogFn = Callable[[str, str], None]  # (level: "info" | "warn" | "error", message)
#: a real arm's sensor noise (standard deviations of the BridgeConfig fields of the same names:
#: a 17-bit encoder, a velocity from differences of it at 1 kHz filtered, a torque sensor's
#: 0.05 N m); ``rbd-ros bringup --noise`` sets them
SENSOR_NOISE = {"position_noise": 5e-5, "velocity_noise": 2e-3, "effort_noise": 0.05}


@settings("mujoco_bridge", "bridge")
class BridgeConfig(BridgeFields):
    """Every bridge setting: the keys of ``config/schema/mujoco_bridge.yaml`` tagged
    ``config: bridge``, each written once there (type, default, range or choices, meaning) and
    read from it as data (``rbd_ros.util.schema.settings``: the fields, in the schema's order,
    with its defaults).  ``__post_init__`` refuses what the schema's ``range`` and ``one_of``
    refuse (``schema.check``) and what it cannot say: the integrator by the core's table
    (case-insensitive), ``sched_slice_us``, ``rt_priority``, ``cpu_affinity``."""

    def __post_init__(self) -> None:
        put = object.__setattr__
        for name in ("joints", "initial_positions", "initial_velocities"):
            value = getattr(self, name)
            value = () if value is None else tuple(value)
            put(self, name, tuple(str(v) for v in value) if name == "joints"
                else tuple(float(v) for v in value))
        if str(self.integrator).strip().lower() not in (AUTO, *INTEGRATORS):  # the core's table
            raise ValueError(f"integrator must be one of {AUTO}, {', '.join(INTEGRATORS)}; "
                             f"got '{self.integrator}'")
        check(self, skip=("integrator", "rt_priority"))  # ranges and choices of the schema
        put(self, "publish_every", int(self.publish_every))
        put(self, "latency_steps", int(self.latency_steps))
        put(self, "noise_seed", int(self.noise_seed))
        put(self, "rt_priority", check_priority(self.rt_priority))
        if not (self.sched_slice_us == 0 or 100 <= self.sched_slice_us <= 100_000):
            raise ValueError(f"sched_slice_us must be 0 (leave it) or 100 to 100000 us (the "
                             f"kernel's range), got {self.sched_slice_us}")
        put(self, "sched_slice_us", float(self.sched_slice_us))
        cpus = self.cpu_affinity
        cpus = () if cpus is None else (cpus,) if isinstance(cpus, (int, float)) else tuple(cpus)
        if any(float(c) != int(c) or int(c) < 0 for c in cpus):
            raise ValueError(f"cpu_affinity must be CPU numbers >= 0, got {list(cpus)}")
        put(self, "cpu_affinity", tuple(int(c) for c in cpus))
        put(self, "scene", str(self.scene or ""))
        put(self, "ft_link", str(self.ft_link or ""))
        for name in ("ft_force_noise", "ft_torque_noise", "ft_cutoff"):
            if not (math.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        ci = self.command_interface
        names = (ci,) if isinstance(ci, str) else tuple(ci)  # one for all, or one per joint
        put(self, "command_interface", drives.interfaces_of(names, names))  # (the count: Simulator)
        if set(names) != {"effort"} and self.command_mode != "torque":
            raise ValueError(f"command_interface position/velocity needs command_mode torque "
                             f"(the drive's output is a torque), got {self.command_mode}")
        for name in ("drive_kp", "drive_kd"):
            value = getattr(self, name)
            put(self, name, float(value) if np.ndim(value) == 0 else tuple(float(v) for v in value))

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

        with open(path, encoding="utf-8") as fh:
            return cls.from_dict(yaml_io.safe_load(fh) or {})

    def replace(self, **changes: Any) -> "BridgeConfig":
        data = {k: getattr(self, k) for k in self.keys()}
        data.update(changes)
        return BridgeConfig.from_dict(data)


def scene_of(model: MdhModel, cfg: BridgeConfig, scene: Any,
              collision: Any = ()) -> tuple[Any, Any, MdhModel]:
    """(placed scene, contact site, model with the probe as its tool) for ``Simulator``: the
    ``scene`` given (placed, or placed here), else ``cfg.scene`` (a file or bundled name);
    ``pose: auto`` objects go where ``contact_site`` puts the probe (``rbd_ros.sim.scene``;
    its length from the last body's ``collision`` shapes, ``contact_site.probe_lengths``).
    Without a scene: ``(None, None, model)``."""
    if scene is None and not cfg.scene:
        return None, None, model
    scene = load_scene(cfg.scene) if scene is None else scene
    site = None
    probe = probe_lengths(model, collision)
    if scene.placed:
        tool = model.tool.copy()
        tool[:3, 3] += probe[0] * np.array([0.0, 0.0, 1.0])
    else:
        anchor = next(o.anchor for o in scene.objects if o.pose is None)
        site = contact_site(model, anchor, probe=probe)
        scene = place_scene(scene, site.middle, site.normal, site.mass)
        tool = site.tool
    return scene, site, model.replace(tool=tool)


def collision_shapes(model: MdhModel, urdf: Any, log: LogFn | None = None, conversion: Any = None,
                     skip: tuple[str, ...] = ()) -> tuple:
    """The collision shapes of ``urdf`` (a file or XML text) that touch a scene, for
    ``model``'s bodies (``urdf_visuals.urdf_collisions``; its notes go to ``log`` as
    warnings): none without a ``urdf``, or when it does not describe ``model``'s bodies
    (logged: the capsules stay).  What ``Simulator`` builds, and places its scene's probe by
    (``contact_site.probe_lengths``): a bringup computing the same site calls it too, with
    the URDF's ``conversion`` it loaded the model from (not converted again)."""
    if not urdf:
        return ()
    try:
        shapes, notes = urdf_collisions(urdf, model.base_link, model.tip_link, model, conversion, skip=skip)
    except Exception as exc:  # noqa: BLE001 - any URDF the shapes cannot come from
        shapes, notes = [], [f"no URDF collision shapes ({' '.join(str(exc).split())}): the "
                             "link capsules touch the scene"]
    for note in notes:
        (log or _default_log)("warn", note)
    return tuple(shapes)


def _gripper_of(model: MdhModel, cfg: BridgeConfig, urdf: Any, conversion: Any) -> Any:
    """The gripper of ``cfg.gripper`` ('' = none, ``auto`` or the actuated joint's name) in
    the model's URDF (``rbd_ros.sim.gripper.find_gripper``), else None."""
    if not cfg.gripper:
        return None
    if not urdf:
        raise ValueError("gripper needs the URDF (urdf_path or robot_description), not a model file")
    joint = None if cfg.gripper == "auto" else cfg.gripper
    found = find_gripper(urdf, model.base_link, model.tip_link, joint, conversion)
    if found is None:
        raise ValueError(f"gripper {cfg.gripper}: no movable joint hangs off the chain "
                         f"{model.base_link} -> {model.tip_link}")
    return found


def _gripper_start(gripper: Any, value: Any) -> float | None:
    """``gripper_initial`` as the actuated joint's start (None: the reference), inside its
    limits (else a ValueError naming them)."""
    if value is None or (isinstance(value, (list, tuple, str)) and len(value) == 0):
        return None
    items = value if isinstance(value, (list, tuple)) else [value]
    a = gripper.actuated
    try:
        (q,) = (float(v) for v in items)
    except (TypeError, ValueError):
        raise ValueError(f"gripper_initial must be one number (rad or m), got {value!r}") from None
    if not (np.isfinite(q) and a.lower <= q <= a.upper):
        raise ValueError(f"gripper_initial {q:g} is outside {a.name}'s limits [{a.lower:g}, {a.upper:g}]")
    return q


def _ft_of(model: MdhModel, cfg: BridgeConfig, scene: Any) -> Any:
    """The F/T sensor of ``cfg`` (on with ``ft_sensor`` or a scene), else None."""
    if not (cfg.ft_sensor or scene is not None):
        given = [k for k in ("ft_tool", "ft_payload") if getattr(cfg, k)]
        if given:
            raise ValueError(f"{' and '.join(given)} need the F/T sensor: set ft_sensor true (or a scene)")
        return None
    from rbd_ros.identification.payload import load_payload  # lazy: the identification, for a payload only
    from rbd_ros.sim.ft_sensor import FTSensor  # lazy: the F/T sensor (23 ms), for an F/T sensor only

    tool, payload = (load_payload(f) if f else None for f in (cfg.ft_tool, cfg.ft_payload))
    return FTSensor(model, cfg.ft_link, cfg.ft_force_noise, cfg.ft_torque_noise, cfg.ft_cutoff,
                    cfg.timestep, cfg.noise_seed, tool, payload)


@dataclass
class SimStats:
    steps: int = 0
    commands_received: int = 0  # valid commands
    commands_rejected: int = 0  # NaN/Inf or wrong length
    steps_without_new_command: int = 0
    stale_steps: int = 0  # steps under the timeout brake
    saturated_steps: int = 0  # steps with at least one joint clamped
    unstable_steps: int = 0  # steps undone because the state blew up (see the module docstring)


def _default_log(level: str, message: str) -> None:
    print(f"[{level}] {message}", flush=True)


@njit(cache=True)
def _state_ok(qpos: np.ndarray, qvel: np.ndarray) -> bool:  # pragma: no cover - jitted
    """Every ``|qpos|``, ``|qvel|`` below ``HUGE_STATE`` (so finite)."""
    for x in qpos:
        if not abs(x) < HUGE_STATE:
            return False
    for x in qvel:
        if not abs(x) < HUGE_STATE:
            return False
    return True


@njit(cache=True)
def _count(numbers: np.ndarray, index: np.ndarray) -> int:  # pragma: no cover - jitted
    """``sum(numbers[index])``: MuJoCo's counts of the bad-state warnings."""
    total = 0
    for i in index:
        total += numbers[i]
    return total


def route_mujoco_warnings(log: LogFn) -> None:
    """MuJoCo's warnings (process-wide) to ``log`` as "warn", not to ``MUJOCO_LOG.TXT``."""
    import mujoco

    def handler(message: str) -> None:
        log("warn", f"MuJoCo: {str(message).strip()}")

    mujoco.set_mju_user_warning(handler)


class Simulator:
    """One simulated arm: MuJoCo physics + motor model + sensors (see the module docstring)."""

    def __init__(self, model: MdhModel, config: BridgeConfig | None = None,
                 log: LogFn | None = None, scene: Any = None, urdf: Any = None,
                 conversion: Any = None) -> None:
        import mujoco

        self._mj = mujoco
        self.config = cfg = config or BridgeConfig()
        self.log = log or _default_log
        #: the objects the arm touches (``rbd_ros.sim.scene``; ``scene`` a placed ``Scene``, else
        #: ``config.scene``), the contact site that placed them, and the F/T sensor: all None
        #: without a scene or ``ft_sensor`` (the model is then the one built before them)
        #: with a scene and the ``urdf`` the model came from (a file or XML text): the URDF's
        #: collision shapes the scene's objects touch (``urdf_visuals.urdf_collisions``; from
        #: ``conversion``, the URDF's ``UrdfConversion`` the model came from, when given: the
        #: URDF is not converted again)
        #: the URDF's gripper as a mechanism (``config.gripper``; ``rbd_ros.sim.gripper``), else None
        self.gripper = _gripper_of(model, cfg, urdf, conversion)
        self.collision = (collision_shapes(model, urdf, self.log, conversion,
                                           self.gripper.links if self.gripper else ())
                          if scene is not None or cfg.scene else ())
        self.scene, self.site, model = scene_of(model, cfg, scene, self.collision)
        self.model = model
        self.ft = _ft_of(model, cfg, self.scene)
        self._push: Any = None  # (body id, point in the body, wrench, world axes?, end time)
        n = model.dof
        self.joint_names = cfg.joints or model.joint_names
        missing = sorted(set(model.joint_names) - set(self.joint_names))
        extra = sorted(set(self.joint_names) - set(model.joint_names))
        if missing or extra or len(self.joint_names) != n:
            raise ValueError(f"joints must list each of the model's joints once "
                             f"{list(model.joint_names)}; missing {missing}, unknown {extra}")
        #: model index of the k-th joint in command/state order
        self.order = np.array([model.joint_names.index(j) for j in self.joint_names],
                              dtype=np.intp)
        self.motor = MotorModel(model, cfg.command_mode, cfg.saturation, cfg.voltage_limit)
        self.sensors = SensorModel(n, cfg.encoder_resolution, cfg.position_noise,
                                   cfg.velocity_noise, cfg.effort_noise, cfg.noise_seed)
        # sensor parameters are per joint in command order; store them in model order
        self.sensors.reorder(self.order)
        route_mujoco_warnings(self.log)
        self.mj_model, self.warnings = self._build_model(model, cfg)
        for w in self.warnings:
            self.log("warn", f"inertia fix-up: {w}")
        # no silent mj_resetData (q = 0, time = 0) on a bad acceleration: step() handles it
        self.mj_model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_AUTORESET)
        W = mujoco.mjtWarning
        self._bad_state_warnings = np.array([int(W.mjWARN_BADQACC), int(W.mjWARN_BADQPOS),
                                             int(W.mjWARN_BADQVEL)], dtype=np.intp)
        self.mj_data = mujoco.MjData(self.mj_model)
        self.gripper_servo = None
        if self.gripper is not None:
            self.gripper_servo = GripperServo(self.mj_model, self.gripper)
            self.gripper_q0 = _gripper_start(self.gripper, cfg.gripper_initial)
            self.log("info", f"gripper: {', '.join(self.gripper.names)} (actuated "
                             f"{self.gripper.actuated.name}, servo kp {self.gripper_servo.kp:.4g} "
                             f"kd {self.gripper_servo.kd:.4g})")
        if (self.scene is not None or self.ft is not None) and self.mj_model.nsensor == 0:
            raise ValueError("scenes and the F/T sensor are for fixed-base arms: this model "
                             "builder (a mobile base) adds neither; leave scene and ft_sensor off")
        if self.ft is not None:
            self.ft.attach(self.mj_model)
            self._pre_q, self._pre_qd, self._qdd = np.zeros(n), np.zeros(n), np.zeros(n)
        # MuJoCo's warning counters, a view into mj_data (``mj_data.warning`` makes a new
        # wrapper object on every access)
        self._warning_numbers = self.mj_data.warning.number
        self.dof_adr = np.array([self.mj_model.jnt_dofadr[mujoco.mj_name2id(
            self.mj_model, mujoco.mjtObj.mjOBJ_JOINT, name)] for name in model.joint_names],
            dtype=np.intp)
        self.qpos_adr = np.array([self.mj_model.jnt_qposadr[mujoco.mj_name2id(
            self.mj_model, mujoco.mjtObj.mjOBJ_JOINT, name)] for name in model.joint_names],
            dtype=np.intp)
        # per-step buffers (command, step and measure allocate nothing): the measured state in
        # model order, then in command order (what measure() returns), the saturation flags
        self._model_state = (np.zeros(n), np.zeros(n), np.zeros(n))
        self._measured = (np.zeros(n), np.zeros(n), np.zeros(n))
        self._clamped = np.zeros(n, dtype=bool)
        self._drive_q = np.zeros(n)
        self.base_damping = self.mj_model.dof_damping.copy()
        self.base_damping[self.dof_adr] += self.motor.emf_damping
        self.mj_model.dof_damping[:] = self.base_damping
        self.q0 = self._initial(cfg.initial_positions, "initial_positions")
        self.qd0 = self._initial(cfg.initial_velocities, "initial_velocities")
        outside = [model.joint_names[i] for i in range(n)
                   if not model.lower[i] <= self.q0[i] <= model.upper[i]]
        if outside:
            given = self.q0.copy()
            self.q0 = np.clip(self.q0, model.lower, model.upper)
            if cfg.initial_positions:
                moved = ", ".join(f"{model.joint_names[i]} {given[i]:.4g} -> {self.q0[i]:.4g}"
                                  for i in range(n) if given[i] != self.q0[i])
                self.log("warn", f"initial positions outside the joint limits clamped onto "
                                 f"them: {moved}")
            else:  # default start: zeros, moved onto the nearest limit where 0 is outside
                self.log("info", f"initial positions: 0 is outside the limits of {outside}; "
                                 f"those start at their nearest limit")
        self.drive = self._make_drive()
        if self.drive.active:  # the drive joints' actuators become its servos
            self.drive.attach(self.mj_model, [mujoco.mj_name2id(
                self.mj_model, mujoco.mjtObj.mjOBJ_ACTUATOR, name) for name in model.joint_names])
            self.motor.exempt(self.drive.driven)
        self.stats = SimStats()
        self._reject_logs: dict[str, tuple[float, int]] = {}  # cause -> (last message's wall time, suppressed since)
        self._last_unstable_log = -math.inf
        self._good_q = self.q0.copy()
        self.reset(keep_time=False)
        self.integrator = self._choose_integrator()
        self._load_step_kernels()

    def _load_step_kernels(self) -> None:
        """Call the jitted kernels of ``command`` and ``step`` once on scratch copies (nothing
        here changes): loaded from numba's cache now, or compiled on a cold one, not in the
        stepping thread's first steps (issue 39: 4.6 s of compilation there, under load)."""
        n, d = self.n, self.mj_data
        scatter_finite(np.zeros(n), self.order, self._command.copy())
        _count(self._warning_numbers, self._bad_state_warnings)
        _state_ok(d.qpos.copy(), d.qvel.copy())
        gather(d.qpos, self.qpos_adr, self._good_q.copy())
        saturated = self.motor.saturated
        self.motor.actuator_torque(np.zeros(n), np.zeros(n), np.zeros(n, dtype=bool))
        self.motor.saturated = saturated

    def scene_touching_links(self) -> list[str]:
        """The links (MuJoCo bodies) the scene touches now besides the probe
        (``mujoco_model.scene_touches``; empty without a scene).  At the start this is a
        collision shape too large for the scene or a start inside an object, which the F/T
        sensor never sees: the bridge warns (``mujoco_bridge``), ``run_press`` notes every
        such cycle (``contact_task.link_contacts``)."""
        if self.scene is None:
            return []
        m, mj = self.mj_model, self._mj
        tip = mj.mj_name2id(m, mj.mjtObj.mjOBJ_GEOM, "tip")
        return sorted(mj.mj_id2name(m, mj.mjtObj.mjOBJ_BODY, b)
                      for b in scene_touches(m, self.mj_data, tip))

    def _build_model(self, model: MdhModel, cfg: BridgeConfig) -> tuple[Any, list[str]]:
        """The ``MjModel`` and its inertia fix-up warnings (a mobile base builds its own:
        ``rbd_ros.sim.mobile_sim``)."""
        return build_mujoco_model(
            model, cfg.timestep, "RK4" if cfg.integrator.lower() == AUTO else cfg.integrator,
            cfg.contacts, actuators=True,
            armature=cfg.armature, viscous=cfg.viscous_friction, coulomb=cfg.coulomb_friction,
            min_mass=cfg.min_mass, min_inertia=cfg.min_inertia, scene=self.scene, sensor=self.ft,
            collision=self.collision, gripper=getattr(self, "gripper", None))

    def damping_ratio_dt(self, poses: int = 0) -> np.ndarray:
        """``b dt / m_min`` per joint (model order), the explicit-damping stability number of
        the module docstring (``m_min = 1 / (M^-1)_ii``): at the current pose, or its maximum
        over it and ``poses`` random poses inside the limits (fixed seed; ``m_min`` changes
        with the pose: 0.3 at TIAGo's start, 2.3 at q = 0 for its wrist)."""
        mj, m, d = self._mj, self.mj_model, self.mj_data
        lo = np.clip(self.model.lower, -np.pi, np.pi)
        hi = np.clip(self.model.upper, -np.pi, np.pi)
        rng = np.random.default_rng(0)
        saved = d.qpos.copy()
        worst = np.zeros(self.n)
        M = np.zeros((m.nv, m.nv))
        for k in range(poses + 1):
            if k:
                d.qpos[self.qpos_adr] = lo + rng.random(self.n) * (hi - lo)
            mj.mj_forward(m, d)
            mj.mj_fullM(m, d, M)
            m_min = 1.0 / np.diag(np.linalg.inv(M))[self.dof_adr]
            worst = np.maximum(worst, self.base_damping[self.dof_adr] * m.opt.timestep / m_min)
        d.qpos[:] = saved
        mj.mj_forward(m, d)
        return worst

    def _choose_integrator(self) -> str:
        """Apply ``config.integrator`` (``auto``: RK4 or implicitfast) and say so; warn when an
        explicit RK4 cannot be stable (module docstring).  Returns the integrator used."""

        chosen = self.config.integrator
        z = self.damping_ratio_dt(poses=64)
        worst = int(np.argmax(z)) if len(z) else 0
        dt = self.mj_model.opt.timestep
        why = ""
        if len(z):
            m_min = self.base_damping[self.dof_adr][worst] * dt / max(z[worst], 1e-300)
            why = damping_why(self.model.joint_names[worst], self.base_damping[self.dof_adr][worst], m_min,
                              z[worst])
        if chosen.lower() == AUTO:
            if self.scene is not None:
                chosen = "implicitfast"
                self.log("info", "integrator auto -> implicitfast (a scene: contacts; RK4 "
                                 "re-solves them at each stage and its F/T readings belong to "
                                 "none of them)")
            elif self.drive.active:
                chosen = "implicitfast"
                self.log("info", "integrator auto -> implicitfast (position/velocity drives: "
                                 "their damping integrated implicitly, rbd_ros.sim.drives)")
            elif len(z) and z[worst] > AUTO_DAMPING_MARGIN:
                chosen = "implicitfast"
                self.log("info", f"integrator auto -> implicitfast ({why} > "
                                 f"{AUTO_DAMPING_MARGIN:g}: explicit RK4 would be near or past "
                                 f"its limit {RK4_DAMPING_LIMIT})")
            else:
                chosen = "RK4"
            self.mj_model.opt.integrator = integrator_enum(chosen)
        elif self.drive.active and chosen.lower() not in ("implicit", "implicitfast"):
            self.log("warn", f"integrator {chosen} with position/velocity drives: only implicit "
                             f"and implicitfast integrate their damping implicitly (the loop "
                             f"check of rbd_ros.sim.drives assumes it); use auto")
        elif chosen.lower() == "rk4" and len(z) and z[worst] > RK4_DAMPING_LIMIT:
            stable_dt = RK4_DAMPING_LIMIT / z[worst] * dt
            self.log("warn", f"integrator RK4 at timestep {dt:g} s cannot be stable: {why} > "
                             f"{RK4_DAMPING_LIMIT} (RK4's limit for damping); use integrator "
                             f"implicitfast (or auto), or a timestep below {stable_dt:.2g} s")
        return chosen

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
        if self.gripper_servo is not None and self.gripper_q0 is not None:
            self.mj_data.qpos[self.gripper_servo.qpos] = self.gripper.mimic_positions(self.gripper_q0)
        self._mj.mj_forward(self.mj_model, self.mj_data)
        n = self.n
        self._command = np.zeros(n)  # last safe command, model order
        self.drive.idle(self._command, self.q0)  # position drives hold the initial pose
        self._command_time: float | None = None
        self._fresh = False
        # the latency line: a ring of the last latency_steps commands, oldest at _line_head
        self._line = np.zeros((self.config.latency_steps, n))
        self._line[:] = self._command
        self._line_head = 0
        self._delayed = np.zeros(n)
        self._ctrl = np.zeros(n)
        if self.gripper_servo is not None:  # back at its reference, holding there
            self.gripper_servo.target = self.gripper_servo.reference = None
        self._braking = False
        self.drive.enable(True)
        self.mj_model.dof_damping[:] = self.base_damping
        self.sensors.reset()
        self._push = None
        if self.ft is not None:
            self.ft.reset()

    # ---- commands ---------------------------------------------------------------------------
    def _make_drive(self) -> drives.Drive:
        """The joints' command interfaces (``config.command_interface``, in ``joints``
        order) and the position/velocity drives (``rbd_ros.sim.drives``, model order): the
        model indices of each interface's joints in command order (``interface_order``)."""
        cfg = self.config
        names = drives.interfaces_of(cfg.command_interface, self.joint_names)  # command order
        self.interfaces = names
        #: the model indices of the joints of each interface, in command order
        self.interface_order = {i: np.array([self.order[k] for k in range(self.n)
                                             if names[k] == i], dtype=np.intp)
                                for i in drives.INTERFACES}
        in_model = [""] * self.n
        for k, name in enumerate(names):
            in_model[self.order[k]] = name
        if any(name != "effort" for name in names):
            if hasattr(type(self), "base_state"):
                raise ValueError("command_interface position/velocity is for fixed-base arms: "
                                 "a mobile base takes effort commands")
        kp, kd = (self._to_model(per_joint(v, self.n, key)) for v, key in
                  ((cfg.drive_kp, "drive_kp"), (cfg.drive_kd, "drive_kd")))
        inertias = self.joint_inertias(self.q0, poses=64) if any(
            name != "effort" for name in names) else []
        return drives.make_drive(in_model, kp, kd, cfg.drive_bandwidth, self.motor.effort_limit,
                                 self.mj_model.opt.timestep, inertias, self.model.joint_names,
                                 self.log)

    def joint_inertias(self, q0: np.ndarray, poses: int = 0) -> list[np.ndarray]:
        """The joint-space inertia (model order, armature included) at ``q0``, then at
        ``poses`` random poses inside the limits (fixed seed); the state is left as it was."""
        mj, m, d = self._mj, self.mj_model, self.mj_data
        lo = np.clip(self.model.lower, -np.pi, np.pi)
        hi = np.clip(self.model.upper, -np.pi, np.pi)
        rng = np.random.default_rng(0)
        saved = d.qpos.copy()
        out = []
        M = np.zeros((m.nv, m.nv))
        for k in range(poses + 1):
            d.qpos[self.qpos_adr] = q0 if k == 0 else lo + rng.random(self.n) * (hi - lo)
            mj.mj_forward(m, d)
            mj.mj_fullM(m, d, M)
            out.append(M[np.ix_(self.dof_adr, self.dof_adr)].copy())
        d.qpos[:] = saved
        mj.mj_forward(m, d)
        return out

    def command(self, values: Sequence[float] | np.ndarray, now: float | None = None,
                interface: str = "effort") -> bool:
        """Latch a command received at ``now`` for the joints of ``interface`` (``effort``:
        N m or N, or V in voltage mode; ``position``: rad or m; ``velocity``: rad/s or m/s),
        their values in ``config.joints`` order; False if rejected (an interface no joint
        uses, a wrong length, NaN/Inf).  A float64 array (the composed loop's torque) is
        copied without allocating."""
        order = self.interface_order.get(interface)
        if order is None or order.shape[0] == 0:
            return self._reject(f"{interface} command, but no joint uses the {interface} "
                                f"interface (command_interface: {self.interfaces_summary()}): "
                                f"not applied", f"{interface} unused")
        arr = values
        if not (isinstance(arr, np.ndarray) and arr.dtype == np.float64 and arr.ndim == 1):
            arr = np.asarray(values, dtype=float).reshape(-1) if len(values) else np.zeros(0)
        if arr.shape[0] != order.shape[0]:
            return self._reject(f"{interface} command has {arr.size} values, expected "
                                f"{order.shape[0]} ({self._names_of(order)})", f"{interface} length")
        if not scatter_finite(arr, order, self._command):  # model order, or untouched
            return self._reject(f"{interface} command has NaN/Inf for "
                                f"{self._non_finite(arr, order)}", f"{interface} non-finite")
        self._command_time = now
        self._fresh = True
        self.stats.commands_received += 1
        return True

    def interfaces_summary(self) -> str:
        """``position for every joint``, or each joint's interface (``j1 position, j2 effort``)."""
        kinds = sorted(set(self.interfaces))
        if len(kinds) == 1:
            return f"{kinds[0]} for every joint"
        return ", ".join(f"{j} {i}" for j, i in zip(self.joint_names, self.interfaces))

    def _names_of(self, order: np.ndarray) -> list[str]:
        return [self.model.joint_names[i] for i in order]

    def _non_finite(self, values: np.ndarray, order: np.ndarray) -> list[str]:
        """The joints whose command is NaN/Inf (not a comprehension inside ``command``: it would
        make ``self`` a closure cell, allocated on every call)."""
        return [self.model.joint_names[order[k]] for k in np.flatnonzero(~np.isfinite(values))]

    def _reject(self, why: str, cause: str) -> bool:
        """Count a rejected command and say why: at most one message a second per ``cause``
        (interface and kind), so a client that repeats one mistake at 1 kHz does not flood the
        log, and a second, different mistake within that second is still said (one shared
        throttle swallowed an effort command to a position arm behind a wrong-length position
        command sent just before)."""
        self.stats.commands_rejected += 1
        wall = time.monotonic()
        said, suppressed = self._reject_logs.get(cause, (-math.inf, 0))
        if wall - said >= 1.0:
            more = f" (+{suppressed} more rejected for the same cause since the last message)" \
                if suppressed else ""
            self.log("error", f"rejected command: {why}; keeping the last safe command{more}")
            self._reject_logs[cause] = (wall, 0)
        else:
            self._reject_logs[cause] = (said, suppressed + 1)
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
            self.drive.enable(not stale)  # position/velocity drives off while stale
            if not stale and self.drive.active:  # a velocity drive resumes from here
                gather(self.mj_data.qpos, self.qpos_adr, self._drive_q)
                self.drive.reset(self._drive_q)
            if stale:
                brake = self._stable_brake()
                self.mj_model.dof_damping[:] = self.base_damping
                self.mj_model.dof_damping[self.dof_adr] += brake
                since = cast(float, now)  # stale: _stale saw a clock (None is never stale)
                age = "no command yet" if self._command_time is None else \
                    f"last command {1e3 * (since - self._command_time):.0f} ms ago"
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
        ctrl = self._ctrl  # (everything below in place: nothing allocated per step)
        if stale:
            self.stats.stale_steps += 1
            if self.drive.active:  # in flight: drives holding still where the joints are
                gather(self.mj_data.qpos, self.qpos_adr, self._drive_q)
                for row in self._line:
                    self.drive.idle(row, self._drive_q)
            else:
                self._line.fill(0.0)
            ctrl.fill(0.0)
        else:
            command = self._command
            if self.config.latency_steps:  # out: the oldest of the line; in: the newest
                oldest = self._line[self._line_head]
                np.copyto(self._delayed, oldest)
                np.copyto(oldest, command)
                self._line_head = (self._line_head + 1) % self.config.latency_steps
                command = self._delayed
            self.motor.actuator_torque(command, ctrl, self._clamped)
            if self.drive.active:  # position/velocity drives: their actuators' controls
                gather(self.mj_data.qpos, self.qpos_adr, self._drive_q)
                self.drive.controls(command, self._drive_q, ctrl)
            elif self.motor.saturated:
                self.stats.saturated_steps += 1
        d = self.mj_data
        if self.gripper_servo is None:
            np.copyto(d.ctrl, ctrl)
        else:  # the arm's actuators first, then the gripper's servo
            np.copyto(d.ctrl[:self.n], ctrl)
            self.gripper_servo.advance(d, self.mj_model.opt.timestep)
        t_before = d.time
        gather(d.qpos, self.qpos_adr, self._good_q)
        numbers, bad = self._warning_numbers, self._bad_state_warnings
        bad_before = _count(numbers, bad)
        if self._push is not None:
            self._apply_push(t_before)
        if self.ft is not None:
            gather(d.qvel, self.dof_adr, self._pre_qd)
        self._advance()
        self.stats.steps += 1
        if self.drive.active and not stale:  # the drives' applied torques are the efforts
            if self.drive.applied(d.actuator_force, ctrl) or self.motor.saturated:
                self.stats.saturated_steps += 1
        if _count(numbers, bad) != bad_before or not _state_ok(d.qpos, d.qvel):
            self._undo_unstable_step(t_before, ctrl)
        elif self.ft is not None:  # the reading of the state the step started from
            self.ft.update(d.sensordata, self._good_q, self._pre_qd, self._qdd, t_before)

    # ---- external pushes (~/apply_wrench) ---------------------------------------------------
    def push(self, link: str, wrench: Sequence[float], duration: float,
             frame: str = "world") -> None:
        """Apply ``wrench = [f; n]`` (N, N m) at the origin of ``link`` (one of the model's
        links; '' or ``tool``: the tool frame on the last body) for ``duration`` s of sim time,
        components in ``frame`` ``world`` (the base frame) or ``link`` (that frame's axes);
        a new push replaces the previous one.  ``ValueError`` for a bad argument."""
        from rbd_ros.control.wrench import SensorFrame  # lazy: the wrench model, for an F/T sensor only

        w = np.asarray(wrench, dtype=float).reshape(-1)
        if w.shape != (6,) or not np.isfinite(w).all():
            raise ValueError(f"wrench must be 6 finite numbers [fx fy fz tx ty tz], got {list(w)}")
        if not (math.isfinite(duration) and duration > 0):
            raise ValueError(f"duration must be > 0 s, got {duration}")
        if frame not in ("world", "link"):
            raise ValueError(f"frame must be 'world' or 'link', got '{frame}'")
        where = SensorFrame.of(self.model, link)  # the link's frame (tool on the last)
        body = self._mj.mj_name2id(self.mj_model, self._mj.mjtObj.mjOBJ_BODY,
                                   self.model.link_names[where.link])
        self._push = (body, where.site.copy(), w, frame == "world", self.time + duration)

    def _apply_push(self, now: float) -> None:
        """``xfrc_applied`` of the push (at the body's CoM: moment ``n + (p - c) x f``), or
        zero once it has ended."""
        body, site, w, world, end = self._push
        d = self.mj_data
        if now >= end - 1e-12:
            d.xfrc_applied[body] = 0.0
            self._push = None
            return
        R = d.xmat[body].reshape(3, 3)
        Rs = R @ site[:3, :3]
        f, n = (w[:3], w[3:]) if world else (Rs @ w[:3], Rs @ w[3:])
        p = d.xpos[body] + R @ site[:3, 3]
        d.xfrc_applied[body, :3] = f
        d.xfrc_applied[body, 3:] = n + np.cross(p - d.xipos[body], f)

    def _advance(self) -> None:
        """The physics of one step (``mj_step``; the ideal mobile base integrates the core).
        With an F/T sensor its accelerations go to ``_qdd``: those the sensors were computed
        with.  Under RK4 that is the first stage's, which ``mj_step`` overwrites with its last
        (up to 4.4e-3 N m in the compensated wrench, issue 41): there the step is ``mj_step``'s
        own parts, the same numbers bit for bit (checks, ``mj_forward``, ``mj_RungeKutta``)."""
        mj, m, d = self._mj, self.mj_model, self.mj_data
        if self.ft is None or m.opt.integrator != mj.mjtIntegrator.mjINT_RK4:
            mj.mj_step(m, d)
            if self.ft is not None:  # Euler, implicit: mj_forward's qacc is kept
                gather(d.qacc, self.dof_adr, self._qdd)
            return
        mj.mj_checkPos(m, d)
        mj.mj_checkVel(m, d)
        mj.mj_forward(m, d)
        mj.mj_checkAcc(m, d)
        gather(d.qacc, self.dof_adr, self._qdd)
        mj.mj_RungeKutta(m, d, 4)

    def _undo_unstable_step(self, t_before: float, ctrl: np.ndarray) -> None:
        """Back to the positions before the step, at rest, one timestep later (docstring)."""
        d = self.mj_data
        self._mj.mj_resetData(self.mj_model, d)
        d.time = t_before + self.mj_model.opt.timestep
        d.qpos[self.qpos_adr] = self._good_q
        d.qvel[:] = 0.0
        self._mj.mj_forward(self.mj_model, d)
        self.stats.unstable_steps += 1
        wall = time.monotonic()
        if wall - self._last_unstable_log >= 1.0:
            self._last_unstable_log = wall
            self.log("error", f"the simulation went unstable at t = {t_before:.4f} s (torques "
                              f"{np.array2string(ctrl, precision=3)}, integrator "
                              f"{self.integrator}, timestep {self.mj_model.opt.timestep:g} s): "
                              f"step undone, arm held at its last positions at rest "
                              f"({self.stats.unstable_steps} unstable steps so far)")

    def _stable_brake(self) -> np.ndarray:
        """Brake damping per joint (model order). Euler and RK4 integrate damping explicitly
        and blow up once ``b dt / m`` passes about 2 (RK4: 2.8); a light wrist without armature
        (m ~ 1e-4 kg m^2) with b = 10 does. So with those integrators each joint's brake is
        capped at ``0.5 m_ii / dt`` (m_ii: the joint-space inertia diagonal, armature included,
        at the current pose); implicit integrators take the configured value."""
        b = np.full(self.n, float(self.config.brake_damping))
        mj = self._mj
        if integrator_enum(self.integrator) not in (mj.mjtIntegrator.mjINT_EULER,
                                                    mj.mjtIntegrator.mjINT_RK4):
            return b
        mj.mj_forward(self.mj_model, self.mj_data)
        M = np.zeros((self.mj_model.nv, self.mj_model.nv))
        mj.mj_fullM(self.mj_model, self.mj_data, M)
        m_ii = np.diag(M)[self.dof_adr]
        return np.minimum(b, 0.5 * m_ii / self.mj_model.opt.timestep)

    def gripper_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The gripper's joints (``gripper.names`` order): positions, velocities and efforts
        (the servo's force on the actuated joint, 0 on a mimic joint: no drive of its own),
        true values (no sensor model)."""
        # called with a gripper only (the node offers its interfaces only then)
        servo, d = cast("GripperServo", self.gripper_servo), self.mj_data
        return servo.positions(d), servo.velocities(d), np.array(d.qfrc_actuator[servo.dof])

    def gripper_command(self, position: float, max_effort: float) -> tuple[float, float]:
        """The gripper's target and force limit (``GripperServo``; from the next step);
        returns both as applied (clipped into the limits; max_effort <= 0: the URDF's)."""
        servo = self.gripper_servo
        if servo is None:
            raise ValueError("no gripper (the gripper setting is off)")
        return servo.command(position), servo.set_max_effort(max_effort)

    def measure(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(position, velocity, effort)`` in ``config.joints`` order, through the sensors.
        The arrays are the simulator's own, overwritten by the next call (copy them to keep
        them): nothing is allocated per step (without sensor noise)."""
        d = self.mj_data
        q, qd, effort = self._model_state
        gather(d.qpos, self.qpos_adr, q)
        gather(d.qvel, self.dof_adr, qd)
        self.motor.measured_effort(self._ctrl, qd, out=effort)
        self.sensors.measure(q, qd, effort)  # in place
        out_q, out_qd, out_effort = self._measured
        gather2(q, qd, self.order, out_q, out_qd)
        gather(effort, self.order, out_effort)
        return self._measured
