"""The cells of a sweep: robots x laws x perturbations (percent x seeds) x tours."""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rbd_ros.control.gains import LAWS

#: named tours: ``control.tour.plan_tour`` settings (segment time s, amplitude rad)
TOURS: dict[str, dict[str, Any]] = {  # name -> plan_tour keywords
    "default": {},
    "fast": {"segment_time": 1.0},
    "slow": {"segment_time": 4.0},
    "wide": {"amplitude": 0.8},
}


#: where a perturbed cell's gains come from (the ``gains`` column): the ``nominal`` model's (the
#: robot's description, unperturbed: the same gains at every percentage, so the table shows
#: the mismatch alone) or each ``per-model`` controller's model (gains and mismatch together)
GAINS = ("nominal", "per-model")


@dataclass(frozen=True)
class Cell:
    """One closed-loop run: ``robot`` (a bundled name, or a URDF/YAML path), ``law`` (one of
    ``control.gains.LAWS``), the controller's model ``perturb`` % off the true one with ``seed``,
    ``tour`` (a key of ``TOURS``) run for ``duration`` s (0: the whole tour plus 0.5 s), the
    law's gains from the ``gains`` model (one of ``GAINS``)."""

    robot: str
    law: str
    perturb: float = 0.0
    seed: int = 0
    tour: str = "default"
    duration: float = 0.0
    gains: str = "nominal"

    def as_dict(self) -> dict:
        return asdict(self)


def control_period() -> float:
    """s: one cycle of a cell's loop (the bridge's default timestep, lockstep)."""
    from rbd_ros.sim.simulator import BridgeConfig  # lazy: the simulator (0.5 s of import)

    return float(BridgeConfig().timestep)


def duration_reason(duration: float) -> str | None:
    """Why ``duration`` (s, ``--duration``) is refused, or None: 0 (the whole tour) or a finite
    number of seconds of at least one control period."""
    dt = control_period()
    ok = isinstance(duration, (int, float)) and not isinstance(duration, bool) and math.isfinite(duration) \
        and (duration == 0.0 or duration >= dt)
    if ok:
        return None
    return (f"--duration must be 0 (the whole tour) or a finite number of seconds of at least one "
            f"control period ({dt:g} s), got {duration!r}")


def cells(robots: Sequence[str], laws: Sequence[str], perturbs: Sequence[float] = (0.0,),
          seeds: int = 1, tours: Sequence[str] = ("default",), duration: float = 0.0,
          gains: str = "nominal") -> list[Cell]:
    """Every combination, checked: unknown laws or tours, a percentage outside [0, 100) (a
    negative one, NaN), fewer than one seed, a ``duration`` ``duration_reason`` refuses or
    ``gains`` not in ``GAINS`` are a ``ValueError`` naming them.  A 0 % perturbation is run
    once (its seeds would repeat the same model)."""
    bad: list[Any] = [law for law in laws if law not in LAWS]  # laws, tours, then percentages
    if bad:
        raise ValueError(f"unknown laws {bad}; use some of {', '.join(LAWS)}")
    bad = [t for t in tours if t not in TOURS]
    if bad:
        raise ValueError(f"unknown tours {bad}; use some of {', '.join(TOURS)}")
    bad = [p for p in perturbs if not (0.0 <= float(p) < 100.0)]
    if bad:
        raise ValueError(f"perturbation percentages must be in [0, 100), got {bad}")
    if int(seeds) < 1:
        raise ValueError(f"seeds must be at least 1, got {seeds}")
    if not robots or not laws:
        raise ValueError("a sweep needs at least one robot and one law")
    reason = duration_reason(duration)
    if reason:
        raise ValueError(reason)
    if gains not in GAINS:
        raise ValueError(f"gains must be one of {', '.join(GAINS)}, got {gains!r}")
    out = []
    for robot, law, p, tour in itertools.product(robots, laws, perturbs, tours):
        for seed in range(1 if float(p) == 0.0 else int(seeds)):
            out.append(Cell(robot, law, float(p), seed, tour, float(duration), gains))
    return out
