"""Issue 27, the dynamics server: one request cannot hang it.

A real server process (``max_request_seconds:=2``) gets an unreachable IK target with the
largest ``max_restarts`` and ``max_iterations`` and no timeout: it answers success=false within
the bound (+ slack) with a message naming the bound, while a concurrent gravity client keeps
getting answers (checked against Pinocchio's g(q)); SIGTERM or SIGINT during such a solve ends
the process within about a second.  Without ROS: a simulation past the bound is refused the
same way, and the chunked simulation is the one-call simulation to the last bit.
"""
from __future__ import annotations

import signal
import threading
import time

import numpy as np
import pytest

from robots_data import BUNDLED_URDF

pytest.importorskip("rclpy")
from rbd_ros.robot import Robot

URDF = BUNDLED_URDF / "puma560.urdf"
INT32_MAX = 2**31 - 1
BOUND = 2.0


def _far() -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = [5.0, 0.0, 0.0]  # the PUMA 560 reaches < 1 m
    return T


def _pinocchio_gravity(q: np.ndarray) -> np.ndarray:
    pin = pytest.importorskip("pinocchio")
    model = pin.buildModelFromUrdf(str(URDF))
    data = model.createData()
    return pin.computeGeneralizedGravity(model, data, q)


def _start_ik(namespace: str, out: dict, timeout: float = 60.0) -> threading.Thread:
    """An unbounded IK request in a thread of this process; ``out`` gets its outcome."""
    from rbd_ros.ros.client import DynamicsClient, DynamicsError

    def run() -> None:
        with DynamicsClient(namespace=namespace, timeout=timeout) as c:
            c.wait(60)
            out["sent"] = time.monotonic()
            try:
                out["answer"] = c.inverse_kinematics(_far(), max_restarts=INT32_MAX,
                                                     max_iterations=INT32_MAX, timeout=0.0)
            except DynamicsError as exc:
                out["error"] = str(exc)
            out["done"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_unreachable_ik_is_bounded_and_gravity_still_answers(node_process) -> None:
    from rbd_ros.ros.client import DynamicsClient

    node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={URDF}",
                  "-p", "service_namespace:=bound27", "-p", f"max_request_seconds:={BOUND}"],
                 ready="dynamics_server: ready", timeout=120)
    rng = np.random.default_rng(27)
    with DynamicsClient(namespace="bound27", timeout=30) as c:
        c.wait(60)
        c.gravity(np.zeros(6))  # warm: a cold numba cache compiles the kernels on first use,
        c.inverse_kinematics(Robot.from_urdf(str(URDF)).fk(np.full(6, 0.3)))  # (warmed by the
        # server at start-up since: DynamicsServer._warm)
        out: dict = {}
        ik = _start_ik("bound27", out)
        while "sent" not in out:
            time.sleep(0.01)
        time.sleep(0.2)  # the solve is under way
        answers, slowest = 0, 0.0
        while ik.is_alive() and answers < 10_000:
            q = rng.uniform(-1, 1, 6)
            t0 = time.monotonic()
            g = c.gravity(q)
            slowest = max(slowest, time.monotonic() - t0)
            np.testing.assert_allclose(g, _pinocchio_gravity(q), atol=1e-9)
            answers += 1
            if "done" not in out:
                late = answers
        ik.join(30)
    assert "error" in out, out
    took = out["done"] - out["sent"]
    assert "max_request_seconds" in out["error"] and "hit the server's bound of 2 s" in out["error"]
    assert BOUND - 0.1 < took < BOUND + 3.0, took  # it ran to the bound, then answered
    assert late >= 5 and slowest < 1.0, (late, slowest)  # gravity served during the solve
    print(f"IK answered after {took:.2f} s (bound {BOUND} s); {late} gravity answers meanwhile, "
          f"slowest {1e3 * slowest:.1f} ms")


def _start_simulation(namespace: str, out: dict, timeout: float = 60.0) -> threading.Thread:
    """A 10^6-step simulation (~3.6 s of RK4 here) in a thread of this process."""
    from rbd_ros.ros.client import DynamicsClient, DynamicsError

    def run() -> None:
        with DynamicsClient(namespace=namespace, timeout=timeout) as c:
            c.wait(60)
            out["sent"] = time.monotonic()
            try:
                out["answer"] = c.forward_simulate(np.zeros(6), np.zeros(6), np.zeros((1, 6)),
                                                   effort_period=1.0, dt=1e-3, duration=1000.0,
                                                   output_period=1.0)
            except DynamicsError as exc:
                out["error"] = str(exc)
            out["done"] = time.monotonic()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("sig, work", [(signal.SIGTERM, "ik"), (signal.SIGINT, "ik"),
                                       (signal.SIGTERM, "simulation")])
@pytest.mark.slow
def test_signal_during_long_work_ends_the_server_within_a_second(node_process, sig, work) -> None:
    ns = f"sig27{int(sig)}{work}"
    server = node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={URDF}",
                           "-p", f"service_namespace:={ns}", "-p", "max_request_seconds:=600.0"],
                          ready="dynamics_server: ready", timeout=120)
    out: dict = {}
    ik = (_start_ik if work == "ik" else _start_simulation)(ns, out, timeout=4.0)
    while "sent" not in out:
        time.sleep(0.01)
    time.sleep(1.0)
    assert server.alive() and "done" not in out  # still solving
    t0 = time.monotonic()
    server.proc.send_signal(sig)
    code = server.wait(10)
    took = time.monotonic() - t0
    assert took < 1.0, f"the server took {took:.2f} s to end on {sig.name}"
    print(f"{sig.name} during a long {work}: the server ended in {took:.3f} s")
    assert code == 0, server.output
    assert "Traceback" not in server.output, server.output
    ik.join(30)


@pytest.mark.parametrize("value", ["0.0", "-1.0", "nan", "true", "abc"])
def test_a_bad_bound_is_refused_at_start_up(node_process, value: str) -> None:
    server = node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={URDF}",
                           "-p", f"service_namespace:=badbound{value.replace('.', '').replace('-', 'm')}",
                           "-p", f"max_request_seconds:={value}"])
    assert server.wait(120) == 2
    lines = [ln for ln in server.output.splitlines() if ln.startswith("dynamics_server: error:")]
    assert len(lines) == 1 and "Traceback" not in server.output, server.output
    assert "max_request_seconds must be a positive number of seconds" in lines[0]
