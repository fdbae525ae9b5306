"""Recordings for the identification tests without ROS: the simulated arm (any ``MdhModel``)
stepped in MuJoCo by ``rbd_ros.sim.Simulator`` in lockstep (the bridge's own simulator), driven
by computed torque with the controller's model along a trajectory, written as a rosbag2 bag
in the bringup's format (``/joint_states`` each step, ``/effort_controller/commands`` stamped
with the state it answered) with ``rosbags``; ``fourier``, a smooth trajectory with exact
derivatives for recordings made without a simulator."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def fourier(model, N: int = 2000, seed: int = 1, T: float = 10.0):
    """A 5-harmonic trajectory (exact derivatives) around the middle of the limits."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, T, N)[:, None]
    w = 2 * np.pi / T
    lo, hi = np.clip(model.lower, -np.pi, np.pi), np.clip(model.upper, -np.pi, np.pi)
    q = np.broadcast_to(0.5 * (lo + hi), (N, model.dof)).copy()
    qd, qdd = np.zeros_like(q), np.zeros_like(q)
    for k in range(1, 6):
        a, b = rng.normal(size=(2, model.dof)) * 0.3 / k
        s, c = np.sin(k * w * t), np.cos(k * w * t)
        q += a * s + b * c
        qd += k * w * (a * c - b * s)
        qdd += -(k * w) ** 2 * (a * s + b * c)
    return q, qd, qdd


def as_simulated(model):
    """``model`` with each link's inertial as MuJoCo is given it (``mujoco_model.fix_inertia``:
    a zero mass raised to ``min_mass``, tiny moments to ``min_inertia``, the triangle
    inequality restored): the arm ``simulate`` steps, so the truth to compare identified
    parameters with.  A human arm's massless virtual links, 1e-6 kg and 1e-9 kg m^2 there,
    are otherwise a model error of ~1e-5 N m in every recorded torque."""
    from rbd_ros.sim.mujoco_model import fix_inertia

    mass, com, inertia = model.mass.copy(), model.com.copy(), model.inertia.copy()
    for i in range(model.dof):
        fixed, _ = fix_inertia(float(mass[i]), com[i], inertia[i])
        mass[i], com[i] = fixed.mass, fixed.com
        inertia[i] = (fixed.axes * fixed.principal) @ fixed.axes.T
    return model.replace(mass=mass, com=com, inertia=inertia)


def simulate(sim_model, control_model, trajectory, duration: float, noise: dict | None = None,
             dt: float = 0.001, kp: float = 400.0, kd: float = 40.0):
    """``(t, q, qd, effort, commands)`` of the measured states (with the bridge's sensor noise
    ``noise``) and the torque commands; ``trajectory(t) -> (q, qd, qdd)``."""
    from rbd_ros.robot import Robot
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    q0 = trajectory(0.0)[0]
    cfg = BridgeConfig(timestep=dt, mode="lockstep", initial_positions=tuple(q0), command_timeout=0.0,
                       **(noise or {}))
    sim = Simulator(sim_model, cfg)
    robot = Robot(control_model)
    steps = int(round(duration / dt))
    n = sim_model.dof
    T = np.zeros(steps)
    Q, QD, E, U = (np.zeros((steps, n)) for _ in range(4))
    for k in range(steps):
        t = sim.time
        q, qd, eff = (np.array(x, dtype=float) for x in sim.measure())
        qr, qdr, qddr = trajectory(t)
        a = qddr + kp * (qr - q) + kd * (qdr - qd)
        u = robot.inverse_dynamics(q, qd, a, include_actuators=True)  # computed torque (003 §6.6)
        u += 5.0 * (qr - q) + 0.5 * (qdr - qd)  # N m/rad: light joints past unmodelled stiction
        T[k], Q[k], QD[k], E[k], U[k] = t, q, qd, eff, u
        sim.command(u)
        sim.step()
    return T, Q, QD, E, U


def write_bag(path: Path, names, t, q, qd, effort, commands, with_commands: bool = True,
              with_efforts: bool = True) -> Path:
    """A rosbag2 bag (sqlite3) with the bringup's two topics (``with_efforts=False``: the
    states' effort fields empty, as from an arm without torque sensing)."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_KILTED)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header = store.types["std_msgs/msg/Header"]
    Time = store.types["builtin_interfaces/msg/Time"]
    Array = store.types["std_msgs/msg/Float64MultiArray"]
    Layout = store.types["std_msgs/msg/MultiArrayLayout"]
    with Writer(path, version=9) as w:
        cs = w.add_connection("/joint_states", JointState.__msgtype__, typestore=store)
        cc = w.add_connection("/effort_controller/commands", Array.__msgtype__, typestore=store) \
            if with_commands else None
        for k in range(len(t)):
            ns = int(round(t[k] * 1e9))
            stamp = Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
            msg = JointState(header=Header(stamp=stamp, frame_id=""), name=list(names),
                             position=q[k].copy(), velocity=qd[k].copy(),
                             effort=effort[k].copy() if with_efforts else np.zeros(0))
            w.write(cs, ns, store.serialize_cdr(msg, msg.__msgtype__))
            if cc is not None:
                cmd = Array(layout=Layout(dim=[], data_offset=0), data=commands[k].copy())
                w.write(cc, ns, store.serialize_cdr(cmd, cmd.__msgtype__))
    return path
