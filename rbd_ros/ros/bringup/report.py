"""The bringup report: tracking error, peak torques, real-time factor; JSON and a PNG plot."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from rbd_ros.sim.model_comparison import ModelComparison


@dataclass
class Report:
    joint_names: list[str]
    rms_error: list[float]  # per joint [rad or m]
    max_error: list[float]
    peak_torque: list[float]  # per joint, max |tau| [N m or N]
    rtf: float  # simulated time / wall time
    missed_cycles: int
    duration: float  # simulated seconds covered
    samples: int
    # task-space laws only: the tool's error, |p(q_d) - p(q)| and the rotation angle between
    tool_position_rms: float | None = None  # m
    tool_position_max: float | None = None  # m
    tool_orientation_rms: float | None = None  # rad
    tool_orientation_max: float | None = None  # rad
    # mobile bases (rbd_ros.ros.bringup.mobile.base_report): the base point's distance to its
    # reference (m), the heading error (rad), the largest wheel slip (m/s, diff drive) and
    # side velocity (m/s), and the peak base efforts (F_x, F_y N, M_z N m)
    base_path_rms: float | None = None
    base_path_max: float | None = None
    base_heading_rms: float | None = None
    base_heading_max: float | None = None
    wheel_slip_max: float | None = None
    lateral_velocity_max: float | None = None
    peak_base_effort: list[float] | None = None
    peak_wheel_torque: list[float] | None = None  # N m, left and right (diff drive)
    #: diff_drive_velocity's twist profile (issue 29): the length of the path the base drove (m)
    #: and the largest distance of its reference (the twists it received, integrated) from the
    #: documented profile's path (m: the twists' delivery, late or held longer under load)
    base_path_length: float | None = None
    profile_path_max: float | None = None
    #: per joint, % of the control cycles (0-100) whose command was at the effort limit, and
    #: % at the limit with the sign opposite to the previous cycle's (chatter); from the
    #: recorded commands and the limits the run used (``saturation_and_chatter``)
    saturation: list[float] | None = None
    chatter: list[float] | None = None
    effort_units: list[str] | None = None  # 'N m' (revolute) or 'N' (prismatic) per joint
    #: which ran: 'composed' (the law in the bridge's loop) or 'separate' (a controller process),
    #: and the bridge mode, e.g. 'composed, realtime'
    mode: str = ""
    #: the bridge's loop timing at the end (period_p50_us, period_p99_us, period_max_us,
    #: jitter_p99_us, overruns, missed_steps, realtime hygiene ...); printed by ``table`` for
    #: realtime runs only (``realtime``)
    timing: dict = field(default_factory=dict)
    #: issue 31: how the simulated arm differed from the controller's model (one line each)
    mismatch: list[str] | None = None
    #: issue 31, ``--model`` against a mismatched arm: the same tour's tracking with the URDF's
    #: model, ``--model`` and the simulated arm itself (``rbd_ros.sim.model_comparison``
    #: ``ModelComparison.to_dict``; ``bringup.mismatch.compare``)
    model_comparison: dict | None = None
    #: samples the window's stamps say were sent (``recorder.stamp_losses``): ``samples`` of
    #: them arrived; the rest lost in transport or cycles the controller missed
    samples_expected: int | None = None
    #: issue 38: what ran -- the robot (model name), the law, the gains in use (``{gain:
    #: "values (source)"}``) and every effective parameter (``{section: {key: value}}``: the
    #: bringup's arguments with their defaults, each node's parameters)
    robot: str = ""
    law: str = ""
    gains: dict | None = None
    parameters: dict | None = None
    #: with ``--record``: per periodic recorded topic, the samples written and those their
    #: stamps say were sent (``{topic: {"received", "expected", "lost", "period_s"}}``)
    recording: dict | None = None
    #: issue 44, ``bringup --task identify``: the loop's before/after (``identify_loop``'s report:
    #: ``joints``, ``before`` and ``after`` {``rms_error``, ``max_error``}, ``torque_nrmse_percent``,
    #: ``held_out_error_percent``, ``swap``; on the page ``swapped_at``, the second run's start
    #: in the plot's time); its table: ``loop_rows``, ``loop_notes``
    identify_loop: dict | None = None

    @property
    def realtime(self) -> bool:
        """A wall-clock paced run (``mode`` '..., realtime'): only there do the loop's period,
        jitter and overruns mean deadlines (lockstep and max step unpaced, their 'period' is
        just the stepping rate), so only there does ``table`` print them."""
        return self.mode.rsplit(",", 1)[-1].strip() == "realtime"

    def to_json(self, path: str | Path) -> None:
        data = {k: v for k, v in asdict(self).items() if v is not None}
        Path(path).write_text(json.dumps(data, indent=2))

    def table(self) -> str:
        """What the terminal prints: a row per joint, then ``summary_lines``."""
        sat = _saturation(self)
        lines = [f"{'joint':<16} {'rms error':>12} {'max error':>12} {'peak torque':>16}"
                 + (f" {'at limit':>9} {'chatter':>9}" if sat else "")]
        units = self.effort_units or [""] * len(self.joint_names)
        for k, name in enumerate(self.joint_names):
            peak = f"{self.peak_torque[k]:.3f} {units[k]}".strip()
            lines.append(f"{name:<16} {self.rms_error[k]:12.3e} {self.max_error[k]:12.3e} {peak:>16}"
                         + (f" {sat[0][k]:8.2f}% {sat[1][k]:8.2f}%" if sat else ""))
        return "\n".join(lines + summary_lines(self) + comparison_lines(self.model_comparison)
                         + loop_lines(self.identify_loop))


def loop_rows(loop: dict) -> list[tuple[str, float, float, float, float, float]]:
    """Per joint of the identification loop (``Report.identify_loop``): its name, the RMS
    tracking error before and after the swap, their ratio, and the second run's torque NRMSE
    (%) with the controller's model and with the identified one."""
    nrmse = loop["torque_nrmse_percent"]["second_run"]
    rows = []
    for j, name in enumerate(loop["joints"]):
        b, a = loop["before"]["rms_error"][j], loop["after"]["rms_error"][j]
        rows.append((name, b, a, b / a if a > 0 else float("inf"), nrmse["prior"][j], nrmse["identified"][j]))
    return rows


def loop_notes(loop: dict) -> list[str]:
    """The loop's lines after its table (the terminal's and the page's): the torque NRMSE's
    samples and the held-out part's, and the swap's torque continuity."""
    swap, names = loop["swap"], loop["joints"]
    held = loop["held_out_error_percent"]
    k = int(np.argmax(swap["largest_step"]))
    return [f"torque NRMSE on the second run ({loop['torque_nrmse_percent']['second_run']['samples']} "
            f"samples); held-out part of the first: {held['prior']:.2f} % -> {held['identified']:.2f} % overall",
            f"swap: largest step of the commanded torque over the switch {swap['largest_step'][k]:.3g} "
            f"({names[k]}), an instant switch {swap['instant_step'][k]:.3g}, blended over "
            f"{swap['swap_cycles']} cycles; the feedback's own change per cycle at the switch "
            f"{max(swap['own_step']):.3g} (the arm held still, its measured position moving "
            f"{swap['state_change']:.2g}), in the excitation up to {max(swap['own_step_in_motion']):.3g}"
            + (f"; the second run from t = {loop['swapped_at']:.3f} s of the plot" if "swapped_at" in loop else "")]


def loop_lines(loop: dict | None) -> list[str]:
    """The identification loop's table for the terminal (``loop_rows``, ``loop_notes``); []
    without one."""
    if not loop:
        return []
    lines = [f"{'joint':<18} {'rms before':>11} {'rms after':>11} {'ratio':>8} "
             f"{'torque NRMSE %: model':>22} {'identified':>10}"]
    lines += [f"{name:<18} {b:11.3e} {a:11.3e} {ratio:8.1f} {prior:22.2f} {ident:10.2f}"
              for name, b, a, ratio, prior, ident in loop_rows(loop)]
    return lines + loop_notes(loop)


def comparison_lines(comparison: dict | None) -> list[str]:
    """The model comparison's table (``Report.model_comparison``), [] without one."""
    if not comparison:
        return []
    return ModelComparison.from_dict(comparison).lines()


def _saturation(report: Report) -> tuple[list[float], list[float]] | None:
    """``(saturation, chatter)`` of ``report``, or None without effort limits (``make_report``
    sets the two together)."""
    if report.saturation is None:
        return None
    return report.saturation, cast(list[float], report.chatter)


def summary_lines(report: Report) -> list[str]:
    """The report's lines after the joint table (the terminal's and the page's): tool and base
    errors, a warning per joint at its effort limit or chattering in more than
    ``WARN_PERCENT`` % of the cycles, the run's size and timing."""
    lines: list[str] = []
    sat = _saturation(report)
    for k, name in enumerate(report.joint_names if sat is not None else []):
        saturation, chatter = cast(tuple[list[float], list[float]], sat)
        if saturation[k] > WARN_PERCENT or chatter[k] > WARN_PERCENT:
            lines.append(f"warning: joint '{name}' commanded at its effort limit in "
                         f"{saturation[k]:.2f} % of the cycles, flipping sign there "
                         f"(chatter) in {chatter[k]:.2f} %: the law asks more than the "
                         "drive gives")
    if report.tool_position_rms is not None:
        lines.append(f"tool position error rms {report.tool_position_rms:.3e} m, max "
                     f"{report.tool_position_max:.3e} m; orientation error rms "
                     f"{report.tool_orientation_rms:.3e} rad, max {report.tool_orientation_max:.3e} rad")
    if report.base_path_rms is not None:
        lines.append(f"base path error rms {report.base_path_rms:.3e} m, max {report.base_path_max:.3e} m; "
                     f"heading error rms {report.base_heading_rms:.3e} rad, max {report.base_heading_max:.3e} rad")
        extra = [f"{k} {getattr(report, k):.3e} m/s" for k in ("wheel_slip_max", "lateral_velocity_max")
                 if getattr(report, k) is not None]
        peak = ", ".join(f"{x:.2f}" for x in report.peak_base_effort or [])
        wheel = ([f"peak wheel torque [{', '.join(f'{x:.2f}' for x in report.peak_wheel_torque)}] N m"]
                 if report.peak_wheel_torque else [])
        lines.append("; ".join([*extra, f"peak base effort [F_x, F_y, M_z] [{peak}]", *wheel]))
    if report.profile_path_max is not None:
        lines.append(f"twist profile: the base drove {report.base_path_length:.3f} m; the twists it "
                     f"received lead within {report.profile_path_max:.3e} m of the profile's path")
    expected = report.samples_expected
    of = (f" of {expected} the stamps say were sent ({expected - report.samples} lost or missed)"
          if expected is not None and expected > report.samples else "")
    lines.append(f"simulated {report.duration:.3f} s in {report.samples} samples{of}; real-time "
                 f"factor {report.rtf:.3f}; missed cycles {report.missed_cycles}")
    lines += recording_lines(report.recording)
    if report.mode:
        lines.append(f"controller {report.mode}")
    if "period_p99_us" in report.timing and report.realtime:  # lockstep: no deadline to keep
        tm = report.timing
        lines.append(f"loop: period p50 {tm['period_p50_us']:.0f} us, p99 "
                     f"{tm['period_p99_us']:.0f} us, max {tm['period_max_us']:.0f} us; jitter "
                     f"p99 {tm['jitter_p99_us']:.0f} us; overruns {tm.get('overruns', 0)}")
    return lines


#: a joint at its effort limit (or chattering there) in more of the cycles than this (%) is warned of
WARN_PERCENT = 1.0


def recording_lines(recording: dict | None) -> list[str]:
    """One line on the recorded streams (``Report.recording``): every sample, or a warning
    per topic with how many its stamps say were lost; [] without a recording."""
    if not recording:
        return []
    lost = {t: v for t, v in recording.items() if v["lost"] > 0}
    if not lost:
        return ["recorded every sample of " + ", ".join(f"{t} ({v['received']})" for t, v in recording.items())
                + " (from their stamps)"]
    return [f"warning: the recording lost {v['lost']} of {v['expected']} {t} samples (from their stamps: "
            f"{v['received']} recorded, one every {v['period_s'] * 1e3:.3g} ms)" for t, v in lost.items()]


def progress_factor(samples: list[tuple[float, float]], t0: float) -> float:
    """The progress line's real-time factor: the final report's (``real_time_factor``, the
    bridge's ``(wall_time, sim_time)`` diagnostics) over ``[t0, latest]``, the window from the
    tour's start to the latest sample; NaN until two samples cover some of it."""
    if not samples:
        return float("nan")
    return real_time_factor(samples, t0, max(s for _, s in samples))


def saturation_and_chatter(commands: np.ndarray, effort_limit: np.ndarray, rel: float = 1e-6
                           ) -> tuple[list[float], list[float]]:
    """Per joint, from the commands ``(S, n)`` sent one per cycle and the limits ``(n,)`` the
    run saturated them at: the % of cycles at the limit (``|tau| >= (1 - rel) tau_max``) and
    the % of cycles (after the first) at the limit with the sign opposite to the previous
    cycle's command (``sign tau_k sign tau_{k-1} < 0``).  0 for a joint without a limit."""
    tau = np.asarray(commands, dtype=float)
    lim = np.abs(np.asarray(effort_limit, dtype=float))
    if tau.ndim != 2 or tau.shape[1] != lim.size:
        raise ValueError(f"commands {tau.shape} do not match {lim.size} effort limits")
    if len(tau) == 0:
        return [0.0] * lim.size, [0.0] * lim.size
    at = np.isfinite(lim) & (np.abs(tau) >= lim * (1.0 - rel))
    flip = np.sign(tau[1:]) * np.sign(tau[:-1]) < 0
    chatter = (100.0 * (at[1:] & flip).mean(axis=0)) if len(tau) > 1 else np.zeros(lim.size)
    return (100.0 * at.mean(axis=0)).tolist(), np.asarray(chatter, float).tolist()


def real_time_factor(samples: list[tuple[float, float]], t0: float, t1: float) -> float:
    """Simulated over wall time across exactly the simulated window ``[t0, t1]``:

        rtf = (t1 - t0) / (w(t1) - w(t0))

    where ``w(s)`` is the wall time at which the simulation first reached ``s``, interpolated
    linearly between the ``(wall_time, sim_time)`` samples of the bridge's diagnostics (one per
    period and one at each pause).  Idle time inside the window (the simulation standing
    still) counts, idle time before or after it does not.  The window is clipped to what the
    samples cover; NaN (never 0) when they cover none of it (fewer than two samples)."""
    if len(samples) < 2 or not t1 > t0:
        return float("nan")
    wall, sim = np.asarray(samples, float).T
    order = np.argsort(wall, kind="stable")
    wall, sim = wall[order], np.maximum.accumulate(sim[order])  # simulated time never goes back
    lo, hi = max(t0, sim[0]), min(t1, sim[-1])
    if not hi > lo:
        return float("nan")

    def first_reached(s: float) -> float:
        i = int(np.searchsorted(sim, s, side="left"))  # first sample with sim >= s
        if i == 0:
            return float(wall[0])
        frac = (s - sim[i - 1]) / (sim[i] - sim[i - 1])  # sim[i-1] < s <= sim[i]
        return float(wall[i - 1] + frac * (wall[i] - wall[i - 1]))

    elapsed = first_reached(hi) - first_reached(lo)
    return (hi - lo) / elapsed if elapsed > 0 else float("nan")


def make_report(joint_names: list[str], reference: np.ndarray, measured: np.ndarray,
                torque: np.ndarray, times: np.ndarray, rtf: float, missed_cycles: int,
                tool: tuple[np.ndarray, np.ndarray] | None = None,
                effort_limit: np.ndarray | None = None, prismatic: np.ndarray | None = None) -> Report:
    """Per-joint RMS ``sqrt(mean_k e_k^2)`` and max ``|e_k|`` of ``e = reference - measured``
    and max |torque| over the samples; ``tool`` = (position error (m), orientation error
    (rad)) per sample for task-space laws (``rbd_ros.sim.closed_loop.tool_errors``).
    ``torque``: the commands, one per cycle; with ``effort_limit`` (the limits they were
    saturated at) also the saturation and chatter percentages (``saturation_and_chatter``);
    ``prismatic`` (bool per joint) gives the torques' units."""
    err = np.asarray(reference) - np.asarray(measured)
    if err.size == 0:
        raise ValueError("no samples recorded: nothing to report")
    extra: dict[str, Any] = {}
    if tool is not None:
        pos, ang = (np.asarray(x, dtype=float) for x in tool)
        extra = dict(tool_position_rms=float(np.sqrt(np.mean(pos**2))),
                     tool_position_max=float(pos.max()),
                     tool_orientation_rms=float(np.sqrt(np.mean(ang**2))),
                     tool_orientation_max=float(ang.max()))
    if effort_limit is not None:
        extra["saturation"], extra["chatter"] = saturation_and_chatter(torque, effort_limit)
    if prismatic is not None:
        extra["effort_units"] = ["N" if p else "N m" for p in np.asarray(prismatic, bool)]
    from rbd_ros.ros.bringup.recorder import stamp_losses  # lazy: the bag writer (55 ms of import)

    extra["samples_expected"] = stamp_losses(np.round(np.asarray(times, float) * 1e9))["expected"]
    return Report(list(joint_names), np.sqrt(np.mean(err**2, axis=0)).tolist(),
                  np.abs(err).max(axis=0).tolist(), np.abs(torque).max(axis=0).tolist(),
                  float(rtf), int(missed_cycles), float(times[-1] - times[0]), int(len(times)),
                  **extra)


def plot(path: str | Path, joint_names: list[str], times: np.ndarray, reference: np.ndarray,
         measured: np.ndarray, torque: np.ndarray, title: str = "",
         base_xy: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """PNG: reference vs measured per joint, torques, tracking error; with ``base_xy`` =
    (reference, measured) base positions ``(S, 2)`` also the base's x-y path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if base_xy is None:
        fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    else:
        fig = plt.figure(figsize=(15, 9))
        grid = fig.add_gridspec(3, 3)
        axes = [fig.add_subplot(grid[0, :2])]
        axes += [fig.add_subplot(grid[k, :2], sharex=axes[0]) for k in (1, 2)]
        xy = fig.add_subplot(grid[:, 2])
        ref_xy, meas_xy = (np.asarray(a, float) for a in base_xy)
        xy.plot(ref_xy[:, 0], ref_xy[:, 1], "--", color="k", lw=1, label="reference")
        xy.plot(meas_xy[:, 0], meas_xy[:, 1], color="C3", lw=1, label="measured (odom)")
        xy.set_aspect("equal", adjustable="datalim")
        xy.set_xlabel("x [m]")
        xy.set_ylabel("y [m]")
        xy.set_title("base path")
        xy.legend(loc="upper right", fontsize=7)
        xy.grid(alpha=0.3)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, name in enumerate(joint_names):
        c = colors[k % len(colors)]
        axes[0].plot(times, reference[:, k], "--", color=c, lw=1)
        axes[0].plot(times, measured[:, k], color=c, lw=1, label=name)
        axes[1].plot(times, torque[:, k], color=c, lw=1)
        axes[2].plot(times, reference[:, k] - measured[:, k], color=c, lw=1)
    axes[0].set_ylabel("position (dashed: reference)")
    axes[0].legend(loc="upper right", fontsize=7, ncol=2)
    axes[1].set_ylabel("commanded effort")
    axes[2].set_ylabel("tracking error")
    axes[2].set_xlabel("simulated time [s]")
    if title:
        axes[0].set_title(title)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def missed_cycles(diag_start: dict | None, last: dict | None, composed: bool = False) -> int:
    """Bridge steps taken without a fresh command from the controller between two
    diagnostics messages (``steps_without_new_command``): from before the tour to its end.
    Composed, where every step computes its command: the steps the loop started more than
    one period late (``missed_steps``)."""
    if last is None:
        return 0
    key = "missed_steps" if composed else "steps_without_new_command"
    first = diag_start[key] if diag_start else 0
    return int(last[key]) - int(first)
