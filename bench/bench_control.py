#!/usr/bin/env python3
"""Benchmark of the controllers: compute time per control cycle and loop latency through DDS.

    .venv/bin/python bench/bench_control.py [--quick]

Prints a table and writes ``bench/results/control.json``.  Medians over repeats.

* **law**: ``law.compute(t, q, qd, ref)`` alone, every law, PUMA 560 (6) and arm7 (7 DoF),
  full models ``config/NAME.yaml``;
* **callback**: the node's ``/joint_states`` callback body, in process (a real rclpy node, the
  callback called directly with a prepared ``sensor_msgs/JointState``, a quintic trajectory
  being tracked): message -> numpy by joint name, reference, law, numpy -> message.  Three
  rows: the ``publish()`` calls stubbed out (the cost of our code, target <= 20 us for
  computed torque on 7 DoF), plus publishing the command, plus the ~/controller_state too;
* **loop**: the end-to-end round trip through DDS, ``/joint_states`` published by this
  process -> the controller process -> ``/effort_controller/commands`` received here (the
  lockstep cycle), for computed torque on arm7, and the same with a trivial echo node
  (``bench/echo_controller.py``) as the floor set by rclpy + DDS; both run at once on ROS
  domains of their own and are measured in alternating blocks, and their ratio is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
import timeit
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rbd_ros.control.gains import LAWS  # noqa: E402
from rbd_ros.control.laws import Reference, make_law  # noqa: E402
from rbd_ros.model import MdhModel  # noqa: E402

ROBOTS = {"puma560": ROOT / "config" / "puma560.yaml", "arm7": ROOT / "config" / "arm7.yaml"}


def median_us(fn, number: int, repeat: int) -> float:
    return 1e6 * statistics.median(t / number for t in timeit.repeat(fn, number=number, repeat=repeat))


def bench_laws(quick: bool) -> dict:
    number, repeat = (500, 3) if quick else (3000, 7)
    out: dict = {}
    for name, path in ROBOTS.items():
        model = MdhModel.from_yaml(str(path))
        n = model.dof
        rng = np.random.default_rng(0)
        lo, hi = np.clip(model.lower, -2, 2), np.clip(model.upper, -2, 2)
        q = lo + rng.uniform(0.3, 0.7, n) * (hi - lo)
        qd = rng.normal(size=n) * 0.3
        ref = Reference(n).set_joint(q + 0.01, qd + 0.1, rng.normal(size=n))
        out[name] = {}
        for law_name in LAWS:
            law = make_law(law_name, model)
            law.compute(0.0, q, qd, ref)
            out[name][law_name] = median_us(lambda: law.compute(0.0, q, qd, ref), number, repeat)
    return out


def bench_callback(quick: bool) -> dict:
    """The /joint_states callback body of the node, called directly."""
    import rclpy
    from rclpy.context import Context
    from sensor_msgs.msg import JointState

    from rbd_ros.control.trajectory import quintic_point_to_point
    from rbd_ros.ros.nodes.controller import Controller

    number, repeat = (300, 3) if quick else (2000, 7)
    model = MdhModel.from_yaml(str(ROBOTS["arm7"]))
    n = model.dof
    out: dict = {}
    ctx = Context()
    rclpy.init(context=ctx, args=["bench", "--ros-args", "-p", f"model_yaml:={ROBOTS['arm7']}"])
    try:
        for law_name in LAWS:
            node = rclpy.create_node("controller", context=ctx,
                                     cli_args=["--ros-args", "-p", f"type:={law_name}"])
            ctrl = Controller(node)
            q0 = np.array([0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3])
            msg = JointState()
            msg.name = [f"joint{i}" for i in range(n, 0, -1)]  # another order: the mapping is exercised
            msg.position = q0[::-1].tolist()
            msg.velocity = (0.1 * np.ones(n)).tolist()
            ctrl._on_joint_state(msg)  # first state: hold
            ctrl.loop.reference = quintic_point_to_point(q0, q0 + 0.2, 1e9)
            ctrl.loop.cartesian = None
            clock = [0.0]

            def cycle() -> None:
                clock[0] += 1e-3
                sec = int(clock[0])
                msg.header.stamp.sec = sec
                msg.header.stamp.nanosec = int((clock[0] - sec) * 1e9)
                ctrl._on_joint_state(msg)

            rows = {}
            real_cmd, real_state = ctrl.cmd_pub.publish, ctrl.state_pub.publish
            real_task = ctrl.task_pub.publish if ctrl.task_pub is not None else None

            def stub(*_a) -> None:
                return None

            for label, cmd, state in (("no_publish", stub, stub), ("publish_command", real_cmd, stub),
                                      ("publish_command_and_state", real_cmd, real_state)):
                ctrl.cmd_pub.publish = cmd
                ctrl.state_pub.publish = state
                if ctrl.task_pub is not None:
                    ctrl.task_pub.publish = real_task if state is real_state else stub
                cycle()
                rows[label] = median_us(cycle, number, repeat)
            assert not ctrl.law.fault, ctrl.law.status
            out[law_name] = rows
            node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
    return out


class _Process:
    def __init__(self, cmd: list[str], ready: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})})
        deadline = time.monotonic() + 120
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if ready in line:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{cmd} not ready")
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def stop(self) -> None:
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGINT)
            self.proc.wait(10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)


class LoopPeer:
    """This process's side of the loop with one controller, on ROS domain ``domain``: publish
    /joint_states, wait for the command (the lockstep cycle)."""

    def __init__(self, domain: int) -> None:
        import rclpy
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        self.ctx = Context()
        rclpy.init(context=self.ctx, domain_id=domain)
        self.node = rclpy.create_node(f"bench_control_peer_{domain}", context=self.ctx)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.got = [0]
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands",
                                      lambda _m: self.got.__setitem__(0, self.got[0] + 1), qos)
        self.pub = self.node.create_publisher(JointState, "/joint_states", qos)
        self.ex = SingleThreadedExecutor(context=self.ctx)
        self.ex.add_node(self.node)
        msg = self.msg = JointState()
        msg.name = [f"joint{i}" for i in range(1, 8)]
        msg.position = [0.3, -0.4, 0.2, -1.8, 0.4, 1.2, -0.3]
        msg.velocity = [0.0] * 7
        self.k = 0

    def connect(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while self.pub.get_subscription_count() == 0 or self.got[0] == 0:
            if time.monotonic() > deadline:
                raise TimeoutError("the controller does not answer")
            self.pub.publish(self.msg)
            self.ex.spin_once(timeout_sec=0.05)

    def block(self, count: int) -> list[float]:
        """``count`` round trips (microseconds)."""
        msg, got, times = self.msg, self.got, []
        for _ in range(count):
            self.k += 1
            t = self.k * 1e-3
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), int(round((t - int(t)) * 1e9))
            before = got[0]
            t0 = time.perf_counter()
            self.pub.publish(msg)
            while got[0] == before:
                self.ex.spin_once(timeout_sec=1.0)
                if time.perf_counter() - t0 > 5:
                    raise TimeoutError("lost a command")
            times.append(1e6 * (time.perf_counter() - t0))
        return times

    def close(self) -> None:
        import rclpy

        self.ex.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.ctx)


def bench_loop(quick: bool) -> dict:
    """Ours and the echo floor interleaved: both controllers run at once, each on a ROS domain
    of its own (so they never see each other's messages), and this process alternates blocks
    of round trips between them, so both see the same machine load."""
    count, per_block = (300, 50) if quick else (2000, 100)
    base = int(os.environ.get("ROS_DOMAIN_ID", "150"))
    domains = {"computed_torque_arm7": base, "echo_floor": base + 1}
    commands = {
        "computed_torque_arm7": ([sys.executable, "-m", "rbd_ros.cli", "controller", "--ros-args", "-p",
                                  f"model_yaml:={ROBOTS['arm7']}", "-p", "type:=computed_torque"],
                                 "controller: ready"),
        "echo_floor": ([sys.executable, str(ROOT / "bench" / "echo_controller.py")], "echo_controller: ready")}
    procs, peers = [], {}
    try:
        for label, (cmd, ready) in commands.items():
            procs.append(_Process(cmd, ready, env={"ROS_DOMAIN_ID": str(domains[label])}))
            peers[label] = LoopPeer(domains[label])
            peers[label].connect()
            peers[label].block(200)  # warm-up
        times: dict[str, list[float]] = {label: [] for label in peers}
        block_medians: dict[str, list[float]] = {label: [] for label in peers}
        for _ in range(count // per_block):
            for label, peer in peers.items():
                t = peer.block(per_block)
                times[label] += t
                block_medians[label].append(float(np.median(t)))
    finally:
        for peer in peers.values():
            peer.close()
        for proc in procs:
            proc.stop()
    out = {}
    for label, t in times.items():
        a = np.array(t)
        out[label] = {"median_us": float(np.median(a)), "p90_us": float(np.percentile(a, 90)),
                      "p99_us": float(np.percentile(a, 99)), "rate_hz": float(1e6 / np.mean(a)),
                      "count": len(a)}
    ours, floor = block_medians["computed_torque_arm7"], block_medians["echo_floor"]
    out["ratio"] = {"median": out["computed_torque_arm7"]["median_us"] / out["echo_floor"]["median_us"],
                    "block_median": float(np.median(np.array(ours) / np.array(floor)))}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(150 + os.getpid() % 50))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    results = {"machine": {"platform": platform.platform(), "python": platform.python_version(),
                           "cpus": os.cpu_count(), "load_avg": os.getloadavg()}}
    results["law_compute_us"] = bench_laws(args.quick)
    results["callback_us_arm7"] = bench_callback(args.quick)
    results["loop_latency"] = bench_loop(args.quick)
    results["machine"]["load_avg_end"] = os.getloadavg()

    print("\nPer-cycle compute time, microseconds (median)")
    print(f"{'law':<24}{'law.compute 6 DoF':>18}{'law.compute 7 DoF':>18}{'callback 7 DoF':>16}"
          f"{'+ cmd publish':>15}{'+ state publish':>17}")
    for law in LAWS:
        cb = results["callback_us_arm7"][law]
        print(f"{law:<24}{results['law_compute_us']['puma560'][law]:>18.1f}{results['law_compute_us']['arm7'][law]:>18.1f}"
              f"{cb['no_publish']:>16.1f}{cb['publish_command']:>15.1f}{cb['publish_command_and_state']:>17.1f}")
    print("\nLoop through DDS (this process -> /joint_states -> node -> /effort_controller/commands -> here)")
    for label, r in results["loop_latency"].items():
        if label == "ratio":
            continue
        print(f"  {label:<24} median {r['median_us']:7.0f} us  p90 {r['p90_us']:7.0f} us  p99 {r['p99_us']:7.0f} us"
              f"  ({r['rate_hz']:.0f} round trips/s)")
    ratio = results["loop_latency"]["ratio"]
    print(f"  ours / echo floor: {ratio['median']:.2f} (median of all), {ratio['block_median']:.2f} "
          "(median of the interleaved blocks' ratios)")
    out = ROOT / "bench" / "results" / "control.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
