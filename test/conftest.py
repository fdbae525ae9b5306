"""Shared pytest setup.

ROS isolation: every test session picks its own ROS_DOMAIN_ID and restricts discovery to
this host before any rclpy import, so parallel or repeated runs never cross-talk.

Layout: the tests mirror the source (``core/``, ``lie/``, ``formulations/``, ``urdf/``,
``control/``, ``sim/``, ``ros/`` with ``ros/bringup/``, ``project/`` for the repository's own
tooling); the helper modules live in ``support/``.  Helpers and the test modules other tests
borrow from (their basenames are unique) import as top-level modules from any folder: every
folder under ``test/`` is put on ``sys.path`` here.

Markers (setup.cfg): ``ros`` on every test under ``ros/`` (added here) and on the few elsewhere
that start ROS nodes or import rclpy (marked in their file), so ``pytest -m "not ros"`` runs
the ROS-free suite; ``slow`` on tests or files that take more than ~2 s, except one
fast test kept per node and per module, so the fast tier (``-m "not slow"``) still reaches every
module.

Test peers under ``CI=true``: a test (or module) that skips because one of ``CI_REQUIRED``
is missing (``pytest.importorskip("pinocchio")``, ``pytest.skip("Xvfb is not installed")``,
...) fails instead, naming the package: CI installs them all (requirements-test.txt,
.ci/run), so there a skip would hide a broken install.  Elsewhere they still skip.
"""
from __future__ import annotations

import atexit
import fcntl
import os
import random
import sys
import tempfile
from pathlib import Path

# One OpenBLAS thread per test process, set before numpy is first imported (nothing imports it
# before this file, in the controller or in an xdist worker; node processes inherit it): two
# workers on two cores, each with a multithreaded BLAS that spin-waits for its threads, ran the
# identification's QR/SVD/lstsq (36000 x 60) 2.5-10x slower than one thread each (0.47/1.45/
# 0.51 s vs 0.19/0.15/0.12 s at load 5).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# pytest's assertion rewriting keeps each rewritten test module as a ``*-pytest-*.pyc`` only where
# bytecode may be written; under PYTHONDONTWRITEBYTECODE (this workplace's machines) every worker
# rewrote all ~245 test modules at every collection (collect-only 10 s -> 6 s once they are kept).
# For this process only (set before any test module is imported; node processes keep the setting).
sys.dont_write_bytecode = False

_DOMAIN_LOCKS: list = []  # open files: this session's claims, released when it ends
atexit.register(lambda: [handle.close() for handle in _DOMAIN_LOCKS])  # no ResourceWarning at exit


def claim_free_domain() -> str:
    """A ROS_DOMAIN_ID (1-200) no other test session on this host holds: each claim is an
    ``flock`` on a file per domain, dropped by the kernel when the session ends however it
    ends.  Random picks from 1-100 collided between concurrent sessions (one session's
    recorder then counted another's /joint_states, and nodes mapped each other's shared
    memory)."""
    folder = os.path.join(tempfile.gettempdir(), "rbd_ros-test-domains")
    os.makedirs(folder, exist_ok=True)
    candidates = list(range(1, 201))
    random.SystemRandom().shuffle(candidates)
    for domain in candidates:
        handle = open(os.path.join(folder, f"{domain}.lock"), "a")  # held
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        _DOMAIN_LOCKS.append(handle)
        return str(domain)
    raise RuntimeError(f"every ROS_DOMAIN_ID 1-200 is claimed by a test session ({folder})")


# Must happen before rclpy is imported anywhere (subprocesses inherit the environment).  A
# pytest-xdist worker inherits its controller's environment: it claims a domain of its own
# (xdist sets PYTEST_XDIST_WORKER before this file is imported).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if ("RBD_ROS_TEST_DOMAIN" not in os.environ
        or os.environ.get("RBD_ROS_TEST_DOMAIN_WORKER", "") != _WORKER):
    _domain = claim_free_domain()
    os.environ["RBD_ROS_TEST_DOMAIN"] = _domain
    os.environ["RBD_ROS_TEST_DOMAIN_WORKER"] = _WORKER
    os.environ["ROS_DOMAIN_ID"] = _domain
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.pop("ROS_STATIC_PEERS", None)
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
os.environ.setdefault("PYTHONUNBUFFERED", "1")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

TEST_ROOT = Path(__file__).resolve().parent
ROS_TESTS = TEST_ROOT / "ros"  # everything here needs ROS 2: marked ``ros``
# support/ (the helper modules) ahead of site-packages, then every test folder (tests import a
# few shared fixtures and oracles from one another by module name); also when this file is
# loaded as a plugin (``-p conftest``)
if str(TEST_ROOT / "support") not in sys.path:
    sys.path.insert(0, str(TEST_ROOT / "support"))
for _folder in sorted(TEST_ROOT.rglob("*")):
    _parts = _folder.relative_to(TEST_ROOT).parts
    if _folder.is_dir() and not any(part.startswith((".", "_")) for part in _parts) \
            and str(_folder) not in sys.path:
        sys.path.append(str(_folder))

#: the first failure of each rerun test, printed at the end (test/support/rerun_report.py)
pytest_plugins = ["rerun_report"]


from xdist_lanes import HEAVY, LONG_FIRST, enter_idle_lane, idle_worker, lane_scheduler, needs_normal_cpu, xdist_unit  # noqa: E402

#: s: a ``DynamicsService``'s default bound on a request's work on the idle lane (10 s elsewhere)
IDLE_LANE_REQUEST_SECONDS = 600.0


def pytest_addoption(parser) -> None:
    parser.addoption("--idle-lane", action="store_true", default=False,
                     help="with -n N >= 2: the last worker runs under SCHED_IDLE and takes only the "
                          "files that need no timely CPU (test/support/xdist_lanes.py)")


def pytest_configure(config) -> None:
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if config.getoption("idle_lane") and _WORKER and _WORKER == idle_worker(count):
        note = enter_idle_lane()
        if "refused" in note or "not available" in note:
            config.issue_config_time_warning(pytest.PytestConfigWarning(note), stacklevel=2)
        # a request's wall-clock bound means nothing where the CPU comes only when the normal
        # lanes leave it: 4100 states of test_base_batch took 10.8 s there (bound 10 s) in a CI
        # run. The bound's own tests give theirs (test/services/test_request_bounds.py).
        from rbd_ros.services import requests

        requests.DEFAULT_MAX_REQUEST_SECONDS = IDLE_LANE_REQUEST_SECONDS


def _remove_zombie_segments() -> None:
    """The Fast DDS segments of participants that are gone (tests kill nodes on purpose, 35 MB
    of RAM-backed /dev/shm each): removed before and after the session and after each test
    file (``_zombie_segments``); a live or starting participant's never (the lock rule of
    ``rbd_ros.ros.dds.remove_zombie_segments``), so workers may do it side by side."""
    try:
        from rbd_ros.ros.dds import remove_zombie_segments
    except ImportError:
        return
    removed, freed = remove_zombie_segments()
    if removed:
        print(f"\nremoved {removed} Fast DDS shared-memory segment(s) of killed processes "
              f"({freed / 1e6:.0f} MB of /dev/shm)")


@pytest.fixture(autouse=True, scope="module")
def _zombie_segments():
    yield
    _remove_zombie_segments()


@pytest.fixture(autouse=True)
def _deep_fork_server(request):
    """Before the first test of a worker that may start a node (a ``ros`` test, or one in a file
    the lanes put on a normal lane: rclpy, ``realtime``): its fork server with the nodes' start
    imports (``fork_server.prestart(start_imports=True)``): a worker forks a hundred nodes or
    more, each then 0.1-0.4 s of CPU lighter to ``ready``, for ~1 s more once in the server.  A
    run without such a test starts none; a bringup's own server stays the lean one."""
    if (request.node.get_closest_marker("ros") is not None
            or needs_normal_cpu(xdist_unit(request.node.nodeid))):
        from rbd_ros.ros.bringup import fork_server

        fork_server.prestart(start_imports=True)
    yield


def pytest_sessionstart(session) -> None:
    _remove_zombie_segments()


def pytest_sessionfinish(session, exitstatus) -> None:
    _remove_zombie_segments()


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``: one work unit per file, the heavy files one unit, sent first (in
    collection order, which puts them first); with ``--idle-lane`` the lanes of
    ``xdist_lanes``.  xdist's own loadgroup reads the ``xdist_group`` marks before this file's
    collection hook adds them: measured, every test went out on its own (a file's tests on both
    workers, its module fixture set up twice, the heavy loops beside each other)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    scheduler = lane_scheduler(LoadScopeScheduling)
    if config.getoption("idle_lane"):
        scheduler.idle = idle_worker(int(config.getvalue("numprocesses") or 0))
    config.option.loadscopereorder = False  # collection order: the heavy unit first
    return scheduler(config, log)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(config, items) -> None:
    heavy, long_first = set(), set()
    for item in items:
        path = Path(str(item.path)).resolve()
        if ROS_TESTS in path.parents:
            item.add_marker(pytest.mark.ros)
            if item.get_closest_marker("flaky") is None:
                # tests through processes and DDS, timed on the wall clock beside another suite
                # worker on 2 cores: one rerun, listed in the summary (-ra: "RERUN"), so a
                # failure must happen twice in a row to fail. Three CI-like runs of stop 47 each
                # met 1-2 such one-offs (a discovery race, a 0.2 s descheduling, a GIL share),
                # each found and fixed; a wrong result fails both runs.
                item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=1))
        rel = path.relative_to(TEST_ROOT).as_posix() if TEST_ROOT in path.parents else path.name
        timely = item.get_closest_marker("ros") or item.get_closest_marker("realtime")
        if timely and not needs_normal_cpu(xdist_unit(item.nodeid)):
            raise pytest.UsageError(
                f"{item.nodeid} is marked {timely.name!r} but its file does not say so where "
                "test/support/xdist_lanes.py looks (NORMAL_CPU): --idle-lane would run it under "
                "SCHED_IDLE; mark it in the file (pytestmark or a decorator)")
        # one xdist group per file (loadfile's unit: module fixtures start once), the heavy
        # files one group together
        if rel in HEAVY:
            heavy.add(item.nodeid)
        if rel in LONG_FIRST:
            long_first.add(item.nodeid)
        item.add_marker(pytest.mark.xdist_group("heavy" if rel in HEAVY else rel))
    # heavy first, then the long CPU-only files (a stable sort)
    items.sort(key=lambda item: (item.nodeid not in heavy, item.nodeid not in long_first))


#: what a skip reason names (lower case, '-' as '_') -> the package CI installs for it
CI_REQUIRED = {
    "pinocchio": "pin (pip, requirements-test.txt)",
    "mujoco": "mujoco (pip, requirements.txt)",
    "example_robot_data": "example-robot-data (pip, requirements-test.txt)",
    "roboticstoolbox": "roboticstoolbox-python (pip, requirements-test.txt)",
    "ray": "ray (pip, requirements-test.txt; rbd-ros sweep --ray)",
    "cvxpy": "cvxpy and clarabel (pip, requirements.txt; rbd-ros identify's semidefinite program)",
    "xvfb": "xvfb (Debian, .ci/run)",
    "chromium": "chromium (Debian, .ci/run)",
    "libosmesa6": "libosmesa6 (Debian, .ci/run)",
    "offscreen opengl": "libosmesa6 (Debian, .ci/run)",
}


def ci_failure(reason: str, env: dict | None = None) -> str | None:
    """Under ``CI=true``, the failure message for a skip whose ``reason`` names a package of
    ``CI_REQUIRED``; otherwise ``None`` (the skip stands)."""
    if (os.environ if env is None else env).get("CI") != "true":
        return None
    text = reason.lower().replace("-", "_")
    for key, package in CI_REQUIRED.items():
        if key in text:
            return f"CI=true: {package} is required here, not skipped ({reason.strip()})"
    return None


def _skips_to_failures(report) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        message = ci_failure(reason)
        if message:
            report.outcome, report.longrepr = "failed", message


#: s: a test (its call, or its setup: the fixtures it starts) not marked ``slow`` that takes longer
#: gets a ``SlowUnmarkedWarning`` in the summary (issue 39: mark it ``slow`` or make it faster; the
#: fast tier, ``make test-fast``, is ``-m "not slow"``)
UNMARKED_LIMIT = 30.0


class SlowUnmarkedWarning(pytest.PytestWarning):
    """A test not marked ``slow`` took more than ``UNMARKED_LIMIT`` s."""


def slow_unmarked(item, call) -> str | None:
    """The warning's text when ``call`` (a phase of ``item``) took over ``UNMARKED_LIMIT`` s and
    ``item`` is not marked ``slow``, else None."""
    if call.when not in ("setup", "call") or call.duration <= UNMARKED_LIMIT:
        return None
    if item.get_closest_marker("slow") is not None:
        return None
    return (f"{item.nodeid}: {call.when} took {call.duration:.1f} s (over {UNMARKED_LIMIT:.0f} s) and the "
            "test is not marked slow: mark it @pytest.mark.slow or make it faster")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _skips_to_failures(outcome.get_result())
    message = slow_unmarked(item, call)
    if message:
        item.warn(SlowUnmarkedWarning(message))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield  # a module-level importorskip skips the whole module here
    _skips_to_failures(outcome.get_result())


# property tests draw the same examples in every run (a failure can be reproduced; CI does not
# flake on a new example), unless HYPOTHESIS_PROFILE=explore
settings.register_profile("fixed", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fixed"))

from ros_helpers import NodeProcess, ros_context  # noqa: E402,F401


@pytest.fixture
def node_process():
    """Start ROS nodes as real processes; every one is stopped when the test ends.

    ``proc = node_process(["dynamics-server", "--ros-args", "-p", "x:=1"], ready="serving")``
    runs ``rbd-ros ...`` and waits until ``ready`` appears in its output.
    """
    started: list[NodeProcess] = []

    def start(args: list[str], ready: str | None = None, timeout: float = 60.0,
              env: dict[str, str] | None = None) -> NodeProcess:
        proc = NodeProcess(args, env=env)
        started.append(proc)
        if ready is not None:
            proc.wait_for(ready, timeout)
        return proc

    yield start
    for proc in started:
        proc.stop()


# one recorded bringup shared by several test files (each a few node processes and a closed
# loop: tens of seconds on CI); the files using it are in the heavy xdist group, so one worker
# runs it once for all of them
@pytest.fixture(scope="session")
def mobile_run(tmp_path_factory):
    """``mobile_arm7`` under ``whole_body_computed_torque`` for 2 s, recorded with its video:
    ``(CompletedProcess, the record folder)`` (test_bringup_mobile, test_bringup_mobile_page,
    test_bringup_tf)."""
    import subprocess

    from ros_helpers import REPO

    out = tmp_path_factory.mktemp("bringup_mobile") / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--robot", "mobile_arm7", "--controller",
         "whole_body_computed_torque", "--duration", "2.0", "--record", str(out), "--quiet"],
        cwd=REPO, capture_output=True, text=True, timeout=900)
    return proc, out
