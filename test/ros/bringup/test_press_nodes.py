"""``rbd-ros bringup --task press`` through the nodes (issue 30): the bridge with the table and
its F/T sensor, the controller (or the law composed into the bridge) getting the phases'
target poses, wrenches and gains.  On the joint-limited UR10 (named by no other test).
Oracles: the same task run in one process without ROS (``rbd_ros.sim.contact_task
.run_press``, measured on MuJoCo's own contact forces), and the bag's /ft_sensor/wrench."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from robots_data import example_robot_urdf

pytestmark = pytest.mark.slow

UR10_LIMITED = "ur_description/urdf/ur10_joint_limited_robot.urdf"


# one suite run at load ~8: impedance's impact 1.35x through separate nodes against 1.00x in one
# process (alone: within 0.3, as every earlier run); likely where the set point's step lands relative to
# the first contact depends on when the separate controller's command arrives (a rerun, not a
# looser bound: the bound is the check)
@pytest.mark.flaky(reruns=1, reruns_delay=1)
@pytest.mark.parametrize("law, composed", [("impedance", False), ("hybrid_force_position", True)])
def test_press_through_the_nodes(law, composed, tmp_path, capsys) -> None:
    from rbd_ros.ros.bringup.cli import main
    from rbd_ros.ros.bringup.recorder import read_bag
    from rbd_ros.sim.contact_task import run_press
    from rbd_ros.urdf import load_conversion

    urdf = str(example_robot_urdf(UR10_LIMITED))
    out = tmp_path / "run"
    rc = main(["--urdf", urdf, "--scene", "table", "--task", "press", "--force", "10",
               "--controller", law, "--record", str(out), "--no-video", "--json", str(tmp_path / "r.json")]
              + (["--composed"] if composed else []))
    captured = capsys.readouterr()
    assert rc == 0, captured.out + captured.err
    rep = json.loads((out / "report.json").read_text())
    assert rep == json.loads((tmp_path / "r.json").read_text())
    # the acceptance: < 5 % RMS over the slide, impact < 2x, no contact lost
    assert rep["force_error_rms_N"] < 0.5 and rep["impact_peak_ratio"] < 2.0
    assert rep["contact_lost_cycles"] == 0 and rep["slide_cycles"] >= 2900
    assert rep["missed_cycles"] == 0 and rep["mode"].startswith("composed" if composed else "separate")
    # the same task in one process, on MuJoCo's contact force: the nodes' run agrees
    ref = run_press(load_conversion(urdf).model, law, 10.0, urdf=urdf).report()
    assert abs(rep["force_error_rms_N"] - ref["force_error_rms_N"]) < 0.05
    # the hybrid law's guarded approach (the default of both) planned as run_press plans it:
    # the press phase starts as late (the UR10: 0.22 s later than unguarded)
    assert rep["phases_s"]["press"] == pytest.approx(ref["phases_s"]["press"], abs=0.01), rep["phases_s"]
    # the impact: the nodes step impedance's set point into the surface where run_press ramps it
    # (a moving set point through the controller would add its damping's D v_d to the press):
    # 1.18x against 1.00x measured; the hybrid law's approach is the same in both (< 0.1 apart)
    assert abs(rep["impact_peak_ratio"] - ref["impact_peak_ratio"]) < (0.3 if law == "impedance" else 0.1)
    # the bag: the F/T readings of the slide (world z is the table's normal) and the references
    bag = read_bag(out / "bag")
    ft = bag["/ft_sensor/wrench"]
    stamps = np.array([s for s, _ in ft]) * 1e-9
    assert np.all(np.diff(stamps) >= 0) and all(m.header.frame_id == "ft_sensor" for _, m in ft[:5])
    t3 = stamps[0] + rep["phases_s"]["slide"]
    mid = (stamps > t3 + 0.3) & (stamps < t3 + 2.7)
    norm = np.array([np.linalg.norm([m.wrench.force.x, m.wrench.force.y, m.wrench.force.z])
                     for _, m in ft])[mid]  # |f| >= the normal force; friction adds <= 2 %
    assert mid.sum() > 2000 and abs(np.median(norm) - 10.0) < 0.5
    assert len(bag["/controller/target_pose"]) >= 3
    if law == "hybrid_force_position":
        fz = [m.wrench.force.z for _, m in bag["/controller/target_wrench"]]
        assert fz[0] == pytest.approx(-10.0) and fz[-1] == 0.0
    # the F/T readings recorded (record_ft): one per state, none lost
    assert len(bag["/ft_sensor/wrench_raw"]) == len(ft) and abs(len(ft) - len(bag["/joint_states"])) <= 1
    assert all(rep["recording"][t]["lost"] == 0 for t in ("/ft_sensor/wrench_raw", "/ft_sensor/wrench"))
    # identify --payload on a press: refused (the wrist never turns: a steady contact and the
    # tool's weight are the same constant wrench), the press's stretch named (payload_contact)
    from rbd_ros.identification.cli import main as identify

    capsys.readouterr()
    assert identify([str(out), "--payload", "--urdf", urdf, "-o", str(tmp_path / "p.yaml")]) == 2
    err = capsys.readouterr().err
    span = re.search(r"departs .* at t = ([0-9.]+)-([0-9.]+) s \(contact there\?\)", err)
    assert "turned only" in err and span, err
    ph = {k: v + stamps[0] for k, v in rep["phases_s"].items()}
    assert ph["approach"] < float(span[1]) < ph["press"] + 0.3, (span[0], ph)
    assert ph["retreat"] - 0.1 < float(span[2]) < ph["retreat"] + 0.5, (span[0], ph)
    page = (out / "index.html").read_text()
    assert "force error over the slide" in page and "no video (--no-video)" in page
    assert (out / "plot.png").stat().st_size > 10_000
    assert "contact lost during the slide: 0 cycles" in captured.out
