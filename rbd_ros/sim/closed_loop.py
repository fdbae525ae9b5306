"""A control law on the simulated arm, in one process and lockstep (ROS-free).

``run_tour(model, "pd_gravity")`` is what ``rbd-ros bringup --controller pd_gravity`` does,
without ROS: the MuJoCo ``Simulator`` starts at rest at the tour's start, each cycle the law
computes the torque from the measured state (zero-order hold over one ``timestep``, as the
bridge's lockstep mode) and the simulator takes one step.  The ``LoopResult`` holds the
numbers of the bringup report plus the chatter measure of issue 13: the fraction of cycles in
which some joint's command **flips sign while at its effort limit**.

``composed_loop(model, "computed_torque")`` gives one step of the bridge's composed mode
without ROS (``sim.measure`` -> ``ControlLoop.joint_state`` -> ``ControlLoop.cycle`` ->
``sim.command`` -> ``sim.step``, command ages on the wall clock as in realtime mode), for the
allocation test and the per-step benchmark (issue 20).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rbd_ros.model import MdhModel


@dataclass
class LoopResult:
    law: str
    robot: str
    rms_error: np.ndarray  # per joint, rad or m
    max_error: np.ndarray
    chatter: float  # fraction of cycles with a sign flip at the effort limit
    saturated: float  # fraction of cycles with some joint at its effort limit
    tool_position_rms: float  # m
    tool_position_max: float
    tool_orientation_rms: float  # rad
    tool_orientation_max: float
    unstable_steps: int
    gains: dict[str, np.ndarray]
    notes: list[str]
    #: per joint: fraction of cycles at the effort limit, and at it with a sign flip
    saturated_joint: np.ndarray = field(default_factory=lambda: np.zeros(0))
    chatter_joint: np.ndarray = field(default_factory=lambda: np.zeros(0))
    #: per joint RMS of the reference minus the simulator's true (noise-free) state: with the
    #: bridge's sensor noise on, ``rms_error`` is against the measurement the law saw
    true_rms_error: np.ndarray = field(default_factory=lambda: np.zeros(0))


def chatter_fraction(tau: np.ndarray, limit: np.ndarray, rel: float = 1e-6) -> float:
    """Fraction of cycles (rows of ``tau``) in which some joint's command is at its limit and
    has the opposite sign of the previous cycle's command."""
    tau = np.asarray(tau, dtype=float)
    if len(tau) < 2:
        return 0.0
    at = np.abs(tau[1:]) >= np.asarray(limit) * (1.0 - rel)
    flip = np.sign(tau[1:]) * np.sign(tau[:-1]) < 0
    return float(np.mean((at & flip).any(axis=1)))


def tool_errors(model: MdhModel, reference: np.ndarray, measured: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per sample: the tool's position error ``|p(q_d) - p(q)|`` (m) and orientation error
    angle ``|orientation_error(R(q_d), R(q))|`` (rad)."""
    from rbd_ros.lie.so3 import orientation_angles  # lazy: lie.so3 (numba) (0.2 s of import)
    from rbd_ros.robot import Robot  # lazy: the robot front (0.3 s of import)

    robot = Robot(model)
    Td, T = robot.fk(np.asarray(reference, float)), robot.fk(np.asarray(measured, float))
    pos = np.linalg.norm(Td[:, :3, 3] - T[:, :3, 3], axis=1)
    return pos, orientation_angles(Td, T)


def run_tour(model: MdhModel, law_name: str, gains: dict[str, Any] | None = None,
             tour: Any = None, duration: float | None = None, segment_time: float = 2.0,
             bridge: dict[str, Any] | None = None, sim_model: MdhModel | None = None,
             **law_kw: Any) -> LoopResult:
    """Drive ``model`` along ``tour`` (default ``plan_tour(model, segment_time=...)``) with the
    law ``law_name`` for ``duration`` s (default: the tour plus 0.5 s), lockstep at the
    bridge's timestep.  ``bridge``: ``BridgeConfig`` settings; ``law_kw`` go to the law.
    ``sim_model``: the arm simulated, when it is not the law's ``model`` (issue 31)."""
    from rbd_ros.control.laws import Reference, make_law  # lazy: the laws (0.3 s of import)
    from rbd_ros.control.tour import plan_tour  # lazy: the tour planner (0.3 s of import)
    from rbd_ros.sim.simulator import BridgeConfig, Simulator  # lazy: the simulator (0.5 s of import)

    if tour is None:
        tour = plan_tour(model, segment_time=segment_time)
    cfg = BridgeConfig(**{"mode": "lockstep", "command_timeout": 0.0, **(bridge or {}),
                          "initial_positions": tuple(tour.start)})
    log_lines: list[str] = []
    sim = Simulator(sim_model or model, cfg, log=lambda level, msg: log_lines.append(f"{level}: {msg}"))
    dt = cfg.timestep
    law = make_law(law_name, model, gains, q0=sim.q, rate=1.0 / dt, **law_kw)
    spline = tour.spline(0.0)
    T = tour.duration + 0.5 if duration is None else float(duration)
    steps = int(round(T / dt))
    n = model.dof
    ref = Reference(n)
    qs, refs, taus, qt = (np.empty((steps, n)) for _ in range(4))
    for k in range(steps):
        t = sim.time
        q, qd, _ = sim.measure()
        spline.evaluate(t, ref.q, ref.qd, ref.qdd)
        tau = law.compute(t, q, qd, ref)
        qs[k], refs[k], taus[k], qt[k] = q, ref.q, tau, sim.q
        sim.command(tau)
        sim.step()
    err = refs - qs
    pos, ang = tool_errors(model, refs, qs)
    limit = law.limit
    sat = np.abs(taus) >= limit * (1.0 - 1e-6)
    flip = np.sign(taus[1:]) * np.sign(taus[:-1]) < 0
    return LoopResult(
        law=law_name, robot=model.name, rms_error=np.sqrt(np.mean(err**2, axis=0)),
        max_error=np.abs(err).max(axis=0), chatter=chatter_fraction(taus, limit),
        saturated=float(np.mean(sat.any(axis=1))),
        tool_position_rms=float(np.sqrt(np.mean(pos**2))), tool_position_max=float(pos.max()),
        tool_orientation_rms=float(np.sqrt(np.mean(ang**2))),
        tool_orientation_max=float(ang.max()), unstable_steps=sim.stats.unstable_steps,
        gains={k: v.copy() for k, v in law.gains.items()},
        notes=list(tour.notes) + list(law.gain_notes) + log_lines,
        saturated_joint=sat.mean(axis=0),
        chatter_joint=(sat[1:] & flip).mean(axis=0) if steps > 1 else np.zeros(n),
        true_rms_error=np.sqrt(np.mean((refs - qt) ** 2, axis=0)))


def composed_loop(model: MdhModel, law_name: str, tour: Any = None,
                  **law_kw: Any) -> tuple[Callable[[], None], Any, Any]:
    """``(step, sim, loop)``: the MuJoCo bridge's composed step without ROS, the law
    ``law_name`` tracking ``tour`` (default ``plan_tour(model)``) from its start; ``step()``
    advances one timestep.  ``sim`` is the ``Simulator`` (realtime mode), ``loop`` the
    ``ControlLoop``."""
    from rbd_ros.control.laws import make_law  # lazy: the laws (0.3 s of import)
    from rbd_ros.control.loop import ControlLoop  # lazy: the control loop (0.3 s of import)
    from rbd_ros.control.tour import plan_tour  # lazy: the tour planner (0.3 s of import)
    from rbd_ros.sim.simulator import BridgeConfig, Simulator  # lazy: the simulator (0.3 s of import)

    tour = plan_tour(model) if tour is None else tour
    quiet = lambda level, msg: None  # noqa: E731
    sim = Simulator(model, BridgeConfig(mode="realtime", initial_positions=tuple(tour.start)),
                    log=quiet)
    law = make_law(law_name, model, q0=sim.q, rate=1.0 / sim.config.timestep, **law_kw)
    names = list(sim.joint_names)
    loop = ControlLoop(model, law, names, log=quiet)
    q, qd, _ = sim.measure()
    loop.joint_state(names, q, qd, sim.time)
    loop.reference = tour.spline(sim.time)

    def step() -> None:
        q, qd, _ = sim.measure()
        loop.joint_state(names, q, qd, sim.time)
        tau = loop.cycle(sim.time)
        now = time.monotonic()
        sim.command(tau, now)
        sim.step(now)

    return step, sim, loop


class _Fields:
    """A message's fields ``x, y, z, w`` over a buffer (what ``MobileControlLoop.odom`` reads)."""

    __slots__ = ("x", "y", "z", "w")

    def set(self, a: np.ndarray) -> _Fields:
        self.x, self.y, self.z = a[0], a[1], a[2]
        self.w = a[3] if len(a) > 3 else 0.0
        return self


def mobile_composed_loop(model: MdhModel, law_name: str = "whole_body_computed_torque",
                         **law_kw: Any) -> tuple[Callable[[], None], Any, Any]:
    """``(step, sim, loop)``: the MuJoCo bridge's composed step on a mobile manipulator
    without ROS (``MobileController.step``: the simulator's base ground truth and the measured
    joints -> ``MobileControlLoop.cycle`` -> ``sim.command`` -> ``sim.step``), holding the
    start (arm and base)."""
    from rbd_ros.control.mobile_laws import make_mobile_law  # lazy: the mobile laws (0.3 s of import)
    from rbd_ros.control.mobile_loop import MobileControlLoop  # lazy: the mobile loop (0.3 s of import)
    from rbd_ros.robot import Robot  # lazy: the robot front (0.3 s of import)
    from rbd_ros.sim.mobile_sim import MobileSimulator  # lazy: the mobile simulator (0.4 s of import)
    from rbd_ros.sim.simulator import BridgeConfig  # lazy: the simulator (0.4 s of import)

    quiet = lambda level, msg: None  # noqa: E731
    sim = MobileSimulator(model, BridgeConfig(mode="realtime"), log=quiet)
    robot = Robot(model)
    law = make_mobile_law(law_name, robot, rate=1.0 / sim.config.timestep, **law_kw)
    names = list(sim.joint_names)
    loop = MobileControlLoop(robot, law, names, log=quiet)
    fields = [_Fields() for _ in range(4)]

    def step() -> None:
        t = sim.time
        q, qd, _ = sim.measure()
        pos, quat, lin, ang = sim.base_state()
        loop.joint_state(names, q, qd, t)
        loop.odom(fields[0].set(pos), fields[1].set(quat), fields[2].set(lin), fields[3].set(ang), t)
        if loop.ready():
            loop.cycle(t)
        now = time.monotonic()
        sim.command(loop.tau_out, now)
        sim.step(now)

    return step, sim, loop
