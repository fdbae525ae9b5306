"""Node ``info``: load a robot description and print (and log) its movable joints.

``rbd-ros info [FILE] [--ros-args -p urdf_path:=FILE | -p robot_description:=XML]``; with
none, the bundled default robot (a FILE argument wins over the parameters). A missing file or
malformed XML is one line ``rbd_info: error: ...`` and exit code 2. It parses the URDF with
urdf-parser-py only, so it runs on any description, even one the MDH converter would refuse.
"""
from __future__ import annotations

import sys

from rbd_ros.ros.common import NodeConfigError, run_node


def describe(xml: str) -> list[str]:
    """One line per movable joint: name, type, limits."""
    from urdf_parser_py.urdf import URDF

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
        from rbd_ros.ros.robot_params import urdf_errors, urdf_source
        from rbd_ros.urdf.parse import read_description

        if files:  # a FILE argument wins over the parameters
            source, where, _ = urdf_source("", files[0])
        else:
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
