"""Issue 27, the command-line tools: a bad option is one line ``...: error: ...`` and exit 2,
never FAIL rows with exit 0 or a traceback; ``rbd-ros info`` says what it expected."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from robots_data import BUNDLED_URDF
from ros_helpers import REPO

PLANAR = BUNDLED_URDF / "planar2.urdf"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rbd_ros.cli", *args], cwd=REPO, text=True,
                          capture_output=True, timeout=300)


def _one_line_error(out: subprocess.CompletedProcess, prefix: str) -> str:
    text = out.stdout + out.stderr
    assert out.returncode == 2, text
    assert "Traceback" not in text and "FAIL" not in text, text
    lines = [ln for ln in text.splitlines() if ln.startswith(f"{prefix}: error:")]
    assert len(lines) == 1, text
    return lines[0]


@pytest.mark.parametrize("extra, message", [
    (["--tol", "nan"], "--tol must be a finite number >= 0 (a relative difference), got nan"),
    (["--tol=-1e-9"], "--tol must be a finite number >= 0"),
    (["--tol", "inf"], "--tol must be a finite number >= 0"),
    (["--states", "0"], "--states must be a positive integer (random states to compare), got 0"),
    (["--states", "-3"], "--states must be a positive integer (random states to compare), got -3"),
    (["--seed", "-1"], "--seed must be an integer >= 0, got -1"),
])
def test_formulations_refuses_bad_options(extra: list[str], message: str) -> None:
    from rbd_ros.formulations.cli import main

    assert main([str(PLANAR), *extra]) == 2
    line = _one_line_error(_cli("formulations", str(PLANAR), *extra), "rbd-ros formulations")
    assert message in line


def test_formulations_tol_still_decides(capsys, monkeypatch) -> None:
    """The checks did not break the rule itself: a row exceeding ``--tol`` fails (tol 0 on
    round-off), a row at it passes.  The rows are given (``compare`` replaced): computing them
    compiled every formulation, 43-65 s of this fast test (issue 39); the real rows through the
    same ``main`` are ``test_formulations.py::test_cli`` (slow tier, every formulation)."""
    from rbd_ros.formulations import cli

    asked = []
    rows = [("inverse_dynamics", "kane", 0.0, 1e-6), ("mass_matrix", "lagrange", 3e-16, 1e-6),
            ("coriolis_matrix (C qd)", "silver", 1e-9, 1e-6)]
    monkeypatch.setattr(cli, "compare", lambda robot, states, seed: asked.append((robot.dof, states, seed)) or rows)
    assert cli.main([str(PLANAR), "--states", "1", "--tol", "1e-9"]) == 0
    assert "FAIL" not in capsys.readouterr().out
    assert cli.main([str(PLANAR), "--states", "1", "--tol", "0"]) == 1
    out = capsys.readouterr().out
    assert [ln.split()[-1] for ln in out.splitlines()[2:]] == ["1.0", "FAIL", "FAIL"], out
    assert asked == [(2, 1, 0), (2, 1, 0)]


@pytest.mark.ros
@pytest.mark.slow
def test_info_says_what_it_expected(tmp_path) -> None:
    pytest.importorskip("rclpy")
    line = _one_line_error(_cli("info", str(tmp_path)), "rbd_info")
    assert f"FILE '{tmp_path}' is a directory" in line and "a URDF/xacro, or a model YAML" in line
    rec = tmp_path / "run"
    rec.mkdir()
    np.savez(rec / "recording.npz", t=np.zeros(1))
    line = _one_line_error(_cli("info", str(rec)), "rbd_info")
    assert "is a recording directory" in line and f"rbd-ros view {rec}" in line
    line = _one_line_error(_cli("info", "--ros-args", "-p", f"urdf_path:={tmp_path}"), "rbd_info")
    assert f"urdf_path '{tmp_path}' is a directory" in line
    line = _one_line_error(_cli("info", str(tmp_path / "none.urdf")), "rbd_info")
    assert "none.urdf': file not found; info expects a robot file" in line
    # a model YAML is described: its joints and limits, as the model file holds them
    from rbd_ros.model import MdhModel

    model = MdhModel.from_yaml(str(REPO / "config" / "puma560.yaml"))
    out = _cli("info", str(REPO / "config" / "puma560.yaml"))
    assert out.returncode == 0, out.stdout + out.stderr
    for i, name in enumerate(model.joint_names):
        assert f"range [{model.lower[i]:.4g}, {model.upper[i]:.4g}]" in out.stdout.splitlines()[i + 1]
        assert name in out.stdout.splitlines()[i + 1]
    broken = tmp_path / "broken.yaml"
    broken.write_text("joints: [\n")
    line = _one_line_error(_cli("info", str(broken)), "rbd_info")
    assert "is not a valid model YAML" in line
