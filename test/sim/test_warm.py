"""``rbd-ros warm`` (``rbd_ros.sim.warm``): every step once across the processes sharing a run's
folder, a failing step said and skipped (warming is best effort), ``--demo`` only the demo's
steps (issue 39), and the dynamics server's warm-up list (``server_kernels``) calling the
services' kernels.  Steps are stand-ins here: nothing is compiled."""
from __future__ import annotations

import numpy as np
import pytest

from rbd_ros.sim import warm


@pytest.fixture
def fake_steps(monkeypatch):
    ran: list[str] = []

    def step(name: str, fail: bool = False):
        def call() -> None:
            ran.append(name)
            if fail:
                raise RuntimeError("no compiler")
        return name, call

    monkeypatch.setattr(warm, "tasks", lambda: [step("a"), step("b", fail=True), step("c")])
    monkeypatch.setattr(warm, "demo_tasks", lambda: [step("demo")])
    return ran


def test_a_failing_step_is_said_and_skipped(fake_steps) -> None:
    said: list[str] = []
    assert warm.warm(said.append) == 1
    assert fake_steps == ["a", "b", "c"]
    assert any("b: skipped (RuntimeError: no compiler)" in line for line in said)
    assert "1 step(s) skipped" in said[-1]


def test_parts_sharing_a_folder_take_each_step_once(fake_steps, tmp_path) -> None:
    for part in range(2):  # the second finds every step claimed by the first
        warm.warm(lambda line: None, part, 2, str(tmp_path))
    assert fake_steps == ["a", "b", "c"]


def test_demo_runs_only_the_demo_steps(fake_steps) -> None:
    assert warm.warm(lambda line: None, demo=True) == 0
    assert fake_steps == ["demo"]


def test_the_demo_list_names_each_node_of_the_demo() -> None:
    names = " | ".join(name for name, _ in warm.demo_tasks())
    for what in ("bridge and controller, computed_torque", "dynamics server's IK", "dynamics server's dynamics",
                 "bringup's tour", "state publisher"):
        assert what in names, names


class _Recorder:
    """A fixed-base robot's surface that records which methods were called."""

    def __init__(self) -> None:
        self.called: list[str] = []
        self.nq = self.nv = self.dof = 3
        self.model = type("M", (), {"lower": -np.ones(3), "upper": np.ones(3)})()

    def __getattr__(self, name: str):
        def call(*args, **kwargs):
            self.called.append(name)
            return np.eye(4) if name == "fk" else np.zeros(3)
        return call


@pytest.mark.parametrize(("moving", "parts", "expected"), [
    (False, ("dynamics", "ik"), ["inverse_dynamics", "mass_matrix", "linearize", "linearize", "gravity", "jacobian",
                                 "link_poses", "static_torques", "fk", "ik", "ik", "simulate"]),
    (False, ("ik",), ["fk", "ik", "ik", "simulate"]),
    (True, ("dynamics", "ik"), ["inverse_dynamics", "mass_matrix", "linearize", "linearize"])])
def test_server_kernels_calls_the_services_kernels(moving, parts, expected) -> None:
    robot = _Recorder()
    warm.server_kernels(robot, moving, parts)
    assert [c for c in robot.called if c != "neutral"] == expected


@pytest.mark.slow
def test_the_robot_api_steps_run_on_every_base() -> None:
    """The real ``Robot API`` steps (fixed, floating, diff-drive and planar bases) call only
    what each base accepts: a call a base refuses (a batch its ``fk`` does not take) would skip
    the rest of that base's step in ``rbd-ros warm``, its kernels then compiled by the first
    node that needs them.  Run here on the suite's warm cache (loads, no compiles)."""
    steps = [(name, call) for name, call in warm.tasks() if name.startswith("Robot API")]
    assert len(steps) == 4, [name for name, _ in steps]
    for _name, call in steps:
        call()  # raises what ``warm`` would have said and skipped
