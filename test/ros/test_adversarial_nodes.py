"""Issue 19, the nodes and command-line tools: refusals in one line (exit 2), never a second
server answering at random, never a traceback.  The nodes run as real processes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_control_node import peer  # noqa: F401 - the fixture: this test's ROS side

from robots_data import BUNDLED_URDF
from ros_helpers import REPO

pytest.importorskip("rclpy")

PLANAR = BUNDLED_URDF / "planar2.urdf"


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rbd_ros.cli", *args], cwd=REPO, text=True,
                          capture_output=True, timeout=timeout)


def _one_line_error(proc, prefix: str) -> str:
    out = proc.output if hasattr(proc, "output") else proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    lines = [line for line in out.splitlines() if line.startswith(f"{prefix}: error:")]
    assert len(lines) == 1, out
    return lines[0]


def _impossible_model_yaml(tmp_path: Path) -> Path:
    """planar2 with link2's inertia breaking the triangle inequality, as a file holds it."""
    from rbd_ros.model import MdhModel

    data = MdhModel.from_yaml(str(REPO / "config" / "planar2.yaml")).to_dict()
    data["joints"][1]["inertia"] = np.diag([0.066, 0.086, 0.0125]).tolist()
    path = tmp_path / "impossible.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


# ---- item 2: one server per namespace ------------------------------------------------------------
@pytest.mark.slow
def test_item2_second_server_in_a_namespace_refuses_to_start(tmp_path, node_process) -> None:
    from rbd_ros.model import MdhModel
    from rbd_ros.model.physical import InertiaWarning
    from rbd_ros.ros.client import DynamicsClient

    model_yaml = _impossible_model_yaml(tmp_path)
    first = node_process(["dynamics-server", "--ros-args", "-p", f"model_yaml:={model_yaml}",
                          "-p", "service_namespace:=adv19"], ready="dynamics_server: ready",
                         timeout=120)
    # item 5: the server loaded the model fixed, and said so in one line of its log
    assert "InertiaWarning: link 'link2'" in first.output and "triangle inequality" in first.output
    second = node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={PLANAR}",
                           "-p", "service_namespace:=adv19", "-r", "__node:=second_server"])
    assert second.wait(120) == 2
    line = _one_line_error(second, "dynamics_server")
    assert "/adv19/* are already offered by another dynamics_server" in line
    assert "allow_shared_namespace" in line
    third = node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={PLANAR}",
                          "-p", "service_namespace:=adv19", "-p", "allow_shared_namespace:=true",
                          "-r", "__node:=third_server"], ready="dynamics_server: ready", timeout=120)
    third.stop()
    with DynamicsClient("adv19") as client:
        client.wait(60)
        served = MdhModel.from_yaml(client.get_model().model_yaml)
        with pytest.warns(InertiaWarning):
            local = MdhModel.from_yaml(str(model_yaml))
        np.testing.assert_array_equal(served.inertia, local.inertia)  # the same fixed model
        w = np.linalg.eigvalsh(served.inertia[1])
        assert w[0] + w[1] >= w[2] * (1 - 1e-12)
        # unclear messages: a 3-vector wrench is refused by the client in one line
        with pytest.raises(ValueError, match="tool_wrench must be 6 numbers"):
            client.inverse_dynamics(np.zeros(2), np.zeros(2), np.zeros(2), tool_wrench=[1, 2, 3])
        with pytest.raises(ValueError, match="real numbers, got complex"):  # not cut silently
            client.gravity(np.zeros(2) + 1j)
    # a killed server stays in the DDS graph until its lease expires: it does not block a restart
    os.killpg(first.proc.pid, signal.SIGKILL)
    first.wait(10)
    node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={PLANAR}",
                  "-p", "service_namespace:=adv19", "-r", "__node:=restarted"],
                 ready="dynamics_server: ready", timeout=120)


# ---- item 10: one-line errors from the nodes ----------------------------------------------------
def test_item10_invalid_service_namespace_is_one_line(node_process) -> None:
    proc = node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={PLANAR}",
                         "-p", "service_namespace:=bad name!"])
    assert proc.wait(120) == 2
    assert "service_namespace 'bad name!' is not a valid ROS name" in \
        _one_line_error(proc, "dynamics_server")


def test_item10_nan_mass_in_a_urdf_is_one_line(tmp_path, node_process) -> None:
    text = PLANAR.read_text()
    bad = tmp_path / "nan_mass.urdf"
    bad.write_text(text.replace('<mass value="1.0"/>', '<mass value="nan"/>', 1))
    assert "nan" in bad.read_text()
    proc = node_process(["dynamics-server", "--ros-args", "-p", f"urdf_path:={bad}"])
    assert proc.wait(120) == 2
    assert "mass is not finite: [nan]" in _one_line_error(proc, "dynamics_server")
    out = _cli("urdf2mdh", str(bad))
    assert out.returncode == 2 and "mass is not finite: [nan]" in \
        _one_line_error(out, "rbd-ros urdf2mdh")


def test_item10_urdf2mdh_nan_gravity_is_one_line() -> None:
    out = _cli("urdf2mdh", str(PLANAR), "--gravity", "0", "0", "nan")
    assert out.returncode == 2 and "gravity contains NaN" in _one_line_error(out, "rbd-ros urdf2mdh")


# ---- item 4: rbd-ros info FILE -------------------------------------------------------------------
@pytest.mark.slow
def test_item4_info_uses_its_argument(tmp_path) -> None:
    out = _cli("info", str(PLANAR))
    assert out.returncode == 0 and "robot 'planar2'" in out.stdout, out.stdout + out.stderr
    assert "puma" not in out.stdout
    out = _cli("info", str(tmp_path / "missing.urdf"))
    assert out.returncode == 2 and "missing.urdf': file not found" in _one_line_error(out, "rbd_info")
    broken = tmp_path / "broken.urdf"
    broken.write_text("<robot name='x'><link")
    out = _cli("info", str(broken))
    assert out.returncode == 2 and "not a valid URDF" in _one_line_error(out, "rbd_info")


# ---- item 7 and unclear messages: the controller ------------------------------------------------
def _item7_send_a_point_due_in_1ns(node_process, peer, *parameters: str):  # noqa: F811
    """A planar2 controller (PD + gravity, ``parameters`` added) holding the arm at 0, sent one
    point due 1 ns after the start and 1.5 rad away; the node's process."""
    from test_control_node import READY, _trajectory

    proc = node_process(["controller", "--ros-args", "-p", f"urdf_path:={PLANAR}", "-p",
                         "type:=pd_gravity", *parameters], ready=READY)
    peer.wait_subscribed(peer.joint_pub)
    peer.send_command_and_wait(["joint1", "joint2"], [0.0, 0.0], t=1.0)
    peer.wait_subscribed(peer.traj_pub)
    peer.traj_pub.publish(_trajectory(["joint1", "joint2"], [1e-9], [[1.5, 0.0]]))
    return proc


@pytest.mark.slow
def test_item7_controller_refuses_a_reference_leaving_the_limits(node_process, peer) -> None:  # noqa: F811
    """A point due 1 ns after the start, 1.5 rad away (planar2's velocity limit 10 rad/s): under
    ``retime: never`` refused naming the least time it needs (0.150 s at the velocity limits);
    under the default retiming joined from the current state and retimed under every limit
    (issue 37's adversarial pass: never the 1 ns step), the line saying so."""
    from test_control_node import _trajectory

    proc = _item7_send_a_point_due_in_1ns(node_process, peer, "-p", "retime:=never")
    line = proc.wait_for("trajectory refused", 10)
    assert "point 0 is due 1e-09 s after the start but 1.5 from the current reference of joint1" in line, line
    assert "it needs at least 0.150 s at the velocity limits" in line, line
    peer.traj_pub.publish(_trajectory(["joint1", "joint2"], [2.0], [[1.5, 0.0]]))
    proc.wait_for("trajectory accepted", 10)


@pytest.mark.slow
def test_item7_a_point_due_too_soon_is_joined_within_the_limits(node_process, peer) -> None:  # noqa: F811
    proc = _item7_send_a_point_due_in_1ns(node_process, peer)
    line = proc.wait_for("trajectory accepted", 10)
    assert "was 1.5 from the current reference of joint1: joined from the current state" in line, line
    assert "under the velocity, acceleration and effort limits" in line, line
    took = float(line.split("retimed to ")[1].split(" s")[0])
    assert took >= 0.15, line  # never faster than the velocity limit allows (1.5 rad at 10 rad/s)


@pytest.mark.parametrize("extra, message", [
    (["-p", "state_timeout:=-1.0"], "state_timeout must be >= 0 s (0 = never), got -1.0"),
    (["-p", "kp:=[true, true]"], "kp must be a number or a list of numbers"),
    (["-p", "gains_file:={bad}"], "is not valid YAML"),
])
def test_unclear_controller_parameters_refused_at_start_up(tmp_path, extra, message) -> None:
    bad = tmp_path / "gains.yaml"
    bad.write_text("defaults: {pd_gravity: [kp: 1\n")
    extra = [e.replace("{bad}", str(bad)) for e in extra]
    out = _cli("controller", "--ros-args", "-p", f"urdf_path:={PLANAR}", "-p", "type:=pd_gravity",
               *extra)
    assert out.returncode == 2 and message in _one_line_error(out, "controller"), out.stderr


def test_item2_the_host_lock_is_exact_and_released(monkeypatch, tmp_path) -> None:
    """The same-host check does not depend on DDS discovery: a second exclusive holder is
    refused naming the first's pid, a shared one is let through without the lock, and the lock
    is free again once the holder's file is closed (as at the holder's exit)."""
    import tempfile

    from rbd_ros.ros.common import NodeConfigError
    from rbd_ros.ros.nodes.dynamics_server import namespace_lock

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first = namespace_lock("/lockcheck/", shared=False, wait=0.0)
    with pytest.raises(NodeConfigError, match=f"on this host \\(pid {os.getpid()}\\)"):
        namespace_lock("/lockcheck/", shared=False, wait=0.3)
    assert namespace_lock("/lockcheck/", shared=True, wait=0.0) is None
    other = namespace_lock("/other/", shared=False, wait=0.0)  # another namespace is free
    first.close()
    again = namespace_lock("/lockcheck/", shared=False, wait=0.0)
    sharer = namespace_lock("/other2/", shared=True, wait=0.0)
    with pytest.raises(NodeConfigError, match="allow_shared_namespace"):
        namespace_lock("/other2/", shared=False, wait=0.0)  # a sharer blocks an exclusive one
    for handle in (other, again, sharer):
        handle.close()


def test_a_node_whose_shutdown_hangs_holding_the_gil_still_ends() -> None:
    """The shutdown watchdog needs no GIL: seen, rclpy.shutdown() joining its signal thread
    (stuck on a Fast DDS mutex) with the GIL held kept a controller alive for hours after its
    bringup was killed.  Here a C call that sleeps holding the GIL stands in for it."""
    code = ("import ctypes, sys\n"
            "from rbd_ros.ros.common import _exit_if_stuck\n"
            "_exit_if_stuck(1.0)\n"
            "ctypes.PyDLL(None).sleep(60)\n")  # PyDLL: the GIL stays held
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=50)
    assert proc.returncode == 1 and time.monotonic() - t0 < 30
    assert "Timeout" in proc.stderr  # faulthandler's dump of where it hung
