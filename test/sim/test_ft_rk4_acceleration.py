"""The bridge's model-compensated F/T wrench under RK4 (issue 41's known bug): MuJoCo computes
its ``force``/``torque`` sensors with RK4's first stage, and ``mj_step`` leaves its last stage's
acceleration in ``qacc``; compensated with that one the wrench was off by up to 4.4e-3 N m in
free motion.  Oracle: MuJoCo's own sensor reading (``raw``) and ``mj_step`` itself (the split
step must give the same state bit for bit)."""
from __future__ import annotations

import warnings

import numpy as np

from robots_data import example_robot_urdf


def _arm():
    from rbd_ros.urdf import load_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_model(str(example_robot_urdf("simple_humanoid_description/urdf/simple_humanoid.urdf")),
                          base_link="torso", tip_link="r_wrist")


def test_the_compensated_wrench_is_zero_in_free_motion_under_rk4_and_the_step_is_mj_step() -> None:
    import mujoco

    from rbd_ros import Robot
    from rbd_ros.sim.simulator import BridgeConfig, Simulator

    model = _arm()
    robot = Robot(model)
    q0 = 0.3 * np.ones(model.dof)
    sim = Simulator(model, BridgeConfig(timestep=1e-3, mode="lockstep", initial_positions=tuple(q0),
                                        command_timeout=0.0, ft_sensor=True, integrator="RK4"))
    assert sim.mj_model.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
    twin = mujoco.MjData(sim.mj_model)  # the same step through mj_step itself
    amp = 2.0 * np.ones(model.dof)
    worst, old = np.zeros(6), np.zeros(6)
    for k in range(400):  # 0.4 s of fast motion: joint accelerations of tens of rad/s^2
        x, v, _ = (np.array(s, dtype=float) for s in sim.measure())
        u = robot.gravity(x) + amp * np.sin(2 * np.pi * 3.0 * k * 1e-3 + np.arange(model.dof)) - 0.5 * v
        sim.command(u)
        if k % 50 == 0:  # the data the step starts from, the command applied: mj_step
            mujoco.mj_copyData(twin, sim.mj_model, sim.mj_data)
            sim.step()
            twin.ctrl[:] = sim.mj_data.ctrl
            mujoco.mj_step(sim.mj_model, twin)
            for name in ("qpos", "qvel", "qacc", "sensordata", "time"):
                np.testing.assert_array_equal(getattr(sim.mj_data, name), getattr(twin, name), name)
        else:
            sim.step()
        worst = np.maximum(worst, np.abs(sim.ft.wrench))
        last = sim.mj_data.qacc[sim.dof_adr]  # RK4's last stage (what the code before used)
        old = np.maximum(old, np.abs(sim.ft.raw - sim.ft.wrench_model.payload(x, v, last, np.zeros(6))))
    assert old.max() > 1e-4, old  # the last stage's acceleration: off (1.4e-3 N m here)
    assert np.abs(sim.ft.raw).max() > 0.5  # the sensor reads a payload that moves
    assert worst.max() < 1e-9, worst  # before the fix: 1.4e-3 N m
