"""The run's video (rbd_ros/sim/render.py): the reference ghost and tool path are drawn at the
reference, a mobile base is drawn where the recording puts it with its wheels rolling, a URDF
with meshes renders where the first OpenGL backend dies on import, ``python -m
rbd_ros.sim.render DIR`` picks its backend and keeps the caption, a bad DIR is one line, and an
unresolvable ``package://`` mesh is said once.

Oracles: the scene MuJoCo builds for the robot placed at the reference (the ghost must equal
it), the core's forward kinematics (the tool path, the mobile base's pose), the rolling
constraint by hand (wheel angles), and pixel counts of the rendered frames.
"""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest

from rbd_ros.robot import Robot
from rbd_ros.sim import render
from rbd_ros.sim.render import GHOST_RGBA, GHOST_SCALE, FrameRenderer, Recording, coordinates
from rbd_ros.util.resources import bundled_urdf
from ros_helpers import REPO

DYNAMIC = int(mujoco.mjtCatBit.mjCAT_DYNAMIC)


def _geoms(scene, ghost: bool) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(pos, mat, size) of the scene's moving geoms (``ghost``: the ghost's, else the robot's)."""
    out = []
    for k in range(scene.ngeom):
        g = scene.geoms[k]
        is_ghost = g.segid == -1 and np.allclose(g.rgba, GHOST_RGBA)
        if g.category == DYNAMIC and is_ghost == ghost:
            out.append((np.array(g.pos), np.array(g.mat).reshape(9), np.array(g.size)))
    return out


def _same(a, b, scale: float = 1.0) -> bool:
    return (np.allclose(a[0], b[0], atol=1e-9) and np.allclose(a[1], b[1], atol=1e-6)
            and np.allclose(a[2], scale * b[2], atol=1e-6))


def _ghost_matches(model, x: np.ndarray, x_ref: np.ndarray) -> None:
    r = FrameRenderer(model, gl=False)
    r.compose(x_ref)  # the oracle: the robot itself at the reference
    at_ref = _geoms(r.scene, ghost=False)
    r.compose(x)
    at_meas = _geoms(r.scene, ghost=False)
    r.compose(x, x_ref)
    ghost = _geoms(r.scene, ghost=True)
    assert len(ghost) == len(at_ref) > 5
    for g in ghost:  # each ghost geom is a robot geom at the reference, slimmed
        assert any(_same(g, o, GHOST_SCALE) for o in at_ref), g[0]
    moved = sum(not any(np.allclose(g[0], o[0], atol=1e-3) for o in at_meas) for g in ghost)
    assert moved > len(ghost) // 2  # ... and not where the measured robot is


def test_ghost_is_drawn_at_the_reference() -> None:
    model = Robot.from_urdf(str(bundled_urdf("puma560"))).model
    x = np.full(model.dof, 0.2)
    _ghost_matches(model, x, x + np.linspace(0.3, 0.8, model.dof))


def test_render_files_draws_ghost_and_path_at_the_reference(monkeypatch, tmp_path) -> None:
    """``render_files`` end to end without OpenGL: each frame's ghost is the recording's
    reference at that time, and the tool path is the core's FK of the reference."""
    robot = Robot.from_urdf(str(bundled_urdf("puma560")))
    model = robot.model
    t = np.linspace(0.0, 0.3, 31)
    q = 0.5 * np.sin(np.outer(t, np.arange(1, model.dof + 1)))
    q_ref = q + 0.4 * np.cos(np.outer(t, np.ones(model.dof)))
    seen: list[tuple] = []

    class Headless(FrameRenderer):
        def __init__(self, *args, **kw) -> None:
            super().__init__(*args, gl=False, **kw)
            seen.append(("renderer", self))

        def frame(self, t, x, x_ref=None, caption=""):
            self.compose(x, x_ref)
            seen.append((t, x.copy(), None if x_ref is None else x_ref.copy()))
            return np.zeros((render.HEIGHT, render.WIDTH, 3), np.uint8)

    monkeypatch.setattr(render, "FrameRenderer", Headless)
    n = render.render_files(model, Recording(t, q, q_ref), tmp_path)
    renderer = seen[0][1]
    frames = seen[1:]
    assert n == len(frames) == 10
    times = t[0] + np.arange(n) / render.FPS
    for k, (_, _x, x_ref) in enumerate(frames):
        want = np.array([np.interp(times[k], t, q_ref[:, j]) for j in range(model.dof)])
        np.testing.assert_allclose(x_ref, want, atol=1e-12)
    tool = np.array([robot.fk(np.array([np.interp(tk, t, q_ref[:, j]) for j in range(model.dof)]))
                     [:3, 3] for tk in times[::2]])
    np.testing.assert_allclose(renderer.path, tool, atol=1e-9)
    _ghost_matches(model, frames[-1][1], frames[-1][2])


def _mobile_model():
    return Robot.from_urdf(str(bundled_urdf("mobile_arm7")), base_type="diff_drive").model


def test_wheels_roll_by_the_rolling_constraint() -> None:
    """Straight 0.5 m: both wheels turn 0.5 / r; then a turn in place by 1 rad: the left wheel
    back, the right forward by (s/2) / r each (the rolling constraint by hand)."""
    model = _mobile_model()
    r, s = model.wheel_radius, model.wheel_separation
    q = np.zeros((201, 3 + model.dof))
    q[:101, 0] = np.linspace(0.0, 0.5, 101)
    q[100:, 0] = 0.5
    q[100:, 2] = np.linspace(0.0, 1.0, 101)
    x = coordinates(model, q)
    np.testing.assert_allclose(x[100, -2:], [0.5 / r, 0.5 / r], rtol=1e-12)
    np.testing.assert_allclose(x[-1, -2:], [0.5 / r - 0.5 * s / r, 0.5 / r + 0.5 * s / r],
                               rtol=1e-12)
    np.testing.assert_array_equal(x[:, :-2], q)


def test_mobile_base_and_arm_drawn_where_the_recording_puts_them() -> None:
    """The MuJoCo scene of a diff-drive recording row: the tool where the core's FK of the
    same coordinates puts it (B lifted to the wheels' height), the ghost at the reference."""
    robot = Robot(_mobile_model())
    model = robot.model
    q = np.concatenate([[1.2, -0.7, 0.9], np.linspace(-0.5, 0.5, model.dof)])
    r = FrameRenderer(model, gl=False, travel=np.array([[0.0, 0.0], [1.2, -0.7]]))
    lift = float(r.m.body(model.base_link).pos[2])
    x = coordinates(model, q[None, :])[0]
    np.testing.assert_allclose(r.tool_point(x), robot.fk(q)[:3, 3] + [0.0, 0.0, lift], atol=1e-9)
    r.pose(r.d, x)
    np.testing.assert_allclose(r.d.body(model.base_link).xpos, [1.2, -0.7, lift], atol=1e-12)
    x_ref = x.copy()
    x_ref[:3] += [0.3, 0.2, 0.5]
    _ghost_matches(model, x, x_ref)
    assert np.allclose(r.camera.lookat[:2], [0.6, -0.35])  # the middle of the tour


def _run_render(args: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "rbd_ros.sim.render", *args], cwd=REPO,
                          env=full, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_bad_directory_is_one_line(tmp_path) -> None:
    cases = {tmp_path / "nowhere": "is not a directory", tmp_path: "has no recording.npz"}
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "recording.npz").write_text("not a recording")
    model = Robot.from_urdf(str(bundled_urdf("puma560"))).model
    model.to_yaml(str(tmp_path / "garbage" / "model.yaml"))
    cases[tmp_path / "garbage"] = "is not an .npz archive"
    (tmp_path / "short").mkdir()
    model.to_yaml(str(tmp_path / "short" / "model.yaml"))
    Recording(np.arange(3.0), np.zeros((3, 2))).save(tmp_path / "short" / "recording.npz")
    cases[tmp_path / "short"] = "q has 2 columns"
    for directory, words in cases.items():
        out = _run_render([str(directory)])
        assert out.returncode == 2, out.stderr
        assert out.stderr.strip().count("\n") == 0 and words in out.stderr, out.stderr
        assert "Traceback" not in out.stderr


def _needs_gl(result) -> None:
    """A missing backend skips (under CI=true conftest turns it into a failure)."""
    if not result.ok and "no offscreen OpenGL" in result.message:
        pytest.skip(f"offscreen OpenGL (libosmesa6) is not installed here: {result.message}")


def _ur5_recording(directory: Path) -> None:
    from robots_data import UR5, example_robot_urdf

    path = example_robot_urdf(UR5)
    model = Robot.from_urdf(str(path)).model
    directory.mkdir(parents=True, exist_ok=True)
    model.to_yaml(str(directory / "model.yaml"))
    t = np.linspace(0.0, 0.2, 21)
    q = 0.6 * np.sin(np.outer(t, np.ones(model.dof)))
    Recording(t, q, q + 0.3, urdf=str(path)).save(directory / "recording.npz")


@pytest.mark.slow
def test_mesh_urdf_without_a_working_backend_says_no_opengl(tmp_path, monkeypatch) -> None:
    """UR5's STL meshes made the child import MuJoCo before the OpenGL probe: a backend that
    fails on import was 'rendering failed (exit 1)', never falling back."""
    _ur5_recording(tmp_path)
    out = _run_render([str(tmp_path)], {"MUJOCO_GL": "nonexistent-backend"})
    assert out.returncode == 3, out.stderr  # NO_GL_EXIT: the parent tries the next backend
    monkeypatch.setenv("MUJOCO_GL", "nonexistent-backend")
    result = render.render_recording(tmp_path)
    assert not result.ok and "no offscreen OpenGL backend works" in result.message, result.message


def _frames(path) -> list[np.ndarray]:
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    w, h = next(reader)["size"]
    return [np.frombuffer(f, np.uint8).reshape(h, w, 3) for f in reader]


@pytest.mark.slow
def test_render_by_hand_picks_a_backend_and_keeps_the_caption(tmp_path) -> None:
    """UR5 with its meshes: ``render_recording`` with a caption, then ``python -m
    rbd_ros.sim.render DIR`` by hand (no MUJOCO_GL, no --caption) gives the same captioned
    first frame; ``--caption ''`` gives one without the caption's box."""
    _ur5_recording(tmp_path)
    result = render.render_recording(tmp_path, caption="ur5: caption test")
    _needs_gl(result)
    assert result.ok, result.message
    assert Recording.load(tmp_path / "recording.npz").caption == "ur5: caption test"
    first = _frames(tmp_path / "video.mp4")[0]
    out = _run_render([str(tmp_path)])
    assert out.returncode == 0, out.stderr
    again = _frames(tmp_path / "video.mp4")[0]
    corner = (slice(0, 40), slice(0, 200))  # the caption's black box, top left
    assert np.abs(first[corner].astype(int) - again[corner]).mean() < 3
    assert (first[corner].sum(axis=2) < 60).mean() > 0.3  # mostly the black box
    assert _run_render([str(tmp_path), "--caption", ""]).returncode == 0
    bare = _frames(tmp_path / "video.mp4")[0]
    assert (bare[corner].sum(axis=2) < 60).mean() < 0.05


def _orange(img: np.ndarray) -> np.ndarray:
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return (r > 120) & (r - b > 80) & (g > 0.3 * r) & (g < 0.85 * r)


@pytest.mark.ros
@pytest.mark.slow
def test_mobile_run_has_a_video_of_the_base_moving(tmp_path) -> None:
    """A diff-drive recording driving 1.5 m along x: the arm's orange pixels are there in the
    first and last frame and their centre moved across the picture."""
    model = _mobile_model()
    model.to_yaml(str(tmp_path / "model.yaml"))
    t = np.linspace(0.0, 0.5, 51)
    q = np.zeros((t.size, 3 + model.dof))
    q[:, 0] = 3.0 * t
    from rbd_ros.ros.bringup.mobile import video_states

    meas, ref = video_states(q[:, :3], q[:, 3:], q[:, :3] + [0.0, 0.3, 0.0], q[:, 3:])
    np.testing.assert_array_equal(meas, q)
    # as the bringup saves it: its URDF (which branches to the wheels) beside the states
    Recording(t, meas, ref, urdf=str(bundled_urdf("mobile_arm7")),
              base_link="base_link").save(tmp_path / "recording.npz")
    result = render.render_recording(tmp_path, caption="mobile")
    _needs_gl(result)
    assert result.ok, result.message
    frames = _frames(tmp_path / "video.mp4")
    a, b = _orange(frames[0]), _orange(frames[-1])
    assert a.sum() > 200 and b.sum() > 200, (a.sum(), b.sum())
    shift = np.subtract(np.argwhere(b).mean(axis=0), np.argwhere(a).mean(axis=0))
    assert np.hypot(*shift) > 40, shift  # pixels


def test_unresolvable_package_mesh_is_said_once(tmp_path) -> None:
    from rbd_ros.sim.urdf_visuals import urdf_visuals

    inertial = ("<inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' "
                "ixz='0' iyz='0'/></inertial>")
    mesh = "package://no_such_package_k27/meshes/l1.stl"
    urdf = tmp_path / "one.urdf"
    urdf.write_text(
        f"<robot name='one'><link name='base'/><link name='l1'>{inertial}<visual><geometry>"
        f"<mesh filename='{mesh}'/></geometry></visual></link>"
        f"<joint name='j1' type='revolute'><parent link='base'/><child link='l1'/>"
        f"<axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' velocity='1'/></joint>"
        f"</robot>")
    with pytest.warns(UserWarning, match="no_such_package_k27") as record:
        shapes, notes = urdf_visuals(urdf)
    assert shapes == [] and len(record) == 1
    said = [n for n in notes if "no_such_package_k27" in n]
    assert len(said) == 1 and mesh in said[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the second time: no warning (the note stays)
        assert any(mesh in n for n in urdf_visuals(urdf)[1])


@pytest.mark.slow
def test_unusable_urdf_shapes_are_a_warning_not_a_lost_video(tmp_path) -> None:
    """A recording whose URDF cannot be read any more (edited since): capsules, and the
    reason rides on the result's line."""
    model = Robot.from_urdf(str(bundled_urdf("puma560"))).model
    model.to_yaml(str(tmp_path / "model.yaml"))
    broken = tmp_path / "robot.urdf"
    broken.write_text("<robot name='x'><link name='a'>")  # truncated
    t = np.linspace(0.0, 0.1, 11)
    Recording(t, np.zeros((t.size, model.dof)), urdf=str(broken)).save(tmp_path / "recording.npz")
    result = render.render_recording(tmp_path)
    _needs_gl(result)
    assert result.ok, result.message
    assert len(result.warnings) == 1 and "capsules instead" in result.warnings[0]
    assert result.warnings[0] in result.message and "\n" not in result.message
