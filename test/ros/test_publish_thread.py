"""``rbd_ros.ros.publish_thread``: the composed loop's publishing thread.

A subscriber in the same context receives every message in order and intact (the bytes went
through ``rcl_publish_serialized_message`` by ctypes); with the publishing call held (a stand-in
that waits), a realtime queue drops exactly what exceeds its limit and counts it, a blocking
queue makes the producer wait instead and loses nothing; ``stop()`` publishes what is queued
and then lets the publisher be destroyed.
"""
from __future__ import annotations

import threading
import time

import pytest

from ros_helpers import ros_context, spin_in_background


@pytest.fixture
def peer():
    import rclpy
    from std_msgs.msg import Float64MultiArray

    with ros_context() as ctx:
        node = rclpy.create_node("publish_thread_test", context=ctx)
        got: list[list[float]] = []
        cv = threading.Condition()

        def on_msg(msg) -> None:
            with cv:
                got.append(list(msg.data))
                cv.notify_all()

        node.create_subscription(Float64MultiArray, "/pt_test", on_msg, 10_000)
        pub = node.create_publisher(Float64MultiArray, "/pt_test", 10_000)
        spinner = spin_in_background(node)
        try:
            yield node, pub, got, cv, Float64MultiArray
        finally:
            spinner.shutdown(timeout_sec=1.0)
            node.destroy_node()


def _wait(cv, predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    with cv:
        while not predicate():
            assert time.monotonic() < deadline, "timed out"
            cv.wait(0.05)


def _held(pt):
    """Replace the thread's publishing call by one that waits for ``release`` first."""
    release = threading.Event()
    real = pt._publish

    def held(pointer, msg, allocation):
        release.wait(10.0)
        return real(pointer, msg, allocation)

    pt._publish = held
    return release


def test_every_message_arrives_in_order_and_intact(peer) -> None:
    from rbd_ros.ros.publish_thread import PublishThread

    _, pub, got, cv, Msg = peer
    pt = PublishThread("pt_test")
    out = pt.wrap(pub)
    assert out.topic_name == "/pt_test"
    time.sleep(0.3)  # discovery within the context
    for k in range(500):
        out.publish(Msg(data=[float(k), k * 0.5, -1e300]))
    _wait(cv, lambda: len(got) == 500)
    pt.stop()
    assert got == [[float(k), k * 0.5, -1e300] for k in range(500)]
    assert pt.stats() == {"published": 500, "publish_dropped": 0, "publish_failed": 0,
                          "publish_queue_max": pt.max_depth}


def test_realtime_queue_drops_and_counts_what_exceeds_its_limit(peer) -> None:
    from rbd_ros.ros.publish_thread import PublishThread

    _, pub, got, cv, Msg = peer
    pt = PublishThread("pt_test", limit=10, block=False)
    release = _held(pt)
    out = pt.wrap(pub)
    time.sleep(0.3)
    out.publish(Msg(data=[0.0]))  # taken by the thread, which now waits in "publish"
    deadline = time.monotonic() + 5
    while pt.queue:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    for k in range(1, 26):  # 10 fit, 15 are dropped; the producer never waits
        t0 = time.monotonic()
        out.publish(Msg(data=[float(k)]))
        assert time.monotonic() - t0 < 0.5
    assert pt.dropped == 15 and len(pt.queue) == 10
    release.set()
    _wait(cv, lambda: len(got) == 11)
    pt.stop()
    assert got == [[float(k)] for k in range(11)]
    assert pt.stats()["publish_dropped"] == 15 and pt.published == 11


def test_blocking_queue_makes_the_producer_wait_and_loses_nothing(peer) -> None:
    from rbd_ros.ros.publish_thread import PublishThread

    _, pub, got, cv, Msg = peer
    pt = PublishThread("pt_test", limit=5, block=True)
    release = _held(pt)
    out = pt.wrap(pub)
    time.sleep(0.3)
    done = threading.Event()

    def produce() -> None:
        for k in range(40):
            out.publish(Msg(data=[float(k)]))
        done.set()

    producer = threading.Thread(target=produce)
    producer.start()
    time.sleep(0.3)
    assert not done.is_set() and len(pt.queue) == 5  # waiting for room
    release.set()
    producer.join(10.0)
    assert done.is_set()
    _wait(cv, lambda: len(got) == 40)
    pt.stop()
    assert got == [[float(k)] for k in range(40)] and pt.dropped == 0


def test_stop_publishes_what_is_queued_then_releases_the_publisher(peer) -> None:
    from rbd_ros.ros.publish_thread import PublishThread

    node, pub, got, cv, Msg = peer
    pt = PublishThread("pt_test")
    release = _held(pt)
    out = pt.wrap(pub)
    time.sleep(0.3)
    for k in range(20):
        out.publish(Msg(data=[float(k)]))
    release.set()
    pt.stop()
    assert pt.published == 20 and not pt.queue
    _wait(cv, lambda: len(got) == 20)
    node.destroy_publisher(pub)  # released: destroyed now, not deferred
    with pytest.raises(Exception):  # noqa: B017 - rclpy's "destroyed" error type varies
        with pub.handle:
            pass


def test_batched_producer_wakes_the_thread_once_per_flush(peer) -> None:
    """The stepping loop queues a step's messages and wakes the thread once, after the step
    (``flush``), so the thread does not take the GIL back in the middle of the step."""
    from rbd_ros.ros.publish_thread import PublishThread

    _, pub, got, cv, Msg = peer
    pt = PublishThread("pt_test")
    wakes: list[int] = []
    real_set = pt._wake.set
    pt._wake.set = lambda: (wakes.append(1), real_set())
    out = pt.wrap(pub)
    time.sleep(0.3)
    for k in range(3):  # unbatched: a wake per message
        out.publish(Msg(data=[float(k)]))
    assert len(wakes) == 3
    _wait(cv, lambda: len(got) == 3)
    pt.batched = True
    for k in range(3, 7):
        out.publish(Msg(data=[float(k)]))
    assert len(wakes) == 3  # queued, nobody woken
    pt.flush()
    assert len(wakes) == 4
    _wait(cv, lambda: len(got) == 7)
    pt.flush()  # nothing queued: no wake
    assert len(wakes) == 4
    pt.stop()
    assert got == [[float(k)] for k in range(7)]
