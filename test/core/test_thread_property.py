"""Issue 38, item 1: a property-based test over the public ``Robot`` API that mixes threads,
shapes and values, checked against Pinocchio.

Hypothesis draws, per example, 1-4 worker threads, each with its own method (inverse and
forward dynamics, mass matrix, gravity, tool pose, tool Jacobian, IK from a nearby seed), shape
(one state ``(n,)`` or a batch ``(N, n)``) and values (positions within +-pi, rates and
accelerations up to 10, torques up to 50 N m); the workers call the same Panda ``Robot`` at once
while a further thread solves an unreachable IK target on it (the LM kernel releases the GIL).
Oracle: Pinocchio on the same URDF (fingers locked), computed afterwards on the main thread:
``rnea``, ``aba``, ``crba``, ``computeGeneralizedGravity``, the tip frame's placement and its
``LOCAL_WORLD_ALIGNED`` Jacobian; for IK, the tip pose of the answer."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rbd_ros.robot import Robot
from robots_data import PANDA, example_robot_urdf

TIP = "panda_link8"
METHODS = ("inverse_dynamics", "forward_dynamics", "mass_matrix", "gravity", "fk", "jacobian", "ik")


@pytest.fixture(scope="module")
def panda() -> tuple[Robot, pin.Model, pin.Data, int]:
    path = str(example_robot_urdf(PANDA))
    robot = Robot.from_urdf(path, tip_link=TIP)
    full = pin.buildModelFromUrdf(path)
    fingers = [full.getJointId(n) for n in full.names if "finger" in n]
    pm = pin.buildReducedModel(full, fingers, pin.neutral(full))
    assert list(pm.names)[1:] == list(robot.joint_names)
    return robot, pm, pm.createData(), pm.getFrameId(TIP)


def pinocchio_answer(pm: pin.Model, pd: pin.Data, frame: int, method: str, q: np.ndarray, v: np.ndarray,
                     a: np.ndarray) -> np.ndarray:
    """What Pinocchio says for one state."""
    if method == "inverse_dynamics":
        return pin.rnea(pm, pd, q, v, a).copy()
    if method == "forward_dynamics":
        return pin.aba(pm, pd, q, v, a).copy()
    if method == "mass_matrix":
        M = pin.crba(pm, pd, q)
        return np.triu(M) + np.triu(M, 1).T
    if method == "gravity":
        return pin.computeGeneralizedGravity(pm, pd, q).copy()
    pin.framesForwardKinematics(pm, pd, q)
    if method == "fk":
        return pd.oMf[frame].homogeneous.copy()
    return pin.computeFrameJacobian(pm, pd, q, frame, pin.LOCAL_WORLD_ALIGNED).copy()


job = st.tuples(st.sampled_from(METHODS), st.integers(0, 4), st.integers(0, 2**32 - 1))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(jobs=st.lists(job, min_size=1, max_size=4), scale=st.sampled_from([1e-3, 0.3, 1.0]))
def test_threads_shapes_and_values_agree_with_pinocchio(panda, jobs, scale: float) -> None:
    robot, pm, pd, frame = panda
    n = robot.dof
    work = []  # (method, batch size (0: one state), q, v, a): each thread's calls
    for method, batch, seed in jobs:
        rng = np.random.default_rng(seed)
        rows = max(batch, 1)
        q = rng.uniform(-np.pi, np.pi, (rows, n)) * scale
        v = rng.uniform(-10.0, 10.0, (rows, n)) * scale
        a = rng.uniform(-50.0, 50.0, (rows, n)) * scale  # qdd, or tau for forward dynamics
        if method == "ik":
            batch = 0
        work.append((method, batch, q, v, a))
    answers: list[list[np.ndarray]] = [[] for _ in work]
    errors: list[BaseException] = []

    def call(k: int) -> None:
        method, batch, q, v, a = work[k]
        one = (lambda x: x) if batch else (lambda x: x[0])
        try:
            for _ in range(20):
                if method in ("inverse_dynamics", "forward_dynamics"):
                    out = getattr(robot, method)(one(q), one(v), one(a))
                elif method == "ik":
                    res = robot.ik(robot.fk(q[0]), seeds=q[0] + 0.05, max_restarts=0)
                    out = np.array(robot.fk(res.positions)) if res.solved else None
                else:
                    out = getattr(robot, method)(one(q))
                answers[k].append(out)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    far = np.eye(4)
    far[:3, 3] = [30.0, 0.0, 0.0]
    stop = threading.Event()

    def solving() -> None:
        while not stop.is_set():
            robot.ik(far, max_restarts=2, seed=3)

    bg = threading.Thread(target=solving)
    threads = [threading.Thread(target=call, args=(k,)) for k in range(len(work))]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the GIL changes hands between nearly every call
    bg.start()
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        stop.set()
        bg.join()
        sys.setswitchinterval(interval)
    assert not errors, errors
    for (method, batch, q, v, a), outs in zip(work, answers):
        if method == "ik":
            want = robot.fk(q[0])  # the target; Pinocchio's pose of the answer below
            for T in outs:
                if T is not None:
                    assert np.abs(T - want).max() < 1e-5
            continue
        want = np.array([pinocchio_answer(pm, pd, frame, method, q[i], v[i], a[i]) for i in range(len(q))])
        want = want if batch else want[0]
        tol = 1e-9 * max(1.0, float(np.abs(want).max()))
        for got in outs:
            assert got.shape == want.shape
            assert np.abs(got - want).max() <= tol, (method, batch, float(np.abs(got - want).max()))
