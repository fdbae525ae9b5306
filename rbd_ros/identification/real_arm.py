"""Samples for identification from a real arm's ``/joint_states`` alone (issue 44): what a
ros2_control arm publishes (``joint_state_broadcaster``), recorded with ``ros2 bag record
/joint_states``, with no bringup files and no torque commands.

What such a recording is like, and what is done with it:

* **Messages may name some joints each, in any order** (an arm and its gripper broadcast
  apart): each model joint's samples are gathered by name; joints of the bag the model does
  not have are left out (a note names them).
* **Stamps are the driver's** (``header.stamp``), irregular by the driver's jitter; a message
  stamped 0 (some drivers) takes the bag's receive time (a note says so); among stamped
  messages such a sample is masked (the receive time is late by the transport's latency: 0.1
  ms of it gave a 6 rad/s^2 spike in a differentiated acceleration, 0.014 without).  Each joint is
  resampled onto one uniform grid at ``rate`` (default: the median rate of its messages) by
  linear interpolation; a gap longer than 5 periods is masked, not bridged.
* **Velocities are often absent or coarse**: they are not used.  Positions and efforts are
  low-passed by a light zero-phase filter at ``4 cutoff`` (``estimate.lowpass``: three
  centred moving averages of ``L`` samples, ``L = round(0.26 rate / f)`` odd, whose -3 dB
  point is about ``f``), only to differentiate: ``qd_k = (q_{k+1} - q_{k-1}) / (2 dt)``,
  ``qdd`` likewise from ``qd`` (central differences).  The noise that differentiation leaves
  is removed by ``estimate.identify``'s parallel filter at ``cutoff`` (the ``window``
  returned): the regressor's columns and the torques low-passed alike, which the equations,
  linear in the parameters, survive exactly (Gautier's parallel filtering).  Filtering the
  states at ``cutoff`` instead would bend the regressor, nonlinear in them: on the Z1 at 500
  Hz, 4.4 % largest base-parameter error at 10 Hz against 0.012 % this way.
* **Effort units**: ``effort`` is a torque (N m, or N for a prismatic joint) unless the driver
  reports a current; ``torque_constant`` (one value or one per joint, N m per unit of the
  effort field: the motor's torque constant times the gear ratio) converts it.
* The filter's edges are not returned (the ``3 L - 2`` wide kernel covers only whole rows);
  joints slower than ``min_velocity`` (stick-slip) are left out of the equations.
"""
from __future__ import annotations

from typing import cast

import numpy as np

from rbd_ros.identification.estimate import lowpass, valid
from rbd_ros.identification.recording import JOINT_STATES, RecordingError, Samples
from rbd_ros.model import MdhModel

GAP_PERIODS = 5.0  # a longer gap between one joint's samples is masked, not interpolated


def filter_length(rate: float, cutoff: float) -> int:
    """``L`` of the module docstring: three moving averages of ``L`` samples at ``rate`` Hz put
    the -3 dB point near ``cutoff`` Hz (the kernel is ``3 L - 2`` samples wide); odd, so that
    the kernel's centre is a sample (no half-sample delay)."""
    return max(3, int(round(0.26 * rate / cutoff)) | 1)


def _per_joint(messages: list, model: MdhModel, where: str) -> tuple[dict, list[str]]:
    """``{joint: (t, q, effort, received)}`` gathered by name over all messages (``received``:
    True where a sample's time is the bag's receive time, its stamp 0, among stamped ones),
    and the notes."""
    notes: list[str] = []
    t_of: dict[str, list[float]] = {j: [] for j in model.joint_names}
    r_of: dict[str, list[bool]] = {j: [] for j in model.joint_names}
    q_of: dict[str, list[float]] = {j: [] for j in model.joint_names}
    e_of: dict[str, list[float]] = {j: [] for j in model.joint_names}
    others: set[str] = set()
    zero_stamps = 0
    for received, m in messages:
        t = m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec
        zero = t == 0.0
        if zero:
            t, zero_stamps = received * 1e-9, zero_stamps + 1
        effort = np.asarray(m.effort, dtype=float)
        position = np.asarray(m.position, dtype=float)
        for k, name in enumerate(m.name):
            if name not in t_of:
                others.add(name)
                continue
            if k >= len(position):
                continue
            t_of[name].append(t)
            r_of[name].append(zero)
            q_of[name].append(position[k])
            e_of[name].append(effort[k] if k < len(effort) else np.nan)
    if others:
        notes.append(f"joints not in the model, left out: {sorted(others)}")
    mixed = 0 < zero_stamps < len(messages)
    if zero_stamps:
        notes.append(f"{zero_stamps} messages stamped 0: the bag's receive time used for them"
                     + ("; among stamped ones, their samples are masked (a receive time carries the "
                        "transport's latency, which the differentiated accelerations would amplify)"
                        if mixed else ""))
    missing = [j for j in model.joint_names if not t_of[j]]
    if missing:
        raise RecordingError(f"{where}: the recording's {JOINT_STATES} never name the model's joints "
                             f"{missing}; give the robot that was recorded (--robot/--urdf/--model)")
    no_effort = [j for j in model.joint_names if not np.isfinite(e_of[j]).any() or not np.any(e_of[j])]
    if no_effort:
        raise RecordingError(f"{where}: {JOINT_STATES} carries no efforts for {no_effort}: a real arm's "
                             "identification needs the measured joint torques (or motor currents with "
                             "--torque-constant)")
    out = {}
    for j in model.joint_names:
        order = np.argsort(t_of[j], kind="stable")
        t = np.asarray(t_of[j])[order]
        keep = np.concatenate([[True], np.diff(t) > 0])  # a repeated stamp: the first sample
        out[j] = (t[keep], np.asarray(q_of[j])[order][keep], np.asarray(e_of[j])[order][keep],
                  (np.asarray(r_of[j], bool)[order][keep]) & mixed)
    return out, notes


def real_arm_samples(messages: list, model: MdhModel, where: str = "recording", rate: float = 0.0,
                     cutoff: float = 10.0, torque_constant: float | np.ndarray = 1.0,
                     min_velocity: float = 0.02) -> tuple[Samples, int, list[str]]:
    """The equations of motion on a uniform grid from ``messages`` (``[(receive_ns, JointState)]``
    of ``/joint_states``), as the module docstring says; the ``window`` to identify them with;
    notes on what was not used."""
    if not (np.isfinite(cutoff) and cutoff > 0):
        raise RecordingError(f"the low-pass cutoff must be a positive number of Hz, got {cutoff}")
    gain = np.broadcast_to(np.asarray(torque_constant, dtype=float), (model.dof,)).copy() \
        if np.ndim(torque_constant) == 0 or len(np.atleast_1d(torque_constant)) == model.dof else None
    if gain is None or not np.all(np.isfinite(gain)) or np.any(gain == 0):
        raise RecordingError(f"--torque-constant needs one finite non-zero value or {model.dof} (one per "
                             f"joint {list(model.joint_names)}), got {torque_constant}")
    joints, notes = _per_joint(messages, model, where)
    periods = np.concatenate([np.diff(t) for t, _, _, _ in joints.values()])
    if len(periods) < 2:
        raise RecordingError(f"{where}: too few {JOINT_STATES} samples to identify anything")
    rate = float(rate) if rate else 1.0 / float(np.median(periods))
    if not (np.isfinite(rate) and rate > 0):
        raise RecordingError(f"{where}: the resampling rate must be positive, got {rate}")
    start = max(t[0] for t, _, _, _ in joints.values())
    end = min(t[-1] for t, _, _, _ in joints.values())
    grid = start + np.arange(int(np.floor((end - start) * rate)) + 1) / rate
    L = filter_length(rate, 4.0 * cutoff)  # the light filter, for differentiating
    window = 3 * filter_length(rate, cutoff)  # identify's parallel filter
    if len(grid) < 4 * window:
        raise RecordingError(f"{where}: {len(grid)} samples at {rate:.4g} Hz are too few for the "
                             f"{cutoff:g} Hz low-pass ({window} samples wide)")
    n = model.dof
    q, eff = np.zeros((len(grid), n)), np.zeros((len(grid), n))
    ok = np.ones((len(grid), n), bool)
    for i, j in enumerate(model.joint_names):
        t, qj, ej, received = joints[j]
        q[:, i] = np.interp(grid, t, qj)
        e = np.interp(grid, t, ej)  # NaN next to a missing effort
        eff[:, i] = np.nan_to_num(e)
        k = np.clip(np.searchsorted(t, grid), 1, len(t) - 1)
        gap = (t[k] - t[k - 1]) > GAP_PERIODS / rate
        ok[:, i] = ~gap & np.isfinite(e) & ~received[k] & ~received[k - 1]
    if (~ok).any():
        notes.append(f"{int((~ok).any(axis=1).sum())} of {len(grid)} samples masked: a gap longer "
                     f"than {GAP_PERIODS:g} periods, a missing effort or a receive time")
    # zero-phase: row r of the filtered signals is the kernel centred on grid row r + c
    c = 3 * (L - 1) // 2
    qf = lowpass(q, 3 * L)
    tau = lowpass(eff, 3 * L) * gain
    use = valid(cast(np.ndarray, ok.all(axis=1)), 3 * L)  # ok is 2-D: an array
    dt = 1.0 / rate
    qd = np.gradient(qf, dt, axis=0)  # central differences: qd_k = (q_{k+1} - q_{k-1}) / (2 dt)
    qdd = np.gradient(qd, dt, axis=0)
    use[:2] = use[-2:] = False  # np.gradient's one-sided ends
    # qdd reaches 2 samples either side of the filtered q it differentiates: a masked sample's
    # neighbours within 2 are masked too (a receive-timed sample's spike reached 5 rows away)
    use &= np.convolve((~use).astype(float), np.ones(5), "same") == 0.0
    mask = use[:, None] & (np.abs(qd) >= min_velocity)
    t = grid[c:c + len(qf)]
    notes.append(f"resampled at {rate:.4g} Hz; velocities and accelerations by central differences of "
                 f"the positions low-passed at {4 * cutoff:g} Hz; the regressor and torques low-passed "
                 f"alike near {cutoff:g} Hz ({window} samples, zero phase)")
    source = "measured effort (real arm: /joint_states only)"
    return Samples(t - grid[0], qf, qd, qdd, tau, mask, source), window, notes
