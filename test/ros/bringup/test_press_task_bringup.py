"""``rbd-ros bringup --task press`` (issue 30): the report's numbers on the UR3 (named by no
other test) and the refusals before anything runs."""
from __future__ import annotations

import json

import pytest

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow


def test_press_task_reports_the_force_numbers(tmp_path, capsys) -> None:  # noqa: ANN001
    from rbd_ros.ros.bringup.cli import main

    urdf = str(example_robot_urdf("ur_description/urdf/ur3_robot.urdf"))
    out = tmp_path / "run"
    rc = main(["--urdf", urdf, "--task", "press", "--force", "10", "--controller", "impedance",
               "--record", str(out), "--json", str(tmp_path / "r.json")])
    assert rc == 0
    rep = json.loads((out / "report.json").read_text())
    assert rep == json.loads((tmp_path / "r.json").read_text())
    assert rep["law"] == "impedance" and rep["force_N"] == 10.0
    assert rep["force_error_rms_N"] < 0.5 and rep["impact_peak_ratio"] < 2.0
    assert rep["contact_lost_cycles"] == 0
    assert (out / "plot.png").stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "force error over the slide: RMS" in text and "contact lost during the slide: 0 cycles" in text


@pytest.mark.parametrize("argv, why", [
    (["--task", "press", "--controller", "computed_torque"], "needs a force law"),
    (["--task", "press", "--controller", "impedance", "--scene", "/no/such.yaml"], "not found"),
])
def test_press_task_refusals(argv, why, capsys) -> None:  # noqa: ANN001
    from rbd_ros.ros.bringup.cli import main

    assert main(["--robot", "puma560", *argv]) == 1
    assert why in capsys.readouterr().err


def test_force_must_be_positive(capsys) -> None:  # noqa: ANN001
    from rbd_ros.ros.bringup.cli import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--task", "press", "--force", "-3"])
    assert "must be a positive force in N" in capsys.readouterr().err
