"""``rbd-ros bringup --task identify`` (issue 44): the identification loop as one command.

The arm runs the excitation (``--tour excitation``: ``rbd_ros.identification.excitation``) under
the controller's model; the states it received (positions, velocities and the bridge's measured
efforts) are identified as ``rbd-ros identify`` would a recording (``recording.load_recording``,
``estimate.identify_samples``: the last quarter held out); the identified model is written as a
model YAML and handed to the RUNNING controller through its ``~/load_model`` service (checked,
adopted between two cycles, blended in over ``loop.SWAP_CYCLES`` cycles) while the bridge is
paused, so the arm holds still and the torque's change over the switch is the swap's alone;
then the same excitation runs again under the identified model.  One report (``--json FILE``,
or ``DIR/identify_loop.json`` with ``--record DIR``; the model beside it): per joint the RMS
and max tracking error before and after, the torque NRMSE (RMS of the measured minus the
model's torque over the measured RMS, per joint: ``estimate.validate``) of the controller's
model and the identified one on the held-out part of the first run and on the whole second
run, and the swap's torque continuity (``swap_steps``).  With ``--record DIR`` also the
bringup's page of both runs (``DIR/index.html``, ``plot.png``, the video: ``page.video_and_page``),
the loop's before/after table in it (``report.Report.identify_loop``).
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from rbd_ros.identification.estimate import identify_samples, validate, write_model
from rbd_ros.model import PRISMATIC
from rbd_ros.ros.bringup.inbox import CONTROLLER_STATE, STATES
from rbd_ros.ros.bringup.page import video_and_page
from rbd_ros.ros.bringup.processes import within
from rbd_ros.ros.bringup.report import loop_lines, make_report, missed_cycles, plot
from rbd_ros.ros.bringup.tour_report import effective_parameters
from rbd_ros.ros.bringup.tour_task import ExcitationTask

REPORT = "identify_loop.json"  # in --record DIR (without --json FILE)
MODEL = "identified.yaml"  # in --record DIR, or beside the --json FILE as FILE_identified.yaml


def check(args: Any) -> None:
    """Refuse, before any node starts, what the loop cannot run; the excitation as its tour."""
    if args.composed:
        raise ValueError("--task identify swaps the identified model into the controller process "
                         "(its ~/load_model service): not with --composed")
    if args.mode != "lockstep":
        raise ValueError("--task identify runs in lockstep: the swap is made and measured with the arm "
                         "held still by the paused bridge (--mode realtime steps on)")
    if not (args.record or args.json):
        raise ValueError("--task identify needs --record DIR or --json FILE: where the report and "
                         "the identified model are written")
    if args.duration:
        raise ValueError("--task identify runs the excitation twice, each to its end: no --duration "
                         "(--segment-time sets the excitation's period)")
    args.tour = "excitation"


def output_paths(args: Any) -> tuple[Path, Path]:
    """The report file and the identified model's file (module docstring)."""
    if args.json:
        report = Path(args.json)
        model = Path(args.record) / MODEL if args.record else report.with_name(report.stem + "_" + MODEL)
        return report, model
    return Path(args.record) / REPORT, Path(args.record) / MODEL


def swap_steps(tau: np.ndarray, q: np.ndarray, i0: int) -> dict:
    """The swap's torque continuity from the commanded torques ``tau`` (K, n) and measured
    positions ``q`` of consecutive control cycles, the model handed over before cycle ``i0``
    (cycles ``i0 - 1`` and before ran the old model alone; the last ones the new model
    alone): per joint the largest step over one cycle from ``i0 - 1`` on, the feedback's own
    largest step per cycle before ``i0`` (its change at the switch), the whole change an
    instant switch would make (``tau[-1] - tau[i0 - 1]``: the model difference, as the state
    held still), and how far the state moved over the window (it should not: paused)."""
    tau, q = np.asarray(tau, float), np.asarray(q, float)
    if not (2 <= i0 < len(tau) - 1):
        raise ValueError(f"swap_steps: need cycles before and after the swap, got {i0} of {len(tau)}")
    step = np.abs(np.diff(tau[i0 - 1:], axis=0)).max(axis=0)
    own = np.abs(np.diff(tau[:i0], axis=0)).max(axis=0)
    instant = np.abs(tau[-1] - tau[i0 - 1])
    return {"largest_step": step.tolist(), "own_step": own.tolist(), "instant_step": instant.tolist(),
            "cycles": int(len(tau) - i0), "state_change": float(np.abs(q - q[0]).max())}


class IdentifyLoopTask(ExcitationTask):
    """The loop (module docstring) through ``runner.Task``'s interface."""

    def start(self, runner: Any) -> None:
        super().start(runner)
        self.report_path, self.model_path = output_paths(runner.args)
        runner.say("[bringup] identify: the excitation under the controller's model, rbd-ros identify on "
                   "what it received, the identified model into the running controller (~/load_model), "
                   f"the excitation again; the report: {self.report_path}")

    def drive(self, node: Any, spin: Any, record: Any, diag_start: dict, t_now: float) -> int:
        r = self.runner
        self.rtfs: list[tuple[float, float]] = []  # (simulated seconds, real-time factor) per run
        t1, end1, diag, t_now = self.run_once(node, spin, diag_start, t_now)
        before = self.tracking(t1, end1)
        res, _ = self.identify(t1, end1)
        swap = self.swap_in(node, res)
        t2, end2, diag_end, _ = self.run_once(node, spin, diag, t_now, last=True)
        r.stop_controller_and_drain(end2)
        after = self.tracking(t2, end2)
        second = self.validation(res, t2, end2)
        run_lines = list(r.said)  # what the run said before its report, for the page
        loop = self.write_report(before, after, res, second, swap, motion_step(before["tau"]))
        if record is not None:
            self.page(record, before, after, loop, run_lines,
                      missed_cycles(diag_start, diag_end))
        return 0

    # ---- the two runs -------------------------------------------------------------------------
    def run_once(self, node: Any, spin: Any, diag: dict, t_now: float,
                 last: bool = False) -> tuple[float, float, dict, float]:
        """The excitation from the bridge paused at ``diag`` to its end, paused again there with
        the controller's answers in (the ``last`` run: ``Runner.stop_controller_and_drain``
        waits for them); ``(t_start, t_end, the diagnostics at the pause, the latest state's
        time)``."""
        r = self.runner
        t_start = self.send_tour(node, self.traj_pub, self.path_pub, diag["sim_time"], t_now)
        r.collecting = True  # the states, for the identification (send_tour set it for a base)
        r.set_parameters(node, "mujoco_bridge", pause_at=t_start + self.horizon())
        r.set_paused(node, False)
        end = self.follow_tour(spin, t_start, t_now)
        diag_end, rtf = self.pause_after_tour(node, diag, t_start, end)
        self.rtfs.append((end - t_start, rtf))
        if last:
            return t_start, end, diag_end, float("nan")
        r.wait_for_state_at(diag_end["sim_time"])
        r.wait_for_commands_until(diag_end["sim_time"])
        with r.lock:
            t_now = r.last_state[0]
        return t_start, end, diag_end, t_now

    def controller_states(self, t0: float, t1: float, one_per_stamp: bool = True) -> dict:
        """The controller's states in ``[t0, t1]`` (the paused bridge's repeated states answered
        again: one per stamp, or every one), as arrays ``t``, ``ref``, ``q``, ``tau``."""
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        r = self.runner
        with r.lock:
            window = [c for c in r.controller_state if within(c[0], t0, t1)]
        if one_per_stamp:
            window = [c for i, c in enumerate(window) if i == 0 or c[0] != window[i - 1][0]]
        if len(window) < 2:
            raise RuntimeError(f"the controller published {len(window)} states in [{t0:.3f}, {t1:.3f}] s")
        cs = [deserialize_message(raw, JointState) for _, raw in window]
        return {"t": np.array([c[0] for c in window]), "ref": np.array([c.position for c in cs]),
                "q": np.array([c.velocity for c in cs]), "tau": np.array([c.effort for c in cs])}

    def tracking(self, t0: float, t1: float) -> dict:
        """One run's tracking (``report.make_report``'s RMS and max error per joint)."""

        s = self.controller_states(t0, t1)
        rep = make_report(self.runner.joint_names, s["ref"], s["q"], s["tau"], s["t"] - t0, float("nan"), 0)
        return {**s, "rms_error": rep.rms_error, "max_error": rep.max_error, "peak_torque": rep.peak_torque,
                "samples_expected": rep.samples_expected}

    def samples(self, t0: float, t1: float, what: str) -> Any:
        """The run's ``/joint_states`` in ``[t0, t1]`` as ``recording.Samples``."""
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        from rbd_ros.identification.recording import (  # lazy: the bag reader (75 ms of import)
            COMMANDS,
            JOINT_STATES,
            load_recording,
        )

        r = self.runner
        with r.lock:
            raw = [(t, b) for t, b in r.state_raw if within(t, t0, t1)]
        states = [(int(round(t * 1e9)), deserialize_message(b, JointState)) for t, b in raw]
        return load_recording(what, r.model, topics={JOINT_STATES: states, COMMANDS: []})

    def identify(self, t0: float, t1: float) -> tuple[Any, Any]:
        """``rbd-ros identify`` on the first run (module docstring); the model file written."""
        r = self.runner
        t = time.monotonic()
        res, held, window = identify_samples(r.model, self.samples(t0, t1, "the first excitation"))
        self.window = window  # the second run's validation filters as the held-out part's
        v = res.validation
        write_model(res, str(self.model_path), "the first excitation of rbd-ros bringup --task identify")
        r.say(f"[bringup] identify: {res.samples} samples ({window}-sample filter), {res.base.count} base "
              f"parameters, condition {res.condition:.3g}, physical model: {res.consistency}; held-out "
              f"torque error {v['prior_error_percent']:.2f} % with the controller's model, "
              f"{v['identified_error_percent']:.2f} % identified ({time.monotonic() - t:.1f} s); "
              f"wrote {self.model_path}")
        return res, held

    def swap_in(self, node: Any, res: Any) -> dict:
        """The identified model through ``/controller/load_model`` while the bridge is paused (the
        arm held still), waited for until blended in; its torque continuity (``swap_steps``)."""
        from rbd_ros.control.loop import SWAP_CYCLES  # lazy: the control loop (0.3 s of import)
        from rbd_ros_interfaces.srv import LoadModel

        r = self.runner
        with r.lock:
            i_pause = len(r.controller_state)
        time.sleep(0.5)  # a few of the paused bridge's repeated states answered by the old model
        with r.lock:
            i_request = len(r.controller_state)
        ans = r.call_service(node, LoadModel, "/controller/load_model",
                             LoadModel.Request(model_yaml=str(self.model_path.resolve())))
        if not ans.success:
            raise RuntimeError(f"the controller refused the identified model: {ans.message}")
        r.say(f"[bringup] identify: {ans.message}")
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:  # the paused bridge's states answered, ~10 Hz
            with r.lock:
                if len(r.controller_state) >= i_request + SWAP_CYCLES + 5:
                    break
            time.sleep(0.05)
        from rclpy.serialization import deserialize_message
        from sensor_msgs.msg import JointState

        with r.lock:
            cs = [deserialize_message(raw, JointState) for _, raw in r.controller_state[i_pause:]]
        i0 = i_request - i_pause
        if len(cs) < i0 + SWAP_CYCLES + 2:
            raise RuntimeError(f"the controller answered {len(cs) - i0} states after the swap in 30 s "
                               f"(the blend takes {SWAP_CYCLES})")
        out = swap_steps(np.array([c.effort for c in cs]), np.array([c.velocity for c in cs]), i0)
        out["swap_cycles"] = SWAP_CYCLES
        out["message"] = ans.message
        return out

    def validation(self, res: Any, t0: float, t1: float) -> dict:
        """Both models' torque errors on the second run's states (``estimate.validate``, the
        parallel filter of the identification's)."""
        s = self.samples(t0, t1, "the second excitation")
        tau = np.where(s.mask, s.tau, np.nan)
        return validate(self.runner.model, res.model, s.q, s.qd, s.qdd, tau, qd_viscous=s.qd_step,
                        window=self.window)

    # ---- the report ---------------------------------------------------------------------------
    def write_report(self, before: dict, after: dict, res: Any, second: dict, swap: dict,
                     own_motion: np.ndarray) -> dict:
        """The report file (module docstring), its table said (``report.loop_lines``); returns
        the loop's part of it (``Report.identify_loop``)."""

        r = self.runner
        nrmse = {key: {m: (100.0 * np.asarray(v[f"{m}_rms_error"]) / np.asarray(v["rms_torque"])).tolist()
                       for m in ("prior", "identified")} | {"samples": v["samples"]}
                 for key, v in (("held_out", res.validation), ("second_run", second))}
        swap["own_step_in_motion"] = own_motion.tolist()
        v = res.validation
        loop = {"joints": r.joint_names,
                "before": {k: before[k] for k in ("rms_error", "max_error", "peak_torque")},
                "after": {k: after[k] for k in ("rms_error", "max_error", "peak_torque")},
                "torque_nrmse_percent": nrmse, "swap": swap,
                "held_out_error_percent": {"prior": v["prior_error_percent"],
                                           "identified": v["identified_error_percent"]}}
        report = {"robot": r.model.name, "law": r.args.controller, "mismatch": r.plan.mismatch,
                  "excitation": self.summary(), "identified_model": str(self.model_path), **loop,
                  "identification": {k: v for k, v in res.summary().items() if k != "parameters"}}
        for line in loop_lines(loop):
            r.say(line)
        self.report_path.parent.mkdir(parents=True, exist_ok=True)
        self.report_path.write_text(json.dumps(report, indent=1))
        r.say(f"[bringup] identify: wrote {self.report_path}")
        return loop

    def page(self, record: Path, before: dict, after: dict, loop: dict, run_lines: list[str],
             missed: int) -> None:
        """``--record DIR``: the tour's products for both runs, one after the other (the
        tracking table, ``plot.png``, the video and ``index.html``: ``page.video_and_page``),
        with the loop's before/after section (``Report.identify_loop``)."""
        r = self.runner
        t0 = before["t"][0]
        t, ref, q, tau = (np.concatenate([before[k], after[k]]) for k in ("t", "ref", "q", "tau"))
        t = t - t0
        rep = make_report(r.joint_names, ref, q, tau, t, _overall_rtf(self.rtfs), missed,
                          effort_limit=np.abs(r.model.effort_limit),
                          prismatic=np.asarray(r.model.joint_type) == PRISMATIC)
        rep.samples_expected = before["samples_expected"] + after["samples_expected"]  # not the pause's gap
        rep.mode = f"separate, {r.args.mode}"
        rep.mismatch = r.plan.mismatch or None
        rep.identify_loop = {**loop, "swapped_at": float(after["t"][0] - t0)}  # the plot's time
        rep.robot, rep.law, rep.gains = r.model.name, r.args.controller, r.gains_used()
        params = effective_parameters(r, float(t[-1]))
        rep.parameters = params
        if r.recorder is not None:
            rep.recording = r.recorder.losses({STATES: None, CONTROLLER_STATE: None})
        title = f"{r.model.name}: {r.args.controller}, identification loop (before and after the swap)"
        plot(record / "plot.png", r.joint_names, t, ref, q, tau, title=title)
        for line in video_and_page(record, r.model, t, q, ref, rep, params, title, video=not r.args.no_video,
                                   robot=r.specs[0].parameters, gains=r.gains_used(), run_lines=run_lines):
            r.say(line)


def _overall_rtf(runs: list[tuple[float, float]]) -> float:
    """The real-time factor over several runs ``(simulated seconds, rtf)``: their simulated
    time over their wall time, ``sum d / sum (d / rtf)`` (NaN if any is)."""
    d = np.array([x for x, _ in runs], float)
    f = np.array([y for _, y in runs], float)
    return float(d.sum() / (d / f).sum()) if len(d) and np.all(f > 0) else float("nan")


def motion_step(tau: np.ndarray) -> np.ndarray:
    """The feedback's own largest change of the commanded torque per cycle along a run."""
    return np.abs(np.diff(np.asarray(tau, float), axis=0)).max(axis=0)
