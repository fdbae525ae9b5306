"""Publishing off a stepping thread: what ``realtime_tools::RealtimePublisher`` does in C++.

rclpy's ``Publisher.publish()`` calls ``rcl_publish`` with the GIL held.  With subscribers in
other processes (a recorder, the ``/clock`` readers) a publish sometimes waits 2-3 ms inside
the middleware, and a 1 kHz loop that publishes four topics per step waits with it (measured:
``CHANGELOG.rst``, "Benchmark history", "Where the misses come from").  Here the stepping thread only serializes
the message (``rclpy.serialization``, a few us, no middleware lock) and appends the bytes to a
bounded queue; a thread of its own hands them to ``rcl_publish_serialized_message`` through
ctypes, which releases the GIL for the call, so a publish that waits holds neither the loop nor
the interpreter.  Order is kept (one FIFO for every topic).

Bounded: at most ``limit`` messages wait.  When the queue is full, ``block=True`` (lockstep:
no wall clock, nothing may be lost) makes the producer wait for room; otherwise (realtime: the
loop must not wait) the message is dropped and counted in ``dropped``, which the owner reports.
``batched=True``: ``put`` only queues and the producer wakes the thread with ``flush()`` once per
step, after it, so the thread does not take the GIL back in the middle of the step (it also
wakes on its own every 50 ms).  ``stop()`` publishes what is queued (up to a timeout), then
releases the publishers; call it before their node is destroyed.
"""
from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from typing import Any


class _Allocator(ctypes.Structure):  # rcutils_allocator_t
    _fields_ = [(name, ctypes.c_void_p)
                for name in ("allocate", "deallocate", "reallocate", "zero_allocate", "state")]


class _Serialized(ctypes.Structure):  # rcl_serialized_message_t = rcutils_uint8_array_t
    _fields_ = [("buffer", ctypes.c_void_p), ("buffer_length", ctypes.c_size_t),
                ("buffer_capacity", ctypes.c_size_t), ("allocator", _Allocator)]


def _rcl_publish_serialized():
    """``rcl_publish_serialized_message`` of the librcl rclpy already loaded (ctypes.CDLL:
    the GIL is released during each call)."""
    fn = ctypes.CDLL("librcl.so").rcl_publish_serialized_message
    fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Serialized), ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


class OffloadedPublisher:
    """Stands in for an rclpy ``Publisher`` (``publish``, ``get_subscription_count``,
    ``topic_name``); ``publish(msg)`` serializes and queues."""

    def __init__(self, owner: PublishThread, publisher) -> None:
        self._owner, self._publisher = owner, publisher
        self._pointer = publisher.handle.pointer  # rcl_publisher_t *
        self.topic_name = publisher.topic_name

    def publish(self, msg) -> None:
        self._owner.put(self._pointer, self._owner.serialize(msg))

    def get_subscription_count(self) -> int:
        return self._publisher.get_subscription_count()


class PublishThread:
    """One publishing thread for the publishers ``wrap``ped into it."""

    def __init__(self, name: str, limit: int = 8192, block: bool = False,
                 batched: bool = False) -> None:
        from rclpy.serialization import serialize_message

        self.serialize = serialize_message
        self.limit, self.block = int(limit), bool(block)
        self.queue: deque[tuple[int, bytes]] = deque()
        self.queued = self.published = self.dropped = self.failed = self.max_depth = 0
        self._publish = _rcl_publish_serialized()
        self._wake = threading.Event()
        self._running = True
        self.batched = bool(batched)  # True: the producer calls flush() after each step
        self._handles: list[Any] = []  # entered: rclpy defers their destruction until stop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def wrap(self, publisher) -> OffloadedPublisher:
        publisher.handle.__enter__()
        self._handles.append(publisher.handle)
        return OffloadedPublisher(self, publisher)

    def put(self, pointer: int, data: bytes) -> None:
        """Queue one serialized message (the producer's side: never blocks unless ``block``)."""
        q = self.queue
        if len(q) >= self.limit:
            if not self.block:
                self.dropped += 1
                return
            while len(q) >= self.limit and self._running:
                self._wake.set()
                time.sleep(0.0002)
        q.append((pointer, data))
        self.queued += 1
        if len(q) > self.max_depth:
            self.max_depth = len(q)
        if not self.batched:
            self._wake.set()

    def flush(self) -> None:
        """Wake the thread for what is queued (``batched``: once per step, after the step)."""
        if self.queue:
            self._wake.set()

    def _run(self) -> None:
        msg = _Serialized()
        q, wake = self.queue, self._wake
        while True:
            wake.wait(0.05)
            wake.clear()
            while q:
                pointer, data = q.popleft()
                buf = ctypes.c_char_p(data)  # points into ``data``, alive for the call
                msg.buffer = ctypes.cast(buf, ctypes.c_void_p)
                msg.buffer_length = msg.buffer_capacity = len(data)
                if self._publish(pointer, ctypes.byref(msg), None) == 0:
                    self.published += 1
                else:
                    self.failed += 1
            if not self._running:
                return

    def stats(self) -> dict[str, int]:
        return {"published": self.published, "publish_dropped": self.dropped,
                "publish_failed": self.failed, "publish_queue_max": self.max_depth}

    def stop(self, timeout: float = 2.0) -> None:
        """Publish what is queued (at most ``timeout`` s), stop, release the publishers."""
        self._running = False
        self._wake.set()
        self._thread.join(timeout)
        if self._thread.is_alive():  # stuck in the middleware: keep the handles (no use after free)
            return
        for handle in self._handles:
            handle.__exit__(None, None, None)
        self._handles.clear()
