"""Tracking with different controller models against one simulated arm (issue 31): the URDF's
model and an identified one (``rbd-ros identify``), and the simulated arm itself as the floor,
each driving the same tour with the same law on the same (mismatched) arm.

``compare_models(sim_model, {"URDF": urdf, "identified": ident, ...}, "computed_torque", tour)``
runs ``closed_loop.run_tour`` once per model (lockstep, ROS-free, the law's default gains) and
gives one row each: the largest joint RMS error and the largest error against the measured
state the law saw, the same against the simulator's true (noise-free) state when the bridge's
sensor noise is on (``bridge``), and how many times better than the first row.  The bringup
(``--model`` with ``--perturb``/``--sim-model``) puts it in its report, terminal and page.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rbd_ros.model import MdhModel
from rbd_ros.sim.closed_loop import run_tour


@dataclass
class ComparisonRow:
    label: str  # what the model is, e.g. "the robot's (URDF)"
    max_rms: float  # largest joint RMS error against the measured state (rad or m)
    max_error: float  # largest joint error
    true_max_rms: float | None = None  # against the true state (with sensor noise only)
    note: str = ""  # e.g. "through the nodes"


@dataclass
class ModelComparison:
    law: str
    simulated: str  # the simulated arm, in words
    noise: bool
    rows: list[ComparisonRow] = field(default_factory=list)

    def ratio(self, k: int) -> float:
        """How many times the first row's error is row ``k``'s (true state with noise)."""
        key = "true_max_rms" if self.noise else "max_rms"
        a, b = getattr(self.rows[0], key), getattr(self.rows[k], key)
        return float(a / b) if a is not None and b else float("nan")

    def lines(self) -> list[str]:
        """The table as the terminal prints it (the page's too)."""
        head = (f"model comparison: {self.law} on {self.simulated}, same tour "
                + ("(sensor noise on: errors against the measured and the true state)" if self.noise else ""))
        labels = [r.label + (f" ({r.note})" if r.note else "") for r in self.rows]
        w = min(max(len(x) for x in labels + ["controller model"]), 64)
        cols = f"{'controller model':<{w}} {'max joint rms':>13} {'max error':>10}"
        cols += f" {'true-state rms':>14}" if self.noise else ""
        out = [head.rstrip(), cols + f" {'vs first':>9}"]
        for k, (r, label) in enumerate(zip(self.rows, labels)):
            true = "" if not self.noise else (f" {r.true_max_rms:14.3e}" if r.true_max_rms is not None
                                              else f" {'-':>14}")
            vs = "" if k == 0 else (f" {self.ratio(k):8.3g}x" if np.isfinite(self.ratio(k)) else f" {'-':>9}")
            out.append(f"{label[:w]:<{w}} {r.max_rms:13.3e} {r.max_error:10.3e}{true}{vs}")
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelComparison:
        """Inverse of ``to_dict`` (a report's ``model_comparison``)."""
        return cls(data["law"], data["simulated"], bool(data["noise"]),
                   [ComparisonRow(**r) for r in data["rows"]])

    def to_dict(self) -> dict[str, Any]:
        return {"law": self.law, "simulated": self.simulated, "noise": self.noise,
                "rows": [asdict(r) for r in self.rows],
                "ratio_to_first": [r if np.isfinite(r) else None  # JSON has no NaN
                                   for r in (self.ratio(k) for k in range(1, len(self.rows)))]}


def compare_models(sim_model: MdhModel, models: dict[str, MdhModel], law: str, tour: Any,
                   bridge: dict[str, Any] | None = None, simulated: str = "the simulated arm",
                   duration: float | None = None) -> ModelComparison:
    """One ``run_tour`` per model of ``models`` (label -> model, in order) with ``law`` along
    ``tour`` on ``sim_model`` for ``duration`` s (default: the tour and 0.5 s); ``bridge``:
    ``BridgeConfig`` settings (timestep, integrator, the sensor noise)."""
    noise = any(float((bridge or {}).get(k, 0.0)) > 0.0
                for k in ("position_noise", "velocity_noise", "effort_noise"))
    out = ModelComparison(law, simulated, noise)
    for label, model in models.items():
        if model.joint_names != sim_model.joint_names:
            raise ValueError(f"compare_models: '{label}' has joints {list(model.joint_names)}, the "
                             f"simulated arm {list(sim_model.joint_names)}")
        res = run_tour(model, law, tour=tour, duration=duration, bridge=bridge, sim_model=sim_model)
        out.rows.append(ComparisonRow(label, float(res.rms_error.max()), float(res.max_error.max()),
                                      float(res.true_rms_error.max()) if noise else None))
    return out
