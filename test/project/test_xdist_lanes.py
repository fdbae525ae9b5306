"""``make test``'s lanes (test/support/xdist_lanes.py): the scheduler driven by three stand-in
workers over a collection of real test files, as xdist's controller drives it (``schedule``,
then ``mark_test_complete`` per report, ``shutdown`` when a worker is given nothing more).
Oracles: the lane rule read off each file by hand below, and every test run exactly once."""
from __future__ import annotations

import os
import subprocess
import sys
from collections import OrderedDict

import pytest
from xdist.scheduler import LoadScopeScheduling
from xdist_lanes import LONG_FIRST, TEST_ROOT, lane_scheduler, needs_normal_cpu

#: file -> needs timely CPU, read by hand: a ROS file, a heavy one, the ``realtime`` planner
#: file, a ROS-free file that imports rclpy's helpers in a test, two CPU-only files
FILES = {
    "test/ros/bringup/test_bringup_tf.py": True,  # HEAVY
    "test/ros/test_smoke.py": True,
    "test/control/test_joint_trajectory_planner.py": True,  # pytestmark realtime
    "test/control/test_any_arm.py": True,  # rclpy
    "test/core/test_trig.py": False,
    "test/lie/test_lie_groups.py": False,
    "test/core/test_f8vector.py": False,
}


class Worker:
    """The part of xdist's ``WorkerController`` the scheduler touches."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down, self.queue = False, []

    def send_runtest_some(self, indices) -> None:
        assert not self.shutting_down, f"{self.gateway.id} given work after its shutdown"
        self.queue += list(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def _scheduler(workers, idle: str):
    cls = lane_scheduler(LoadScopeScheduling)
    cls.idle = idle
    sched = cls.__new__(cls)
    sched.numnodes, sched.collection = len(workers), None
    sched.config = type("Config", (), {"option": type("Option", (), {"loadscopereorder": False})()})()
    sched.workqueue, sched.assigned_work, sched.registered_collections = OrderedDict(), {}, {}
    sched.log = lambda *a: None
    return sched


def _started(collection, idle: str):
    """Three stand-in workers that collected ``collection``, and the scheduler's first
    distribution among them."""
    workers = [Worker(f"gw{k}") for k in range(3)]
    sched = _scheduler(workers, idle)
    for w in workers:
        sched.add_node(w)
        sched.add_node_collection(w, collection)
    sched.schedule()
    return workers, sched


def _run(idle: str, heavy: int = 12):
    # the heavy unit the longest (its loops run one after another), so that the normal lane
    # that ends first meets a timely unit still running on the other one
    def count(path):
        return heavy if "bringup" in path else 3 if FILES[path] else 6

    collection = [f"{path}::test_{k}" for path in FILES for k in range(count(path))]
    workers, sched = _started(collection, idle)
    ran: dict[str, list[str]] = {w.gateway.id: [] for w in workers}
    overlap = []  # a CPU-only file on a normal lane while a timely one ran on another
    stalls = []  # a normal lane waiting on nothing while a unit it may take is queued
    for _ in range(10 * len(collection)):
        # as xdist's worker: a test runs once the next one is known, or the shutdown
        busy = [w for w in workers if len(w.queue) >= 2 or (w.shutting_down and w.queue)]
        if not busy:
            break
        running = {w.gateway.id: collection[w.queue[0]] for w in busy}
        timely_running = any(needs_normal_cpu(n.split("::")[0]) for n in running.values())
        stalls += [(w.gateway.id, len(sched.workqueue)) for w in workers
                   if w not in busy and w.gateway.id != idle and not w.shutting_down
                   and sched.workqueue and not timely_running]
        for w in busy:  # one test each, in turn
            nodeid = collection[w.queue.pop(0)]
            ran[w.gateway.id].append(nodeid)
            timely_elsewhere = any(needs_normal_cpu(other.split("::")[0]) for name, other in running.items()
                                   if name != w.gateway.id)
            if w.gateway.id != idle and not needs_normal_cpu(nodeid.split("::")[0]) and timely_elsewhere:
                overlap.append(nodeid)
            sched.mark_test_complete(w, collection.index(nodeid))
    return collection, workers, ran, overlap, stalls, sched


def test_the_lane_rule_as_read_off_the_files() -> None:
    for path, timely in FILES.items():
        assert (TEST_ROOT.parent / path).is_file(), path
        unit = "heavy" if path.endswith("test_bringup_tf.py") else path
        assert needs_normal_cpu(unit) is timely, path
    assert needs_normal_cpu("test/core/no_such_file.py")  # unreadable: not on the idle lane
    for rel in LONG_FIRST:  # queued early for the idle lane: each exists and is CPU-only
        assert (TEST_ROOT / rel).is_file() and not needs_normal_cpu(f"test/{rel}"), rel


def test_the_idle_worker_takes_only_cpu_only_files_and_every_test_runs_once() -> None:
    collection, workers, ran, overlap, stalls, sched = _run("gw2")
    assert sorted(sum(ran.values(), [])) == sorted(collection)
    assert ran["gw2"] and all(not FILES[n.split("::")[0]] for n in ran["gw2"]), ran["gw2"]
    timely = [n for n in collection if FILES[n.split("::")[0]]]
    assert set(timely) <= set(ran["gw0"] + ran["gw1"])
    assert not overlap, overlap  # the normal lanes take CPU-only files once no timely one runs
    assert not stalls, stalls  # ... and do take them then (a held last test does not run)
    assert all(w.shutting_down for w in workers) and sched.tests_finished


def test_two_normal_lanes_ending_together_take_the_cpu_only_files_left() -> None:
    """Both normal lanes end their timely files at once, CPU-only ones still queued: each holds
    its last test (xdist runs it once the next is known), which runs nothing, so neither may
    wait for the other's (the code before: both waited until the idle lane ran the rest)."""
    collection, workers, ran, overlap, stalls, sched = _run("gw2", heavy=4)
    assert sorted(sum(ran.values(), [])) == sorted(collection)
    assert not stalls, stalls
    assert any(not FILES[n.split("::")[0]] for n in ran["gw0"] + ran["gw1"])  # they took some
    assert all(w.shutting_down for w in workers) and sched.tests_finished


@pytest.mark.parametrize("idle", ["gw2", ""])
def test_a_replacement_worker_still_collecting_is_given_nothing_and_loses_nothing(idle) -> None:
    """xdist replaces a crashed worker and calls ``schedule`` when any worker's collection ends:
    one still collecting has no collection to index (the code before: a KeyError, the run's
    INTERNALERROR, the unit it had popped lost); it gets work once its collection is in."""
    collection = [f"{path}::test_{k}" for path in FILES for k in range(3)]
    workers, sched = _started(collection, idle)
    late = Worker("gw3")
    sched.add_node(late)
    sched.schedule()  # another worker's collection ended: gw3 has none yet
    assert late.queue == []
    queued = sum(len(work) for work in sched.workqueue.values())
    sent = sum(len(w.queue) for w in workers)
    assert queued + sent == len(collection)  # every test still queued or sent, once
    sched.add_node_collection(late, collection)
    sched.schedule()
    assert queued + sent == sum(len(work) for work in sched.workqueue.values()) + sum(
        len(w.queue) for w in workers + [late])


def test_without_the_idle_lane_the_units_go_in_queue_order_to_any_worker() -> None:
    collection, workers, ran, _overlap, _stalls, sched = _run("")
    assert sorted(sum(ran.values(), [])) == sorted(collection)
    assert any(FILES[n.split("::")[0]] for n in ran["gw2"])  # gw2 is an ordinary worker then
    assert all(w.shutting_down for w in workers) and sched.tests_finished


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_enter_idle_lane_puts_the_process_under_sched_idle() -> None:
    code = ("import os, sys; sys.path.insert(0, sys.argv[1]); import xdist_lanes; "
            "print(xdist_lanes.enter_idle_lane()); print(os.sched_getscheduler(0) == os.SCHED_IDLE)")
    out = subprocess.run([sys.executable, "-c", code, str(TEST_ROOT / "support")],
                         capture_output=True, text=True, timeout=60, check=True).stdout.split("\n")
    assert out[:2] == ["idle lane: this worker runs under SCHED_IDLE", "True"], out
