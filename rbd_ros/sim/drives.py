"""Position and velocity drives of the simulated arm (ROS-free): the joints whose
``command_interface`` is ``position`` or ``velocity`` (ros2_control's command interfaces of
those names; ``effort`` joints take their torque as before, ``rbd_ros.sim.motor``).

A real drive in position or velocity mode closes a servo loop around its motor, limited by its
current.  Here that loop is the joint's MuJoCo actuator, turned into a PD servo
(``Drive.attach``: affine bias, ``force = kp ctrl - kp q - kd qd``, clamped by ``forcerange``
to ``±effort_limit``, the URDF's ``<limit effort>``, whatever ``saturation`` says), so the
physics evaluates it continuously and an implicit integrator (``implicitfast``, which ``auto``
picks with drives) integrates its damping implicitly: stiff gains on light, coupled joints
stay stable at 1 kHz (the same loop sampled explicitly was unstable at 25 Hz on the Panda and
the G1's arm, whose least inertia is 10 to 200 times below ``M_ii``).  Per joint:

* position (reference ``q_r`` = the command, rad or m): ``ctrl = q_r``, so
  ``tau = kp (q_r - q) - kd qd``; under gravity it sags by ``g(q) / kp``;
* velocity (reference ``qd_r`` = the command, rad/s or m/s): a PI velocity loop,
  ``tau = kd (qd_r - qd) + kp (p - q)``, i.e. ``ctrl = p + (kd / kp) qd_r`` with ``p`` the
  integral of ``qd_r`` (``p += qd_r dt`` each step; ``p`` starts at the measured position and
  follows it while a command is stale), so a commanded zero velocity holds the joint against
  gravity as a real velocity drive's integrator does.  Anti-windup: ``|p - q| <=
  effort_limit / kp``, the reference never leads by more than the drive can push.

The effort on /joint_states is the force MuJoCo's actuator applied (``actuator_force``).  A
stale command (``command_timeout``) switches the drives' actuators off (zero torque, as the
effort path; the brake damping acts) until a fresh command arrives (``Drive.enable``).

Gains (``drive_kp`` N m/rad or N/m, ``drive_kd`` N m s/rad or N s/m, one value or one per
joint; 0 = derived): ``kp = m w^2``, ``kd = 2 m w`` (critically damped for the joint alone),
``w = 2 pi drive_bandwidth`` and ``m = M_ii`` the joint-space inertia diagonal at the initial
pose (armature included).  The loop is checked as the integrator steps it
(``sampled_radius``): semi-implicit Euler with the drive damping implicit, the effort joints
held, on the drive joints' inertia ``M`` (the initial pose and 64 poses inside the limits),

    (M + dt Kd) v+ = M v - dt Kp e,   e+ = e + dt v+,

stable when the spectral radius of ``[e; v] -> [e+; v+]`` is below 1.  Derived gains whose
loop is not are derived again at half the bandwidth (logged); given gains whose loop is not
are warned about.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from rbd_ros.sim.motor import per_joint

INTERFACES = ("effort", "position", "velocity")  # ros2_control's command interface names
EFFORT, POSITION, VELOCITY = 0, 1, 2  # their codes in ``Drive.mode``
#: the topics of ros2_control's forward command controllers, one per interface
TOPICS = {name: f"/{name}_controller/commands" for name in INTERFACES}
STABLE_RADIUS = 1.0  # a sampled loop is stable while its spectral radius is below this
MAX_HALVINGS = 12  # derived gains: the bandwidth halved at most this many times


def interfaces_of(value: str | Sequence[str], joints: Sequence[str]) -> tuple[str, ...]:
    """``command_interface`` (one name for every joint, or one per joint in ``joints`` order)
    as one name per joint; ``ValueError`` naming what is wrong."""
    names = (value,) * len(joints) if isinstance(value, str) else tuple(value)
    if len(names) == 1 and len(joints) != 1:
        names = names * len(joints)
    if len(names) != len(joints):
        raise ValueError(f"command_interface must be one of {', '.join(INTERFACES)} or one per "
                         f"joint ({len(joints)}: {list(joints)}), got {list(names)}")
    out = tuple(str(v).strip().lower() for v in names)
    bad = [f"{j}: '{v}'" for j, v in zip(joints, out) if v not in INTERFACES]
    if bad:
        raise ValueError(f"command_interface must be {', '.join(INTERFACES)}; got {bad}")
    return out


def derived_gains(inertia: np.ndarray, bandwidth_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """``(kp, kd) = (m w^2, 2 m w)`` with ``w = 2 pi bandwidth_hz`` (module docstring)."""
    w = 2.0 * np.pi * bandwidth_hz
    m = np.asarray(inertia, dtype=float)
    return m * w * w, 2.0 * m * w


def sampled_radius(M: np.ndarray, drive: np.ndarray, kp: np.ndarray, kd: np.ndarray,
                   dt: float) -> float:
    """The spectral radius of the drive loop as the integrator steps it (module docstring),
    for joint-space inertia ``M`` (n, n) and the drive joints ``drive`` (indices into it, the
    others held); ``kp``, ``kd`` of those joints."""
    if len(drive) == 0:
        return 0.0
    Md = M[np.ix_(drive, drive)]
    solve = np.linalg.inv(Md + dt * np.diag(kd))  # (M + dt Kd)^-1
    k = len(drive)
    ve = -dt * solve @ np.diag(kp)  # v+ from e
    vv = solve @ Md  # v+ from v
    A = np.block([[np.eye(k) + dt * ve, dt * vv], [ve, vv]])  # e+ = e + dt v+
    return float(np.abs(np.linalg.eigvals(A)).max())


class Drive:
    """The drives of one arm (model order): ``mode`` per joint (``EFFORT``, ``POSITION``,
    ``VELOCITY``), gains, effort limits, the velocity drives' integrated reference."""

    def __init__(self, interfaces: Sequence[str], kp: np.ndarray, kd: np.ndarray,
                 effort_limit: np.ndarray, dt: float) -> None:
        self.mode = np.array([INTERFACES.index(i) for i in interfaces], dtype=np.int64)
        n = len(self.mode)
        self.kp, self.kd = per_joint(kp, n, "drive_kp"), per_joint(kd, n, "drive_kd")
        for name, g in (("drive_kp", self.kp), ("drive_kd", self.kd)):
            if (g < 0).any() or not np.isfinite(g).all():
                raise ValueError(f"{name} must be finite and >= 0, got {list(g)}")
        self.limit = np.abs(np.asarray(effort_limit, dtype=float))
        self.dt = float(dt)
        self.active = bool((self.mode != EFFORT).any())  # False: the command is the torque
        self.reference = np.zeros(n)  # the velocity drives' integrated position p
        self.actuators = np.zeros(0, dtype=np.intp)  # MuJoCo actuator of each joint (attach)
        self._model = None

    @property
    def driven(self) -> np.ndarray:
        """Model indices of the position and velocity joints."""
        return np.flatnonzero(self.mode != EFFORT)

    def attach(self, mj_model, actuators: np.ndarray | Sequence[int]) -> None:  # an MjModel
        """Make the drive joints' actuators (``actuators[i]``: joint ``i``'s) PD servos:
        ``force = kp ctrl - kp q - kd qd`` clamped to ``±effort_limit``."""
        import mujoco

        self._model, self.actuators = mj_model, np.asarray(actuators, dtype=np.intp)
        for i in self.driven:
            a = self.actuators[i]
            mj_model.actuator_gaintype[a] = mujoco.mjtGain.mjGAIN_FIXED
            mj_model.actuator_biastype[a] = mujoco.mjtBias.mjBIAS_AFFINE
            mj_model.actuator_ctrllimited[a] = 0
            if np.isfinite(self.limit[i]):
                mj_model.actuator_forcelimited[a] = 1
                mj_model.actuator_forcerange[a] = (-self.limit[i], self.limit[i])
        self.enable(True)

    def enable(self, on: bool) -> None:
        """The drive actuators servo (``on``) or apply nothing (a stale command)."""
        m = self._model
        if m is None:
            return
        for i in self.driven:
            a = self.actuators[i]
            m.actuator_gainprm[a] = 0.0
            m.actuator_biasprm[a] = 0.0
            if on:
                m.actuator_gainprm[a, 0] = self.kp[i]  # kp ctrl
                m.actuator_biasprm[a, 1] = -self.kp[i]  # - kp q
                m.actuator_biasprm[a, 2] = -self.kd[i]  # - kd qd

    def reset(self, q: np.ndarray) -> None:
        """The velocity drives' reference at the measured positions ``q``."""
        np.copyto(self.reference, q)

    def idle(self, command: np.ndarray, q: np.ndarray) -> None:
        """``command`` (model order, in place) as a drive holding still: 0 for effort and
        velocity joints, ``q`` for position joints; the velocity references at ``q``."""
        _idle(self.mode, q, command, self.reference)

    def controls(self, command: np.ndarray, q: np.ndarray, ctrl: np.ndarray) -> None:
        """The drive joints' actuator controls of ``command`` (model order) at positions
        ``q`` into ``ctrl`` (the effort joints' entries untouched); the velocity references
        advanced by one step (module docstring)."""
        _controls(self.mode, command, q, self.kp, self.kd, self.limit, self.dt,
                  self.reference, ctrl)

    def applied(self, force: np.ndarray, out: np.ndarray) -> bool:
        """The drive joints' applied torques, MuJoCo's ``actuator_force``, into ``out`` (model
        order; the effort joints' entries untouched); True if one is at its effort limit."""
        return _applied(self.mode, force, self.actuators, self.limit, out)


def make_drive(interfaces: Sequence[str], kp: float | Sequence[float] | np.ndarray,
               kd: float | Sequence[float] | np.ndarray, bandwidth_hz: float,
               effort_limit: np.ndarray, dt: float, inertias: Sequence[np.ndarray], names: Sequence[str],
               log) -> Drive:  # the simulator's LogFn
    """The ``Drive`` of ``interfaces`` (model order): ``kp``/``kd`` per joint or one (model
    order), 0 = derived from ``bandwidth_hz`` and the diagonal of ``inertias[0]`` (the
    joint-space inertia at the initial pose, model order), halving the bandwidth until the
    loop (``sampled_radius``) is stable at every matrix of ``inertias``; given gains whose
    loop is not are warned about (``log``, naming the radius).  Interfaces all ``effort``: no
    gains."""
    n = len(interfaces)
    drive = Drive(interfaces, np.zeros(n), np.zeros(n), effort_limit, dt)
    if not drive.active:
        return drive
    given_kp, given_kd = per_joint(kp, n, "drive_kp"), per_joint(kd, n, "drive_kd")
    for name, gain in (("drive_kp", given_kp), ("drive_kd", given_kd)):
        if (gain < 0).any() or not np.isfinite(gain).all():
            raise ValueError(f"{name} must be finite and >= 0 (0 = derived), got {list(gain)}")
    if not (bandwidth_hz > 0 and np.isfinite(bandwidth_hz)):
        raise ValueError(f"drive_bandwidth must be > 0 Hz, got {bandwidth_hz}")
    driven = drive.driven

    def gains(f: float) -> tuple[np.ndarray, np.ndarray]:
        auto_kp, auto_kd = derived_gains(np.diag(inertias[0]), f)
        return (np.where(given_kp > 0, given_kp, auto_kp),
                np.where(given_kd > 0, given_kd, auto_kd))

    def radius(g: tuple[np.ndarray, np.ndarray]) -> float:
        return max(sampled_radius(M, driven, g[0][driven], g[1][driven], dt) for M in inertias)

    f = float(bandwidth_hz)
    g = gains(f)
    derived = (given_kp[driven] == 0).any() or (given_kd[driven] == 0).any()
    for _ in range(MAX_HALVINGS if derived else 0):
        if radius(g) < STABLE_RADIUS:
            break
        f *= 0.5
        g = gains(f)
    rho = radius(g)
    if f != bandwidth_hz:
        log("info", f"drive gains derived at {f:.3g} Hz (drive_bandwidth {bandwidth_hz:g} Hz "
                    f"is not stable at the timestep {dt:g} s)")
    if rho >= STABLE_RADIUS:
        log("warn", f"the drive loop is unstable at the timestep {dt:g} s: spectral radius "
                    f"{rho:.4f} >= 1 (rbd_ros.sim.drives.sampled_radius); lower drive_kp, "
                    f"raise drive_kd or lower the timestep")
    drive.kp[:], drive.kd[:] = g
    drive.kp[drive.mode == EFFORT] = 0.0
    drive.kd[drive.mode == EFFORT] = 0.0
    scratch = np.zeros(n)  # the kernels loaded (or compiled) now, not in the first steps
    drive.controls(scratch, scratch, np.zeros(n))
    drive.idle(np.zeros(n), scratch)
    _applied(drive.mode, scratch, np.arange(n), drive.limit, np.zeros(n))
    described = ", ".join(f"{names[i]} {INTERFACES[drive.mode[i]]} kp {drive.kp[i]:.4g} "
                          f"kd {drive.kd[i]:.4g}" for i in driven)
    log("info", f"drives: {described} (loop radius {rho:.4f} at {dt:g} s)")
    return drive


@njit(cache=True)
def _idle(mode: np.ndarray, q: np.ndarray, command: np.ndarray,
          reference: np.ndarray) -> None:  # pragma: no cover - jitted
    """``Drive.idle``."""
    for i in range(mode.shape[0]):
        reference[i] = q[i]  # a velocity drive resumes from where the joint is
        command[i] = q[i] if mode[i] == POSITION else 0.0  # hold: q_r = q, qd_r = 0, tau = 0


@njit(cache=True)
def _controls(mode: np.ndarray, command: np.ndarray, q: np.ndarray, kp: np.ndarray,
              kd: np.ndarray, limit: np.ndarray, dt: float, reference: np.ndarray,
              ctrl: np.ndarray) -> None:  # pragma: no cover - jitted
    """``Drive.controls``: the actuator's ``ctrl`` of each drive joint."""
    for i in range(mode.shape[0]):
        if mode[i] == POSITION:
            ctrl[i] = command[i]  # kp (q_r - q) - kd qd
        elif mode[i] == VELOCITY:
            lead = limit[i] / kp[i]  # anti-windup: |p - q| <= effort_limit / kp
            p = min(max(reference[i], q[i] - lead), q[i] + lead)
            ctrl[i] = p + kd[i] / kp[i] * command[i]  # kp (p - q) + kd (qd_r - qd)
            reference[i] = p + command[i] * dt  # p += qd_r dt


@njit(cache=True)
def _applied(mode: np.ndarray, force: np.ndarray, actuators: np.ndarray, limit: np.ndarray,
             out: np.ndarray) -> bool:  # pragma: no cover - jitted
    """``Drive.applied``."""
    at_limit = False
    for i in range(mode.shape[0]):
        if mode[i] != EFFORT:
            f = force[actuators[i]]
            out[i] = f
            at_limit = at_limit or abs(f) >= limit[i]  # forcerange clamped it
    return at_limit


__all__ = ["Drive", "EFFORT", "INTERFACES", "POSITION", "TOPICS", "VELOCITY", "derived_gains",
           "interfaces_of", "make_drive", "sampled_radius"]
