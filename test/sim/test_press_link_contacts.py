"""The press measures the probe's force only: when the scene touches the arm anywhere else
(here a URDF whose forearm collision mesh is scaled 30x, so it lies on the table), the
result says so in a note naming the link, instead of a bare 10 N error and every cycle of
contact lost (before: no word on why); ``Simulator.scene_touching_links`` names it at the
start pose (the bridge node's warning).  Oracle: MuJoCo's own contact list at the press's
start pose (a forearm-table contact, penetrating)."""
from __future__ import annotations

import mujoco
import numpy as np

from robots_data import UR5, example_robot_urdf


def test_a_link_lying_on_the_table_is_named_in_the_press_notes(tmp_path) -> None:
    from rbd_ros.sim.contact_task import run_press
    from rbd_ros.sim.scene import load_scene
    from rbd_ros.sim.simulator import BridgeConfig, Simulator
    from rbd_ros.urdf import load_model

    path = example_robot_urdf(UR5)
    share = path.parents[[p.name for p in path.parents].index("example-robot-data")]
    text = path.read_text().replace("package://example-robot-data", f"file://{share}")
    uri = f"file://{share}/robots/ur_description/meshes/ur5/collision/forearm.stl"
    assert text.count(f'<mesh filename="{uri}"/>') == 1
    urdf = tmp_path / "ur5_big_forearm.urdf"
    urdf.write_text(text.replace(f'<mesh filename="{uri}"/>', f'<mesh filename="{uri}" scale="30 30 30"/>'))
    model = load_model(str(urdf))

    sim = Simulator(model, BridgeConfig(mode="lockstep", command_timeout=0.0),
                    scene=load_scene("table"), urdf=str(urdf), log=lambda lv, s: None)
    m, d = sim.mj_model, sim.mj_data
    d.qpos[sim.qpos_adr] = sim.site.q_above
    mujoco.mj_forward(m, d)
    forearm, table = m.body("forearm_link").id, m.geom("scene_table").id
    assert any({d.contact[i].geom1, d.contact[i].geom2} & {table} and forearm in
               (m.geom_bodyid[d.contact[i].geom1], m.geom_bodyid[d.contact[i].geom2])
               and d.contact[i].dist < 0 for i in range(d.ncon))
    assert sim.scene_touching_links() == ["forearm_link"]  # what the bridge node warns about

    result = run_press(model, "hybrid_force_position", scene="table", urdf=str(urdf))
    notes = [n for n in result.notes if "touched the arm besides the probe" in n]
    assert len(notes) == 1 and "'forearm_link'" in notes[0], result.notes
    assert np.isclose(result.force_rms, 10.0, atol=0.5)  # the probe never reaches the table
