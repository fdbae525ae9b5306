"""Pictures of a recorded run, rendered offscreen with MuJoCo after the run (ROS-free).

``render_recording(DIR)`` turns ``DIR/recording.npz`` (simulated times ``t``, measured positions
``q``, the reference ``q_ref``, the caption; :class:`Recording`) and ``DIR/model.yaml`` (the
``MdhModel``) into

* ``DIR/video.mp4``: real time at ``FPS`` = 30 frames per second; frame ``k`` shows the state
  at ``t_0 + k / FPS`` (joint positions linearly interpolated between samples), so a run of
  ``T`` simulated seconds gives ``floor(T * FPS) + 1`` frames and ``(floor(T * FPS) + 1) / FPS``
  seconds of H.264 (``imageio-ffmpeg``, which ships its own ffmpeg);
* ``DIR/preview.gif``: every third frame at half size, 10 frames per second.

A frame: the bridge's MuJoCo model (``mujoco_model.build_mujoco_model``: link capsules,
floor, lights; the recording's URDF's own shapes where MuJoCo can load them), the reference
as a translucent blue ghost arm and its tool path as a thin line, the simulated time in the
top-right corner, and a free camera that frames the whole workspace (:func:`camera_pose`,
from ``mujoco_model.workspace``: floor to top, the reach sphere wide).  A mobile
manipulator (``base_type`` planar | diff_drive): ``q`` holds the core's coordinates, the
base's ``x, y, yaw`` first, drawn on ``mobile_model``'s ideal base (its wheels turning as they
roll), the camera framing the whole tour.

OpenGL: MuJoCo picks its backend from ``MUJOCO_GL`` once, when it is imported, so the
frames are drawn in a child process (``python -m rbd_ros.sim.render DIR``) per backend tried:
``MUJOCO_GL`` if set, else ``osmesa`` (Debian: ``libosmesa6``) then ``egl``.  Where none
works, ``render_recording`` returns one line saying what to install and nothing else fails.
By hand: ``python -m rbd_ros.sim.render DIR [--caption TEXT]`` does the same (one child per
backend unless ``MUJOCO_GL`` is set); a missing or unreadable ``DIR`` is one line, exit 2.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import imageio_ffmpeg
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from rbd_ros.model import MOBILE_BASES, MdhModel
from rbd_ros.sim.urdf_visuals import urdf_visuals

if TYPE_CHECKING:  # pragma: no cover
    import mujoco

FPS = 30
WIDTH, HEIGHT = 640, 480
GIF_EVERY, GIF_SCALE = 3, 2  # every third frame, half size: 10 fps
BACKENDS = ("osmesa", "egl")
INSTALL_HINT = "sudo apt-get install libosmesa6"
NO_GL_EXIT = 3  # the child's exit status when its OpenGL backend does not start
GHOST_RGBA = (0.25, 0.55, 1.0, 0.35)
GHOST_SCALE = 0.8  # a slimmer arm: hidden inside the real one where they coincide
GHOST_MIN = 0.01  # rad (or m): closer to the arm than this, no ghost (a mesh cannot be slimmed)
PATH_RGBA = (0.1, 0.35, 0.9, 0.8)


@dataclass
class Recording:
    """A run's states: ``t`` (k,) simulated seconds, ``q`` (k, n) measured positions in the
    core's coordinates (a mobile base's ``x, y, yaw`` first), ``q_ref`` (k, n) the reference
    (or None); ``urdf``, ``base_link``, ``tip_link``: where the model came from ('' if not a
    URDF file), for its own shapes (``urdf_visuals``); ``caption``: the video's title."""

    t: np.ndarray
    q: np.ndarray
    q_ref: np.ndarray | None = None
    urdf: str = ""
    base_link: str = ""
    tip_link: str = ""
    caption: str = ""
    scene: str = ""  # a scene file or bundled name (``rbd_ros.sim.scene``) drawn as the bridge placed it

    def __post_init__(self) -> None:
        self.t = np.asarray(self.t, dtype=float).reshape(-1)
        self.q = np.asarray(self.q, dtype=float)
        if self.q.ndim != 2 or self.q.shape[0] != self.t.size or self.t.size == 0:
            raise ValueError(f"q must be (samples, joints) with one row per time; got q "
                             f"{self.q.shape} for {self.t.size} times")
        if np.any(np.diff(self.t) < 0) or not np.isfinite(self.t).all():
            raise ValueError("recording times must be finite and non-decreasing")
        if self.q_ref is not None:
            self.q_ref = np.asarray(self.q_ref, dtype=float)
            if self.q_ref.shape != self.q.shape:
                raise ValueError(f"q_ref {self.q_ref.shape} must have the shape of q "
                                 f"{self.q.shape}")

    def save(self, path: str | Path) -> None:
        extra: dict[str, Any] = {} if self.q_ref is None else {"q_ref": self.q_ref}
        np.savez_compressed(path, t=self.t, q=self.q, urdf=self.urdf, base_link=self.base_link,
                            tip_link=self.tip_link, caption=self.caption, scene=self.scene, **extra)

    @classmethod
    def load(cls, path: str | Path) -> "Recording":

        if not zipfile.is_zipfile(path):
            raise ValueError(f"{path} is not an .npz archive (Recording.save writes one)")
        with np.load(path) as f:
            missing = [k for k in ("t", "q") if k not in f.files]
            if missing:
                raise ValueError(f"{path} has no {' or '.join(missing)} (not a recording of "
                                 "rbd-ros bringup --record)")
            text = {k: str(f[k]) for k in ("urdf", "base_link", "tip_link", "caption", "scene")
                    if k in f.files}
            return cls(f["t"], f["q"], f["q_ref"] if "q_ref" in f.files else None, **text)

    def shapes(self) -> tuple[list, list[str]]:
        """The URDF's own shapes (``urdf_visuals``) and its notes on what it could not use;
        none without a URDF file."""
        if not (self.urdf and Path(self.urdf).is_file()):
            return [], []
        return urdf_visuals(self.urdf, self.base_link or None, self.tip_link or None)

    def frame_times(self, fps: float = FPS) -> np.ndarray:
        """``t_0 + k / fps`` for ``k = 0 .. floor((t_end - t_0) fps)`` (real time)."""
        n = int(math.floor((self.t[-1] - self.t[0]) * fps + 1e-9)) + 1
        return self.t[0] + np.arange(n) / fps

    def at(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Joint positions (and reference) at ``times``, linear between samples."""
        def interp(x: np.ndarray) -> np.ndarray:
            return np.column_stack([np.interp(times, self.t, x[:, j]) for j in range(x.shape[1])])

        return interp(self.q), None if self.q_ref is None else interp(self.q_ref)


def camera_pose(model: MdhModel, fovy_deg: float = 45.0, aspect: float = WIDTH / HEIGHT,
                travel: np.ndarray | None = None, height: float = 0.0) -> dict[str, object]:
    """``lookat``, ``distance``, ``azimuth``, ``elevation`` (MuJoCo free camera) framing
    the workspace of ``mujoco_model.workspace``: floor to top, the reach sphere wide; a mobile
    base's (``travel``: its (k, 2) world positions, its base point ``height`` above the floor)
    around its whole tour."""
    from rbd_ros.sim.mujoco_model import workspace  # lazy: the MuJoCo model (33 ms of import)

    ws = workspace(model)
    if travel is None:
        # the box from floor to top, reach wide, fills the view: a sphere of radius ``half``
        # about its middle fits the vertical field at ``half / sin(fovy / 2)``
        lookat = ws.centre + (0.5 * (ws.floor + ws.top) - float(ws.up @ ws.centre)) * ws.up
        half = max(0.5 * (ws.top - ws.floor), ws.reach / aspect)
        elevation = -20.0
    else:  # z up, the floor at z = 0: the tour's box, widened by the reach
        lo, hi = np.min(travel, axis=0), np.max(travel, axis=0)
        floor = max(ws.floor, -height)
        lookat = np.array([*(0.5 * (lo + hi)), height + 0.5 * (floor + ws.top)])
        half = max(0.5 * (ws.top - floor), (0.5 * float(np.linalg.norm(hi - lo)) + ws.reach) / aspect)
        elevation = -35.0
    distance = half / math.sin(math.radians(0.5 * fovy_deg))
    return {"lookat": lookat, "distance": distance, "azimuth": 135.0, "elevation": elevation}


CONTACT_VIEW = 0.3  # m, the half height of the view about a contact (the probe, its slide, the wrist)


def contact_camera(scene: Any, fovy_deg: float = 45.0) -> dict[str, object]:
    """``lookat`` and ``distance`` framing the contact of a placed ``scene`` (its first
    object's anchor face: the table top, the wall's front, where ``place_scene`` put the
    slide's middle), ``CONTACT_VIEW`` m each side: the whole workspace made the probe a few
    pixels."""
    o = scene.objects[0]
    lookat = o.pose[:3, :3] @ o.anchor_offset() + o.pose[:3, 3]
    return {"lookat": lookat, "distance": CONTACT_VIEW / math.sin(math.radians(0.5 * fovy_deg)),
            "elevation": -25.0}


def scene_model(model: MdhModel, shapes: tuple = (), scene: Any = None) -> tuple["mujoco.MjModel", np.ndarray]:
    """The MuJoCo model a recording is drawn on (``mujoco_model``'s; a mobile base:
    ``mobile_model``'s ideal base, whose wheels are kinematic hinges) and the ``qpos`` address
    of each of :func:`coordinates`' columns."""

    if model.base_type in MOBILE_BASES:
        from rbd_ros.sim.mobile_model import (  # lazy: the mobile model (76 ms of import)
            PLANAR_JOINTS,
            build_mobile_model,
            wheel_joint_names,
        )

        m, _ = build_mobile_model(model, "ideal")
        names = [*PLANAR_JOINTS, *model.joint_names]
        if model.base_type == "diff_drive":
            names += wheel_joint_names(model)
    else:
        from rbd_ros.sim.mujoco_model import build_mujoco_model  # lazy: the MuJoCo model (44 ms of import)

        m, _ = build_mujoco_model(model, actuators=False, shapes=shapes, scene=scene)
        names = list(model.joint_names)
    return m, np.array([int(m.joint(name).qposadr[0]) for name in names])


def coordinates(model: MdhModel, q: np.ndarray) -> np.ndarray:
    """Rows ``q`` (k, n) in the core's coordinates -> the columns of :func:`scene_model`: a
    diff drive's two wheel angles appended, rolled from the base's path (left, right:
    ``r phi = distance -/+ (s/2) yaw``, 003's rolling constraint as in ``bringup.mobile``)."""
    q = np.asarray(q, dtype=float)
    if model.base_type != "diff_drive":
        return q
    step = np.diff(q[:, :3], axis=0, prepend=q[:1, :3])
    heading = q[:, 2] - 0.5 * step[:, 2]  # the yaw halfway through each step
    forward = np.cumsum(step[:, 0] * np.cos(heading) + step[:, 1] * np.sin(heading))
    turned = q[:, 2] - q[0, 2]
    r, s = float(model.wheel_radius), float(model.wheel_separation)
    return np.column_stack([q, (forward - 0.5 * s * turned) / r, (forward + 0.5 * s * turned) / r])


class FrameRenderer:
    """Offscreen frames of ``model``: ``frame(t, x, x_ref)`` -> (HEIGHT, WIDTH, 3) uint8, with
    ``x`` a row of :func:`coordinates`.  Needs a working ``MUJOCO_GL`` backend (it opens the
    OpenGL context); ``gl=False``: no context, only the scene (``compose``), for tests."""

    def __init__(self, model: MdhModel, width: int = WIDTH, height: int = HEIGHT,
                 path: np.ndarray | None = None, shapes: tuple = (), gl: bool = True,
                 travel: np.ndarray | None = None, scene: Any = None) -> None:
        import mujoco

        self.mujoco = mujoco
        self.m, self.adr = scene_model(model, shapes, scene)
        self.m.vis.global_.offwidth = max(width, self.m.vis.global_.offwidth)
        self.m.vis.global_.offheight = max(height, self.m.vis.global_.offheight)
        # software OpenGL: multisampling and shadows cost 2-6x per frame (llvmpipe: ~0.07 s
        # without, 0.16 s with 1024 px shadows, 0.48 s with both at MuJoCo's defaults)
        self.m.vis.quality.offsamples = 0
        self.d, self.ghost = mujoco.MjData(self.m), mujoco.MjData(self.m)
        self.renderer = renderer = mujoco.Renderer(self.m, height, width) if gl else None
        self.scene = renderer.scene if renderer is not None else mujoco.MjvScene(self.m, maxgeom=10000)
        for flag in (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION):
            self.scene.flags[flag] = False
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        lift = float(self.m.body(model.base_link).pos[2]) if travel is not None else 0.0
        pose = camera_pose(model, float(self.m.vis.global_.fovy), width / height, travel, lift)
        if scene is not None and travel is None:
            pose.update(contact_camera(scene, float(self.m.vis.global_.fovy)))
        for key, value in pose.items():
            setattr(self.camera, key, value)
        self.option, self.perturb = mujoco.MjvOption(), mujoco.MjvPerturb()
        self.path = path  # (k, 3) reference tool points, drawn as a line
        self.size = (width, height)

    def pose(self, data, x: np.ndarray) -> None:
        """``data`` at the row ``x`` of :func:`coordinates` (positions of every body)."""
        data.qpos[self.adr] = x
        self.mujoco.mj_kinematics(self.m, data)

    def tool_point(self, x: np.ndarray) -> np.ndarray:
        """World position of the ``tool`` site at the row ``x`` of :func:`coordinates`."""
        self.pose(self.ghost, x)
        return self.ghost.site("tool").xpos.copy()

    def set_path(self, x_ref: np.ndarray) -> None:
        """The tool's path: its points at the rows ``x_ref`` of :func:`coordinates`."""
        self.path = np.array([self.tool_point(x) for x in x_ref])

    def compose(self, x: np.ndarray, x_ref: np.ndarray | None = None) -> None:
        """``self.scene``: the robot at ``x``, its ghost at ``x_ref``, the tool path."""
        mj, scene = self.mujoco, self.scene
        self.pose(self.d, x)
        mj.mjv_updateScene(self.m, self.d, self.option, self.perturb, self.camera,
                           int(mj.mjtCatBit.mjCAT_ALL), scene)
        if x_ref is not None and np.max(np.abs(np.asarray(x_ref) - x)) >= GHOST_MIN:
            # the ghost: the robot's moving geoms again, at the reference
            self.pose(self.ghost, x_ref)
            first = scene.ngeom
            mj.mjv_addGeoms(self.m, self.ghost, self.option, self.perturb,
                            int(mj.mjtCatBit.mjCAT_DYNAMIC), scene)
            for k in range(first, scene.ngeom):
                scene.geoms[k].rgba[:] = GHOST_RGBA
                scene.geoms[k].size[:] *= GHOST_SCALE
                scene.geoms[k].segid = -1
        if self.path is not None:
            for p0, p1 in zip(self.path, self.path[1:]):
                if scene.ngeom >= scene.maxgeom:
                    break
                g = scene.geoms[scene.ngeom]
                mj.mjv_initGeom(g, mj.mjtGeom.mjGEOM_LINE, np.zeros(3), np.zeros(3), np.zeros(9),
                                np.array(PATH_RGBA, dtype=np.float32))
                mj.mjv_connector(g, mj.mjtGeom.mjGEOM_LINE, 2.0, p0, p1)
                scene.ngeom += 1

    def frame(self, t: float, x: np.ndarray, x_ref: np.ndarray | None = None,
              caption: str = "") -> np.ndarray:
        self.compose(x, x_ref)
        image = cast(Any, self.renderer).render()  # frames are drawn with gl (gl=False: compose only)
        return stamp(image, f"t = {t:6.2f} s", caption)

    def close(self) -> None:
        if self.renderer is not None:
            self.renderer.close()


def stamp(image: np.ndarray, corner: str, caption: str = "") -> np.ndarray:
    """``corner`` written top-right and ``caption`` top-left on a copy of ``image`` (the
    bottom stays free for a video player's controls)."""

    pil = Image.fromarray(image)
    draw = ImageDraw.Draw(pil)
    size = max(12, image.shape[0] // 26)
    font = ImageFont.load_default(size=size)
    right = image.shape[1] - 10 - draw.textlength(corner, font=font)
    for text, xy in ((corner, (right, 8)), (caption, (10, 8))):
        if text:
            box = draw.textbbox(xy, text, font=font)
            draw.rectangle((box[0] - 5, box[1] - 4, box[2] + 5, box[3] + 4), fill=(0, 0, 0))
            draw.text(xy, text, font=font, fill=(255, 255, 255))
    return np.asarray(pil)


def render_files(model: MdhModel, rec: Recording, directory: str | Path, fps: float = FPS,
                 caption: str = "", width: int = WIDTH, height: int = HEIGHT,
                 shapes: tuple = ()) -> int:
    """Write ``video.mp4`` and ``preview.gif`` of ``rec`` into ``directory`` (this process's
    OpenGL backend); returns the number of video frames."""


    directory = Path(directory)
    times = rec.frame_times(fps)
    q, q_ref = rec.at(times)
    travel = None
    if model.base_type in MOBILE_BASES:
        travel = np.vstack([q[:, :2]] + ([] if q_ref is None else [q_ref[:, :2]]))
    q = coordinates(model, q)
    q_ref = None if q_ref is None else coordinates(model, q_ref)
    scene, model = placed_scene(model, rec.scene, rec.urdf)
    renderer = FrameRenderer(model, width, height, shapes=shapes, travel=travel, scene=scene)
    try:
        if q_ref is not None:
            renderer.set_path(q_ref[::2])
        video = imageio_ffmpeg.write_frames(str(directory / "video.mp4"), (width, height),
                                            fps=fps, codec="libx264", pix_fmt_out="yuv420p",
                                            quality=6, macro_block_size=16,
                                            ffmpeg_log_level="error")
        video.send(None)
        gif: list = []
        for k, t in enumerate(times):
            image = renderer.frame(float(t - times[0]), q[k], None if q_ref is None else q_ref[k],
                                   caption)
            video.send(np.ascontiguousarray(image))
            if k % GIF_EVERY == 0:
                gif.append(Image.fromarray(image).reduce(GIF_SCALE)
                           .quantize(64, method=Image.Quantize.FASTOCTREE))  # keeps the orange
        video.close()
        gif[0].save(directory / "preview.gif", save_all=True, append_images=gif[1:],
                    duration=int(round(1000 * GIF_EVERY / fps)), loop=0, optimize=True)
    finally:
        renderer.close()
    return len(times)


def placed_scene(model: MdhModel, scene: str, urdf: str = "") -> tuple[Any, MdhModel]:
    """A recording's scene placed as the bridge placed it (``simulator.scene_of``, the probe
    as long as the ``urdf``'s collision shapes made it) and the model with the probe as its
    tool (drawn touching the scene), or ``(None, model)``."""
    if not scene:
        return None, model
    from rbd_ros.sim.simulator import BridgeConfig, collision_shapes, scene_of  # lazy: the simulator (0.1 s of import)

    collision = collision_shapes(model, urdf, lambda level, message: None)
    placed, _, probe = scene_of(model, BridgeConfig(scene=scene), None, collision)
    return placed, probe


@dataclass
class RenderResult:
    ok: bool
    message: str  # one line
    backend: str = ""
    warnings: tuple[str, ...] = ()  # what the video could not show (also in ``message``)


WARNING = "warning: "  # the child's stderr lines the parent passes on


def render_recording(directory: str | Path, caption: str | None = None, timeout: float = 900.0
                     ) -> RenderResult:
    """Render ``directory``'s recording (module docstring) in a child process per OpenGL
    backend until one works; never raises for a missing backend.  ``caption``: the video's
    title, kept in the recording (so a later ``python -m rbd_ros.sim.render DIR`` keeps it);
    None: the recording's."""
    directory = Path(directory)
    problem = check_directory(directory)
    if problem:
        return RenderResult(False, f"no video: {problem}")
    if caption is not None:
        rec = Recording.load(directory / "recording.npz")
        if rec.caption != caption:
            rec.caption = caption
            rec.save(directory / "recording.npz")
    env_gl = os.environ.get("MUJOCO_GL", "").strip()
    tried: list[str] = []
    for backend in ([env_gl] if env_gl else list(BACKENDS)):
        env = dict(os.environ, MUJOCO_GL=backend)
        if backend in ("osmesa", "egl"):
            env["PYOPENGL_PLATFORM"] = backend
        cmd = [sys.executable, "-m", "rbd_ros.sim.render", str(directory)]
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return RenderResult(False, f"no video: rendering took longer than {timeout:.0f} s")
        errors = done.stderr.strip().splitlines()
        notes = tuple(line[len(WARNING):] for line in errors if line.startswith(WARNING))
        last = ([line for line in errors if not line.startswith(WARNING)] or [""])[-1][:160]
        if done.returncode == 0:
            message = done.stdout.strip().splitlines()[-1]
            if notes:
                message += f" (warning: {'; '.join(notes)})"
            return RenderResult(True, message, backend, notes)
        if done.returncode != NO_GL_EXIT:
            return RenderResult(False, f"no video: rendering failed (MUJOCO_GL={backend}, exit "
                                       f"{done.returncode}): {last}", backend, notes)
        tried.append(f"{backend}: {last}")
    hint = (f"unset MUJOCO_GL (or set it to osmesa) after `{INSTALL_HINT}`"
            if env_gl and env_gl not in BACKENDS else f"install one with `{INSTALL_HINT}`")
    return RenderResult(False, f"no video: no offscreen OpenGL backend works ({'; '.join(tried)});"
                               f" {hint}, or pass --no-video")


def check_directory(directory: Path) -> str:
    """What ``directory`` lacks for a video ('' if nothing): one line."""
    if not directory.is_dir():
        return f"{directory} is not a directory (give the DIR of `rbd-ros bringup --record DIR`)"
    missing = [n for n in ("recording.npz", "model.yaml") if not (directory / n).is_file()]
    if missing:
        return (f"{directory} has no {' and no '.join(missing)} (written by `rbd-ros bringup "
                f"--record DIR` unless --no-video)")
    return ""


def _load(directory: Path) -> tuple[MdhModel, Recording]:
    """The model and the recording of ``directory``; ``ValueError`` (one line) if unreadable."""
    problem = check_directory(directory)
    if problem:
        raise ValueError(problem)
    try:
        model = MdhModel.from_yaml(str(directory / "model.yaml"))
    except Exception as exc:  # YAML or model errors, said in one line
        raise ValueError(f"{directory}/model.yaml: {_first_line(exc)}") from exc
    try:
        rec = Recording.load(directory / "recording.npz")
    except Exception as exc:  # not a zip, missing arrays, bad shapes
        raise ValueError(f"{directory}/recording.npz: {_first_line(exc)}") from exc
    if model.base_type == "floating":
        raise ValueError(f"{directory}: the video draws fixed and mobile (planar, diff_drive) "
                         "bases, not a floating one")
    width = model.dof + (3 if model.base_type != "fixed" else 0)
    if rec.q.shape[1] != width:
        raise ValueError(f"{directory}/recording.npz: q has {rec.q.shape[1]} columns, the "
                         f"{model.base_type}-base model '{model.name}' has {width} coordinates")
    return model, rec


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def main(argv: list[str] | None = None) -> int:
    """``python -m rbd_ros.sim.render DIR [--caption TEXT]``: DIR/recording.npz and
    DIR/model.yaml -> DIR/video.mp4, DIR/preview.gif.  Without ``MUJOCO_GL``, one child per
    backend (:func:`render_recording`); with it, drawn here.  Exit 0 rendered, 1 not
    rendered (one line why), 2 a missing or unreadable DIR (one line), 3 no OpenGL here."""

    p = argparse.ArgumentParser(prog="python -m rbd_ros.sim.render")
    p.add_argument("directory")
    p.add_argument("--caption", default=None, help="the video's title (default: the recording's)")
    args = p.parse_args(argv)
    directory = Path(args.directory)
    try:
        model, rec = _load(directory)
    except ValueError as exc:
        print(f"no video: {exc}", file=sys.stderr, flush=True)
        return 2
    if not os.environ.get("MUJOCO_GL", "").strip():  # by hand: pick a backend as bringup does
        result = render_recording(directory, args.caption)
        print(result.message, file=sys.stdout if result.ok else sys.stderr, flush=True)
        return 0 if result.ok else 1
    caption = rec.caption if args.caption is None else args.caption
    try:  # the OpenGL context starts (MuJoCo imported here, after MUJOCO_GL), or we say why not
        FrameRenderer(model, 16, 16).close()
    except Exception as exc:  # noqa: BLE001 - ImportError, RuntimeError, mujoco.FatalError ...
        print(_first_line(exc), file=sys.stderr, flush=True)
        return NO_GL_EXIT
    shapes: list = []
    notes: list[str] = []
    if model.base_type == "fixed":  # a mobile base is drawn on mobile_model's own looks
        try:
            shapes, notes = rec.shapes()
        except Exception as exc:  # noqa: BLE001 - the URDF's shapes are a nicety: capsules then
            notes = [f"the URDF's own shapes not used ({_first_line(exc)}); capsules instead"]
    for note in notes:
        print(f"{WARNING}{note}", file=sys.stderr, flush=True)
    n = render_files(model, rec, directory, caption=caption, shapes=tuple(shapes))
    print(f"rendered {directory}/video.mp4 ({n} frames, {n / FPS:.2f} s at {FPS} fps) and "
          f"{directory}/preview.gif", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
