"""``rbd-ros identify``: the dynamic parameters of an arm from a recording of it.

Usage::

    rbd-ros identify RUN_DIR|BAG (--robot NAME | --urdf PATH [--base-link L] [--tip-link L]
                     | --model FILE.yaml) -o arm_identified.(yaml|urdf) [--plot PNG] [--json FILE]
                     [--held-out FRACTION] [--window SAMPLES] [--min-velocity V]
    rbd-ros identify RUN_DIR|BAG --payload (--robot|--urdf|--model ...) -o payload.yaml
                     [--wrench-topic /ft_sensor/wrench_raw]

The robot given is the prior: its kinematics define the regressor, its inertial parameters fill
what the recording cannot see.  Prints the base parameters (identified, standard deviation,
prior), the held-out torque prediction error of the prior and the identified model, and writes
the identified model (``MdhModel`` YAML under ``model:``, the figures under ``identification:``),
which ``rbd-ros bringup --model``, the nodes' ``model_yaml`` parameter and ``Robot.from_yaml``
load.  ``-o NAME.urdf`` also writes the identified inertials and joint friction into a copy of
the prior's URDF (``--urdf``, or the bundled robot's), everything else unchanged
(``identification.write_back``: for MoveIt, robot_state_publisher, a URDF simulator), with the
YAML beside it as ``NAME.yaml``.  Bad input exits 2 with one line ``rbd-ros identify: error: ...``.

``--payload``: the tool on the wrist F/T sensor instead (issue 41.2,
``identification.payload``): its mass, centre of mass, inertia (sensor frame: the robot's tool
frame) and the sensor's offset, from the raw F/T readings (``--wrench-topic``, default
``/ft_sensor/wrench_raw``, interpolated to the ``/joint_states`` stamps) over free motion (a
bringup run's directory will do: ``--record`` records the F/T topics), written to ``-o`` for the
bridge's ``ft_payload`` (``/ft_sensor/wrench_compensated``); ``--window`` the parallel filter's
(default: 1 for a noise-free recording, else 81).  A stretch the payload cannot explain
(contact) is named in a warning and left out, a recording that never turns the sensor refused
(``identification.payload_contact``).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from rbd_ros import Robot
from rbd_ros.identification.estimate import identify_samples, write_model
from rbd_ros.identification.payload import payload_from_states, save_payload
from rbd_ros.identification.regressor import regressor, standard_parameters
from rbd_ros.identification.write_back import write_back
from rbd_ros.model import MdhModel
from rbd_ros.urdf import load_model
from rbd_ros.util.resources import DEFAULT_ROBOT, bundled_robots, bundled_urdf, config_file


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rbd-ros identify", description=__doc__.split("\n\n")[0])
    p.add_argument("recording", help="a run directory of rbd-ros bringup --record, or a rosbag2 bag")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--robot", default=None, help="bundled robot (its config/NAME.yaml)")
    src.add_argument("--urdf", default="", help="a .urdf/.xacro file")
    src.add_argument("--model", default="", help="an MDH model YAML (rbd-ros urdf2mdh -o, config/NAME.yaml)")
    p.add_argument("--base-link", default="")
    p.add_argument("--tip-link", default="")
    p.add_argument("-o", "--output", required=True, metavar="OUT.yaml|OUT.urdf",
                   help="the identified model (.urdf: also written into a copy of the prior's URDF, "
                        "the YAML beside it)")
    p.add_argument("--plot", default="", metavar="PNG", help="measured vs predicted torques (held-out part)")
    p.add_argument("--json", default="", metavar="FILE", help="the figures as JSON")
    p.add_argument("--held-out", type=float, default=0.25, metavar="FRACTION",
                   help="the last part of the recording kept for validation (default 0.25)")
    p.add_argument("--window", type=int, default=0, metavar="SAMPLES",
                   help="width of the parallel low-pass filter on the regressor and the torques (estimate.lowpass) "
                        "(default: 1 for a noise-free recording, else 81)")
    p.add_argument("--min-velocity", type=float, default=0.02, metavar="V",
                   help="leave out equations of a joint slower than this (rad/s; default 0.02)")
    real = p.add_argument_group("a real arm's recording (identification.real_arm)")
    real.add_argument("--real-arm", action="store_true",
                      help="use /joint_states alone (positions and measured efforts, as a ros2_control "
                           "arm's joint_state_broadcaster publishes them): resampled, zero-phase "
                           "low-passed, differentiated (default when the bag has no commands and no "
                           "velocities)")
    real.add_argument("--rate", type=float, default=0.0, metavar="HZ",
                      help="resampling rate (default: the median rate of /joint_states)")
    real.add_argument("--cutoff", type=float, default=10.0, metavar="HZ",
                      help="low-pass cutoff for positions and efforts (default 10)")
    real.add_argument("--torque-constant", default="1", metavar="K[,K...]",
                      help="N m per unit of the effort field, one or one per joint (a driver that "
                           "reports motor current: torque constant x gear ratio; default 1)")
    pay = p.add_argument_group("the payload on the wrist F/T sensor (identification.payload)")
    pay.add_argument("--payload", action="store_true",
                     help="identify the tool on the F/T sensor (mass, centre of mass, inertia, offset) "
                          "from free motion, not the arm; -o is the payload YAML")
    pay.add_argument("--wrench-topic", default="/ft_sensor/wrench_raw", metavar="TOPIC",
                     help="the raw F/T readings (geometry_msgs/WrenchStamped; default /ft_sensor/wrench_raw)")
    return p


def run_payload(args: argparse.Namespace) -> int:
    """``--payload`` (module docstring)."""
    from rbd_ros.identification.recording import (  # lazy: the bag reader (55 ms of import)
        JOINT_STATES,
        RecordingError,
        bag_directory,
        read_topics,
    )

    prior = load_prior(args)
    bag = bag_directory(args.recording)
    topics = read_topics(bag, (JOINT_STATES, args.wrench_topic))
    states, wrenches = topics[JOINT_STATES], topics[args.wrench_topic]
    if not states or not wrenches:
        missing = [k for k, v in topics.items() if not v]
        raise RecordingError(f"{bag}: no {' and no '.join(missing)} messages; --payload needs the joint "
                             f"states and the raw F/T readings (--wrench-topic)")
    names = list(states[0][1].name)
    absent = [j for j in prior.joint_names if j not in names]
    if absent:
        raise RecordingError(f"{bag}: the recording's joints {names} lack the model's {absent}")
    order = [names.index(j) for j in prior.joint_names]
    stamp = lambda m: m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec  # noqa: E731
    t = np.array([stamp(m) for _, m in states])
    t, keep = np.unique(t, return_index=True)  # a paused bridge repeats its state
    q = np.array([np.asarray(states[k][1].position, dtype=float)[order] for k in keep])
    with_v = all(len(states[k][1].velocity) == len(names) for k in keep)
    qd = np.array([np.asarray(states[k][1].velocity, dtype=float)[order] for k in keep]) if with_v else None
    tw = np.array([stamp(m) for _, m in wrenches])
    tw, kw = np.unique(tw, return_index=True)
    w = np.array([[m.wrench.force.x, m.wrench.force.y, m.wrench.force.z, m.wrench.torque.x,
                   m.wrench.torque.y, m.wrench.torque.z] for _, m in (wrenches[k] for k in kw)])
    inside = (t >= tw[0]) & (t <= tw[-1])
    if inside.sum() < 20:
        raise RecordingError(f"{bag}: {int(inside.sum())} joint states within the F/T readings' "
                             f"{tw[0]:.3f}-{tw[-1]:.3f} s; record both over the same motion")
    wi = np.stack([np.interp(t[inside], tw, w[:, c]) for c in range(6)], axis=1)
    p = payload_from_states(Robot(prior), t[inside], q[inside], None if qd is None else qd[inside], wi,
                            window=args.window)
    for span in p.left_out:  # contact: the payload model cannot explain it (payload_contact)
        print(f"warning: the F/T readings at {span.line(t[0])} are not explained by a payload: "
              "contact? left out of the fit", file=sys.stderr)
    frame = f"{prior.tip_link or prior.link_names[-1]} (tool frame of {prior.name})"
    save_payload(p, args.output, frame, header=(
        f"payload on the F/T sensor identified by rbd-ros identify --payload from {args.recording}\n"
        f"({int(inside.sum())} states, {args.wrench_topic}); the bridge's ft_payload reads it"))
    print(f"payload: mass {p.mass:.4f} kg, centre of mass {np.round(p.com, 5).tolist()} m, inertia "
          f"diagonal {np.round(np.diag(p.inertia), 6).tolist()} kg m^2 (sensor frame); offset "
          f"{np.round(p.offset, 4).tolist()}; condition {p.condition:.3g}; residual RMS force "
          f"{np.sqrt(np.mean(p.residual[:3] ** 2)):.3g} N, moment {np.sqrt(np.mean(p.residual[3:] ** 2)):.3g} N m")
    print(f"wrote {args.output}")
    return 0


def load_prior(args: argparse.Namespace):
    """The robot given: ``--model`` file, ``--urdf`` file or bundled ``--robot``."""
    if args.model:
        if not Path(args.model).is_file():
            raise ValueError(f"--model {args.model}: file not found")
        return MdhModel.from_yaml(args.model)
    if args.urdf:
        if not Path(args.urdf).is_file():
            raise ValueError(f"--urdf {args.urdf}: file not found")
        return load_model(args.urdf, base_link=args.base_link or None, tip_link=args.tip_link or None)
    robot = args.robot or DEFAULT_ROBOT
    if robot not in bundled_robots():
        raise ValueError(f"unknown robot '{robot}'; bundled robots: {', '.join(bundled_robots())}")
    return MdhModel.from_yaml(str(config_file(robot)))


def prior_urdf(args: argparse.Namespace) -> str:
    """The URDF an ``-o NAME.urdf`` is written over: ``--urdf``, or the bundled robot's."""
    if args.urdf:
        return args.urdf
    if args.model:
        raise ValueError(f"-o {args.output}: a URDF is written over the prior's URDF; --model "
                         f"{args.model} has none: give --urdf (the arm's description) instead")
    return str(bundled_urdf(args.robot or DEFAULT_ROBOT))


def real_arm(args: argparse.Namespace, prior, bag: Path, topics: dict):
    """The samples of a real arm's ``/joint_states`` (``--real-arm``, or a bag with no commands
    and no velocities) and the parallel filter's window, or None for a bringup recording;
    ``topics``: the bag's ``recording.read_topics``."""
    from rbd_ros.identification.real_arm import real_arm_samples  # lazy: the bag reader (58 ms of import)
    from rbd_ros.identification.recording import COMMANDS, JOINT_STATES  # lazy: the bag reader (48 ms of import)

    states = topics[JOINT_STATES]
    auto = not topics[COMMANDS] and bool(states) and all(len(m.velocity) == 0 for _, m in states)
    if not (args.real_arm or auto):
        return None
    try:
        k = [float(x) for x in str(args.torque_constant).split(",")]
    except ValueError:
        raise ValueError(f"--torque-constant {args.torque_constant}: not numbers") from None
    samples, window, notes = real_arm_samples(states, prior, str(bag), rate=args.rate, cutoff=args.cutoff,
                                      torque_constant=k[0] if len(k) == 1 else np.array(k),
                                      min_velocity=args.min_velocity)
    if auto and not args.real_arm:
        notes.insert(0, "no commands and no velocities in the bag: read as a real arm's /joint_states")
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return samples, window


def run(args: argparse.Namespace) -> int:
    from rbd_ros.identification.recording import (  # lazy: the bag reader (45 ms of import)
        bag_directory,
        load_recording,
        read_topics,
    )

    if args.payload:
        return run_payload(args)
    if not 0.0 < args.held_out < 0.9:  # before the bag is read
        raise ValueError(f"--held-out must be in (0, 0.9), got {args.held_out}")
    urdf_out = args.output if args.output.lower().endswith(".urdf") else ""
    urdf_in = prior_urdf(args) if urdf_out else ""
    prior = load_prior(args)
    window = args.window
    bag = bag_directory(args.recording)
    topics = read_topics(bag)  # once: for the real-arm test and for the samples
    real = real_arm(args, prior, bag, topics)
    if real is None:
        samples = load_recording(bag, prior, min_velocity=args.min_velocity, topics=topics)
    else:
        samples, window = real[0], window if window > 0 else real[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res, held, window = identify_samples(prior, samples, args.held_out, window)
    print(res.table())
    v = res.validation
    print(f"{res.samples} samples ({window}-sample parallel filter), {res.base.count} base parameters, "
          f"condition number {res.condition:.3g}; physical model: {res.consistency} "
          f"(base parameters within {res.gap:.2g} relative)")
    checks = res.summary()["physical_checks"]
    bad = [c["joint"] for c in checks if not c["physical"]]
    print(f"physical checks per link (mass > 0, pseudo-inertia PSD, principal moments' triangle "
          f"inequalities): {'all pass' if not bad else 'FAIL on ' + ', '.join(bad)}; least triangle "
          f"margin {min(c['triangle_margin'] for c in checks):.3g}")
    print(f"held-out torque error ({v['samples']} samples): prior {v['prior_error_percent']:.2f} % "
          f"of the RMS torque, identified {v['identified_error_percent']:.2f} %")
    for w in caught:
        if not issubclass(w.category, DeprecationWarning):
            print(f"warning: {w.message}", file=sys.stderr)
    yaml_out = str(Path(urdf_out).with_suffix(".yaml")) if urdf_out else args.output
    write_model(res, yaml_out, args.recording)
    print(f"wrote {yaml_out}")
    if urdf_out:
        written = write_back(urdf_in, res.model)
        Path(urdf_out).parent.mkdir(parents=True, exist_ok=True)
        Path(urdf_out).write_text(written.text, encoding="utf-8")
        for note in written.notes:
            print(f"note: {note}", file=sys.stderr)
        print(f"wrote {urdf_out} (the identified inertials and friction in a copy of {urdf_in})")
    if args.json:
        Path(args.json).write_text(json.dumps(res.summary(), indent=1))
    if args.plot:
        plot_torques(args.plot, prior, res, held)
        print(f"wrote {args.plot}")
    return 0


def plot_torques(path: str, prior, res, held) -> None:
    """Measured torque and the two models' predictions per joint on the held-out samples."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt


    Y = regressor(prior, held.q, held.qd, held.qdd)
    n = prior.dof
    fig, axes = plt.subplots(n, 1, figsize=(9, 1.8 * n + 0.8), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(held.t, held.tau[:, j], "k", lw=1.2, label="measured (commanded)")
        ax.plot(held.t, Y[:, j] @ standard_parameters(prior), "C3", lw=0.9, label="URDF / prior model")
        ax.plot(held.t, Y[:, j] @ standard_parameters(res.model), "C0--", lw=0.9, label="identified")
        ax.set_ylabel(f"{prior.joint_names[j]}\nN m", fontsize=8)
    axes[0, 0].legend(fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("time (s)")
    v = res.validation
    fig.suptitle(f"held-out torques: prior {v['prior_error_percent']:.1f} %, identified "
                 f"{v['identified_error_percent']:.2f} % RMS error", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except (ValueError, FileNotFoundError, OSError, RuntimeError) as exc:
        print(f"rbd-ros identify: error: {exc}", file=sys.stderr)
        return 2
