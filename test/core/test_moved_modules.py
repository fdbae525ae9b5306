"""Issue 38, item 7: every import path of earlier versions that was documented (README, guides,
launch files, bench and examples, over the whole git history) or public (a moved module) still
works, with a ``DeprecationWarning`` naming the new path, and is the new module itself.

The list was taken from ``git log --diff-filter=R --summary`` (every moved module) and from
every ``from rbd_ros... import ...`` / ``import rbd_ros...`` line ever in the repository's
documents and scripts (outside ``rbd_ros/`` and ``test/``), with the names they import; for a
moved module that had an ``__all__``, its names then.  Each runs in a fresh interpreter (the
warning comes on the first import)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: old path -> (new path, names imported from the old path in documents or its old __all__)
CORE = {
    "rbd_ros.data": ("rbd_ros.model.data", ["empty_workspace", "pack_model"]),
    "rbd_ros.physical": ("rbd_ros.model.physical", ["InertiaWarning", "physical_inertia"]),
    "rbd_ros.urdf_export": ("rbd_ros.model.urdf_export", ["model_to_urdf"]),
    "rbd_ros.validate": ("rbd_ros.util.validate", [
        "NonFiniteResultError", "finite_array", "finite_result", "flag", "floating_base_body", "gravity",
        "integer", "joint_limits", "positive", "real", "real_array", "rigid_pose", "rotation"]),
    "rbd_ros.resources": ("rbd_ros.util.resources", ["bundled_robots", "bundled_urdf", "config_file"]),
    "rbd_ros.jit_cache": ("rbd_ros.algorithm.jit_cache", ["register", "source_digest"]),
    "rbd_ros.spatial": ("rbd_ros.lie.so3", []),
    "rbd_ros.robot_statics": ("rbd_ros.robot.statics", ["IKResult", "StaticsAndIK"]),
    "rbd_ros.robot_simulation": ("rbd_ros.robot.simulation", ["Simulation", "SimulationError", "SimulationResult"]),
    "rbd_ros.floating_base": ("rbd_ros.robot.floating", ["INTEGRATORS", "FloatingBaseRobot", "carried_jacobian"]),
    "rbd_ros.mobile_base": ("rbd_ros.robot.mobile", ["DiffDriveEfforts", "MobileBaseRobot"]),
    "rbd_ros.robot.services": ("rbd_ros.services.requests", ["DynamicsService", "RequestError", "DEFAULT_WHEELS"]),
}
ROS = {
    "rbd_ros.client": ("rbd_ros.ros.client", ["DynamicsClient"]),
    "rbd_ros.dds": ("rbd_ros.ros.dds", ["PROFILE_ENV", "SWITCH_ENV", "use_large_data_profile", "profile_path"]),
    "rbd_ros.bringup": ("rbd_ros.ros.bringup", []),
    "rbd_ros.bringup.cli": ("rbd_ros.ros.bringup.cli", []),
    "rbd_ros.bringup.description": ("rbd_ros.ros.bringup.description", ["ARGUMENTS", "describe"]),
    "rbd_ros.bringup.processes": ("rbd_ros.ros.bringup.processes", ["NodeProcess"]),
    "rbd_ros.bringup.recorder": ("rbd_ros.ros.bringup.recorder", []),
    "rbd_ros.bringup.report": ("rbd_ros.ros.bringup.report", []),
    "rbd_ros.nodes": ("rbd_ros.ros.nodes", []),
    "rbd_ros.nodes.common": ("rbd_ros.ros.common", []),
    "rbd_ros.nodes.lean_executor": ("rbd_ros.ros.lean_executor", ["LeanExecutor"]),
    "rbd_ros.nodes.controller": ("rbd_ros.ros.nodes.controller", ["Controller"]),
    "rbd_ros.nodes.dynamics_server": ("rbd_ros.ros.nodes.dynamics_server", ["DynamicsServer", "f64", "SERVICE_QOS"]),
    "rbd_ros.nodes.info": ("rbd_ros.ros.nodes.info", []),
    "rbd_ros.nodes.mujoco_bridge": ("rbd_ros.ros.nodes.mujoco_bridge", []),
}

CHECK = r'''
import importlib, json, sys, warnings
table = json.loads(sys.argv[1])
bad = []
for old, (new, names) in table.items():
    for m in [k for k in sys.modules if k == old or k.startswith(old + ".")]:
        del sys.modules[m]  # a fresh first import of the old name (the new module stays loaded)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            mod = importlib.import_module(old)
            missing = [n for n in names if not hasattr(mod, n)]
        except Exception as exc:
            bad.append(f"{old}: {type(exc).__name__}: {exc}")
            continue
    msgs = [str(x.message) for x in w if x.category is DeprecationWarning and str(x.message).startswith(old + " ")]
    if mod is not importlib.import_module(new):
        bad.append(f"{old}: is {mod.__name__}, not {new}")
    if not any(f"moved to {new} " in m for m in msgs):
        bad.append(f"{old}: no DeprecationWarning naming {new}: {msgs}")
    if missing:
        bad.append(f"{old}: names missing {missing}")
print(json.dumps(bad))
'''


def check(table: dict) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))  # this tree's rbd_ros
    out = subprocess.run([sys.executable, "-c", CHECK, json.dumps(table)], capture_output=True, text=True,
                         timeout=240, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_every_moved_core_module_imports_with_a_warning_naming_its_new_path() -> None:
    assert check(CORE) == []


@pytest.mark.ros
def test_every_moved_ros_module_imports_with_a_warning_naming_its_new_path() -> None:
    assert check(ROS) == []


def test_the_old_names_are_all_registered_and_a_missing_submodule_is_named_as_asked() -> None:
    import rbd_ros

    assert set(CORE) <= set(rbd_ros._MOVED)  # the list above covers the issue-28 table
    code = ("try:\n    import rbd_ros.nodes.no_such_node\nexcept ModuleNotFoundError as e:\n"
            "    print(e.name)\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.stdout.strip() == "rbd_ros.nodes.no_such_node", out.stdout + out.stderr[-1000:]
