"""The runner's wait for the nodes to connect (``connect.wait_until_connected``): each stage
that does not end in time is an error naming what did not arrive, and a node that exits while
it waits is named at once.  Fakes stand in for the ROS graph and the node processes (no ROS),
so each case takes a fraction of a second."""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from rbd_ros.ros.bringup import connect
from rbd_ros.ros.bringup.runner import Runner


class FakeProc:
    def __init__(self, lines, returncode=None):
        self.output = "\n".join(lines)
        self.proc = SimpleNamespace(returncode=returncode)
        self.lines = lines

    def alive(self):
        return self.proc.returncode is None

    def wait(self, timeout=None, drain=5.0):  # NodeProcess.wait of an exited process
        assert self.proc.returncode is not None
        return self.proc.returncode


class FakeGraph:
    """This process's view: publishers per topic, and the two publishers' matched counts."""

    def __init__(self, publishers, matched=1):
        self.publishers = publishers
        self.matched = matched

    def count_publishers(self, topic):
        return self.publishers.get(topic, 0)


class FakePub:
    def __init__(self, topic, graph):
        self.topic_name, self.graph = topic, graph

    def get_subscription_count(self):
        return self.graph.matched


def runner(mobile=False, state_publisher=False, controller_state=False, procs=None):
    r = Runner.__new__(Runner)
    r.args = SimpleNamespace(composed=False)
    r.lock = threading.Lock()
    r.mobile = mobile
    r.specs = [SimpleNamespace(name="mujoco_bridge", executable="mujoco_bridge"),
               SimpleNamespace(name="controller", executable="controller")]
    r.procs = procs or [FakeProc(["mujoco_bridge: ready"]),
                        FakeProc(["controller: ready", "controller: waiting"])]
    if state_publisher:
        r.specs.append(SimpleNamespace(name="state_publisher", executable="state_publisher"))
        r.procs.append(FakeProc(["state_publisher: ready"]))
    r.last_state = (0.0, b"")
    r.controller_state = [(0.0, b"")] if controller_state else []
    r.command_topic = "/effort_controller/commands"
    r.ft = None
    r.tf_seen, r.latched = False, {}
    return r


def graph(**extra):
    return FakeGraph({"/effort_controller/commands": 1, "/controller/controller_state": 1,
                      "/joint_states": 1, **extra})


def test_a_mobile_controller_without_odometry_is_named_not_left_to_stall():
    g = graph()
    r = runner(mobile=True)
    with pytest.raises(RuntimeError) as err:
        connect.wait_until_connected(r, g, FakePub("/controller/joint_trajectory", g),
                               FakePub("/controller/base_path", g), 0.3)
    msg = str(err.value)
    assert "published no /controller/controller_state" in msg
    assert "/joint_states and /odom" in msg and "/odom 0" in msg and "/joint_states 1" in msg
    assert "controller: waiting" in msg  # what the controller said last


def test_unmatched_topics_are_named():
    g = graph()
    g.publishers.pop("/effort_controller/commands")
    g.matched = 0
    with pytest.raises(RuntimeError, match=r"no subscriber of /controller/joint_trajectory; "
                                           r"no publisher of /effort_controller/commands"):
        connect.wait_until_connected(runner(), g, FakePub("/controller/joint_trajectory", g), None, 0.3)


def test_no_states_names_the_bridge():
    g = graph()
    r = runner()
    r.last_state = None
    with pytest.raises(RuntimeError, match=r"no /joint_states from the bridge.*mujoco_bridge's last lines"):
        connect.wait_until_connected(r, g, FakePub("/t", g), None, 0.3)


def test_missing_frames_are_named_and_a_connected_run_returns():
    g = graph()
    r = runner(controller_state=True, state_publisher=True)
    r.latched = {"/robot_description": object()}
    with pytest.raises(RuntimeError, match=r"no /tf, /tf_static from the state publisher"):
        connect.wait_until_connected(r, g, FakePub("/t", g), None, 0.3)
    r.tf_seen, r.latched["/tf_static"] = True, object()
    connect.wait_until_connected(r, g, FakePub("/t", g), None, 0.3)  # everything came: no error


def test_a_node_that_exits_while_waiting_is_named_at_once():
    g = graph()
    r = runner(procs=[FakeProc(["mujoco_bridge: ready"]),
                      FakeProc(["controller: ready", "Traceback", "ValueError: bad gain"], returncode=1)])
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"controller \(exit 1: .*ValueError: bad gain\) exited"):
        connect.wait_until_connected(r, g, FakePub("/t", g), None, 30.0)
    assert time.monotonic() - t0 < 10.0  # not at the deadline
