"""``rbd-ros bringup --task press`` (issue 30): the refusals before anything runs (the run
itself: test_press_nodes.py)."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("argv, why", [
    (["--task", "press", "--controller", "computed_torque"], "needs a force law"),
    (["--task", "press", "--controller", "impedance", "--scene", "/no/such.yaml"], "not found"),
])
def test_press_task_refusals(argv, why, capsys) -> None:
    from rbd_ros.ros.bringup.cli import main

    assert main(["--robot", "puma560", *argv]) == 1
    assert why in capsys.readouterr().err


def test_force_must_be_positive(capsys) -> None:
    from rbd_ros.ros.bringup.cli import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--task", "press", "--force", "-3"])
    assert "must be a positive force in N" in capsys.readouterr().err


def test_the_hybrid_press_is_guarded_unless_told() -> None:
    from rbd_ros.ros.bringup.cli import parse_args

    assert parse_args(["--task", "press"]).guard is True
    assert parse_args(["--task", "press", "--no-guard"]).guard is False
