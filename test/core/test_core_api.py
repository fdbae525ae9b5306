"""Robot API: constructors, validation messages, batch/single/list equivalence, the
unchecked ``kernels`` API, and URDF round trips (exporter -> converter, real URDFs)."""
from __future__ import annotations

import numpy as np
import pytest

from core_oracles import REPO, bundled, random_model, rel_err
from rbd_ros.model.urdf_export import model_to_urdf
from rbd_ros.robot import Robot, SimulationResult
from robots_data import PANDA, UR5, example_robot_urdf

TOL = 1e-9


@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot(bundled("arm7"))


@pytest.mark.parametrize("call, message", [
    (lambda r, z: r.inverse_dynamics(z, z[:6], z), r"qd must have shape \(7,\) or \(N, 7\), got \(6,\)"),
    (lambda r, z: r.inverse_dynamics(z, z, np.r_[z[:6], np.nan]), "qdd contains NaN"),
    (lambda r, z: r.forward_dynamics(z, z, np.r_[np.inf, z[1:]]), "tau contains Inf"),
    (lambda r, z: r.forward_dynamics(z, z, "abc"), "tau must be an array of numbers"),
    (lambda r, z: r.inverse_dynamics(np.zeros((3, 7)), np.zeros((2, 7)), np.zeros((3, 7))),
     "must have the same shape"),
    (lambda r, z: r.mass_matrix(np.zeros((2, 3, 7))), r"q must have shape \(7,\) or \(N, 7\)"),
    (lambda r, z: r.gravity([0.0] * 8), r"got \(8,\)"),
    (lambda r, z: r.bias(z, [np.nan] * 7), "qd contains NaN"),
    (lambda r, z: r.inverse_dynamics(z, z, z, tool_wrench=[1, 2, 3]), "tool_wrench must have shape"),
    (lambda r, z: r.inverse_dynamics(z, z, z, tool_wrench=[np.nan] * 6), "tool_wrench contains"),
    (lambda r, z: r.jacobian(z, link="nowhere"), "unknown link 'nowhere'"),
    (lambda r, z: r.jacobian(z, link=9), "link index must be"),
    (lambda r, z: r.link_poses(np.zeros((2, 6))), r"q must have shape \(7,\) or \(N, 7\), got \(2, 6\)"),
    (lambda r, z: r.simulate(z, z, np.zeros((5, 7)), 0.001, integrator="rk45"), "integrator 'rk45'"),
    (lambda r, z: r.simulate(z, z, np.zeros((5, 7)), -1.0), "dt must be a positive"),
    (lambda r, z: r.simulate(z, z, np.zeros((5, 6)), 0.001), r"tau must have shape \(steps, 7\)"),
    (lambda r, z: r.simulate(z, z, np.full((5, 7), np.nan), 0.001), "tau contains NaN"),
    (lambda r, z: r.simulate(z, z, lambda *a: None, 0.001), "steps"),
    (lambda r, z: r.coriolis_matrix(z, z[:3]), r"qd must have shape"),
])
def test_validation_messages(robot: Robot, call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(robot, np.zeros(7))


def test_input_forms_agree(robot: Robot) -> None:
    rng = np.random.default_rng(0)
    Q, QD, QDD = rng.uniform(-1, 1, (3, 6, 7))
    batch = robot.inverse_dynamics(Q, QD, QDD)
    for k in range(6):
        ref = robot.inverse_dynamics(Q[k], QD[k], QDD[k])
        np.testing.assert_allclose(batch[k], ref, rtol=0, atol=1e-12)
    # lists, integer arrays, non-contiguous views all take the checked slow path
    np.testing.assert_array_equal(robot.inverse_dynamics(list(Q[0]), list(QD[0]), list(QDD[0])),
                                  robot.inverse_dynamics(Q[0], QD[0], QDD[0]))
    wide = np.zeros((7, 2))
    wide[:, 0] = Q[1]
    np.testing.assert_array_equal(robot.gravity(wide[:, 0]), robot.gravity(Q[1]))
    np.testing.assert_array_equal(robot.gravity(np.arange(7)), robot.gravity(np.arange(7.0)))
    # FD / M / g / h batch == single
    tau = robot.inverse_dynamics(Q, QD, QDD)
    np.testing.assert_allclose(robot.forward_dynamics(Q, QD, tau)[3],
                               robot.forward_dynamics(Q[3], QD[3], tau[3]), atol=1e-12)
    np.testing.assert_allclose(robot.mass_matrix(Q)[4], robot.mass_matrix(Q[4]), atol=1e-14)
    # results are fresh arrays, not shared buffers
    a = robot.gravity(Q[0])
    robot.gravity(Q[1])
    assert not np.array_equal(a, robot.gravity(Q[1]))


def test_kernels_api_matches_and_reuses_buffers(robot: Robot) -> None:
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, (3, 7))
    k = robot.kernels
    tau = k.rnea(q, qd, qdd)
    assert tau is robot.data.tau
    np.testing.assert_array_equal(tau, robot.inverse_dynamics(q, qd, qdd))
    np.testing.assert_array_equal(k.forward_dynamics(q, qd, tau), robot.forward_dynamics(q, qd, tau))
    np.testing.assert_array_equal(k.crba(q), robot.mass_matrix(q))
    np.testing.assert_array_equal(k.gravity(q), robot.gravity(q))
    np.testing.assert_array_equal(k.jacobian(q), robot.jacobian(q))
    before = k.rnea(q, qd, qdd).copy()
    k.rnea(q, qd, qdd * 2)
    assert not np.array_equal(robot.data.tau, before)  # overwritten, as documented


def test_constructors_and_yaml_round_trip() -> None:
    m = bundled("puma560")
    r1 = Robot(m)
    r2 = Robot.from_yaml(str(REPO / "config" / "puma560.yaml"))
    r3 = Robot.from_yaml(m.to_yaml())
    r4 = Robot.from_mdh(a=m.a, alpha=m.alpha, d=m.d, theta=m.theta, mass=m.mass, com=m.com,
                        inertia=m.inertia, joint_names=m.joint_names)
    q = np.linspace(-1, 1, 6)
    for r in (r2, r3, r4):
        np.testing.assert_array_equal(r.inverse_dynamics(q, q, q), r1.inverse_dynamics(q, q, q))
    assert r4.joint_names == m.joint_names and r4.dof == 6
    assert "puma560" in repr(r1)
    with pytest.raises(TypeError):
        Robot("not a model")  # type: ignore[arg-type]
    res = r1.simulate(q, q, np.zeros((3, 6)), 0.01)
    assert isinstance(res, SimulationResult)
    qs, qds, qdds = res
    assert qs.shape == qds.shape == qdds.shape == (4, 6) and res.t.shape == (4,)


def _converter():
    from rbd_ros.urdf import load_model  # in-tree: failing to import is a failure, not a skip

    return load_model


@pytest.mark.parametrize("name", ["planar2", "puma560", "arm7"])
def test_bundled_urdf_through_converter_matches_yaml(name: str) -> None:
    """urdf/<name>.urdf (written by model_to_urdf) -> converter -> same rigid-body dynamics
    and tool pose as the YAML model it came from."""
    _converter()
    r_urdf = Robot.from_urdf(str(REPO / "urdf" / f"{name}.urdf"), base_link="base_link",
                             tip_link="tool0")
    r_yaml = Robot(bundled(name))
    assert r_urdf.joint_names == r_yaml.joint_names
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-2, 2, (3, r_yaml.dof))
        assert rel_err(r_urdf.inverse_dynamics(q, qd, qdd), r_yaml.inverse_dynamics(q, qd, qdd)) < TOL
        assert rel_err(r_urdf.fk(q), r_yaml.fk(q)) < TOL


def test_random_chain_exporter_converter_round_trip() -> None:
    load_model = _converter()
    m = random_model(9, 31, prismatic=(2, 6))
    back = load_model(model_to_urdf(m), base_link="base_link", tip_link="tool0",
                      gravity=m.gravity)
    r1, r2 = Robot(m), Robot(back)
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2, 2, (3, 9))
    assert rel_err(r2.inverse_dynamics(q, qd, qdd), r1.inverse_dynamics(q, qd, qdd)) < TOL
    assert rel_err(r2.mass_matrix(q), r1.mass_matrix(q)) < TOL


@pytest.mark.parametrize("rel, base, tip", [(PANDA, "panda_link0", "panda_link8"),
                                            (UR5, "base_link", "tool0")])
def test_real_urdf_vs_pinocchio(rel: str, base: str, tip: str) -> None:
    """Real robots (example-robot-data) through the converter vs Pinocchio on the same file
    (extra joints, e.g. Panda's fingers, locked at 0 in Pinocchio's reduced model)."""
    import pinocchio as pin  # a test requirement (requirements-test.txt)
    _converter()
    path = example_robot_urdf(rel)
    robot = Robot.from_urdf(str(path), base_link=base, tip_link=tip)
    full = pin.buildModelFromUrdf(str(path))
    lock = [full.getJointId(nm) for nm in full.names[1:] if nm not in robot.joint_names]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    pm.gravity.linear[:] = robot.model.gravity
    pd = pm.createData()
    order = [pm.names[1:].tolist().index(nm) if hasattr(pm.names[1:], "tolist")
             else list(pm.names[1:]).index(nm) for nm in robot.joint_names]
    assert sorted(order) == list(range(robot.dof))
    rng = np.random.default_rng(4)
    fid = pm.getFrameId(tip)
    for _ in range(3):
        q, qd, qdd = rng.uniform(-1.5, 1.5, (3, robot.dof))
        qp, qdp, qddp = (np.empty(robot.dof) for _ in range(3))
        qp[order], qdp[order], qddp[order] = q, qd, qdd
        tau_ref = pin.rnea(pm, pd, qp, qdp, qddp)[order]
        assert rel_err(robot.inverse_dynamics(q, qd, qdd), tau_ref) < TOL
        M = pin.crba(pm, pd, qp)
        M = (np.triu(M) + np.triu(M, 1).T)[np.ix_(order, order)]
        assert rel_err(robot.mass_matrix(q), M) < TOL
        pin.framesForwardKinematics(pm, pd, qp)
        assert rel_err(robot.fk(q), pd.oMf[fid].homogeneous) < TOL


def test_single_call_fast_path_input_forms(robot: Robot) -> None:
    """The fast path calls the compiled entry point directly (no dispatcher type check):
    strided, reversed, unaligned, read-only, integer and non-array inputs must give the same
    results as contiguous float64 copies, and results must be fresh arrays."""
    rng = np.random.default_rng(5)
    q, qd, x = rng.uniform(-1, 1, (3, 7))
    wide = np.zeros((7, 2))
    wide[:, 0] = q
    rev = q[::-1].copy()[::-1]
    raw = np.zeros(7 * 8 + 1, np.uint8)[1:].view(np.float64)
    raw[:] = q
    ro = q.copy()
    ro.setflags(write=False)

    class Duck:  # has ndim / dtype but is no ndarray
        ndim, dtype = 1, np.dtype(float)

        def __array__(self, dtype=None, copy=None):
            return q.copy()

    calls = {"inverse_dynamics": lambda a: robot.inverse_dynamics(a, qd, x),
             "forward_dynamics": lambda a: robot.forward_dynamics(a, qd, x),
             "mass_matrix": lambda a: robot.mass_matrix(a),
             "gravity": lambda a: robot.gravity(a), "bias": lambda a: robot.bias(a, qd)}
    for name, f in calls.items():
        ref = f(q)
        assert f(q) is not ref and f(q).flags.owndata, name
        for form in (wide[:, 0], rev, raw, ro, Duck(), list(q)):
            np.testing.assert_array_equal(f(form), ref, err_msg=name)
    np.testing.assert_array_equal(robot.gravity(np.arange(7)), robot.gravity(np.arange(7.0)))
    with pytest.raises(ValueError, match="q contains NaN"):
        robot.gravity(np.r_[np.nan, q[1:]][::-1])
