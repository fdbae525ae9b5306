"""Pictures of a run: the model's looks leave the dynamics alone, offscreen frames of a bundled
robot show it moving, the video has real-time frame count and duration, the page shows the
table and the plot in headless Chromium, and a machine without OpenGL still completes a run."""
from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest

from rbd_ros.robot import Robot
from rbd_ros.sim.examples import seven_dof
from rbd_ros.sim.mujoco_model import build_mujoco_model
from rbd_ros.sim.render import FPS, GIF_EVERY, HEIGHT, WIDTH, Recording, render_recording
from rbd_ros.util.resources import bundled_urdf
from ros_helpers import REPO

DURATION = 0.6  # s of the synthetic recording: floor(0.6 * 30) + 1 = 19 frames


def test_looks_leave_the_dynamics_alone() -> None:
    model = seven_dof(coulomb=[0.0] * 7)
    plain, _ = build_mujoco_model(model, visuals=False)
    looks, _ = build_mujoco_model(model)
    assert plain.ngeom == 0 and looks.ngeom > 2 * model.dof  # capsules, housings, floor ...
    assert not looks.geom_contype.any() and not looks.geom_conaffinity.any()
    for field in ("body_mass", "body_inertia", "body_ipos", "body_iquat", "dof_armature"):
        np.testing.assert_array_equal(getattr(looks, field), getattr(plain, field), err_msg=field)
    traj = []
    for m in (plain, looks):  # the same torques give bit-identical motion
        d = mujoco.MjData(m)
        d.ctrl[:] = np.linspace(-3.0, 3.0, model.dof)
        for _ in range(300):
            mujoco.mj_step(m, d)
        traj.append(d.qpos.copy())
    np.testing.assert_array_equal(traj[0], traj[1])


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A puma560 recording swinging every joint by 0.8 rad, rendered by ``render_recording``
    (a child process per OpenGL backend)."""
    out = tmp_path_factory.mktemp("render")
    model = Robot.from_urdf(str(bundled_urdf("puma560"))).model
    model.to_yaml(str(out / "model.yaml"))
    t = np.linspace(0.0, DURATION, 601)
    swing = 0.8 * np.sin(0.5 * np.pi * t / DURATION)[:, None] * np.ones(model.dof)
    Recording(t, swing, swing + 0.3).save(out / "recording.npz")  # the ghost 0.3 rad ahead
    return out, render_recording(out, caption="puma560: test")


def _missing(what: str) -> None:
    """Skip for a missing system package, except in CI, which installs it (.ci/run)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing in CI (.ci/run installs it)")
    pytest.skip(f"{what} is not installed here (CI installs it in .ci/run)")


def _needs_gl(result) -> None:
    if not result.ok and "no offscreen OpenGL" in result.message:
        _missing(f"offscreen OpenGL (libosmesa6): {result.message}")


def _frames(path) -> list[np.ndarray]:
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    w, h = meta["size"]
    return [np.frombuffer(f, np.uint8).reshape(h, w, 3) for f in reader]


def _orange(img: np.ndarray) -> np.ndarray:
    """Pixels of the link colour (mujoco_model.ArmLooks.LINK, lit): red high, blue low."""
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return (r > 120) & (r - b > 80) & (g > 0.3 * r) & (g < 0.85 * r)


@pytest.mark.slow
def test_frames_show_the_robot_moving(rendered) -> None:
    out, result = rendered
    _needs_gl(result)
    assert result.ok, result.message
    frames = _frames(out / "video.mp4")
    first, last = frames[0], frames[-1]
    assert first.shape == (HEIGHT, WIDTH, 3)
    assert first.std() > 20  # not a blank (or black) image
    arm0, arm1 = _orange(first), _orange(last)
    assert arm0.sum() > 500 and arm1.sum() > 500, (arm0.sum(), arm1.sum())  # the arm is there
    assert (arm0 ^ arm1).sum() > 500  # ... and it moved
    assert np.abs(first.astype(int) - last.astype(int)).sum(axis=2).astype(bool).sum() > 2000
    blue = (first[..., 2].astype(int) - first[..., 0] > 60) & (first[..., 2] > 150)
    sky = np.zeros_like(blue)
    sky[: HEIGHT // 3] = True  # the sky gradient is bluish too: count below it
    assert (blue & ~sky).sum() > 200  # the translucent reference ghost


def test_video_is_real_time_at_30_fps(rendered) -> None:
    import imageio_ffmpeg
    from PIL import Image

    out, result = rendered
    _needs_gl(result)
    n = math.floor(DURATION * FPS) + 1
    frames, seconds = imageio_ffmpeg.count_frames_and_secs(str(out / "video.mp4"))
    assert frames == n
    assert seconds == pytest.approx(n / FPS, abs=0.02)
    assert len(_frames(out / "video.mp4")) == n
    gif = Image.open(out / "preview.gif")
    assert gif.n_frames == math.ceil(n / GIF_EVERY) and gif.size == (WIDTH // 2, HEIGHT // 2)


@pytest.mark.ros
@pytest.mark.slow
def test_page_shows_table_plot_and_video_in_chromium(rendered, tmp_path) -> None:
    from PIL import Image

    from rbd_ros.ros.bringup.page import write_page
    from rbd_ros.ros.bringup.report import make_report, plot

    chromium = shutil.which("chromium")
    if chromium is None:
        _missing("Debian's chromium (headless, for the page screenshot)")
    out, _ = rendered
    names = [f"joint{k}" for k in range(1, 7)]
    t = np.linspace(0.0, 1.0, 101)
    ref = np.sin(np.outer(t, np.arange(1, 7)))
    meas = ref + 1e-3 * np.cos(np.outer(t, np.arange(1, 7)))
    plot(out / "plot.png", names, t, ref, meas, 10 * ref, title="test plot")
    report = make_report(names, ref, meas, 10 * ref, t, 1.0, 0)
    page = write_page(out, report, {"bringup": {"robot": "puma560", "duration": 1.0}},
                      title="page test")
    html = page.read_text()
    assert "data:image/png;base64," in html and "<table id='report'>" in html
    assert ("data:video/mp4;base64," in html) == (out / "video.mp4").is_file()
    shot = tmp_path / "page.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--force-device-scale-factor=1", "--window-size=1000,2000",
                    f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    screen = np.asarray(Image.open(shot).convert("RGB"))
    picture = np.asarray(Image.open(out / "plot.png").convert("RGB"))
    # the plot, pixel for pixel: find its most colourful rows in the screenshot
    rows = np.argsort((np.abs(np.diff(picture.astype(int), axis=1)).sum(axis=(1, 2))))[-5:]
    found = []
    for r in rows:
        needle = picture[r].tobytes()
        hits = [(y, screen[y].tobytes().find(needle)) for y in range(screen.shape[0])]
        hits = [(y, x // 3) for y, x in hits if x >= 0 and x % 3 == 0]
        assert hits, f"plot row {r} is not in the screenshot"
        found.append(hits[0][0] - r)
    assert len(set(found)) == 1, found  # one plot, all rows at the same offset
    plot_top = found[0]
    # the table: its header cells' background colour (page.STYLE th), above the plot
    header = np.all(screen == (0xDD, 0xE6, 0xF0), axis=2)
    ys = np.nonzero(header)[0]
    assert header.sum() > 2000 and ys.max() < plot_top, (header.sum(), plot_top)
    # text in the table rows (dark pixels right under the header)
    band = screen[ys.max():ys.max() + 150]
    assert (band.sum(axis=2) < 200).sum() > 300


@pytest.mark.ros
@pytest.mark.slow
def test_no_gl_backend_one_line_and_a_complete_run(tmp_path) -> None:
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["MUJOCO_GL"] = "glfw"  # MuJoCo's on-screen backend: no display, so nothing renders
    proc = subprocess.run(
        [sys.executable, "-m", "rbd_ros.cli", "bringup", "--no-services", "--robot", "planar2", "--controller",
         "computed_torque", "--mode", "lockstep", "--duration", "0.5", "--segment-time", "0.5",
         "--quiet", "--record", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = proc.stdout + proc.stderr
    lines = [line for line in text.splitlines() if "no video" in line]
    assert len(lines) == 1, text[-3000:]
    assert "libosmesa6" in lines[0] and "MUJOCO_GL" in lines[0]
    for name in ("report.json", "plot.png", "index.html"):
        assert (out / name).is_file(), name
    assert not (out / "video.mp4").exists()
    assert "no video" in (out / "index.html").read_text()


def test_view_without_a_display_says_so_in_one_line() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([sys.executable, "-m", "rbd_ros.cli", "view"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "no display" in proc.stderr



def _stl_vertices(path) -> np.ndarray:
    """The vertices of a binary STL file (80-byte header, count, 50 bytes per triangle)."""
    data = path.read_bytes()
    n = int(np.frombuffer(data[80:84], np.uint32)[0])
    tri = np.frombuffer(data[84:84 + 50 * n], dtype=np.dtype([("normal", "<f4", 3),
                                                               ("v", "<f4", (3, 3)),
                                                               ("attr", "<u2")]))
    return tri["v"].reshape(-1, 3).astype(float)


def test_urdf_meshes_sit_where_pinocchio_puts_them() -> None:
    """UR5 (example-robot-data): COLLADA visuals MuJoCo cannot read, so its STL collision
    meshes; every mesh's world bounding box equals Pinocchio's placement of the same file."""
    import pinocchio as pin

    from rbd_ros.sim.urdf_visuals import urdf_visuals
    from robots_data import UR5, example_robot_urdf

    path = example_robot_urdf(UR5)
    shapes, notes = urdf_visuals(path)
    meshes = [s for s in shapes if s.kind == "mesh"]
    assert notes == [] and all(s.file.endswith(".stl") for s in meshes)
    assert len(meshes) == 7 and shapes[-1].body == -1  # one per moving link, the base (world)
    model = Robot.from_urdf(str(path)).model
    m, _ = build_mujoco_model(model, shapes=shapes)
    assert m.nmesh == 7
    pm, pc, _ = pin.buildModelsFromUrdf(str(path), [str(path.parents[4])])
    pd, gd = pm.createData(), pin.GeometryData(pc)
    q = np.random.default_rng(3).uniform(-2.0, 2.0, model.dof)
    pin.updateGeometryPlacements(pm, pd, pc, gd, q)  # UR5: the same joint order and values
    base = pd.oMf[pm.getFrameId(model.base_link)]
    d = mujoco.MjData(m)
    d.qpos[:] = q
    mujoco.mj_kinematics(m, d)
    by_file = {Path(g.meshPath).stem: k for k, g in enumerate(pc.geometryObjects)
               if g.meshPath.endswith(".stl")}
    checked = 0
    for g in range(m.ngeom):
        if m.geom_type[g] != mujoco.mjtGeom.mjGEOM_MESH:
            continue
        mesh = m.geom_dataid[g]
        stem = m.mesh(mesh).name.rsplit("_", 1)[0]
        k = by_file[stem]
        start, count = m.mesh_vertadr[mesh], m.mesh_vertnum[mesh]
        ours = m.mesh_vert[start:start + count] @ d.geom_xmat[g].reshape(3, 3).T + d.geom_xpos[g]
        M = (base.inverse() * gd.oMg[k]).homogeneous
        geometry = pc.geometryObjects[k]
        local = _stl_vertices(Path(geometry.meshPath)) * geometry.meshScale
        theirs = local @ M[:3, :3].T + M[:3, 3]
        np.testing.assert_allclose(ours.min(axis=0), theirs.min(axis=0), atol=1e-5, err_msg=stem)
        np.testing.assert_allclose(ours.max(axis=0), theirs.max(axis=0), atol=1e-5, err_msg=stem)
        checked += 1
    assert checked == 7


def test_urdf_shapes_fall_back_to_capsules_where_mujoco_cannot_load_them(tmp_path) -> None:
    """A COLLADA-only link keeps its capsules (one note); a box is placed on its body."""
    from rbd_ros.sim.urdf_visuals import urdf_visuals

    inertial = ("<inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' "
                "ixz='0' iyz='0'/></inertial>")
    limit = "<limit lower='-1' upper='1' effort='1' velocity='1'/>"
    urdf = tmp_path / "two.urdf"
    urdf.write_text(
        f"<robot name='two'><link name='base'/>"
        f"<link name='l1'>{inertial}<visual><geometry><mesh filename='meshes/l1.dae'/>"
        f"</geometry></visual></link>"
        f"<link name='l2'>{inertial}<visual><origin xyz='0.2 0 0'/><geometry>"
        f"<box size='0.4 0.1 0.1'/></geometry></visual></link>"
        f"<joint name='j1' type='revolute'><parent link='base'/><child link='l1'/>"
        f"<axis xyz='0 0 1'/>{limit}</joint>"
        f"<joint name='j2' type='revolute'><parent link='l1'/><child link='l2'/>"
        f"<origin xyz='0.5 0 0'/><axis xyz='0 0 1'/>{limit}</joint></robot>")
    shapes, notes = urdf_visuals(urdf)
    assert len(notes) == 1 and "'l1'" in notes[0]
    assert [(s.body, s.kind) for s in shapes] == [(1, "box")]
    np.testing.assert_allclose(shapes[0].size, [0.2, 0.05, 0.05])
    model = Robot.from_urdf(str(urdf)).model
    m, _ = build_mujoco_model(model, shapes=shapes)
    d = mujoco.MjData(m)
    d.qpos[:] = [0.5, -0.3]
    mujoco.mj_kinematics(m, d)
    box = next(g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX)
    # the box centre: 0.5 m along link 1 at 0.5 rad, then 0.2 m along link 2 at 0.2 rad
    expected = [0.5 * np.cos(0.5) + 0.2 * np.cos(0.2), 0.5 * np.sin(0.5) + 0.2 * np.sin(0.2)]
    np.testing.assert_allclose(d.geom_xpos[box][:2], expected, atol=1e-12)
    assert m.body_geomnum[m.body(model.link_names[0]).id] >= 2  # l1: housing + capsule(s)
