"""The suite's xdist work units and lanes (``make test``: ``-n 3 --idle-lane``; issue 39).

Units: one per test file (its module fixtures start once), the ``HEAVY`` closed loops one unit
together, sent first (test/conftest.py).

Lanes, with ``--idle-lane``: the last worker runs under ``SCHED_IDLE`` (Linux: it gets a CPU only
when no normal task wants one, and a normal task that wakes takes the CPU at once) and takes only
the files that need no timely CPU: no ROS process, no wall-clock bound (``needs_normal_cpu``).
The other workers take the ROS files and the timed ones first, and the rest when none is left.

Why (measured on the 2-core machine, issue 39): the FollowJointTrajectory MoveIt-like test, a
lockstep closed loop through three processes, took 15.7 s alone, **105.8 s** beside two busy
loops at normal priority, 68.7 s beside them at nice 19 and **15.7 s** beside them under
SCHED_IDLE.  The lockstep simulation keeps its rate; the test's client (a 1 kHz recorder, waits on
results) falls behind while each of its wake-ups waits for the CPU, so the test needs more
simulated time.  The ROS-free CPU-bound files (numba compilation of the formulations, Pinocchio
and MuJoCo sweeps, identification) are the load that delayed those wake-ups; on the idle lane they
run in the CPU time the closed loops leave.

``SCHED_IDLE`` is one-way for an unprivileged process, so a worker is put there once, for good,
and nothing that needs the CPU on time may run on it: a ROS file on the idle lane would be
starved by the normal lanes' loops.
"""
from __future__ import annotations

import functools
import os
import re
from pathlib import Path

TEST_ROOT = Path(__file__).resolve().parent.parent

#: the long recorded closed loops (bringups, FollowJointTrajectory through the nodes): under
#: ``make test`` (``--dist loadgroup``) they run one after another on one worker, first, while
#: the other workers take every other file; two of them at once on 2 cores starve each other's
#: recorder, whose reliable subscriptions then throttle the lockstep loop (a mobile bringup that
#: takes 43 s alone passed 600 s beside another)
HEAVY = ("ros/bringup/test_bringup_twist_profile.py", "ros/bringup/test_bringup_tf.py",
         "ros/bringup/test_press_nodes.py", "ros/bringup/test_bringup_mobile.py",
         "ros/bringup/test_bringup_mobile_page.py", "ros/bringup/test_bringup_mismatch.py",
         "ros/test_follow_joint_trajectory_action.py",
         # short, but counting every message of a 1 kHz lockstep loop: not beside a heavy one
         "ros/test_composed.py", "ros/test_robot_params.py", "ros/test_mobile_bridge_node.py")

#: the longest CPU-only files, queued right after the heavy unit (conftest's collection order)
#: so that the idle lane starts them early: at the suite's end the normal lanes take the
#: CPU-only files left and, at normal priority, starve the idle lane's last file, so a long one
#: there ends the run late (seconds of test time in a 2-worker run, and on the idle lane beside
#: the ROS files: the Sphinx build 72 / 106 s, identification from a recording 36 / 49 s, the
#: two sweep files 38 / 47 s with their process pools and a local Ray)
LONG_FIRST = ("project/test_docs.py", "identification/test_identify_recording.py",
              "sweep/test_sweep_issue38.py", "sweep/test_sweep.py")

#: what in a test file's text puts it on a normal lane: the ``ros`` and ``realtime`` marks
#: (setup.cfg) and rclpy (``pytest_collection_modifyitems`` checks that every test so marked
#: is in a file this finds)
NORMAL_CPU = re.compile(r"mark\.(ros|realtime)\b|\brclpy\b")


def relative(nodeid: str) -> str:
    """A node id's file, relative to ``test/``."""
    path = nodeid.split("::", 1)[0]
    return path.split("test/", 1)[1] if path.startswith("test/") else path


def xdist_unit(nodeid: str) -> str:
    """The xdist work unit of a test: its file (module fixtures start once), the ``HEAVY``
    files one unit together."""
    return "heavy" if relative(nodeid) in HEAVY else nodeid.split("::", 1)[0]


@functools.lru_cache(maxsize=None)
def needs_normal_cpu(unit: str) -> bool:
    """Whether a work unit needs the CPU on time: the heavy unit, a file under ``ros/``, a file
    that names a ``ros`` or ``realtime`` mark or rclpy, and one that cannot be read."""
    if unit == "heavy" or relative(unit).startswith("ros/"):
        return True
    try:
        text = (TEST_ROOT / relative(unit)).read_text(encoding="utf-8")
    except OSError:
        return True
    return bool(NORMAL_CPU.search(text))


def idle_worker(count: int) -> str:
    """The idle lane's worker id among ``count`` workers (the last; none below 2)."""
    return f"gw{count - 1}" if count >= 2 else ""


def enter_idle_lane() -> str:
    """Put this process (and what it starts later: threads, numba's pool, subprocesses) under
    ``SCHED_IDLE``; returns what happened, for the session header."""
    if not hasattr(os, "SCHED_IDLE"):
        return "idle lane: SCHED_IDLE is not available here (not Linux); runs at normal priority"
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except OSError as exc:
        return f"idle lane: SCHED_IDLE refused ({exc}); runs at normal priority"
    return "idle lane: this worker runs under SCHED_IDLE"


def lane_scheduler(base: type) -> type:
    """A scheduler class over ``base`` (xdist's ``LoadScopeScheduling``) with the file units and,
    when its ``idle`` worker id is set, the lanes (module docstring)."""

    class FileUnits(base):  # type: ignore[misc, valid-type]
        idle = ""

        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid)

        def _pick(self, node) -> str | None:
            """The next unit for ``node``: on the idle lane the first that needs no timely CPU;
            elsewhere the first that does, else (none left queued or running on the normal
            lanes) the first of the rest."""
            if not self.idle:
                return next(iter(self.workqueue), None)
            if node.gateway.id == self.idle:
                return next((u for u in self.workqueue if not needs_normal_cpu(u)), None)
            timely = next((u for u in self.workqueue if needs_normal_cpu(u)), None)
            if timely is not None:
                return timely
            running = (self._running_unit(other) for other in self.assigned_work if other is not node)
            if any(unit is not None and needs_normal_cpu(unit) for unit in running):
                return None
            return next(iter(self.workqueue), None)

        def _running_unit(self, node) -> str | None:
            """The unit of the test ``node`` runs now, if any.  An xdist worker runs a test only
            once it knows the next one (``nextitem``, for teardown) or its shutdown: with one test
            left it waits, and that test's unit does not run.  (Counting that held test as
            running, two normal lanes each waited on the other's last test, idle, until the idle
            lane had run every CPU-only file alone: 243 s of a 4-worker run.)"""
            assigned = self.assigned_work.get(node, {})
            if node.shutting_down or self._pending_of(assigned) >= 2:
                return next((unit for unit, work in assigned.items() if not all(work.values())), None)
            return None

        def _assign_work_unit(self, node) -> None:
            if node not in self.registered_collections:
                # a replacement for a crashed worker, still collecting: it is given work when
                # its collection ends (xdist's own loadscope pops a unit and then fails here
                # with a KeyError: an INTERNALERROR that ended a run whose workers were killed)
                return
            scope = self._pick(node)
            if scope is None:
                if not self._pending_of(self.assigned_work[node]) and not self._could_take(node):
                    node.shutdown()
                return
            work_unit = self.workqueue.pop(scope)
            self.assigned_work.setdefault(node, {})[scope] = work_unit
            collection = self.registered_collections[node]
            node.send_runtest_some([collection.index(nodeid) for nodeid, done in work_unit.items() if not done])

        def _could_take(self, node) -> bool:
            """Whether a queued unit may still go to ``node`` later (a normal lane waits for the
            timely units running elsewhere to end before it takes the rest)."""
            if node.gateway.id == self.idle:
                return any(not needs_normal_cpu(u) for u in self.workqueue)
            return bool(self.workqueue)

        def mark_test_complete(self, node, item_index: int, duration: float = 0) -> None:
            super().mark_test_complete(node, item_index, duration)
            if self.idle:  # a lane that waited may take a unit now
                for other in list(self.assigned_work):
                    if other is not node and not other.shutting_down:
                        self._reschedule(other)

        def schedule(self) -> None:
            if self.collection is not None or not self.idle:
                super().schedule()
                return
            # the base's first distribution assigns a unit to every node (asserting one is
            # queued): here each node picks its own
            if not self._check_nodes_have_same_collection():
                self.log("**Different tests collected, aborting run**")
                return
            self.collection = list(next(iter(self.registered_collections.values())))
            for nodeid in self.collection:
                self.workqueue.setdefault(self._split_scope(nodeid), {})[nodeid] = False
            for node in self.nodes:
                self._reschedule(node)
            for node in self.nodes:
                self._reschedule(node)

    return FileUnits
