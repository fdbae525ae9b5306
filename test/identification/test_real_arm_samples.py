"""``identification.real_arm.real_arm_samples`` on a synthetic ``/joint_states`` stream of the
bundled two-link arm, as a ros2_control ``joint_state_broadcaster`` publishes it: messages in
two groups (arm joints in a scrambled order, a gripper the model lacks), jittered stamps, a
few stamped 0 (timed by their receive time, masked), efforts in motor current.  Oracle: the
sinusoids' own derivatives and torques (the fast tier's test of the module; the whole path
from a simulated Z1 bag through ``rbd-ros identify`` is ``test_identify_recording``'s, marked
slow)."""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

from rbd_ros.identification.real_arm import real_arm_samples
from rbd_ros.identification.recording import RecordingError
from rbd_ros.model.mdh_model import MdhModel
from rbd_ros.util.resources import share_dir

W = np.array([2.0 * np.pi * 0.5, 2.0 * np.pi * 0.3])  # rad/s of each joint's sinusoid
AMP = np.array([0.8, 0.5])
KT = np.array([2.0, 0.5])  # N m per unit of the effort field (a current)


def _tau(t):  # any smooth torque: the samples carry it through, scaled by KT
    return np.column_stack([3.0 * np.cos(W[0] * t), 1.0 + np.sin(W[1] * t)])


def _msg(stamp: float, names, q, e):
    sec = int(stamp)
    return NS(header=NS(stamp=NS(sec=sec, nanosec=int(round((stamp - sec) * 1e9)))),
              name=list(names), position=list(q), effort=list(e), velocity=[])


@pytest.fixture(scope="module")
def model() -> MdhModel:
    return MdhModel.from_yaml(str(share_dir() / "config" / "planar2.yaml"))


def _stream(model, rate=500.0, duration=6.0, seed=3):
    rng = np.random.default_rng(seed)
    t = 1.0 + np.arange(int(duration * rate)) / rate + rng.normal(0.0, 2e-5, int(duration * rate))
    q, tau = AMP * np.sin(np.outer(t - 1.0, W)), _tau(t - 1.0)
    j1, j2 = model.joint_names
    messages = []
    for k, tk in enumerate(t):
        stamp = 0.0 if k in (100, 101) else tk  # two stamped 0: the receive time instead
        recv = int(round((tk + 1e-4) * 1e9))
        messages.append((recv, _msg(stamp, [j2, j1], [q[k, 1], q[k, 0]], [tau[k, 1] / KT[1], tau[k, 0] / KT[0]])))
        messages.append((recv, _msg(stamp, ["finger"], [0.01], [0.0])))
    return messages


def test_samples_follow_the_motion_and_say_what_was_not_used(model) -> None:
    samples, window, notes = real_arm_samples(_stream(model), model, rate=500.0, cutoff=10.0,
                                              torque_constant=KT)
    t0 = 1.0 + samples.t  # the stream's own time (the grid starts at the first common stamp)
    use = samples.mask.all(axis=1)
    assert use.sum() > 0.9 * len(use)
    s = np.outer(t0 - 1.0, W)
    q, qd, qdd = AMP * np.sin(s), AMP * W * np.cos(s), -AMP * W ** 2 * np.sin(s)
    assert np.abs(samples.q[use] - q[use]).max() < 2e-3 * AMP.max()  # the light low-pass at 40 Hz
    assert np.abs(samples.qd[use] - qd[use]).max() < 1e-2 * np.abs(qd).max()
    assert np.abs(samples.qdd[use] - qdd[use]).max() < 1e-2 * np.abs(qdd).max()
    assert np.abs(samples.tau[use] - _tau(t0 - 1.0)[use]).max() < 1e-2 * 3.0  # times KT, low-passed
    # the two messages stamped 0 (at 0.2 s) are timed by their receive time, 0.1 ms late: their
    # rows are masked, as far as the accelerations' differences reach (else a 6 rad/s^2 spike)
    near = np.abs(samples.t - 0.2) < 0.01
    assert not use[near].any() and use[np.abs(samples.t - 0.2) > 0.03].mean() > 0.95
    assert window == 3 * 13 and len(samples.t) == len(samples.q)  # 3 x L at 500 Hz, 10 Hz: L = 13
    text = " ".join(notes)
    assert "joints not in the model, left out: ['finger']" in text
    assert "4 messages stamped 0" in text and "their samples are masked" in text  # (two per group)
    assert "resampled at 500 Hz" in text


def test_bad_recordings_are_refused_by_name(model) -> None:
    messages = _stream(model, duration=1.0)
    with pytest.raises(RecordingError, match="torque-constant needs one finite non-zero value or 2"):
        real_arm_samples(messages, model, torque_constant=[1.0, 2.0, 3.0])
    with pytest.raises(RecordingError, match="cutoff must be a positive number"):
        real_arm_samples(messages, model, cutoff=0.0)
    gripper_only = [(r, m) for r, m in messages if m.name == ["finger"]]
    with pytest.raises(RecordingError, match="never name the model's joints"):
        real_arm_samples(gripper_only, model)
    no_effort = [(r, NS(**{**vars(m), "effort": []})) for r, m in messages]
    with pytest.raises(RecordingError, match="carries no efforts"):
        real_arm_samples(no_effort, model)
    with pytest.raises(RecordingError, match="too few for the"):
        real_arm_samples(messages[:200], model, cutoff=2.0)
