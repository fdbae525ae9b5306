"""Compile the jitted kernels once, before anything needs them (``rbd-ros warm``).

Every kernel is ``cache=True``: compiled on its first call, then loaded from numba's on-disk
cache (``rbd_ros.algorithm.jit_cache``) by every later process.  On a fresh install nothing is
cached yet, and the first ``bringup`` starts three or four node processes that all compile the
same kernels at once (the bridge, the controller and the dynamics server share most of them):
minutes of CPU before the first cycle, repeated in each process, on a 2-core machine enough to
make the nodes miss their start-up deadlines.  ``warm`` runs, once for all of them, what those nodes
run at start-up and in their first cycles, on the bundled robots and every base:

* the ``Robot`` API (inverse and forward dynamics, mass matrix, gravity, bias, Jacobians, link
  poses, IK, statics, energies, simulation with each core integrator, the batches) on a fixed,
  a floating, a planar and a differential-drive base, with the dynamics server's start-up IK
  (one pose and a batch under a time limit);
* the bridge's composed loop (``rbd_ros.sim.closed_loop.composed_loop``: the ``Simulator`` and
  the ``ControlLoop``, whose ``warm_up`` loads the law's kernels and IK) for every law, once
  more with gains from the model (a robot the gains file does not name: scheduled damping),
  the bridge with its F/T sensor, and the mobile loop for every mobile law.

Kernels only a test or two call (the formulations of ``rbd_ros.formulations``, the Lie-group
rigid body, a test's jitted callback) are left to their first use.

``rbd-ros warm --demo`` runs only what ``make demo`` runs (issue 39): the bringup's tour plan,
the dynamics server's kernels (``server_kernels``, which the server itself loads on a worker
after ``ready``), the state publisher's link poses, and the bridge with the controller's law
(computed torque) and its IK; the nodes compile only what they call (``algorithm.first_use``),
so the rest waits for its first use.  ``scripts/setup.sh`` runs ``--demo`` for ``make demo``
and everything for ``make test`` (a few minutes of compilation on a fresh machine, seconds
when cached); a kernel it misses still compiles on first use, as before.  Each step is timed and a
failure is reported and skipped: warming is an optimisation, never a reason to fail.

With ``--jobs N`` the steps run in ``N`` processes that share one queue and one compiler:

* each process takes the next step no other has taken (a claim file per step in a folder of
  the run), so the processes end together whatever the steps cost, not only when a fixed
  split of the list happens to balance;
* each kernel signature is compiled by one process at a time
  (``rbd_ros.algorithm.jit_cache.one_compiler``: a file lock per signature); a process that
  needs a signature another is compiling waits, then loads it from the cache.  Without it,
  the processes compiled the eager entry points of ``rbd_ros.algorithm.checked`` (imported
  by every ``Robot``) and every kernel their steps shared once each.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable

import numpy as np

from rbd_ros.algorithm.jit_cache import one_compiler
from rbd_ros.control.gains import LAWS
from rbd_ros.model import MdhModel
from rbd_ros.sim.closed_loop import composed_loop, mobile_composed_loop
from rbd_ros.util.resources import bundled_urdf, config_file

STEPS = 3  # composed-loop cycles per law: the first compiles, the rest prove it runs
#: the laws whose composed loop compiles longest (task space: Cartesian errors, Jacobians),
#: started first (``tasks``); on a fresh cache under load: 55-58 s each, the joint laws 7-20 s
LONGEST = ("task_pd", "resolved_acceleration")


def _robot_api(robot) -> None:  # rbd_ros.Robot
    """One call of each public entry point a node serves (values irrelevant, types matter)."""
    from rbd_ros.algorithm.integrators import CORE_INTEGRATORS  # lazy: the integrators' kernels (0.3 s of import)
    from rbd_ros.lie.so3 import orientation_angles, orientation_error  # lazy: lie.so3 (numba) (0.3 s of import)

    q = robot.neutral() if hasattr(robot, "neutral") else np.zeros(robot.nq)
    v, a, u = np.zeros(robot.nv), np.zeros(robot.nv), np.zeros(robot.nu)
    robot.inverse_dynamics(q, v, a)
    robot.inverse_dynamics(q, v, a, tool_wrench=np.zeros(6))  # the validated path's kernels
    robot.forward_dynamics(q, v, u)
    robot.mass_matrix(q)
    robot.gravity(q)
    robot.bias(q, v)
    robot.fk(q)
    robot.link_poses(q)
    if robot.base_type == "fixed":  # the batch kernels (a mobile base's fk and link_poses take one state)
        robot.fk(np.stack([q, q]))  # the reports' and the sweep's tool errors
        robot.link_poses(np.stack([q, q]))  # the tour planner's floor check
    robot.jacobian(q)
    robot.static_torques(q, np.zeros(6))
    if robot.base_type != "diff_drive":  # the derivatives (issue 42; a diff drive's are refused)
        robot.inverse_dynamics_derivatives(q, v, a)
        robot.inverse_dynamics_derivatives(q, v, a, tool_wrench=np.zeros(6))  # the validated path
        robot.forward_dynamics_derivatives(q, v, u)
    if robot.base_type != "fixed":
        robot.simulate(q, v, np.zeros((2, robot.nu)), 1e-3)
        states, rates = np.stack([q, q]), np.zeros((2, robot.nv))  # a trajectory request:
        robot.inverse_dynamics(states, rates, rates)  # the batch kernels (algorithm.base_batch)
        robot.mass_matrix(states)
        robot.bias(states, rates)
        if robot.base_type == "floating":  # a ground base's forward dynamics has no batch kernel
            robot.forward_dynamics(states, rates, rates)
        return
    n = robot.dof
    robot.jacobian_dot_times_qd(q, v)
    robot.coriolis_matrix(q, v)
    T = robot.fk(q)
    robot.ik(T, seeds=q)
    # the dynamics server's start-up (``DynamicsServer._warm``) and the controller's: one pose
    # and a batch (``dls_solve_batch``) under a time limit
    robot.ik(T, seeds=q, max_restarts=0, timeout=1.0)
    robot.ik(np.stack([T, T]), seeds=np.stack([q, q]), max_restarts=0, timeout=1.0)
    robot.ik(T, seeds=q, method="newton")
    robot.joint_wrenches(q, np.zeros(6))
    robot.kinetic_energy(q, v)
    robot.potential_energy(q)
    robot.analytic_jacobian(np.full(n, 0.3))  # not at q = 0: the Euler angles' singularity
    orientation_error(T, T)  # a task-space target's move (control.trajectory.CartesianMove)
    orientation_angles(T[None], T[None])  # the bringup report's tool errors (sim.closed_loop.tool_errors)
    for integrator in CORE_INTEGRATORS:
        robot.simulate(q, v, np.zeros((2, n)), 1e-3, integrator=integrator)
    states = np.zeros((4, n))
    robot.inverse_dynamics(states, states, states)
    robot.forward_dynamics(states, states, states)
    robot.mass_matrix(states)
    robot.gravity(states)
    robot.bias(states, states)
    robot.inverse_dynamics_derivatives(states, states, states)
    robot.forward_dynamics_derivatives(states, states, states)


def server_kernels(robot, moving: bool = False, parts: tuple[str, ...] = ("dynamics", "ik")) -> None:
    """One call of each kernel the dynamics server's services run (``DynamicsServer._warm``
    calls this on a worker once the server is ready): ``dynamics``: ID, M, linearize, and for a fixed base
    g, J, link poses, statics; ``ik`` (fixed base): FK, IK (one pose and a batch, under a time
    limit) and a simulation."""
    q = robot.neutral() if hasattr(robot, "neutral") else np.zeros(robot.nq)
    v = np.zeros(robot.nv)
    if "dynamics" in parts:
        robot.inverse_dynamics(q, v, v)
        robot.mass_matrix(q)
        if robot.base_type != "diff_drive":  # linearize (issue 42; refused for a diff drive)
            robot.linearize(q, v, v)
            # and its discrete form (dt > 0: the base's default integrator; a fixed base's RK4
            # step is a kernel of its own, algorithm.discrete_step: ~9 s to compile, here on the
            # server's warm-up worker, not in the setup's warm step nor a client's first request)
            robot.linearize(q, v, v, dt=1e-3)
    if moving:
        return
    if "dynamics" in parts:
        robot.gravity(q)
        robot.jacobian(q)
        robot.link_poses(q)
        robot.static_torques(q, np.zeros(6))
    if "ik" in parts:
        q = np.clip(q, robot.model.lower, robot.model.upper)
        T = robot.fk(q)
        robot.ik(T, seeds=q, max_restarts=0, timeout=1.0)
        robot.ik(np.stack([T, T]), seeds=np.stack([q, q]), max_restarts=0, timeout=1.0)
        robot.simulate(q, v, np.zeros((1, robot.dof)), 1e-3)


def _composed(model, law: str) -> None:  # MdhModel
    step, _, loop = composed_loop(model, law)
    for _ in range(STEPS):
        step()
    until = time.monotonic() + 600.0
    while not loop.idle() and time.monotonic() < until:  # the IK worker's warm-up pose (ControlLoop)
        time.sleep(0.05)
    loop.close()


def _demo_start(name: str) -> None:
    """What ``rbd-ros bringup`` computes before it starts the nodes (the tour, planned inside
    the limits and above the floor) and the state publisher's link poses, on bundled ``name``."""
    from rbd_ros.control.tour import plan_tour  # lazy: the tour planner (0.3 s of import)
    from rbd_ros.robot import Robot  # lazy: the robot front (0.3 s of import)

    robot = Robot.from_urdf(str(bundled_urdf(name)))
    plan_tour(robot.model)
    robot.urdf_link_poses(np.zeros(robot.dof))


def _mobile(model) -> None:  # MdhModel
    """The mobile loop of every mobile law (imported here: ``mobile_laws`` imports the moving
    bases' eager entry points, which ``tasks`` must not compile before the steps start)."""
    from rbd_ros.control.mobile_laws import MOBILE_LAWS  # lazy: its eager entries: see the docstring

    for law in MOBILE_LAWS:
        step, _, _ = mobile_composed_loop(model, law)
        for _ in range(STEPS):
            step()


def _ft_bridge(model) -> None:  # MdhModel
    """The bridge with its F/T sensor on (the contact and press nodes): each step reads the
    sensor less the payload, and the node estimates the wrench from the joint torques
    (``rbd_ros.control.wrench``)."""
    from rbd_ros.sim.simulator import BridgeConfig, Simulator  # lazy: the simulator (0.4 s of import)

    sim = Simulator(model, BridgeConfig(mode="lockstep", ft_sensor=True), log=lambda level, msg: None)
    for _ in range(STEPS):
        sim.command(np.zeros(model.dof))
        sim.step()
    q = np.zeros(model.dof)
    sim.ft.estimate(q, q, q, q, np.empty(6))  # /ft_sensor/wrench_estimate (ros.contact_topics)


def demo_tasks() -> list[tuple[str, Callable[[], None]]]:
    """``(name, call)`` of the steps of ``--demo`` (module docstring): ``make demo``'s
    ``rbd-ros bringup --robot puma560 --controller computed_torque``, longest first."""
    def robot():  # rbd_ros.Robot
        from rbd_ros.robot import Robot  # lazy: the robot front (0.3 s of import)

        return Robot.from_urdf(str(bundled_urdf("puma560")))

    def model():  # MdhModel
        return robot().model

    return [("bridge and controller, computed_torque (puma560)", lambda: _composed(model(), "computed_torque")),
            ("dynamics server's IK and simulation (puma560)", lambda: server_kernels(robot(), parts=("ik",))),
            ("dynamics server's dynamics (puma560)", lambda: server_kernels(robot(), parts=("dynamics",))),
            ("bringup's tour and the state publisher (puma560)", lambda: _demo_start("puma560"))]


def tasks() -> list[tuple[str, Callable[[], None]]]:
    """``(name, call)`` of every warming step, in the order the processes take them (no kernel
    module is imported, so nothing compiled, until a step runs): the fixed base first (its
    eager entry points, ``algorithm.checked``, are imported by every ``Robot``: every other
    step waits for them), beside it the floating base (the moving bases' eager entry points,
    ``floating_base`` then ``planar_base``: the longest chain of compilations), then the laws
    that compile longest, the ground bases, the other laws, the F/T sensor and the mobile
    loops (the shortest last, so that the processes end together)."""
    def model(name: str):  # MdhModel
        return MdhModel.from_yaml(str(config_file(name)))

    def robot(name: str, **urdf):  # rbd_ros.Robot
        from rbd_ros.robot import Robot  # lazy: the robot front (0.3 s of import)

        return Robot.from_urdf(str(bundled_urdf(name)), **urdf) if urdf else Robot(model(name))

    laws = [(f"composed loop, {law} (arm7)", lambda law=law: _composed(model("arm7"), law))
            for law in sorted(LAWS, key=lambda law: law not in LONGEST)]
    out: list[tuple[str, Callable[[], None]]] = [
        ("Robot API, fixed base (arm7)", lambda: _robot_api(robot("arm7"))),
        ("Robot API, floating base (mobile_arm7)",
         lambda: _robot_api(robot("mobile_arm7", tip_link="tool0", base_type="floating"))),
        *laws[:len(LONGEST)],
        ("Robot API, diff-drive base (mobile_arm7)", lambda: _robot_api(robot("mobile_arm7"))),
        ("Robot API, planar base (omni_arm7)", lambda: _robot_api(robot("omni_arm7"))),
        *laws[len(LONGEST):],
        # a robot the gains file does not name (any URDF arm): gains from the model, the
        # damping scheduled each cycle (``laws._schedule_gains``)
        ("composed loop, pd, model gains (arm7)",
         lambda: _composed(dataclasses.replace(model("arm7"), name="unnamed"), "pd")),
        ("bridge with its F/T sensor (arm7)", lambda: _ft_bridge(model("arm7"))),
        ("mobile loops, every mobile law (mobile_arm7)", lambda: _mobile(model("mobile_arm7"))),
    ]
    return out


def _claim(folder: str, index: int) -> bool:
    """Take step ``index`` of the shared queue in ``folder``; False if another process has."""
    try:
        os.close(os.open(os.path.join(folder, f"step-{index}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def warm(say: Callable[[str], None] = print, part: int = 0, parts: int = 1, shared: str | None = None,
         demo: bool = False) -> int:
    """Run the steps ``part, part + parts, ...`` of ``tasks`` (``demo_tasks`` with ``demo``) or,
    with ``shared`` (a folder the
    ``parts`` processes share), each step no other process has taken yet, one compiler per
    kernel signature (module docstring); returns the number that failed (each said with its
    error)."""


    failed = 0
    t0 = time.perf_counter()
    with contextlib.ExitStack() as scope:
        waits = None if shared is None else scope.enter_context(one_compiler(shared))  # before any compile
        steps = list(enumerate(demo_tasks() if demo else tasks()))
        mine = steps[part::parts] if shared is None else steps
        for index, (name, call) in mine:
            if shared is not None and not _claim(shared, index):
                continue
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
        + (f", {waits.waited:.1f} s of it waiting for another part's" if waits is not None else "")
        + (f" ({failed} step(s) skipped)" if failed else ""))
    return failed


def main(argv: list[str] | None = None) -> int:
    """``rbd-ros warm [--jobs N]``: the steps in ``N`` processes at once (default 2, this
    machine's cores) sharing one queue and one compiler (module docstring).  Exit status 0
    even when a step was skipped."""

    parser = argparse.ArgumentParser(prog="rbd-ros warm", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="processes at once (default 2)")
    parser.add_argument("--demo", action="store_true",
                        help="only what `make demo` runs (the bringup of the PUMA 560 under computed torque)")
    parser.add_argument("--part", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--shared", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    jobs = max(1, args.jobs)
    if args.part is not None or jobs == 1:
        warm(lambda line: print(line, flush=True), args.part or 0, jobs, args.shared, demo=args.demo)
        return 0
    shared = tempfile.mkdtemp(prefix="rbd_ros-warm-")
    procs = [subprocess.Popen([sys.executable, "-m", "rbd_ros.sim.warm", "--jobs", str(jobs), "--part", str(k),
                               "--shared", shared, *(["--demo"] if args.demo else [])]) for k in range(jobs)]
    try:
        for proc in procs:
            proc.wait()
    finally:
        for proc in procs:  # stopped with this process, on any signal that reaches it
            if proc.poll() is None:
                proc.terminate()
                proc.wait()
        shutil.rmtree(shared, ignore_errors=True)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
