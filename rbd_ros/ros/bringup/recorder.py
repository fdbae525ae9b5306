"""A rosbag2 recording of serialized ROS 2 messages, written with ``rosbags`` (readable by
the standard rosbag2 tools: ``ros2 bag info``, ``ros2 bag play``)."""
from __future__ import annotations

import array
import queue
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.rosbag2 import Reader, Writer
from rosbags.typesys import Stores, get_typestore

#: seconds between commits of the messages written so far (what an abrupt end can lose)
COMMIT_PERIOD = 0.5


class BagRecorder:
    """``rec = BagRecorder(dir, {"/joint_states": "sensor_msgs/msg/JointState"})``; then
    ``rec.write(topic, stamp_ns, cdr_bytes)`` from any thread, and ``rec.close()``.

    Written as it goes: a writer thread of its own (the SQLite storage may only be used from
    the thread that opened it) takes the messages from a queue, in arrival order, and commits
    every ``COMMIT_PERIOD`` s, so an interrupted run keeps what it recorded: ``close`` (also on
    a signal, see ``bringup.cli``) writes ``metadata.yaml``, and even without it (SIGKILL) the
    committed messages are in ``bag/bag.db3`` (``ros2 bag reindex`` rebuilds the metadata).
    The bag is opened here, so an unwritable place fails before anything starts.
    """

    def __init__(self, path: str | Path, topics: dict[str, str]) -> None:
        self.path = Path(path)
        if self.path.exists():
            raise FileExistsError(f"bag directory {self.path} exists already")
        self.topics = dict(topics)
        self.counts = dict.fromkeys(topics, 0)
        self.stamps: dict[str, list[int]] = {t: [] for t in topics}  # ns, as written (losses)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._open = True
        self._error: BaseException | None = None
        opened = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(opened,), name="bag_writer",
                                        daemon=True)
        self._thread.start()
        opened.wait()
        if self._error is not None:
            self._thread.join()
            raise OSError(f"cannot write the bag {self.path}: {self._error}") from self._error

    def _run(self, opened: threading.Event) -> None:


        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            writer = Writer(self.path, version=9)
            writer.open()
            store = get_typestore(Stores.ROS2_KILTED)
            conns = {topic: writer.add_connection(topic, msgtype, typestore=store)
                     for topic, msgtype in self.topics.items()}
        except Exception as exc:  # noqa: BLE001 - reported by the constructor
            self._error = exc
            opened.set()
            return
        opened.set()
        commit = getattr(getattr(writer.storage, "conn", None), "commit", lambda: None)
        last = time.monotonic()
        try:
            while True:
                try:
                    item = self._queue.get(timeout=COMMIT_PERIOD)
                except queue.Empty:
                    item = ()
                if item is None:
                    break
                if item:
                    writer.write(conns[item[0]], item[1], item[2])
                if time.monotonic() - last >= COMMIT_PERIOD:
                    commit()
                    last = time.monotonic()
        finally:
            writer.close()

    def write(self, topic: str, stamp_ns: int, data: bytes) -> None:
        if topic not in self.topics:
            raise KeyError(f"topic {topic} was not declared to the recorder")
        with self._lock:
            if self._open:
                self._queue.put((topic, int(stamp_ns), bytes(data)))
                self.counts[topic] += 1
                self.stamps[topic].append(int(stamp_ns))

    def losses(self, periods: dict[str, float | None]) -> dict[str, dict]:
        """For each periodic topic of ``periods`` (``{topic: period s}``, None: the median
        spacing of its stamps), the samples written against those its stamps say were sent
        (``stamp_losses``): ``{topic: {"received", "expected", "lost", "period_s"}}``."""
        with self._lock:
            stamps = {t: list(self.stamps[t]) for t in periods if t in self.stamps}
        return {t: stamp_losses(v, periods[t]) for t, v in stamps.items()}

    def last_stamp(self, topic: str) -> int | None:
        """The stamp (ns) of the latest sample of ``topic`` written, None before the first."""
        with self._lock:
            stamps = self.stamps[topic]
            return stamps[-1] if stamps else None

    def write_message(self, topic: str, stamp_ns: int, msg: object) -> None:
        """Record an rclpy message object (serialized with rosbags, see ``cdr``)."""
        self.write(topic, stamp_ns, cdr(msg))

    def close(self) -> None:
        """Write what is queued, then ``metadata.yaml``; waits for the writer thread."""
        with self._lock:
            if not self._open:
                return
            self._open = False
            self._queue.put(None)
        self._thread.join()


def stamp_losses(stamps_ns, period_s: float | None = None) -> dict:
    """How many samples of a periodic stream are missing, from its stamps (ns): the distinct
    stamps ``received``, ``expected = round((last - first) / period) + 1`` (``period`` s: the
    stream's, else the median spacing of the stamps) and ``lost = expected - received``.  What
    went missing before the first or after the last stamp is not seen."""

    t = np.unique(np.asarray(list(stamps_ns), dtype=np.int64))
    out = {"received": int(t.size), "expected": int(t.size), "lost": 0, "period_s": period_s}
    if t.size < 2:
        return out
    period_ns = float(period_s) * 1e9 if period_s else float(np.median(np.diff(t)))
    if not period_ns > 0:
        return out
    expected = int(round((t[-1] - t[0]) / period_ns)) + 1
    out.update(expected=max(expected, int(t.size)), lost=max(expected - int(t.size), 0),
               period_s=period_ns * 1e-9)
    return out


def _typestore():

    return get_typestore(Stores.ROS2_KILTED)


def to_rosbags(msg: Any, store=None) -> Any:
    """The rosbags twin of an rclpy message (recursively, by its field list)."""


    store = store or _typestore()
    cls = type(msg)
    typename = f"{cls.__module__.split('.')[0]}/msg/{cls.__name__}"
    kwargs = {}
    for field in msg.get_fields_and_field_types():
        value = getattr(msg, field)
        if hasattr(value, "get_fields_and_field_types"):
            value = to_rosbags(value, store)
        elif isinstance(value, list) and value and hasattr(value[0], "get_fields_and_field_types"):
            value = [to_rosbags(v, store) for v in value]
        elif isinstance(value, array.array):
            value = np.array(value)
        kwargs[field] = value
    return store.types[typename](**kwargs)


def cdr(msg: Any) -> bytes:
    """CDR bytes of an rclpy message, serialized by rosbags. rclpy's own buffers of nested
    messages (``trajectory_msgs/JointTrajectory``) carry trailing bytes that rosbags'
    strict reader refuses; these are exact."""
    store = _typestore()
    ros = to_rosbags(msg, store)
    return bytes(store.serialize_cdr(ros, ros.__msgtype__))


def read_bag(path: str | Path) -> dict[str, list[tuple[int, object]]]:
    """Every message of a bag, deserialized: ``{topic: [(timestamp_ns, msg), ...]}``."""

    store = get_typestore(Stores.ROS2_KILTED)
    out: dict[str, list[tuple[int, object]]] = {}
    with Reader(Path(path)) as reader:
        for conn, stamp, raw in reader.messages():
            out.setdefault(conn.topic, []).append((stamp, store.deserialize_cdr(raw, conn.msgtype)))
    return out
