"""``rbd_ros.ros.dds.remove_zombie_segments``: the /dev/shm segment of a Fast DDS participant
that was killed is removed, a live participant's never (the lock file Fast DDS holds while it
lives decides, as ``fastdds shm clean``)."""
from __future__ import annotations

import fcntl
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rbd_ros.ros.dds import SHM_DIR, ZOMBIE_MIN_AGE, remove_zombie_segments

pytest.importorskip("rclpy")

OLD = time.time() - 10 * ZOMBIE_MIN_AGE


def _segment(folder: Path, name: str, size: int, age: float = OLD) -> Path:
    (folder / name).write_bytes(b"\0" * size)
    lock = folder / f"{name}_el"
    lock.write_bytes(b"")
    os.utime(lock, (age, age))
    return lock


def test_only_unlocked_old_segments_go(tmp_path: Path) -> None:
    _segment(tmp_path, "fastdds_0a", 100)
    held = os.open(_segment(tmp_path, "fastdds_0b", 200), os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a live participant's lock
    _segment(tmp_path, "fastdds_0c", 300, age=time.time())  # its owner may still be starting
    _segment(tmp_path, "fastdds_port7000", 400)  # ports are Fast DDS's own to recover
    try:
        assert remove_zombie_segments(str(tmp_path)) == (1, 100)
    finally:
        os.close(held)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["fastdds_0b", "fastdds_0b_el", "fastdds_0c", "fastdds_0c_el",
                    "fastdds_port7000", "fastdds_port7000_el"]
    assert remove_zombie_segments(str(tmp_path / "missing")) == (0, 0)


def _segments_locked_by(pid: int) -> list[str]:
    """The ``fastdds_<id>_el`` files whose lock ``pid`` holds: the segments it owns.  (The
    segments it maps are not all its own: a participant also maps those of the peers it
    discovered, e.g. the other worker's, which stay locked by their live owners.)"""
    inodes = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[4] == str(pid):
            inodes.add(int(fields[5].rsplit(":", 1)[1]))
    return sorted(name for name in os.listdir(SHM_DIR)
                  if re.fullmatch(r"fastdds_[0-9a-f]+_el", name)
                  and os.stat(os.path.join(SHM_DIR, name)).st_ino in inodes)


@pytest.mark.skipif(not os.path.isdir(SHM_DIR), reason="no /dev/shm")
def test_a_killed_participants_segment_is_removed_a_live_ones_kept() -> None:
    code = ("import time, rclpy\nfrom rbd_ros.ros.dds import use_large_data_profile\n"
            "use_large_data_profile(); rclpy.init(); node = rclpy.create_node('zombie_probe')\n"
            "print('up', flush=True); time.sleep(120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"})
    try:
        assert proc.stdout.readline().strip() == "up"
        mine = _segments_locked_by(proc.pid)
        assert mine, "the participant made no shared-memory segment"
        for name in mine:  # old enough to be judged (the age guard is tested above)
            os.utime(os.path.join(SHM_DIR, name), (OLD, OLD))
        remove_zombie_segments()
        assert all(os.path.exists(os.path.join(SHM_DIR, n[:-3])) for n in mine)  # alive: kept
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert all(os.path.exists(os.path.join(SHM_DIR, n[:-3])) for n in mine)  # Fast DDS leaves it
        # (the other worker's per-file cleanup may remove them first: the same function, so
        # the end state is what is checked; the count is checked by the test above)
        remove_zombie_segments()
        assert not any(os.path.exists(os.path.join(SHM_DIR, n[:-3])) for n in mine)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
