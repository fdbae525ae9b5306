"""Actuator and sensor models of the simulated arm (ROS-free), 003 §6.1.

Torque mode (default): the command is the joint torque ``tau`` of (6.10)/(6.16), clamped to
``±effort_limit`` when saturation is on.  The rest of the actuator model lives in the MuJoCo
joints, so the integrator treats it as part of the dynamics (see ``mujoco_model``): the
reflected rotor inertia ``Gamma^T J_M Gamma`` of (6.17) is the joint armature, the viscous
``D`` of (6.16) the joint damping, Coulomb friction the joint frictionloss.

Voltage mode: the command is the motor voltage ``v_M``.  With the armature inductance
neglected (6.2), ``v_M = R_M i_M + K_e qdot_M``, ``tau_O = K_M i_M`` (6.3), ``qdot_M = Gamma
qdot`` (6.7)-(6.8) and ``tau = Gamma^T tau_M`` (6.10), the joint sees (6.15)

    tau = Gamma^T K_M R_M^-1 v_M - Gamma^T K_M R_M^-1 K_e Gamma qdot - Gamma^T J_M Gamma qddot

so that (6.17) ``M' qddot + h + g + D' qdot = K_hat v_M`` with

    M' = M + Gamma^T J_M Gamma,  D' = D + Gamma^T K_M R_M^-1 K_e Gamma,  K_hat = Gamma^T K_M R_M^-1.

The bridge applies ``K_hat v_M`` as the actuator torque (``v_M`` is held over a step) and adds
the back-EMF term ``Gamma^2 K_M K_e / R_M`` to the joint damping, so the integrator sees the
velocity dependence within the step (RK4 stays 4th order).  The reported effort is the motor
torque at the joint, ``Gamma K_M i_M = K_hat v_M - Gamma^2 K_M K_e / R_M qdot``.  In voltage
mode the voltage is clamped to ``±voltage_limit``; ``effort_limit`` is not applied (the seed's
model has no current limit).

Sensors: encoder quantisation of positions (``resolution`` rad or m per count), Gaussian
noise on position, velocity and effort from a seeded generator; both off by default.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from rbd_ros.model import MdhModel

COMMAND_MODES = ("torque", "voltage")


def per_joint(value: float | Sequence[float] | np.ndarray, n: int, name: str) -> np.ndarray:
    """A scalar (same for every joint) or ``n`` values, as an (n,) float array."""
    arr = np.array(value, dtype=float).reshape(-1)
    if arr.size == 1:
        arr = np.full(n, float(arr[0]))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be one number or {n} numbers (one per joint), "
                         f"got {list(np.atleast_1d(value))}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    return arr


class MotorModel:
    """Command -> actuator torque for every joint (model order), per the module docstring."""

    def __init__(self, model: MdhModel, command_mode: str = "torque", saturation: bool = True,
                 voltage_limit: float | Sequence[float] = np.inf) -> None:
        if command_mode not in COMMAND_MODES:
            raise ValueError(f"command_mode must be one of {', '.join(COMMAND_MODES)}, "
                             f"got '{command_mode}'")
        n = model.dof
        self.mode = command_mode
        self.saturation = bool(saturation)
        self.effort_limit = np.abs(model.effort_limit.copy())
        self.voltage_limit = np.abs(per_joint(voltage_limit, n, "voltage_limit"))
        self.gain = np.ones(n)  # K_hat of (6.17); 1 in torque mode
        self.saturated = False  # whether the last actuator_torque clamped some joint
        self.emf_damping = np.zeros(n)  # Gamma^2 K_M K_e / R_M of D' in (6.17)
        if command_mode == "voltage":
            km, r, ke = model.torque_constant, model.resistance, model.back_emf_constant
            bad = [model.joint_names[i] for i in range(n) if not (km[i] > 0 and r[i] > 0)]
            if bad:
                raise ValueError(f"voltage mode needs torque_constant > 0 and resistance > 0 for "
                                 f"every joint; missing for {bad}")
            gamma = model.gear_ratio
            self.gain = gamma * km / r
            self.emf_damping = gamma**2 * km * ke / r

    def exempt(self, joints: np.ndarray) -> None:
        """No limit on ``joints`` (model indices): their actuators are position/velocity drives
        (``rbd_ros.sim.drives``), whose command is no torque and which MuJoCo's
        ``forcerange`` limits."""
        self.effort_limit[joints] = np.inf
        self.voltage_limit[joints] = np.inf

    def actuator_torque(self, command: np.ndarray, out: np.ndarray | None = None,
                        clamped: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(ctrl, clamped)``: the torque MuJoCo's motor actuators apply, and which joints
        were saturated (torque mode: ``±effort_limit``; voltage mode: ``±voltage_limit``);
        ``saturated`` says whether any was.  With ``out`` (float, n) and ``clamped`` (bool, n)
        given, written into them: no allocation (the simulator's step)."""
        cmd = np.asarray(command, dtype=float)
        if out is None:
            out = np.empty(cmd.shape)
        if clamped is None:
            clamped = np.empty(cmd.shape, dtype=bool)
        limit = self.voltage_limit if self.mode == "voltage" else self.effort_limit
        self.saturated = _saturate(cmd, limit, self.gain, self.saturation, out, clamped)
        return out, clamped

    def measured_effort(self, ctrl: np.ndarray, qd: np.ndarray,
                        out: np.ndarray | None = None) -> np.ndarray:
        """The joint torque the drive reports: ``ctrl`` (torque mode) or ``Gamma K_M i_M``
        (voltage mode, (6.13) times Gamma); into ``out`` when given."""
        out = np.multiply(self.emf_damping, qd, out=out)
        return np.subtract(ctrl, out, out=out)


@njit(cache=True)
def _saturate(cmd: np.ndarray, limit: np.ndarray, gain: np.ndarray, saturation: bool,
              out: np.ndarray, clamped: np.ndarray) -> bool:  # pragma: no cover - jitted
    """``out = gain * clip(cmd, -limit, limit)`` (no clip without ``saturation``),
    ``clamped = (clip(cmd) != cmd)``; returns ``any(clamped)``."""
    any_clamped = False
    for i in range(cmd.shape[0]):
        c = cmd[i]
        if saturation:
            if c > limit[i]:
                c = limit[i]
            elif c < -limit[i]:
                c = -limit[i]
        clamped[i] = c != cmd[i]
        any_clamped = any_clamped or clamped[i]
        out[i] = gain[i] * c
    return any_clamped


def quantise(x: np.ndarray, resolution: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Encoder counts: ``x`` rounded to a multiple of ``resolution`` where it is > 0 (into
    ``out`` when given, which may be ``x``)."""
    res = np.asarray(resolution, dtype=float)
    on = res > 0
    out = np.array(x, dtype=float, copy=True) if out is None else out
    if out is not x:
        np.copyto(out, x)
    out[on] = np.round(out[on] / res[on]) * res[on]
    return out


class SensorModel:
    """Noise then quantisation of the measured state; seeded, so runs are repeatable."""

    def __init__(self, n: int, encoder_resolution: float | Sequence[float] = 0.0,
                 position_noise: float | Sequence[float] = 0.0,
                 velocity_noise: float | Sequence[float] = 0.0,
                 effort_noise: float | Sequence[float] = 0.0, seed: int = 0) -> None:
        self.resolution = per_joint(encoder_resolution, n, "encoder_resolution")
        self.sigma = [per_joint(v, n, name) for v, name in
                      ((position_noise, "position_noise"), (velocity_noise, "velocity_noise"),
                       (effort_noise, "effort_noise"))]
        for arr, name in ((self.resolution, "encoder_resolution"), *zip(
                self.sigma, ("position_noise", "velocity_noise", "effort_noise"))):
            if (arr < 0).any() or not np.isfinite(arr).all():
                raise ValueError(f"{name} must be finite and >= 0")
        self.seed = int(seed)
        self._flags()
        self.reset()

    def _flags(self) -> None:
        self.noisy = any(bool((s > 0).any()) for s in self.sigma)
        self.quantised = bool((self.resolution > 0).any())

    def reorder(self, order: np.ndarray) -> None:
        """Per-joint settings were given in command order; ``order[k]`` is the model index of
        the k-th: store them in model order."""
        def conv(v: np.ndarray) -> np.ndarray:
            out = np.empty_like(v)
            out[order] = v
            return out

        self.resolution = conv(self.resolution)
        self.sigma = [conv(s) for s in self.sigma]
        self._flags()

    def reset(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def measure(self, q: np.ndarray, qd: np.ndarray,
                effort: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Noise then quantisation, **in place** on the caller's arrays (model order);
        returns them."""
        if not (self.noisy or self.quantised):  # the common case, kept cheap
            return q, qd, effort
        if self.noisy:
            for v, s in zip((q, qd, effort), self.sigma):
                v += s * self.rng.standard_normal(v.shape)
        if self.quantised:
            quantise(q, self.resolution, out=q)
        return q, qd, effort
