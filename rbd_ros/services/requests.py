"""What the dynamics services compute, without ROS: request checking and evaluation.

``DynamicsService`` takes the plain fields of the ``rbd_ros_interfaces`` requests (joint
names and packed row-major ``float64[]`` arrays), checks them, maps the caller's joint order
onto the model's, runs the core (``rbd_ros.Robot``) and returns arrays in the caller's order.
Anything wrong raises ``RequestError`` with a message that says exactly what; the node turns
that into ``success=false``. The ROS node (``rbd_ros.ros.nodes.dynamics_server``) only converts
messages, so this logic is tested directly and reused by any other front end.

A moving base (a ``Robot`` on the floating root joint) is packed like the joints: its
coordinates are named entries of ``joint_names`` (``robot.base_position_names``: base_x .. base_qw, used by positions;
``robot.base_velocity_names``: base_vx .. base_wz, used by velocities, accelerations, efforts
and mass-matrix rows), in any order with the joints.  Each array takes the names of its space in
the caller's order, so positions have 7 + n values per state and the others 6 + n.

A ground base (a ``Robot`` on a planar or diff_drive root joint, issue 17) is packed the same
way: positions name ``base_x, base_y, base_yaw`` (world), velocities and accelerations ``base_vx, base_vy, base_wz``
(base frame, as ``cmd_vel``), and so do the rows of the mass matrix and of ``gravity`` (g(q) on
those coordinates).  Efforts (InverseDynamics answers, ForwardSimulate torques) are the base's
inputs: planar, the velocity names (F_x, F_y, M_z on the base, base frame, about the base
point); diff_drive, the two wheel joints (left, right torques, ``BaseNames.wheels``) with the
arm joints; ``base_vy`` must then be 0 in every velocity and acceleration (the rolling
constraint, 001 (64)).  A diff_drive InverseDynamics or StaticTorques request may also list
``base_lateral_force`` (``LATERAL_FORCE``): its efforts then carry the ground's lateral
constraint force (N, base y) at that place.  StaticTorques answers the same efforts, Jacobian
has a column per velocity name and ForwardKinematics gives world poses (the base carries the
arm).  Every name is configurable (``base_names``; the server's parameters).

Bounds and results (issue 27).  Every request's work is bounded in time: a request still
computing after ``max_request_seconds`` (default ``DEFAULT_MAX_REQUEST_SECONDS``; the server's
parameter of that name) is refused with a message saying it hit that bound.  Batches run in
chunks of ``CHUNK_STATES`` states, simulations in chunks of ``CHUNK_STEPS`` steps, with the
clock checked between chunks; inverse kinematics runs in the GIL-free LM kernel, which a timer
stops through its stop flag (``algorithm.ik.request_stop``).  ``stop()`` ends the work under
way the same way (the server's shutdown).  Every result is checked before it leaves: NaN or
Inf out of a finite request (e.g. joint rates of 1e200 overflow the Coriolis terms) is a
``RequestError`` naming the entry and the likely cause, never an answer.  Any ``ValueError``
of the core (its argument checks, the one rule for the Python API and the services) becomes
a ``RequestError`` with the core's message.  Entries are named in messages by the caller's
names (a joint by its URDF name), in every service alike.
"""
from __future__ import annotations

import array
import functools
import math
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from rbd_ros.algorithm.integrators import integrator_code
from rbd_ros.lie.so3 import quaternion_to_rotation
from rbd_ros.model import BASE_COORDINATES, MOBILE_BASES
from rbd_ros.robot.arm import Robot, SingularMassMatrixError
from rbd_ros.robot.simulation import SimulationError
from rbd_ros.robot.statics import IKResult
from rbd_ros.util import validate

DEFAULT_MAX_POINTS = 1_000_000
#: ForwardSimulate: at most this many integration sub-steps per ``dt`` to hold each effort row
#: for its ``effort_period`` (``hold_substeps``)
MAX_SUBSTEPS = 1000
#: seconds a request may compute before it is refused (the server's ``max_request_seconds``)
DEFAULT_MAX_REQUEST_SECONDS = 10.0
#: states per core call in a batch, steps per core call in a simulation: the clock (and a
#: shutdown) is checked between them (~10-30 ms of work each for a 7-joint arm)
CHUNK_STATES = 4096
CHUNK_STEPS = 4096
BASE_NAMES = {nm for q, v in BASE_COORDINATES.values() for nm in q + v}  # of any base kind
#: a diff_drive base's wheel joints when the model names none (left, right)
DEFAULT_WHEELS = ("left_wheel_joint", "right_wheel_joint")
#: InverseDynamics' optional entry for a diff_drive base's lateral ground force (module docstring)
LATERAL_FORCE = "base_lateral_force"
#: what each base kind's coordinates are, for messages
_MEANING = {"floating": ("x, y, z, qx, qy, qz, qw", "vx, vy, vz, wx, wy, wz"),
            "planar": ("x, y, yaw", "vx, vy, wz"), "diff_drive": ("x, y, yaw", "vx, vy, wz")}


def hold_substeps(dt: float, period: float) -> int | None:
    """The fewest sub-steps ``m`` (1 .. ``MAX_SUBSTEPS``) of ``dt`` whose grid ``dt / m`` meets
    every multiple of ``period`` (within 1e-6 of a sub-step): ``dt`` dividing ``period`` gives
    1, ``dt = 4 period`` gives 4, ``dt = 3 ms`` and ``period = 10 ms`` give 3 (1 ms); None when
    no such grid exists (periods with no common step, e.g. an irrational ratio)."""
    for m in range(1, MAX_SUBSTEPS + 1):
        r = period * m / dt  # sub-steps per row
        if r >= 1.0 - 1e-6 and abs(r - round(r)) <= 1e-6:
            return m
    return None


def _f8(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


_frombuffer, _array = np.frombuffer, array.array


def _one_row(x) -> np.ndarray:
    """``x`` as float64: a message's ``float64[]`` field (``array.array('d')``) viewed, not
    copied; anything else through ``np.asarray``."""
    if type(x) is _array and x.typecode == "d":
        return _frombuffer(x)
    return np.asarray(x, dtype=np.float64)


class RequestError(ValueError):
    """A request the service refuses; the message is sent back to the caller."""


def renamed_field(new: str, new_value, old: str, old_value):
    """A request field renamed for one release (``ForwardSimulate``'s ``torques`` ->
    ``efforts``, ``torque_period`` -> ``effort_period``): ``(value, old_used)``, the new field's
    value unless only the old one is given (an empty array or 0 = not given); both given and
    different is a ``RequestError`` naming both."""
    def given(v) -> bool:
        return len(v) > 0 if hasattr(v, "__len__") else v != 0.0

    if not given(old_value):
        return new_value, False
    if given(new_value):
        a, b = np.asarray(new_value, dtype=float), np.asarray(old_value, dtype=float)
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
            raise RequestError(f"{new} and {old} are both given and differ ({old} is the deprecated "
                               f"name of {new}): give only {new}")
    return old_value, True


def _raw(fn):
    """``fn`` answering its non-finite result instead of the core's ``NonFiniteResultError``
    (which carries it), so that the service's own check (``DynamicsService._finite``) names
    the bad entry by the caller's joint name and the cause (an input, or the model)."""

    @functools.wraps(fn)
    def call(*args, **kw):
        try:
            return fn(*args, **kw)
        except validate.NonFiniteResultError as exc:
            if exc.result is None:
                raise
            return exc.result

    return call


def _serves(fn):
    """A service method: starts the request's clock (``max_request_seconds``) and turns the
    core's refusals (``ValueError``: argument checks, non-finite results; ``ArithmeticError``)
    into ``RequestError`` with the core's message."""

    @functools.wraps(fn)
    def method(self, *args, **kw):
        self._started = time.monotonic()
        try:
            return fn(self, *args, **kw)
        except RequestError:
            raise
        except (ValueError, ArithmeticError) as exc:
            raise RequestError(str(exc) or repr(exc)) from None

    return method


def _shifted(message: str, k0: int, dt: float) -> str:
    """The core's "diverged at t = T s (step K of N)" for a chunk that started at step
    ``k0``, in the whole horizon's time."""
    def fix(m: re.Match) -> str:
        k = k0 + int(m.group(2))
        return f"t = {k * dt:.6g} s (step {k}"

    return re.sub(r"t = ([0-9.eE+-]+) s \(step (\d+)", fix, message) if k0 else message


def _largest_input(inputs: dict) -> str:
    """The likely cause of a non-finite result of finite inputs, for messages."""
    which, big = validate.largest_input(inputs, finite_only=True)
    if big > 1e100:
        return (f"the request's numbers overflow float64 (largest: |{which}| = {big:.3g}); send "
                f"physically meaningful magnitudes")
    return "the model or the state is degenerate here (no value of the request is unusually large)"


@dataclass(frozen=True)
class BaseNames:
    """The names a request's ``joint_names`` holds beside the joints (module docstring):
    base ``positions`` and ``velocities`` (empty for a fixed base), a diff_drive base's
    ``wheels`` (left, right) and its ``lateral_force`` entry ('' for other bases)."""

    positions: tuple[str, ...] = ()
    velocities: tuple[str, ...] = ()
    wheels: tuple[str, ...] = ()
    lateral_force: str = ""


def base_names(model, positions: Sequence[str] = (), velocities: Sequence[str] = (),
               wheels: Sequence[str] = ()) -> BaseNames:
    """The checked names of ``model``'s base coordinates: empty arguments take the defaults
    (``model.BASE_COORDINATES``; wheels ``model.wheel_joints``, else ``DEFAULT_WHEELS``).
    ``ValueError`` naming the option (the dynamics server's parameter of that name) for a
    wrong count, a repeat, a clash with a joint name, or wheels for a base without any."""
    kind = model.base_type
    dq, dv = BASE_COORDINATES[kind]
    got = {"base_position_names": tuple(str(x) for x in positions) or dq,
           "base_velocity_names": tuple(str(x) for x in velocities) or dv}
    for (option, names), default in zip(got.items(), (dq, dv)):
        if len(names) != len(default):
            meaning = _MEANING.get(kind, ("", ""))[option == "base_velocity_names"]
            want = f"{len(default)} names ({meaning})" if default else "none"
            raise ValueError(f"{option} must have {want} for a '{kind}' base, got {list(names)}")
    wheel = tuple(str(x) for x in wheels)
    if kind == "diff_drive":
        wheel = wheel or tuple(model.wheel_joints) or DEFAULT_WHEELS
        if len(wheel) != 2:
            raise ValueError(f"wheel_joint_names must have 2 names (left, right), got {list(wheel)}")
    elif wheel:
        raise ValueError(f"wheel_joint_names is for a 'diff_drive' base; this one is '{kind}'")
    lateral = LATERAL_FORCE if kind == "diff_drive" else ""
    every = (*got["base_position_names"], *got["base_velocity_names"], *wheel, *model.joint_names,
             *((lateral,) if lateral else ()))
    if any(not nm for nm in every):
        raise ValueError(f"base and wheel names must not be empty strings, got {list(every)}")
    if len(set(every)) != len(every):
        dup = sorted({nm for nm in every if every.count(nm) > 1})
        raise ValueError(f"names {dup} repeated among the base coordinates, wheels and joints "
                         f"{list(every)}; rename them (base_position_names, base_velocity_names, "
                         f"wheel_joint_names)")
    return BaseNames(got["base_position_names"], got["base_velocity_names"], wheel, lateral)


def named_model(model, names: BaseNames):
    """``model`` with a diff_drive base's ``wheel_joints`` set to ``names.wheels``, so its YAML
    (GetModel ``model_yaml``, ``wheels.joints``) tells a client the names to use."""
    if names.wheels and tuple(model.wheel_joints) != names.wheels:
        return model.replace(wheel_joints=names.wheels)
    return model


def _no_repeats(names: tuple[str, ...]) -> None:
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise RequestError(f"joint names repeated: {dup}")


@dataclass(frozen=True)
class SimulationResult:
    times: np.ndarray  # (K,)
    positions: np.ndarray  # (K, n) caller's joint order
    velocities: np.ndarray
    accelerations: np.ndarray
    compute_time: float


@dataclass(frozen=True)
class Linearization:
    """``DynamicsService.linearize``'s answer: ``a``'s rows and columns and ``b``'s rows are
    the state, named by ``state_names`` (``[dq; dv]``; a diff_drive base ``[dq; ds]``, ``ds``
    its independent speeds), ``b``'s columns the inputs ``input_names`` (the efforts; a
    diff_drive base its wheels, then the joints); ``coordinate_names`` the nv names of ``dq``."""
    coordinate_names: list[str]
    state_names: list[str]
    input_names: list[str]
    a: np.ndarray
    b: np.ndarray


class DynamicsService:
    """Request-level front end over one ``Robot`` (see the module docstring); ``names`` the
    base coordinates' and wheels' names (default ``base_names(robot.model)``);
    ``max_request_seconds`` the bound on a request's work (None: ``DEFAULT_MAX_REQUEST_SECONDS``
    as the module has it at construction); ``alive`` (optional, e.g. an rclpy
    context's ``ok``) is asked between chunks, and its False stops the work like ``stop()``
    (a signal's shutdown reaches a batch running on the signalled thread)."""

    def __init__(self, robot: Robot, max_points: int = DEFAULT_MAX_POINTS,
                 names: BaseNames | None = None,
                 max_request_seconds: float | None = None,
                 alive=None) -> None:
        if max_points < 1:
            raise ValueError(f"max_points must be at least 1, got {max_points}")
        if max_request_seconds is None:
            max_request_seconds = DEFAULT_MAX_REQUEST_SECONDS
        if isinstance(max_request_seconds, bool) or not (
                isinstance(max_request_seconds, (int, float)) and math.isfinite(max_request_seconds)
                and max_request_seconds > 0):
            raise ValueError(f"max_request_seconds must be a positive number of seconds, got "
                             f"{max_request_seconds!r}")
        self.robot = robot
        self.max_points = int(max_points)
        self.max_request_seconds = float(max_request_seconds)
        self._started = time.monotonic()  # when the request under way began (_serves)
        self._closing = False
        self._alive = alive
        self.kind = robot.model.base_type
        self._index = {name: i for i, name in enumerate(robot.joint_names)}
        self._identity = tuple(robot.joint_names)
        self._identity_list, self._dof = list(self._identity), robot.dof
        self.names = names if names is not None else base_names(robot.model)
        # a moving base: its coordinates are named entries beside the joints (module docstring)
        self._bq, self._bv = self.names.positions, self.names.velocities
        self.floating = self.kind == "floating"
        self.mobile = self.kind in MOBILE_BASES  # a ground base: one state per core call
        self.moving = bool(self._bq)
        self.integrators: tuple[str, ...] = ()  # a moving robot's, its default first
        if self.floating:  # imported only for a floating robot (loading its kernels takes ~1 s)
            from rbd_ros.robot.floating import INTEGRATORS as FLOATING  # lazy: for a floating robot only

            self.integrators = tuple(FLOATING)
        elif self.mobile:
            self.integrators = ("rk4",)  # the ground front's simulate (diff_drive: independent speeds)
        if self.moving:
            clash = sorted(set(self._identity) & set(self._bq + self._bv + self.names.wheels))
            if clash:
                raise ValueError(f"joint names {clash} clash with the base coordinate names "
                                 f"{list(self._bq + self._bv + self.names.wheels)}; rename those joints")
            self._qnames = self._bq + self._identity
            self._vnames = self._bv + self._identity
            # efforts: the base's inputs (planar, floating: the velocity names; diff_drive: wheels)
            self._unames = self.names.wheels + self._identity if self.names.wheels else self._vnames
            self._every = tuple(dict.fromkeys(self._bq + self._bv + self.names.wheels + self._identity))
            self._qindex = {nm: i for i, nm in enumerate(self._qnames)}
            self._vindex = {nm: i for i, nm in enumerate(self._vnames)}
        self._seen: dict[tuple, np.ndarray | None] = {}  # checked name lists and orders (bounded)

    # ---- bounds and results (module docstring) ---------------------------------------------
    def stop(self) -> None:
        """End the work under way and refuse what follows (the server shutting down): an
        inverse kinematics solve stops within one iteration, a batch or simulation at its next
        chunk, each with ``RequestError``."""
        self._closing = True
        self._stop_ik()

    def _stop_ik(self) -> None:
        self.robot.request_ik_stop()

    def _bound_message(self, where: str = "") -> str:
        if self._closing:
            return f"stopped{where}: the server is shutting down"
        spent = time.monotonic() - self._started
        return (f"stopped{where} after {spent:.3g} s: it hit the "
                f"server's bound of {self.max_request_seconds:g} s per request (parameter "
                f"max_request_seconds); ask for less work in one request (fewer states, steps, "
                f"targets or restarts)")

    def _check_time(self, where: str = "") -> None:
        """``RequestError`` when the request is past ``max_request_seconds`` or the service is
        stopping; called between chunks of work."""
        if self._alive is not None and not self._closing and not self._alive():
            self.stop()
        if self._closing or time.monotonic() - self._started > self.max_request_seconds:
            raise RequestError(self._bound_message(where))

    def _left(self) -> float:
        """Seconds the request under way may still compute."""
        return self.max_request_seconds - (time.monotonic() - self._started)

    def _finite(self, what: str, out, labels: Sequence[str] | None = None, **inputs):
        """``out`` when every entry is finite, else ``RequestError`` naming the first bad state
        and entry (by the caller's name when ``labels`` fits the width) and the likely cause
        (the largest value of ``inputs``)."""
        arr = np.asarray(out)
        if np.isfinite(arr).all():
            return out
        flat = arr.reshape(arr.shape[0], -1) if arr.ndim > 1 else arr.reshape(1, -1)
        bad = int(np.flatnonzero(~np.isfinite(flat))[0])
        k, col = divmod(bad, flat.shape[1])
        at = (f"'{labels[col]}'" if labels is not None and len(labels) == flat.shape[1]
              else f"entry {col}")
        cause = _largest_input(inputs)
        if not cause.startswith("the request's"):
            cause = self._model_cause() or cause
        raise RequestError(f"{what} came out NaN or Inf (first at state {k}, "
                           f"{at}) although the request is finite; {cause}")

    def _model_cause(self) -> str:
        """The model's largest parameter when it is large enough to overflow, else ''."""
        m = self.robot.model
        big, which = 0.0, ""
        for field in ("mass", "a", "d", "com", "inertia", "rotor_inertia", "gear_ratio"):
            v = np.abs(np.asarray(getattr(m, field, 0.0), dtype=float)).reshape(len(m.joint_names), -1)
            if v.size and v.max() > big:
                big, which = float(v.max()), f"{field} of joint '{m.joint_names[int(np.argmax(v.max(axis=1)))]}'"
        if big > 1e100:
            return (f"the model's numbers overflow float64 (largest: {which} = {big:.3g}); check "
                    f"the model file")
        return ""

    # ---- checking ------------------------------------------------------------------------
    def permutation(self, joint_names: Sequence[str]) -> np.ndarray | None:
        """Model index of each requested joint; None when the order is the model's own."""
        names = tuple(joint_names)
        if names == self._identity:
            return None
        unknown = [n for n in names if n not in self._index]
        if unknown:
            hint = ("; base coordinates are for a moving base, this robot's base is fixed "
                    "(GetModel base_type)" if set(unknown) & BASE_NAMES else "")
            raise RequestError(f"unknown joint names {unknown}; the model's joints are "
                               f"{list(self._identity)}{hint}")
        _no_repeats(names)
        missing = [n for n in self._identity if n not in names]
        if missing:
            raise RequestError(f"joint_names lacks {missing}; give all {len(self._identity)} "
                               f"joints of the model in any order")
        return np.array([self._index[n] for n in names], dtype=np.intp)

    def _check_names(self, joint_names: Sequence[str], lateral: bool = False) -> tuple[str, ...]:
        """A moving base's ``joint_names``: every name of ``_every`` once, in any order, and
        nothing else (``lateral``: the diff_drive lateral-force entry may be listed too)."""
        names = tuple(joint_names)
        if (names, lateral) in self._seen:  # checked before: the same answer
            return names
        lat = self.names.lateral_force
        unknown = [nm for nm in names if nm not in self._qindex and nm not in self._vindex
                   and nm not in self.names.wheels and not (lateral and lat and nm == lat)]
        if unknown:
            if lat and lat in unknown:
                raise RequestError(f"'{lat}' (the diff_drive base's lateral ground force) is an "
                                   f"answer of inverse_dynamics and static_torques only; leave it out of this request")
            hint = ""
            if self.kind == "planar" and any("wheel" in nm.lower() for nm in unknown):
                hint = (f"; a planar base takes base forces {list(self._bv)} as efforts, wheel "
                        f"torques are for a diff_drive base")
            raise RequestError(f"unknown joint names {unknown}; this {self.kind}-base robot takes "
                               f"{list(self._every)} (any order){hint}")
        _no_repeats(names)
        missing = [nm for nm in self._every if nm not in names]
        if missing:
            base = self._bq + self._bv
            if set(missing) >= set(base):
                wheels = (f", and its wheels {list(self.names.wheels)} (GetModel model_yaml "
                          f"wheels.joints: efforts are the wheel torques)" if self.names.wheels else "")
                widths = (f"velocities and accelerations {len(self._vnames)}, efforts "
                          f"{len(self._unames)}" if self.names.wheels else
                          f"velocities, accelerations and efforts {len(self._vnames)}")
                raise RequestError(
                    f"this robot has a {self.kind} base: joint_names must also list its base "
                    f"coordinates, positions {list(self._bq)} and velocities {list(self._bv)} "
                    f"(GetModel base_position_names, base_velocity_names){wheels}, in any order "
                    f"with the joints; positions then have {len(self._qnames)} values per state, "
                    f"{widths}")
            if set(missing) & set(self.names.wheels):
                raise RequestError(f"joint_names lacks {missing}; a diff_drive base's efforts are "
                                   f"its wheel torques {list(self.names.wheels)} (left, right) and "
                                   f"the joint torques: give all of {list(self._every)} in any order")
            raise RequestError(f"joint_names lacks {missing}; give all of {list(self._every)} "
                               f"in any order")
        self._remember((names, lateral), None)
        return names

    def _remember(self, key: tuple, value: np.ndarray | None) -> None:
        if len(self._seen) < 256:  # a client's few name lists, not an unbounded stream
            self._seen[key] = value

    def _order(self, names: tuple[str, ...], space: tuple[str, ...]) -> np.ndarray | None:
        """The index in ``space`` of each of ``names`` that belongs to it, in the caller's
        order; None when that is ``space``'s own order."""
        key = ("order", names, space)
        if key in self._seen:
            return self._seen[key]
        index = {nm: i for i, nm in enumerate(space)}
        perm = np.array([index[nm] for nm in names if nm in index], dtype=np.intp)
        order = None if (perm == np.arange(perm.size)).all() else perm
        self._remember(key, order)
        return order

    def spaces(self, joint_names: Sequence[str],
               lateral: bool = False) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Position and velocity permutations for a request's ``joint_names``: the model index
        (in ``q`` resp. ``v``) of each name of that space, in the caller's order; None where the
        order is the model's own.  Fixed base: both are ``permutation``.  Moving base:
        ``joint_names`` holds the joints and the base coordinates ``names.positions``
        (positions only) and ``names.velocities`` (velocities, accelerations, M and g rows;
        efforts too except for a diff_drive base: ``efforts``; ``lateral``: its lateral-force
        entry may be listed)."""
        if not self.moving:
            perm = self.permutation(joint_names)
            return perm, perm
        names = self._check_names(joint_names, lateral)
        return self._order(names, self._qnames), self._order(names, self._vnames)

    def efforts(self, joint_names: Sequence[str], lateral: bool = False) -> tuple[tuple[str, ...], np.ndarray | None]:
        """The efforts' names in model order and the caller's permutation of them: the
        velocity names, or a diff_drive base's wheels + joints (``lateral``: + the lateral
        force when ``joint_names`` lists it)."""
        names = self._check_names(joint_names, lateral)
        space = self._unames
        if lateral and self.names.lateral_force in names:
            space = space + (self.names.lateral_force,)
        return space, self._order(names, space)

    def widths(self, joint_names: Sequence[str]) -> tuple[int, int]:
        """Values per state of positions and of velocities for these ``joint_names``."""
        if not self.moving:
            return len(joint_names), len(joint_names)
        return len(self._qnames), len(self._vnames)

    def _base_quaternions(self, name: str, q: np.ndarray) -> None:
        """Every state's base quaternion (model order ``q[:, 3:7]``) must be a unit one."""
        if not self.floating:
            return
        norms = np.linalg.norm(q[:, 3:7], axis=1)
        bad = np.flatnonzero(np.abs(norms - 1.0) > 1e-6)
        if bad.size:
            k = int(bad[0])
            raise RequestError(f"{name} state {k}: {list(self._bq[3:7])} must be a unit "
                               f"quaternion (x, y, z, w), its norm is {norms[k]:.6g}")

    def _rolling(self, name: str, v: np.ndarray, perm: np.ndarray | None = None) -> None:
        """A diff_drive base cannot slide sideways: ``base_vy`` (model column 1) is 0 in every
        state (001 (64); the core's tolerance, ``formulations.diff_drive``)."""
        if not self.names.wheels:
            return
        bad = np.flatnonzero(np.abs(v[:, 1]) > 1e-9 * np.maximum(1.0, np.abs(v).max(axis=1)))
        if bad.size:
            k = int(bad[0])
            raise RequestError(f"{name} state {k}: {self._bv[1]} = {v[k, 1]:.6g}, but a diff_drive "
                               f"base cannot slide sideways (v_y = 0 at the base point, 001 (64)); "
                               f"send 0")

    def labels(self, joint_names: Sequence[str], space: str) -> list[str]:
        """The caller's names of one ``space`` ('q' positions, 'v' velocities, 'u' efforts),
        in the caller's order (for messages; ``joint_names`` already checked)."""
        if not self.moving:
            return list(joint_names)
        keep = set({"q": self._qnames, "v": self._vnames, "u": self._unames}[space])
        return [nm for nm in joint_names if nm in keep]

    def states(self, name: str, data: Sequence[float], n: int, rows: int | None = None,
               unit: str = "", labels: Sequence[str] | None = None) -> np.ndarray:
        """Packed row-major ``data`` as an (N, n) array; checks length, N and finiteness
        (``unit`` names the entries in messages; default: joints, or a moving base's position
        or velocity coordinates or a diff_drive base's efforts, by ``name``)."""
        arr = np.asarray(data, dtype=float)
        if arr.ndim != 1:
            arr = arr.reshape(-1)
        if not unit:
            unit = ("joints" if not self.moving else "position coordinates" if "position" in name
                    else f"efforts {list(self._unames)}" if name in ("efforts", "torques") and self.names.wheels
                    else "velocity coordinates")
        if arr.size == 0:
            raise RequestError(f"{name} is empty; expected N x {n} values (N >= 1)")
        if arr.size % n:
            raise RequestError(f"{name} has {arr.size} values, not a multiple of "
                               f"{n} {unit} (N x {n}, row-major)")
        k = arr.size // n
        if rows is not None and k != rows:
            raise RequestError(f"{name} has {k} states ({arr.size} values); expected {rows} "
                               f"({rows} x {n})")
        if k > self.max_points:
            raise RequestError(f"{name} has {k} states; this server accepts at most "
                               f"{self.max_points} (parameter max_points)")
        if not np.isfinite(arr).all():
            bad = int(np.flatnonzero(~np.isfinite(arr))[0])
            at = (f"'{labels[bad % n]}'" if labels is not None and len(labels) == n
                  else f"entry {bad % n}")
            raise RequestError(f"{name} contains NaN or Inf (first at state {bad // n}, {at})")
        return arr.reshape(k, n)

    def _to_model(self, perm: np.ndarray | None, x: np.ndarray) -> np.ndarray:
        if perm is None:
            return x
        out = np.empty_like(x)
        out[..., perm] = x
        return out

    @staticmethod
    def _to_caller(perm: np.ndarray | None, x: np.ndarray) -> np.ndarray:
        return x if perm is None else x[..., perm]

    @staticmethod
    def _one(x: np.ndarray) -> np.ndarray:
        """A single state as (n,): ``Robot`` then takes its ~1 us single-state path instead of
        a ``prange`` batch kernel, whose parallel launch costs ~20 us (ms on a loaded machine)."""
        return x[0] if x.shape[0] == 1 else x

    def _call(self, fn, *xs: np.ndarray, **kw) -> np.ndarray:
        """``fn`` on N model-order states (``_one``: a single state unbatched), in chunks of
        ``CHUNK_STATES`` with the request's clock checked between them.  A non-finite result
        comes back as it is (``_raw``): ``_finite`` then names the caller's joint."""
        fn = _raw(fn)
        N = len(xs[0])
        if N <= CHUNK_STATES:
            return np.asarray(fn(*(self._one(x) for x in xs), **kw))
        parts = []
        for k in range(0, N, CHUNK_STATES):
            if k:
                self._check_time(f" at state {k} of {N}")
            parts.append(np.asarray(fn(*(x[k:k + CHUNK_STATES] for x in xs), **kw)))
        return np.concatenate(parts)

    def _positions(self, name: str, data, perm, nq: int, rows: int | None = None,
                   labels: Sequence[str] | None = None) -> np.ndarray:
        """Checked positions in model order (N, nq), unit base quaternions."""
        q = self._to_model(perm, self.states(name, data, nq, rows, labels=labels))
        self._base_quaternions(name, q)
        return q

    def _fixed_only(self, service: str) -> None:
        if self.mobile:
            raise RequestError(f"{service} is not available for a {self.kind}-base robot: a pose target "
                               f"leaves the base's redundant freedom open; place the base yourself and solve "
                               f"the arm on a fixed-base server of the same model (target in base_link "
                               f"coordinates)")
        if self.moving:
            raise RequestError(f"{service} is not available for a {self.kind}-base robot yet")


    def _mobile_options(self, tool_wrench=None, include_actuators: bool = False) -> None:
        """What a ground base (``robot.mobile.GroundFront``) does not model yet, refused by name."""
        if include_actuators:
            raise RequestError(f"include_actuators is not available for a {self.kind}-base robot "
                               f"yet; send false")
        if tool_wrench is not None:
            raise RequestError(f"tool_wrench is not available for a {self.kind}-base robot yet; "
                               f"send a zero wrench")

    # ---- services ------------------------------------------------------------------------
    @_serves
    def inverse_dynamics(self, joint_names: Sequence[str], positions, velocities, accelerations,
                         tool_wrench: Sequence[float] | None = None,
                         include_actuators: bool = False) -> np.ndarray:
        """Efforts (N, n) in the caller's joint order (003 §4.5 via ``Robot``); floating base:
        (N, 6 + n), the base wrench entries named like the base velocities; ground base: the
        base's inputs (``efforts``; ``_mobile_inverse_dynamics``)."""
        if tool_wrench is None and not include_actuators:
            tau = self.one_state_inverse_dynamics(joint_names, positions, velocities, accelerations)
            if tau is not None:
                return tau.reshape(1, -1)
        (pq, pv), (nq, nv) = self.spaces(joint_names, lateral=True), self.widths(joint_names)
        lq, lv = self.labels(joint_names, "q"), self.labels(joint_names, "v")
        q = self._positions("positions", positions, pq, nq, labels=lq)
        qd = self.states("velocities", velocities, nv, len(q), labels=lv)
        qdd = self.states("accelerations", accelerations, nv, len(q), labels=lv)
        if self.mobile:  # model order for the rolling check and the core
            qd, qdd = self._to_model(pv, qd), self._to_model(pv, qdd)
        w = None
        if tool_wrench is not None:
            w = np.asarray(tool_wrench, dtype=float)
            if w.shape != (6,) or not np.isfinite(w).all():
                raise RequestError("tool_wrench must be 6 finite numbers [force; torque]")
            if not w.any():
                w = None
        inputs = {"positions": q, "velocities": qd, "accelerations": qdd, "tool_wrench": w}
        if self.mobile:
            self._mobile_options(w, include_actuators)
            tau = self._mobile_inverse_dynamics(joint_names, q, qd, qdd)
            return self._finite("efforts", tau, self.labels(joint_names, "u"), **inputs)
        tau = self._call(self.robot.inverse_dynamics, q, self._to_model(pv, qd),
                         self._to_model(pv, qdd), tool_wrench=w, include_actuators=include_actuators)
        return self._finite("efforts", self._to_caller(pv, tau.reshape(len(q), nv)), lv, **inputs)

    def _mobile_inverse_dynamics(self, joint_names, q, v, a) -> np.ndarray:
        """Ground base, model-order (N, 3 + n) states: planar ``[F_x, F_y, M_z, joints]``;
        diff_drive ``[tau_left, tau_right, joints]`` (+ the lateral force when ``joint_names``
        lists ``names.lateral_force``), in the caller's order."""
        self._rolling("velocities", v)
        self._rolling("accelerations", a)
        return self._mobile_efforts(joint_names, self.robot.inverse_dynamics, q, v, a, batch=True)

    def _mobile_efforts(self, joint_names, fn, *xs: np.ndarray, batch: bool = False, **kw) -> np.ndarray:
        """``fn`` (a ground base's effort answer) on the states, in the caller's order of
        the efforts: planar the velocity names; diff_drive ``[tau_left, tau_right, joints]``
        from ``DiffDriveEfforts`` (+ the lateral force when ``joint_names`` lists it).
        ``batch``: ``fn`` takes (N, .) rows (``algorithm.base_batch``), called per chunk of
        ``CHUNK_STATES``; else state by state.  The request's clock is checked between."""
        space, perm = self.efforts(joint_names, lateral=True)
        N, n = len(xs[0]), self.robot.dof
        out = np.empty((N, len(space)))
        if not self.names.wheels:
            fn = _raw(fn)  # the diff drive's NonFiniteResultError carries no DiffDriveEfforts
        step = CHUNK_STATES if batch else 1
        for k in range(0, N, step):
            if k and (batch or k % 256 == 0):
                self._check_time(f" at state {k} of {N}")
            rows = slice(k, k + step)
            e = fn(*((x[rows] if batch else x[k]) for x in xs), **kw)
            if not self.names.wheels:
                out[rows] = e
                continue
            out[rows, :2], out[rows, 2:2 + n] = e.wheels, e.joints  # DiffDriveEfforts
            if len(space) > 2 + n:
                out[rows, 2 + n] = e.lateral_force
        return self._to_caller(perm, out)

    def one_state_inverse_dynamics(self, joint_names, positions, velocities,
                                   accelerations) -> np.ndarray | None:
        """The common single call (one state, the model's joint order, no wrench, no
        actuators) without the general checks: ``Robot``'s checked kernel verifies lengths and
        finiteness of the inputs and of the result itself (``algorithm/checked.py``; a
        non-finite result falls to its full path, which raises).  (n,) efforts, or None when
        anything differs or is wrong, so the general path (``inverse_dynamics``) runs and its
        checks produce the message.  Takes no time, so needs no clock (``_serves``)."""
        if self.moving or len(positions) != self._dof or (
                joint_names != self._identity_list and tuple(joint_names) != self._identity):
            return None
        q, qd, qdd = _one_row(positions), _one_row(velocities), _one_row(accelerations)
        if q.ndim != 1 or q.shape != qd.shape or q.shape != qdd.shape:
            return None
        try:
            return self.robot.inverse_dynamics(q, qd, qdd)  # finite, or it raised
        except ValueError:
            return None

    @_serves
    def mass_matrix(self, joint_names, positions, include_actuators: bool = False) -> np.ndarray:
        """(N, n, n) with rows and columns in the caller's joint order (floating base: the
        velocity names, (N, 6 + n, 6 + n))."""
        (pq, pv), (nq, nv) = self.spaces(joint_names), self.widths(joint_names)
        q = self._positions("positions", positions, pq, nq, labels=self.labels(joint_names, "q"))
        if self.mobile:
            self._mobile_options(include_actuators=include_actuators)
            M = self._call(self.robot.mass_matrix, q)  # a batch: one kernel call per chunk
        else:
            M = self._call(self.robot.mass_matrix, q, include_actuators=include_actuators)
        M = M.reshape(len(q), nv, nv)
        if pv is not None:
            M = M[:, pv][:, :, pv]
        return self._finite("the mass matrix", M, positions=q)

    @_serves
    def linearize(self, joint_names, positions, velocities, efforts, include_actuators: bool = False,
                  dt: float = 0.0, integrator: str = "") -> Linearization:
        """``A``, ``B`` of the dynamics at one state (``Robot.linearize``) in the caller's order
        (``Linearization``): ``A`` (2 nv, 2 nv), ``B`` (2 nv, nv), rows and columns ``[dq; dv]``
        and the efforts, each in the caller's order of the velocity names.  A diff_drive base:
        the state ``[dq; ds]``, ``ds`` the ``nv - 1`` independent speeds (the velocity names but
        the lateral one: ``v_y = 0``, 001 (64)), ``A`` (nv + ns, nv + ns), ``B`` (nv + ns, nu),
        its inputs the wheel torques and the joint efforts (``efforts`` in the caller's order of
        those names, as ``forward_simulate``'s); a sliding ``base_vy`` is refused.  ``dt`` 0:
        the continuous time; ``dt > 0``: one step of ``integrator`` ("" the base's default;
        ``forward_simulate``'s names), refused by name when ``dt`` is negative or not finite,
        or an integrator is named with ``dt`` 0."""
        if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not (math.isfinite(dt) and dt >= 0):
            raise RequestError(f"dt must be 0 (continuous time) or a positive number of seconds, got {dt!r}")
        if integrator and not dt:
            raise RequestError(f"integrator '{integrator}' needs dt > 0 (dt 0 is the continuous-time "
                               "linearization, which has no integrator)")
        (pq, pv), (nq, nv) = self.spaces(joint_names), self.widths(joint_names)
        lq, lv = self.labels(joint_names, "q"), self.labels(joint_names, "v")
        q = self._positions("positions", positions, pq, nq, rows=1, labels=lq)
        v = self._to_model(pv, self.states("velocities", velocities, nv, 1, labels=lv))
        if self.mobile:
            self._mobile_options(include_actuators=include_actuators)
        pu, lu, nu = pv, lv, nv
        if self.names.wheels:  # the inputs: wheel torques and joint efforts
            self._rolling("velocities", v)
            space, pu = self.efforts(joint_names)
            lu, nu = self.labels(joint_names, "u"), len(space)
        u = self._to_model(pu, self.states("efforts", efforts, nu, 1, labels=lu,
                                           unit="" if self.names.wheels else "efforts"))
        step: dict[str, Any] = {"dt": float(dt), "integrator": integrator or None} if dt else {}
        A, B = self.robot.linearize(q[0], v[0], u[0], include_actuators=include_actuators, **step)
        vi = np.arange(nv) if pv is None else pv  # the model index of each caller's velocity
        ui = np.arange(nu) if pu is None else pu
        si, ls = vi, lv
        if self.names.wheels:  # ds: the velocities but base_vy (model index 1), in the caller's order
            si = np.array([k - (k > 1) for k in vi if k != 1], dtype=np.intp)
            ls = [nm for nm, k in zip(lv, vi) if k != 1]
        two = np.concatenate([vi, nv + si])
        A, B = A[two][:, two], B[two][:, ui]
        inputs: dict[str, Any] = {"positions": q, "velocities": v, "efforts": u}
        self._finite("A", A[None], **inputs)
        self._finite("B", B[None], **inputs)
        return Linearization(lv, lv + ls, lu, A, B)

    @_serves
    def gravity(self, joint_names, positions) -> np.ndarray:
        """g(q) (N, n); floating base (N, 6 + n), the base entries the wrench holding the base;
        ground base (N, 3 + n) on the velocity names (base entries 0 under vertical gravity)."""
        (pq, pv), (nq, nv) = self.spaces(joint_names), self.widths(joint_names)
        q = self._positions("positions", positions, pq, nq, labels=self.labels(joint_names, "q"))
        g = self._call(self.robot.gravity, q).reshape(len(q), nv)  # batches: one kernel call per chunk
        return self._finite("gravity torques", self._to_caller(pv, g), self.labels(joint_names, "v"),
                            positions=q)

    @_serves
    def forward_kinematics(self, joint_names, positions) -> tuple[np.ndarray, np.ndarray]:
        """(tool pose 4x4, link frames (n+1, 4, 4)) for one state (world frame; a moving base
        carries them)."""
        (pq, _), (nq, _) = self.spaces(joint_names), self.widths(joint_names)
        q = self._positions("positions", positions, pq, nq, 1, labels=self.labels(joint_names, "q"))[0]
        tool, links = np.asarray(_raw(self.robot.fk)(q)), np.asarray(_raw(self.robot.link_poses)(q))
        self._finite("the tool pose", tool[None], positions=q)
        return tool, self._finite("the link poses", links[None], positions=q)[0]

    @_serves
    def urdf_link_poses(self, joint_names, positions, links) -> np.ndarray:
        """(L, 4, 4) poses of URDF links by name (any link of the URDF, fixed ones included;
        ``Robot.urdf_link_poses``) for one state, in the frame of :meth:`forward_kinematics`;
        an unknown name: ``RequestError`` naming it."""
        (pq, _), (nq, _) = self.spaces(joint_names), self.widths(joint_names)
        q = self._positions("positions", positions, pq, nq, 1, labels=self.labels(joint_names, "q"))[0]
        self.robot.link_frames.indices(list(links))  # unknown names refused before any work
        P = self.robot.link_frames.poses(np.asarray(_raw(self.robot.link_poses)(q)), list(links))
        return self._finite("the link poses", P[None], positions=q)[0]

    @_serves
    def jacobian(self, joint_names, positions, link: str = "") -> np.ndarray:
        """(6, n) [linear; angular], columns in the caller's joint order (floating base: the
        velocity names, 6 + n columns; a ground base: 3 + n columns on its velocity names,
        ``GroundFront.jacobian``)."""
        (pq, pv), (nq, _) = self.spaces(joint_names), self.widths(joint_names)
        q = self._positions("positions", positions, pq, nq, 1, labels=self.labels(joint_names, "q"))[0]
        # an unknown link: the core's ValueError names the valid ones (_serves)
        J = np.asarray(_raw(self.robot.jacobian)(q, link=link or None))
        return self._finite("the Jacobian", self._to_caller(pv, J)[None], positions=q)[0]

    @_serves
    def forward_simulate(self, joint_names, initial_positions, initial_velocities, efforts,
                         effort_period: float, dt: float, integrator: str = "",
                         duration: float = 0.0, output_period: float = 0.0,
                         include_actuators: bool = False, *,
                         fields: tuple[str, str] = ("efforts", "effort_period")) -> SimulationResult:
        """Integrate under zero-order-hold efforts (003 (5.3)-(5.4) for RK4; a floating base
        on SE(3) by RKMK4 or Lie-Euler, ``algorithm.floating_integrators``; a ground base by
        ``GroundFront.simulate``'s RK4, a diff_drive one in its independent speeds, so
        ``base_vy`` stays 0; its efforts are the wheel torques and the joint efforts).

        Each effort row is held for exactly ``effort_period`` whatever ``dt`` is (a zero-order
        hold, issue 38): the integration steps ``h = dt / m`` with the fewest sub-steps ``m``
        (``hold_substeps``) whose grid meets every row start, so a ``dt`` longer than
        ``effort_period`` (or not dividing it) integrates each row on its own sub-steps; step
        i (time i h) uses row floor(i h / effort_period), the last row held when ``duration``
        runs past the efforts (the request's deprecated ``torques``/``torque_period``:
        ``renamed_field``; ``fields``: the request's names of ``efforts`` and
        ``effort_period``, which the refusals name).  No such grid within ``MAX_SUBSTEPS``
        sub-steps of ``dt`` (periods with no common step): refused, naming both.  ``dt``
        dividing ``effort_period`` (``m = 1``) is what it always was.  Output: the initial state,
        then every ``output_period`` (rounded to whole ``dt`` steps; 0 = every ``dt`` step), and
        always the final state (so an ``output_period`` longer than the horizon gives the
        initial and the final state; the times say when each row is).  The horizon runs in
        chunks of ``CHUNK_STEPS`` steps (the same numbers as one run: the integrators are
        one-step methods), the request's clock checked between them."""
        (pq, pv), (nq, nv) = self.spaces(joint_names), self.widths(joint_names)
        lq, lv = self.labels(joint_names, "q"), self.labels(joint_names, "v")
        q0 = self._positions("initial_positions", initial_positions, pq, nq, 1, labels=lq)[0]
        qd0 = self._to_model(pv, self.states("initial_velocities", initial_velocities, nv, 1, labels=lv))[0]
        pu, nu = pv, nv
        if self.mobile:
            self._mobile_options(include_actuators=include_actuators)
            self._rolling("initial_velocities", qd0[None])
            space, pu = self.efforts(joint_names)
            nu = len(space)
        tau = self._to_model(pu, self.states(fields[0], efforts, nu, labels=self.labels(joint_names, "u")))
        if self.moving:
            integrator = (integrator or self.integrators[0]).lower()
            if integrator not in self.integrators:
                raise RequestError(f"integrator '{integrator}' unknown; use one of "
                                   f"{list(self.integrators)} (a {self.kind}-base robot)")
        else:
            integrator = integrator or "rk4"
            integrator_code(integrator)  # the core's table (algorithm.integrators.INTEGRATORS)
        for name, value in (("dt", dt), (fields[1], effort_period)):
            # a subnormal dt passes here and is refused as infinitely many steps below
            if isinstance(value, bool) or not (math.isfinite(value) and value > 0):
                raise RequestError(f"{name} must be a positive number, got {value!r}")
        for name, value in (("duration", duration), ("output_period", output_period)):
            if isinstance(value, bool) or not (math.isfinite(value) and value >= 0):
                raise RequestError(f"{name} must be 0 or positive, got {value!r}")
        horizon = duration if duration > 0 else len(tau) * effort_period
        ratio = horizon / dt  # inf for a subnormal dt: refused below, never int(inf)
        # sub-steps only where a row starts inside the horizon (one row: held throughout)
        starts = len(tau) > 1 and effort_period < horizon
        m = hold_substeps(dt, effort_period) if starts and math.isfinite(ratio) else 1
        if m is None:
            raise RequestError(
                f"dt {dt} s and {fields[1]} {effort_period} s have no common step within "
                f"{MAX_SUBSTEPS} sub-steps of dt, so the effort rows cannot each be held for "
                f"{fields[1]}; give a dt that divides {fields[1]} ("
                f"{effort_period / math.ceil(effort_period / dt):.6g} s would) or a multiple of it")
        h = dt / m  # the integration step: every row starts on one
        if ratio * m > self.max_points:
            count = round(ratio * m) if math.isfinite(ratio) else "infinitely many"
            sub = f" ({m} sub-steps of dt each, to hold every effort row)" if m > 1 else ""
            raise RequestError(f"{count} integration steps requested{sub}; this server accepts at "
                               f"most {self.max_points} (parameter max_points): horizon "
                               f"{horizon} s / dt {dt} s")
        steps = int(round(horizon / h))
        if steps < 1:
            raise RequestError(f"the horizon {horizon} s is shorter than one step dt={dt} s")
        # zero-order hold: which effort row each step uses (tiny tolerance for round-off)
        # clipped before the integer cast: a tiny effort_period overflows it (the last row held)
        rows = np.minimum(np.floor(np.arange(steps) * h / effort_period + 1e-9),
                          len(tau) - 1).astype(np.intp)
        tau_steps = np.ascontiguousarray(tau[rows])
        if self.mobile:
            def run(qa, va, u):  # a state check of the core on a diverging state: diverged
                try:
                    res = self.robot.simulate(qa, va, u, float(h))
                except ValueError as exc:
                    raise SimulationError(f"simulation diverged: {exc}") from None
                return res.q, res.qd, res.qdd
        else:
            def run(qa, va, u):
                return self.robot.simulate(qa, va, u, h, integrator=integrator,
                                           include_actuators=include_actuators)
        t0 = time.perf_counter()
        q, qd, qdd = self._integrate(run, q0, qd0, tau_steps, float(h))
        compute_time = time.perf_counter() - t0
        stride = m * (max(1, int(round(output_period / dt))) if output_period > 0 else 1)
        keep = np.arange(0, steps + 1, stride)
        if keep[-1] != steps:  # the final state is always answered
            keep = np.append(keep, steps)
        times = keep * h
        return SimulationResult(times, self._to_caller(pq, q[keep]), self._to_caller(pv, qd[keep]),
                                self._to_caller(pv, qdd[keep]), compute_time)

    def _integrate(self, run, q0: np.ndarray, qd0: np.ndarray, tau: np.ndarray,
                   dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``run(q0, qd0, tau_rows) -> (q, qd, qdd)`` (one core simulation) over ``tau`` in
        chunks of ``CHUNK_STEPS`` steps, each from the last state of the one before; ``qdd``
        at a seam is the next chunk's (under the next step's torque, as in one run).  A state
        that turns NaN or Inf is ``RequestError`` "diverged at t = ...", a request past its
        time the bound's message."""
        steps = len(tau)
        Q = QD = QDD = None
        k, q, qd = 0, q0, qd0
        while k < steps:
            if k:
                self._check_time(f" at t = {k * dt:g} s of the {steps * dt:g} s horizon")
            m = min(CHUNK_STEPS, steps - k)
            try:
                qc, qdc, qddc = (np.asarray(x) for x in run(q, qd, tau[k:k + m]))
            except (SimulationError, SingularMassMatrixError) as exc:  # "diverged at t = ..."
                raise RequestError(_shifted(str(exc), k, dt)) from None
            bad = ~(np.isfinite(qc).all(axis=1) & np.isfinite(qdc).all(axis=1))
            if bad.any():  # e.g. a floating base's kernel, which does not raise
                raise RequestError(f"the simulation diverged at t = {(k + int(np.argmax(bad))) * dt:g} s "
                                   f"(the state became NaN or Inf); use a smaller dt (now {dt:g} s) "
                                   f"or smaller torques")
            if Q is None or QD is None or QDD is None:  # (the three are set at once)
                if m == steps:
                    return qc, qdc, qddc
                Q, QD, QDD = (np.empty((steps + 1, x.shape[1])) for x in (qc, qdc, qddc))
            Q[k:k + m + 1], QD[k:k + m + 1], QDD[k:k + m + 1] = qc, qdc, qddc
            k += m
            q, qd = qc[-1].copy(), qdc[-1].copy()
        # steps >= 1 (the caller's check): the first chunk set the three
        return cast(tuple[np.ndarray, np.ndarray, np.ndarray], (Q, QD, QDD))

    # ---- statics and inverse kinematics --------------------------------------------------
    @_serves
    def static_torques(self, joint_names, positions, wrench: Sequence[float], frame: str = "",
                       include_gravity: bool = False) -> np.ndarray:
        """``tau = J^T m [+ g]`` (N, n) in the caller's joint order (003 (2.2) via ``Robot``);
        a ground base: its efforts (``_mobile_efforts``: planar base force and moment, diff_drive
        wheel torques, + the lateral ground force on request)."""
        (pq, perm), (nq, _) = self.spaces(joint_names, lateral=self.mobile), self.widths(joint_names)
        q = self._positions("positions", positions, pq, nq, labels=self.labels(joint_names, "q"))
        w = np.asarray(wrench, dtype=float)
        if w.shape != (6,) or not np.isfinite(w).all():
            raise RequestError("wrench must be 6 finite numbers [force; torque]")
        frame = frame or "world"
        if frame not in ("world", "tool"):
            raise RequestError(f"frame must be 'world' or 'tool' (or empty), got '{frame}'")
        if self.mobile:
            tau = self._mobile_efforts(joint_names, self.robot.static_torques, q, wrench=w, frame=frame,
                                       include_gravity=include_gravity)
            labels = self.labels(joint_names, "u")
        else:
            tau = self._call(self.robot.static_torques, q, wrench=w, frame=frame,
                             include_gravity=include_gravity).reshape(len(q), -1)
            tau, labels = self._to_caller(perm, tau), list(joint_names)
        return self._finite("efforts", tau, labels, positions=q, wrench=w)

    @_serves
    def inverse_kinematics(self, joint_names, targets, seeds=(), position_only: bool = False,
                           position_tolerance: float = 1e-6, orientation_tolerance: float = 1e-6,
                           max_iterations: int = 100, max_restarts: int = 50,
                           timeout: float = 0.0, poses=()) -> IKResult:
        """``Robot.ik`` for N targets, given either as ``targets`` (N x 16 row-major poses, or
        N x 3 positions with ``position_only``) or as ``poses`` (N x 7: position x y z and
        quaternion x y z w, a ``geometry_msgs/Pose`` each; ``ik_targets``), not both; empty
        ``joint_names`` means the model's order, empty ``seeds`` random starts.  Unreachable
        targets are answers (solved false), not errors.  The answer is an ``IKResult`` of
        (N,) arrays, ``positions`` (N, n) in the caller's joint order.

        Tolerances, ``max_iterations``, ``max_restarts`` and ``timeout`` follow the core's rules
        (``validate.positive``, ``validate.integer``: no bool, no fractional count, no negative, NaN or
        subnormal tolerance or time; then ``Robot.ik``'s own checks).  ``timeout`` 0 means none
        of the caller's; either way the solve ends at the request's bound (``max_request_seconds``):
        a timer sets the kernel's stop flag, and a solve it stopped is ``RequestError``."""
        self._fixed_only("inverse_kinematics")
        names = tuple(joint_names) or self._identity
        perm, n = self.permutation(names), len(names)
        T = self.ik_targets(targets, poses, position_only)
        N = T.shape[0]
        q0 = None
        if len(seeds):
            q0 = self._to_model(perm, self.states("seeds", seeds, n, N, labels=names))
        # the core's rules (Robot.ik checks the same again)
        position_tolerance = validate.positive("position_tolerance", position_tolerance)
        orientation_tolerance = validate.positive("orientation_tolerance", orientation_tolerance)
        max_iterations = validate.integer("max_iterations", max_iterations, 1)
        max_restarts = validate.integer("max_restarts", max_restarts, 0)
        if timeout != 0 or isinstance(timeout, bool):  # 0: no limit of the caller's
            try:
                timeout = validate.positive("timeout", timeout)
            except ValueError:
                raise RequestError(f"timeout must be 0 (no limit) or a positive number of "
                                   f"seconds, got {timeout!r}") from None
        left = self._left()
        if self._closing or left <= 0:
            raise RequestError(self._bound_message())
        # the caller's timeout as given (Robot.ik's rule), unless the bound comes first
        limit = left if timeout == 0 or timeout > left else timeout
        self.robot.clear_ik_stop()
        timer = threading.Timer(left, self._stop_ik)  # the bound: the kernel's stop flag
        timer.daemon = True
        timer.start()
        try:
            res = self.robot.ik(T, seeds=q0, position_only=position_only,
                                position_tolerance=position_tolerance,
                                orientation_tolerance=orientation_tolerance,
                                max_iterations=max_iterations, max_restarts=max_restarts,
                                timeout=limit)
        finally:
            timer.cancel()
        # stopped by the timer, or Robot.ik's own clock ran out at the bound (whichever first)
        bounded = limit == left and time.monotonic() - self._started >= self.max_request_seconds
        if self._closing or bounded or self.robot.ik_stop_requested():
            raise RequestError(self._bound_message(f" ({int(np.sum(res.solved))} of {N} targets "
                                                   f"solved by then)"))
        positions = self._to_caller(perm, np.atleast_2d(res.positions))
        self._finite("positions", positions, list(names), targets=T)
        return IKResult(positions, np.atleast_1d(np.asarray(res.solved, dtype=bool)),
                        np.atleast_1d(res.position_errors), np.atleast_1d(res.orientation_errors),
                        np.atleast_1d(res.iterations), np.atleast_1d(res.attempts))

    def ik_targets(self, targets, poses, position_only: bool) -> np.ndarray:
        """The request's targets as (N, 4, 4) poses (or (N, 3) positions with
        ``position_only``), from exactly one of ``targets`` (N x 16 row-major 4x4, N x 3
        positions) and ``poses`` (N x 7: x y z, quaternion x y z w; world = base link).  A
        quaternion is normalised when its norm is within 1e-3 of 1 (float32 or rounded
        values), refused otherwise; ``position_only`` ignores the orientations."""

        t: np.ndarray = np.asarray(targets, dtype=float).reshape(-1)
        p: np.ndarray = np.asarray(poses, dtype=float).reshape(-1)
        if t.size and p.size:
            raise RequestError("give the targets either as poses (geometry_msgs/Pose[]) or as "
                               "targets (row-major 4x4 values), not both")
        if not t.size and not p.size:
            raise RequestError("no targets: give poses (geometry_msgs/Pose[], world = base link) or "
                               "targets (N x 16 row-major 4x4 poses; N x 3 positions with position_only)")
        what, v = ("poses", p) if p.size else ("targets", t)
        width = 7 if p.size else (3 if position_only else 16)
        if v.size % width:
            want = "N x 3 positions (position_only)" if position_only else "N x 16 (4x4 poses)"
            raise RequestError(f"targets has {v.size} values; expected {want}, row-major")
        N = v.size // width
        if N > self.max_points:
            raise RequestError(f"{what} has {N} poses; this server accepts at most "
                               f"{self.max_points} (parameter max_points)")
        if not np.isfinite(v).all():
            raise RequestError(f"{what} contains NaN or Inf (first in {what[:-1]} "
                               f"{int(np.flatnonzero(~np.isfinite(v))[0]) // width})")
        if width == 16:
            return v.reshape(N, 4, 4)
        if width == 3 or position_only:
            return np.ascontiguousarray(v.reshape(N, width)[:, :3])
        v = v.reshape(N, 7)
        norm = np.linalg.norm(v[:, 3:], axis=1)
        bad = np.flatnonzero(np.abs(norm - 1.0) > 1e-3)
        if bad.size:
            raise RequestError(f"poses[{bad[0]}].orientation is not a unit quaternion (norm "
                               f"{norm[bad[0]]:.6g}); normalise it (x y z w)")
        T = np.tile(np.eye(4), (N, 1, 1))
        for k in range(N):
            T[k, :3, :3] = quaternion_to_rotation(v[k, 3:])
        T[:, :3, 3] = v[:, :3]
        return T
