"""``rbd-ros view``: MuJoCo's interactive viewer on the running simulation, or on a recording.

    rbd-ros view [--ros-args -p urdf_path:=FILE | -p model_yaml:=FILE ...]   live
    rbd-ros view DIR                                                          replay

Live: node ``rbd_viewer`` shows the bridge's MuJoCo model (same robot parameters as the
bridge: ``robot_description``, ``urdf_path``, ``model_yaml``, ``base_link``, ``tip_link``;
none: the bundled default robot; with ``urdf_path``, the URDF's own shapes) at the joint
positions of ``/joint_states``, matched by joint name.  Replay: ``DIR`` of ``rbd-ros
bringup --record DIR`` (``recording.npz`` and ``model.yaml``) in real time, looping.  The
bridge can also open the viewer on its own simulation (``-p viewer:=true``).  Without a
display: one line saying so, exit status 1.
"""
from __future__ import annotations

import sys
import threading
from pathlib import Path

from rbd_ros.model import MdhModel
from rbd_ros.ros import topics
from rbd_ros.ros.common import recordable_qos, run_node
from rbd_ros.ros.robot_params import robot_from_node
from rbd_ros.sim.render import Recording, check_directory, coordinates, scene_model
from rbd_ros.sim.urdf_visuals import urdf_visuals
from rbd_ros.sim.viewer import Viewer, no_display, prefer_glfw, replay

NAME = "rbd_viewer"


def attach(node, m, d, lock: threading.Lock, title: str = ""):
    """The bridge's ``viewer:=true``: the viewer on its ``(m, d)``, synced at 30 Hz under
    ``lock``; where it cannot open, one warning line and ``None`` (the bridge runs on)."""
    try:
        viewer = Viewer(m, d, title=title)
    except RuntimeError as exc:
        node.get_logger().warning(f"viewer:=true: {exc}")
        return None

    def tick() -> None:
        if viewer.running():
            with lock:
                viewer.sync()

    node.create_timer(1.0 / 30.0, tick)
    node.context.on_shutdown(viewer.close)  # its window thread would keep the process alive
    return viewer


def replay_dir(directory: Path) -> int:
    import mujoco

    problem = check_directory(directory)
    if problem:
        raise FileNotFoundError(problem)
    rec = Recording.load(directory / "recording.npz")
    model = MdhModel.from_yaml(str(directory / "model.yaml"))
    m, adr = scene_model(model, tuple(rec.shapes()[0]))  # a mobile base too
    d = mujoco.MjData(m)
    viewer = Viewer(m, d, title=f"replay of {directory}")
    try:
        replay(viewer, d, rec.t, coordinates(model, rec.q), adr)
    finally:
        viewer.close()
    return 0


def live(argv: list[str]) -> int:
    state: dict = {}

    def body(node) -> None:
        import mujoco
        from sensor_msgs.msg import JointState

        from rbd_ros.sim.mujoco_model import build_mujoco_model  # lazy: the MuJoCo model (35 ms of import)

        loaded = robot_from_node(node)  # the robot parameters of every node
        model, source = loaded.model, loaded.source
        shapes: list = []
        urdf = node.get_parameter("urdf_path").value
        if urdf and not node.get_parameter("model_yaml").value:
            shapes, _ = urdf_visuals(urdf, node.get_parameter("base_link").value or None,
                                     node.get_parameter("tip_link").value or None)
        m, _ = build_mujoco_model(model, actuators=False, shapes=shapes)
        d = mujoco.MjData(m)
        index = {name: k for k, name in enumerate(model.joint_names)}
        lock = threading.Lock()
        viewer = Viewer(m, d, title=f"{model.name}: /joint_states")
        state["viewer"] = viewer

        def on_state(msg) -> None:
            with lock:
                for name, q in zip(msg.name, msg.position):
                    if name in index:
                        d.qpos[index[name]] = q

        def tick() -> None:
            if not viewer.running():
                raise KeyboardInterrupt  # the window was closed: the node ends
            with lock:
                mujoco.mj_kinematics(m, d)
                viewer.sync()

        node.create_subscription(JointState, topics.JOINT_STATES, on_state, recordable_qos())
        node.create_timer(1.0 / 30.0, tick)
        print(f"{NAME}: ready (viewer on /joint_states, model {model.name!r} from {source})",
              flush=True)

    def cleanup() -> None:
        if "viewer" in state:
            state["viewer"].close()

    return run_node(NAME, body, argv, cleanup=cleanup)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    reason = no_display()
    if reason:
        print(f"rbd-ros view: {reason}", file=sys.stderr, flush=True)
        return 1
    prefer_glfw()
    try:
        if args and not args[0].startswith("-"):
            return replay_dir(Path(args[0]))
        return live(args)
    except RuntimeError as exc:  # the viewer did not open: one line
        print(f"rbd-ros view: {exc}", file=sys.stderr, flush=True)
        return 1
    except FileNotFoundError as exc:
        print(f"rbd-ros view: {exc}", file=sys.stderr, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
