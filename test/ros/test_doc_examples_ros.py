"""The ```` ```python ros ```` blocks of README.md and docs/ (issue 33): run as written, in
order, against a dynamics server started here with README's command (UR5 from
example-robot-data, tip ``tool0``; the services guide's blocks are for any 6-joint arm), each
file's blocks in one process (``test_doc_examples.py`` runs the rest)."""
from __future__ import annotations

import pytest
from doc_blocks import REPO, blocks, doc_files
from test_doc_examples import run_blocks

from robots_data import UR5, example_robot_urdf
from ros_helpers import NodeProcess

pytestmark = pytest.mark.slow

FILES = [p.relative_to(REPO).as_posix() for p in doc_files()
         if any(b.lang == "python" and b.info == "ros" for b in blocks(p))]


@pytest.fixture(scope="module")
def server():
    ur5 = example_robot_urdf(UR5)
    proc = NodeProcess(["dynamics-server", "--ros-args", "-p", f"urdf_path:={ur5}", "-p", "tip_link:=tool0"])
    try:
        proc.wait_for("dynamics_server: ready", 180)
        yield proc
    finally:
        proc.stop()


def test_some_blocks_need_ros() -> None:
    assert FILES, "no ```python ros block found: the services guide has one"


@pytest.mark.parametrize("path", FILES)
def test_ros_python_blocks_run(server, path: str) -> None:
    bs = blocks(REPO / path)
    # a ros block may use names an earlier plain block of the same file defined (q, qd, ...)
    run_blocks([b for b in bs if b.lang == "python" and b.info in ("", "ros")])
