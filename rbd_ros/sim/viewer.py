"""MuJoCo's interactive viewer on a simulation, where there is a display (ROS-free).

``no_display()`` says in one line why the viewer cannot open (``None`` when it can try);
``Viewer(m, d)`` wraps ``mujoco.viewer.launch_passive``: the caller keeps stepping ``d`` and
calls ``sync()`` (holding whatever lock guards ``d``) a few dozen times a second.  The
viewer needs MuJoCo's GLFW backend: ``MUJOCO_GL`` must be unset or ``glfw`` when MuJoCo is
first imported (``prefer_glfw()`` before that import sees to it).
"""
from __future__ import annotations

import os
import sys
import time
import warnings

HINT = ("for pictures without a display use `rbd-ros bringup --record DIR` "
        "(DIR/video.mp4, DIR/index.html)")


def no_display() -> str | None:
    """One line saying why no window can open here, or ``None``."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY")
                                                 or os.environ.get("WAYLAND_DISPLAY")):
        return f"no display (DISPLAY is not set), so no interactive viewer; {HINT}"
    gl = os.environ.get("MUJOCO_GL", "").strip().lower()
    if gl not in ("", "glfw", "1", "true", "on", "enable", "enabled") and "mujoco" in sys.modules:
        return (f"MUJOCO_GL={gl} is an offscreen backend; the interactive viewer needs "
                f"MUJOCO_GL unset (or glfw); {HINT}")
    return None


def _check_glfw() -> None:
    """Raise ``RuntimeError`` (one line) unless GLFW can open the display."""

    try:
        import glfw

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ok = glfw.init()
            if ok:
                glfw.terminate()
    except Exception as exc:  # no GLFW library at all
        raise RuntimeError(f"the interactive viewer needs GLFW ({exc}); {HINT}") from exc
    if not ok:
        raise RuntimeError(f"GLFW cannot open the display {os.environ.get('DISPLAY', '')!r}, "
                           f"so no interactive viewer; {HINT}")


def prefer_glfw() -> None:
    """Before MuJoCo is imported: its interactive (GLFW) backend instead of an offscreen one."""
    if "mujoco" not in sys.modules:
        os.environ["MUJOCO_GL"] = "glfw"
        os.environ.pop("PYOPENGL_PLATFORM", None)


class Viewer:
    """``launch_passive`` on ``(m, d)``; raises ``RuntimeError`` (one line) when it cannot."""

    def __init__(self, m, d, title: str = "") -> None:
        reason = no_display()
        if reason:
            raise RuntimeError(reason)
        _check_glfw()  # MuJoCo's viewer ends the whole process where GLFW cannot start
        try:
            import mujoco.viewer

            self.handle = mujoco.viewer.launch_passive(m, d, show_left_ui=False,
                                                       show_right_ui=False)
        except Exception as exc:  # GLFW reports its failures in many ways
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RuntimeError(f"the interactive viewer did not open ({first}); {HINT}") from exc
        self.m = m
        if title:
            self.handle.set_texts((None, None, title, ""))

    def running(self) -> bool:
        return self.handle.is_running()

    def sync(self) -> None:
        self.handle.sync()

    def close(self) -> None:
        self.handle.close()


def replay(viewer: Viewer, d, times, positions, address=None, speed: float = 1.0,
           loop: bool = True) -> None:
    """Show ``positions`` (k, n) at their ``times`` (s) in real time (x ``speed``), looping,
    until the window closes; ``address``: the ``qpos`` index of each column (default all of
    ``qpos`` in order; ``render.scene_model`` gives them for a recording)."""
    address = slice(None) if address is None else address
    import mujoco

    while viewer.running():
        start = time.monotonic()
        for t, q in zip(times, positions):
            if not viewer.running():
                return
            delay = (t - times[0]) / speed - (time.monotonic() - start)
            if delay < 0 and t != times[-1]:
                continue  # late: skip to the sample of now
            time.sleep(max(delay, 0.0))
            d.qpos[address] = q
            mujoco.mj_kinematics(viewer.m, d)
            viewer.sync()
        if not loop:
            return
        time.sleep(1.0)
