"""The stack works end to end: built interfaces across processes, MuJoCo, numba's cache."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

from ros_helpers import REPO, call, ros_context, wait_for_service

TWO_LINK = """<robot name="two">
  <link name="base_link"/>
  <link name="l1"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>
    <inertia ixx="0.01" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="package://nowhere/l1.stl"/></geometry></visual></link>
  <link name="l2"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>
    <inertia ixx="0.01" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><mesh filename="package://nowhere/l2.stl"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base_link"/><child link="l1"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>
</robot>"""


def test_imports_need_no_sourcing():
    """rbd_ros, rclpy and the colcon-built interfaces import from the venv's Python with a
    clean environment (no AMENT_PREFIX_PATH, no LD_LIBRARY_PATH)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("AMENT_PREFIX_PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "CMAKE_PREFIX_PATH",
                        "_ROS_WHEELS_BOOTSTRAP_COMPLETE")}
    code = "import rbd_ros, rclpy, rbd_ros_interfaces.srv as s; print(s.InverseDynamics.__name__)"
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd="/", capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "InverseDynamics"


def test_custom_service_round_trip_between_processes():
    import subprocess as sp
    import threading

    proc = sp.Popen([sys.executable, str(REPO / "test" / "support" / "smoke_echo_server.py")],
                    stdout=sp.PIPE, stderr=sp.STDOUT, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        assert "smoke server ready" in proc.stdout.readline()
        threading.Thread(target=proc.stdout.read, daemon=True).start()
        from rbd_ros_interfaces.srv import Gravity

        with ros_context() as ctx:
            import rclpy

            node = rclpy.create_node("smoke_client", context=ctx)
            client = node.create_client(Gravity, "/smoke/gravity")
            wait_for_service(client)
            req = Gravity.Request(joint_names=["a", "b", "c"], positions=[0.5, -1.0, 3.25])
            res = call(node, client, req)
            assert res.success
            np.testing.assert_array_equal(res.efforts, [1.0, -2.0, 6.5])
            assert res.message.startswith("3 joints")
            node.destroy_node()
    finally:
        proc.terminate()  # rclpy's SIGTERM handler ends the spin (the server's own process)
        try:
            proc.wait(30)
        except sp.TimeoutExpired:  # a stuck shutdown must not leave it behind, nor hide the result
            proc.kill()
            proc.wait(10)
            raise AssertionError("the smoke server did not stop within 30 s of SIGTERM") from None


def test_mujoco_loads_a_urdf_without_meshes():
    """MuJoCo imports a URDF once visual/collision elements are dropped; a pendulum at rest
    under gravity starts to fall with qdd from MuJoCo's own dynamics."""
    import xml.etree.ElementTree as ET

    import mujoco

    root = ET.fromstring(TWO_LINK)
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    spec = mujoco.MjSpec.from_string(ET.tostring(root, encoding="unicode"))
    m = spec.compile()
    d = mujoco.MjData(m)
    assert m.nq == 2 and m.nbody == 3
    mujoco.mj_forward(m, d)
    # horizontal two-link arm, joints about y: gravity accelerates both joints
    assert abs(d.qacc[0]) > 1.0 and np.isfinite(d.qacc).all()


def test_numba_kernel_compiles_then_loads_from_cache(tmp_path: Path):
    """The first process compiles ``mdh_transform`` and writes the cache; the second loads
    it (a cache hit, no compile)."""
    code = textwrap.dedent("""
        from rbd_ros.algorithm.mdh import mdh_transform
        T = mdh_transform(0.1, 0.2, 0.3, 0.4)
        print("hits", sum(mdh_transform.stats.cache_hits.values()),
              "misses", sum(mdh_transform.stats.cache_misses.values()))
    """)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120, cwd=REPO)
        assert out.returncode == 0, out.stderr
        runs.append(tuple(int(x) for x in re.findall(r"\d+", out.stdout)))
    (hits1, misses1), (hits2, misses2) = runs
    assert misses1 >= 1 and hits1 == 0
    assert hits2 >= 1 and misses2 == 0
    assert any(tmp_path.rglob("*.nbi"))


def test_info_node_prints_joints(node_process, tmp_path: Path):
    urdf = tmp_path / "two.urdf"
    urdf.write_text(TWO_LINK)
    proc = node_process(["info", "--ros-args", "-p", f"urdf_path:={urdf}"])
    assert proc.wait(60) == 0
    assert proc.stop() == 0  # the output read to its end
    out = proc.output
    assert re.search(r"j1\s+revolute\s+base_link -> l1", out)
    assert re.search(r"j2\s+revolute\s+l1 -> l2", out)


def test_info_node_reports_missing_file(node_process):
    proc = node_process(["info", "--ros-args", "-p", "urdf_path:=/nonexistent/robot.urdf"])
    assert proc.wait(60) == 2
    assert proc.stop() == 2  # the output read to its end before it is checked
    assert "urdf_path '/nonexistent/robot.urdf': file not found" in proc.output
    assert "Traceback" not in proc.output
