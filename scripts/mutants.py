#!/usr/bin/env python3
"""A mutation audit (issue 45): plausible one-line bugs planted one at a time, each run against
the tests that cover its module; a mutant is *killed* when those tests fail.

    .venv/bin/python scripts/mutants.py                 # every mutation, the table printed
    .venv/bin/python scripts/mutants.py --write         # ... and written to docs/mutation-audit.md
    .venv/bin/python scripts/mutants.py --only entries-qdd-stride,gains-viscous   # some of them
    .venv/bin/python scripts/mutants.py --list          # the mutations, nothing run
    make mutants                                        # = --write

Never in place: the working tree (tracked and untracked files, the numba caches in the
``__pycache__`` folders, not ``.venv``, ``.git``, ``build``, ``out``) is copied once to a
temporary folder, and each mutation is written into that copy, its tests run there with
``PYTHONPATH`` on the copy and ``cwd`` in it (checked first: ``import rbd_ros`` in the copy
must load the copy's package, not the editable install's), and the file restored from the
bytes read before (``finally``); the copy is deleted at exit.  A kernel's numba cache is keyed
on its sources by relative path (``algorithm.jit_cache``), so the copied caches load; a
mutated kernel module recompiles its kernels (and again once restored).

Each mutation is ``Mutation(id, file, original, replacement, tests, note)``: ``original`` must
occur exactly once in ``file``.  ``issue`` marks the 15 survivors of issue 45's first audit.
An ``equivalent`` reason marks a mutation that changes no behaviour (not counted in the rate).
Before the mutants, each distinct set of tests is run unmutated (the baseline): a mutant is
only counted when its tests pass without it.  ``--budget`` seconds bound the run (the mutations
left over are listed as not run); each test run has ``--timeout`` seconds (a time-out counts as
killed, and says so).
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = REPO / ".venv" / "bin" / "python"
SKIP = {".venv", ".git", "build", "out", ".pytest_cache", ".hypothesis"}
DOC = REPO / "docs" / "mutation-audit.md"


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str
    original: str
    replacement: str
    tests: tuple[str, ...]
    note: str = ""
    issue: bool = False
    equivalent: str = ""


def M(id: str, file: str, original: str, replacement: str, tests, note: str = "",
      issue: bool = False, equivalent: str = "") -> Mutation:
    return Mutation(id, file, original, replacement, (tests,) if isinstance(tests, str) else tuple(tests),
                    note, issue, equivalent)


T_ENTRY = "test/core/test_entry_refusals.py"
T_GAINS = "test/control/test_gains_hand.py"
T_FORCE = "test/control/test_wrench_effort_check.py"
T_IDENT = "test/identification/test_weights_and_excitation.py"
T_CONTACT = "test/sim/test_contact_sign.py"
T_SP = "test/ros/test_state_publisher_transforms.py"
T_SWEEP = "test/sweep/test_sweep_issue38.py"

MUTATIONS: list[Mutation] = [
    # -- the 15 survivors of issue 45's audit: 2, 4, 5, 6, 7 (tests by this audit's author) ...
    M("sp-odom-order", "rbd_ros/ros/nodes/state_publisher.py",
      "T = pose_matrix([p.x, p.y, p.z], [o.x, o.y, o.z, o.w]) @ self.root_in_base",
      "T = self.root_in_base @ pose_matrix([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])", T_SP,
      "odom -> root composed in the wrong order", issue=True),
    M("sp-reset-stamps", "rbd_ros/ros/nodes/state_publisher.py",
      "return last is None or stamp - last >= self.period * 1e9 or stamp < last",
      "return last is None or stamp - last >= self.period * 1e9", T_SP,
      "/tf stops while stamps go back after a simulation reset", issue=True),
    M("est-weights-inverted", "rbd_ros/identification/estimate.py",
      "wgt = 1.0 / np.maximum(sigma, floor)[joint]", "wgt = np.maximum(sigma, floor)[joint]", T_IDENT,
      "least-squares weights inverted (noisiest joints count most)", issue=True),
    M("exc-no-velocity", "rbd_ros/identification/excitation.py",
      "vmax / np.maximum(np.abs(qd).max(axis=0), 1e-12))[:, None]",
      "np.inf + 0 * np.abs(qd).max(axis=0))[:, None]", T_IDENT,
      "the excitation no longer respects the velocity limits", issue=True),
    M("probe-sign", "rbd_ros/sim/contact_task.py",
      "sign = 1.0 if c.geom1 == tip else -1.0", "sign = 1.0", T_CONTACT,
      "probe_contact ignores which geom of the pair is the probe", issue=True),
    M("wrench-no-gravity", "rbd_ros/control/force_laws.py",
      "need = robot.gravity(q) + robot.jacobian(q).T @ w", "need = robot.jacobian(q).T @ w", T_FORCE,
      "set_target_wrench's effort check leaves out gravity", issue=True),
    M("ft-reset-seed", "rbd_ros/sim/ft_sensor.py",
      "        self.rng = np.random.default_rng(self.seed)\n        self._first = True",
      "        self._first = True", T_CONTACT,
      "FTSensor.reset() no longer re-seeds the noise", issue=True),
    M("scene-solimp-order", "rbd_ros/sim/scene.py",
      "0 < solimp[0] <= solimp[1] < 1", "0 < solimp[0] < 1 and 0 < solimp[1] < 1", T_CONTACT,
      "the solimp d0 <= d1 check gone", issue=True),
    M("gains-viscous", "rbd_ros/control/gains.py",
      "kd = np.where(over, 0.0, np.maximum(2.0 * zeta * m * w2 - b, 0.0))",
      "kd = np.where(over, 0.0, np.maximum(2.0 * zeta * m * w2, 0.0))", T_GAINS,
      "_joint_pd's second-order kd no longer subtracts the viscous friction", issue=True),
    M("entries-qdd-stride", "rbd_ros/algorithm/entries.py",
      "if strided(q) or strided(qd) or strided(qdd):", "if strided(q) or strided(qd):", T_ENTRY,
      "rnea_entry no longer refuses a strided qdd", issue=True),
    # survivors 1 and 3: the follow action's and the sweep's, tests by the helpers owning them
    M("action-tolerance-swap", "rbd_ros/ros/follow_action.py",
      'ToleranceDefaults(path_position=prm["path_tolerance"], goal_position=prm["goal_tolerance"],',
      'ToleranceDefaults(path_position=prm["goal_tolerance"], goal_position=prm["path_tolerance"],',
      "test/ros/test_follow_action_clients.py::"
      "test_a_vanished_client_leaves_the_controller_serving_and_the_parameters_act",
      "the node's path and goal tolerance parameters swapped", issue=True),
    M("grid-negative", "rbd_ros/sweep/grid.py", "if not (0.0 <= float(p) < 100.0)]",
      "if not (-100.0 < float(p) < 100.0)]", T_SWEEP + "::test_a_percentage_outside_0_100_is_refused",
      "a negative perturbation percentage accepted", issue=True),
    M("cell-diverged", "rbd_ros/sweep/cell.py", '"diverged": bool(diverged or sim.stats.unstable_steps > 0),',
      '"diverged": bool(diverged),', T_SWEEP + "::test_diverged_counts_the_simulators_unstable_steps",
      "diverged ignores the simulator's unstable steps", issue=True),
    M("local-zero-workers", "rbd_ros/sweep/backends.py", "not isinstance(workers, int) or workers < 1:",
      "not isinstance(workers, int) or workers < 0:", T_SWEEP + "::test_local_refuses_zero_workers_at_the_call",
      "local(workers=0) accepted from the API", issue=True),
    M("ray-workers-cap", "rbd_ros/sweep/backends.py",
      'limit = workers or max(1, int(ray_.cluster_resources().get("CPU", 1)))',
      'limit = max(1, int(ray_.cluster_resources().get("CPU", 1)))',
      T_SWEEP + "::test_ray_keeps_at_most_workers_tasks_in_flight", "the Ray backend ignores its workers cap",
      issue=True),
    # -- others on the modules changed this release (git log --since=2026-11-20)
    M("entries-fd-tau", "rbd_ros/algorithm/entries.py",
      "if strided(q) or strided(qd) or strided(tau):", "if strided(q) or strided(qd):", T_ENTRY,
      "forward_dynamics_entry no longer refuses a strided tau"),
    M("entries-crba", "rbd_ros/algorithm/entries.py",
      "    if strided(q):\n        return 1\n    crba(", "    if False:\n        return 1\n    crba(", T_ENTRY,
      "crba_entry no longer refuses a strided q"),
    M("entries-gravity", "rbd_ros/algorithm/entries.py",
      "    if strided(q):\n        return 1\n    gravity(", "    if False:\n        return 1\n    gravity(", T_ENTRY,
      "gravity_entry no longer refuses a strided q"),
    M("entries-jacobian", "rbd_ros/algorithm/entries.py",
      "    if strided(q):\n        return 1\n    jacobian(", "    if False:\n        return 1\n    jacobian(",
      T_ENTRY, "jacobian_entry no longer refuses a strided q"),
    M("entries-align", "rbd_ros/algorithm/f8vector.py",
      "return x.strides[0] != 8 or x.ctypes.data & 7 != 0", "return x.strides[0] != 8", T_ENTRY,
      "an unaligned state taken as contiguous",
      equivalent="on x86-64 (this machine) a float64 load from an unaligned address is exact, so the kernel "
                 "given it reads the right numbers (run: survived, the unaligned variant of every argument "
                 "answered to 1e-11); the check is for CPUs and vector code that need alignment"),
    M("entries-stride-sign", "rbd_ros/algorithm/f8vector.py",
      "return x.strides[0] != 8 or x.ctypes.data & 7 != 0", "return x.strides[0] > 8 or x.ctypes.data & 7 != 0",
      T_ENTRY, "a reversed (negative-stride) state taken as contiguous"),
    M("gains-kp-over", "rbd_ros/control/gains.py",
      "np.maximum(np.maximum(omega * (b - m * omega), m * omega**2), kp_f)",
      "np.maximum(np.maximum(omega * b, m * omega**2), kp_f)", T_GAINS,
      "the first-order kp forgets the inertia"),
    M("gains-kp-second", "rbd_ros/control/gains.py",
      "kp = np.where(over, kp_over, m * w2**2)", "kp = np.where(over, kp_over, m * w2)", T_GAINS,
      "second-order kp = m w instead of m w^2"),
    M("gains-over-branch", "rbd_ros/control/gains.py",
      "kd = np.where(over, 0.0, np.maximum(2.0 * zeta * m * w2 - b, 0.0))",
      "kd = np.maximum(2.0 * zeta * m * w2 - b, 0.0)", T_GAINS,
      "an over-damped joint given a kd when the Coulomb rule raises its w2"),
    M("gains-wcap", "rbd_ros/control/gains.py",
      "w_cap_j = np.minimum(m_min / (2.0 * zeta * m * dt), w_cap)",
      "w_cap_j = np.minimum(1.0 / (2.0 * zeta * dt), w_cap)", T_GAINS,
      "the per-joint discrete cap ignores the joint's inertia ratio m_min / m"),
    M("wrench-abs", "rbd_ros/control/force_laws.py",
      "over = np.flatnonzero(np.abs(need) > self.limit)", "over = np.flatnonzero(need > self.limit)", T_FORCE,
      "the effort check sees positive torques only"),
    M("wrench-flip", "rbd_ros/control/force_laws.py",
      "flipped = (old != 0.0) & (w * old <= 0.0)", "flipped = (old != 0.0) & (w * old < 0.0)",
      "test/control/test_force_integral_reset.py", "the force integral kept on a target set to zero"),
    M("wrench-finite", "rbd_ros/control/force_laws.py",
      "if w.shape != (6,) or not np.isfinite(w).all():", "if w.shape != (6,):", T_FORCE,
      "a NaN target wrench accepted"),
    M("est-sigma-dof", "rbd_ros/identification/estimate.py",
      "dof = max(r.size - base.count / n, 1.0)", "dof = max(r.size, 1.0)", T_IDENT,
      "the residual standard deviation without the parameters' degrees of freedom"),
    M("est-enough-rows", "rbd_ros/identification/estimate.py",
      "if Wb.shape[0] <= base.count:", "if Wb.shape[0] < 1:", T_IDENT,
      "fewer equations than base parameters not refused"),
    M("est-s2", "rbd_ros/identification/estimate.py",
      "s2 = (rw @ rw) / max(Ww.shape[0] - base.count, 1)", "s2 = (rw @ rw) / max(Ww.shape[0], 1)", T_IDENT,
      "the standard deviations' variance without the degrees of freedom"),
    M("exc-start-room", "rbd_ros/identification/excitation.py",
      "inner = np.clip(start, lo + 0.2 * span, hi - 0.2 * span)", "inner = np.clip(start, lo, hi)", T_IDENT,
      "the start is no longer moved off the limits to swing both ways"),
    M("exc-effort", "rbd_ros/identification/excitation.py",
      "if not (np.any(tau > cap) or low):", "if not low:", T_IDENT, "the excitation ignores the effort limits"),
    M("exc-rest", "rbd_ros/identification/excitation.py",
      "C[1, harmonics:] = lw**2", "C[1, harmonics:] = lw", T_IDENT,
      "the series no longer starts at rest (qdd(0) != 0)"),
    M("probe-frame", "rbd_ros/sim/contact_task.py",
      "fw = c.frame.reshape(3, 3).T @ f[:3]", "fw = c.frame.reshape(3, 3) @ f[:3]", T_CONTACT,
      "the contact frame applied untransposed"),
    M("probe-exclude", "rbd_ros/sim/contact_task.py",
      "if tip not in (c.geom1, c.geom2) or c.exclude != 0 or c.efc_address < 0:",
      "if tip not in (c.geom1, c.geom2):", T_CONTACT, "excluded / inactive contacts counted",
      equivalent="a contact MuJoCo excludes (in the gap: exclude = 1) or leaves without constraint rows "
                 "(efc_address -1) gets 0 from mj_contactForce, so counted it adds nothing and f[0] > 0 is "
                 "false: no touch"),
    M("probe-touch", "rbd_ros/sim/contact_task.py",
      "touching = touching or f[0] > 0.0", "touching = True", T_CONTACT,
      "touching said for a contact that pushes nothing"),
    M("ft-payload", "rbd_ros/sim/ft_sensor.py", "        x -= self.payload\n", "", "test/sim/test_scene_contact.py",
      "the compensated wrench keeps the payload's weight"),
    M("ft-first", "rbd_ros/sim/ft_sensor.py", "a = 1.0 if self._first else self.alpha", "a = self.alpha",
      T_CONTACT, "the low-pass starts from zero instead of the first reading"),
    M("ft-zero-noise", "rbd_ros/sim/ft_sensor.py", "if not (math.isfinite(v) and v >= 0):",
      "if not (math.isfinite(v) and v > 0):", "test/sim/test_scene_contact.py", "a noise-free sensor refused"),
    M("scene-both", "rbd_ros/sim/scene.py", "if all(given):", "if any(given):", T_CONTACT,
      "a given solimp alone refused as if both were given"),
    M("scene-damping", "rbd_ros/sim/scene.py", "if not (stiff > 0 and damp >= 0):", "if not (stiff > 0):",
      T_CONTACT, "a negative contact damping accepted"),
    M("scene-solref", "rbd_ros/sim/scene.py", "if not (solref[0] > 0 and solref[1] > 0 and",
      "if not (solref[0] > 0 and", T_CONTACT, "a non-positive solref damping ratio accepted"),
    M("sp-root-in-base", "rbd_ros/ros/nodes/state_publisher.py",
      "self.root_in_base = np.linalg.solve(P[base[0]], P[base[1]])",
      "self.root_in_base = np.linalg.solve(P[base[1]], P[base[0]])", T_SP, "the root's pose in base_link inverted"),
    M("sp-nan", "rbd_ros/ros/nodes/state_publisher.py", "if not np.isfinite(self.q).all():", "if False:",
      "test/ros/test_state_publisher_node.py::test_nan_joint_state_is_not_placed_and_said",
      "a NaN position placed on /tf"),
    M("sp-rate", "rbd_ros/ros/nodes/state_publisher.py",
      "return last is None or stamp - last >= self.period * 1e9 or stamp < last",
      "return last is None or stamp - last >= 0.5 * self.period * 1e9 or stamp < last", T_SP,
      "publish_frequency doubled"),
    M("sat-flip", "rbd_ros/control/saturation.py", "if tau[i] * prev[i] < 0.0:", "if tau[i] * prev[i] <= 0.0:",
      "test/control/test_control_handoff.py::test_saturation_counts_match_the_commands",
      "a saturated command from zero counted as a sign flip"),
    M("sat-prev", "rbd_ros/control/saturation.py", "        prev[i] = tau[i]\n", "",
      "test/control/test_control_handoff.py::test_saturation_counts_match_the_commands",
      "the previous command never updated"),
    M("sat-pct", "rbd_ros/control/saturation.py", "pct = 100.0 * d_at / k if k > 0", "pct = 100.0 * at / k if k > 0",
      "test/control/test_control_handoff.py::test_saturation_counts_match_the_commands",
      "the window's saturation counted since the start"),
    M("goal-limit-margin", "rbd_ros/control/follow_trajectory.py", "bad = (P < lo - 1e-9) | (P > hi + 1e-9)",
      "bad = (P < lo - 1e-6) | (P > hi + 1e-6)", "test/control/test_goal_check_values.py",
      "goal positions 1e-6 past the limits accepted"),
    M("goal-times", "rbd_ros/control/follow_trajectory.py",
      "late = np.flatnonzero(np.diff(tfs) <= 0)", "late = np.flatnonzero(np.diff(tfs) < 0)",
      "test/control/test_goal_check_values.py", "two points at the same time accepted"),
    M("goal-old", "rbd_ros/control/follow_trajectory.py", "if stamp != 0.0 and stamp + tfs[-1] <= now:",
      "if stamp != 0.0 and stamp + tfs[-1] < now:", "test/control/test_goal_check_values.py",
      "a goal ending exactly now accepted"),
    M("goal-future", "rbd_ros/control/follow_trajectory.py", "if stamp - now > future_limit:",
      "if stamp - now > 2 * future_limit:", "test/control/test_goal_check_values.py", "the future-stamp limit doubled"),
    M("goal-start-tol", "rbd_ros/control/follow_trajectory.py", "if gap[i] > start_tolerance:",
      "if gap[i] > 2 * start_tolerance:", "test/control/test_goal_check_values.py", "the start tolerance doubled"),
    M("goal-end-velocity", "rbd_ros/control/follow_trajectory.py",
      "moving = np.flatnonzero(np.abs(V[-1]) > VELOCITY_AT_END)", "moving = np.flatnonzero(V[-1] > VELOCITY_AT_END)",
      "test/control/test_goal_check_values.py", "a last point moving backwards accepted"),
    M("goal-negative-time", "rbd_ros/control/follow_trajectory.py", "if tfs[0] < 0:", "if tfs[0] < -1.0:",
      "test/control/test_follow_trajectory.py test/control/test_goal_check_values.py".split(),
      "a negative first time_from_start accepted",
      ),
    M("goal-path-check", "rbd_ros/control/follow_trajectory.py",
      "        if tol_position[j] > 0.0 and abs(q_d[j] - q[j]) > tol_position[j]:\n            return j",
      "        if tol_position[j] > 0.0 and abs(q_d[j] - q[j]) > 2 * tol_position[j]:\n            return j",
      "test/control/test_follow_trajectory.py", "the path tolerance doubled in the jitted check"),
    M("goal-erase", "rbd_ros/control/follow_trajectory.py", "if abs(value - ERASE) < VELOCITY_AT_END:",
      "if abs(value - ERASE) < 0.5:",
      ("test/control/test_follow_trajectory.py", "test/control/test_goal_check_values.py"),
      "a tolerance of -0.6 taken as -1 (none)"),
    M("goal-time-tol", "rbd_ros/control/follow_trajectory.py",
      "elif j >= 0 and not (tol.goal_time > 0.0 and t - self.end_time > tol.goal_time):",
      "elif j >= 0 and not (t - self.end_time > tol.goal_time):", "test/control/test_follow_trajectory.py",
      "goal_time 0 (wait for ever) fails at once"),
    M("trig-quadrant", "rbd_ros/algorithm/trig.py",
      "return float(1 - (k & 2)) * (c if odd else s), float(1 - ((k + 1) & 2)) * (s if odd else c)",
      "return float(1 - (k & 2)) * (c if odd else s), float(1 - (k & 2)) * (s if odd else c)",
      "test/core/test_trig.py", "cos's sign in the odd quadrants"),
    M("trig-large", "rbd_ros/algorithm/trig.py", "_LARGE = 1.0e6", "_LARGE = 1.0e12", "test/core/test_trig.py",
      "the reduction used past its accurate range"),
]


def copy_tree(dest: Path) -> None:
    """The working tree into ``dest`` (module docstring)."""
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP} if Path(folder) == REPO else set()

    shutil.copytree(REPO, dest, ignore=ignore, symlinks=True)


def environment(copy: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(copy) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return env


def check_isolated(copy: Path, env: dict[str, str]) -> None:
    out = subprocess.run([str(PY), "-c", "import rbd_ros, sys; print(rbd_ros.__file__)"], cwd=copy, env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    if not Path(out).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"mutants: the copy imports {out}, not its own rbd_ros: refusing to run")


def run_tests(copy: Path, env: dict[str, str], tests: tuple[str, ...], timeout: float) -> tuple[str, float, str]:
    """``(outcome, seconds, last line)``: outcome ``pass``, ``fail`` (a test failed or errored)
    or ``timeout``."""
    cmd = [str(PY), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "--timeout", str(int(timeout)), *tests]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return "timeout", time.monotonic() - t0, "killed after the time-out"
    lines = [ln for ln in out.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    if proc.returncode == 0:
        return "pass", time.monotonic() - t0, last
    if "Timeout" in out and "failed" not in last:
        return "timeout", time.monotonic() - t0, last
    failed = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
    return "fail", time.monotonic() - t0, (failed[0] if failed else last)[:160]


def apply(copy: Path, m: Mutation) -> tuple[Path, bytes]:
    path = copy / m.file
    before = path.read_bytes()
    text = before.decode()
    count = text.count(m.original)
    if count != 1:
        raise ValueError(f"{m.id}: the original text occurs {count} times in {m.file}")
    path.write_bytes(text.replace(m.original, m.replacement).encode())
    return path, before


def table(results: list[dict], seconds: float, started: str) -> str:
    counted = [r for r in results if r["outcome"] in ("killed", "survived")]
    killed = sum(r["outcome"] == "killed" for r in counted)
    rate = 100.0 * killed / max(len(counted), 1)
    issue = [r for r in results if r["issue"]]
    lines = ["| mutation | file | bug planted | tests | outcome | s |", "|---|---|---|---|---|---|"]
    for r in results:
        tests = ", ".join(Path(t.split("::")[0]).name + ("::" + t.split("::")[1] if "::" in t else "")
                          for t in r["tests"])
        what = r["note"] + (" **(issue 45)**" if r["issue"] else "")
        outcome = r["outcome"] + (f": {r['detail']}" if r["detail"] else "")
        lines.append(f"| `{r['id']}` | `{r['file'].removeprefix('rbd_ros/')}` | {what} | {tests} | "
                     f"{outcome.replace('|', '/')} | {r['seconds']:.0f} |")
    head = [f"Run {started} UTC, {seconds / 60:.1f} min on this machine: **{killed} of {len(counted)} "
            f"killed, {rate:.1f} %** ({sum(r['outcome'] == 'killed' for r in issue)} of {len(issue)} of "
            f"issue 45's survivors); {sum(r['outcome'] == 'equivalent' for r in results)} equivalent, "
            f"{sum(r['outcome'] in ('not run', 'baseline failed', 'bad mutation') for r in results)} not counted.",
            ""]
    return "\n".join(head + lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="", help="comma-separated mutation ids")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--check", action="store_true", help="only check that each original text occurs once")
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.relative_to(REPO)}")
    ap.add_argument("--budget", type=float, default=3600.0, help="s for the whole run")
    ap.add_argument("--timeout", type=float, default=300.0, help="s per test run")
    ap.add_argument("--json", default="", help="also write the results here")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTATIONS if not args.only or m.id in args.only.split(",")]
    if args.only and len(chosen) != len(set(args.only.split(","))):
        raise SystemExit(f"mutants: unknown ids in --only: {set(args.only.split(',')) - {m.id for m in MUTATIONS}}")
    if args.check:
        bad = [(m.id, (REPO / m.file).read_text().count(m.original)) for m in chosen
               if (REPO / m.file).read_text().count(m.original) != 1]
        print("\n".join(f"{i}: the original occurs {c} times" for i, c in bad) or f"{len(chosen)} mutations apply")
        return 1 if bad else 0
    if args.list:
        for m in chosen:
            print(f"{m.id:28s} {m.file:45s} {', '.join(m.tests)}")
        return 0
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    t0 = time.monotonic()
    copy = Path(tempfile.mkdtemp(prefix="rbd_mutants_")) / "repo"
    atexit.register(shutil.rmtree, copy.parent, True)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, f: sys.exit(128 + s))  # the atexit clean-up runs
    copy_tree(copy)
    env = environment(copy)
    check_isolated(copy, env)
    print(f"mutants: {len(chosen)} mutations in a copy at {copy}", flush=True)
    baseline: dict[tuple[str, ...], tuple[str, str]] = {}
    results = []
    for m in chosen:
        r = {"id": m.id, "file": m.file, "note": m.note, "tests": list(m.tests), "issue": m.issue,
             "outcome": "", "detail": "", "seconds": 0.0}
        results.append(r)
        if m.equivalent:
            r["outcome"], r["detail"] = "equivalent", m.equivalent
            continue
        if time.monotonic() - t0 > args.budget:
            r["outcome"] = "not run"
            continue
        if m.tests not in baseline:
            outcome, secs, last = run_tests(copy, env, m.tests, args.timeout)
            baseline[m.tests] = (outcome, last)
            print(f"  baseline {', '.join(m.tests)}: {outcome} ({secs:.0f} s) {last}", flush=True)
        if baseline[m.tests][0] != "pass":
            r["outcome"], r["detail"] = "baseline failed", baseline[m.tests][1]
            continue
        try:
            path, before = apply(copy, m)
        except ValueError as exc:
            r["outcome"], r["detail"] = "bad mutation", str(exc)
            print(f"  {m.id}: {exc}", flush=True)
            continue
        try:
            outcome, r["seconds"], last = run_tests(copy, env, m.tests, args.timeout)
        finally:
            path.write_bytes(before)
        r["outcome"] = "survived" if outcome == "pass" else "killed"
        r["detail"] = "time-out" if outcome == "timeout" else (last if outcome == "fail" else "")
        print(f"  {m.id}: {r['outcome']} ({r['seconds']:.0f} s) {r['detail']}", flush=True)
    seconds = time.monotonic() - t0
    text = table(results, seconds, started)
    print(text)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.write:
        doc = DOC.read_text() if DOC.exists() else ""
        marker = "<!-- mutants table -->"
        if marker in doc:
            doc = doc[:doc.index(marker) + len(marker)] + "\n\n" + text
        else:
            doc = doc + f"\n{marker}\n\n{text}"
        DOC.write_text(doc)
    return 0 if all(r["outcome"] != "survived" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
