"""A sweep's table: CSV and JSON rows (one per cell, in the grid's order) and a plot."""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

#: the table's columns, in order (a row may carry more: they go to the JSON only)
COLUMNS = ("robot", "law", "perturb", "seed", "tour", "duration", "gains", "rms_error", "max_error",
           "tool_position_rms", "saturated", "chatter", "unstable_steps", "diverged", "sim_s",
           "wall_s", "error", "perturbation_source")


def write(rows: list[dict], out: Path, meta: dict) -> dict[str, Path]:
    """``out/sweep.csv``, ``out/sweep.json`` (``meta`` + rows) and ``out/sweep.png``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"csv": out / "sweep.csv", "json": out / "sweep.json", "png": out / "sweep.png"}
    with open(paths["csv"], "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for row in rows:
            w.writerow({k: row.get(k, "") for k in COLUMNS})
    paths["json"].write_text(json.dumps({**meta, "rows": rows}, indent=1, default=_plain) + "\n",
                             encoding="utf-8")
    plot(rows, paths["png"])
    return paths


def _plain(x):  # numpy scalars to JSON
    return x.item() if hasattr(x, "item") else str(x)


def plot(rows: list[dict], path: Path) -> None:
    """Largest per-joint RMS tracking error against the perturbation, one line per robot and
    law (median over seeds and tours; log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[tuple[str, str], dict[float, list[float]]] = {}
    for r in rows:
        e = r.get("rms_error", math.nan)
        if r.get("error") or not isinstance(e, float) or not math.isfinite(e):
            continue
        groups.setdefault((r["robot"], r["law"]), {}).setdefault(float(r["perturb"]), []).append(e)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (robot, law), by_p in sorted(groups.items()):
        ps = sorted(by_p)
        med = [sorted(by_p[p])[len(by_p[p]) // 2] for p in ps]
        ax.plot(ps, med, marker="o", label=f"{robot} / {law}")
    ax.set_xlabel("controller's model perturbed (%)")
    ax.set_ylabel("largest per-joint RMS error (rad or m)")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    if groups:
        ax.legend(fontsize=7)
    ax.set_title("rbd-ros sweep: tracking error under model mismatch")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
