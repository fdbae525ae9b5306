"""Compile the jitted kernels once, before anything needs them (``rbd-ros warm``).

Every kernel is ``cache=True``: compiled on its first call, then loaded from numba's on-disk
cache (``rbd_ros.algorithm.jit_cache``) by every later process.  On a fresh install nothing is
cached yet, and the first ``bringup`` starts three or four node processes that all compile the
same kernels at once (the bridge, the controller and the dynamics server share most of them):
minutes of CPU before the first cycle, repeated in each process, on a 2-core machine enough to
make the nodes miss their start-up deadlines.  ``warm`` runs, in one process, what those nodes
run at start-up and in their first cycles, on the bundled robots and every base:

* the ``Robot`` API (inverse and forward dynamics, mass matrix, gravity, bias, Jacobians, link
  poses, IK, statics, simulation with each core integrator, the batches) on a fixed, a floating,
  a planar and a differential-drive base;
* the bridge's composed loop (``rbd_ros.sim.closed_loop.composed_loop``: the ``Simulator`` and
  the ``ControlLoop``, whose ``warm_up`` loads the law's kernels and IK) for every law, and the
  mobile loop for every mobile law.

``scripts/setup.sh`` runs it (a few minutes of compilation on a fresh machine, seconds when
cached); a kernel it misses still compiles on first use, as before.  Each step is timed and a
failure is reported and skipped: warming is an optimisation, never a reason to fail.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

STEPS = 3  # composed-loop cycles per law: the first compiles, the rest prove it runs


def _robot_api(robot) -> None:  # noqa: ANN001 - rbd_ros.Robot
    """One call of each public entry point a node serves (values irrelevant, types matter)."""
    from rbd_ros.algorithm.integrators import CORE_INTEGRATORS

    q = robot.neutral() if hasattr(robot, "neutral") else np.zeros(robot.nq)
    v, a, u = np.zeros(robot.nv), np.zeros(robot.nv), np.zeros(robot.nu)
    robot.inverse_dynamics(q, v, a)
    robot.forward_dynamics(q, v, u)
    robot.mass_matrix(q)
    robot.gravity(q)
    robot.bias(q, v)
    robot.fk(q)
    robot.link_poses(q)
    robot.jacobian(q)
    robot.static_torques(q, np.zeros(6))
    if robot.base_type != "fixed":
        robot.simulate(q, v, np.zeros((2, robot.nu)), 1e-3)
        return
    n = robot.dof
    robot.jacobian_dot_times_qd(q, v)
    robot.coriolis_matrix(q, v)
    robot.ik(robot.fk(q), seeds=q)
    for integrator in CORE_INTEGRATORS:
        robot.simulate(q, v, np.zeros((2, n)), 1e-3, integrator=integrator)
    states = np.zeros((4, n))
    robot.inverse_dynamics(states, states, states)
    robot.forward_dynamics(states, states, states)
    robot.mass_matrix(states)
    robot.gravity(states)


def _composed(model, law: str) -> None:  # noqa: ANN001 - MdhModel
    from rbd_ros.sim.closed_loop import composed_loop

    step, _, _ = composed_loop(model, law)
    for _ in range(STEPS):
        step()


def _mobile(model, law: str) -> None:  # noqa: ANN001 - MdhModel
    from rbd_ros.sim.closed_loop import mobile_composed_loop

    step, _, _ = mobile_composed_loop(model, law)
    for _ in range(STEPS):
        step()


def tasks() -> list[tuple[str, Callable[[], None]]]:
    """``(name, call)`` of every warming step, in order."""
    from rbd_ros.control.gains import LAWS
    from rbd_ros.control.mobile_laws import MOBILE_LAWS
    from rbd_ros.model import MdhModel
    from rbd_ros.robot import Robot
    from rbd_ros.util.resources import bundled_urdf, config_file

    def model(name: str) -> MdhModel:
        return MdhModel.from_yaml(str(config_file(name)))

    out: list[tuple[str, Callable[[], None]]] = [
        ("Robot API, fixed base (arm7)", lambda: _robot_api(Robot(model("arm7")))),
        ("Robot API, floating base (mobile_arm7)",
         lambda: _robot_api(Robot.from_urdf(str(bundled_urdf("mobile_arm7")), tip_link="tool0", base_type="floating"))),
        ("Robot API, planar base (omni_arm7)", lambda: _robot_api(Robot(model("omni_arm7")))),
        ("Robot API, diff-drive base (mobile_arm7)", lambda: _robot_api(Robot(model("mobile_arm7")))),
    ]
    out += [(f"composed loop, {law} (arm7)", lambda law=law: _composed(model("arm7"), law)) for law in LAWS]
    out += [(f"mobile loop, {law} (mobile_arm7)", lambda law=law: _mobile(model("mobile_arm7"), law))
            for law in MOBILE_LAWS]
    return out


def warm(say: Callable[[str], None] = print, part: int = 0, parts: int = 1) -> int:
    """Run the steps ``part, part + parts, ...`` of ``tasks``; returns the number that failed
    (each said with its error)."""
    import warnings

    failed = 0
    t0 = time.perf_counter()
    for name, call in tasks()[part::parts]:
        t = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call()
        except Exception as exc:  # noqa: BLE001 - warming is best effort: said, then skipped
            failed += 1
            say(f"[warm] {name}: skipped ({type(exc).__name__}: {exc})")
            continue
        say(f"[warm] {name}: {time.perf_counter() - t:.1f} s")
    say(f"[warm] part {part + 1} of {parts}: kernels compiled or loaded in {time.perf_counter() - t0:.1f} s"
        + (f" ({failed} step(s) skipped)" if failed else ""))
    return failed


def main(argv: list[str] | None = None) -> int:
    """``rbd-ros warm [--jobs N]``: the steps in ``N`` processes at once (default 2, this
    machine's cores; each kernel a step needs is compiled by the first process that reaches it
    and loaded by the others once cached).  Exit status 0 even when a step was skipped."""
    import argparse
    import subprocess
    import sys

    parser = argparse.ArgumentParser(prog="rbd-ros warm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="processes at once (default 2)")
    parser.add_argument("--part", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    jobs = max(1, args.jobs)
    if args.part is not None or jobs == 1:
        warm(lambda line: print(line, flush=True), args.part or 0, jobs)
        return 0
    procs = [subprocess.Popen([sys.executable, "-m", "rbd_ros.sim.warm", "--jobs", str(jobs), "--part", str(k)])
             for k in range(jobs)]
    try:
        for proc in procs:
            proc.wait()
    finally:
        for proc in procs:  # stopped with this process, on any signal that reaches it
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
