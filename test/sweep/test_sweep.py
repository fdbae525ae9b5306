"""``rbd-ros sweep`` (issue 32): a cell's closed loop is the bringup's (the tracking error of an
unperturbed cell equals ``sim.closed_loop.run_tour``'s, the loop the any-arm table uses, a
separate code path: ``law.compute`` without ``ControlLoop``); a perturbed controller's model
tracks worse under computed torque (its exactness rests on the model); local processes, and
Ray on a local cluster, give the same rows as one process; the table and the refusals."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from rbd_ros.sweep import backends
from rbd_ros.sweep.cell import load_robot, run_cell
from rbd_ros.sweep.cli import main
from rbd_ros.sweep.grid import Cell, cells
from rbd_ros.sweep.perturbation import perturbed, simple

DURATION = 0.6  # s of closed loop per cell: enough to leave the start, short for a test


def _key(row: dict) -> tuple:
    return (row["robot"], row["law"], row["perturb"], row["seed"], row["tour"])


@pytest.mark.parametrize("law", ["pd_gravity", "computed_torque"])
@pytest.mark.slow
def test_unperturbed_cell_is_the_any_arm_loop(law: str) -> None:
    from rbd_ros.sim.closed_loop import run_tour
    from rbd_ros.sweep.cell import planned_tour

    row = run_cell(Cell("puma560", law, 0.0, 0, "default", DURATION))
    assert row["error"] == "" and not row["diverged"]
    ref = run_tour(load_robot("puma560"), law, tour=planned_tour("puma560", "default"), duration=DURATION)
    assert math.isclose(row["rms_error"], float(ref.rms_error.max()), rel_tol=1e-9, abs_tol=1e-15)
    assert math.isclose(row["tool_position_rms"], ref.tool_position_rms, rel_tol=1e-9, abs_tol=1e-15)
    assert row["sim_s"] == pytest.approx(DURATION)


@pytest.mark.slow
def test_model_mismatch_degrades_computed_torque() -> None:
    exact = run_cell(Cell("arm7", "computed_torque", 0.0, 0, "default", 1.0))
    off = [run_cell(Cell("arm7", "computed_torque", 30.0, s, "default", 1.0)) for s in (0, 1)]
    assert exact["rms_error"] < 1e-4  # exact model: numerical tracking only
    for row in off:
        assert row["error"] == "" and row["rms_error"] > 10 * exact["rms_error"]


def test_simple_perturbation_scales_each_link_as_a_body() -> None:
    model = load_robot("arm7")
    p = simple(model, 20.0, seed=3)
    s = p.mass / model.mass
    assert np.all(np.abs(s - 1.0) <= 0.2) and np.ptp(s) > 0.01
    np.testing.assert_allclose(p.inertia, model.inertia * s[:, None, None], rtol=1e-15, atol=0)
    np.testing.assert_array_equal(p.com, model.com)
    np.testing.assert_array_equal(simple(model, 20.0, seed=3).mass, p.mass)  # repeatable
    assert perturbed(model, 0.0, 5) is model
    with pytest.raises(ValueError, match=r"percent must be in \[0, 100\)"):
        simple(model, 100.0)


@pytest.mark.slow
def test_local_processes_give_the_rows_of_one_process() -> None:
    grid = cells(["puma560"], ["pd_gravity"], [0.0, 20.0], seeds=2, duration=0.3)
    assert len(grid) == 3  # 0 % once, 20 % per seed
    one = {_key(r): r for r in backends.local(grid, 1)}
    two = {_key(r): r for r in backends.local(grid, 2)}
    assert one.keys() == two.keys()
    for k in one:
        assert one[k]["rms_error"] == two[k]["rms_error"] and one[k]["error"] == ""


@pytest.mark.slow
def test_ray_on_a_local_cluster_gives_the_same_rows() -> None:
    pytest.importorskip("ray")
    grid = cells(["puma560"], ["pd_gravity"], [0.0, 20.0], seeds=1, duration=0.3)
    here = {_key(r): r["rms_error"] for r in backends.local(grid, 1)}
    seen = {}
    there = {_key(r): r["rms_error"] for r in backends.ray(grid, "local", 2, on_start=seen.update)}
    assert there == here
    assert seen.get("CPU", 0) >= 1


def test_cli_writes_the_table(tmp_path, capsys) -> None:
    out = tmp_path / "sw"
    code = main(["--robots", "puma560", "--laws", "pd_gravity", "--perturb", "0,10", "--duration", "0.3",
                 "--output", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "simulated s per wall s" in text
    rows = list(csv.DictReader(open(out / "sweep.csv", encoding="utf-8")))
    assert [(r["law"], float(r["perturb"])) for r in rows] == [("pd_gravity", 0.0), ("pd_gravity", 10.0)]
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["throughput"]["simulated_s"] == pytest.approx(0.6)
    assert (out / "sweep.png").stat().st_size > 1000


@pytest.mark.parametrize("argv, message", [
    (["--laws", "pd,nope"], "unknown laws ['nope']"),
    (["--perturb", "120"], "perturbation percentages must be in [0, 100)"),
    (["--tours", "moon"], "unknown tours ['moon']"),
    (["--robots", "no_such_arm"], "unknown robot 'no_such_arm'"),
    (["--seeds", "0"], "seeds must be at least 1"),
    (["--workers", "0"], "--workers must be at least 1"),
])
def test_cli_refuses_bad_input_in_one_line(argv: list[str], message: str, capsys, tmp_path) -> None:
    assert main([*argv, "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("where", ["position", "torque"])
def test_a_non_finite_state_or_torque_ends_the_cell_there_as_diverged(monkeypatch, where: str) -> None:
    """The cell's loop (``cell._run``) stops at the first step whose measured position or
    torque is NaN or Inf: that step is the last row, the cell ``diverged``.  The non-finite
    value is injected at the 6th step; the oracle is that count."""
    from rbd_ros.sweep import cell as cell_module

    real = cell_module.cell_loop

    def poisoned(c):
        sim, loop, law, tour = real(c)
        calls = [0]
        measure, cycle = sim.measure, loop.cycle

        def bad_measure():
            q, qd, e = measure()
            calls[0] += 1
            if calls[0] == 6:
                q[2] = math.inf
            return q, qd, e

        def bad_cycle(t):
            tau = cycle(t)
            if loop.cycles == 6:
                tau = tau.copy()
                tau[1] = math.nan
            return tau

        if where == "position":
            sim.measure = bad_measure
        else:
            loop.cycle = bad_cycle
        return sim, loop, law, tour

    monkeypatch.setattr(cell_module, "cell_loop", poisoned)
    row = cell_module._run(Cell("puma560", "pd_gravity", 0.0, 0, "default", 0.05))
    assert row["diverged"] and row["steps"] == 6, row
