#!/usr/bin/env python3
"""Benchmark of the floating-base dynamics (issue 16) against Pinocchio's free-flyer and
MuJoCo's free joint (same machine, same run, interleaved medians; ratio < 1 = faster).

    .venv/bin/python bench/bench_floating.py [--quick]

Model: the bundled 7-DoF ``arm7`` with an inertial on its base link (3 kg), on a free-flyer
root: ``pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())`` and ``Robot.from_urdf(xml,
base_type="floating")``; MuJoCo loads the same URDF with a ``freejoint`` added to the root body.

* single calls: inverse dynamics vs ``pin.rnea``, forward dynamics vs ``pin.aba``, mass
  matrix vs ``pin.crba``, through the public API and ``robot.kernels`` (unchecked buffers);
* 10 s at 1 kHz of the floating arm under zero-order-hold joint torques: our RKMK4 in one
  jitted call vs a Python loop of MuJoCo ``mj_step`` (RK4), and both trajectories compared
  after 0.2 s.

Writes ``bench/results/floating.json``.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_core import interleaved  # noqa: E402

from rbd_ros import Robot  # noqa: E402

BASE_INERTIAL = ('<inertial><origin xyz="0.01 -0.02 0.05" rpy="0 0 0"/><mass value="3.0"/>'
                 '<inertia ixx="0.05" ixy="0.001" ixz="0.002" iyy="0.06" iyz="-0.003" izz="0.04"/></inertial>')


def arm7_xml() -> str:
    xml = (ROOT / "urdf" / "arm7.urdf").read_text()
    xml, k = re.subn(r'<link name="base_link"\s*/>', f'<link name="base_link">{BASE_INERTIAL}</link>', xml)
    if k == 0:
        xml = xml.replace('<link name="base_link">', f'<link name="base_link">{BASE_INERTIAL}', 1)
    return xml


def single_calls(xml: str, quick: bool) -> dict:
    import pinocchio as pin

    robot = Robot.from_urdf(xml, base_type="floating")
    pm = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
    pm.gravity.linear[:] = robot.model.gravity
    pd = pm.createData()
    rng = np.random.default_rng(7)
    q = np.concatenate([rng.normal(size=3), pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs(),
                        rng.uniform(-1, 1, robot.dof)])
    v, a = rng.normal(size=(2, robot.nv))
    tau = robot.inverse_dynamics(q, v, a)
    k = robot.kernels
    number, repeat = (2000, 7) if quick else (5000, 15)
    t = interleaved({
        "pin.rnea": lambda: pin.rnea(pm, pd, q, v, a),
        "pin.aba": lambda: pin.aba(pm, pd, q, v, tau),
        "pin.crba": lambda: pin.crba(pm, pd, q),
        "id": lambda: robot.inverse_dynamics(q, v, a),
        "fd": lambda: robot.forward_dynamics(q, v, tau),
        "M": lambda: robot.mass_matrix(q),
        "k.id": lambda: k.rnea(q, v, a),
        "k.fd": lambda: k.forward_dynamics(q, v, tau),
        "k.M": lambda: k.crba(q),
    }, number, repeat)
    return {"us": {key: x * 1e6 for key, x in t.items()},
            "ratio": {"ID/rnea": t["id"] / t["pin.rnea"], "kernels ID/rnea": t["k.id"] / t["pin.rnea"],
                      "FD/aba": t["fd"] / t["pin.aba"], "kernels FD/aba": t["k.fd"] / t["pin.aba"],
                      "M/crba": t["M"] / t["pin.crba"], "kernels M/crba": t["k.M"] / t["pin.crba"]}}


def sim_vs_mujoco(xml: str, quick: bool) -> dict:
    import mujoco

    robot = Robot.from_urdf(xml, base_type="floating")
    n = robot.dof
    steps, dt = 10_000, 1e-3
    rng = np.random.default_rng(0)
    q0 = robot.neutral()
    q0[7:] = rng.uniform(-1, 1, n)
    tau = np.zeros((steps, robot.nv))
    tau[:, 6:] = np.repeat(rng.uniform(-3, 3, (100, n)), 100, axis=0)
    spec = mujoco.MjSpec.from_string(xml.replace(
        "</robot>", '<mujoco><compiler discardvisual="true" balanceinertia="false"/></mujoco></robot>'))
    spec.worldbody.first_body().add_freejoint()
    spec.option.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    spec.option.gravity = robot.model.gravity
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.timestep = dt
    m = spec.compile()
    d = mujoco.MjData(m)
    m.dof_damping[:] = 0.0
    assert m.nq == robot.nq and m.nv == robot.nv
    qpos0 = np.concatenate([q0[:3], [1.0, 0.0, 0.0, 0.0], q0[7:]])

    def ours() -> None:
        robot.simulate(q0, np.zeros(robot.nv), tau, dt)

    def theirs() -> None:
        mujoco.mj_resetData(m, d)
        d.qpos[:] = qpos0
        step, applied = mujoco.mj_step, d.qfrc_applied
        for k in range(steps):
            applied[:] = tau[k]
            step(m, d)

    t = interleaved({"ours": ours, "mujoco": theirs}, number=1, repeat=3 if quick else 7)
    res = robot.simulate(q0, np.zeros(robot.nv), tau[:200], dt)
    mujoco.mj_resetData(m, d)
    d.qpos[:] = qpos0
    for k in range(200):
        d.qfrc_applied[:] = tau[k]
        mujoco.mj_step(m, d)
    diff = max(float(np.abs(res.q[-1, :3] - d.qpos[:3]).max()), float(np.abs(res.q[-1, 7:] - d.qpos[7:]).max()))
    return {"steps": steps, "dt": dt, "ours_s": t["ours"], "mujoco_loop_s": t["mujoco"],
            "ratio": t["ours"] / t["mujoco"], "q_diff_after_0.2s": diff}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    xml = arm7_xml()
    result = {"single_call_7dof": single_calls(xml, args.quick), "rkmk4_vs_mujoco": sim_vs_mujoco(xml, args.quick)}
    s, r = result["single_call_7dof"], result["rkmk4_vs_mujoco"]
    print("floating 7 DoF            public  kernels  (reference us)")
    for key, ref in (("ID/rnea", "pin.rnea"), ("FD/aba", "pin.aba"), ("M/crba", "pin.crba")):
        print(f"  {key:22s}  {s['ratio'][key]:.2f}    {s['ratio']['kernels ' + key]:.2f}     ({s['us'][ref]:.2f})")
    print(f"  RKMK4 10 s @ 1 kHz / mj_step loop: {r['ratio']:.2f} ({r['ours_s'] * 1e3:.1f} vs "
          f"{r['mujoco_loop_s'] * 1e3:.1f} ms); trajectories differ by {r['q_diff_after_0.2s']:.1e} after 0.2 s")
    out = ROOT / "bench" / "results" / "floating.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
