"""Paths to real robot descriptions used as oracles in tests (example-robot-data)."""
from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUNDLED_URDF = REPO / "urdf"


def example_robot_urdf(relpath: str) -> Path:
    """``example_robot_urdf("panda_description/urdf/panda.urdf")``; example-robot-data is a
    test requirement (requirements-test.txt), so a missing file fails the test."""
    root = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
    path = root / relpath
    if not path.exists():
        pytest.fail(f"example-robot-data not installed ({path} missing): "
                    "pip install -r requirements-test.txt")
    return path


PANDA = "panda_description/urdf/panda.urdf"
UR5 = "ur_description/urdf/ur5_robot.urdf"
