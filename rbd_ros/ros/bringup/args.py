"""The bringup's command line: ``parse_args`` and the checks that refuse a run before any node
starts (``--record``, ``--json``, ``--timestep``, ``--floor``, ``--package-path``).  ROS-free:
``rbd_ros.ros.bringup.plan`` builds the run from what this parses."""
from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

from rbd_ros.ros.bringup import excitation, mismatch
from rbd_ros.ros.bringup.description import CONTROLLER_TYPES, MODES
from rbd_ros.util.flags import NewSpelling, add_chain_flags, add_deprecated
from rbd_ros.util.resources import DEFAULT_ROBOT

#: the help's first line (the first paragraph of ``rbd_ros.ros.bringup.cli``'s docstring)
DESCRIPTION = ("``rbd-ros bringup``: an arm in MuJoCo, the dynamics services and a controller, a demo\n"
               "trajectory, and a report.")


def _positive(text: str, unit: str, what: str) -> float:
    """A finite number above zero (so no node starts for a run that cannot be done), or the
    argparse error: ``'x' is not a number of <unit>`` / ``must be a positive <what>, got x``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of {unit}") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive {what}, got {text}")
    return value


def _positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero."""
    return _positive(text, "seconds", "number of seconds")


def _positive_newtons(text: str) -> float:
    """An argparse type: a finite force above zero, N."""
    return _positive(text, "newtons", "force in N")


def check_record_dir(path: Path) -> None:
    """Fail before any node starts when ``--record DIR`` cannot be written: ``DIR`` is a
    file, or cannot be created, or refuses a file (``OSError`` with the reason)."""

    if path.exists() and not path.is_dir():
        raise FileExistsError(f"--record {path}: exists and is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise OSError(f"--record {path}: cannot write there ({exc.strerror or exc})") from None


#: the bridge's timesteps the bringup runs (s): a control cycle of at most 10 ms (a coarser one
#: samples a 2 s tour segment too coarsely to follow it; at 1 s no cycle falls in the window)
TIMESTEP_RANGE = (1e-5, 0.01)


def check_timestep(timestep: float | None) -> None:
    """``--timestep`` inside ``TIMESTEP_RANGE`` (``ValueError`` naming it otherwise)."""
    if timestep is None:
        return
    lo, hi = TIMESTEP_RANGE
    if not (np.isfinite(timestep) and lo <= timestep <= hi):
        raise ValueError(f"--timestep {timestep:g}: must be between {lo:g} and {hi:g} s (the bridge's "
                         f"step and the controller's cycle; the default is 0.001 s)")


def parse_floor(text: str | float | None) -> float | str | None:
    """``--floor``: 'auto' (default), 'none' or a height in m."""
    if text is None or isinstance(text, float):
        return text
    t = str(text).strip().lower()
    if t in ("auto", "none"):
        return None if t == "none" else "auto"
    try:
        value = float(t)
    except ValueError:
        raise ValueError(f"--floor must be a height in m, 'auto' or 'none', got '{text}'") from None
    if not np.isfinite(value):
        raise ValueError(f"--floor must be a finite height in m, got '{text}'")
    return value


def check_json_file(path: Path) -> None:
    """Fail before any node starts when ``--json FILE`` cannot be written: ``FILE`` is a
    directory, or its directory cannot be created, or the file cannot be opened for writing
    (``OSError`` with the reason); a file that was not there is not left behind."""
    if path.is_dir():
        raise IsADirectoryError(f"--json {path}: is a directory, not a file")
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a"):
            pass
    except OSError as exc:
        raise OSError(f"--json {path}: cannot write there ({exc.strerror or exc})") from None
    if not existed:
        path.unlink(missing_ok=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="rbd-ros bringup", description=DESCRIPTION)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--robot", default=None, help=f"bundled robot (default {DEFAULT_ROBOT})")
    src.add_argument("--urdf", default="", help="a .urdf/.xacro file")
    p.add_argument("--package-path", action="append", default=[], metavar="DIR",
                   help="a folder holding the URDF's package://NAME/ meshes (NAME itself, or below "
                        "it; repeatable): put before ROS_PACKAGE_PATH for every node of the run")
    add_chain_flags(p, default="", old_base_link=False)  # --tip: deprecated
    p.add_argument("--base-type", dest="base", default="", action=NewSpelling,
                   choices=["", "fixed", "planar", "diff_drive"],
                   help="a --urdf robot's base (default: the file's, a URDF's fixed), as the nodes' "
                        "'base_type' parameter: diff_drive finds the wheel joints in the URDF")
    add_deprecated(p, "--base", "--base-type", "base", choices=["", "fixed", "planar", "diff_drive"])
    p.add_argument("--controller", default="computed_torque",
                   choices=[c for c in CONTROLLER_TYPES if c != "none"])
    p.add_argument("--command-interface", default="effort", choices=["effort", "position"],
                   help="the arm's ros2_control command interface: effort (default: the law's "
                        "torques) or position (the bridge's position drives, the controller a "
                        "position-interface joint trajectory controller sending the reference: "
                        "docs/guides/real-arm.md)")
    p.add_argument("--duration", type=_positive_seconds, default=None,
                   help="simulated seconds to run (default: the tour plus 0.5 s)")
    p.add_argument("--mode", default="lockstep", choices=[m for m in MODES if m != "max"],
                   help="lockstep (default: every control cycle gets its step, deterministic) "
                        "or realtime (wall-clock paced)")
    p.add_argument("--composed", action="store_true",
                   help="the control law inside the MuJoCo bridge's loop, no controller process "
                        "(references and monitoring on the same topics)")
    p.add_argument("--rt-priority", type=int, default=0, metavar="N",
                   help="SCHED_FIFO priority of the bridge's stepping thread and of a separate "
                        "controller's executor thread (0 = off; reported when refused)")
    p.add_argument("--no-services", action="store_true",
                   help="no dynamics services node (the arm, its controller and the state publisher "
                        "only: a run that calls no /rbd/ service, one process and ~1.5 s of CPU less)")
    p.add_argument("--record", default="", metavar="DIR",
                   help="write report.json, plot.png, bag/, video.mp4, index.html")
    p.add_argument("--no-video", action="store_true", help="with --record: no video")
    p.add_argument("--json", default="", metavar="FILE", help="write the report as JSON")
    p.add_argument("--segment-time", type=_positive_seconds, default=None,
                   help="seconds per tour segment (default 2; with a mobile base 4: its figure eight "
                        "takes the 3 segments)")
    p.add_argument("--start", nargs="+", default=None, metavar="JOINT=VALUE",
                   help="the tour's start, kept exactly: JOINT=VALUE pairs (rad or m) and/or a named "
                        "pose of the robot (its SRDF's group_state); joints not given keep the default "
                        "start; refused when outside the limits, below the floor or too heavy to hold")
    p.add_argument("--floor", default="auto", metavar="Z",
                   help="height (m, base link frame) that no link origin or tool point may come "
                        "within 2 cm of along the tour; default: the base link's xy-plane for an arm "
                        "standing above it (table-mounted), none for one hanging below it; 'none': no floor")
    p.add_argument("--base-model", default="wheels", choices=["wheels", "ideal"],
                   help="a mobile base in the bridge: wheels on a floor (default) or the core's "
                        "ideal rolling model")
    p.add_argument("--integrator", default=None,
                   choices=["auto", "Euler", "RK4", "implicit", "implicitfast"],
                   help="the bridge's MuJoCo integrator (default: config/bridge.yaml, auto = RK4 "
                        "unless a joint's damping needs implicitfast)")
    p.add_argument("--timestep", type=_positive_seconds, default=None,
                   help="the bridge's timestep in s (default: config/bridge.yaml, 0.001); the "
                        "controller's rate follows")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--params-file", action="append", default=[], metavar="FILE",
                   help="a ROS 2 parameter file (NODE: ros__parameters: ...; /** for every node) for "
                        "the nodes the bringup starts (repeatable; later files win)")
    p.add_argument("-p", dest="param", action="append", default=[], metavar="NODE:NAME:=VALUE",
                   help="a parameter of a node the bringup starts, as --ros-args -p (NAME:=VALUE: "
                        "every node that has it); wins over --params-file")
    p.add_argument("--scene", default="", metavar="FILE",
                   help="objects the arm touches (a scene YAML or a bundled name: table, wall; "
                        "rbd_ros.sim.scene), given to the bridge")
    p.add_argument("--task", default="tour", choices=["tour", "press", "identify"],
                   help="tour (default); press: approach the scene's surface, press --force N, "
                        "slide 0.1 m, retreat (rbd_ros.ros.bringup.press); identify: the excitation, "
                        "rbd-ros identify on it, the model swapped into the running controller, the "
                        "excitation again, one report (rbd_ros.ros.bringup.identify_loop)")
    p.add_argument("--force", type=_positive_newtons, default=10.0, metavar="N",
                   help="with --task press: the force to press with, N (default 10)")
    p.add_argument("--no-guard", dest="guard", action="store_false",
                   help="with --task press and hybrid_force_position: come down to the surface at "
                        "the law's velocity bound (by default the bound goes down for the last 1 cm, "
                        "so that the impact stays near the force: rbd_ros.sim.contact_task.guard_plan)")
    excitation.add_arguments(p)
    mismatch.add_arguments(p)
    args = p.parse_args(argv)
    use_package_paths(args.package_path)
    return args


def use_package_paths(folders: list[str]) -> None:
    """``--package-path``: the folders first on ``ROS_PACKAGE_PATH``, in this process (the
    video's meshes) and every node it starts (the bridge's collision meshes); each must exist."""
    for folder in folders:
        if not Path(folder).expanduser().is_dir():
            raise SystemExit(f"rbd-ros bringup: error: --package-path {folder}: no such folder")
    if folders:
        rest = [p for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
        os.environ["ROS_PACKAGE_PATH"] = os.pathsep.join(
            [str(Path(f).expanduser().resolve()) for f in folders] + rest)

