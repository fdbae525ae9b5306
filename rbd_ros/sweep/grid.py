"""The cells of a sweep: robots x laws x perturbations (percent x seeds) x tours."""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass

#: named tours: ``control.tour.plan_tour`` settings (segment time s, amplitude rad)
TOURS = {
    "default": {},
    "fast": {"segment_time": 1.0},
    "slow": {"segment_time": 4.0},
    "wide": {"amplitude": 0.8},
}


@dataclass(frozen=True)
class Cell:
    """One closed-loop run: ``robot`` (a bundled name, or a URDF/YAML path), ``law`` (one of
    ``control.gains.LAWS``), the controller's model ``perturb`` % off the true one with ``seed``,
    ``tour`` (a key of ``TOURS``) run for ``duration`` s (0: the whole tour plus 0.5 s)."""

    robot: str
    law: str
    perturb: float = 0.0
    seed: int = 0
    tour: str = "default"
    duration: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def cells(robots: Sequence[str], laws: Sequence[str], perturbs: Sequence[float] = (0.0,),
          seeds: int = 1, tours: Sequence[str] = ("default",), duration: float = 0.0) -> list[Cell]:
    """Every combination, checked: unknown laws or tours, a percentage outside [0, 100) or
    fewer than one seed are a ``ValueError`` naming them.  A 0 % perturbation is run once
    (its seeds would repeat the same model)."""
    from rbd_ros.control.gains import LAWS

    bad = [law for law in laws if law not in LAWS]
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
    if not (duration >= 0.0):
        raise ValueError(f"duration must be >= 0 s (0: the whole tour), got {duration}")
    out = []
    for robot, law, p, tour in itertools.product(robots, laws, perturbs, tours):
        for seed in range(1 if float(p) == 0.0 else int(seeds)):
            out.append(Cell(robot, law, float(p), seed, tour, float(duration)))
    return out
