"""Issues 26 (item 4) and 27 in ``rbd-ros bringup``, without starting nodes: the report's RMS
and saturation/chatter numbers against hand-computed values, the page showing what the
terminal printed (tool and base errors, warnings), the gains and the effective parameters,
a ``--no-video`` recording a later render can use, the controller's refusals matched to the
bringup's own tour, and output paths, timestep and ``--start`` checked before any node."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rbd_ros.ros.bringup.report import make_report, saturation_and_chatter


# ---- the report's numbers -----------------------------------------------------------------------
def test_rms_and_max_against_hand_computed_values() -> None:
    # errors of joint a: 3, -4, 0, 0 -> RMS sqrt(25 / 4) = 2.5 (mean |e| would be 1.75, the
    # mean square 6.25, max |e| 4); joint b: 0.1 * (1, -1, 1, -1) -> RMS 0.1
    ref = np.array([[3.0, 0.1], [-4.0, -0.1], [0.0, 0.1], [0.0, -0.1]])
    meas = np.zeros_like(ref)
    t = np.array([0.0, 0.1, 0.2, 0.3])
    tool = (np.array([0.3, 0.4, 0.0, 0.0]), np.array([0.0, 0.0, 0.0, 0.2]))
    r = make_report(["a", "b"], ref + 1.0, meas + 1.0, np.zeros((4, 2)), t, 1.0, 0, tool=tool)
    assert r.rms_error == pytest.approx([2.5, 0.1], rel=1e-12)
    assert r.max_error == pytest.approx([4.0, 0.1], rel=1e-12)
    assert r.tool_position_rms == pytest.approx(0.25, rel=1e-12)  # sqrt((0.09 + 0.16) / 4)
    assert r.tool_orientation_rms == pytest.approx(0.1, rel=1e-12)  # sqrt(0.04 / 4)
    assert r.duration == pytest.approx(0.3) and r.samples == 4


def test_saturation_and_chatter_per_joint_by_hand() -> None:
    # joint a (limit 5): at the limit in cycles 0, 1, 2, 4 (|-4.9999999| is within 1e-6 of it)
    # = 80 %; sign flips at the limit in cycles 1, 2, 4 of the 4 after the first = 75 %.
    # joint b (limit 10): never at it; joint c: no limit (inf)
    tau = np.array([[5.0, 1.0, 1e6], [-5.0, 1.0, -1e6], [5.0, -1.0, 1e6], [4.0, 1.0, 0.0],
                    [-4.9999999, 9.0, 0.0]])
    sat, chat = saturation_and_chatter(tau, np.array([5.0, 10.0, np.inf]))
    assert sat == pytest.approx([80.0, 0.0, 0.0]) and chat == pytest.approx([75.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="do not match 2 effort limits"):
        saturation_and_chatter(tau, np.array([5.0, 10.0]))


def test_saturation_shows_in_the_table_the_json_and_the_page(tmp_path: Path) -> None:
    from rbd_ros.ros.bringup.page import write_page

    tau = np.array([[5.0, 1.0], [-5.0, 1.0], [5.0, -1.0], [4.0, 1.0], [-5.0, 0.5]])
    t = np.linspace(0.0, 0.4, 5)
    r = make_report(["shoulder", "slide"], np.zeros((5, 2)), np.zeros((5, 2)), tau, t, 1.0, 0,
                    effort_limit=np.array([5.0, 100.0]), prismatic=np.array([False, True]))
    table = r.table()
    assert "5.000 N m" in table and "1.000 N" in table
    row = next(line for line in table.splitlines() if line.startswith("shoulder"))
    assert row.split()[-2:] == ["80.00%", "75.00%"]
    assert ("warning: joint 'shoulder' commanded at its effort limit in 80.00 % of the cycles, "
            "flipping sign there (chatter) in 75.00 %") in table
    assert "warning: joint 'slide'" not in table
    r.to_json(tmp_path / "report.json")
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["saturation"] == pytest.approx([80.0, 0.0]) and data["chatter"] == pytest.approx([75.0, 0.0])
    page = write_page(tmp_path, data, {"bringup": {"robot": "x"}}, title="t").read_text()
    assert "80.00 %" in page and "75.00 %" in page and "warning: joint &#x27;shoulder&#x27;" in page
    page = write_page(tmp_path, data, {}, run_lines=["[bringup] tour: start moved by up to 1 rad"]).read_text()
    assert "<p id='run'>[bringup] tour: start moved by up to 1 rad</p>" in page


def test_the_page_has_what_the_terminal_printed(tmp_path: Path) -> None:
    from rbd_ros.ros.bringup.page import write_page

    t = np.linspace(0.0, 1.0, 11)
    r = make_report(["a"], np.zeros((11, 1)), np.zeros((11, 1)), np.zeros((11, 1)), t, 1.0, 0,
                    tool=(np.full(11, 2e-3), np.full(11, 1e-2)))
    r.base_path_rms, r.base_path_max, r.base_heading_rms, r.base_heading_max = 0.01, 0.02, 0.03, 0.04
    r.peak_base_effort = [1.0, 2.0, 3.0]
    page = write_page(tmp_path, r, {"bringup": {}}, gains={"kp": "[100.0] (model)"}).read_text()
    for line in r.table().splitlines()[2:]:  # every line after the joint rows
        assert line.replace("'", "&#x27;") in page, line
    assert "tool position error rms 2.000e-03 m" in page and "base path error rms 1.000e-02 m" in page
    assert "<table class='parameters' id='gains'><tr><td>kp</td><td>[100.0] (model)</td>" in page


# ---- the bringup object, no nodes -----------------------------------------------------------
class FakeProcess:
    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)

    def alive(self) -> bool:
        return True


@pytest.fixture(scope="module")
def bringup():
    from rbd_ros.ros.bringup.cli import build_plan, parse_args
    from rbd_ros.ros.bringup.runner import Runner

    plan = build_plan(parse_args(["--robot", "planar2", "--controller", "computed_torque"]))
    plan.task.runner = Runner(plan)  # the task's runner, its processes faked below
    return plan.task


def test_effective_parameters_and_gains_for_the_page(bringup) -> None:
    from rbd_ros.ros.bringup.tour_report import effective_parameters

    b, runner = bringup, bringup.runner
    runner.procs = [FakeProcess(["mujoco_bridge: ready (2 joints, mode=lockstep, integrator=RK4, "
                            "timestep=0.001 s, command_mode=torque, model 'planar2' from x)"]),
               FakeProcess([]),  # state_publisher
               FakeProcess([]),
               FakeProcess(["[INFO] [1.0] [controller]: computed_torque on 2 joints from x; trigger "
                            "timer; gains kp=[100.0, 100.0] (model), kd=[20.0, 20.0] (given)"])]
    params = effective_parameters(runner, 6.5)
    run = params["bringup"]
    assert run["duration"] == 6.5 and run["segment_time"] == 2.0 and run["robot"] == "planar2"
    assert run["integrator"] == "RK4" and run["timestep"] == "0.001"
    assert run["start"] == pytest.approx(b.tour.start.tolist()) and run["floor"] == "none"
    assert None not in run.values()
    assert runner.gains_used() == {"kp": "[100.0, 100.0] (model)", "kd": "[20.0, 20.0] (given)"}


def test_refusals_are_matched_to_the_tour_it_sent(bringup, capsys) -> None:
    b = bringup
    ours = f"[INFO] [controller]: trajectory accepted: 3 points, quintic, 6.000 s from t = {1.1:.3f}"
    other = "[ERROR] [controller]: trajectory refused: joint names ['x'] do not match"
    b.tour_stamp, b.answers_from = 1.1, 1
    # a refusal before the tour was sent, another publisher's after it, then the tour accepted
    b.runner.procs = procs = [FakeProcess([]), FakeProcess([]), FakeProcess([]), FakeProcess([other, other, ours])]
    b.wait_for_tour_accepted(timeout=2.0, others=lambda kind: 1)
    out = capsys.readouterr().out
    assert out.count("[bringup] warning: not the tour's") == 1 and "the run goes on" in out
    # later: another publisher's trajectory accepted replaces the tour: said
    procs[3].lines.append("[INFO] [controller]: trajectory accepted: 2 points, quintic, 1.000 s "
                            "from t = 5.000")
    b.report_foreign_answers(procs[3])
    assert "it replaced the tour" in capsys.readouterr().out
    # nobody else publishes: a refusal is the tour's
    procs[3].lines = ["x", other]
    with pytest.raises(RuntimeError, match=r"the controller refused the tour: joint names \['x'\]"):
        b.wait_for_tour_accepted(timeout=2.0, others=lambda kind: 0)
    # others publish and the tour's acceptance never comes: an error that says it may be theirs
    with pytest.raises(RuntimeError, match="1 other publisher.* may be theirs"):
        b.wait_for_tour_accepted(timeout=2.0, others=lambda kind: 1, grace=0.1)


def test_start_pairs_over_the_default_start() -> None:
    from rbd_ros.ros.bringup.cli import build_plan, parse_args

    default = build_plan(parse_args(["--robot", "planar2"])).tour.start
    b = build_plan(parse_args(["--robot", "planar2", "--start", "joint1=0.3"]))
    assert b.tour.start[0] == 0.3 and b.tour.start[1] == default[1]
    assert b.specs[0].parameters["initial_positions"] == pytest.approx(b.tour.start.tolist())
    for bad, message in ((["nope=1"], "has no joint 'nope'; its joints are joint1, joint2"),
                         (["joint1"], "--start joint1: not JOINT=VALUE, nor a named pose of .planar2."),
                         (["joint1=x"], "'x' is not a number"),
                         (["joint1=1", "joint1=2"], "joint 'joint1' given twice")):
        with pytest.raises(ValueError, match=message):
            build_plan(parse_args(["--robot", "planar2", "--start", *bad]))


def test_outputs_and_timestep_are_checked_before_any_node(tmp_path: Path, capsys) -> None:
    from rbd_ros.ros.bringup.cli import check_json_file, main

    with pytest.raises(IsADirectoryError, match="is a directory"):
        check_json_file(tmp_path)
    a_file = tmp_path / "f"
    a_file.write_text("x")
    with pytest.raises(OSError, match=f"--json {a_file / 'r.json'}: cannot write there"):
        check_json_file(a_file / "r.json")
    check_json_file(tmp_path / "new" / "r.json")
    assert not (tmp_path / "new" / "r.json").exists()  # not left behind
    assert main(["--robot", "planar2", "--json", str(a_file / "r.json")]) == 1
    assert "cannot write there" in capsys.readouterr().err
    assert main(["--robot", "planar2", "--timestep", "1"]) == 1
    err = capsys.readouterr().err
    assert "--timestep 1: must be between 1e-05 and 0.01 s" in err


def test_a_no_video_recording_can_be_rendered_later(tmp_path: Path) -> None:
    from rbd_ros.model import MdhModel
    from rbd_ros.ros.bringup.page import video_and_page
    from rbd_ros.sim.render import Recording
    from rbd_ros.util.resources import config_file

    model = MdhModel.from_yaml(str(config_file("planar2")))
    t = np.linspace(0.0, 1.0, 11)
    q = np.c_[np.sin(t), np.cos(t)]
    r = make_report(["joint1", "joint2"], q, q, np.zeros_like(q), t, 1.0, 0)
    lines = video_and_page(tmp_path, model, t, q, q + 0.01, r, {"bringup": {"no_video": True}},
                           video=False)
    assert lines == [f"page {tmp_path / 'index.html'}"]
    rec = Recording.load(tmp_path / "recording.npz")
    np.testing.assert_array_equal(rec.q, q)
    np.testing.assert_array_equal(rec.q_ref, q + 0.01)
    assert MdhModel.from_yaml(str(tmp_path / "model.yaml")).joint_names == model.joint_names
    assert "no video (--no-video)" in (tmp_path / "index.html").read_text()
    video_and_page(tmp_path, model, t, q, q, r, {"bringup": {"no_video": False}}, video=False,
                   no_video_reason="the renderer draws fixed-base arms only")
    page = (tmp_path / "index.html").read_text()
    assert "no video (the renderer draws fixed-base arms only)" in page and "--no-video" not in page


def test_start_from_a_named_pose_of_the_robot() -> None:
    """The Panda's SRDF (example-robot-data) names the pose 'default': ``--start default`` is
    that pose exactly (its finger joint is not on the arm's chain), a pair overrides a joint."""
    import xml.etree.ElementTree as ET

    from rbd_ros.ros.bringup.cli import build_plan, parse_args
    from rbd_ros.ros.bringup.description import named_poses, srdf_beside
    from robots_data import PANDA, UR5, example_robot_urdf

    urdf = str(example_robot_urdf(PANDA))
    srdf = srdf_beside(urdf)
    assert srdf is not None and srdf.name == "panda.srdf"
    state = next(s for s in ET.parse(srdf).getroot().iter("group_state") if s.get("name") == "default")
    want = {j.get("name"): float(j.get("value")) for j in state.iter("joint")}
    assert named_poses(urdf)["default"] == want
    args = ["--urdf", urdf, "--tip-link", "panda_link8", "--start", "default", "panda_joint1=0.2"]
    b = build_plan(parse_args(args))
    names = list(b.model.joint_names)
    expected = [0.2 if j == "panda_joint1" else want[j] for j in names]
    assert b.tour.start.tolist() == expected
    with pytest.raises(ValueError, match="not JOINT=VALUE, nor a named pose of 'panda': its named "
                                         "poses are default"):
        build_plan(parse_args(["--urdf", urdf, "--tip-link", "panda_link8", "--start", "home"]))
    with pytest.raises(ValueError, match=r"it has no named poses \(no group_state in an SRDF beside its URDF\)"):
        build_plan(parse_args(["--urdf", str(example_robot_urdf(UR5)), "--start", "default"]))


@pytest.mark.slow
def test_floor_argument() -> None:
    from rbd_ros.ros.bringup.cli import build_plan, parse_args, parse_floor
    from rbd_ros.ros.bringup.runner import Runner
    from rbd_ros.ros.bringup.tour_report import effective_parameters

    assert parse_floor("auto") == "auto" and parse_floor("none") is None and parse_floor("0.25") == 0.25
    for bad in ("low", "nan", "inf"):
        with pytest.raises(ValueError, match="--floor must be a"):
            parse_floor(bad)
    assert build_plan(parse_args(["--robot", "arm7"])).tour.floor == 0.0  # stands above its base
    assert build_plan(parse_args(["--robot", "arm7", "--floor", "none"])).tour.floor is None
    b = build_plan(parse_args(["--robot", "arm7", "--floor", "0.2"]))
    assert b.tour.floor == 0.2
    assert effective_parameters(Runner(b), 1.0)["bringup"]["floor"] == 0.2
