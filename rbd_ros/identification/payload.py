"""The payload on a wrist force/torque sensor, identified from its readings (issue 41.2), and
the readings compensated for it.

A wrist F/T sensor reads the wrench ``w = [f; n]`` that the arm exerts, through the sensor, on
everything below it (``control.wrench``'s convention, MuJoCo's ``force``/``torque`` sensors):
the tool's weight and inertia, which change with the arm's pose and motion, plus the sensor's
own offset, plus any contact.  In free motion the tool is one rigid body, and its Newton-Euler
equations about the sensor origin, in the sensor frame, are linear in its ten inertial
parameters ``phi = (m, m c, I_o)`` (Atkeson, An and Hollerbach 1986, eq. (5); Khalil-Dombre
§12.6.2), with ``I_o = (Ixx, Ixy, Ixz, Iyy, Iyz, Izz)`` about the sensor origin::

    f = m (a - g) + ([alpha]x + [omega]x [omega]x) (m c)
    n = (L(alpha) + [omega]x L(omega)) I_o - [a - g]x (m c)        L(v) I_o = I_o v

``a``, ``omega``, ``alpha``: the sensor origin's linear acceleration and the sensor's angular
velocity and acceleration, ``g`` gravity, all in sensor axes (``sensor_motion``: from the
joint states, ``a = J_v q'' + (J' q')_v``, ``alpha = J_w q'' + (J' q')_w``, rotated by ``R^T``).
So ``w = A(a - g, omega, alpha) phi + w_0`` (``wrench_regressor``; the offset ``w_0`` six
more unknowns), stacked over the samples of a short excitation and solved by least squares
(``identify_payload``).  ``Payload.compensate`` then gives ``w - A phi - w_0``: the wrench the
tool exerts on the environment, ~0 in free motion.

The mass and the centre of mass are seen through gravity as the sensor turns; ``I_o`` only
through ``alpha`` and ``omega``: a motion that barely turns the wrist leaves it poorly known
(``Payload.condition`` says how well the data determine ``phi``; an inertia that is not a body's
is not corrected here: use the estimate's mass and centre of mass alone then).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rbd_ros.identification.estimate import lowpass, parallel_window
from rbd_ros.identification.payload_contact import fit_without_contact
from rbd_ros.identification.regressor import link_wrench_matrix
from rbd_ros.util import yaml_io

PARAMETERS = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")


#: the regressor's columns (``regressor.PARAMETERS``: XX .. ZZ, MX, MY, MZ, M) in ``PARAMETERS`` order
_COLUMNS = [9, 6, 7, 8, 0, 1, 2, 3, 4, 5]


def wrench_regressor(a_minus_g: np.ndarray, omega: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """``A`` (N, 6, 10) of the module docstring from the sensor's motion (each (N, 3), sensor
    axes): ``w = A phi`` for ``phi`` in ``PARAMETERS`` order.  The same Newton-Euler wrench as a
    link's in the joint-torque regressor (``regressor.link_wrench_matrix``, whose linear
    acceleration argument carries gravity as ``a - g``), its columns reordered."""
    return link_wrench_matrix(omega, alpha, a_minus_g)[:, :, _COLUMNS]


def sensor_motion(robot, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a - g, omega, alpha)`` (each (N, 3), sensor axes) of a sensor at the tool frame of
    ``robot`` (a fixed-base ``rbd_ros.Robot``) over the states ``(N, n)``."""
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    g = np.asarray(robot.model.gravity, dtype=float)
    out = np.zeros((3, len(q), 3))
    for k in range(len(q)):
        R = robot.fk(q[k])[:3, :3]
        J = robot.jacobian(q[k])
        acc = J @ qdd[k] + robot.jacobian_dot_times_qd(q[k], qd[k])  # [a; alpha], world axes
        out[0, k] = R.T @ (acc[:3] - g)
        out[1, k] = R.T @ (J[3:] @ qd[k])
        out[2, k] = R.T @ acc[3:]
    return out[0], out[1], out[2]


@dataclass(frozen=True)
class Payload:
    """A tool's ``mass`` (kg), centre of mass ``com`` (m, sensor frame) and ``inertia`` (3x3
    about the centre of mass, sensor axes), the sensor's ``offset`` ``[f; n]``, how well the data
    determined them (``condition`` of the scaled regressor), the fit's RMS ``residual``
    ``[f; n]`` per axis and the stretches left out as contact (``left_out``)."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray
    offset: np.ndarray
    condition: float = float("nan")
    residual: np.ndarray = field(default_factory=lambda: np.zeros(6))
    #: the stretches of the recording the payload could not explain, left out of the fit
    #: (``unexplained_spans``: contact), each ``Unexplained``
    left_out: tuple = ()

    @property
    def phi(self) -> np.ndarray:
        """The ten parameters (``PARAMETERS``), the inertia about the sensor origin."""
        c, m = self.com, self.mass
        Io = self.inertia + m * ((c @ c) * np.eye(3) - np.outer(c, c))
        return np.array([m, *(m * c), Io[0, 0], Io[0, 1], Io[0, 2], Io[1, 1], Io[1, 2], Io[2, 2]])

    def wrench(self, a_minus_g: np.ndarray, omega: np.ndarray, alpha: np.ndarray) -> np.ndarray:
        """The wrench (N, 6) the sensor reads in free motion: ``A phi + w_0``."""
        return wrench_regressor(a_minus_g, omega, alpha) @ self.phi + self.offset

    def compensate(self, wrench: np.ndarray, a_minus_g: np.ndarray, omega: np.ndarray,
                   alpha: np.ndarray) -> np.ndarray:
        """``wrench - A phi - w_0`` (N, 6): what the tool exerts on the environment."""
        return np.asarray(wrench, dtype=float) - self.wrench(a_minus_g, omega, alpha)


def identify_payload(wrench: np.ndarray, a_minus_g: np.ndarray, omega: np.ndarray, alpha: np.ndarray,
                     offset: bool = True, window: int = 1) -> Payload:
    """The payload (and, with ``offset``, the sensor's offset) that explain the free-motion
    readings ``wrench`` (N, 6) best in least squares, the forces and moments weighted by their
    RMS so that neither unit dominates (module docstring).  ``window`` > 2: the regressor and the
    readings through the same low-pass (``estimate.lowpass``, Gautier's parallel filtering: ``w =
    A phi`` holds for any linear filter applied to both), for noisy readings and accelerations."""
    w = np.asarray(wrench, dtype=float)
    if w.ndim != 2 or w.shape[1] != 6 or len(w) != len(a_minus_g):
        raise ValueError(f"identify_payload: wrench must be (N, 6) for the N = {len(a_minus_g)} "
                         f"states, got {w.shape}")
    if not (np.isfinite(w).all() and np.isfinite(a_minus_g).all() and np.isfinite(omega).all()
            and np.isfinite(alpha).all()):
        raise ValueError("identify_payload: a reading or a state is not finite")
    A, w = filtered_regressor(w, a_minus_g, omega, alpha, offset, window)
    return fit_weighted(A, w, offset)[0]


def filtered_regressor(w: np.ndarray, a_minus_g: np.ndarray, omega: np.ndarray, alpha: np.ndarray,
                       offset: bool, window: int) -> tuple[np.ndarray, np.ndarray]:
    """The regressor (with the offset's columns) and the readings, both low-passed (``window``)."""
    A = wrench_regressor(a_minus_g, omega, alpha)
    if offset:
        A = np.concatenate([A, np.broadcast_to(np.eye(6), (len(A), 6, 6))], axis=2)
    if window > 2:

        A, w = lowpass(A, window), lowpass(w, window)
        if len(w) < 2:
            raise ValueError(f"identify_payload: window {window} is longer than the {len(a_minus_g)} samples")
    return A, w


def fit_weighted(A: np.ndarray, w: np.ndarray, offset: bool) -> tuple[Payload, np.ndarray]:
    """Least squares of ``w = A x`` (module docstring), forces and moments weighted alike: the
    payload and ``x``."""
    scale = np.array([np.sqrt(np.mean(w[:, :3] ** 2)) or 1.0] * 3 + [np.sqrt(np.mean(w[:, 3:] ** 2)) or 1.0] * 3)
    Y = (A / scale[None, :, None]).reshape(-1, A.shape[2])
    b = (w / scale).reshape(-1)
    norms = np.linalg.norm(Y, axis=0)
    norms[norms == 0] = 1.0
    x, *_ = np.linalg.lstsq(Y / norms, b, rcond=None)
    x /= norms
    s = np.linalg.svd(Y / norms, compute_uv=False)
    cond = float(s[0] / s[-1]) if s[-1] > 0 else float("inf")
    m = float(x[0])
    c = x[1:4] / m if m != 0 else np.zeros(3)
    Io = np.array([[x[4], x[5], x[6]], [x[5], x[7], x[8]], [x[6], x[8], x[9]]])
    Ic = Io - m * ((c @ c) * np.eye(3) - np.outer(c, c))
    w0 = x[10:16] if offset else np.zeros(6)
    res = w - (A @ x)
    return Payload(m, c, Ic, np.array(w0), cond, np.sqrt(np.mean(res ** 2, axis=0))), x


# ---- the payload as a file (``rbd-ros identify --payload -o FILE``) ---------------------------------
def payload_to_dict(p: Payload, frame: str = "") -> dict:
    """The YAML form: ``payload: {mass, com, inertia (3x3), offset, frame, condition, residual}``."""
    return {"payload": {"frame": frame, "mass": float(p.mass), "com": [float(x) for x in p.com],
                        "inertia": [[float(x) for x in r] for r in np.asarray(p.inertia)],
                        "offset": [float(x) for x in p.offset], "condition": float(p.condition),
                        "residual": [float(x) for x in p.residual],
                        **({"left_out_s": [[round(u.t0, 4), round(u.t1, 4)] for u in p.left_out]}
                           if p.left_out else {})}}


def save_payload(p: Payload, path: str, frame: str = "", header: str = "") -> None:
    """``payload_to_dict`` as YAML at ``path`` (``header``: comment lines on top)."""


    text = yaml.safe_dump(payload_to_dict(p, frame), sort_keys=False, default_flow_style=None, width=110)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(f"# {line}\n" for line in header.splitlines() if line) + text,
                          encoding="utf-8")


def load_payload(path: str) -> Payload:
    """A payload file (``save_payload``; ``offset`` optional, 0): ``ValueError`` naming the key
    that is missing or wrong."""


    if not Path(path).is_file():
        raise ValueError(f"payload file {path}: not found (write one with rbd-ros identify --payload)")
    data = yaml_io.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    d = data.get("payload", data) if isinstance(data, dict) else None
    if not isinstance(d, dict):
        raise ValueError(f"payload file {path}: expected a mapping 'payload: {{mass, com, inertia}}'")

    def arr(key: str, shape: tuple, default: Any = None) -> np.ndarray:
        if key not in d and default is None:
            raise ValueError(f"payload file {path}: no '{key}'")
        try:
            a = np.asarray(d.get(key, default), dtype=float).reshape(shape)
        except (TypeError, ValueError):
            raise ValueError(f"payload file {path}: '{key}' must be {int(np.prod(shape))} numbers "
                             f"{shape}, got {d.get(key)}") from None
        if not np.isfinite(a).all():
            raise ValueError(f"payload file {path}: '{key}' is not finite: {d.get(key)}")
        return a

    mass = float(arr("mass", ()))
    if mass < 0:
        raise ValueError(f"payload file {path}: mass must be >= 0 kg, got {mass}")
    inertia = arr("inertia", (3, 3))
    if not np.allclose(inertia, inertia.T, atol=1e-12):
        raise ValueError(f"payload file {path}: inertia is not symmetric: {inertia.tolist()}")
    return Payload(mass, arr("com", (3,)), inertia, arr("offset", (6,), [0.0] * 6),
                   float(d.get("condition", float("nan"))), arr("residual", (6,), [0.0] * 6))


class PayloadCompensator:
    """``Payload.compensate`` per cycle, jitted and allocation-free: the payload's wrench for the
    motion ``(q, q', q'')`` is the RNEA link wrench (``control.wrench.payload_wrench``, 003
    (4.36)-(4.37)) of the model with its last body replaced by the payload (the same Newton-Euler
    equations as ``wrench_regressor``), minus the offset.  The sensor must sit on the last body
    (``link`` '' or its name): below it hangs only the payload."""

    def __init__(self, model: Any, payload: Payload, link: str = "") -> None:
        from rbd_ros.control.wrench import SensorFrame, WrenchModel  # lazy: the wrench model (0.3 s of import)

        frame = SensorFrame.of(model, link)
        if frame.link != model.dof - 1:
            raise ValueError(f"payload compensation: the F/T sensor must be on the last body "
                             f"'{model.link_names[-1]}' (what hangs below it is the payload), got "
                             f"'{link}'")
        R, p = frame.site[:3, :3], frame.site[:3, 3]
        mass, com, inertia = model.mass.copy(), model.com.copy(), model.inertia.copy()
        mass[-1] = payload.mass
        com[-1] = p + R @ payload.com
        inertia[-1] = R @ payload.inertia @ R.T
        self.payload = payload
        self.model = model.replace(mass=mass, com=com, inertia=inertia)
        self.wrench_model = WrenchModel(self.model, link)
        self.offset = np.array(payload.offset, dtype=float)

    def compensate(self, raw: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray,
                   out: np.ndarray) -> np.ndarray:
        """``out = raw - A phi - w_0`` (sensor frame, moment about its origin)."""
        self.wrench_model.payload(q, qd, qdd, out)
        np.subtract(raw, out, out=out)
        out -= self.offset
        return out


def payload_from_states(robot: Any, t: np.ndarray, q: np.ndarray, qd: np.ndarray | None,
                        wrench: np.ndarray, offset: bool = True, window: int = 0) -> Payload:
    """The payload from a recording of free motion: joint states ``(t, q, q')`` (model order;
    ``q'`` None: differentiated) and the raw F/T readings ``wrench`` (N, 6) of the same states.
    ``q''`` is the central difference of ``q'`` (``np.gradient``: second order in the step,
    the ends first order), the first and last sample dropped.  ``window``: ``identify_payload``'s
    parallel filter, 0 = ``estimate.parallel_window``'s (1 noise-free, else 81: with the bridge's
    sensor noise the humanoid arm's tool mass came out 125 % off unfiltered, 0.13 % filtered).
    Stretches no payload explains (contact) are left out of the fit and named in ``left_out``,
    or refused when they are most of it (``payload_contact``)."""
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if len(t) < 20:
        raise ValueError(f"payload: {len(t)} samples; a short excitation (a few seconds) is needed")
    if not (np.diff(t) > 0).all():
        raise ValueError("payload: the state stamps do not increase")
    qd = np.gradient(q, t, axis=0) if qd is None else np.asarray(qd, dtype=float)
    qdd = np.gradient(qd, t, axis=0)
    inner = slice(1, len(t) - 1)

    window = parallel_window(qd, window)
    motion = sensor_motion(robot, q[inner], qd[inner], qdd[inner])
    w = np.asarray(wrench, dtype=float)[inner]
    if not np.isfinite(w).all():
        raise ValueError("payload: a reading is not finite")

    A, wf = filtered_regressor(w, *motion, offset, window)
    fit, spans = fit_without_contact(t[inner], A, wf, motion[0], offset,
                                     lambda A, w: fit_weighted(A, w, offset))
    return replace(fit, left_out=spans)
