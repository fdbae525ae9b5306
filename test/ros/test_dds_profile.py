"""The Fast DDS large-data profile (rbd_ros.ros.dds, config/fastdds_large_data.xml): when it applies,
that the file is a valid profile with shared memory large enough for our big messages, and that
a real node process really runs with the larger segment (and without it when switched off)."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from rbd_ros.ros.dds import LEGACY_ENV, PROFILE_ENV, SWITCH_ENV, profile_path, use_large_data_profile

NS = {"f": "http://www.eprosima.com"}
# the largest message the services benchmark sends: a 10 s, 1 kHz, 7-joint ForwardSimulate
# response (times + positions + velocities + accelerations, 10 001 states) in bytes
SIM_RESPONSE_BYTES = 8 * 10_001 * (1 + 3 * 7)


def test_profile_set_when_nothing_is_configured():
    env: dict[str, str] = {}
    assert use_large_data_profile(env) == str(profile_path())
    assert env[PROFILE_ENV] == str(profile_path())
    assert Path(env[PROFILE_ENV]).is_file()


@pytest.mark.parametrize("env", [
    {PROFILE_ENV: "/home/me/my_profile.xml"},
    {LEGACY_ENV: "/home/me/legacy.xml"},
    {SWITCH_ENV: "off"},
    {SWITCH_ENV: "0"},
    {"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"},
])
def test_profile_left_alone_when_the_user_decided(env):
    before = dict(env)
    assert use_large_data_profile(env) is None
    assert env == before


def test_fastrtps_dynamic_rmw_also_gets_the_profile():
    env = {"RMW_IMPLEMENTATION": "rmw_fastrtps_dynamic_cpp"}
    assert use_large_data_profile(env) == str(profile_path())


def test_profile_file_is_a_default_participant_profile_with_large_shared_memory():
    root = ET.parse(profile_path()).getroot()
    transports = {t.findtext("f:transport_id", namespaces=NS): t
                  for t in root.iterfind(".//f:transport_descriptor", NS)}
    kinds = {tid: t.findtext("f:type", namespaces=NS) for tid, t in transports.items()}
    assert sorted(kinds.values()) == ["SHM", "UDPv4"]  # UDP kept for discovery / other hosts
    shm = next(t for t in transports.values() if t.findtext("f:type", namespaces=NS) == "SHM")
    segment = int(shm.findtext("f:segment_size", namespaces=NS))
    max_message = int(shm.findtext("f:maxMessageSize", namespaces=NS))
    assert max_message >= 4 * SIM_RESPONSE_BYTES
    assert segment >= 2 * max_message
    participant = root.find(".//f:participant", NS)
    assert participant is not None and participant.get("is_default_profile") == "true"
    used = [e.text for e in participant.iterfind(".//f:userTransports/f:transport_id", NS)]
    assert sorted(used) == sorted(transports)
    assert participant.findtext(".//f:useBuiltinTransports", namespaces=NS) == "false"


def shm_mappings(pid: int) -> dict[str, int]:
    """Fast DDS shared-memory segments mapped by a process: file name -> mapped bytes."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s+/dev/shm/(fastdds_\w+)$", line)
        if m and not m.group(3).endswith("_el"):
            size = int(m.group(2), 16) - int(m.group(1), 16)
            out[m.group(3)] = out.get(m.group(3), 0) + size
    return out


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("switch, large", [(None, True), ("off", False)])
@pytest.mark.slow
def test_node_process_runs_with_the_profile(node_process, monkeypatch, switch, large):
    # the node must choose by itself (an earlier DynamicsClient in this process may have set it)
    for name in (PROFILE_ENV, LEGACY_ENV, SWITCH_ENV):
        monkeypatch.delenv(name, raising=False)
    from conftest import claim_free_domain

    # a domain of its own: in the session's, the node also maps the segments of the other
    # participants it discovers (this process's, a previous test's), whatever their size
    env = {SWITCH_ENV: switch} if switch else {}
    env["ROS_DOMAIN_ID"] = claim_free_domain()
    proc = node_process(["dynamics-server", "--ros-args", "-p", "service_namespace:=dds_check"],
                        ready="dynamics_server: ready", env=env)
    sizes = shm_mappings(proc.proc.pid)
    assert sizes, f"no Fast DDS shared-memory segment mapped: {proc.output}"
    biggest = max(sizes.values())
    if large:
        assert biggest >= 16 * 2**20, sizes
    else:
        assert biggest < 2**20, sizes  # Fast DDS's default segment, ~0.5 MB
