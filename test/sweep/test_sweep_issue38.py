"""``rbd-ros sweep`` (issues 38 and 45): an interrupted sweep writes the rows it finished and
exits 130 without worker tracebacks; ``--duration`` is validated; a NaN result is a failed row;
a perturbed cell keeps the nominal model's gains unless ``--gains-from perturbed``; and the
survivors of issue 45's mutation run (a negative percentage, ``diverged`` counting the
simulator's unstable steps, ``local(workers=0)``, Ray's ``workers`` cap)."""
from __future__ import annotations

import csv
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from rbd_ros.sweep import backends
from rbd_ros.sweep.cell import controller_law, load_robot, run_cell
from rbd_ros.sweep.cli import main
from rbd_ros.sweep.grid import Cell, cells

REPO = Path(__file__).resolve().parents[2]
KINOVA = (REPO / ".venv" / "lib" / "python3.11" / "site-packages" / "cmeel.prefix" / "share"
          / "example-robot-data" / "robots" / "kinova_description" / "robots" / "kinova.urdf")


# ---- Ctrl-C ---------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("where", [["--workers", "2"], ["--workers", "2", "--ray", "local"]],
                         ids=["local", "ray"])
def test_interrupted_sweep_writes_what_it_finished(tmp_path: Path, where: list[str]) -> None:
    if "--ray" in where:
        pytest.importorskip("ray")
    out = tmp_path / "sw"
    # 9 cells of 1.5 s; SIGINT to the whole process group (a terminal's Ctrl-C) after 3 rows
    proc = subprocess.Popen(
        [sys.executable, "-m", "rbd_ros.cli", "sweep", "--robots", "puma560", "--laws",
         "pd_gravity,pid,computed_torque", "--perturb", "0,10,20", "--duration", "1.5", *where,
         "-o", str(out)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, start_new_session=True)
    lines: list[str] = []
    deadline = time.monotonic() + 240
    try:
        while not any(line.startswith("[3/9]") for line in lines):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(lines)
            lines.append(proc.stdout.readline())
        os.killpg(proc.pid, signal.SIGINT)
        # the rest through the same text stream: communicate(timeout=...) reads the pipe's file
        # descriptor and loses what readline had buffered already (a "[4/9]" line, once)
        reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
        reader.start()
        reader.join(60)
        assert not reader.is_alive(), "the sweep did not end within 60 s of Ctrl-C:\n" + "".join(lines)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    text = "".join(lines)
    assert proc.returncode == 130, text
    assert "Traceback" not in text and "release unlocked lock" not in text, text
    done = sum(1 for line in text.splitlines() if line.startswith("["))
    rows = list(csv.DictReader(open(out / "sweep.csv", encoding="utf-8")))
    assert len(rows) == done and 3 <= done < 9, text
    assert f"{done} of 9 cells finished and written, {9 - done} missing" in text, text
    assert all(r["error"] == "" and math.isfinite(float(r["rms_error"])) for r in rows)


@pytest.mark.slow  # the tour's planning: 4-14 s on a loaded machine
def test_the_interrupt_flag_stops_the_backends_between_rows() -> None:
    """``stop`` set after the first row: ``local`` yields no more (in this process)."""
    grid = cells(["puma560"], ["pd_gravity"], [0.0, 10.0, 20.0], duration=0.05)
    stop = backends.Interrupt().event
    got = []
    for row in backends.local(grid, 1, stop=stop):
        got.append(row)
        stop.set()
    assert len(got) == 1 and got[0]["error"] == ""


# ---- durations and NaN ----------------------------------------------------------------------
@pytest.mark.parametrize("value", ["inf", "nan", "1e-9", "-1", "0.0004"])
def test_duration_is_validated_naming_the_option(value: str, capsys, tmp_path) -> None:
    assert main(["--robots", "puma560", "--duration", value, "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "--duration must be 0 (the whole tour) or a finite number of seconds" in err, err
    assert "0.001 s" in err and len(err.splitlines()) == 1


def test_a_nan_result_is_a_failed_row_with_its_reason() -> None:
    row = run_cell(Cell("puma560", "pd_gravity", 0.0, 0, "default", 1e-9))  # no cycle runs
    assert math.isnan(row["rms_error"])
    assert "no control cycle ran" in row["error"] and "0.001 s" in row["error"], row["error"]


# ---- gains of a perturbed cell --------------------------------------------------------------
@pytest.mark.parametrize("law", ["pd_gravity", "pid", "computed_torque"])
def test_a_perturbed_cell_keeps_the_nominal_gains(law: str) -> None:
    if not KINOVA.is_file():
        pytest.skip("example-robot-data is not installed")
    from rbd_ros.control.gains import model_gains
    from rbd_ros.sweep.perturbation import perturbed

    # Kinova's j2s6s200 (example-robot-data): no gains file entry, every gain from the model
    true = load_robot(str(KINOVA))
    believed = perturbed(true, 30.0, 0)
    q0 = np.clip(np.zeros(true.dof), true.lower, true.upper)
    nominal, _ = model_gains(law, true, q0=q0, rate=1000.0)  # the oracle: the unperturbed model's
    mine, _ = model_gains(law, believed, q0=q0, rate=1000.0)
    held = controller_law(Cell(str(KINOVA), law, 30.0, 0, gains="nominal"), true, believed, q0, 1000.0)
    own = controller_law(Cell(str(KINOVA), law, 30.0, 0, gains="per-model"), true, believed, q0, 1000.0)
    assert held.model is believed and own.model is believed  # the law believes the perturbed model
    for k in nominal:
        np.testing.assert_array_equal(held.gains[k], nominal[k])
        np.testing.assert_array_equal(own.gains[k], mine[k])
    if law != "computed_torque":  # its gains do not depend on the model
        assert any(not np.array_equal(nominal[k], mine[k]) for k in nominal)
    assert held.schedule == own.schedule  # the per-cycle schedule is kept either way


def test_the_gains_column_and_option(tmp_path: Path) -> None:
    grid = cells(["puma560"], ["pd_gravity"], [0.0, 30.0], gains="per-model", duration=0.05)
    assert {c.gains for c in grid} == {"per-model"}
    out = tmp_path / "sw"
    assert main(["--robots", "puma560", "--laws", "pd_gravity", "--perturb", "30", "--duration", "0.05",
                 "--gains-from", "perturbed", "--output", str(out)]) == 0
    rows = list(csv.DictReader(open(out / "sweep.csv", encoding="utf-8")))
    assert [r["gains"] for r in rows] == ["per-model"]
    with pytest.raises(ValueError, match="gains must be one of nominal, per-model"):
        cells(["puma560"], ["pd"], gains="perturbed")


# ---- issue 45's survivors -------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-10.0, -1e-9, math.nan, 100.0])
def test_a_percentage_outside_0_100_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match=r"perturbation percentages must be in \[0, 100\)"):
        cells(["puma560"], ["pd"], [0.0, bad])


def test_cli_refuses_a_negative_percentage(capsys, tmp_path) -> None:
    assert main(["--robots", "puma560", "--perturb=-10", "--output", str(tmp_path)]) == 2
    assert "perturbation percentages must be in [0, 100), got [-10.0]" in capsys.readouterr().err


def test_diverged_counts_the_simulators_unstable_steps(monkeypatch) -> None:
    """An unstable step the simulator undid (state finite again) is a diverged row."""
    from rbd_ros.sim.simulator import Simulator

    step = Simulator.step

    def unstable_once(self, *a, **kw):
        out = step(self, *a, **kw)
        if self.stats.unstable_steps == 0 and self.time > 0.02:
            self.stats.unstable_steps += 1  # as Simulator.step counts an undone step
        return out

    monkeypatch.setattr(Simulator, "step", unstable_once)
    row = run_cell(Cell("puma560", "pd_gravity", 0.0, 0, "default", 0.05))
    assert row["unstable_steps"] == 1 and row["diverged"] is True and row["error"] == ""


def test_local_refuses_zero_workers_at_the_call() -> None:
    grid = cells(["puma560"], ["pd"], duration=0.05)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="workers must be an integer of at least 1"):
            backends.local(grid, bad)  # not only once iterated


@pytest.mark.slow
def test_ray_keeps_at_most_workers_tasks_in_flight(monkeypatch) -> None:
    ray = pytest.importorskip("ray")
    grid = cells(["puma560"], ["pd_gravity"], [0.0, 10.0, 20.0], duration=0.05)
    in_flight: list[int] = []
    wait = ray.wait

    def counting_wait(refs, *a, **kw):
        in_flight.append(len(refs))
        return wait(refs, *a, **kw)

    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        monkeypatch.setattr(ray, "wait", counting_wait)
        rows = list(backends.ray(grid, "local", workers=1))
    finally:
        ray.shutdown()
    assert len(rows) == 3 and all(r["error"] == "" for r in rows)
    assert in_flight and max(in_flight) == 1  # the cluster has 3 CPUs; the cap is 1
