"""The fork server (``rbd_ros.ros.bringup.fork_server``, issue 39): a node forked from it starts
as a fresh ``python -m`` interpreter would (the oracle: the same probe run with the server
switched off), its exit status and signals are ``Popen``'s, a request whose environment is
read at import time gets a fresh interpreter, and when the requester is SIGKILLed its nodes
and the server stop.  The probe: ``python -m timeit`` whose setup prints the process's state."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from rbd_ros.ros.bringup import fork_server
from rbd_ros.ros.bringup.processes import REPO, NodeProcess

PROBE = textwrap.dedent("""
    import faulthandler, json, os, signal, sys, numpy
    print("STATE " + json.dumps({
        "pgid_is_pid": os.getpgid(0) == os.getpid(), "cwd": os.getcwd(),
        "marker": os.environ.get("ROS_LOG_DIR"), "domain": os.environ.get("ROS_DOMAIN_ID"),
        "sigint": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
        "sigchld": signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL,
        "sigpipe": signal.getsignal(signal.SIGPIPE) == signal.SIG_IGN,
        "faulthandler": faulthandler.is_enabled(), "main": sys.modules["__main__"].__name__,
        "random": int(numpy.random.randint(1 << 30)), "stdout_tty": sys.stdout.isatty(),
        "unbuffered": sys.stdout.write_through,
        "cmdline": open("/proc/self/cmdline", "rb").read().rstrip(b"\\0").split(b"\\0")[:6]
                   == [a.encode() for a in [sys.executable, "-m", "timeit", "-n", "1", "-r"]]}),
        flush=True)
    """)


def _probe(env: dict[str, str] | None = None, then: str = "") -> NodeProcess:
    return NodeProcess(["-n", "1", "-r", "1", "-s", PROBE + then, "pass"], env=env, module="timeit")


def _state(proc: NodeProcess) -> dict:
    return json.loads(proc.wait_for("STATE ", 60).split("STATE ", 1)[1])


def test_env_differences_names_what_is_read_at_import_time() -> None:
    server = {"NUMBA_CACHE_DIR": "/a", "ROS_DOMAIN_ID": "3", "PATH": "/bin"}
    assert fork_server.env_differences(server, dict(server)) == []
    assert fork_server.env_differences(server, {**server, "ROS_DOMAIN_ID": "9",
                                                "RCUTILS_LOGGING_USE_STDOUT": "1",
                                                "RBD_ROS_STOP_WITH_PARENT": "1"}) == []
    assert fork_server.env_differences(server, {**server, "NUMBA_CACHE_DIR": "/empty",
                                                "MUJOCO_GL": "egl"}) == ["MUJOCO_GL",
                                                                         "NUMBA_CACHE_DIR"]
    assert fork_server.env_differences(server, {"ROS_DOMAIN_ID": "3"}) == ["NUMBA_CACHE_DIR",
                                                                            "PATH"]


def test_a_forked_node_starts_as_a_fresh_interpreter_does(monkeypatch, tmp_path) -> None:
    # two variables the server's environment lacks (a child may differ in these)
    env = {"ROS_LOG_DIR": str(tmp_path), "PYTHONFAULTHANDLER": "1"}
    fork_server.prestart()
    forked = [_probe(env) for _ in range(2)]
    assert all(isinstance(p.proc, fork_server.ForkedChild) for p in forked), fork_server.last_refusal
    monkeypatch.setenv(fork_server.SWITCH_ENV, "0")
    fresh = _probe(env)
    assert isinstance(fresh.proc, subprocess.Popen)
    states = [_state(p) for p in (*forked, fresh)]
    for p in (*forked, fresh):
        assert p.wait(30) == 0, p.output
    randoms = [s.pop("random") for s in states]
    assert states[0] == states[1] == states[2], states  # the oracle: a fresh interpreter
    assert states[0]["pgid_is_pid"] and states[0]["marker"] == str(tmp_path) and states[0]["faulthandler"]
    assert states[0]["cwd"] == str(REPO) and states[0]["main"] == "__main__"
    assert states[0]["cmdline"]  # ps shows the node's command, not the server's
    assert len(set(randoms)) == 3, "numpy's global random state copied into the forks"


@pytest.mark.parametrize("then, code", [("os._exit(3)", 3), ("sys.exit(3)", 1),  # timeit's
                                         ("os.kill(os.getpid(), signal.SIGKILL)", -9)])
def test_exit_codes_read_as_a_fresh_interpreters(monkeypatch, then: str, code: int) -> None:
    fork_server.prestart()
    forked = _probe(then=then)
    assert isinstance(forked.proc, fork_server.ForkedChild), fork_server.last_refusal
    monkeypatch.setenv(fork_server.SWITCH_ENV, "0")
    fresh = _probe(then=then)
    assert forked.wait(60) == fresh.wait(60) == code  # the oracle: Popen's own
    assert forked.stop() == code


def test_signals_and_waits_read_as_popen_reads_them() -> None:
    fork_server.prestart()
    hangs = _probe(then="import time; time.sleep(60)")
    _state(hangs)
    with pytest.raises(subprocess.TimeoutExpired):
        hangs.wait(0.2)
    hangs.proc.send_signal(signal.SIGKILL)
    assert hangs.wait(10) == -signal.SIGKILL
    interrupted = _probe(then="import time; time.sleep(60)")
    _state(interrupted)
    assert interrupted.stop() == 1  # SIGINT to the group: KeyboardInterrupt's traceback, exit 1
    assert "KeyboardInterrupt" in interrupted.output


def test_an_import_time_variable_gets_a_fresh_interpreter(tmp_path) -> None:
    proc = _probe({"NUMBA_CACHE_DIR": str(tmp_path)})  # an empty cache means a cold start
    try:
        assert isinstance(proc.proc, subprocess.Popen)
        assert "NUMBA_CACHE_DIR" in fork_server.last_refusal
        assert _state(proc)["pgid_is_pid"]
    finally:
        proc.stop()


REQUESTER = textwrap.dedent("""
    import os, sys, time
    from rbd_ros.ros.bringup.processes import STOP_WITH_PARENT, NodeProcess
    from rbd_ros.ros.bringup import fork_server
    fork_server.prestart(start_imports=True)
    node = NodeProcess(["-n", "1", "-r", "1", "-s", "import sys; from rbd_ros.algorithm.mdh import mdh_transform; "
                        "print('up', len(mdh_transform.overloads), 'toppra' in sys.modules, flush=True); "
                        "import time; time.sleep(120)", "pass"], env={STOP_WITH_PARENT: str(os.getpid())},
                       module="timeit")
    loaded, preloaded = node.wait_for("up", 60).split()[-2:]
    kind = "forked" if isinstance(node.proc, fork_server.ForkedChild) else "fresh"
    print("PIDS", node.proc.pid, fork_server._client.proc.pid, kind, loaded, preloaded, flush=True)
    time.sleep(120)
    """)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_sigkilled_requester_stops_its_nodes_and_the_server() -> None:
    """Also (the same requester, a server of its own, ``start_imports``): a kernel cached before
    the server started is loaded in the node before its first call (``jit_cache.load_cached``),
    and a module a node imports at start (the retimer's toppra) is imported already."""
    from rbd_ros.algorithm.mdh import mdh_transform
    mdh_transform(0.1, 0.2, 0.3, 0.4)  # cached now, if it was not
    requester = subprocess.Popen([sys.executable, "-c", REQUESTER], cwd=REPO, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        line = ""
        deadline = time.monotonic() + 60
        while not line.startswith("PIDS") and time.monotonic() < deadline:
            line = requester.stdout.readline() or line
            assert requester.poll() is None, requester.stdout.read()
        _, node, server, kind, loaded, preloaded = line.split()
        assert kind == "forked"
        assert loaded == "1", "the server did not load the cached kernel before the fork"
        assert preloaded == "True", "start_imports: the controller's retimer (toppra) not imported in the server"
        assert _alive(int(node)) and _alive(int(server))
        requester.kill()
        requester.wait(10)
        deadline = time.monotonic() + 20
        while (_alive(int(node)) or _alive(int(server))) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(int(node)), "the node outlived its SIGKILLed requester"
        assert not _alive(int(server)), "the fork server outlived its requester and its nodes"
    finally:
        if requester.poll() is None:
            requester.kill()


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "fresh"])
def test_wait_returns_with_the_last_lines_read(monkeypatch, forked: bool) -> None:
    """``NodeProcess.wait``: the exit status once the output is read to its end.  The exit is
    known before the reader has the last lines (a CI run read status 2 without its error line);
    here a slow reader (``echo`` runs on it, 50 ms a line) makes that certain, and ``proc.wait``
    alone would return with lines missing."""
    if forked:
        fork_server.prestart()
    else:
        monkeypatch.setenv(fork_server.SWITCH_ENV, "0")
    p = NodeProcess(["-n", "1", "-r", "1", "-s", "import os, sys\nfor k in range(6): print('line', k)\n"
                     "sys.stdout.flush(); os._exit(3)", "pass"], module="timeit", echo=lambda line: time.sleep(0.05))
    assert isinstance(p.proc, fork_server.ForkedChild) is forked, fork_server.last_refusal
    assert p.wait(30) == 3
    assert [ln for ln in p.output.splitlines() if ln.startswith("line")] == [f"line {k}" for k in range(6)]
