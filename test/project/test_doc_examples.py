"""Examples that cannot rot (issue 33): every python block of README.md and docs/ runs as
written, every ``rbd-ros`` command of a bash block parses with that subcommand's own parser
(a wrong flag fails here), and no runnable block holds a placeholder (``my_arm.urdf``,
``...``).  How a block is marked: ``test/support/doc_blocks.py``.  Python blocks that need a
running dynamics server (```` ```python ros ````) run in ``test/ros/test_doc_examples_ros.py``."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
import yaml
from doc_blocks import REPO, blocks, command_lines, doc_files, placeholder, rbd_ros_args

from rbd_ros.cli import SUBCOMMANDS

pytestmark = pytest.mark.slow  # the python blocks compile and run the kernels

#: node subcommands: their arguments are ROS's (``--ros-args -p NAME:=VALUE``), checked against
#: the node's schema (config/schema/NODE.yaml) and the robot parameters every node shares
NODE_SCHEMAS = {"dynamics-server": "dynamics_server", "mujoco-bridge": "mujoco_bridge",
                "controller": "controller", "state-publisher": "state_publisher", "view": None,
                "ft-compensator": "ft_compensator"}

RUNNER = """
import json, sys, traceback
ns = {"__name__": "__doc_example__"}
for where, code in json.load(sys.stdin):
    try:
        exec(compile(code, where, "exec"), ns)
    except BaseException:
        print(f"example {where} failed:", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
"""


def all_blocks():
    return [b for path in doc_files() for b in blocks(path)]


def run_blocks(bs, env_extra: dict | None = None, timeout: float = 900) -> None:
    """Run python blocks in order in one process and one namespace, from the repository root."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
           "MPLBACKEND": "Agg", **(env_extra or {})}
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps([(b.where, b.code) for b in bs]),
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_blocks_are_marked_and_have_no_placeholder() -> None:
    bad = []
    for b in all_blocks():
        if b.lang == "python":
            if b.info not in ("", "ros") and not (b.info.startswith("norun:") and len(b.info) > 12):
                bad.append(f"{b.where}: info string '{b.info}' (use nothing, 'ros' or 'norun: REASON')")
            elif (p := placeholder(b.code)) and not b.info.startswith("norun:"):
                bad.append(f"{b.where}: placeholder '{p}' in a runnable python block")
        elif b.lang in ("bash", "sh", "shell", "console"):
            for argv in command_lines(b):
                if rbd_ros_args(argv) is not None and (p := placeholder(" ".join(argv))):
                    bad.append(f"{b.where}: placeholder '{p}' in `{' '.join(argv)}`")
    assert not bad, "\n".join(bad)


def test_marks_and_placeholders_are_caught(tmp_path: Path) -> None:
    """The checker itself: a placeholder and an unmarked non-run block are found."""
    page = tmp_path / "page.md"
    page.write_text("```python\nrobot = load('my_arm.urdf')\n```\n\n```bash\nrbd-ros info ...\n```\n")
    bs = blocks(page)
    assert [b.lang for b in bs] == ["python", "bash"] and bs[0].line == 1 and bs[1].line == 5
    assert placeholder(bs[0].code) == "my_arm"
    assert placeholder(" ".join(command_lines(bs[1])[0])) == "..."
    assert placeholder("q[0] = 1.0; rbd-ros bringup --robot arm7") is None


class _Parsed(BaseException):
    """Raised by the patched parser once the arguments parsed: nothing else of the command runs."""


def _parse_with_subcommand(argv: list[str]) -> str | None:
    """None if ``rbd-ros ARGV`` parses, else why not."""
    if not argv or argv[0] not in SUBCOMMANDS:
        return f"unknown subcommand {argv[:1]}"
    sub, rest = argv[0], argv[1:]
    if sub in NODE_SCHEMAS:
        return _check_ros_args(sub, rest)
    if sub == "info":
        return None if len(rest) <= 1 else f"info takes one FILE, got {rest}"
    module = importlib.import_module(SUBCOMMANDS[sub][0])
    real = argparse.ArgumentParser.parse_args

    def parse_only(self, args=None, namespace=None):
        raise _Parsed(real(self, args, namespace))

    with mock.patch.object(argparse.ArgumentParser, "parse_args", parse_only):
        try:
            module.main(rest)
        except _Parsed:
            return None
        except SystemExit as e:
            return f"argparse refused it (exit {e.code})"
    return "the command ran without parsing its arguments"


def _schema_names(node: str | None) -> set[str]:
    names = set(yaml.safe_load((REPO / "config/schema/robot.yaml").read_text())["parameters"])
    if node:
        names |= set(yaml.safe_load((REPO / f"config/schema/{node}.yaml").read_text())["parameters"])
    return names


def _check_ros_args(sub: str, rest: list[str]) -> str | None:
    if "--ros-args" not in rest:
        return None if not any(a.startswith("-") for a in rest) else f"flags outside --ros-args: {rest}"
    args = rest[rest.index("--ros-args") + 1:]
    names = _schema_names(NODE_SCHEMAS[sub])
    for flag, value in zip(args[::2], args[1::2]):
        if flag == "-p":
            name = value.split(":=", 1)[0]
            if ":=" not in value or name not in names:
                return f"-p {value}: not a parameter of {sub} (config/schema)"
        elif flag != "--params-file":
            return f"unexpected ROS argument {flag}"
    return None


def test_rbd_ros_commands_parse() -> None:
    bad, seen = [], 0
    for b in all_blocks():
        if b.lang not in ("bash", "sh", "shell", "console"):
            continue
        for argv in command_lines(b):
            sub = rbd_ros_args(argv)
            if sub is None:
                continue
            seen += 1
            if why := _parse_with_subcommand(sub):
                bad.append(f"{b.where}: `{' '.join(argv)}`: {why}")
    assert seen >= 10, f"only {seen} rbd-ros commands found in README.md and docs/"
    assert not bad, "\n".join(bad)


def test_parse_check_catches_a_wrong_flag() -> None:
    assert _parse_with_subcommand(["bringup", "--robot", "arm7", "--controller", "pd"]) is None
    assert "argparse refused" in _parse_with_subcommand(["bringup", "--robto", "arm7"])
    assert "not a parameter" in _parse_with_subcommand(
        ["dynamics-server", "--ros-args", "-p", "urdf_pth:=x.urdf"])


@pytest.mark.parametrize("path", [p.relative_to(REPO).as_posix() for p in doc_files()
                                  if any(b.lang == "python" and b.info == "" for b in blocks(p))])
def test_python_blocks_run(path: str) -> None:
    run_blocks([b for b in blocks(REPO / path) if b.lang == "python" and b.info == ""])
