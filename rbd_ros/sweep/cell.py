"""One cell of a sweep: a law on a robot along a tour, the controller's model perturbed.

The loop is the bringup's lockstep loop without ROS: the MuJoCo ``Simulator`` of the bridge
(``sim.simulator``, lockstep: one step per command) on the *true* model, and the bringup's
``ControlLoop`` (``control.loop``: reference, law, saturation, command order) whose law is
built on the *controller's* model, ``perturbation.perturbed(true, percent, seed)``, as a
controller believing a robot's description would run on the robot.  Per cycle:
``sim.measure`` -> ``loop.joint_state`` -> ``loop.cycle`` -> ``sim.command`` -> ``sim.step``.

The law's gains (``controller_law``): by default the *nominal* model's -- derived from the
unperturbed description at the start pose, the same at every percentage -- with the
controller's model in the law (feed-forward, gravity, ``M(q)``, the per-cycle schedule), so a
row differs from the 0 % row by the mismatch alone; ``gains="per-model"`` derives them from
each controller's model (a controller tuned on what it believes: mismatch and gains change
together; PD + gravity on a heavier-believed arm gets stiffer gains and may track *better*).
"""
from __future__ import annotations

import math
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.sim.closed_loop import chatter_fraction, tool_errors
from rbd_ros.sweep.grid import TOURS, Cell
from rbd_ros.sweep.perturbation import SOURCE, perturbed
from rbd_ros.util.resources import bundled_robots, bundled_urdf, config_file


@lru_cache(maxsize=16)
def load_robot(name: str) -> MdhModel:
    """A bundled robot by name (``config/NAME.yaml``, else ``urdf/NAME.urdf``), or a model file
    (``.yaml`` MdhModel, ``.urdf`` / ``.xacro``); cached per process (a worker runs many cells
    of one robot)."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.is_file():
        return MdhModel.from_yaml(str(path))
    if path.suffix in (".urdf", ".xacro") and path.is_file():
        from rbd_ros.urdf import load_model  # lazy: the URDF converter (0.3 s of import)

        return load_model(str(path))
    if name in bundled_robots():
        try:
            return MdhModel.from_yaml(str(config_file(name)))
        except FileNotFoundError:
            from rbd_ros.urdf import load_model  # lazy: the URDF converter (0.3 s of import)

            return load_model(str(bundled_urdf(name)))
    raise ValueError(f"unknown robot '{name}': give a bundled robot ({', '.join(bundled_robots())}) "
                     f"or a .urdf / .xacro / .yaml file")


_TOURS: dict[tuple[str, str], object] = {}  # (robot, tour) -> Tour, this process's


def planned_tour(robot: str, tour: str):
    """``control.tour.plan_tour`` of the true model, kept per process: planning searches the
    start (seconds), the same for every law and perturbation of a robot.  The backends plan
    each (robot, tour) once in the driver and hand them to the workers (``seed_tours``)."""
    key = (robot, tour)
    if key not in _TOURS:
        from rbd_ros.control.tour import plan_tour  # lazy: the tour planner (0.3 s of import)

        _TOURS[key] = plan_tour(load_robot(robot), **TOURS[tour])
    return _TOURS[key]


def seed_tours(tours: dict | None) -> None:
    """Adopt tours planned elsewhere (``{(robot, tour): Tour}``, e.g. by the driver)."""
    if tours:
        _TOURS.update(tours)


def plan_all(cells) -> dict:
    """``{(robot, tour): Tour}`` for every pair in ``cells``, planned in this process."""
    return {(c.robot, c.tour): planned_tour(c.robot, c.tour) for c in cells}


def run_cell(cell: Cell, tours: dict | None = None) -> dict:
    """Run ``cell`` (module docstring) and return its row: the cell's settings, the largest
    per-joint RMS and max tracking error (rad or m), tool position RMS (m), the fractions of
    cycles saturated and chattering, unstable simulator steps, ``diverged``, simulated and wall
    seconds, and the perturbation's source.  Never raises for a run that goes wrong: the row's
    ``error`` says what happened (a sweep of thousands of cells must finish).  ``tours``:
    planned tours to adopt first (``seed_tours``)."""
    seed_tours(tours)

    row = {**cell.as_dict(), "perturbation_source": SOURCE, "error": ""}
    t0 = time.perf_counter()
    try:
        row.update(_run(cell))
        row["error"] = _nan_reason(row)
    except Exception as exc:  # noqa: BLE001 - recorded in the row, the sweep goes on
        row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    row["wall_s"] = time.perf_counter() - t0
    return row


#: the numbers of a row that a run which went through must give finite
RESULTS = ("rms_error", "max_error", "tool_position_rms", "saturated", "chatter")


def _nan_reason(row: dict) -> str:
    """A row's error when a result is NaN (a failed row, never a silent NaN): why, or ''."""
    nan = [k for k in RESULTS if isinstance(row.get(k), float) and not math.isfinite(row[k])]
    if not nan:
        return ""
    if row.get("steps", 1) == 0:
        return (f"no control cycle ran: duration {row['duration']:g} s is shorter than one control "
                f"period ({row['dt']:g} s)")
    if row.get("diverged"):
        return f"diverged: {', '.join(nan)} not finite (no finite sample after step {row.get('steps', 0)})"
    return f"{', '.join(nan)} not finite"


def controller_law(cell: Cell, true: MdhModel, believed: MdhModel, q0: np.ndarray, rate: float):
    """The law the cell runs (module docstring): on ``believed``, its gains from the nominal
    model ``true`` (``cell.gains == "nominal"``: the law's own gains replaced by the nominal
    ones, whose schedule and sources it keeps) or from ``believed`` (``"per-model"``)."""
    from rbd_ros.control.laws import make_law  # lazy: the laws (0.4 s of import)

    law = make_law(cell.law, believed, q0=q0, rate=rate)
    if cell.gains == "nominal" and believed is not true:
        law.set_gains(make_law(cell.law, true, q0=q0, rate=rate).gains)
    return law


def cell_loop(cell: Cell) -> tuple[Any, Any, Any, Any]:
    """``(sim, loop, law, tour)`` of ``cell`` at its start: the lockstep ``Simulator`` of the
    true model at the tour's start, the ``ControlLoop`` with the law on the believed model, a
    state taken and the tour set as its reference (as ``composed_loop``).  Each step of the
    cell's closed loop is then ``sim.measure`` -> ``loop.joint_state`` -> ``loop.cycle`` ->
    ``sim.command`` -> ``sim.step`` (``_run``; ``bench/bench_closed_loop.py`` times it)."""
    from rbd_ros.control.loop import ControlLoop  # lazy: the control loop (0.4 s of import)
    from rbd_ros.sim.simulator import BridgeConfig, Simulator  # lazy: the simulator (0.5 s of import)

    true = load_robot(cell.robot)
    believed = perturbed(true, cell.perturb, cell.seed)
    tour = planned_tour(cell.robot, cell.tour)
    quiet = lambda level, msg: None  # noqa: E731
    sim = Simulator(true, BridgeConfig(mode="lockstep", command_timeout=0.0,
                                       initial_positions=tuple(tour.start)), log=quiet)
    law = controller_law(cell, true, believed, sim.q, 1.0 / sim.config.timestep)
    names = list(sim.joint_names)
    loop = ControlLoop(believed, law, names, log=quiet)
    q, qd, _ = sim.measure()
    loop.joint_state(names, q, qd, sim.time)  # a state first, then the tour (as composed_loop)
    loop.reference = tour.spline(sim.time)
    return sim, loop, law, tour


def _run(cell: Cell) -> dict:
    true = load_robot(cell.robot)
    sim, loop, law, tour = cell_loop(cell)
    dt, names = sim.config.timestep, list(sim.joint_names)
    T = tour.duration + 0.5 if cell.duration == 0.0 else cell.duration
    steps = int(round(T / dt))
    if steps < 1:  # shorter than one control period: nothing ran (a failed row, _nan_reason)
        return {**dict.fromkeys(RESULTS, math.nan), "unstable_steps": 0, "diverged": False,
                "sim_s": 0.0, "steps": 0, "dt": dt}
    n = true.dof
    qs, refs, taus = np.empty((steps, n)), np.empty((steps, n)), np.empty((steps, n))
    diverged = False
    for k in range(steps):
        q, qd, _ = sim.measure()
        loop.joint_state(names, q, qd, sim.time)
        tau = loop.cycle(sim.time)
        qs[k], refs[k], taus[k] = loop.q_out, loop.ref_out, tau
        # a NaN or Inf in q or tau makes the sum of squares NaN or Inf (no new NaN: no warning),
        # and finite ones cannot overflow it (MuJoCo resets a state past 1e10; tau is
        # saturated): 0.8 us a step against 2.6 for two isfinite(...).all()
        if not math.isfinite(q.dot(q) + tau.dot(tau)):
            diverged, steps = True, k + 1
            break
        sim.command(tau)
        sim.step()
    qs, refs, taus = qs[:steps], refs[:steps], taus[:steps]
    err = refs - qs
    finite = np.isfinite(err).all(axis=1)
    pos = tool_errors(true, refs[finite], qs[finite])[0] if finite.any() else np.array([math.nan])
    limit = law.limit
    return {
        "rms_error": float(np.sqrt(np.mean(err[finite] ** 2, axis=0)).max()) if finite.any() else math.nan,
        "max_error": float(np.abs(err[finite]).max()) if finite.any() else math.nan,
        "tool_position_rms": float(np.sqrt(np.mean(pos**2))),
        "saturated": float(np.mean((np.abs(taus) >= limit * (1.0 - 1e-6)).any(axis=1))),
        "chatter": chatter_fraction(taus, limit),
        "unstable_steps": int(sim.stats.unstable_steps),
        "diverged": bool(diverged or sim.stats.unstable_steps > 0),
        "sim_s": steps * dt,
        "steps": steps,
        "dt": dt,
    }
