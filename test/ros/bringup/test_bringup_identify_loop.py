"""``rbd-ros bringup --task identify`` (issue 44): the excitation, its identification, the model
swapped into the running controller through ``~/load_model``, the excitation again, one report
(``rbd_ros.ros.bringup.identify_loop``).

The oracles: the tracking error of both runs is that of the MuJoCo arm the bridge simulates
(30 % perturbed from the controller's model); the torque NRMSE of the second run is against the
efforts MuJoCo applied (the bridge's measured efforts), not our own model; the swap's steps
against a blend built by hand (``swap_steps``) and, in the run, against the whole change an
instant switch makes at the held state, over ``SWAP_CYCLES``."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robots_data import REPO

pytest.importorskip("rclpy")


def test_swap_steps_of_a_hand_built_blend() -> None:
    """A linear blend of d = [2, -1] over 20 cycles after 5 still cycles, 4 more after it: the
    largest step d/20, the instant switch d, no own change; too few cycles refused."""
    from rbd_ros.ros.bringup.identify_loop import swap_steps

    old, d = np.array([1.0, 3.0]), np.array([2.0, -1.0])
    a = np.r_[np.zeros(5), np.arange(1, 21) / 20.0, np.ones(4)]
    tau = old + a[:, None] * d
    out = swap_steps(tau, np.zeros((len(a), 2)), 5)
    np.testing.assert_allclose(out["largest_step"], np.abs(d) / 20, rtol=1e-12)
    np.testing.assert_allclose(out["instant_step"], np.abs(d), rtol=1e-12)
    assert out["own_step"] == [0.0, 0.0] and out["cycles"] == 24 and out["state_change"] == 0.0
    with pytest.raises(ValueError, match="need cycles before and after"):
        swap_steps(tau[:3], np.zeros((3, 2)), 1)


def test_output_paths_and_the_pages_loop_table(tmp_path: Path) -> None:
    """Where the report and the model go (--json beside, --record inside); the page's loop
    section from a hand-made loop: the ratio and the largest swap step worked out here."""
    from types import SimpleNamespace

    from rbd_ros.ros.bringup.identify_loop import output_paths
    from rbd_ros.ros.bringup.page import write_page
    from rbd_ros.ros.bringup.report import Report

    assert output_paths(SimpleNamespace(json="a/loop.json", record="")) == (Path("a/loop.json"),
                                                                            Path("a/loop_identified.yaml"))
    assert output_paths(SimpleNamespace(json="", record="d")) == (Path("d/identify_loop.json"),
                                                                  Path("d/identified.yaml"))
    assert output_paths(SimpleNamespace(json="l.json", record="d"))[1] == Path("d/identified.yaml")
    loop = {"joints": ["j1", "j2"], "before": {"rms_error": [2e-4, 3e-4]}, "after": {"rms_error": [1e-5, 6e-5]},
            "torque_nrmse_percent": {"second_run": {"prior": [8.0, 12.5], "identified": [0.1, 0.25],
                                                    "samples": 900}},
            "held_out_error_percent": {"prior": 9.0, "identified": 0.2}, "swapped_at": 4.25,
            "swap": {"largest_step": [0.01, 0.04], "instant_step": [0.2, 0.8], "own_step": [0.0, 0.0],
                     "own_step_in_motion": [1.5, 0.7], "swap_cycles": 20, "state_change": 0.0}}
    rep = Report(["j1", "j2"], [1e-4, 2e-4], [2e-4, 4e-4], [3.0, 4.0], 1.0, 0, 8.0, 4000, identify_loop=loop)
    page = write_page(tmp_path, rep, {}).read_text()
    assert "<tr><td>j1</td><td>2.000e-04</td><td>1.000e-05</td><td>20.0x</td><td>8.00 %</td><td>0.10 %</td>" in page
    assert "<tr><td>j2</td><td>3.000e-04</td><td>6.000e-05</td><td>5.0x</td><td>12.50 %</td><td>0.25 %</td>" in page
    assert "over the switch 0.04 (j2), an instant switch 0.8, blended over 20 cycles" in page
    assert "9.00 % -&gt; 0.20 %" in page and "the second run from t = 4.250 s" in page
    assert "rms before" in rep.table() and "20.0" in rep.table()  # the terminal's table too


@pytest.mark.parametrize("argv,message", [
    ([], "--task identify needs --record DIR or --json FILE"),
    (["--json", "r.json", "--composed"], "not with --composed"),
    (["--json", "r.json", "--mode", "realtime"], "--task identify runs in lockstep"),
    (["--json", "r.json", "--duration", "3"], "no --duration"),
])
def test_identify_loop_refusals_are_one_line(argv, message, capsys, tmp_path, monkeypatch) -> None:
    from rbd_ros.ros.bringup.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["--robot", "planar2", "--task", "identify", "--quiet", *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not list(tmp_path.iterdir())  # nothing started, nothing written


@pytest.mark.slow
def test_one_command_identifies_swaps_and_tracks_better(tmp_path: Path) -> None:
    """planar2, the simulated arm 30 % perturbed, a 2 x 2 s excitation at 500 Hz: the second
    run (identified model) tracks at least 5x better on every joint; its torque NRMSE against
    MuJoCo's efforts is below 1 % per joint identified, above 5 % with the URDF model; the
    swap's largest one-cycle step is at most 1/SWAP_CYCLES of the instant switch's (+5 %) plus
    the feedback's own change with the arm held still, and the instant switch is not small;
    one report file (and the model beside it)."""
    from rbd_ros.control.loop import SWAP_CYCLES

    report, rec = tmp_path / "loop.json", tmp_path / "rec"
    proc = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", "--robot", "planar2",
                           "--perturb", "30", "--seed", "7", "--task", "identify", "--segment-time", "2", "--timestep",
                           "0.002", "--json", str(report), "--record", str(rec), "--no-video", "--quiet"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loop.json", "rec"]
    assert {"identified.yaml", "index.html", "plot.png", "recording.npz", "bag"} <= {p.name for p in rec.iterdir()}
    r = json.loads(report.read_text())
    before, after = np.array(r["before"]["rms_error"]), np.array(r["after"]["rms_error"])
    assert np.all(after * 5 < before), (before, after)
    nrmse = r["torque_nrmse_percent"]["second_run"]
    assert max(nrmse["identified"]) < 1.0 and min(nrmse["prior"]) > 5.0, nrmse
    s = r["swap"]
    step, own, instant = (np.array(s[k]) for k in ("largest_step", "own_step", "instant_step"))
    assert s["state_change"] == 0.0 and s["cycles"] >= SWAP_CYCLES
    assert np.all(step <= own + 1.05 * instant / SWAP_CYCLES + 1e-9), s
    assert instant.max() > 10 * step.max(), s  # blended, not one step
    assert "identified_model" in r and Path(r["identified_model"]).is_file()
    # the page (--record): the loop's table per joint as the report has it, and the tracking of
    # both runs recomputed from the states it saved (recording.npz), split at the swap
    page = (rec / "index.html").read_text()
    assert "<table id='identify_loop'>" in page and "<table id='report'>" in page
    for j, name in enumerate(r["joints"]):
        assert (f"<tr><td>{name}</td><td>{before[j]:.3e}</td><td>{after[j]:.3e}</td>"
                f"<td>{before[j] / after[j]:.1f}x</td>") in page, name
    saved = np.load(rec / "recording.npz")
    t, err = saved["t"], saved["q_ref"] - saved["q"]
    at = float(page.split("the second run from t = ")[1].split(" s")[0])
    for rows, expected in ((t < at - 1e-6, before), (t >= at - 1e-6, after)):
        np.testing.assert_allclose(np.sqrt(np.mean(err[rows] ** 2, axis=0)), expected, rtol=1e-3)
