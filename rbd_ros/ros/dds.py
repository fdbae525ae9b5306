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

import os
from pathlib import Path

PROFILE_ENV = "FASTDDS_DEFAULT_PROFILES_FILE"
SWITCH_ENV = "RBD_ROS_FASTDDS_PROFILE"
LEGACY_ENV = "FASTRTPS_DEFAULT_PROFILES_FILE"


def profile_path() -> Path:
    """The bundled profile, ``config/fastdds_large_data.xml`` (source tree or ament share)."""
    from rbd_ros.util.resources import share_dir

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
