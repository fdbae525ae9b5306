"""A force/torque sensor on the simulated arm (ROS-free), as ``force_torque_sensor_broadcaster``
publishes one, plus the gravity compensation of control_toolbox and an estimate from joint
torques.

The sensor sits on body ``link`` (``rbd_ros.control.wrench.SensorFrame``: the tool frame on the
last body by default).  Each physics step MuJoCo's own ``force`` and ``torque`` sensors at that
site give the **raw** wrench: what the body's parent exerts on it and everything below it, in
the sensor frame, moment about its origin (the weight and inertia of that payload included;
``wrench`` module docstring).  Then:

* ``raw``: MuJoCo's reading plus optional white noise (``force_noise`` N, ``torque_noise`` N m,
  standard deviations; seeded);
* ``wrench``: ``raw`` minus the payload wrench the model predicts for the motion
  (``control.wrench.payload_wrench`` at ``q, q', q''``, the accelerations MuJoCo computed, as
  an IMU would give them): the wrench the tool exerts on the environment, ~0 in free space;
* ``compensated`` (with a ``payload``, an identified ``identification.payload.Payload``:
  ``rbd-ros identify --payload``): ``raw`` minus that payload's wrench for the same motion and
  minus its offset (``PayloadCompensator``), what ``/ft_sensor/wrench_compensated`` publishes:
  the compensation a real arm's F/T sensor gets, which knows the tool only from its readings;
* all through an optional first-order low-pass filter of cutoff ``cutoff`` Hz
  (``y += a (x - y)``, ``a = dt / (dt + 1 / (2 pi cutoff))``; 0 = off).

A ``tool`` (a ``Payload``: mass, centre of mass and inertia in the sensor frame; its offset
unused) is a body fixed at the sensor site in MuJoCo only: the model, and so ``wrench``, does
not know it, as a controller does not know the gripper a user mounted.  The sensor sits on the
last body, so what hangs below it is that body and the tool: the payload to identify.

The readings belong to the state at the start of the step just taken (MuJoCo computes
sensors before it integrates): ``stamp`` says when.  ``estimate(effort)`` is the same wrench
from the measured joint torques (``control.wrench.estimate_from_torques``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from rbd_ros.control.wrench import WrenchModel
from rbd_ros.identification.payload import PayloadCompensator
from rbd_ros.model import MdhModel
from rbd_ros.sim.mujoco_model import mj_quaternion


class FTSensor:
    """One F/T sensor (module docstring).  ``add_to(spec)`` before compiling, ``attach`` after,
    ``update`` after each step."""

    SITE = "ft_sensor"

    def __init__(self, model: MdhModel, link: str = "", force_noise: float = 0.0,
                 torque_noise: float = 0.0, cutoff: float = 0.0, timestep: float = 0.001,
                 seed: int = 0, tool: Any = None, payload: Any = None) -> None:
        for name, v in (("ft_force_noise", force_noise), ("ft_torque_noise", torque_noise),
                        ("ft_cutoff", cutoff)):
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be >= 0, got {v}")
        self.model = model
        self.wrench_model = WrenchModel(model, link)
        self.frame = self.wrench_model.frame
        self.noise = np.array([force_noise] * 3 + [torque_noise] * 3, dtype=float)
        self.alpha = 1.0 if cutoff <= 0 else timestep / (timestep + 1.0 / (2 * math.pi * cutoff))
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)
        self.raw = np.zeros(6)
        self.wrench = np.zeros(6)
        self.payload = np.zeros(6)
        self.tool = tool
        self.compensator = None
        if payload is not None:
            self.compensator = PayloadCompensator(model, payload, link)
        self.compensated = np.zeros(6)
        self._c = np.zeros(6)
        self.stamp = 0.0
        self._x = np.zeros(6)
        self._d = np.zeros(6)
        self._first = True
        self._adr = -1

    def add_to(self, spec) -> None:
        """The site and MuJoCo's force and torque sensors on it."""
        import mujoco

        body = spec.body(self.model.link_names[self.frame.link])
        site = self.frame.site
        body.add_site(name=self.SITE, pos=site[:3, 3].tolist(), quat=mj_quaternion(site[:3, :3]).tolist())
        spec.add_sensor(name="ft_force", type=mujoco.mjtSensor.mjSENS_FORCE,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname=self.SITE)
        spec.add_sensor(name="ft_torque", type=mujoco.mjtSensor.mjSENS_TORQUE,
                        objtype=mujoco.mjtObj.mjOBJ_SITE, objname=self.SITE)
        if self.tool is not None:  # welded at the site: below the sensor, unknown to the model
            t = self.tool
            I = np.asarray(t.inertia, dtype=float)
            tool = body.add_body(name="ft_tool", pos=site[:3, 3].tolist(),
                                 quat=mj_quaternion(site[:3, :3]).tolist())
            tool.mass = float(t.mass)
            tool.ipos = [float(x) for x in t.com]
            tool.fullinertia = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
            tool.explicitinertial = True

    def attach(self, mj_model) -> None:
        import mujoco

        sid = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_SENSOR, "ft_force")
        tid = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_SENSOR, "ft_torque")
        self._adr = int(mj_model.sensor_adr[sid])
        if int(mj_model.sensor_adr[tid]) != self._adr + 3:
            raise RuntimeError("the F/T sensor's force and torque are not adjacent in sensordata")

    def reset(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        self._first = True
        self.raw.fill(0.0)
        self.wrench.fill(0.0)
        self.compensated.fill(0.0)

    @property
    def has_reading(self) -> bool:
        """A step has given a reading since the start (or ``reset``): before it ``raw`` and
        ``wrench`` are zeros no sensor measured, and nothing is published."""
        return not self._first

    def update(self, sensordata: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
               stamp: float) -> None:
        """One reading from MuJoCo's ``sensordata`` and the state it belongs to (model order)."""
        x = self._x
        np.copyto(x, sensordata[self._adr:self._adr + 6])
        if self.noise.any():
            x += self.noise * self.rng.standard_normal(6)
        self.wrench_model.payload(q, qd, qdd, self.payload)
        a = 1.0 if self._first else self.alpha
        self._first = False
        d = self._d  # y += a (x - y), in place
        if self.compensator is not None:
            c = self.compensator.compensate(x, q, qd, qdd, self._c)
            np.subtract(c, self.compensated, out=d)
            d *= a
            self.compensated += d
        np.subtract(x, self.raw, out=d)
        d *= a
        self.raw += d
        x -= self.payload
        np.subtract(x, self.wrench, out=d)
        d *= a
        self.wrench += d
        self.stamp = stamp

    def estimate(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, effort: np.ndarray,
                 out: np.ndarray) -> bool:
        """The wrench from joint torques (model order inputs) into ``out``."""
        return self.wrench_model.estimate(q, qd, qdd, effort, out)
