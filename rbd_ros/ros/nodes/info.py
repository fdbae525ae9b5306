"""Node ``info``: load a robot description and print (and log) its movable joints.

``rbd-ros info [FILE] [--ros-args -p urdf_path:=FILE | -p robot_description:=XML]``; with
none, the bundled default robot (a FILE argument wins over the parameters).  FILE is a URDF or
xacro, or a model YAML (``rbd-ros urdf2mdh`` output, ``config/*.yaml``).  A missing file, a
directory (a recording directory is pointed to ``rbd-ros view DIR``) or malformed XML/YAML is
one line ``rbd_info: error: ...`` saying what was expected, and exit code 2. It parses the
URDF with urdf-parser-py only, so it runs on any description, even one the MDH converter
would refuse.
"""
from __future__ import annotations

import sys
from pathlib import Path

from urdf_parser_py.urdf import URDF

from rbd_ros.model import MdhModel
from rbd_ros.ros.common import NodeConfigError, run_node
from rbd_ros.ros.robot_params import urdf_errors, urdf_source


def describe(xml: str) -> list[str]:
    """One line per movable joint: name, type, limits."""

    try:
        robot = URDF.from_xml_string(xml)
    except Exception as exc:  # noqa: BLE001 - ParseError, AssertionError... from the parser
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise NodeConfigError(f"not a valid URDF: {reason}") from None
    lines = [f"robot '{robot.name}': {len(robot.links)} links, {len(robot.joints)} joints"]
    for j in robot.joints:
        if j.type == "fixed":
            continue
        lim = j.limit
        rng = (f"[{lim.lower:.4g}, {lim.upper:.4g}]" if lim is not None and j.type != "continuous"
               else "unbounded")
        effort = f"{lim.effort:.4g}" if lim is not None and lim.effort is not None else "-"
        lines.append(f"  {j.name:<24} {j.type:<10} {j.parent} -> {j.child}  range {rng}  effort {effort}")
    return lines


#: what ``info`` reads, for its messages
EXPECTED = "a robot file: a URDF/xacro, or a model YAML (rbd-ros urdf2mdh output)"


def check_path(path: str, where: str) -> None:
    """``NodeConfigError`` saying what ``info`` expected when ``path`` is a directory or
    missing (``where``: how the message names it)."""

    p = Path(path).expanduser()
    if p.is_dir():
        if (p / "recording.npz").is_file():
            raise NodeConfigError(f"{where} '{p}' is a recording directory; info describes "
                                  f"{EXPECTED}; replay a recording with: rbd-ros view {p}")
        raise NodeConfigError(f"{where} '{p}' is a directory; info expects {EXPECTED}")
    if not p.is_file():
        raise NodeConfigError(f"{where} '{p}': file not found; info expects {EXPECTED}")


def describe_model(path: str) -> list[str]:
    """``describe`` for a model YAML: one line per joint of the chain (name, type, limits)."""
    try:
        m = MdhModel.from_yaml(path)
    except (ValueError, KeyError, TypeError) as exc:
        raise NodeConfigError(f"'{path}' is not a valid model YAML: {' '.join(str(exc).split())}") from None
    lines = [f"model '{m.name}': {m.dof} joints, {m.base_link} -> {m.tip_link}, "
             f"{m.base_type} base"]
    for i, name in enumerate(m.joint_names):
        kind = "prismatic" if int(m.joint_type[i]) == 1 else "revolute"
        lines.append(f"  {name:<24} {kind:<10} link {m.link_names[i]}  range "
                     f"[{m.lower[i]:.4g}, {m.upper[i]:.4g}]  effort {m.effort_limit[i]:.4g}")
    return lines


def main(argv: list[str] | None = None) -> int:
    from rclpy.node import Node

    args = list(sys.argv[1:] if argv is None else argv)
    cut = args.index("--ros-args") if "--ros-args" in args else len(args)
    files, ros_args = args[:cut], args[cut:]
    if len(files) > 1 or any(f.startswith("-") for f in files):
        print(f"rbd_info: error: expected at most one URDF/xacro FILE before --ros-args, got "
              f"{files}", file=sys.stderr)
        return 2

    def body(node: Node) -> None:
        node.declare_parameter("urdf_path", "")
        node.declare_parameter("robot_description", "")
        from rbd_ros.urdf.parse import read_description  # lazy: the URDF converter (0.2 s of import)

        if files:  # a FILE argument wins over the parameters
            check_path(files[0], "FILE")
            if files[0].lower().endswith((".yaml", ".yml")):
                for line in describe_model(files[0]):
                    print(line, flush=True)
                node.get_logger().info(f"described {files[0]}")
                return
            source, where, _ = urdf_source("", files[0])
        else:
            if node.get_parameter("urdf_path").value and not node.get_parameter("robot_description").value:
                check_path(node.get_parameter("urdf_path").value, "urdf_path")
            source, where, _ = urdf_source(node.get_parameter("robot_description").value,
                                           node.get_parameter("urdf_path").value)
        with urdf_errors(where):  # the converter's reader: xacro expanded, errors name the file
            xml, source = read_description(source)
        for line in describe(xml):
            print(line, flush=True)
        node.get_logger().info(f"described {source}")

    return run_node("rbd_info", body, ros_args, spin=False)


if __name__ == "__main__":
    sys.exit(main())
