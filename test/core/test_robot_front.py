"""One ``Robot`` class for every base (issue 28): the root joint (``rbd_ros.bases``) picks the
methods (``rbd_ros.robot.front``), the old class names warn and still answer ``isinstance``,
and the one fast-path type check (``rbd_ros.robot.fast_path``) sends anything that is not a
1-D float64 array to the full validation path.

Oracles: Pinocchio's RNEA / CRBA / ABA on the fixed arm (arrays of int64, whose 8-byte items
the compiled entry points would misread as doubles without the check); for the moving bases
the same call on float64 arrays (which Pinocchio oracles pin in test_floating_base and
test_mobile_base_robot); the signatures of the old classes, written out here."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

from core_oracles import REPO, pinocchio_model, rel_err
from rbd_ros.model import MdhModel
from rbd_ros.robot import Robot
from rbd_ros.robot.arm import front_class
from rbd_ros.robot.fast_path import fast_path
from rbd_ros.robot.floating import FloatingBaseRobot, FloatingFront
from rbd_ros.robot.mobile import GroundFront, MobileBaseRobot

ARM7 = MdhModel.from_yaml(str(REPO / "config" / "arm7.yaml"))


def _models() -> dict[str, MdhModel]:
    floating = ARM7.with_base_type("floating").replace(
        base_mass=4.0, base_com=np.array([0.01, -0.02, 0.05]), base_inertia=np.diag([0.05, 0.06, 0.04]))
    return {"fixed": ARM7, "floating": floating,
            "planar": MdhModel.from_yaml(str(REPO / "config" / "omni_arm7.yaml")),
            "diff_drive": MdhModel.from_yaml(str(REPO / "config" / "mobile_arm7.yaml"))}


MODELS = _models()


@pytest.fixture(scope="module", params=list(MODELS))
def robot(request) -> Robot:
    return Robot(MODELS[request.param])


def _state(r: Robot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integer-valued q, v, a of the robot's sizes (a unit quaternion, v_y = 0 on a diff drive)."""
    q = np.arange(r.nq) % 3 * 1.0  # >= 0: as int64 bits these are finite (denormal) doubles
    if r.base_type == "floating":
        q[3:7] = (0.0, 0.0, 0.0, 1.0)
    v = (np.arange(r.nv) % 2) * 1.0
    a = (np.arange(r.nv) % 3) * 1.0
    if r.base_type == "diff_drive":
        v[1] = a[1] = 0.0
    return q, v, a


# ---- one class, the root joint's methods ----------------------------------------------------
def test_one_class_for_every_base(robot: Robot) -> None:
    kind, n = robot.model.base_type, robot.dof
    sizes = {"fixed": (n, n, n), "floating": (7 + n, 6 + n, 6 + n), "planar": (3 + n, 3 + n, 3 + n),
             "diff_drive": (3 + n, 3 + n, 2 + n)}[kind]
    assert type(robot) is Robot and robot.root.kind == robot.base_type == kind
    assert (robot.nq, robot.nv, robot.nu) == sizes
    front = {"fixed": None, "floating": FloatingFront, "planar": GroundFront, "diff_drive": GroundFront}[kind]
    assert front_class(kind) is front  # robot.arm.FRONTS, the robot floor's names
    bound = robot.__dict__.get("inverse_dynamics")
    assert (bound is None) == (front is None)  # a fixed base uses Robot's own methods
    if front is not None:
        assert bound.__func__ is front.inverse_dynamics and bound.__self__ is robot
    assert f"base={kind!r}" in repr(robot) or kind == "fixed"


def test_old_signatures_kept(robot: Robot) -> None:
    """The public calls take the arguments the old classes took, in the same order."""
    want = {"fixed": {"inverse_dynamics": "q qd qdd tool_wrench include_actuators method",
                      "forward_dynamics": "q qd tau include_actuators", "mass_matrix": "q include_actuators method"},
            "floating": {"inverse_dynamics": "q v a tool_wrench include_actuators method",
                         "forward_dynamics": "q v tau include_actuators method",
                         "mass_matrix": "q include_actuators method"},
            "planar": {"inverse_dynamics": "q v a method tool_wrench", "forward_dynamics": "q v tau method",
                       "mass_matrix": "q method", "jacobian": "q link speeds"}}
    want["diff_drive"] = want["planar"]
    for name, params in want[robot.base_type].items():
        assert " ".join(inspect.signature(getattr(robot, name)).parameters) == params, name


def test_moving_base_kinematics_is_the_fixed_arm_carried() -> None:
    """``fk`` of a moving base = its base pose times the fixed-base arm's ``Robot.fk`` (the
    class method stays the fixed base's), composed here by hand."""
    r = Robot(MODELS["planar"])
    q = np.array([0.5, -1.0, 0.3, *np.linspace(-0.5, 0.5, r.dof)])
    c, s = np.cos(0.3), np.sin(0.3)
    base = np.array([[c, -s, 0, 0.5], [s, c, 0, -1.0], [0, 0, 1, 0], [0, 0, 0, 1]])
    assert rel_err(r.fk(q), base @ Robot.fk(r, q[3:])) < 1e-14


# ---- the old names -----------------------------------------------------------------------------
@pytest.mark.parametrize("old, kinds", [(FloatingBaseRobot, ("floating",)),
                                        (MobileBaseRobot, ("planar", "diff_drive"))])
def test_old_names_warn_and_answer_isinstance(old: type, kinds: tuple[str, ...]) -> None:
    for kind, model in MODELS.items():
        assert isinstance(Robot(model), old) == (kind in kinds)
        if kind in kinds:
            with pytest.warns(DeprecationWarning, match=f"{old.__name__}.model. is deprecated: Robot.model."):
                r = old(model)
            assert type(r) is Robot and r.base_type == kind and isinstance(r, old)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                with pytest.raises(ValueError, match=f"{old.__name__} needs a model with base_type .*got '{kind}'"):
                    old(model)


# ---- the fast-path type check ------------------------------------------------------------------
def test_int_arrays_are_not_read_as_doubles_fixed_base() -> None:
    """int64 state arrays (8-byte items: the compiled entry point would read their bits as
    doubles) give Pinocchio's answers."""
    pin = pytest.importorskip("pinocchio")
    r = Robot(ARM7)
    pm, pd = pinocchio_model(ARM7)
    q, v, a = (np.array(x, dtype=np.int64) for x in _state(r))
    qf, vf, af = (x.astype(float) for x in (q, v, a))
    assert rel_err(r.inverse_dynamics(q, v, a), pin.rnea(pm, pd, qf, vf, af)) < 1e-12
    M = pin.crba(pm, pd, qf)  # the upper triangle
    assert rel_err(r.mass_matrix(q), np.triu(M) + np.triu(M, 1).T) < 1e-12
    assert rel_err(r.forward_dynamics(q, v, a), pin.aba(pm, pd, qf, vf, af)) < 1e-10
    assert rel_err(r.gravity(q), pin.computeGeneralizedGravity(pm, pd, qf)) < 1e-12
    assert rel_err(r.bias(q, v), pin.rnea(pm, pd, qf, vf, 0 * af)) < 1e-12


def _inputs(r: Robot, a: np.ndarray) -> np.ndarray:
    """Generalized forces ``(nu,)`` (diff drive: wheel torques, then the joints)."""
    return a if r.base_type != "diff_drive" else np.concatenate([[1.0, 2.0], a[3:]])


def _calls(r: Robot, q: object, v: object, a: object, u: object) -> dict[str, object]:
    out = {"inverse_dynamics": r.inverse_dynamics(q, v, a), "forward_dynamics": r.forward_dynamics(q, v, u),
           "mass_matrix": r.mass_matrix(q), "bias": r.bias(q, v)}
    if r.base_type == "diff_drive":
        out["constrained_dynamics"] = r.constrained_dynamics(q, v, u)
    return out


def _flat(x: object) -> np.ndarray:
    if isinstance(x, tuple):
        return np.concatenate([np.ravel(np.asarray(e, dtype=float)) for e in x])
    return np.asarray(x, dtype=float)


@pytest.mark.parametrize("kind", ["int64", "strided", "list", "float32"])
def test_not_float64_vectors_take_the_full_path(robot: Robot, kind: str) -> None:
    """Every fast-path call of every base: int64, a strided view, a list and float32 give the
    float64 answer (the inputs are integers: float32 holds them exactly)."""
    q, v, a = _state(robot)
    u = _inputs(robot, a)
    ref = _calls(robot, q, v, a, u)

    def conv(x: np.ndarray) -> object:
        if kind == "strided":
            y = np.empty(2 * len(x))
            y[::2] = x
            return y[::2]
        return x.tolist() if kind == "list" else x.astype(kind)

    got = _calls(robot, conv(q), conv(v), conv(a), conv(u))
    for name in ref:
        assert rel_err(_flat(got[name]), _flat(ref[name])) < 1e-12, name


def test_a_row_of_states_is_a_batch_not_a_state() -> None:
    """A (1, n) array (2-D: it would overflow the 1-D struct of the entry point) is a batch of
    one on a fixed base."""
    r = Robot(ARM7)
    q, v, a = _state(r)
    tau = r.inverse_dynamics(q[None], v[None], a[None])
    assert tau.shape == (1, r.dof)
    np.testing.assert_array_equal(tau[0], r.inverse_dynamics(q, v, a))


def test_fast_path_keeps_signature_and_writes_the_check_once() -> None:
    class Demo:
        dof = 2

        @fast_path(("x", "y"), "_k(x, y, out)", when="flag is False")
        def f(self, x, y, flag=False, scale=2.0):
            """The full path."""
            return ("full", flag, scale)

    src = Demo.f.__fast_source__
    assert src.count("x.ndim == 1") == 1 and src.count("y.dtype is _fast_path_f8") == 1
    assert str(inspect.signature(Demo.f)) == "(self, x, y, flag=False, scale=2.0)"
    assert Demo.f.__doc__ == "The full path."
    d = Demo()
    assert d.f([1.0, 2.0], [3.0, 4.0], True, 3.0) == ("full", True, 3.0)  # not arrays: the full path
