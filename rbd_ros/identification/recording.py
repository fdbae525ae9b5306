"""Samples for identification from a recording: ``rbd-ros bringup --record DIR`` writes
``DIR/bag`` (rosbag2: ``/joint_states`` and the torque commands ``/effort_controller/commands``,
each command stamped with the state it answered); any rosbag2 bag with these topics will do.

The torque ``u_k`` acts from state ``k`` to state ``k + 1``, so the equation of motion is taken
at the interval's middle: ``q = (q_k + q_{k+1})/2``, ``qd`` likewise, ``qdd = (qd_{k+1} - qd_k)
/ dt`` (the mean acceleration over the step, second order in ``dt``), ``tau = u_k``; the
viscous term ``FV qd`` by the step's mean velocity ``qd_step = (q_{k+1} - q_k) / dt``, its
exact integral over the step (``Samples.qd_step``).  Not the trapezoid ``(qd_k + qd_{k+1})/2``:
under a torque held over the step the velocity relaxes on the joint's own time constant
``m / FV``, and the trapezoid exceeds the mean by ``dt^2 (FV/m) qdd / 12``, an apparent
armature ``FV^2 dt^2 / (12 m)`` (the finger_edu's third joint, ``FV`` 0.25 N m s/rad on
9e-4 kg m^2: ``Ia3`` 2.9 % off with neither noise nor bias elsewhere; 0.0009 % mean error with
``qd_step``).  Only the viscous column: it is linear, so the parallel filter's average of
``qd_step`` telescopes to a difference of positions over the kernel and the positions' noise
stays small there, while the quadratic velocity terms would carry that noise's variance as a
bias.  ``u_k`` is
the drives' measured effort of state ``k + 1`` (the bridge reports the torque it applied over
the step that led there, saturation included, with its ``effort_noise``) when ``/joint_states``
carries efforts; else the command stamped with state ``k`` (the bringup stamps a command with
the last state it had seen when the command arrived, which a loaded machine delays by several
steps: measured efforts are the better source). With sensor noise, ``estimate.identify`` low-
passes the regressor and the torques by the same filter (Gautier's parallel filtering).
Equations left out: a joint below ``min_velocity`` (Coulomb friction is a stick-slip constraint
there, not ``FC sign(qd)``) or at its effort limit (the drive saturated: the torque applied is
not the command).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

from rbd_ros.model import MdhModel

JOINT_STATES = "/joint_states"
COMMANDS = "/effort_controller/commands"


class RecordingError(ValueError):
    """The recording cannot be used (one line: what is wrong and what would fix it)."""


@dataclass
class Samples:
    """Equations of motion at the recording's intervals (all (N, n), model joint order)."""

    t: np.ndarray  # (N,) s
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    mask: np.ndarray  # bool: equations to use
    source: str = "measured effort"  # of tau: 'measured effort' or 'command'
    #: the viscous column's velocity (``regressor``'s ``qd_viscous``): each step's mean
    #: velocity (module docstring); None: ``qd`` (samples at instants, ``real_arm``)
    qd_step: np.ndarray | None = None

    def split(self, held_out: float) -> tuple["Samples", "Samples"]:
        """The first ``1 - held_out`` of the time for fitting, the rest for validation."""
        k = int(round(len(self.t) * (1.0 - held_out)))

        def part(s: slice) -> Samples:
            return Samples(self.t[s], self.q[s], self.qd[s], self.qdd[s], self.tau[s], self.mask[s],
                           self.source, None if self.qd_step is None else self.qd_step[s])
        return part(slice(0, k)), part(slice(k, None))

    def equations(self) -> dict:
        """``identify``'s sample arguments: ``q, qd, qdd, tau, mask, qd_viscous``."""
        return {"q": self.q, "qd": self.qd, "qdd": self.qdd, "tau": self.tau, "mask": self.mask,
                "qd_viscous": self.qd_step}


def bag_directory(path: str | Path) -> Path:
    """The bag of a run directory (``DIR/bag``) or a bag directory itself."""
    p = Path(path)
    if not p.exists():
        raise RecordingError(f"{p}: no such run directory or bag")
    if (p / "bag").is_dir():
        return p / "bag"
    if (p / "metadata.yaml").is_file() or any(p.glob("*.db3")) or any(p.glob("*.mcap")):
        return p
    raise RecordingError(f"{p}: neither a run directory (with bag/) nor a rosbag2 bag (metadata.yaml); "
                         "record one with rbd-ros bringup --record DIR")


def read_topics(bag: Path, names: tuple[str, ...] = (JOINT_STATES, COMMANDS)) -> dict[str, list]:
    """``{topic: [(stamp_ns, message), ...]}`` of the topics ``names`` (the two the joint
    identification uses; rosbags, no ROS)."""

    if bag.is_dir() and not (bag / "metadata.yaml").is_file() and any(bag.glob("*.db3")):
        raise RecordingError(f"{bag}: no metadata.yaml beside the .db3 (a recording that was killed "
                             f"before it closed?): `ros2 bag reindex {bag}` rebuilds it from what "
                             "was committed")
    store = get_typestore(Stores.ROS2_KILTED)
    out: dict[str, list] = {name: [] for name in names}
    try:
        with Reader(bag) as reader:
            conns = [c for c in reader.connections if c.topic in out]
            for conn, stamp, raw in reader.messages(connections=conns):
                out[conn.topic].append((stamp, store.deserialize_cdr(raw, conn.msgtype)))
    except Exception as exc:  # noqa: BLE001 - rosbags raises several kinds
        raise RecordingError(f"{bag}: cannot read the bag ({exc})") from None
    return out


def _arrays(messages: dict[str, list], model: MdhModel, bag: Path):
    states, commands = messages[JOINT_STATES], messages[COMMANDS]
    if not states:
        raise RecordingError(f"{bag}: no {JOINT_STATES} messages; the identification needs the measured states")
    names = list(states[0][1].name)
    missing = [j for j in model.joint_names if j not in names]
    if missing:
        raise RecordingError(f"{bag}: the recording's joints {names} lack the model's {missing}; "
                             f"give the robot that was recorded (--robot/--urdf/--model)")
    eff = [np.asarray(m.effort, dtype=float) for _, m in states]
    measured = all(len(e) == len(names) for e in eff) and any(np.any(e != 0.0) for e in eff)
    if not (commands or measured):
        raise RecordingError(f"{bag}: no {COMMANDS} messages and no efforts in {JOINT_STATES}; the "
                             "identification needs the torques applied (rbd-ros bringup --record "
                             "records both)")
    order = np.array([names.index(j) for j in model.joint_names])
    t = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for _, m in states])
    q = np.array([np.asarray(m.position, dtype=float) for _, m in states])[:, order]
    qd = np.array([np.asarray(m.velocity, dtype=float) for _, m in states])
    if qd.shape != (len(states), len(names)):
        raise RecordingError(f"{bag}: {JOINT_STATES} carries no velocities")
    qd = qd[:, order]
    keep = np.unique(t, return_index=True)[1]  # a paused bridge repeats its state
    t, q, qd = t[keep], q[keep], qd[keep]
    if measured:  # the drive's torque over the step that led to each state: interval k is state k+1's
        u = np.array(eff)[keep][:, order]
        return t, q, qd, np.vstack([u[1:], np.full((1, len(order)), np.nan)]), "measured effort"
    ct = np.array([s for s, _ in commands]) * 1e-9  # stamped with the state each answered
    cu = [np.asarray(m.data, dtype=float) for _, m in commands]
    if any(len(u) != len(names) for u in cu):
        raise RecordingError(f"{bag}: a command has {len(cu[0])} values for {len(names)} joints")
    u = np.array(cu)[:, order]
    k = np.searchsorted(ct, t + 1e-9, side="right") - 1  # the last command at or before each state
    has = k >= 0
    return t[has], q[has], qd[has], u[k[has]], "command"


def load_recording(path: str | Path, model: MdhModel, min_velocity: float = 0.02,
                   saturation: float = 0.999, topics: dict[str, list] | None = None) -> Samples:
    """The samples of a run directory or bag for ``model``'s joints (module docstring), not
    smoothed (``estimate.identify``'s ``window`` filters the regressor and the torques).
    ``min_velocity`` rad/s (m/s); ``saturation``: commanded equations with ``|u| >=
    saturation * effort_limit`` are left out; ``topics``: the bag's ``read_topics``, when the
    caller has read it already (then ``path`` only names the recording in messages: the
    bringup's identification loop hands the states it received, no bag)."""
    bag = bag_directory(path) if topics is None else Path(path)
    t, q, qd, u, source = _arrays(read_topics(bag) if topics is None else topics, model, bag)
    if len(t) < 3:
        raise RecordingError(f"{bag}: {len(t)} states with commands; too short to identify anything")
    dt = np.diff(t)
    if not (dt > 0).all():
        raise RecordingError(f"{bag}: {JOINT_STATES} stamps do not increase")
    mid = lambda x: 0.5 * (x[1:] + x[:-1])  # noqa: E731
    tm, qm, qdm = mid(t), mid(q), mid(qd)
    qdd = np.diff(qd, axis=0) / dt[:, None]
    qd_step = np.diff(q, axis=0) / dt[:, None]  # the step's mean velocity: FV's (module docstring)
    tau = u[:-1]
    limit = np.abs(model.effort_limit)
    saturated = np.isfinite(limit) & (np.abs(tau) >= saturation * limit) & (source == "command")
    mask = (np.abs(qdm) >= min_velocity) & ~saturated & np.isfinite(tau)
    return Samples(tm, qm, qdm, qdd, tau, mask, source, qd_step)
