#!/usr/bin/env python3
"""Benchmark of the dynamics services (issue 5): round trips through rclpy + Fast DDS.

    .venv/bin/python bench/bench_services.py [--quick]

Prints a table and writes ``bench/results/services.json``.  Four server processes are started
on a random ``ROS_DOMAIN_ID`` (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``):

* ours: ``rbd-ros dynamics-server`` on ``urdf/arm7.urdf`` (7 DoF), ``/bench/*``, whose quick
  services are served by ``rbd_ros.ros.lean_executor.LeanExecutor``;
* the peer, ``bench/peer_servers.py``: an ordinary rclpy server (rclpy's default
  ``SingleThreadedExecutor``, the same QoS) with an empty ``std_srvs/Trigger`` (the issue's
  reference) and echo servers of our own ``InverseDynamics`` (efforts = positions) and
  ``ForwardSimulate`` (zero arrays of the real response's size) types, ``/bench_peer/*``;
* for reference, the same peer on a ``MultiThreadedExecutor(3)``, ``/bench_peer_mt/*``, and on
  ``LeanExecutor``, ``/bench_peer_lean/*`` (what the loop alone gains; what our message type and
  our handler cost on top of it).

One client process (this one) calls them with a plain rclpy client (``call_async`` +
``SingleThreadedExecutor.spin_until_future_complete``, requests built once) and separately
through ``DynamicsClient`` (numpy in, numpy out, request built on every call).  Peer and ours
are measured in alternating blocks (the order flips every block) so that drift on the shared
machine cancels; the figures are ratios to the peer measured in the same run, and medians.
Every service is timed with one client: with Fast DDS each response of a service also goes to
the service's other, idle clients (and wakes their process: +15 % p50 measured with one idle
``DynamicsClient`` beside the plain client; the plain client's executor also pays ~0.3 ms per
such wake-up on its next call).  So the plain clients' rows run first, then the plain clients
of our services are destroyed and the ``DynamicsClient`` rows run, each alternating with its
peer (the Trigger, or the echo of the same size).

Rows: single-state inverse dynamics latency p50/p99 vs Trigger and vs the echo; calls per
second (one call in flight, and a burst of calls in flight); a 10 000-point inverse dynamics
round trip vs the echo of the same size; a 10 s, 1 kHz forward simulation (RK4, 10 000 torque
rows or 1 held row, output every step: 10 001 states) vs the echo of the same size.  Then where
the time goes on the server side, in process: request deserialisation, validation, kernel,
response serialisation.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "urdf" / "arm7.urdf"
# before rclpy is imported anywhere (children inherit the environment)
os.environ["ROS_DOMAIN_ID"] = str(random.randint(1, 100))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from rbd_ros.ros.bringup.processes import NodeProcess  # noqa: E402

NS, PEER, PEER_MT, PEER_LEAN = "bench", "bench_peer", "bench_peer_mt", "bench_peer_lean"


class Peer:
    """``bench/peer_servers.py NS KIND`` as a child process."""

    def __init__(self, ns: str, kind: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "peer_servers.py"), ns, kind], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.lines: list[str] = []
        self._ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.lines.append(line.rstrip())
            if "ready" in line:
                self._ready.set()
        self._ready.set()

    def wait_ready(self, timeout: float = 60.0) -> None:
        if not self._ready.wait(timeout) or self.proc.poll() is not None:
            raise RuntimeError("peer_servers did not start:\n" + "\n".join(self.lines))

    def stop(self) -> None:
        import signal

        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


# ---- statistics ----------------------------------------------------------------------------
def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * (len(s) - 1)))))]


def summary(xs: list[float]) -> dict:
    return {"n": len(xs), "p50_ms": 1e3 * pct(xs, 50), "p99_ms": 1e3 * pct(xs, 99),
            "mean_ms": 1e3 * statistics.fmean(xs), "min_ms": 1e3 * min(xs)}


def interleaved(cases: dict, blocks: int, per_block: int, warmup: int) -> dict:
    """{name: [seconds per call]}; blocks of ``per_block`` calls per case, order flipped every
    block. Also per-block medians, for block-wise ratios."""
    for fn in cases.values():
        for _ in range(warmup):
            fn()
    samples = {k: [] for k in cases}
    block_medians = {k: [] for k in cases}
    names = list(cases)
    for b in range(blocks):
        for name in (names if b % 2 == 0 else names[::-1]):
            fn = cases[name]
            xs = [fn() for _ in range(per_block)]
            samples[name] += xs
            block_medians[name].append(statistics.median(xs))
    return {"samples": samples, "block_medians": block_medians}


def ratio(run: dict, ours: str, peer: str) -> dict:
    s, b = run["samples"], run["block_medians"]
    return {"p50": pct(s[ours], 50) / pct(s[peer], 50),
            "p99": pct(s[ours], 99) / pct(s[peer], 99),
            "block_median": statistics.median(x / y for x, y in zip(b[ours], b[peer]))}


# ---- the client ------------------------------------------------------------------------------
class Caller:
    """Plain rclpy clients on one node with a SingleThreadedExecutor."""

    def __init__(self) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        from rbd_ros.ros.nodes.dynamics_server import SERVICE_QOS

        self.ctx = Context()
        rclpy.init(context=self.ctx)
        self.node = rclpy.create_node("bench_services_client", context=self.ctx)
        self.ex = SingleThreadedExecutor(context=self.ctx)
        self.ex.add_node(self.node)
        self.qos = SERVICE_QOS()

    def client(self, srv_type, name: str):
        cli = self.node.create_client(srv_type, name, qos_profile=self.qos)
        if not cli.wait_for_service(timeout_sec=30):
            raise RuntimeError(f"{name} not available")
        return cli

    def timed(self, cli, req, check: bool = True):
        """A callable: one round trip, returns seconds."""
        ex = self.ex

        def call() -> float:
            t0 = time.perf_counter()
            fut = cli.call_async(req)
            ex.spin_until_future_complete(fut, timeout_sec=30)
            dt = time.perf_counter() - t0
            res = fut.result()
            if res is None or (check and not res.success):
                raise RuntimeError(f"{cli.srv_name}: {None if res is None else res.message}")
            return dt

        return call

    def burst(self, cli, req, count: int):
        """A callable: ``count`` calls in flight at once; returns seconds per call."""
        ex = self.ex

        def call() -> float:
            t0 = time.perf_counter()
            futs = [cli.call_async(req) for _ in range(count)]
            for f in futs:
                ex.spin_until_future_complete(f, timeout_sec=30)
                if f.result() is None:
                    raise RuntimeError("burst call lost")
            return (time.perf_counter() - t0) / count

        return call

    def close(self) -> None:
        import rclpy

        self.ex.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.ctx)


def states(robot, count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = robot.model.dof
    lo, hi = np.clip(robot.model.lower, -2, 2), np.clip(robot.model.upper, -2, 2)
    q = lo + rng.uniform(0.2, 0.8, (count, n)) * (hi - lo)
    return q, rng.normal(size=(count, n)), rng.normal(size=(count, n))


def sim_requests(robot, names: list[str]):
    """(10 000 torque rows, 1 held row) ForwardSimulate requests: 10 s at 1 kHz, RK4, output
    every step; torques = gravity at q0 (+ a small wave for the 10 000 rows)."""
    from rbd_ros_interfaces.srv import ForwardSimulate

    n = robot.model.dof
    q0 = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])[:n]
    g = np.asarray(robot.gravity(q0))
    t = np.arange(10_000) * 1e-3
    rows = g + 0.5 * np.sin(2 * np.pi * 0.5 * t)[:, None] * np.ones(n)
    base = dict(joint_names=names, initial_positions=q0, initial_velocities=np.zeros(n),
                dt=1e-3, integrator="rk4", output_period=0.0)
    many = ForwardSimulate.Request(efforts=rows.reshape(-1), effort_period=1e-3, duration=0.0,
                                   **base)
    held = ForwardSimulate.Request(efforts=g.copy(), effort_period=1e-3, duration=10.0, **base)
    return many, held, (q0, g, rows)


# ---- server side, in process -----------------------------------------------------------------
def profile_server(quick: bool) -> dict:
    """The handlers of ``DynamicsServer`` called directly, stage by stage (ms, medians)."""
    import timeit

    import rclpy
    from rclpy.context import Context
    from rclpy.serialization import deserialize_message, serialize_message

    from rbd_ros.ros.nodes.dynamics_server import DynamicsServer, f64
    from rbd_ros_interfaces.srv import ForwardSimulate, InverseDynamics

    ctx = Context()
    rclpy.init(context=ctx, args=["bench", "--ros-args", "-p", f"urdf_path:={URDF}",
                                  "-p", "service_namespace:=bench_inproc"])
    node = rclpy.create_node("dynamics_server_profile", context=ctx)
    server = DynamicsServer(node)
    svc, robot = server.service, server.service.robot
    names = list(robot.joint_names)
    repeat = 5 if quick else 15

    def med_ms(fn, number: int) -> float:
        fn()
        return 1e3 * statistics.median(t / number for t in timeit.repeat(fn, number=number,
                                                                          repeat=repeat))

    out: dict = {}
    for label, count, number in (("id_1", 1, 200 if quick else 2000), ("id_10000", 10_000, 3 if quick else 10)):
        q, qd, qdd = states(robot, count)
        raw_req = serialize_message(InverseDynamics.Request(
            joint_names=names, positions=q.reshape(-1), velocities=qd.reshape(-1),
            accelerations=qdd.reshape(-1)))
        req = deserialize_message(raw_req, InverseDynamics.Request)  # array.array fields, as served
        handler = server._guard(server._inverse_dynamics)
        res = handler(req, InverseDynamics.Response())
        assert res.success, res.message
        qa, qda, qdda = (svc.states(k, getattr(req, k), 7) for k in ("positions", "velocities", "accelerations"))
        qa, qda, qdda = (svc._one(x) for x in (qa, qda, qdda))  # as the service calls the core
        tau = robot.inverse_dynamics(qa, qda, qdda)
        row = {
            "deserialize_request": med_ms(lambda: deserialize_message(raw_req, InverseDynamics.Request), number),
            "handler_total": med_ms(lambda: handler(req, InverseDynamics.Response()), number),
            "validate_and_convert": med_ms(lambda: (svc.permutation(req.joint_names),
                                                    svc.states("p", req.positions, 7),
                                                    svc.states("v", req.velocities, 7),
                                                    svc.states("a", req.accelerations, 7)), number),
            "kernel": med_ms(lambda: robot.inverse_dynamics(qa, qda, qdda), number),
            "fill_response": med_ms(lambda: setattr(res, "efforts", f64(tau)), number),
            "fill_numpy_assign": med_ms(lambda: setattr(res, "efforts", tau.reshape(-1)), number),
            "serialize_response": med_ms(lambda: serialize_message(res), number),
            "request_bytes": len(raw_req), "response_bytes": len(serialize_message(res)),
        }
        out[label] = row
    many, held, _ = sim_requests(robot, names)
    for label, req0 in (("sim_10000_rows", many), ("sim_held_row", held)):
        raw_req = serialize_message(req0)
        req = deserialize_message(raw_req, ForwardSimulate.Request)
        handler = server._guard(server._forward_simulate)
        res = handler(req, ForwardSimulate.Response())
        assert res.success, res.message
        kernel = []

        def run() -> None:
            r = handler(req, ForwardSimulate.Response())
            kernel.append(r.compute_time)

        number = 1 if quick else 3
        sim = server.sim_service.forward_simulate(
            req.joint_names, req.initial_positions, req.initial_velocities, req.efforts,
            req.effort_period, req.dt, req.integrator, req.duration, req.output_period, False)
        fields = ("times", "positions", "velocities", "accelerations")

        def fill(conv) -> None:
            r = ForwardSimulate.Response()
            for k in fields:
                setattr(r, k, conv(getattr(sim, k)))

        out[label] = {
            "deserialize_request": med_ms(lambda: deserialize_message(raw_req, ForwardSimulate.Request), number),
            "handler_total": med_ms(run, number),
            "kernel": 1e3 * statistics.median(kernel),
            "service_call": med_ms(lambda: server.sim_service.forward_simulate(
                req.joint_names, req.initial_positions, req.initial_velocities, req.efforts,
                req.effort_period, req.dt, req.integrator, req.duration, req.output_period, False), number),
            "fill_response": med_ms(lambda: fill(f64), number),
            "fill_numpy_assign": med_ms(lambda: fill(lambda x: x.reshape(-1)), number),
            "serialize_response": med_ms(lambda: serialize_message(res), number),
            "request_bytes": len(raw_req), "response_bytes": len(serialize_message(res)),
        }
    server.close()
    node.destroy_node()
    rclpy.shutdown(context=ctx)
    return out


# ---- main ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="few iterations (smoke check)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "services.json"))
    ap.add_argument("--fastdds-default", action="store_true",
                    help="every process on Fast DDS's default transports instead of rbd_ros's "
                         "large-data profile (config/fastdds_large_data.xml)")
    args = ap.parse_args(argv)
    # before any participant exists; the servers, the peers and this client all inherit it
    from rbd_ros.ros.dds import PROFILE_ENV, SWITCH_ENV, use_large_data_profile

    if args.fastdds_default:
        os.environ[SWITCH_ENV] = "off"
    else:
        use_large_data_profile()
    dds_profile = os.environ.get(PROFILE_ENV, "Fast DDS defaults")
    quick = args.quick
    t_start = time.monotonic()

    from std_srvs.srv import Trigger

    from rbd_ros.robot import Robot
    from rbd_ros.ros.client import DynamicsClient
    from rbd_ros_interfaces.srv import ForwardSimulate, InverseDynamics

    server = NodeProcess(["dynamics-server", "--ros-args", "-p", f"urdf_path:={URDF}",
                          "-p", f"service_namespace:={NS}"])
    peer, peer_mt, peer_lean = Peer(PEER, "single"), Peer(PEER_MT, "multi"), Peer(PEER_LEAN, "lean")
    caller = dyn = None
    try:
        robot = Robot.from_urdf(URDF.read_text(encoding="utf-8"))
        robot.gravity(np.zeros(robot.model.dof))
        names = list(robot.joint_names)
        n = len(names)
        server.wait_for("dynamics_server: ready", timeout=120)
        peer.wait_ready()
        peer_mt.wait_ready()
        peer_lean.wait_ready()
        caller = Caller()
        c = {"trigger": caller.client(Trigger, f"/{PEER}/trigger"),
             "trigger_mt": caller.client(Trigger, f"/{PEER_MT}/trigger"),
             "trigger_lean": caller.client(Trigger, f"/{PEER_LEAN}/trigger"),
             "echo_lean": caller.client(InverseDynamics, f"/{PEER_LEAN}/inverse_dynamics"),
             "echo": caller.client(InverseDynamics, f"/{PEER}/inverse_dynamics"),
             "id": caller.client(InverseDynamics, f"/{NS}/inverse_dynamics"),
             "sim_echo": caller.client(ForwardSimulate, f"/{PEER}/forward_simulate"),
             "sim": caller.client(ForwardSimulate, f"/{NS}/forward_simulate")}

        results: dict = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                     "load_avg_start": os.getloadavg()},
                         "quick": quick, "domain_id": int(os.environ["ROS_DOMAIN_ID"]),
                         "dds_profile": dds_profile,
                         "peer": "bench/peer_servers.py, rclpy SingleThreadedExecutor like "
                                 "dynamics_server's quick services, same QoS; trigger_mt: the "
                                 "same on a MultiThreadedExecutor(3); trigger_lean, echo_lean: "
                                 "the same on rbd_ros's LeanExecutor, as dynamics_server"}

        # -- single state ---------------------------------------------------------------------
        q1, qd1, qdd1 = states(robot, 1)
        req1 = InverseDynamics.Request(joint_names=names, positions=q1.reshape(-1),
                                       velocities=qd1.reshape(-1), accelerations=qdd1.reshape(-1))
        tau_ref = np.asarray(robot.inverse_dynamics(q1, qd1, qdd1)).reshape(-1)
        trig = Trigger.Request()
        cases = {"trigger": caller.timed(c["trigger"], trig, check=False),
                 "trigger_mt": caller.timed(c["trigger_mt"], trig, check=False),
                 "trigger_lean": caller.timed(c["trigger_lean"], trig, check=False),
                 "echo": caller.timed(c["echo"], req1),
                 "echo_lean": caller.timed(c["echo_lean"], req1),
                 "id": caller.timed(c["id"], req1)}

        fut = c["id"].call_async(req1)
        caller.ex.spin_until_future_complete(fut, timeout_sec=30)
        assert np.allclose(fut.result().efforts, tau_ref, rtol=1e-12, atol=1e-9), fut.result()
        blocks, per = (4, 25) if quick else (20, 100)
        # one client per service while it is timed: with Fast DDS every response of a service
        # also reaches its other clients (and wakes their process), measured +0.07 ms per round
        # trip with one idle DynamicsClient beside the plain client (CHANGELOG.rst, "Benchmark history")
        single = interleaved(cases, blocks, per, warmup=20 if quick else 100)

        # -- calls in flight ------------------------------------------------------------------
        burst_n = 50 if quick else 200
        burst = interleaved({"trigger": caller.burst(c["trigger"], trig, burst_n),
                             "echo": caller.burst(c["echo"], req1, burst_n),
                             "id": caller.burst(c["id"], req1, burst_n)},
                            2 if quick else 8, 1, warmup=1)

        # -- 10 000 states --------------------------------------------------------------------
        qN, qdN, qddN = states(robot, 10_000, seed=1)
        reqN = InverseDynamics.Request(joint_names=names, positions=qN.reshape(-1),
                                       velocities=qdN.reshape(-1), accelerations=qddN.reshape(-1))
        tauN_ref = np.asarray(robot.inverse_dynamics(qN, qdN, qddN))
        many_blocks, many_per = (3, 2) if quick else (15, 3)
        many = interleaved({"echo": caller.timed(c["echo"], reqN), "id": caller.timed(c["id"], reqN)},
                           many_blocks, many_per, warmup=2)

        # -- forward simulation ---------------------------------------------------------------
        sim_many, sim_held, (q0, g0, rows) = sim_requests(robot, names)
        compute: list[float] = []

        def sim_timed_kernel(req) -> callable:
            def call() -> float:
                t0 = time.perf_counter()
                fut = c["sim"].call_async(req)
                caller.ex.spin_until_future_complete(fut, timeout_sec=60)
                dt = time.perf_counter() - t0
                res = fut.result()
                assert res is not None and res.success, res
                assert len(res.positions) == 10_001 * n
                compute.append(res.compute_time)
                return dt
            return call

        sim_blocks, sim_per = (2, 1) if quick else (8, 2)
        sims = interleaved({"echo": caller.timed(c["sim_echo"], sim_many),
                            "sim_10000_rows": sim_timed_kernel(sim_many),
                            "sim_held_row": sim_timed_kernel(sim_held)},
                           sim_blocks, sim_per, warmup=1)

        # -- DynamicsClient, alone on our services (the plain clients of them destroyed) -------
        for key in ("id", "sim"):
            caller.node.destroy_client(c.pop(key))
        dyn = DynamicsClient(namespace=NS)
        dyn.wait()
        assert list(dyn.joint_names) == names
        tau_srv = dyn.inverse_dynamics(q1[0], qd1[0], qdd1[0])
        assert np.allclose(tau_srv, tau_ref, rtol=1e-12, atol=1e-9), (tau_srv, tau_ref)

        def dyn_call() -> float:
            t0 = time.perf_counter()
            tau = dyn.inverse_dynamics(q1[0], qd1[0], qdd1[0], joint_names=names)
            dt = time.perf_counter() - t0
            assert tau.shape == (n,)
            return dt

        dyn_run = interleaved({"trigger": cases["trigger"], "id_dynamics_client": dyn_call},
                              blocks, per, warmup=20 if quick else 100)

        def dyn_many() -> float:
            t0 = time.perf_counter()
            tau = dyn.inverse_dynamics(qN, qdN, qddN, joint_names=names)
            dt = time.perf_counter() - t0
            assert tau.shape == (10_000, n)
            return dt

        tauN = dyn.inverse_dynamics(qN, qdN, qddN)
        assert np.allclose(tauN, tauN_ref, rtol=1e-12, atol=1e-9)
        many_dyn = interleaved({"echo": caller.timed(c["echo"], reqN), "id_dynamics_client": dyn_many},
                               many_blocks, many_per, warmup=2)
        check = dyn.forward_simulate(q0, np.zeros(n), rows, effort_period=1e-3, dt=1e-3)
        assert check.positions.shape == (10_001, n) and np.isfinite(check.positions).all()

        def dyn_sim() -> float:
            t0 = time.perf_counter()
            s = dyn.forward_simulate(q0, np.zeros(n), rows, effort_period=1e-3, dt=1e-3,
                                     joint_names=names)
            dt = time.perf_counter() - t0
            assert s.positions.shape == (10_001, n)
            return dt

        sims_dyn = interleaved({"echo": caller.timed(c["sim_echo"], sim_many),
                                "sim_dynamics_client": dyn_sim}, sim_blocks, sim_per, warmup=1)

        results["single"] = {k: summary(v) for k, v in single["samples"].items()}
        results["single"]["id_dynamics_client"] = summary(dyn_run["samples"]["id_dynamics_client"])
        results["single"]["trigger_in_client_run"] = summary(dyn_run["samples"]["trigger"])
        single["samples"]["id_dynamics_client"] = dyn_run["samples"]["id_dynamics_client"]
        results["single_ratios"] = {
            "id/trigger": ratio(single, "id", "trigger"), "id/echo": ratio(single, "id", "echo"),
            "echo/trigger": ratio(single, "echo", "trigger"),
            "id_dynamics_client/trigger": ratio(dyn_run, "id_dynamics_client", "trigger"),
            "trigger_mt/trigger": ratio(single, "trigger_mt", "trigger"),
            "trigger_lean/trigger": ratio(single, "trigger_lean", "trigger"),
            "echo_lean/trigger": ratio(single, "echo_lean", "trigger"),
            "id/trigger_lean": ratio(single, "id", "trigger_lean"),
            "id/echo_lean": ratio(single, "id", "echo_lean")}
        results["calls_per_second_sequential"] = {
            k: 1.0 / statistics.fmean(v) for k, v in single["samples"].items()}
        results["calls_per_second_burst"] = {
            "in_flight": burst_n,
            **{k: 1.0 / statistics.median(v) for k, v in burst["samples"].items()},
            "id/trigger_time_ratio": ratio(burst, "id", "trigger")["block_median"]}
        results["id_10000"] = {k: summary(v) for k, v in many["samples"].items()}
        results["id_10000"]["id_dynamics_client"] = summary(many_dyn["samples"]["id_dynamics_client"])
        results["id_10000"]["echo_in_client_run"] = summary(many_dyn["samples"]["echo"])
        results["id_10000_ratios"] = {"id/echo": ratio(many, "id", "echo"),
                                      "id_dynamics_client/echo": ratio(many_dyn, "id_dynamics_client", "echo")}
        results["sim"] = {k: summary(v) for k, v in sims["samples"].items()}
        results["sim"]["sim_dynamics_client"] = summary(sims_dyn["samples"]["sim_dynamics_client"])
        results["sim"]["server_compute_time_ms"] = 1e3 * statistics.median(compute)
        results["sim_ratios"] = {"sim_10000_rows/echo": ratio(sims, "sim_10000_rows", "echo"),
                                 "sim_held_row/echo": ratio(sims, "sim_held_row", "echo"),
                                 "sim_dynamics_client/echo": ratio(sims_dyn, "sim_dynamics_client", "echo")}
    finally:
        if dyn is not None:
            dyn.close()
        if caller is not None:
            caller.close()
        server.stop()
        peer.stop()
        peer_mt.stop()
        peer_lean.stop()

    # -- server side, in process (servers stopped: less noise) ---------------------------------
    results["server_profile_ms"] = profile_server(quick)
    results["machine"]["load_avg_end"] = os.getloadavg()
    results["wall_s"] = time.monotonic() - t_start
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print_table(results)
    print(f"\nwrote {args.out} ({results['wall_s']:.0f} s)")
    return 0


def print_table(r: dict) -> None:
    s, sr = r["single"], r["single_ratios"]
    print(f"\nServices, 7 DoF (arm7), medians; load avg {r['machine']['load_avg_start'][0]:.1f} at start")
    print(f"peer: {r['peer']}")
    print(f"DDS profile (every process): {r.get('dds_profile')}\n")
    print(f"{'single state':<44}{'p50 ms':>9}{'p99 ms':>9}{'p50 ratio':>11}{'p99 ratio':>11}")
    for name, label, ref in (("trigger", "Trigger (peer, single-threaded)", None),
                             ("trigger_mt", "Trigger (peer, MultiThreadedExecutor)", "trigger"),
                             ("trigger_lean", "Trigger (peer, LeanExecutor)", "trigger"),
                             ("echo", "InverseDynamics echo (peer)", "trigger"),
                             ("echo_lean", "InverseDynamics echo (peer, LeanExecutor)", "trigger"),
                             ("id", "inverse_dynamics / Trigger", "trigger"),
                             ("id", "inverse_dynamics / echo", "echo"),
                             ("id", "inverse_dynamics / Trigger on LeanExecutor", "trigger_lean"),
                             ("id", "inverse_dynamics / echo on LeanExecutor", "echo_lean"),
                             ("id_dynamics_client", "DynamicsClient.inverse_dynamics / Trigger*", "trigger")):
        x = s[name]
        if ref is None:
            rr = ("", "")
        else:
            k = f"{name}/{ref}"
            rr = (f"{sr[k]['p50']:.2f}", f"{sr[k]['p99']:.2f}")
        print(f"{label:<44}{x['p50_ms']:>9.3f}{x['p99_ms']:>9.3f}{rr[0]:>11}{rr[1]:>11}")
    print("* in a run of its own, alternating with the Trigger (see the script)")
    cps, b = r["calls_per_second_sequential"], r["calls_per_second_burst"]
    print(f"\ncalls/s, 1 in flight: Trigger {cps['trigger']:.0f}, echo {cps['echo']:.0f}, "
          f"inverse_dynamics {cps['id']:.0f}, DynamicsClient {cps['id_dynamics_client']:.0f}")
    print(f"calls/s, {b['in_flight']} in flight: Trigger {b['trigger']:.0f}, echo {b['echo']:.0f}, "
          f"inverse_dynamics {b['id']:.0f}")
    m, mr = r["id_10000"], r["id_10000_ratios"]
    print(f"\n{'10 000 states (round trip)':<44}{'p50 ms':>9}{'p99 ms':>9}{'/ echo':>11}")
    print(f"{'InverseDynamics echo (peer)':<44}{m['echo']['p50_ms']:>9.2f}{m['echo']['p99_ms']:>9.2f}")
    print(f"{'inverse_dynamics':<44}{m['id']['p50_ms']:>9.2f}{m['id']['p99_ms']:>9.2f}"
          f"{mr['id/echo']['p50']:>11.2f}")
    print(f"{'DynamicsClient.inverse_dynamics':<44}{m['id_dynamics_client']['p50_ms']:>9.2f}"
          f"{m['id_dynamics_client']['p99_ms']:>9.2f}{mr['id_dynamics_client/echo']['p50']:>11.2f}")
    sm, smr = r["sim"], r["sim_ratios"]
    print(f"\n{'forward_simulate 10 s @ 1 kHz, 10 001 states':<44}{'p50 ms':>9}{'p99 ms':>9}{'/ echo':>11}")
    print(f"{'ForwardSimulate echo (peer)':<44}{sm['echo']['p50_ms']:>9.2f}{sm['echo']['p99_ms']:>9.2f}")
    for k, label in (("sim_10000_rows", "10 000 torque rows"), ("sim_held_row", "1 held row"),
                     ("sim_dynamics_client", "DynamicsClient, 10 000 rows")):
        print(f"{label:<44}{sm[k]['p50_ms']:>9.2f}{sm[k]['p99_ms']:>9.2f}{smr[k + '/echo']['p50']:>11.2f}")
    print(f"(server compute_time, integration only: {sm['server_compute_time_ms']:.1f} ms)")
    print("\nserver side in process, ms (medians):")
    keys = {"deserialize_request": "deser. req", "validate_and_convert": "validate",
            "kernel": "kernel", "service_call": "services.py", "fill_response": "fill res",
            "handler_total": "handler", "serialize_response": "ser. res",
            "fill_numpy_assign": "(numpy =)"}
    print(f"{'':<16}" + "".join(f"{v:>12}" for v in keys.values()))
    for label, row in r["server_profile_ms"].items():
        print(f"{label:<16}" + "".join(f"{row[k]:>12.3f}" if k in row else f"{'':>12}" for k in keys))
    print("(services.py = DynamicsService.forward_simulate: validation, hold rows, kernel, output "
          "slicing; (numpy =) = filling the response by assigning numpy arrays, before f64)")


if __name__ == "__main__":
    sys.exit(main())
