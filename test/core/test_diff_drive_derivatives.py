"""Derivatives of a differential-drive base's dynamics (``robot.diff_drive_derivatives``, issue
42) on arms no other derivative test names -- the Kinova Jaco and the Unitree Z1
(example-robot-data) on a diff-drive base with spinning wheels -- against independent oracles:

* central differences of ``inverse_dynamics`` (its wheel and joint efforts ``u``) and of
  ``forward_dynamics`` (the constrained acceleration; itself checked against Pinocchio's KKT
  dynamics in ``test_mobile_real_robot``), ``q`` perturbed along the base's tangent
  (``Robot.integrate``: ``T exp(dq^)``), the rates along the independent speeds
  ``s = [v_x, omega, qd]`` (``v_y = 0`` always);
* the inverse and forward dynamics are inverse maps: ``ds-dot/du (du/ds-dot) = I``;
* a batch of states equals the states one by one; the refusals name what is wrong.
"""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import rel_err
from rbd_ros import Robot
from robots_data import example_robot_urdf

ARMS = {"kinova": "kinova_description/robots/kinova.urdf", "z1": "z1_description/urdf/z1.urdf"}


@pytest.fixture(scope="module", params=sorted(ARMS))
def robot(request) -> Robot:
    planar = Robot.from_urdf(str(example_robot_urdf(ARMS[request.param])), base_type="planar").model
    return Robot(planar.replace(base_type="diff_drive", wheel_radius=0.1, wheel_separation=0.45,
                                wheel_spin_inertia=0.02))


def _state(robot: Robot, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    q = np.concatenate([rng.normal(size=2), [rng.uniform(-3, 3)], rng.uniform(-1.2, 1.2, robot.dof)])
    v, a = rng.normal(size=(2, robot.nv))
    v[1] = a[1] = 0.0  # the rolling constraint
    return q, v, a


def _central(f, n: int, step, h: float = 1e-6) -> np.ndarray:
    """Columns ``(f(step(+h e_j)) - f(step(-h e_j))) / 2h``."""
    return np.array([(f(step(h * e)) - f(step(-h * e))) / (2 * h) for e in np.eye(n)]).T


def test_inverse_dynamics_derivatives_against_central_differences(robot) -> None:
    q, v, a = _state(robot, 1)
    w = np.random.default_rng(2).normal(size=6) * 5.0  # a tool wrench too
    S = np.delete(np.eye(robot.nv), 1, axis=1)  # independent speeds -> base rates

    def u(q, v, a):
        e = robot.inverse_dynamics(q, v, a, tool_wrench=w)
        return np.concatenate([e.wheels, e.joints])

    du_dq, du_ds, du_dsd = robot.inverse_dynamics_derivatives(q, v, a, tool_wrench=w)
    ns = robot.nv - 1
    assert du_dq.shape == (robot.nu, robot.nv) and du_ds.shape == du_dsd.shape == (robot.nu, ns)
    assert rel_err(du_dq, _central(lambda x: u(x, v, a), robot.nv, lambda d: robot.integrate(q, d, 1.0))) < 1e-6
    assert rel_err(du_ds, _central(lambda x: u(q, x, a), ns, lambda d: v + S @ d)) < 1e-6
    assert rel_err(du_dsd, _central(lambda x: u(q, v, x), ns, lambda d: a + S @ d)) < 1e-6


def test_forward_dynamics_derivatives_against_central_differences(robot) -> None:
    q, v, _ = _state(robot, 3)
    tau = np.random.default_rng(4).normal(size=robot.nu) * 3.0
    S = np.delete(np.eye(robot.nv), 1, axis=1)

    def sdot(q, v, tau):
        acc = robot.forward_dynamics(q, v, tau)
        assert acc[1] == 0.0  # constrained
        return np.delete(acc, 1)

    f_q, f_s, f_u = robot.forward_dynamics_derivatives(q, v, tau)
    ns = robot.nv - 1
    assert f_q.shape == (ns, robot.nv) and f_s.shape == (ns, ns) and f_u.shape == (ns, robot.nu)
    assert rel_err(f_q, _central(lambda x: sdot(x, v, tau), robot.nv, lambda d: robot.integrate(q, d, 1.0))) < 1e-6
    assert rel_err(f_s, _central(lambda x: sdot(q, x, tau), ns, lambda d: v + S @ d)) < 1e-6
    assert rel_err(f_u, _central(lambda x: sdot(q, v, x), robot.nu, lambda d: tau + d)) < 1e-6
    # the inverse dynamics at the resulting acceleration: its derivatives invert these
    a = robot.forward_dynamics(q, v, tau)
    _, _, du_dsd = robot.inverse_dynamics_derivatives(q, v, a)
    assert rel_err(f_u @ du_dsd, np.eye(ns)) < 1e-10
    # the wheels' spin inertia is in: without it the input map differs
    bare = Robot(robot.model.replace(wheel_spin_inertia=0.0))
    assert rel_err(bare.forward_dynamics_derivatives(q, v, tau)[2], f_u) > 1e-4


def test_a_batch_equals_its_states_and_refusals_are_named(robot) -> None:
    states = [_state(robot, k) for k in range(3)]
    Q, V, A = (np.array(x) for x in zip(*states))
    batch = robot.inverse_dynamics_derivatives(Q, V, A)
    tau = np.ones((3, robot.nu))
    fbatch = robot.forward_dynamics_derivatives(Q, V, tau)
    for k in range(3):
        one, fone = (robot.inverse_dynamics_derivatives(Q[k], V[k], A[k]),
                     robot.forward_dynamics_derivatives(Q[k], V[k], tau[k]))
        assert all(np.array_equal(b[k], o) for b, o in zip(batch, one))
        assert all(np.array_equal(b[k], o) for b, o in zip(fbatch, fone))
    q, v, a = states[0]
    slip = v.copy()
    slip[1] = 0.1
    with pytest.raises(ValueError, match="v"):
        robot.inverse_dynamics_derivatives(q, slip, a)
    with pytest.raises(ValueError, match="v"):
        robot.forward_dynamics_derivatives(q, slip, tau[0])
    with pytest.raises(ValueError, match="tau"):
        robot.forward_dynamics_derivatives(q, v, np.ones(robot.nv))  # nu inputs, not nv
    with pytest.raises(NotImplementedError, match="diff_drive base has no actuator model"):
        robot.forward_dynamics_derivatives(q, v, tau[0], include_actuators=True)


def test_linearize_in_the_independent_speeds_against_the_flow(robot) -> None:
    """Continuous time ``[dq; ds]``: the top rows against central differences (in time and in
    the perturbation) of the tangent error between two motions at constant twists
    (``Robot.integrate``), as the planar base's test does; the bottom rows and ``B`` are the
    forward dynamics' derivatives."""
    from test_root_derivatives import _tangent_difference

    q, v, _ = _state(robot, 5)
    tau = np.random.default_rng(6).normal(size=robot.nu)
    A, B = robot.linearize(q, v, tau)
    nv, ns = robot.nv, robot.nv - 1
    assert A.shape == (nv + ns, nv + ns) and B.shape == (nv + ns, robot.nu)
    fq, fs, fu = robot.forward_dynamics_derivatives(q, v, tau)
    assert np.array_equal(A[nv:, :nv], fq) and np.array_equal(A[nv:, nv:], fs) and np.array_equal(B[nv:], fu)
    assert not B[:nv].any()
    S = np.delete(np.eye(nv), 1, axis=1)
    h, t = 1e-5, 1e-4

    def err(dx: np.ndarray, s: float) -> np.ndarray:
        q1, v1 = robot.integrate(q, dx[:nv], 1.0), v + S @ dx[nv:]
        return _tangent_difference(robot, robot.integrate(q, v, s), robot.integrate(q1, v1, s))

    top = np.empty((nv, nv + ns))
    for j in range(nv + ns):
        e = np.zeros(nv + ns)
        e[j] = h
        top[:, j] = (err(e, t) - err(e, -t) - err(-e, t) + err(-e, -t)) / (4 * t * h)
    assert rel_err(A[:nv], top) < 1e-6


def test_discrete_linearize_equals_central_differences_of_the_core_step(robot) -> None:
    """``linearize(dt=...)`` (``robot.discrete``, the rolling RK4 differentiated through its
    stages) against central differences of one step of ``Robot.simulate`` (the kernel
    ``planar_base.ground_step``), ``q`` perturbed along the tangent, the speeds along ``s``, the
    output's pose by the tangent error; ``dt -> 0`` gives the continuous ``A``, ``B``; a batch
    equals its states; ``rk4`` is the only name."""
    from test_root_derivatives import _tangent_difference

    q, v, _ = _state(robot, 7)
    tau = np.random.default_rng(8).normal(size=robot.nu) * 2.0
    nv, ns, nu, dt = robot.nv, robot.nv - 1, robot.nu, 2e-3
    S = np.delete(np.eye(nv), 1, axis=1)
    A, B = robot.linearize(q, v, tau, dt=dt)
    assert A.shape == (nv + ns, nv + ns) and B.shape == (nv + ns, nu)

    def step(q, v, u):
        res = robot.simulate(q, v, np.asarray(u)[None], dt)
        assert res.qd[1, 1] == 0.0  # rolling: v_y stays 0
        return res.q[1], res.qd[1]

    q1, v1 = step(q, v, tau)

    def out(x: np.ndarray) -> np.ndarray:
        qq, vv = step(robot.integrate(q, x[:nv], 1.0), v + S @ x[nv:nv + ns], tau + x[nv + ns:])
        return np.concatenate([_tangent_difference(robot, q1, qq), S.T @ (vv - v1)])

    J = _central(out, nv + ns + nu, lambda d: d, h=1e-5)
    assert rel_err(A, J[:, :nv + ns]) < 1e-6 and rel_err(B, J[:, nv + ns:]) < 1e-6  # ~1e-9 seen
    Ac, Bc = robot.linearize(q, v, tau)
    for h in (1e-5, 1e-6):  # the gap is first order in dt: O(dt |A|^2)
        Ad, Bd = robot.linearize(q, v, tau, dt=h, integrator="RK4")
        assert rel_err((Ad - np.eye(nv + ns)) / h, Ac) < 50 * h and rel_err(Bd / h, Bc) < 50 * h
    qs, vs, us = np.stack([q, _state(robot, 9)[0]]), np.stack([v, _state(robot, 9)[1]]), np.stack([tau, -tau])
    Ab, Bb = robot.linearize(qs, vs, us, dt=dt)
    assert np.array_equal(Ab[0], A) and np.array_equal(Bb[0], B)
    assert np.array_equal(Ab[1], robot.linearize(qs[1], vs[1], us[1], dt=dt)[0])
    with pytest.raises(ValueError, match="integrator 'rkmk4' unknown for a diff_drive base"):
        robot.linearize(q, v, tau, dt=dt, integrator="rkmk4")
