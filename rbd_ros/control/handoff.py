"""Handing work to the control cycle without ever making it wait (issue 26).

The control cycle must not stall on anything a callback or a solver is doing.  Two pieces,
both ROS-free:

* ``Handoff``: a one-slot mailbox, the idea of ``realtime_tools::RealtimeBuffer``.  A producer
  builds its object outside the cycle and ``put``s it (holding the lock only for the
  assignment); the cycle ``take``s it with a *try*-lock: when the slot is empty or a producer
  is in the middle of its assignment, the cycle goes on with what it had and looks again next
  cycle.  A newer ``put`` replaces an item not yet taken; ``merge`` folds dicts together (gains
  changed twice between two cycles).
* ``LatestJob``: a daemon thread that runs ``fn(job)`` on the latest ``submit``ted job (one
  slot: a job not started yet is replaced by a newer one) — slow work such as inverse
  kinematics for ``~/target_pose``, whose result it hands to the cycle through a ``Handoff``.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Handoff:
    """One slot from producer threads to the control cycle (module docstring)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.item: Any = None

    def put(self, item: Any) -> None:
        """Replace the slot's content (blocks only for another producer's assignment)."""
        with self.lock:
            self.item = item

    def merge(self, entries: dict) -> None:
        """Add ``entries`` to the dict in the slot (a newer value of a key wins)."""
        with self.lock:
            self.item = {**(self.item or {}), **entries}

    def take(self) -> Any:
        """The slot's content, emptying it; None when empty or a producer holds the lock (the
        caller never waits).  Allocates nothing."""
        if self.item is None or not self.lock.acquire(blocking=False):
            return None
        item = self.item
        self.item = None
        self.lock.release()
        return item


class LatestJob:
    """A daemon thread running ``fn(job)`` for the latest submitted job (module docstring).
    ``on_error(exc)`` is called with anything ``fn`` raises (the thread goes on)."""

    def __init__(self, fn: Callable[[Any], None], name: str,
                 on_error: Callable[[BaseException], None] | None = None) -> None:
        self.fn = fn
        self.on_error = on_error
        self._cv = threading.Condition()
        self._job: Any = None
        self._closed = False
        self.busy = False  # a job is running
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, job: Any) -> None:
        with self._cv:
            self._job = job
            self._cv.notify()

    def idle(self) -> bool:
        """Nothing queued and nothing running."""
        with self._cv:
            return self._job is None and not self.busy

    def close(self, timeout: float = 1.0) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cv:
                while self._job is None and not self._closed:
                    self._cv.wait()
                if self._closed:
                    return
                job, self._job = self._job, None
                self.busy = True
            try:
                self.fn(job)
            except Exception as exc:  # noqa: BLE001 - reported; the worker must survive
                if self.on_error is not None:
                    self.on_error(exc)
            finally:
                with self._cv:
                    self.busy = False
