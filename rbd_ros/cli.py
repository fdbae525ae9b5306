"""``rbd-ros``: one console command, a subcommand per tool or node.

Each subcommand lives in its own module and exposes ``main(argv) -> int``; this file only
dispatches, so adding a tool never touches another's code.  Node subcommands pass the rest
of the command line (``--ros-args ...``) through to rclpy.
"""
from __future__ import annotations

import importlib
import sys

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "urdf2mdh": ("rbd_ros.urdf.cli", "convert a URDF/xacro to a modified-DH table and YAML model"),
    "info": ("rbd_ros.ros.nodes.info", "node: load a robot and print its joints"),
    "dynamics-server": ("rbd_ros.ros.nodes.dynamics_server", "node: dynamics services"),
    "mujoco-bridge": ("rbd_ros.ros.nodes.mujoco_bridge", "node: MuJoCo arm speaking ros2_control topics"),
    "controller": ("rbd_ros.ros.nodes.controller", "node: joint/task-space torque controllers"),
    "state-publisher": ("rbd_ros.ros.nodes.state_publisher",
                        "node: /robot_description, /tf_static, /tf of every URDF link"),
    "ft-compensator": ("rbd_ros.ros.nodes.ft_compensator",
                       "node: a real arm's F/T topic minus its identified payload (~/wrench_compensated)"),
    "bringup": ("rbd_ros.ros.bringup.cli", "start bridge, services and a controller; report"),
    "view": ("rbd_ros.ros.nodes.viewer", "MuJoCo's interactive viewer: live /joint_states or a recording"),
    "identify": ("rbd_ros.identification.cli", "dynamic parameters of an arm from a bringup recording"),
    "formulations": ("rbd_ros.formulations.cli", "every dynamics formulation vs RNEA: differences, times"),
    "sweep": ("rbd_ros.sweep.cli", "closed loop over robots x laws x perturbations x tours (local or Ray)"),
    "warm": ("rbd_ros.sim.warm", "compile the jitted kernels once, before nodes need them (setup runs it)"),
}


def _usage() -> str:
    lines = ["usage: rbd-ros SUBCOMMAND [args...]", "", "subcommands:"]
    lines += [f"  {name:<16} {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    name, rest = argv[0], argv[1:]
    from rbd_ros.ros.bringup.processes import stop_with_parent  # lazy: rbd_ros.ros (7 ms), not for --help

    stop_with_parent()  # a node of `rbd-ros bringup`: stop when it dies, however it dies
    if name not in SUBCOMMANDS:
        print(f"rbd-ros: unknown subcommand '{name}'\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
