"""Every input-refusal rule of the fast entry points, for every argument (issue 45, survivor 7):
``robot.kernels`` (``algorithm.entries``: strided or unaligned states refused, anything but a
1-D native float64 ndarray a ``TypeError`` of the unboxing, both sent to the kernel) and the
public single-state calls (``algorithm.checked`` through ``robot.fast_path``).  Each argument
in turn -- ``q``, ``qd``, ``qdd``, ``tau`` -- strided, reversed, unaligned, read-only,
float32, int64 and big-endian must give Pinocchio's answer for the same numbers (``rnea``,
``aba``, ``crba``, generalized gravity) or, for the Jacobian, the contiguous-copy answer: a
refusal rule missing for one argument is a kernel reading a strided array as contiguous, a
wrong torque with no error (the planted ``rnea_entry`` that checks only ``q`` and ``qd``).
Wrong shapes and non-finite numbers are a ``ValueError`` of the public calls naming the
argument.

The arm: Romeo's left arm from the torso (example-robot-data ``romeo_small``, 8 joints, named
by no other test), fixed, and on a floating and a planar base (their own checked entry points:
every layout gives the contiguous copy's answer; bad shapes and NaN refused by name)."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros import Robot
from rbd_ros.model.urdf_export import model_to_urdf
from robots_data import example_robot_urdf

pin = pytest.importorskip("pinocchio")

ROMEO = "romeo_description/urdf/romeo_small.urdf"


@pytest.fixture(scope="module")
def romeo():
    robot = Robot.from_urdf(str(example_robot_urdf(ROMEO)), base_link="body", tip_link="l_wrist")
    pm = pin.buildModelFromXML(model_to_urdf(robot.model))
    pm.gravity.linear[:] = robot.model.gravity
    return robot, pm, pm.createData()


def _unaligned(v: np.ndarray) -> np.ndarray:
    buf = np.zeros(8 * v.size + 1, dtype=np.uint8)[1:]
    x = buf.view(np.float64) if buf.ctypes.data % 8 == 0 else np.frombuffer(buf, dtype=np.float64)
    x[:] = v
    return x


def _read_only(v: np.ndarray) -> np.ndarray:
    x = v.copy()
    x.flags.writeable = False
    return x


#: every layout and type an argument may come in (the values as float64 are the oracle's input)
VARIANTS = {
    "strided": lambda v: np.repeat(v, 2)[::2],
    "column": lambda v: np.repeat(v, 3).reshape(v.size, 3)[:, 1],
    "reversed": lambda v: v[::-1].copy()[::-1],
    "unaligned": _unaligned,
    "read-only": _read_only,
    "float32": lambda v: v.astype(np.float32),
    "int64": lambda v: np.round(v).astype(np.int64),
    "big-endian": lambda v: v.astype(">f8"),
}


def _states(robot: Robot, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    lo, hi = np.clip(robot.model.lower, -2, 2), np.clip(robot.model.upper, -2, 2)
    return rng.uniform(lo, hi), rng.uniform(-2, 2, robot.dof), rng.uniform(-3, 3, robot.dof)


def _check_variants(names, base, call, oracle, tol, kinds=tuple(VARIANTS)) -> None:
    """``call(*args)`` with each argument in turn in each variant of ``kinds`` equals ``oracle``
    of the same numbers (float64), within ``tol`` of its size."""
    for i, name in enumerate(names):
        for kind in kinds:
            make = VARIANTS[kind]
            args = list(base)
            args[i] = make(base[i])
            assert args[i].dtype != np.float64 or not args[i].flags.c_contiguous or kind in (
                "unaligned", "read-only"), kind
            want = oracle(*(np.asarray(a, dtype=float) for a in args))
            got = np.array(call(*args))  # a copy: kernels' outputs are reused buffers
            scale = max(1.0, float(np.abs(want).max()))
            assert np.abs(got - want).max() <= tol * scale, (name, kind, np.abs(got - want).max())


def _oracles(robot: Robot, pm, pd) -> dict:
    def crba(q):
        M = pin.crba(pm, pd, q)
        return np.triu(M) + np.triu(M, 1).T

    def jac(q):
        return robot.jacobian(np.ascontiguousarray(q, dtype=float))  # the contiguous-copy answer

    return {"rnea": (("q", "qd", "qdd"), lambda q, v, a: pin.rnea(pm, pd, q, v, a)),
            "forward_dynamics": (("q", "qd", "tau"), lambda q, v, t: pin.aba(pm, pd, q, v, t)),
            "crba": (("q",), crba),
            "gravity": (("q",), lambda q: pin.computeGeneralizedGravity(pm, pd, q)),
            "jacobian": (("q",), jac)}


OPS = ["rnea", "forward_dynamics", "crba", "gravity", "jacobian"]


@pytest.mark.parametrize("op", OPS)
def test_kernels_answer_every_argument_in_every_layout(romeo, op) -> None:
    _check_kernel(romeo, op, tuple(k for k in VARIANTS if k != "big-endian"))


@pytest.mark.parametrize("op", OPS)
def test_kernels_answer_a_big_endian_argument(romeo, op) -> None:
    _check_kernel(romeo, op, ("big-endian",))


def _check_kernel(romeo, op: str, kinds: tuple[str, ...]) -> None:
    robot, pm, pd = romeo
    names, oracle = _oracles(robot, pm, pd)[op]
    q, qd, qdd = _states(robot, 1)
    tau = pin.rnea(pm, pd, q, qd, qdd)
    base = {"rnea": (q, qd, qdd), "forward_dynamics": (q, qd, tau)}.get(op, (q,))
    call = getattr(robot.kernels, op)
    assert np.abs(np.array(call(*base)) - oracle(*base)).max() <= 1e-10 * max(1.0, np.abs(oracle(*base)).max())
    _check_variants(names, base, call, oracle, 1e-9 if op == "forward_dynamics" else 1e-11, kinds)


def test_public_calls_answer_every_argument_in_every_layout(romeo) -> None:
    robot, pm, pd = romeo
    o = _oracles(robot, pm, pd)
    q, qd, qdd = _states(robot, 2)
    tau = pin.rnea(pm, pd, q, qd, qdd)
    _check_variants(("q", "qd", "qdd"), (q, qd, qdd), robot.inverse_dynamics, o["rnea"][1], 1e-11)
    _check_variants(("q", "qd", "tau"), (q, qd, tau), robot.forward_dynamics, o["forward_dynamics"][1], 1e-9)
    _check_variants(("q",), (q,), robot.mass_matrix, o["crba"][1], 1e-11)
    _check_variants(("q",), (q,), robot.gravity, o["gravity"][1], 1e-11)
    _check_variants(("q",), (q,), robot.jacobian, o["jacobian"][1], 1e-12)
    bias = lambda q, v: pin.rnea(pm, pd, q, v, np.zeros(robot.dof))  # noqa: E731
    _check_variants(("q", "qd"), (q, qd), robot.bias, bias, 1e-11)


@pytest.mark.parametrize("method, names", [
    ("inverse_dynamics", ("q", "qd", "qdd")), ("forward_dynamics", ("q", "qd", "tau")),
    ("mass_matrix", ("q",)), ("gravity", ("q",)), ("bias", ("q", "qd")), ("jacobian", ("q",))])
def test_public_calls_refuse_a_bad_shape_or_number_naming_the_argument(romeo, method, names) -> None:
    robot, _, _ = romeo
    n = robot.dof
    call = getattr(robot, method)
    good = [np.full(n, 0.1) for _ in names]
    for i, name in enumerate(names):
        for bad, what in ((np.zeros(n + 1), "long"), (np.zeros(n - 1), "short"), (np.zeros((2, n + 1)), "batch"),
                          (np.array(0.5), "scalar"), (np.full(n, np.nan), "NaN"), (np.full(n, np.inf), "inf")):
            args = list(good)
            args[i] = bad
            if what == "batch" and method == "jacobian":
                continue  # jacobian takes a single state: its shape check below
            with pytest.raises(ValueError, match=rf"\b{name}\b") as err:
                call(*args)
            assert "Traceback" not in str(err.value), (method, name, what)


@pytest.fixture(scope="module", params=["floating", "planar"])
def moving_base(request):
    return Robot.from_urdf(str(example_robot_urdf(ROMEO)), base_link="body", tip_link="l_wrist",
                           base_type=request.param)


def test_moving_base_calls_answer_every_argument_in_every_layout(moving_base) -> None:
    """The floating and planar bases' public calls (their own checked entry points): each
    argument in each layout gives the contiguous float64 copy's answer (``q``'s unit quaternion
    has no integer form but the identity, so ``q`` is not given as int64)."""
    robot = moving_base
    rng = np.random.default_rng(7)
    q = robot.neutral() if hasattr(robot, "neutral") else np.zeros(robot.nq)
    q = np.array(q, dtype=float)
    if robot.nq == robot.nv + 1:  # floating: x y z, unit quaternion, joints
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
        q[:3] = rng.uniform(-1, 1, 3)
        q[7:] = _states(Robot(robot.model.with_base_type("fixed")), 3)[0]
    else:  # planar: x y theta, joints
        q[:3] = rng.uniform(-1, 1, 3)
        q[3:] = _states(Robot(robot.model.with_base_type("fixed")), 3)[0]
    v, a = rng.uniform(-1, 1, (2, robot.nv))
    tau = robot.inverse_dynamics(q, v, a)
    kinds = tuple(k for k in VARIANTS if k != "int64")

    def copy(f):
        return lambda *xs: f(*(np.ascontiguousarray(x, dtype=float) for x in xs))

    for call, args in ((robot.inverse_dynamics, (q, v, a)), (robot.forward_dynamics, (q, v, tau)),
                       (robot.mass_matrix, (q,))):
        _check_variants(("q", "v", "a")[:len(args)], args, call, copy(call), 1e-12, kinds)
    for call, args in ((robot.inverse_dynamics, (v, a)), (robot.forward_dynamics, (v, tau))):
        _check_variants(("v", "a"), args, lambda x, y, c=call: c(q, x, y), copy(lambda x, y, c=call: c(q, x, y)),
                        1e-12, ("int64",))
    assert np.abs(robot.forward_dynamics(q, v, tau) - a).max() < 1e-8  # and the pair is consistent


def test_moving_base_calls_refuse_a_bad_shape_or_number_naming_the_argument(moving_base) -> None:
    robot = moving_base
    q = np.zeros(robot.nq)
    if robot.nq == robot.nv + 1:
        q[6] = 1.0  # the identity quaternion (x y z w)
    v = np.zeros(robot.nv)
    for method, names in (("inverse_dynamics", ("q", "v", "a")), ("forward_dynamics", ("q", "v", "tau"))):
        good = [q, v, v]
        for i, name in enumerate(names):
            for bad in (np.zeros(good[i].size + 1), np.zeros(good[i].size - 1), np.full(good[i].size, np.nan)):
                args = list(good)
                args[i] = bad
                with pytest.raises(ValueError, match=rf"\b{name}\b"):
                    getattr(robot, method)(*args)
    with pytest.raises(ValueError, match=r"\bq\b"):
        robot.mass_matrix(np.zeros(robot.nq + 1))
