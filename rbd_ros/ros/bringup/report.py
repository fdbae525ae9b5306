"""The bringup report: tracking error, peak torques, real-time factor; JSON and a PNG plot."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np


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
    #: which ran: 'composed' (the law in the bridge's loop) or 'separate' (a controller process),
    #: and the bridge mode, e.g. 'composed, realtime'
    mode: str = ""
    #: the bridge's loop timing at the end (period_p50_us, period_p99_us, period_max_us,
    #: jitter_p99_us, overruns, missed_steps, realtime hygiene ...); printed by ``table`` for
    #: realtime runs only (``realtime``)
    timing: dict = field(default_factory=dict)

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
        lines = [f"{'joint':<16} {'rms error':>12} {'max error':>12} {'peak torque':>12}"]
        for k, name in enumerate(self.joint_names):
            lines.append(f"{name:<16} {self.rms_error[k]:12.3e} {self.max_error[k]:12.3e} "
                         f"{self.peak_torque[k]:12.3f}")
        if self.tool_position_rms is not None:
            lines.append(f"tool position error rms {self.tool_position_rms:.3e} m, max "
                         f"{self.tool_position_max:.3e} m; orientation error rms "
                         f"{self.tool_orientation_rms:.3e} rad, max {self.tool_orientation_max:.3e} rad")
        lines.append(f"simulated {self.duration:.3f} s in {self.samples} samples; real-time "
                     f"factor {self.rtf:.3f}; missed cycles {self.missed_cycles}")
        if self.mode:
            lines.append(f"controller {self.mode}")
        if "period_p99_us" in self.timing and self.realtime:  # lockstep: no deadline to keep
            tm = self.timing
            lines.append(f"loop: period p50 {tm['period_p50_us']:.0f} us, p99 "
                         f"{tm['period_p99_us']:.0f} us, max {tm['period_max_us']:.0f} us; jitter "
                         f"p99 {tm['jitter_p99_us']:.0f} us; overruns {tm.get('overruns', 0)}")
        return "\n".join(lines)


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
                tool: tuple[np.ndarray, np.ndarray] | None = None) -> Report:
    """Per-joint RMS/max of ``reference - measured`` and max |torque| over the samples;
    ``tool`` = (position error (m), orientation error (rad)) per sample for task-space laws
    (``rbd_ros.sim.closed_loop.tool_errors``)."""
    err = np.asarray(reference) - np.asarray(measured)
    if err.size == 0:
        raise ValueError("no samples recorded: nothing to report")
    extra = {}
    if tool is not None:
        pos, ang = (np.asarray(x, dtype=float) for x in tool)
        extra = dict(tool_position_rms=float(np.sqrt(np.mean(pos**2))),
                     tool_position_max=float(pos.max()),
                     tool_orientation_rms=float(np.sqrt(np.mean(ang**2))),
                     tool_orientation_max=float(ang.max()))
    return Report(list(joint_names), np.sqrt(np.mean(err**2, axis=0)).tolist(),
                  np.abs(err).max(axis=0).tolist(), np.abs(torque).max(axis=0).tolist(),
                  float(rtf), int(missed_cycles), float(times[-1] - times[0]), int(len(times)),
                  **extra)


def plot(path: str | Path, joint_names: list[str], times: np.ndarray, reference: np.ndarray,
         measured: np.ndarray, torque: np.ndarray, title: str = "") -> None:
    """PNG: reference vs measured per joint, torques, tracking error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
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
