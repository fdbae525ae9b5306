"""The start of a bringup's recording (``Inbox.start_recording``, ``FTRecorder.begin``): the
state the bridge paused at and its F/T readings arrived before the recording began; a paused
lockstep bridge repeats them at 10 Hz, but the task may resume it before the next repeat, and
of a pair of topics published together one repeat can fall before the recording's start and
the other after (a press run's bag held the paused state's ``/ft_sensor/wrench`` and not its
``wrench_raw``: 6599 against 6600 readings).  Each is written once, whatever comes when.

ROS-free: serialized messages made by hand (a CDR header), a recorder that keeps what it is
given."""
from __future__ import annotations

import struct
import threading
from types import SimpleNamespace

from rbd_ros.ros.bringup.inbox import STATES, Inbox
from rbd_ros.ros.bringup.record_ft import FTRecorder
from rbd_ros.ros.bringup.runner import Runner
from rbd_ros.ros.contact_topics import FT_RAW, FT_WRENCH


def _raw(t_ns: int) -> bytes:
    return b"\x00\x01\x00\x00" + struct.pack("<iI", t_ns // 1_000_000_000, t_ns % 1_000_000_000) + b"\x00" * 8


class Bag:
    def __init__(self) -> None:
        self.topics = {STATES: "", FT_RAW: "", FT_WRENCH: ""}
        self.rows: list[tuple[str, int]] = []
        self.lock = threading.Lock()

    def write(self, topic: str, stamp: int, raw: bytes) -> None:
        with self.lock:
            self.rows.append((topic, stamp))

    def write_message(self, topic: str, stamp: int, msg: object) -> None:
        self.rows.append((topic, stamp))


def _runner() -> Runner:
    r = Runner.__new__(Runner)  # the inbox's state only: no plan, no processes
    Inbox.__init__(r, SimpleNamespace(record="x"))
    r.recorder, r.latched = Bag(), {}
    r.ft = FTRecorder(r, {FT_RAW: "", FT_WRENCH: ""})
    return r


def test_the_paused_state_and_its_readings_are_recorded_once_when_no_repeat_follows() -> None:
    r = _runner()
    pause = 47_000_000
    for t in (46_000_000, pause):  # before the recording: received, not written
        r.on_state(_raw(t))
        r.ft.on_reading(FT_RAW, _raw(t))
        r.ft.on_reading(FT_WRENCH, _raw(t))
    assert r.recorder.rows == []
    r.start_recording(pause * 1e-9)
    rows = sorted(r.recorder.rows)
    assert rows == sorted([(STATES, pause), (FT_RAW, pause), (FT_WRENCH, pause)]), rows
    # the repeats that come after (still paused), then the next step's: no second copy
    r.on_state(_raw(pause))
    r.ft.on_reading(FT_WRENCH, _raw(pause))
    r.on_state(_raw(pause + 1_000_000))
    r.ft.on_reading(FT_RAW, _raw(pause + 1_000_000))
    r.ft.on_reading(FT_WRENCH, _raw(pause + 1_000_000))
    for topic in (STATES, FT_RAW, FT_WRENCH):
        assert [s for k, s in r.recorder.rows if k == topic] == [pause, pause + 1_000_000], topic


def _repeats(r: Runner, go: threading.Event, stamp: int) -> None:
    go.wait()
    for _ in range(3):
        r.on_state(_raw(stamp))
        r.ft.on_reading(FT_RAW, _raw(stamp))


def test_a_repeat_racing_the_start_is_written_once() -> None:
    """The executor's callbacks (repeats of the paused state's readings) beside the start on
    another thread, many times: each stamp in the bag once."""
    for _ in range(200):
        r = _runner()
        pause = 47_000_000
        r.on_state(_raw(pause))
        r.ft.on_reading(FT_RAW, _raw(pause))
        go = threading.Event()

        thread = threading.Thread(target=_repeats, args=(r, go, pause))
        thread.start()
        go.set()
        r.start_recording(pause * 1e-9)
        thread.join()
        assert sorted(r.recorder.rows) == sorted([(STATES, pause), (FT_RAW, pause)])


def test_readings_from_before_the_pause_that_arrive_late_are_not_recorded() -> None:
    """One subscription's queue lags another's: the states up to the pause have arrived, the
    F/T readings only up to 60 ms before it (a press run's bag in CI began its F/T topics 60
    readings before its first state).  Those that arrive after the start are older than the
    paused state: not in the bag; from the pause on, one reading per state."""
    r = _runner()
    pause = 165_000_000
    for t in range(100_000_000, pause + 1, 1_000_000):
        r.on_state(_raw(t))
        if t <= 104_000_000:
            r.ft.on_reading(FT_RAW, _raw(t))
    r.start_recording(pause * 1e-9)
    for t in range(105_000_000, pause + 3_000_001, 1_000_000):  # the F/T queue catches up
        r.ft.on_reading(FT_RAW, _raw(t))
        if t > pause:
            r.on_state(_raw(t))
    states = [s for k, s in r.recorder.rows if k == STATES]
    ft = [s for k, s in r.recorder.rows if k == FT_RAW]
    assert states == ft == list(range(pause, pause + 3_000_001, 1_000_000))
