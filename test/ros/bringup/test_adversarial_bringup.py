"""Issue 19, ``rbd-ros bringup``: bad times and record places refused before any node starts,
every termination signal stops every node, and the bag of an interrupted run is readable."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ros_helpers import REPO, NodeProcess

pytestmark = pytest.mark.slow  # end to end: ROS processes and a closed loop

pytest.importorskip("rclpy")


def _bringup(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rbd_ros.cli", "bringup", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, message", [
    (["--segment-time", "0"], "argument --segment-time: must be a positive number of seconds, got 0"),
    (["--segment-time", "nan"], "argument --segment-time: must be a positive number of seconds"),
    (["--duration", "-1"], "argument --duration: must be a positive number of seconds, got -1"),
    (["--duration", "0"], "argument --duration: must be a positive number of seconds, got 0"),
])
def test_item8_bad_times_are_refused_before_any_node(args: list[str], message: str) -> None:
    out = _bringup("--robot", "planar2", *args)
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and "[bringup]" not in out.stdout


def test_item12_unwritable_record_place_fails_before_starting(tmp_path: Path) -> None:
    a_file = tmp_path / "report.txt"
    a_file.write_text("x")
    out = _bringup("--robot", "planar2", "--record", str(a_file))
    assert out.returncode == 1 and f"--record {a_file}: exists and is not a directory" in out.stderr
    out = _bringup("--robot", "planar2", "--record", str(a_file / "run"))
    assert out.returncode == 1 and f"--record {a_file / 'run'}: cannot write there" in out.stderr
    for o in (out,):
        assert "Traceback" not in o.stderr and "[bringup]" not in o.stdout


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid``: its children, theirs (a fork server's nodes), ..."""
    parent = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    below, frontier = [], [pid]
    while frontier:
        kids = [c for c, p in parent.items() if p in frontier]
        below += kids
        frontier = kids
    return below


def _is_fork_server(pid: int) -> bool:
    try:
        return b"fork_server_loop" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _signal_a_running_bringup(sig: int, record: list[str], settle: float = 1.0,
                              gone_within: float = 5.0) -> NodeProcess:
    """Start a bringup of planar2, wait for its tour, send ``sig`` to it alone (as a closing
    terminal does) and check that none of its four nodes (nor the fork server they were forked from) outlives it."""
    proc = NodeProcess(["bringup", "--robot", "planar2", "--controller", "pd_gravity",
                        "--duration", "60", *record])
    try:
        proc.wait_for("[bringup] t =", timeout=300)  # the tour runs (and is being recorded)
        # ... and has covered 0.3 s (300 states): a loaded machine ran it at RTF 0.025 (25
        # states in the 1 s settle); progress lines come every 2 s of wall time
        deadline = time.monotonic() + 120
        while not any(float(ln.split("t =")[1].split("/")[0]) >= 0.3
                      for ln in list(proc.lines) if ln.startswith("[bringup] t =")):
            assert time.monotonic() < deadline, "the tour made no progress"
            time.sleep(0.1)
        below = _descendants(proc.proc.pid)  # the nodes, and the fork server they came from
        nodes = [p for p in below if not _is_fork_server(p)]
        assert len(nodes) == 4, nodes  # bridge, state publisher, dynamics server, controller
        time.sleep(settle)
        os.kill(proc.proc.pid, sig)
        proc.wait(60)
        deadline = time.monotonic() + gone_within
        while any(_running(p) for p in below) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in nodes if _running(p)], "orphaned node processes"
        assert not [p for p in below if _running(p)], "an orphaned fork server"
    finally:
        proc.stop()
    return proc


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGINT])
def test_item9_a_signal_stops_every_node_and_keeps_the_bag(tmp_path: Path, sig: int) -> None:
    out = tmp_path / "run"
    proc = _signal_a_running_bringup(sig, ["--record", str(out)] if sig == signal.SIGHUP else [])
    assert proc.proc.returncode == 128 + sig
    text = proc.output
    assert f"rbd-ros bringup: interrupted ({signal.Signals(sig).name})" in text, text[-2000:]
    assert "Traceback" not in text
    if sig == signal.SIGHUP:
        from rbd_ros.ros.bringup.recorder import read_bag

        assert (out / "bag" / "metadata.yaml").is_file()
        bag = read_bag(out / "bag")
        assert len(bag["/controller/joint_trajectory"]) == 1
        assert len(bag["/joint_states"]) > 100 and len(bag["/effort_controller/commands"]) > 100


def test_item9_even_sigkill_leaves_no_node_and_the_committed_messages(tmp_path: Path) -> None:
    import sqlite3

    out = tmp_path / "run"
    # settle: a few commits of the bag (COMMIT_PERIOD 0.5 s); SIGKILL: nothing can be cleaned
    # up by the process itself, the nodes stop on their own (PR_SET_PDEATHSIG)
    _signal_a_running_bringup(signal.SIGKILL, ["--record", str(out)], settle=2.0, gone_within=30)
    db = out / "bag" / "bag.db3"
    # read-write, as ``ros2 bag reindex`` opens it: killed inside a commit, the writer leaves a
    # hot journal, which SQLite rolls back on the first open that may write (read-only, that
    # open fails: "attempt to write a readonly database", a CI rerun's first failure)
    with sqlite3.connect(str(db)) as conn:
        (count,) = conn.execute("SELECT COUNT(*) FROM messages").fetchone()
    assert count > 100  # what was committed survives (``ros2 bag reindex`` rebuilds metadata)


def test_item8_a_too_fast_tour_is_fitted_to_the_limits_and_said_so() -> None:
    # 0.5 rad in 10 ms would break arm7's velocity limits (2.2-2.6 rad/s): the controller would
    # refuse it (it did, and the bringup printed a perfect report). The tour is now planned
    # inside the limits before any node starts (rbd_ros/control/tour.py) and says what it
    # changed; a refusal that still happens is an error (the check in TourTask.wait_for_tour_accepted stays).
    out = _bringup("--robot", "arm7", "--controller", "pd_gravity", "--segment-time", "0.01",
                   timeout=400)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "reduced for their velocity limits" in out.stdout
    assert "the controller refused" not in out.stderr and "Traceback" not in out.stderr
    rows = [line.split() for line in out.stdout.splitlines() if line.startswith("joint") and "rms" not in line]
    assert len(rows) == 7 and max(float(r[2]) for r in rows) < 1e-3  # max error, rad
