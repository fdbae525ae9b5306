"""The truth of a payload test (issue 41.2): what hangs below a wrist F/T sensor at the tool
frame of ``model``'s last body when a ``tool`` is welded there, the last body and the tool
combined by hand (the parallel-axis theorem), independent of ``identification.payload``."""
from __future__ import annotations

import numpy as np


def below_sensor(model, mass: float, com: np.ndarray, inertia: np.ndarray):
    """``(mass, com, inertia about the com)`` in the sensor (tool) frame of the last body and
    a tool of ``mass``, ``com`` and ``inertia`` given in that frame."""
    R, p = model.tool[:3, :3], model.tool[:3, 3]
    bodies = [(model.mass[-1], R.T @ (model.com[-1] - p), R.T @ model.inertia[-1] @ R),
              (mass, np.asarray(com, dtype=float), np.asarray(inertia, dtype=float))]
    m = sum(b[0] for b in bodies)
    c = sum(b[0] * b[1] for b in bodies) / m
    I = sum(Ib + mb * ((cb - c) @ (cb - c) * np.eye(3) - np.outer(cb - c, cb - c)) for mb, cb, Ib in bodies)
    return m, c, I


def write_bag(path, names, t, q, qd, wrench) -> None:
    """``/joint_states`` and ``/ft_sensor/wrench_raw`` as the bridge publishes them (a reading
    stamped with the state it belongs to), rosbag2 sqlite3."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_KILTED)
    JointState, Header, Time, WrenchStamped, Wrench, Vector3 = (store.types[k] for k in (
        "sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time",
        "geometry_msgs/msg/WrenchStamped", "geometry_msgs/msg/Wrench", "geometry_msgs/msg/Vector3"))
    with Writer(path, version=9) as w:
        cs = w.add_connection("/joint_states", JointState.__msgtype__, typestore=store)
        cw = w.add_connection("/ft_sensor/wrench_raw", WrenchStamped.__msgtype__, typestore=store)
        for k in range(len(t)):
            ns = int(round(t[k] * 1e9))
            head = Header(stamp=Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000), frame_id="ft_sensor")
            js = JointState(header=head, name=list(names), position=q[k].copy(), velocity=qd[k].copy(),
                            effort=np.zeros(0))
            w.write(cs, ns, store.serialize_cdr(js, js.__msgtype__))
            f, n = (Vector3(x=float(a), y=float(b), z=float(c)) for a, b, c in (wrench[k, :3], wrench[k, 3:]))
            ws = WrenchStamped(header=head, wrench=Wrench(force=f, torque=n))
            w.write(cw, ns, store.serialize_cdr(ws, ws.__msgtype__))
