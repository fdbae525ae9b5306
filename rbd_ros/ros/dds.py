"""The Fast DDS profile rbd_ros processes use for large messages (``config/fastdds_large_data.xml``).

Fast DDS sends a message larger than its shared-memory segment (512 kB by default) over UDP in
64 kB fragments, which on loopback get dropped and resent: a 1.7 MB ForwardSimulate response
then takes 10-50 ms to travel instead of 3-7 ms.  The bundled profile keeps shared memory for
such messages (a 32 MB segment) and UDPv4 for discovery and other hosts.  Each participant's
setting only affects what it sends, so processes with and without it interoperate.

``use_large_data_profile()`` must run before the process creates its first DDS participant
(``rclpy.init`` + the first node): ``run_node`` and ``DynamicsClient`` call it.  It never
overrides a profile the user chose (``FASTDDS_DEFAULT_PROFILES_FILE`` or the older
``FASTRTPS_DEFAULT_PROFILES_FILE`` set), does nothing for another RMW (``RMW_IMPLEMENTATION``
not Fast DDS), and is turned off by ``RBD_ROS_FASTDDS_PROFILE=off``.
"""
from __future__ import annotations

import fcntl
import os
import re
import time
from pathlib import Path

from rbd_ros.util.resources import share_dir

PROFILE_ENV = "FASTDDS_DEFAULT_PROFILES_FILE"
SWITCH_ENV = "RBD_ROS_FASTDDS_PROFILE"
LEGACY_ENV = "FASTRTPS_DEFAULT_PROFILES_FILE"


def profile_path() -> Path:
    """The bundled profile, ``config/fastdds_large_data.xml`` (source tree or ament share)."""
    return share_dir() / "config" / "fastdds_large_data.xml"


def use_large_data_profile(environ: dict | None = None) -> str | None:
    """Point Fast DDS at the bundled profile unless the user configured one or uses another
    RMW; returns the path set, or None when it left the environment alone."""
    env = os.environ if environ is None else environ
    if PROFILE_ENV in env or LEGACY_ENV in env:
        return None
    if env.get(SWITCH_ENV, "").strip().lower() in ("0", "off", "false", "no"):
        return None
    if "fastrtps" not in env.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp"):
        return None
    try:
        path = profile_path()
    except FileNotFoundError:
        return None
    if not path.is_file():
        return None
    env[PROFILE_ENV] = str(path)
    return str(path)


SHM_DIR = "/dev/shm"
ZOMBIE_MIN_AGE = 10.0  # s: a segment this young may belong to a participant still starting


def remove_zombie_segments(shm_dir: str = SHM_DIR, min_age: float = ZOMBIE_MIN_AGE) -> tuple[int, int]:
    """Remove the shared-memory segments of Fast DDS participants that are gone; returns
    ``(segments removed, bytes freed)``.

    Each participant maps a segment ``fastdds_<id>`` (32 MB with the bundled profile) and
    holds an exclusive ``flock`` on ``fastdds_<id>_el`` while it lives; a process that is
    killed (SIGKILL, a crash) leaves both behind, and Fast DDS never reclaims them: on a
    machine that starts and kills nodes all day (a test suite) they fill the RAM-backed
    ``/dev/shm``.  A segment whose lock file nobody holds is a zombie (the test
    Fast DDS's ``fastdds shm clean`` makes); one younger than ``min_age`` is left alone (its owner may
    be between creating and locking it).  Port files (``fastdds_port*``) are Fast DDS's own
    to recover."""

    removed = freed = 0
    try:
        names = os.listdir(shm_dir)
    except OSError:
        return 0, 0
    now = time.time()
    for name in names:
        if not re.fullmatch(r"fastdds_[0-9a-f]+_el", name):
            continue
        lock_path = os.path.join(shm_dir, name)
        segment = lock_path[:-3]
        try:
            if now - os.stat(lock_path).st_mtime < min_age:
                continue
            fd = os.open(lock_path, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a live participant: fails
        except OSError:
            os.close(fd)
            continue
        try:
            size = os.stat(segment).st_size if os.path.exists(segment) else 0
            for path in (segment, lock_path):
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
            removed, freed = removed + 1, freed + size
        finally:
            os.close(fd)
    return removed, freed
