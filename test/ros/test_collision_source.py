"""Which URDF the bridge takes its scene's collision shapes from (issue 30, item 1): the
``urdf_path`` it loaded, the ``robot_description`` text, none for a model file (capsules).
Oracle: the files and text given, and the shapes MuJoCo builds from them."""
from __future__ import annotations

from robots_data import example_robot_urdf

UR5 = "ur_description/urdf/ur5_joint_limited_robot.urdf"


def test_a_model_file_has_no_urdf_and_keeps_the_capsules() -> None:
    from rbd_ros.ros.robot_params import robot_model
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.sim.simulator import BridgeConfig, Simulator
    from rbd_ros.util.resources import share_dir

    loaded = robot_model({"model_yaml": str(share_dir() / "config" / "puma560.yaml")})
    assert loaded.urdf is None
    sim = Simulator(loaded.model, BridgeConfig(mode="lockstep", command_timeout=0.0),
                    scene=load_scene("table"), urdf=loaded.urdf, log=lambda level, msg: None)
    assert sim.collision == ()


def test_a_urdf_path_and_robot_description_text_give_the_mesh_shapes() -> None:
    from rbd_ros.ros.robot_params import robot_model
    from rbd_ros.sim.simulator import collision_shapes

    path = example_robot_urdf(UR5)
    by_path = robot_model({"urdf_path": str(path)})
    assert by_path.urdf == str(path)
    shapes = collision_shapes(by_path.model, by_path.urdf)
    assert {s.body for s in shapes if s.kind == "mesh"} == set(range(by_path.model.dof))
    # XML text: relative and package:// meshes resolve only through the ament index; here the
    # paths are absolute (file://), as a robot_state_publisher's expanded description may be
    share = path.parents[[p.name for p in path.parents].index("example-robot-data")]
    text = path.read_text().replace("package://example-robot-data", f"file://{share}")
    by_text = robot_model({"robot_description": text})
    assert by_text.urdf == by_text.urdf_xml and "<robot" in by_text.urdf
    again = collision_shapes(by_text.model, by_text.urdf)
    assert [(s.body, s.kind, s.file) for s in again] == [(s.body, s.kind, s.file) for s in shapes]
