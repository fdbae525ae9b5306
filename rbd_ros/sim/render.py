"""Pictures of a recorded run, rendered offscreen with MuJoCo after the run (ROS-free).

``render_recording(DIR)`` turns ``DIR/recording.npz`` (simulated times ``t``, measured joint
positions ``q``, the reference ``q_ref``; :class:`Recording`) and ``DIR/model.yaml`` (the
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
from ``mujoco_model.workspace``: floor to top, the reach sphere wide).

OpenGL: MuJoCo picks its backend from ``MUJOCO_GL`` once, when it is imported, so the
frames are drawn in a child process (``python -m rbd_ros.sim.render DIR``) per backend tried:
``MUJOCO_GL`` if set, else ``osmesa`` (Debian: ``libosmesa6``) then ``egl``.  Where none
works, ``render_recording`` returns one line saying what to install and nothing else fails.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rbd_ros.model import MdhModel

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
    """A run's states: ``t`` (k,) simulated seconds, ``q`` (k, n) measured joint positions,
    ``q_ref`` (k, n) the reference (or None); ``urdf``, ``base_link``, ``tip_link``: where
    the model came from ('' if not a URDF file), for its own shapes (``urdf_visuals``)."""

    t: np.ndarray
    q: np.ndarray
    q_ref: np.ndarray | None = None
    urdf: str = ""
    base_link: str = ""
    tip_link: str = ""

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
        extra = {} if self.q_ref is None else {"q_ref": self.q_ref}
        np.savez_compressed(path, t=self.t, q=self.q, urdf=self.urdf, base_link=self.base_link,
                            tip_link=self.tip_link, **extra)

    @classmethod
    def load(cls, path: str | Path) -> "Recording":
        with np.load(path) as f:
            text = {k: str(f[k]) for k in ("urdf", "base_link", "tip_link") if k in f.files}
            return cls(f["t"], f["q"], f["q_ref"] if "q_ref" in f.files else None, **text)

    def shapes(self) -> list:
        """The URDF's own shapes (``urdf_visuals``), or none without a URDF file."""
        if not (self.urdf and Path(self.urdf).is_file()):
            return []
        from rbd_ros.sim.urdf_visuals import urdf_visuals

        return urdf_visuals(self.urdf, self.base_link or None, self.tip_link or None)[0]

    def frame_times(self, fps: float = FPS) -> np.ndarray:
        """``t_0 + k / fps`` for ``k = 0 .. floor((t_end - t_0) fps)`` (real time)."""
        n = int(math.floor((self.t[-1] - self.t[0]) * fps + 1e-9)) + 1
        return self.t[0] + np.arange(n) / fps

    def at(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Joint positions (and reference) at ``times``, linear between samples."""
        def interp(x: np.ndarray) -> np.ndarray:
            return np.column_stack([np.interp(times, self.t, x[:, j]) for j in range(x.shape[1])])

        return interp(self.q), None if self.q_ref is None else interp(self.q_ref)


def camera_pose(model: MdhModel, fovy_deg: float = 45.0, aspect: float = WIDTH / HEIGHT
                ) -> dict[str, object]:
    """``lookat``, ``distance``, ``azimuth``, ``elevation`` (MuJoCo free camera) framing
    the workspace of ``mujoco_model.workspace``: floor to top, the reach sphere wide."""
    from rbd_ros.sim.mujoco_model import workspace

    ws = workspace(model)
    # the box from floor to top, reach wide, fills the view: a sphere of radius ``half``
    # about its middle fits the vertical field at ``half / sin(fovy / 2)``
    lookat = ws.centre + (0.5 * (ws.floor + ws.top) - float(ws.up @ ws.centre)) * ws.up
    half = max(0.5 * (ws.top - ws.floor), ws.reach / aspect)
    distance = half / math.sin(math.radians(0.5 * fovy_deg))
    return {"lookat": lookat, "distance": distance, "azimuth": 135.0, "elevation": -20.0}


class FrameRenderer:
    """Offscreen frames of ``model``: ``frame(t, q, q_ref)`` -> (HEIGHT, WIDTH, 3) uint8.
    Needs a working ``MUJOCO_GL`` backend (it opens the OpenGL context)."""

    def __init__(self, model: MdhModel, width: int = WIDTH, height: int = HEIGHT,
                 path: np.ndarray | None = None, shapes: tuple = ()) -> None:
        import mujoco

        from rbd_ros.sim.mujoco_model import build_mujoco_model

        self.mujoco = mujoco
        self.m, _ = build_mujoco_model(model, actuators=False, shapes=shapes)
        self.m.vis.global_.offwidth = max(width, self.m.vis.global_.offwidth)
        self.m.vis.global_.offheight = max(height, self.m.vis.global_.offheight)
        # software OpenGL: multisampling and shadows cost 2-6x per frame (llvmpipe: ~0.07 s
        # without, 0.16 s with 1024 px shadows, 0.48 s with both at MuJoCo's defaults)
        self.m.vis.quality.offsamples = 0
        self.d, self.ghost = mujoco.MjData(self.m), mujoco.MjData(self.m)
        self.renderer = mujoco.Renderer(self.m, height, width)
        for flag in (mujoco.mjtRndFlag.mjRND_SHADOW, mujoco.mjtRndFlag.mjRND_REFLECTION):
            self.renderer.scene.flags[flag] = False
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FREE
        for key, value in camera_pose(model, float(self.m.vis.global_.fovy),
                                      width / height).items():
            setattr(self.camera, key, value)
        self.option, self.perturb = mujoco.MjvOption(), mujoco.MjvPerturb()
        self.path = path  # (k, 3) reference tool points, drawn as a line
        self.size = (width, height)

    def tool_point(self, q: np.ndarray) -> np.ndarray:
        """World position of the ``tool`` site at joint positions ``q``."""
        self.ghost.qpos[:] = q
        self.mujoco.mj_kinematics(self.m, self.ghost)
        return self.ghost.site("tool").xpos.copy()

    def frame(self, t: float, q: np.ndarray, q_ref: np.ndarray | None = None,
              caption: str = "") -> np.ndarray:
        mj = self.mujoco
        self.d.qpos[:] = q
        mj.mj_kinematics(self.m, self.d)
        self.renderer.update_scene(self.d, camera=self.camera)
        scene = self.renderer.scene
        if q_ref is not None and np.max(np.abs(np.asarray(q_ref) - q)) >= GHOST_MIN:
            # the ghost: the arm's moving geoms again, at the reference
            self.ghost.qpos[:] = q_ref
            mj.mj_kinematics(self.m, self.ghost)
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
        image = self.renderer.render()
        return stamp(image, f"t = {t:6.2f} s", caption)

    def close(self) -> None:
        self.renderer.close()


def stamp(image: np.ndarray, corner: str, caption: str = "") -> np.ndarray:
    """``corner`` written top-right and ``caption`` top-left on a copy of ``image`` (the
    bottom stays free for a video player's controls)."""
    from PIL import Image, ImageDraw, ImageFont

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
    import imageio_ffmpeg
    from PIL import Image

    directory = Path(directory)
    times = rec.frame_times(fps)
    q, q_ref = rec.at(times)
    renderer = FrameRenderer(model, width, height, shapes=shapes)
    try:
        if q_ref is not None:
            renderer.path = np.array([renderer.tool_point(x) for x in q_ref[::2]])
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


@dataclass
class RenderResult:
    ok: bool
    message: str  # one line
    backend: str = ""


def render_recording(directory: str | Path, caption: str = "", timeout: float = 900.0
                     ) -> RenderResult:
    """Render ``directory``'s recording (module docstring) in a child process per OpenGL
    backend until one works; never raises for a missing backend."""
    directory = Path(directory)
    env_gl = os.environ.get("MUJOCO_GL", "").strip()
    tried: list[str] = []
    for backend in ([env_gl] if env_gl else list(BACKENDS)):
        env = dict(os.environ, MUJOCO_GL=backend)
        if backend in ("osmesa", "egl"):
            env["PYOPENGL_PLATFORM"] = backend
        cmd = [sys.executable, "-m", "rbd_ros.sim.render", str(directory), "--caption", caption]
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return RenderResult(False, f"no video: rendering took longer than {timeout:.0f} s")
        last = (done.stderr.strip().splitlines() or [""])[-1][:100]
        if done.returncode == 0:
            return RenderResult(True, done.stdout.strip().splitlines()[-1], backend)
        if done.returncode != NO_GL_EXIT:
            return RenderResult(False, f"no video: rendering failed (MUJOCO_GL={backend}, exit "
                                       f"{done.returncode}): {last}", backend)
        tried.append(f"{backend}: {last}")
    hint = (f"unset MUJOCO_GL (or set it to osmesa) after `{INSTALL_HINT}`"
            if env_gl and env_gl not in BACKENDS else f"install one with `{INSTALL_HINT}`")
    return RenderResult(False, f"no video: no offscreen OpenGL backend works ({'; '.join(tried)});"
                               f" {hint}, or pass --no-video")


def main(argv: list[str] | None = None) -> int:
    """``python -m rbd_ros.sim.render DIR [--caption TEXT]``: DIR/recording.npz and
    DIR/model.yaml -> DIR/video.mp4, DIR/preview.gif (this process's ``MUJOCO_GL``)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m rbd_ros.sim.render")
    p.add_argument("directory")
    p.add_argument("--caption", default="")
    args = p.parse_args(argv)
    directory = Path(args.directory)
    model = MdhModel.from_yaml(str(directory / "model.yaml"))
    rec = Recording.load(directory / "recording.npz")
    shapes = rec.shapes()
    try:
        FrameRenderer(model, 16, 16).close()  # the OpenGL context starts, or we say why not
    except Exception as exc:  # noqa: BLE001 - ImportError, RuntimeError, mujoco.FatalError ...
        print(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
              file=sys.stderr, flush=True)
        return NO_GL_EXIT
    n = render_files(model, rec, directory, caption=args.caption, shapes=tuple(shapes))
    print(f"rendered {directory}/video.mp4 ({n} frames, {n / FPS:.2f} s at {FPS} fps) and "
          f"{directory}/preview.gif", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
