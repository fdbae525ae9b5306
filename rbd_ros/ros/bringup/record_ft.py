"""The bridge's F/T topics in a bringup run's recording (issue 41): with ``--record DIR`` any
task (tour, excitation, press) writes ``/ft_sensor/wrench_raw``, ``/ft_sensor/wrench`` and,
with the bridge's ``ft_payload``, ``/ft_sensor/wrench_compensated`` into ``DIR/bag`` as the
other recorded topics (serialized as received, stamped with their header stamp: the bridge
stamps each reading with the state it belongs to, one per ``/joint_states``), so that
``rbd-ros identify --payload DIR`` reads a bringup recording directly.

The bridge has an F/T sensor with its ``ft_sensor`` parameter or a ``scene``
(``rbd_ros.ros.contact_topics``); ``ft_topics`` reads that from the run's node parameters.
A paused lockstep bridge repeats its last state (and reading) at 10 Hz: each stamp is written
once, up to the run's last recorded state (``Inbox.record_until``).  A task that needs a
topic's readings itself (the press task's report) registers a listener (``FTRecorder.listen``)
instead of subscribing a second time.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from rbd_ros.ros.common import recordable_qos
from rbd_ros.ros.contact_topics import FT_COMPENSATED, FT_RAW, FT_WRENCH
from rbd_ros.ros.messages import header_stamp_ns

WRENCH_TYPE = "geometry_msgs/msg/WrenchStamped"


def _on(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes", "on")


def ft_topics(specs: list) -> dict[str, str]:
    """The F/T topics the run's bridge publishes (``{topic: type}``), from its parameters
    (``NodeSpec`` named ``mujoco_bridge``): none without ``ft_sensor`` or a ``scene``; the
    compensated one with ``ft_payload``."""
    bridge = next((s.parameters for s in specs if s.name == "mujoco_bridge"), None)
    if bridge is None or not (_on(bridge.get("ft_sensor", False)) or str(bridge.get("scene") or "")):
        return {}
    out = {FT_RAW: WRENCH_TYPE, FT_WRENCH: WRENCH_TYPE}
    if str(bridge.get("ft_payload") or ""):
        out[FT_COMPENSATED] = WRENCH_TYPE
    return out


class FTRecorder:
    """Subscribes the F/T ``topics`` on the bringup's node and writes them into the run's bag
    while it records (``inbox``: the runner, its ``recorder``, ``recording`` and
    ``record_until``); ``received`` counts the distinct stamps of each topic seen, recording or
    not."""

    def __init__(self, inbox: Any, topics: dict[str, str]) -> None:
        self.inbox, self.topics = inbox, dict(topics)
        self.received = dict.fromkeys(self.topics, 0)
        #: the latest new reading (stamp, raw) of each topic, and the last stamp written
        self._latest: dict[str, tuple[int, bytes]] = dict.fromkeys(self.topics, (-1, b""))
        self._written = dict.fromkeys(self.topics, -1)
        self._lock = threading.Lock()  # a write decided once: the executor's callback or ``begin``
        self._listeners: dict[str, list[Callable[[int, bytes], None]]] = {}
        self._subscriptions: dict[str, Any] = {}

    def listen(self, topic: str, callback: Callable[[int, bytes], None]) -> None:
        """``callback(stamp_ns, raw)`` for each new reading of ``topic`` (subscribed even when
        nothing is recorded)."""
        self.topics.setdefault(topic, WRENCH_TYPE)
        self.received.setdefault(topic, 0)
        self._latest.setdefault(topic, (-1, b""))
        self._written.setdefault(topic, -1)
        self._listeners.setdefault(topic, []).append(callback)

    def connect(self, node: Any) -> None:
        """The subscriptions (reliable, deep: none lost while this process lags the loop)."""
        from geometry_msgs.msg import WrenchStamped


        recording = self.inbox.recorder is not None
        for topic in self.topics:
            if recording or topic in self._listeners:
                self._subscriptions[topic] = node.create_subscription(
                    WrenchStamped, topic, lambda raw, topic=topic: self.on_reading(topic, raw),
                    recordable_qos(), raw=True)

    def waiting(self) -> list[str]:
        """The subscribed topics with no reading yet (the runner waits for none before the
        recording starts: a subscription matched late missed the stream's first readings,
        0.3 s of a lockstep tour in CI, which the losses counted from the stamps cannot see)."""
        return [t for t in self._subscriptions if self.received[t] == 0]

    def on_reading(self, topic: str, raw: bytes) -> None:
        stamp = header_stamp_ns(raw)
        if stamp > self._latest[topic][0]:  # not a paused bridge's repeat
            self._latest[topic] = (stamp, raw)
            self.received[topic] += 1
            for callback in self._listeners.get(topic, ()):
                callback(stamp, raw)
        if self.inbox.recording:
            self._write(topic, stamp, raw)

    def _write(self, topic: str, stamp: int, raw: bytes) -> None:
        """A reading into the bag once (a paused bridge repeats it), stamped from the paused
        state on up to ``record_until`` (``Inbox.in_window``: a lagging queue delivers readings
        from before the pause after the recording started)."""
        inbox = self.inbox
        with self._lock:
            if stamp > self._written[topic] and topic in inbox.recorder.topics and inbox.in_window(stamp):
                self._written[topic] = stamp
                inbox.recorder.write(topic, stamp, raw)

    def begin(self) -> None:
        """The recording has started (``Inbox.start_recording``): each topic's latest reading,
        the paused state's, into the bag; its 10 Hz repeat may come only after the bridge has
        resumed, or, for one topic of a pair published together, just before the recording
        started (a press run's bag had the paused state's ``/ft_sensor/wrench`` and not its
        ``wrench_raw``)."""
        if self.inbox.recorder is None:
            return
        for topic, (stamp, raw) in list(self._latest.items()):
            self._write(topic, stamp, raw)  # none yet (stamp -1): not written

    def recorded(self) -> dict[str, None]:
        """The recorded F/T topics, for ``BagRecorder.losses`` (periods from their stamps)."""
        rec = self.inbox.recorder
        return {t: None for t in self.topics if rec is not None and t in rec.topics}
